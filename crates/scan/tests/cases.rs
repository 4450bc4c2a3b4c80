//! The case set: many small snippets under `tests/data/cases/`, each with the exact rule set
//! it must produce on its first line (`// expect: exec_dynamic_string+ missing_timeout`,
//! `# expect:` in Python, `expect: none` for a clean one). A `+` after an id means the finding
//! is tainted from tool input; an id written twice must fire twice. Every snippet is scanned
//! alone; the run prints each mismatch and the precision and recall over the whole set, and
//! fails below 0.95 for either (the bar), on any mismatch outside the documented gaps
//! (`KNOWN_GAPS`), or on a snippet with no `expect:` line.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

/// (rule id with `+` when tainted) → count.
type Bag = BTreeMap<String, usize>;

fn expected(text: &str, name: &str) -> Bag {
    let first = text.lines().next().unwrap_or_default();
    let spec = first
        .trim_start_matches(['/', '#', ' '])
        .strip_prefix("expect:")
        .unwrap_or_else(|| panic!("{name}: the first line is not an `expect:` line"));
    let mut bag = Bag::new();
    for id in spec.split_whitespace().filter(|id| *id != "none") {
        let rule = id.trim_end_matches('+');
        assert!(
            scan::rule::Rule::from_id(rule).is_some(),
            "{name}: unknown rule id {rule}"
        );
        *bag.entry(id.to_string()).or_default() += 1;
    }
    bag
}

/// A finding's key in a bag: its rule id, with `+` when tainted.
fn key_of(finding: &scan::finding::Finding) -> String {
    if finding.tainted_from_tool_input {
        format!("{}+", finding.rule_id)
    } else {
        finding.rule_id.to_string()
    }
}

fn found(path: &Path, text: &str) -> Bag {
    let mut bag = Bag::new();
    for finding in scan::scan_text(path, text).expect("case parses") {
        *bag.entry(key_of(&finding)).or_default() += 1;
    }
    bag
}

/// Expected against found findings over a whole set: the counts and every mismatch.
#[derive(Default)]
struct Tally {
    hit: usize,
    extra: usize,
    missed: usize,
    wrong: Vec<String>,
}

impl Tally {
    /// Compare one place (a snippet, or a file of a project) named `place`.
    fn compare(&mut self, place: &str, want: &Bag, got: &Bag) {
        for (id, &n) in got {
            let w = want.get(id).copied().unwrap_or(0);
            self.hit += n.min(w);
            if n > w {
                self.extra += n - w;
                self.wrong.push(format!("{place}: extra {id}"));
            }
        }
        for (id, &w) in want {
            let n = got.get(id).copied().unwrap_or(0);
            if w > n {
                self.missed += w - n;
                self.wrong.push(format!("{place}: missed {id}"));
            }
        }
    }

    /// Print the figures and every mismatch; fail below 0.95 precision or recall, or on any
    /// mismatch of a place not among `known` (the documented gaps), so that no single
    /// regression hides under the bar.
    fn assert_bar(&self, what: &str, known: &[&str]) {
        let precision = self.hit as f64 / (self.hit + self.extra).max(1) as f64;
        let recall = self.hit as f64 / (self.hit + self.missed).max(1) as f64;
        println!(
            "{what}, {} expected findings found, {} extra, {} missed; precision {precision:.3}, recall {recall:.3}",
            self.hit, self.extra, self.missed
        );
        for line in &self.wrong {
            println!("  {line}");
        }
        assert!(
            precision >= 0.95 && recall >= 0.95,
            "precision {precision:.3}, recall {recall:.3}:\n{}",
            self.wrong.join("\n")
        );
        let unknown: Vec<&String> = (self.wrong.iter())
            .filter(|line| {
                !known
                    .iter()
                    .any(|place| line.starts_with(&format!("{place}:")))
            })
            .collect();
        assert!(unknown.is_empty(), "mismatches: {unknown:#?}");
    }
}

/// Snippets the scanner is known to get wrong, each documented in docs/scanner.md ("What it
/// does not do yet"): taint through a module global written under `global`, and through an
/// attribute of an object.
const KNOWN_GAPS: [&str; 0] = [];

#[test]
fn the_case_set_meets_the_precision_and_recall_bar() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/cases");
    let mut entries: Vec<_> = fs::read_dir(&dir)
        .expect("case folder")
        .map(|entry| entry.expect("entry").path())
        .collect();
    entries.sort();
    let mut tally = Tally::default();
    for path in &entries {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let text = fs::read_to_string(path).expect("case text");
        tally.compare(&name, &expected(&text, &name), &found(path, &text));
    }
    assert!(
        entries.len() >= 20,
        "the case set has {} snippets",
        entries.len()
    );
    tally.assert_bar(
        &format!("case set: {} snippets", entries.len()),
        &KNOWN_GAPS,
    );
}

