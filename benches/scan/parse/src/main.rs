//! `parse-bench DIR`: reads every `.py` file under DIR (not timed), then parses them all
//! with tree-sitter-python and with ruff_python_parser, on rayon's default pool (one thread
//! per core, as the scanner), and prints one line per parser: files, lines, wall seconds,
//! lines per second, and how many files each parser rejected. Symbolic links are not
//! followed.

use std::path::{Path, PathBuf};
use std::time::Instant;

use rayon::prelude::*;

fn python_files(root: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = walkdir::WalkDir::new(root)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|entry| entry.file_type().is_file())
        .map(walkdir::DirEntry::into_path)
        .filter(|path| path.extension().is_some_and(|e| e == "py"))
        .collect();
    out.sort();
    out
}

fn main() {
    let Some(root) = std::env::args().nth(1) else {
        eprintln!("usage: parse-bench DIR");
        std::process::exit(2);
    };
    let texts: Vec<String> = python_files(Path::new(&root))
        .iter()
        .filter_map(|path| std::fs::read_to_string(path).ok())
        .collect();
    let lines: usize = texts.iter().map(|text| text.lines().count()).sum();

    let started = Instant::now();
    let rejected = texts
        .par_iter()
        .filter(|text| {
            let mut parser = tree_sitter::Parser::new();
            parser
                .set_language(&tree_sitter_python::LANGUAGE.into())
                .expect("tree-sitter-python matches tree-sitter");
            parser.parse(text.as_str(), None).is_none()
        })
        .count();
    report("tree-sitter-python", texts.len(), lines, started, rejected);

    let started = Instant::now();
    let rejected = texts
        .par_iter()
        .filter(|text| ruff_python_parser::parse_module(text).is_err())
        .count();
    report("ruff_python_parser", texts.len(), lines, started, rejected);
}

fn report(parser: &str, files: usize, lines: usize, started: Instant, rejected: usize) {
    let seconds = started.elapsed().as_secs_f64();
    let rate = if seconds > 0.0 {
        lines as f64 / seconds
    } else {
        0.0
    };
    println!("{parser}\t{files}\t{lines}\t{seconds:.3}\t{rate:.0}\t{rejected}");
}
