//! The documentation cannot drift from the code: docs/policy.md lists exactly the keys the
//! loader accepts and exactly the `SAFE_MCP_*` variables it reads (both taken from the code,
//! not from a second list), every test a row of docs/guarantees.md names is a `fn` in the
//! sources, and every relative link (and `#anchor`) in README.md and docs/*.md resolves.
//! A reader trusts a reference only while it is true; these checks fail the build when it
//! stops being so.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn read(relative: &str) -> String {
    let path = repo_root().join(relative);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The lines of `text` outside fenced code blocks.
fn prose_lines(text: &str) -> Vec<&str> {
    let mut in_fence = false;
    let mut lines = Vec::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
            continue;
        }
        if !in_fence {
            lines.push(line);
        }
    }
    lines
}

/// The lines of the `## heading` section of `text` (up to the next `## `).
fn section<'a>(text: &'a str, heading: &str) -> Vec<&'a str> {
    let lines = prose_lines(text);
    let start = lines
        .iter()
        .position(|l| l.trim_end() == format!("## {heading}"))
        .unwrap_or_else(|| panic!("no '## {heading}' section"));
    lines[start + 1..]
        .iter()
        .take_while(|l| !l.starts_with("## "))
        .copied()
        .collect()
}

/// The cells of a table row, header and separator rows excluded. A `\|` inside a cell is
/// not a cell boundary.
fn table_row(line: &str) -> Option<Vec<String>> {
    let line = line.trim();
    let inner = line.strip_prefix('|')?.strip_suffix('|')?;
    let mut cells = vec![String::new()];
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'|') => {
                chars.next();
                cells.last_mut()?.push('|');
            }
            '|' => cells.push(String::new()),
            _ => cells.last_mut()?.push(c),
        }
    }
    let cells: Vec<String> = cells.into_iter().map(|c| c.trim().to_string()).collect();
    if cells
        .iter()
        .all(|c| c.chars().all(|ch| ch == '-' || ch == ':'))
    {
        return None;
    }
    Some(cells)
}

/// The code spans of a cell: `` `a`, `b` `` gives `a` and `b`.
fn code_spans(cell: &str) -> Vec<String> {
    cell.split('`')
        .enumerate()
        .filter(|(i, _)| i % 2 == 1)
        .map(|(_, s)| s.to_string())
        .collect()
}

/// A cell that is exactly one code span.
fn sole_code_span(cell: &str) -> Option<String> {
    let inner = cell.strip_prefix('`')?.strip_suffix('`')?;
    (!inner.contains('`')).then(|| inner.to_string())
}

#[test]
fn policy_md_documents_every_accepted_key_and_no_other() {
    let policy = read("docs/policy.md");
    let documented: Vec<String> = section(&policy, "Keys")
        .into_iter()
        .filter_map(table_row)
        .filter_map(|cells| cells.first().and_then(|c| sole_code_span(c)))
        .collect();
    let documented_set: BTreeSet<&str> = documented.iter().map(String::as_str).collect();
    assert_eq!(
        documented.len(),
        documented_set.len(),
        "a key is documented twice in docs/policy.md: {documented:?}"
    );
    let accepted = safety::config::policy_keys();
    assert!(
        accepted.len() > 30,
        "the key walk found too little: {accepted:?}"
    );
    let accepted_set: BTreeSet<&str> = accepted.iter().map(String::as_str).collect();
    let missing: Vec<_> = accepted_set.difference(&documented_set).collect();
    let unknown: Vec<_> = documented_set.difference(&accepted_set).collect();
    assert!(
        missing.is_empty() && unknown.is_empty(),
        "docs/policy.md, section Keys: accepted but not documented: {missing:?}; \
         documented but not accepted: {unknown:?}"
    );
}