/// Projects of several files under `tests/data/projects/`, each with an `EXPECT` file: one
/// line per file that must have findings, `path/from/project: rule rule+` (same spelling as
/// the snippets). A file not listed must have none. Each project is scanned as a folder,
/// so taint crosses its files as it would in a real server.
#[test]
fn projects_carry_taint_across_files() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/projects");
    let mut projects: Vec<_> = fs::read_dir(&dir)
        .expect("project folder")
        .map(|entry| entry.expect("entry").path())
        .filter(|path| path.is_dir())
        .collect();
    projects.sort();
    assert!(projects.len() >= 8, "{} projects", projects.len());
    let mut tally = Tally::default();
    for project in &projects {
        let name = project.file_name().unwrap().to_string_lossy().into_owned();
        let spec = fs::read_to_string(project.join("EXPECT")).expect("EXPECT file");
        let mut want: BTreeMap<String, Bag> = BTreeMap::new();
        for line in spec.lines().filter(|l| !l.trim().is_empty()) {
            let (file, rules) = line
                .split_once(':')
                .unwrap_or_else(|| panic!("{name}: bad EXPECT line {line:?}"));
            let bag = expected(&format!("expect:{rules}"), &name);
            want.insert(file.trim().to_string(), bag);
        }
        let report = scan::scan(&scan::ScanOptions::new(project)).expect("scan");
        assert!(report.errors.is_empty(), "{name}: {:?}", report.errors);
        let mut got: BTreeMap<String, Bag> = BTreeMap::new();
        let prefix = format!("{}/", project.display());
        for finding in &report.findings {
            let file = finding.file.strip_prefix(&prefix).unwrap_or(&finding.file);
            *got.entry(file.to_string())
                .or_default()
                .entry(key_of(finding))
                .or_default() += 1;
        }
        let empty = Bag::new();
        let files: std::collections::BTreeSet<&String> = want.keys().chain(got.keys()).collect();
        for file in files {
            let (w, g) = (want.get(file), got.get(file));
            tally.compare(
                &format!("{name}/{file}"),
                w.unwrap_or(&empty),
                g.unwrap_or(&empty),
            );
        }
    }
    tally.assert_bar(&format!("projects: {}", projects.len()), &[]);
}

/// The order of analysis (`scan::Waves`) loses nothing the plain order found, also past its
/// bound on waves of first analyses (205): a JS chain of 206 files, each reached for the
/// first time in a wave of its own, spends the bound; a Python handler that the text search
/// does not take for one (`@mcp. tool()`) waits until then, and its input goes through a
/// quiet file (only parsed, its links unknown) to a shell. Once the bound is spent every
/// file's links are made known, so the shell is still reached (it was not, once).
#[test]
fn taint_past_the_bound_on_first_analyses_is_followed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let js = dir.path().join("js");
    let py = dir.path().join("py");
    fs::create_dir_all(&js).expect("js folder");
    fs::create_dir_all(&py).expect("py folder");
    let chain = 206;
    fs::write(
        js.join("server.ts"),
        "import { c1 } from \"./c1\";\n\
         server.tool(\"run\", {}, async ({ cmd }) => { c1(cmd); return { content: [] }; });\n",
    )
    .expect("write");
    for k in 1..chain {
        let next = k + 1;
        fs::write(
            js.join(format!("c{k}.ts")),
            format!(
                "import {{ c{next} }} from \"./c{next}\";\nexport function c{k}(x: string) {{ c{next}(x); }}\n"
            ),
        )
        .expect("write");
    }
    fs::write(
        js.join(format!("c{chain}.ts")),
        format!("export function c{chain}(x: string) {{ return x; }}\n"),
    )
    .expect("write");
    fs::write(
        py.join("s.py"),
        "from mcp.server.fastmcp import FastMCP\nfrom q import run_q\nmcp = FastMCP('x')\n\n\
         @mcp. tool()\ndef t(x: str):\n    run_q(x)\n",
    )
    .expect("write");
    fs::write(
        py.join("q.py"),
        "from shell import sh\n\ndef run_q(x):\n    sh(x)\n",
    )
    .expect("write");
    fs::write(
        py.join("shell.py"),
        "import subprocess\n\ndef sh(x):\n    subprocess.run(x, shell=True, timeout=5)\n",
    )
    .expect("write");
    let report = scan::scan(&scan::ScanOptions::new(dir.path())).expect("scan");
    let shell: Vec<(&str, bool)> = (report.findings.iter())
        .filter(|finding| finding.file.ends_with("shell.py"))
        .map(|finding| (finding.rule_id, finding.tainted_from_tool_input))
        .collect();
    assert!(
        shell.contains(&("shell_true_option", true)),
        "shell.py findings: {shell:?}"
    );
}
