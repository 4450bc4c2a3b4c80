//! `safe-mcp audit verify`: the whole chain checked, from the oldest rotated file the
//! chain names to the log itself, reporting the first broken line and why.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::GENESIS_PREV;
use super::chain::{first_record, read_chain_head};
use super::checkpoint::{CheckpointVerifier, verify_note};
use super::file::{parent_dir, same_file};
use super::record::{Rotation, check_line};
use super::rotate::rotated_number;

/// What `verify` found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifyReport {
    /// Records that verified (in every file checked).
    pub records: u64,
    /// The first broken record (1-based line number in [`VerifyReport::file`]) and what is
    /// wrong.
    pub broken: Option<(u64, String)>,
    /// The files of the chain that were checked, oldest first: the rotated files the chain
    /// names (`<log>.1`, `<log>.2`, ...), then the log itself.
    pub files: Vec<PathBuf>,
    /// The file holding the broken record.
    pub file: Option<PathBuf>,
    /// With a checkpoint key: what the signed checkpoints cover.
    pub signed: Option<Coverage>,
}

/// What the signed checkpoints of a log cover ([`verify_signed`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Coverage {
    /// Checkpoints whose signature, size and head verified.
    pub checkpoints: u64,
    /// Records 1 ..= `covered` are covered by a valid checkpoint (the last valid checkpoint's
    /// own record included).
    pub covered: u64,
}

/// The chain as far as it verified.
struct Walk<'k> {
    prev_hash: String,
    expected_seq: u64,
    key: Option<&'k CheckpointVerifier>,
    coverage: Coverage,
    /// The interval the last valid checkpoint gave.
    every: Option<u64>,
}

impl Walk<'_> {
    /// Records verified so far (`seq` starts at 1 and goes up by one a record).
    fn records(&self) -> u64 {
        self.expected_seq - 1
    }
}

/// Check an audit log's hash chain, across its rotated files.
///
/// The chain's files are named by the chain itself: the log's first record, when it is a
/// rotation start, names the rotated file it continues, whose first record names the one
/// before, and so on (in the log's folder; the log is first resolved, so a symlink to it
/// works). Other files beside it (backups, `<log>.20261130`) play no part. Reports the first broken line (1-based, in [`VerifyReport::file`]) and why:
/// a record whose content does not match its hash (edited), a `seq` gap (deleted record), a
/// `seq` out of order (reordered records), a `prev` that is not the previous record's hash,
/// a last line without newline or not parsable (cut-off tail), a rotated file that does not
/// end with its rotation record (records cut from its end), a chain that starts
/// mid-way (a rotated file removed or renamed), a rotated file of the log that the chain
/// does not reach (the log reset or replaced). `records` counts the records
/// before the first broken one.
pub fn verify(path: &Path) -> Result<VerifyReport, std::io::Error> {
    verify_signed(path, None)
}