#[test]
fn policy_md_documents_every_safe_mcp_variable_and_no_other() {
    let policy = read("docs/policy.md");
    let documented: BTreeMap<String, Vec<String>> = section(&policy, "Environment variables")
        .into_iter()
        .filter_map(table_row)
        .filter_map(|cells| {
            let name = sole_code_span(cells.first()?)?;
            name.starts_with("SAFE_MCP_").then(|| {
                (
                    name,
                    cells.get(1).map(|c| code_spans(c)).unwrap_or_default(),
                )
            })
        })
        .collect();
    let read_by_code = safety::config::environment_variables();
    for (name, key) in &read_by_code {
        let Some(cell) = documented.get(*name) else {
            panic!("{name} is read by the servers but not in docs/policy.md");
        };
        if let Some(key) = key {
            assert_eq!(
                cell,
                &vec![key.clone()],
                "docs/policy.md says {name} sets {cell:?}; it sets `{key}`"
            );
        }
    }
    let known: BTreeSet<&str> = read_by_code.iter().map(|(name, _)| *name).collect();
    for name in documented.keys() {
        assert!(
            known.contains(name.as_str()),
            "docs/policy.md documents {name}, which no server reads"
        );
    }
    // Nowhere else may a page name a variable that does not exist.
    for page in pages() {
        let text = read(&page);
        for (at, _) in text.match_indices("SAFE_MCP_") {
            let name: String = text[at..]
                .chars()
                .take_while(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == '_')
                .collect();
            if name.len() > "SAFE_MCP_".len() {
                assert!(
                    known.contains(name.as_str()),
                    "{page} names {name}, which no server reads"
                );
            }
        }
    }
}

/// README.md and every page of docs/, relative to the repository root.
fn pages() -> Vec<String> {
    let mut pages = vec!["README.md".to_string()];
    let mut docs: Vec<String> = std::fs::read_dir(repo_root().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".md"))
        .map(|name| format!("docs/{name}"))
        .collect();
    docs.sort();
    assert!(docs.len() > 5, "{docs:?}");
    pages.extend(docs);
    pages
}

/// Every `.rs` file under `crates/` and `fuzz/` (build output excluded).
fn rust_sources() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                if path.file_name().is_some_and(|n| n != "target") {
                    walk(&path, out);
                }
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    walk(&repo_root().join("crates"), &mut out);
    walk(&repo_root().join("fuzz"), &mut out);
    out
}

/// Names defined in the sources: items (`fn`, `struct`, `const`, ...) and modules (`mod x`,
/// file stems, folder names).
struct Defined {
    functions: BTreeSet<String>,
    names: BTreeSet<String>,
}

fn defined() -> Defined {
    let mut functions = BTreeSet::new();
    let mut names = BTreeSet::new();
    for path in rust_sources() {
        for part in path.iter().skip(repo_root().iter().count()) {
            let part = part.to_string_lossy();
            names.insert(part.strip_suffix(".rs").unwrap_or(&part).to_string());
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let words: Vec<&str> = text
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .filter(|w| !w.is_empty())
            .collect();
        for pair in words.windows(2) {
            let (keyword, name) = (pair[0], pair[1]);
            match keyword {
                "fn" => {
                    functions.insert(name.to_string());
                    names.insert(name.to_string());
                }
                "struct" | "enum" | "const" | "static" | "trait" | "type" | "mod" => {
                    names.insert(name.to_string());
                }
                _ => {}
            }
        }
    }
    Defined { functions, names }
}

/// The rows of every three-column table of docs/guarantees.md: guarantee, enforced by,
/// proven by (the header row excluded).
fn guarantee_rows() -> Vec<Vec<String>> {
    let text = read("docs/guarantees.md");
    let rows: Vec<Vec<String>> = prose_lines(&text)
        .into_iter()
        .filter_map(table_row)
        .filter(|cells| cells.len() == 3 && cells[2] != "proven by")
        .collect();
    assert!(rows.len() > 20, "too few guarantee rows: {}", rows.len());
    rows
}

fn is_rust_path(s: &str) -> bool {
    !s.is_empty()
        && s.split("::").all(|seg| {
            !seg.is_empty()
                && seg
                    .chars()
                    .all(|c| c.is_alphanumeric() || c == '_' || c == '*')
        })
}

#[test]
fn every_test_a_guarantee_names_exists() {
    let defined = defined();
    let mut problems = Vec::new();
    for row in guarantee_rows() {
        let tests = code_spans(&row[2]);
        assert!(!tests.is_empty(), "a guarantee without a test: {row:?}");
        for name in tests {
            if name.contains('/') {
                if !repo_root().join(&name).exists() {
                    problems.push(format!("no file '{name}' (proving '{}')", row[0]));
                }
                continue;
            }
            if !is_rust_path(&name) {
                problems.push(format!(
                    "'{name}' is not a test name (proving '{}')",
                    row[0]
                ));
                continue;
            }
            let segments: Vec<&str> = name.split("::").collect();
            let (last, modules) = segments.split_last().unwrap();
            for module in modules {
                if !defined.names.contains(*module) {
                    problems.push(format!("no module '{module}' (in '{name}')"));
                }
            }
            if *last != "*" && !defined.functions.contains(*last) {
                problems.push(format!("no fn '{last}' (named by '{}')", row[0]));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "docs/guarantees.md:\n{}",
        problems.join("\n")
    );
}

/// `cell` without its parenthesised asides, which name flags, system calls and fields
/// rather than items of the sources.
fn without_asides(cell: &str) -> String {
    let mut depth = 0usize;
    let mut out = String::new();
    for c in cell.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            _ if depth == 0 => out.push(c),
            _ => {}
        }
    }
    out
}

#[test]
fn every_function_a_guarantee_names_exists() {
    let defined = defined();
    let mut problems = Vec::new();
    for row in guarantee_rows() {
        for name in code_spans(&without_asides(&row[1])) {
            if name.contains('/') {
                if !repo_root().join(&name).exists() {
                    problems.push(format!("no file '{name}'"));
                }
            } else if is_rust_path(&name) {
                let last = name.rsplit("::").next().unwrap();
                if !defined.names.contains(last) {
                    problems.push(format!("no item '{last}' (in '{name}', row '{}')", row[0]));
                }
            }
        }
    }
    assert!(
        problems.is_empty(),
        "docs/guarantees.md:\n{}",
        problems.join("\n")
    );
}

/// The anchors GitHub gives the headings of a Markdown text.
fn anchors(text: &str) -> BTreeSet<String> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut anchors = BTreeSet::new();
    for line in prose_lines(text) {
        let Some(heading) = line.strip_prefix('#') else {
            continue;
        };
        let heading = heading.trim_start_matches('#');
        if !heading.starts_with(' ') {
            continue;
        }
        let slug: String = heading
            .trim()
            .to_lowercase()
            .chars()
            .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
            .map(|c| if c == ' ' { '-' } else { c })
            .collect();
        let n = seen.entry(slug.clone()).or_insert(0);
        anchors.insert(if *n == 0 {
            slug.clone()
        } else {
            format!("{slug}-{n}")
        });
        *n += 1;
    }
    anchors
}

