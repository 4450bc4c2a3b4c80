//! The built-in table compiled for search: each rule's regex anchored at its hit, and the
//! literal searchers (Teddy where it applies) that find the anchors in a text.
//!
//! Built once per process ([`BUILTIN`]) and shared by every `Redactor`. The anchor searchers
//! are built at once; each rule's regexes only when an anchor of that rule is first found
//! ([`CompiledRule::matcher`]): compiling all 71 costs tens of milliseconds, which a
//! short-lived process (an agent hook, run before every tool call) would pay for every call
//! while it needs one or two of them.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, OnceLock};

use aho_corasick::{AhoCorasick, AhoCorasickKind, Input, MatchKind, Span as LitSpan, packed};
use regex::Regex;

use super::rules::{BUILTIN_RULES, BuiltinRule, LeftContext};
use super::search::secret_groups;
use super::{RedactError, marker_for};

/// A built-in rule, ready for search.
#[derive(Debug)]
pub(super) struct CompiledRule {
    pub(super) marker: Box<str>,
    pub(super) left: LeftContext,
    /// The rule as written in the table.
    spec: &'static BuiltinRule,
    /// Its regexes, compiled on first use.
    compiled: OnceLock<Option<Matcher>>,
    pub(super) extends_back: bool,
    pub(super) check: super::values::ValueCheck,
}

/// A rule's compiled regexes.
#[derive(Debug)]
pub(super) struct Matcher {
    /// `^(?:pattern)`: only ever run on `&text[hit..]`.
    pub(super) regex: Regex,
    /// [`BuiltinRule::glued_pattern`], compiled: what a match right after a letter or digit
    /// must also match.
    pub(super) glued: Option<Regex>,
    pub(super) secret_groups: Vec<usize>,
}

impl CompiledRule {
    /// The rule's regexes, compiled the first time any text needs them. `None` only if the
    /// built-in table holds a pattern that does not compile, which a unit test rules out
    /// (`every_builtin_rule_compiles`); the search then redacts the whole word at the
    /// anchor rather than let a secret through.
    pub(super) fn matcher(&self) -> Option<&Matcher> {
        self.compiled
            .get_or_init(|| {
                let regex = Regex::new(&format!("^(?:{})", self.spec.pattern)).ok()?;
                let glued = match self.spec.glued_pattern() {
                    Some(p) => Some(Regex::new(&p).ok()?),
                    None => None,
                };
                Some(Matcher {
                    secret_groups: secret_groups(&regex),
                    regex,
                    glued,
                })
            })
            .as_ref()
    }
}

/// One anchor of one rule, as checked at a literal hit.
#[derive(Debug)]
pub(super) struct AnchorCheck {
    pub(super) rule: usize,
    pub(super) bytes: Box<[u8]>,
    pub(super) ignore_case: bool,
}

/// Most patterns a packed (Teddy) searcher is given; above this it gives up on SIMD.
const PACKED_PATTERN_LIMIT: usize = 64;
/// Shortest pattern a packed searcher is given: shorter ones would weaken its fingerprints for
/// every other pattern, so they go to their own (memmem) search.
const PACKED_MIN_LEN: usize = 3;
/// Longest fingerprint Teddy uses.
const TEDDY_MASK_LEN: usize = 4;
/// Bytes lower-cased at a time for the case-insensitive search (stays in L1).
const FOLD_CHUNK: usize = 8 * 1024;

/// A literal searcher over one set of anchors, leftmost-longest.
#[derive(Debug)]
enum Literals {
    /// Teddy: SIMD, for up to [`PACKED_PATTERN_LIMIT`] patterns of [`PACKED_MIN_LEN`]+ bytes.
    Packed(packed::Searcher),
    /// Aho-Corasick (a single pattern gets a memmem prefilter); also the fallback where
    /// Teddy is unavailable.
    Automaton(AhoCorasick),
}

