//! The log's file as the file system sees it: opened for appending (mode 0600), locked with
//! `flock` for one append, compared with what a path names, and its folder synced so a
//! `rename` or a new file in it is durable.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::Path;
use std::sync::Arc;

/// Releases the `flock` when an append ends, however it ends (a panic included).
pub(super) struct FileLock(Arc<File>);

impl Drop for FileLock {
    fn drop(&mut self) {
        let _ = self.0.unlock();
    }
}

pub(super) fn lock(file: &Arc<File>) -> std::io::Result<FileLock> {
    file.lock()?;
    Ok(FileLock(file.clone()))
}

/// `fsync` the folder that holds `path`: a `rename` or a file created in it is durable.
pub(super) fn sync_dir(path: &Path) -> std::io::Result<()> {
    File::open(parent_dir(path))?.sync_all()
}

pub(super) fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// True when `path` names the file `file` is open on.
pub(super) fn same_file(file: &File, path: &Path) -> std::io::Result<bool> {
    let open = file.metadata()?;
    match std::fs::metadata(path) {
        Ok(named) => Ok(open.dev() == named.dev() && open.ino() == named.ino()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e),
    }
}

/// The log opened for reading and appending (`create`: made with mode 0600 if missing).
pub(super) fn open_append(path: &Path, create: bool) -> std::io::Result<File> {
    OpenOptions::new()
        .read(true)
        .append(true)
        .create(create)
        .mode(0o600)
        .open(path)
}