/// [`verify`](fn@verify), and with `key` the signed checkpoints too: each checkpoint's note
/// must be signed by `key`, with the key's name as origin, and name the size and head of the
/// chain right before it (a chain recomputed after an edit fails at the first checkpoint
/// after it); after a valid checkpoint with interval N, a record more than N + 5 past it
/// with no checkpoint between means checkpoints were removed; a log of records with no valid
/// checkpoint at all is broken at its first record. What the checkpoints cover is
/// [`VerifyReport::signed`] (records after the last one are reported, not an error: a running
/// writer's newest records wait for their checkpoint).
pub fn verify_signed(
    path: &Path,
    key: Option<&CheckpointVerifier>,
) -> Result<VerifyReport, std::io::Error> {
    let path = std::fs::canonicalize(path)?;
    let path = path.as_path();
    // The log is opened once and read through that handle: a writer that rotates meanwhile
    // renames it, and puts a file at the path that the walk did not start from. The rotated
    // files the walk named are final (their end record was written before they got a name).
    let live_file = File::open(path)?;
    // Only what was whole when `verify` started: a writer holds the exclusive `flock` while it
    // writes a line, so under a shared one the length ends at a whole record. (A file that
    // cannot be locked is read as it is.)
    let whole = match live_file.lock_shared() {
        Ok(()) => {
            let len = live_file.metadata().map(|m| m.len());
            let _ = live_file.unlock();
            Some(len?)
        }
        Err(_) => None,
    };
    let files = chain_files(path, &live_file)?;
    let mut walk = Walk {
        prev_hash: GENESIS_PREV.to_string(),
        expected_seq: 1,
        key,
        coverage: Coverage::default(),
        every: None,
    };
    for (i, file) in files.iter().enumerate() {
        // The last file is the log itself, read through the handle the walk started from
        // (the walk reads first records with `pread`, so it starts at offset 0).
        let rotated = i + 1 < files.len();
        let reader: Box<dyn Read + '_> = match (rotated, whole) {
            (true, _) => Box::new(File::open(file)?),
            (false, Some(len)) => Box::new((&live_file).take(len)),
            (false, None) => Box::new(&live_file),
        };
        if let Some(broken) = verify_file(file, reader, i == 0, rotated, &mut walk)? {
            return Ok(VerifyReport {
                records: walk.records(),
                broken: Some(broken),
                file: Some(file.to_path_buf()),
                files,
                signed: key.map(|_| walk.coverage),
            });
        }
    }
    // A rotated file of this log that the chain does not reach: the log was reset or replaced
    // after it rotated (its history would otherwise go unchecked).
    if let Some(orphan) = unreached_rotated_file(path, &files, &live_file)? {
        return Ok(VerifyReport {
            records: walk.records(),
            broken: Some((
                1,
                "a rotated file of this log that its chain does not reach: the log was reset \
                 or replaced after this file rotated"
                    .to_string(),
            )),
            files,
            file: Some(orphan),
            signed: key.map(|_| walk.coverage),
        });
    }
    // Signed, yet no checkpoint anywhere: every one was removed (or the key never signed
    // this log).
    if key.is_some() && walk.coverage.checkpoints == 0 && walk.records() > 0 {
        return Ok(VerifyReport {
            records: walk.records(),
            broken: Some((
                1,
                "no checkpoint signed by this key covers any record (checkpoints removed, or \
                 the log was not signed with this key)"
                    .to_string(),
            )),
            file: files.first().cloned(),
            files,
            signed: Some(walk.coverage),
        });
    }
    Ok(VerifyReport {
        records: walk.records(),
        broken: None,
        file: None,
        files,
        signed: key.map(|_| walk.coverage),
    })
}

/// The files of the chain that ends in `path`, oldest first: walked back through the
/// rotation start records, as long as each names a plain file name that exists. Where the
/// walk stops, the oldest file's first record tells `verify` why (a start record: the chain
/// starts mid-way).
fn chain_files(path: &Path, live: &File) -> Result<Vec<PathBuf>, std::io::Error> {
    let dir = parent_dir(path);
    let mut files = vec![path.to_path_buf()];
    let mut seen = std::collections::HashSet::new();
    let mut previous = continued_file(dir, live, &mut seen)?;
    while let Some(file) = previous {
        previous = continued_file(dir, &File::open(&file)?, &mut seen)?;
        files.push(file);
    }
    files.reverse();
    Ok(files)
}

/// The file `file` continues: the one its first record (a rotation start) names, when that
/// is a plain file name in `dir`, not `seen` before on this walk, and a file that exists.
fn continued_file(
    dir: &Path,
    file: &File,
    seen: &mut std::collections::HashSet<String>,
) -> std::io::Result<Option<PathBuf>> {
    let Some(Rotation::Start(previous)) = first_record(file)? else {
        return Ok(None);
    };
    let plain = Path::new(&previous).file_name() == Some(std::ffi::OsStr::new(&previous));
    let path = dir.join(&previous);
    Ok((plain && path.is_file() && seen.insert(previous)).then_some(path))
}