impl Literals {
    fn build(patterns: &[Vec<u8>]) -> Result<Self, RedactError> {
        let packable = patterns.len() > 1
            && patterns.len() <= PACKED_PATTERN_LIMIT
            && patterns.iter().all(|p| p.len() >= PACKED_MIN_LEN);
        if packable {
            let searcher = packed::Config::new()
                .match_kind(packed::MatchKind::LeftmostLongest)
                .builder()
                .extend(patterns)
                .build();
            if let Some(searcher) = searcher {
                return Ok(Literals::Packed(searcher));
            }
        }
        AhoCorasick::builder()
            .match_kind(MatchKind::LeftmostLongest)
            .kind(Some(AhoCorasickKind::DFA))
            .build(patterns)
            .map(Literals::Automaton)
            .map_err(|e| RedactError::BadPattern {
                name: "built-in anchors".to_string(),
                message: e.to_string(),
            })
    }

    /// The leftmost hit starting at or after `from`: its start and pattern index.
    fn find(&self, hay: &[u8], from: usize) -> Option<(usize, usize)> {
        if from >= hay.len() {
            return None;
        }
        match self {
            Literals::Packed(searcher) => searcher
                .find_in(hay, LitSpan::from(from..hay.len()))
                .map(|m| (m.start(), m.pattern().as_usize())),
            Literals::Automaton(ac) => ac
                .find(Input::new(hay).range(from..))
                .map(|m| (m.start(), m.pattern().as_usize())),
        }
    }
}

/// A set of anchors searched together, with what to check at each hit.
#[derive(Debug)]
pub(super) struct AnchorSet {
    literals: Literals,
    /// For each pattern: the anchors to check where it starts.
    pub(super) checks: Vec<Vec<AnchorCheck>>,
    /// Longest pattern, in bytes.
    max_len: usize,
}

impl AnchorSet {
    /// The set of the table's anchors for which `wanted(rule, anchor)` holds, lower-cased
    /// when `folded` (it is then searched over the lower-cased text).
    ///
    /// Anchors with the same first [`TEDDY_MASK_LEN`] bytes share one pattern, their longest
    /// common prefix (`pass` for `password`, `passwd`, `passphrase`): fewer patterns keep
    /// Teddy in its faster (slim) form. A hit of a pattern checks every anchor whose pattern
    /// is a prefix of it, so a leftmost-longest hit also checks the anchors of the shorter
    /// patterns starting there.
    fn build(
        folded: bool,
        wanted: impl Fn(&BuiltinRule, &str) -> bool,
    ) -> Result<Self, RedactError> {
        let norm = |anchor: &str| -> Vec<u8> {
            if folded {
                anchor.to_ascii_lowercase().into_bytes()
            } else {
                anchor.as_bytes().to_vec()
            }
        };
        let mut anchors: Vec<(usize, &'static str, Vec<u8>)> = Vec::new();
        for (rule, spec) in BUILTIN_RULES.iter().enumerate() {
            for anchor in spec.anchors {
                if wanted(spec, anchor) {
                    anchors.push((rule, anchor, norm(anchor)));
                }
            }
        }
        let normed: Vec<&[u8]> = anchors.iter().map(|(_, _, b)| b.as_slice()).collect();
        let anchor_patterns = shared_prefixes(&normed);
        let mut patterns: Vec<Vec<u8>> = Vec::new();
        for pattern in &anchor_patterns {
            if !patterns.contains(pattern) {
                patterns.push(pattern.clone());
            }
        }
        let checks = patterns
            .iter()
            .map(|pattern| {
                anchors
                    .iter()
                    .zip(&anchor_patterns)
                    .filter(|(_, own)| pattern.starts_with(own))
                    .map(|((rule, anchor, _), _)| AnchorCheck {
                        rule: *rule,
                        bytes: anchor.as_bytes().into(),
                        ignore_case: BUILTIN_RULES
                            .get(*rule)
                            .is_some_and(|r| r.anchors_ignore_case),
                    })
                    .collect()
            })
            .collect();
        let max_len = patterns.iter().map(Vec::len).max().unwrap_or(0);
        if max_len >= FOLD_CHUNK {
            return Err(RedactError::BadPattern {
                name: "built-in anchors".to_string(),
                message: format!("an anchor is longer than {FOLD_CHUNK} bytes"),
            });
        }
        Ok(AnchorSet {
            literals: Literals::build(&patterns)?,
            checks,
            max_len,
        })
    }

    /// Push `(start, set, pattern)` for every position of `hay` where a pattern starts
    /// below `report_below`, adding `base` to the start.
    fn collect(
        &self,
        set: usize,
        hay: &[u8],
        base: usize,
        report_below: usize,
        hits: &mut Vec<Hit>,
    ) {
        let mut pos = 0;
        while let Some((at, pattern)) = self.literals.find(hay, pos) {
            if at >= report_below {
                break;
            }
            hits.push(Hit {
                at: base + at,
                set,
                pattern,
            });
            pos = at + 1;
        }
    }
}

/// The first [`TEDDY_MASK_LEN`] bytes of an anchor (all of a shorter one).
fn key(bytes: &[u8]) -> &[u8] {
    bytes
        .get(..bytes.len().min(TEDDY_MASK_LEN))
        .unwrap_or_default()
}

/// Each anchor's pattern: the longest common prefix of the anchors with its [`key`], found
/// in one pass over them (a key's prefix is narrowed as its group grows).
fn shared_prefixes(anchors: &[&[u8]]) -> Vec<Vec<u8>> {
    let mut prefixes: HashMap<&[u8], Vec<u8>> = HashMap::with_capacity(anchors.len());
    for bytes in anchors {
        prefixes
            .entry(key(bytes))
            .and_modify(|prefix| {
                let common = prefix
                    .iter()
                    .zip(bytes.iter())
                    .take_while(|(x, y)| x == y)
                    .count();
                prefix.truncate(common);
            })
            .or_insert_with(|| bytes.to_vec());
    }
    anchors
        .iter()
        .map(|bytes| prefixes.get(key(bytes)).cloned().unwrap_or_default())
        .collect()
}

/// A position where a pattern of an anchor set starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Hit {
    pub(super) at: usize,
    pub(super) set: usize,
    pub(super) pattern: usize,
}

