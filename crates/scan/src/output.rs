//! `--output FILE`: writing the report without following a link and without replacing a
//! scanned file.
//!
//! A scanned repository may hold `scan-report.txt -> ../../home/.bashrc`: a plain
//! `std::fs::write` follows the link (even a dangling one) and appends nothing less than a line
//! of the attacker's choosing to the target. So the report is written to a fresh file created
//! with `O_CREAT | O_EXCL | O_NOFOLLOW` in the destination's folder and renamed over the name;
//! a rename replaces a directory entry and never writes through a link. An existing link or
//! non-regular file at the name is refused, and so is a name that is one of the files the scan
//! read (`--output src/a.js` used to replace the source), compared by device and inode, or a
//! source file name inside the scanned folder.

use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use rustix::fs::{AtFlags, FileType, Mode, OFlags};

use crate::discover::language_of;
use crate::error::ScanError;
use crate::report::{FileIdentity, ScanReport};

/// Write `contents` to `path` as described in the module comment. `root` is the scanned path.
pub(crate) fn write_report(
    path: &Path,
    contents: &[u8],
    report: &ScanReport,
    root: &Path,
) -> Result<(), ScanError> {
    let refuse = |reason: String| ScanError::OutputRefused {
        path: path.to_path_buf(),
        reason,
    };
    let io_error = |source: std::io::Error| ScanError::Output {
        path: path.to_path_buf(),
        source,
    };
    let Some(name) = path.file_name() else {
        return Err(refuse("it does not end in a file name".to_string()));
    };
    let folder = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    refuse_existing(path, report).map_err(refuse)?;
    if language_of(path).is_some() && inside_scanned_folder(folder, root) {
        return Err(refuse(
            "it names a source file inside the scanned tree".to_string(),
        ));
    }

    let directory = rustix::fs::open(
        folder,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|errno| io_error(errno.into()))?;
    let (temporary_name, file) = create_temporary(&directory, name.as_bytes()).map_err(io_error)?;
    let written = write_and_rename(
        &directory,
        &temporary_name,
        name.as_bytes(),
        file,
        contents,
        report,
    );
    if written.is_err() {
        let _ = rustix::fs::unlinkat(&directory, temporary_name.as_slice(), AtFlags::empty());
    }
    match written {
        Ok(()) => Ok(()),
        Err(Refusal::Refused(reason)) => Err(refuse(reason)),
        Err(Refusal::Io(source)) => Err(io_error(source)),
    }
}

enum Refusal {
    Refused(String),
    Io(std::io::Error),
}

impl From<rustix::io::Errno> for Refusal {
    fn from(errno: rustix::io::Errno) -> Self {
        Refusal::Io(errno.into())
    }
}

impl From<std::io::Error> for Refusal {
    fn from(error: std::io::Error) -> Self {
        Refusal::Io(error)
    }
}

/// What is at the name now, without following it: nothing, or a regular file the scan did not
/// read.
fn check_entry(stat: &rustix::fs::Stat, report: &ScanReport) -> Result<(), String> {
    let file_type = FileType::from_raw_mode(stat.st_mode);
    if file_type == FileType::Symlink {
        return Err("it is a symbolic link (never followed)".to_string());
    }
    if file_type != FileType::RegularFile {
        return Err(format!(
            "it is a {}, not a regular file",
            describe(file_type)
        ));
    }
    let identity = FileIdentity {
        device: stat.st_dev,
        inode: stat.st_ino,
    };
    if report.read_files.contains(&identity) {
        return Err("it is one of the files this scan read".to_string());
    }
    Ok(())
}

fn describe(file_type: FileType) -> &'static str {
    match file_type {
        FileType::Directory => "folder",
        FileType::Fifo => "FIFO",
        FileType::Socket => "socket",
        FileType::CharacterDevice => "character device",
        FileType::BlockDevice => "block device",
        _ => "special file",
    }
}

fn refuse_existing(path: &Path, report: &ScanReport) -> Result<(), String> {
    match rustix::fs::lstat(path) {
        Ok(stat) => check_entry(&stat, report),
        Err(rustix::io::Errno::NOENT) => Ok(()),
        Err(errno) => Err(format!(
            "cannot inspect it: {}",
            std::io::Error::from(errno)
        )),
    }
}

/// Whether `folder` (where the report would go) is the scanned folder or below it.
fn inside_scanned_folder(folder: &Path, root: &Path) -> bool {
    let Ok(root) = std::fs::canonicalize(root) else {
        return false;
    };
    if !root.is_dir() {
        return false;
    }
    std::fs::canonicalize(folder).is_ok_and(|folder| folder.starts_with(&root))
}

/// A new file beside the destination, created exclusively and never through a link.
fn create_temporary(
    directory: &rustix::fd::OwnedFd,
    name: &[u8],
) -> std::io::Result<(Vec<u8>, std::fs::File)> {
    let mut attempt = 0u32;
    loop {
        let mut temporary = b".".to_vec();
        temporary.extend_from_slice(name);
        temporary.extend_from_slice(format!(".{}.{attempt}.tmp", std::process::id()).as_bytes());
        match rustix::fs::openat(
            directory,
            temporary.as_slice(),
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_raw_mode(0o644),
        ) {
            Ok(fd) => return Ok((temporary, std::fs::File::from(fd))),
            Err(rustix::io::Errno::EXIST) if attempt < 100 => attempt += 1,
            Err(errno) => return Err(errno.into()),
        }
    }
}

fn write_and_rename(
    directory: &rustix::fd::OwnedFd,
    temporary: &[u8],
    name: &[u8],
    mut file: std::fs::File,
    contents: &[u8],
    report: &ScanReport,
) -> Result<(), Refusal> {
    file.write_all(contents)?;
    file.sync_all()?;
    // Checked again just before the rename: a link put in place meanwhile is refused (and even
    // unchecked, the rename would replace the link, not write through it).
    match rustix::fs::statat(directory, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(stat) => {
            check_entry(&stat, report).map_err(Refusal::Refused)?;
            // Keep the permissions of the report being replaced.
            rustix::fs::fchmod(&file, Mode::from_raw_mode(stat.st_mode & 0o777))?;
        }
        Err(rustix::io::Errno::NOENT) => {}
        Err(errno) => return Err(errno.into()),
    }
    drop(file);
    rustix::fs::renameat(directory, temporary, directory, name)?;
    Ok(())
}