/// A file beside the log named `<log>.<digits>`, ending with an end record that names it
/// (so written by this log's rotation), that is not among `files` and whose own chain does
/// not lead back to `live` (the file `verify` started from: a file rotated from it while
/// `verify` ran leads back to it, or is it). Backups and other files (which do not end so)
/// play no part.
fn unreached_rotated_file(
    path: &Path,
    files: &[PathBuf],
    live: &File,
) -> std::io::Result<Option<PathBuf>> {
    let Some(base) = path.file_name().and_then(|n| n.to_str()) else {
        return Ok(None);
    };
    let mut found: Vec<PathBuf> = Vec::new();
    for entry in std::fs::read_dir(parent_dir(path))? {
        let entry = entry?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else {
            continue;
        };
        let numbered = rotated_number(base, name).is_some();
        let candidate = entry.path();
        if !numbered
            || files.contains(&candidate)
            || !candidate.is_file()
            || leads_back_to(&candidate, live)?
        {
            continue;
        }
        let file = File::open(&candidate)?;
        let len = file.metadata()?.len();
        if let Ok(head) = read_chain_head(&file, len)
            && head.rotated_to.as_deref() == Some(name)
        {
            found.push(candidate);
        }
    }
    found.sort();
    Ok(found.into_iter().next())
}

/// True when `file` is `live`, or its start records lead back to it (through files in the
/// same folder).
fn leads_back_to(file: &Path, live: &File) -> std::io::Result<bool> {
    let dir = parent_dir(file);
    let mut seen = std::collections::HashSet::new();
    let mut current = Some(file.to_path_buf());
    while let Some(path) = current {
        if same_file(live, &path)? {
            return Ok(true);
        }
        current = continued_file(dir, &File::open(&path)?, &mut seen)?;
    }
    Ok(false)
}

/// One file of the chain; `first`: the oldest one (it must not continue another); `rotated`:
/// it must end with its rotation end record. (A later file continues the one before it by
/// construction: the walk found that one through its first record.)
fn verify_file(
    path: &Path,
    file: Box<dyn Read + '_>,
    first: bool,
    rotated: bool,
    walk: &mut Walk<'_>,
) -> Result<Option<(u64, String)>, std::io::Error> {
    let own_name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut reader = BufReader::new(file);
    let mut line = Vec::new();
    let mut number = 0u64;
    let mut ended: Option<String> = None;
    loop {
        line.clear();
        let read = reader.read_until(b'\n', &mut line)?;
        if read == 0 {
            break;
        }
        number += 1;
        let Some(body) = line.strip_suffix(b"\n") else {
            return Ok(Some((
                number,
                "cut-off tail: the last line has no newline (a record was truncated)".to_string(),
            )));
        };
        let record = match check_line(body) {
            Ok(record) => record,
            Err(reason) => return Ok(Some((number, reason.to_string()))),
        };
        if ended.is_some() {
            return Ok(Some((
                number,
                "a record follows the file's rotation end record".to_string(),
            )));
        }
        if number == 1
            && first
            && let Some(Rotation::Start(named)) = &record.rotation
        {
            return Ok(Some((
                number,
                format!(
                    "the chain starts mid-way: this file continues '{named}', which is missing \
                     (rotated files were removed or renamed)"
                ),
            )));
        }
        // A writer found the log replaced under it and said so in the file it went on in:
        // the records it had written before are not in this chain.
        if let Some(found) = &record.replaced
            && (record.seq != walk.expected_seq || record.prev != walk.prev_hash)
        {
            return Ok(Some((
                number,
                format!(
                    "the log was {found} while a server wrote it (this record says so); the \
                     records before it, up to seq {}, are not in this chain",
                    record.seq.saturating_sub(1)
                ),
            )));
        }
        if record.seq != walk.expected_seq {
            let reason = seq_problem(&mut reader, number, walk.expected_seq, record.seq)?;
            return Ok(Some((number, reason)));
        }
        if record.prev != walk.prev_hash {
            let reason = if walk.expected_seq == 1 {
                "the first record's prev is not the genesis value (records before it were removed)"
                    .to_string()
            } else if number == 1 {
                "chain broken: prev does not match the hash of the previous file's last record"
                    .to_string()
            } else {
                format!(
                    "chain broken: prev does not match the hash of line {}",
                    number - 1
                )
            };
            return Ok(Some((number, reason)));
        }
        if let Some(broken) = check_checkpoint(walk, &record) {
            return Ok(Some((number, broken)));
        }
        if let Some(Rotation::End(name)) = &record.rotation {
            ended = Some(name.clone());
        }
        walk.prev_hash = record.hash;
        walk.expected_seq += 1;
    }
    if rotated {
        match ended {
            Some(name) if name == own_name => {}
            Some(name) => {
                return Ok(Some((
                    number,
                    format!("the rotation end record names '{name}', not this file (renamed?)"),
                )));
            }
            None => {
                return Ok(Some((
                    number + 1,
                    "cut-off tail: a rotated file must end with its rotation end record \
                     (records were cut from its end)"
                        .to_string(),
                )));
            }
        }
    }
    Ok(None)
}

