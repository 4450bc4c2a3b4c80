//! The case set: many small snippets under `tests/data/cases/`, each with the exact rule set
//! it must produce on its first line (`// expect: exec_dynamic_string+ missing_timeout`,
//! `# expect:` in Python, `expect: none` for a clean one). A `+` after an id means the finding
//! is tainted from tool input; an id written twice must fire twice. Every snippet is scanned
//! alone; the run prints each mismatch and the precision and recall over the whole set, and
//! fails below 0.95 for either (the bar) or on a snippet with no `expect:` line.

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

fn found(path: &Path, text: &str) -> Bag {
    let mut bag = Bag::new();
    for finding in scan::scan_text(path, text).expect("case parses") {
        let key = if finding.tainted_from_tool_input {
            format!("{}+", finding.rule_id)
        } else {
            finding.rule_id.to_string()
        };
        *bag.entry(key).or_default() += 1;
    }
    bag
}

#[test]
fn the_case_set_meets_the_precision_and_recall_bar() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/cases");
    let mut entries: Vec<_> = fs::read_dir(&dir)
        .expect("case folder")
        .map(|entry| entry.expect("entry").path())
        .collect();
    entries.sort();
    let (mut hit, mut extra, mut missed) = (0usize, 0usize, 0usize);
    let mut wrong = Vec::new();
    for path in &entries {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let text = fs::read_to_string(path).expect("case text");
        let want = expected(&text, &name);
        let got = found(path, &text);
        let mut this_extra = Vec::new();
        let mut this_missed = Vec::new();
        for (id, &n) in &got {
            let w = want.get(id).copied().unwrap_or(0);
            hit += n.min(w);
            if n > w {
                extra += n - w;
                this_extra.push(id.clone());
            }
        }
        for (id, &w) in &want {
            let n = got.get(id).copied().unwrap_or(0);
            if w > n {
                missed += w - n;
                this_missed.push(id.clone());
            }
        }
        if !this_extra.is_empty() || !this_missed.is_empty() {
            wrong.push(format!(
                "{name}: extra {this_extra:?}, missed {this_missed:?}"
            ));
        }
    }
    assert!(
        entries.len() >= 20,
        "the case set has {} snippets",
        entries.len()
    );
    let precision = hit as f64 / (hit + extra).max(1) as f64;
    let recall = hit as f64 / (hit + missed).max(1) as f64;
    println!(
        "case set: {} snippets, {hit} expected findings found, {extra} extra, {missed} missed; precision {precision:.3}, recall {recall:.3}",
        entries.len()
    );
    for line in &wrong {
        println!("  {line}");
    }
    assert!(
        precision >= 0.95 && recall >= 0.95,
        "precision {precision:.3}, recall {recall:.3}:\n{}",
        wrong.join("\n")
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
    let (mut hit, mut extra, mut missed) = (0usize, 0usize, 0usize);
    let mut wrong = Vec::new();
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
            let file = finding
                .file
                .strip_prefix(&prefix)
                .unwrap_or(&finding.file)
                .to_string();
            let key = if finding.tainted_from_tool_input {
                format!("{}+", finding.rule_id)
            } else {
                finding.rule_id.to_string()
            };
            *got.entry(file).or_default().entry(key).or_default() += 1;
        }
        let files: std::collections::BTreeSet<&String> = want.keys().chain(got.keys()).collect();
        for file in files {
            let empty = Bag::new();
            let w = want.get(file).unwrap_or(&empty);
            let g = got.get(file).unwrap_or(&empty);
            for (id, &n) in g {
                let expected = w.get(id).copied().unwrap_or(0);
                hit += n.min(expected);
                if n > expected {
                    extra += n - expected;
                    wrong.push(format!("{name}/{file}: extra {id}"));
                }
            }
            for (id, &n) in w {
                let found = g.get(id).copied().unwrap_or(0);
                if n > found {
                    missed += n - found;
                    wrong.push(format!("{name}/{file}: missed {id}"));
                }
            }
        }
    }
    let precision = hit as f64 / (hit + extra).max(1) as f64;
    let recall = hit as f64 / (hit + missed).max(1) as f64;
    println!(
        "projects: {}, {hit} expected findings found, {extra} extra, {missed} missed; precision {precision:.3}, recall {recall:.3}",
        projects.len()
    );
    for line in &wrong {
        println!("  {line}");
    }
    assert!(
        precision >= 0.95 && recall >= 0.95,
        "precision {precision:.3}, recall {recall:.3}:\n{}",
        wrong.join("\n")
    );
}
