//! The layer rule of this crate, checked: no top-level module may reach, through
//! `crate::…` paths, a module that reaches back to it. A circle means two modules that
//! cannot be read, tested or split apart one without the other (`config` once needed
//! `audit` for a limit `audit` read from `config`).
//!
//! The test reads the crate's own sources (`src/**/*.rs`, the `bin/` crate aside), takes the
//! `crate::<module>` paths of each top-level module from its code (comments and string
//! literals skipped, `use crate::{a, b}` groups opened), and fails naming the circle and
//! the line of each step when the graph has one.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Where one module first names another: file and line.
type Edges = BTreeMap<String, BTreeMap<String, String>>;

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Whether the `r` at `i` begins a raw string (`r"`, `br"`) rather than ending a name.
fn starts_literal(chars: &[char], i: usize) -> bool {
    let before = |k: usize| i.checked_sub(k).and_then(|k| chars.get(k)).copied();
    match before(1) {
        Some('b') => !before(2).is_some_and(is_ident),
        Some(c) => !is_ident(c),
        None => true,
    }
}

/// `text` with comments, string literals and char literals blanked (newlines kept, so line
/// numbers still hold).
fn code_only(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let blank = |c: char| if c == '\n' { '\n' } else { ' ' };
    while let Some(&c) = chars.get(i) {
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while let Some(&c) = chars.get(i) {
                if c == '\n' {
                    break;
                }
                out.push(' ');
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0usize;
            while let Some(&c) = chars.get(i) {
                let next = chars.get(i + 1).copied();
                if c == '/' && next == Some('*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if c == '*' && next == Some('/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    out.push(blank(c));
                    i += 1;
                }
            }
        } else if c == 'r' && matches!(next, Some('"' | '#')) && starts_literal(&chars, i) {
            // A raw string: r"…", r#"…"#.
            let mut j = i + 1;
            let mut hashes = 0;
            while chars.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if chars.get(j) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            j += 1;
            loop {
                match chars.get(j) {
                    None => break,
                    Some('"') if (1..=hashes).all(|k| chars.get(j + k) == Some(&'#')) => {
                        j += 1 + hashes;
                        break;
                    }
                    Some(_) => j += 1,
                }
            }
            for &c in chars.get(i..j).unwrap_or_default() {
                out.push(blank(c));
            }
            i = j;
        } else if c == '"' {
            out.push(' ');
            i += 1;
            while let Some(&c) = chars.get(i) {
                i += 1;
                if c == '\\' {
                    out.push(' ');
                    if let Some(&e) = chars.get(i) {
                        out.push(blank(e));
                        i += 1;
                    }
                    continue;
                }
                out.push(blank(c));
                if c == '"' {
                    break;
                }
            }
        } else if c == '\'' {
            // A char literal ('x', '\n', '"') is blanked; a lifetime ('a) is kept.
            let end = if next == Some('\\') {
                (i + 2..chars.len()).find(|&k| chars.get(k) == Some(&'\''))
            } else if chars.get(i + 2) == Some(&'\'') {
                Some(i + 2)
            } else {
                None
            };
            match end {
                Some(end) => {
                    for _ in i..=end {
                        out.push(' ');
                    }
                    i = end + 1;
                }
                None => {
                    out.push(c);
                    i += 1;
                }
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// The first path segment after each `crate::` in `code`, with its line: `crate::a::X` gives
/// `a`, `crate::{a::X, b}` gives `a` and `b`. `$crate::` (a macro's own crate) is skipped.
fn crate_paths(code: &str) -> Vec<(String, usize)> {
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(at) = code.get(from..).and_then(|rest| rest.find("crate::")) {
        let start = from + at;
        from = start + "crate::".len();
        let before = code.get(..start).and_then(|s| s.chars().next_back());
        if before.is_some_and(|c| is_ident(c) || c == '$') {
            continue;
        }
        let line = code.get(..start).map_or(0, |s| s.matches('\n').count()) + 1;
        let rest = code.get(from..).unwrap_or("").trim_start();
        if let Some(group) = rest.strip_prefix('{') {
            // Top-level items of the group: the first segment after `{` and after each `,`
            // at depth one.
            let mut depth = 1usize;
            let mut expect_name = true;
            let mut name = String::new();
            for c in group.chars() {
                if expect_name && is_ident(c) {
                    name.push(c);
                    continue;
                }
                if !name.is_empty() {
                    found.push((std::mem::take(&mut name), line));
                }
                expect_name = expect_name && c.is_whitespace();
                match c {
                    '{' => depth += 1,
                    '}' => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    ',' if depth == 1 => expect_name = true,
                    _ => {}
                }
            }
        } else {
            let name: String = rest.chars().take_while(|&c| is_ident(c)).collect();
            if !name.is_empty() {
                found.push((name, line));
            }
        }
    }
    found
}

/// The top-level module a source file belongs to (`a.rs` and `a/**` are `a`); `None` for
/// the crate root and the `bin/` crates.
fn module_of(relative: &Path) -> Option<String> {
    let first = relative.components().next()?.as_os_str().to_str()?;
    if first == "lib.rs" || first == "main.rs" || first == "bin" {
        return None;
    }
    Some(first.strip_suffix(".rs").unwrap_or(first).to_string())
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The module graph of sources given as (path relative to `src/`, text).
fn graph(sources: &[(PathBuf, String)]) -> Edges {
    let modules: BTreeSet<String> = sources.iter().filter_map(|(p, _)| module_of(p)).collect();
    let mut edges = Edges::new();
    for (path, text) in sources {
        let Some(from) = module_of(path) else {
            continue;
        };
        let targets = edges.entry(from.clone()).or_default();
        for (to, line) in crate_paths(&code_only(text)) {
            if to != from && modules.contains(&to) {
                targets
                    .entry(to)
                    .or_insert_with(|| format!("{}:{line}", path.display()));
            }
        }
    }
    edges
}

/// A circle in `edges`, as the modules on it (the first repeated at the end), if any.
fn find_circle(edges: &Edges) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        edges: &Edges,
        done: &mut BTreeSet<String>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = stack.iter().position(|n| n == node) {
            let mut circle = stack.get(at..).unwrap_or_default().to_vec();
            circle.push(node.to_string());
            return Some(circle);
        }
        if done.contains(node) {
            return None;
        }
        stack.push(node.to_string());
        for next in edges.get(node).into_iter().flat_map(BTreeMap::keys) {
            if let Some(circle) = visit(next, edges, done, stack) {
                return Some(circle);
            }
        }
        stack.pop();
        done.insert(node.to_string());
        None
    }
    let mut done = BTreeSet::new();
    edges
        .keys()
        .find_map(|node| visit(node, edges, &mut done, &mut Vec::new()))
}

/// The circle written out: each step with the line that takes it.
fn describe(circle: &[String], edges: &Edges) -> String {
    circle
        .windows(2)
        .map(|step| match step {
            [a, b] => {
                let at = edges
                    .get(a)
                    .and_then(|t| t.get(b))
                    .map_or("?", String::as_str);
                format!("{a} -> {b} ({at})")
            }
            _ => String::new(),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

#[test]
fn the_module_graph_has_no_circle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let sources: Vec<(PathBuf, String)> = files
        .iter()
        .map(|f| {
            let relative = f.strip_prefix(&src).unwrap().to_path_buf();
            (relative, std::fs::read_to_string(f).unwrap())
        })
        .collect();
    let edges = graph(&sources);
    // The reader sees the graph at all: the executor is built on the jail.
    assert!(
        edges.get("exec").is_some_and(|t| t.contains_key("jail")),
        "{edges:#?}"
    );
    if let Some(circle) = find_circle(&edges) {
        panic!(
            "the modules of the safety crate form a circle: {}",
            describe(&circle, &edges)
        );
    }
}

#[test]
fn a_circle_is_found_and_comments_strings_and_macros_are_not_imports() {
    let file = |path: &str, text: &str| (PathBuf::from(path), text.to_string());
    let sources = [
        file("a.rs", "use crate::{b::X, c};\n// crate::d\nfn f() {}"),
        file("b/mod.rs", "fn g() { let _ = \"crate::d\"; let _ = '\"'; }"),
        file("b/inner.rs", "use crate::c::Y;"),
        file(
            "c.rs",
            "macro_rules! m { () => { $crate::d::Z } }\nuse crate::a;",
        ),
        file("d.rs", "/* crate::a */ pub(crate) fn h() {}"),
        file("lib.rs", "use crate::a;"),
    ];
    let edges = graph(&sources);
    let targets = |m: &str| -> Vec<&str> {
        edges
            .get(m)
            .map(|t| t.keys().map(String::as_str).collect())
            .unwrap_or_default()
    };
    assert_eq!(targets("a"), ["b", "c"]);
    assert_eq!(targets("b"), ["c"]);
    assert_eq!(targets("c"), ["a"]);
    assert!(targets("d").is_empty());
    let circle = find_circle(&edges).unwrap();
    assert_eq!(circle, ["a", "b", "c", "a"]);
    assert_eq!(
        describe(&circle, &edges),
        "a -> b (a.rs:1), b -> c (b/inner.rs:1), c -> a (c.rs:2)"
    );
    let acyclic = [file("a.rs", "use crate::b;"), file("b.rs", "")];
    assert_eq!(find_circle(&graph(&acyclic)), None);
}