/// With a key: a checkpoint record must verify and name the chain right before it; any
/// other record must not come later than the last valid checkpoint's interval allows.
fn check_checkpoint(walk: &mut Walk<'_>, record: &super::record::CheckedRecord) -> Option<String> {
    let key = walk.key?;
    let Some(members) = &record.checkpoint else {
        // A writer signs within `every` + 3 records (a rotation's two records may pass the
        // multiple it waits for); one killed before it signed leaves a few more, which the
        // next writer's opening checkpoint (after its own rotation, maybe) covers.
        let every = walk.every?;
        let due = walk
            .coverage
            .covered
            .saturating_add(every)
            .saturating_add(5);
        return (record.seq > due).then(|| {
            format!(
                "no checkpoint from seq {} to this record (seq {}): the last one, over {} \
                 records, said one follows every {every} records (checkpoints were removed)",
                walk.coverage.covered + 1,
                record.seq,
                walk.coverage.covered
            )
        });
    };
    let signed = match verify_note(&members.note, key) {
        Ok(signed) => signed,
        Err(why) => return Some(format!("checkpoint does not verify: {why}")),
    };
    // The plain members are what a reader sees first: they must say what the note says,
    // and nothing may stand beside them unsigned.
    if !members.exact {
        return Some(
            "checkpoint record holds more than its chain fields and its checkpoint: whatever \
             was added beside the note is not signed"
                .to_string(),
        );
    }
    if members.size != Some(signed.size)
        || members.head.as_deref() != Some(signed.head.as_str())
        || members.every != Some(signed.every)
        || members.ts != signed.time
    {
        return Some(
            "checkpoint's size, head, every or ts differ from what its signed note says"
                .to_string(),
        );
    }
    if signed.size + 1 != record.seq || signed.head != record.prev {
        return Some(format!(
            "checkpoint signed over {} records with head {}, but here the chain has {} records \
             with head {}: records before it were changed and the chain recomputed",
            signed.size,
            signed.head,
            record.seq - 1,
            record.prev
        ));
    }
    walk.coverage.checkpoints += 1;
    // The records it names, and itself: its note is the signed statement.
    walk.coverage.covered = record.seq;
    walk.every = Some(signed.every);
    None
}

/// Explain a `seq` that is not the expected one at line `number`: a later line holding the
/// expected `seq` means records were reordered; none means records were deleted. The later
/// lines are the rest of `rest`, the reader the file was verified through (the same handle and
/// length, not the path again: during a rotation the path may name the next file already).
fn seq_problem(
    rest: &mut impl BufRead,
    number: u64,
    expected: u64,
    found: u64,
) -> Result<String, std::io::Error> {
    if found < expected {
        return Ok(format!(
            "records out of order: expected seq {expected}, found seq {found} (reordered or duplicated)"
        ));
    }
    let mut line = Vec::new();
    let mut at = number;
    loop {
        line.clear();
        if rest.read_until(b'\n', &mut line)? == 0 {
            break;
        }
        at += 1;
        if let Ok(Value::Object(map)) = serde_json::from_slice::<Value>(&line)
            && map.get("seq").and_then(Value::as_u64) == Some(expected)
        {
            return Ok(format!(
                "records out of order: expected seq {expected}, found seq {found}; seq {expected} is at line {at}"
            ));
        }
    }
    let missing = if found - expected == 1 {
        format!("seq {expected} is missing")
    } else {
        format!("seqs {expected}..{} are missing", found - 1)
    };
    Ok(format!(
        "record deleted: expected seq {expected}, found seq {found} ({missing})"
    ))
}