/// The compiled built-in table (shared by every `Redactor`).
#[derive(Debug)]
pub(super) struct Builtin {
    pub(super) rules: Vec<CompiledRule>,
    /// Anchor sets searched over the text (case-sensitive anchors), then those searched over
    /// the lower-cased text (case-insensitive anchors); every anchor is in exactly one.
    pub(super) sets: Vec<(AnchorSet, bool)>,
    /// Longest pattern of a folded set, minus one: the overlap of lower-cased chunks.
    fold_overlap: usize,
}

impl Builtin {
    /// Every anchor-set hit in `bytes`, sorted by position.
    pub(super) fn hits(&self, bytes: &[u8]) -> Vec<Hit> {
        let mut hits = Vec::new();
        for (i, (set, folded)) in self.sets.iter().enumerate() {
            if !folded {
                set.collect(i, bytes, 0, bytes.len(), &mut hits);
            }
        }
        // Lower-case a chunk at a time and search that. Consecutive chunks overlap by
        // `fold_overlap` bytes, and a chunk only reports hits that start before the overlap
        // (unless it is the last), so every hit is seen whole exactly once.
        // Sized to the text (most redacted strings are short: zeroing a whole chunk per call
        // cost more than the search).
        let mut buf = Vec::with_capacity(bytes.len().min(FOLD_CHUNK));
        let mut base = 0;
        while base < bytes.len() {
            let src = bytes.get(base..).unwrap_or_default();
            let len = src.len().min(FOLD_CHUNK);
            let last = base + len >= bytes.len();
            buf.clear();
            buf.extend(src.iter().take(len).map(u8::to_ascii_lowercase));
            let chunk = buf.as_slice();
            let report_below = if last {
                len
            } else {
                len.saturating_sub(self.fold_overlap)
            };
            for (i, (set, folded)) in self.sets.iter().enumerate() {
                if *folded {
                    set.collect(i, chunk, base, report_below, &mut hits);
                }
            }
            if last || report_below == 0 {
                break;
            }
            base += report_below;
        }
        // Each set's hits are already in order: the stable sort merges those runs.
        hits.sort();
        hits
    }
}