/// The targets of the inline links `[text](target)` of a page, code excluded.
fn link_targets(text: &str) -> Vec<String> {
    let mut targets = Vec::new();
    for line in prose_lines(text) {
        // Code spans are not links; their text could hold `](`.
        let line: String = line
            .split('`')
            .enumerate()
            .filter(|(i, _)| i % 2 == 0)
            .map(|(_, s)| s)
            .collect::<Vec<_>>()
            .join("");
        let mut rest = line.as_str();
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let end = after.find(')').unwrap_or(after.len());
            targets.push(after[..end].to_string());
            rest = &after[end..];
        }
    }
    targets
}

#[test]
fn every_relative_link_and_anchor_resolves() {
    let mut problems = Vec::new();
    let mut checked = 0;
    for page in pages() {
        let text = read(&page);
        let folder = Path::new(&page).parent().unwrap().to_path_buf();
        for target in link_targets(&text) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            checked += 1;
            let (path, anchor) = match target.split_once('#') {
                Some((path, anchor)) => (path, Some(anchor)),
                None => (target.as_str(), None),
            };
            let file = if path.is_empty() {
                PathBuf::from(&page)
            } else {
                folder.join(path)
            };
            let on_disk = repo_root().join(&file);
            if !on_disk.exists() {
                problems.push(format!("{page}: '{target}': no {}", file.display()));
                continue;
            }
            if let Some(anchor) = anchor {
                let target_text = std::fs::read_to_string(&on_disk).unwrap_or_default();
                if !anchors(&target_text).contains(anchor) {
                    problems.push(format!("{page}: '{target}': no heading gives #{anchor}"));
                }
            }
        }
    }
    assert!(checked > 20, "too few links found: {checked}");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn anchors_are_made_as_a_code_host_makes_them() {
    let text = "# A `b` c, d\n## Kernel sandbox: e\n## x\n## x\n```\n# not a heading\n```\n";
    let got = anchors(text);
    let want: BTreeSet<String> = ["a-b-c-d", "kernel-sandbox-e", "x", "x-1"]
        .into_iter()
        .map(String::from)
        .collect();
    assert_eq!(got, want);
}