fn compile_builtin() -> Result<Builtin, RedactError> {
    let mut rules = Vec::with_capacity(BUILTIN_RULES.len());
    for spec in BUILTIN_RULES {
        rules.push(CompiledRule {
            marker: marker_for(spec.name),
            left: spec.left,
            spec,
            compiled: OnceLock::new(),
            extends_back: spec.extends_back,
            check: spec.check,
        });
    }
    // Teddy's fingerprint is as long as the shortest pattern (at most 4 bytes): one 3-byte
    // anchor in a set costs every other anchor of it a weaker fingerprint and several times
    // the false candidates. So anchors go, by case and by length, to sets of 4+-byte,
    // 3-byte and shorter anchors (a single-pattern set is a memmem search).
    let class = |anchor: &str| anchor.len().clamp(PACKED_MIN_LEN - 1, TEDDY_MASK_LEN);
    let mut sets = Vec::new();
    for folded in [false, true] {
        for len in (PACKED_MIN_LEN - 1..=TEDDY_MASK_LEN).rev() {
            let wanted =
                |r: &BuiltinRule, a: &str| r.anchors_ignore_case == folded && class(a) == len;
            let any = BUILTIN_RULES
                .iter()
                .any(|r| r.anchors.iter().any(|a| wanted(r, a)));
            if any {
                sets.push((AnchorSet::build(folded, wanted)?, folded));
            }
        }
    }
    let fold_overlap = sets
        .iter()
        .filter(|(_, folded)| *folded)
        .map(|(set, _)| set.max_len.saturating_sub(1))
        .max()
        .unwrap_or(0);
    Ok(Builtin {
        rules,
        sets,
        fold_overlap,
    })
}

/// The built-in table, compiled on first use; an error (a table that does not compile) is
/// what every `Redactor::new` then returns.
pub(super) static BUILTIN: LazyLock<Result<Arc<Builtin>, RedactError>> =
    LazyLock::new(|| compile_builtin().map(Arc::new));

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_rule_compiles() {
        let builtin = match &*BUILTIN {
            Ok(builtin) => builtin,
            Err(e) => panic!("{e}"),
        };
        for (rule, spec) in builtin.rules.iter().zip(BUILTIN_RULES) {
            assert!(
                rule.matcher().is_some(),
                "rule '{}' does not compile",
                spec.name
            );
        }
    }

    #[test]
    #[cfg(target_arch = "x86_64")]
    fn anchor_sets_of_several_patterns_get_the_simd_searcher() {
        // A rule added to the table must not silently push a set past Teddy's limits (the
        // fallback automaton is several times slower).
        if !std::arch::is_x86_feature_detected!("ssse3") {
            return;
        }
        let builtin = match &*BUILTIN {
            Ok(builtin) => builtin,
            Err(e) => panic!("{e}"),
        };
        for (set, folded) in &builtin.sets {
            if set.checks.len() > 1 {
                assert!(
                    matches!(set.literals, Literals::Packed(_)),
                    "a set of {} patterns (folded: {folded}) is not packed",
                    set.checks.len()
                );
            }
        }
    }

    #[test]
    fn anchors_sharing_a_key_share_their_longest_common_prefix() {
        let pass: [&[u8]; 5] = [b"password", b"passwd", b"passphrase", b"tok", b"token"];
        assert_eq!(
            shared_prefixes(&pass),
            [&b"pass"[..], b"pass", b"pass", b"tok", b"token"].map(<[u8]>::to_vec)
        );
        // Against the plain definition, over the whole built-in table.
        let table: Vec<Vec<u8>> = BUILTIN_RULES
            .iter()
            .flat_map(|r| {
                r.anchors
                    .iter()
                    .map(|a| a.to_ascii_lowercase().into_bytes())
            })
            .collect();
        let table: Vec<&[u8]> = table.iter().map(Vec::as_slice).collect();
        let reference: Vec<Vec<u8>> = table
            .iter()
            .map(|bytes| {
                let mut prefix = bytes.to_vec();
                for other in table.iter().filter(|o| key(o) == key(bytes)) {
                    let common = prefix.iter().zip(other.iter()).take_while(|(x, y)| x == y);
                    prefix.truncate(common.count());
                }
                prefix
            })
            .collect();
        assert_eq!(shared_prefixes(&table), reference);
    }
}
