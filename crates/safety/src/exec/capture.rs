//! Bounded capture of a command's stdout and stderr while it runs: the first and the last
//! bytes of each stream and its total (redaction and truncation come later, on exactly
//! these bytes), with a threshold past which the supervisor kills an endless writer
//! (`yes`). After the command ended, the pipes are drained with a deadline, so a
//! grandchild that holds one open cannot hang the call.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::net::unix::pipe;
use tokio::sync::Notify;

use sha2::{Digest, Sha256};

use crate::redact::{CAPTURE_MARGIN, Captured};

/// How long pipes are drained after the command ended or was killed.
pub const DRAIN_DEADLINE: Duration = Duration::from_millis(500);

/// Bounded capture of one stream: head, a ring-buffered tail, the total, and (when asked)
/// the SHA-256 of every byte read.
#[derive(Debug, Default)]
struct CaptureBuffer {
    head: Vec<u8>,
    tail: std::collections::VecDeque<u8>,
    total: u64,
    keep: usize,
    hasher: Option<Sha256>,
}

impl CaptureBuffer {
    fn new(cap: usize, hash: bool) -> Self {
        CaptureBuffer {
            keep: cap.saturating_add(CAPTURE_MARGIN),
            hasher: hash.then(Sha256::new),
            ..Default::default()
        }
    }

    fn push(&mut self, mut bytes: &[u8]) {
        self.total = self.total.saturating_add(bytes.len() as u64);
        if let Some(hasher) = &mut self.hasher {
            hasher.update(bytes);
        }
        let room = self.keep.saturating_sub(self.head.len());
        if room > 0 {
            let take = room.min(bytes.len());
            let (now, rest) = bytes.split_at(take);
            self.head.extend_from_slice(now);
            bytes = rest;
        }
        if bytes.is_empty() {
            return;
        }
        if bytes.len() >= self.keep {
            self.tail.clear();
            let start = bytes.len() - self.keep;
            self.tail.extend(bytes.get(start..).unwrap_or_default());
        } else {
            let overflow = (self.tail.len() + bytes.len()).saturating_sub(self.keep);
            self.tail.drain(..overflow.min(self.tail.len()));
            self.tail.extend(bytes);
        }
    }

    fn finish(self) -> (Captured, Option<[u8; 32]>) {
        let hash = self.hasher.map(|h| h.finalize().into());
        let captured = Captured {
            head: self.head,
            tail: self.tail.into_iter().collect(),
            total: self.total,
        };
        (captured, hash)
    }
}

/// One stream after the drain: what was kept of it, its SHA-256 (when asked for), and
/// whether the drain gave up on it.
#[derive(Debug, Default)]
pub(super) struct Drained {
    pub(super) captured: Captured,
    pub(super) sha256: Option<[u8; 32]>,
    pub(super) abandoned: bool,
}

type SharedBuffer = Arc<std::sync::Mutex<CaptureBuffer>>;

/// Raised by a reader whose stream passed the kill threshold; the supervisor waits on it.
pub(super) type Overflow = Arc<(AtomicBool, Notify)>;

/// One stream being read: the reading task and what it has collected.
pub(super) struct Reader {
    task: tokio::task::JoinHandle<()>,
    buffer: SharedBuffer,
}

/// Start reading `stream`, keeping `cap` bytes (and the redaction margin) of its head and of
/// its tail, and hashing every byte when `hash`; past `kill_at` bytes in all, `overflow` is
/// raised and reading stops.
pub(super) fn start_reading(
    stream: pipe::Receiver,
    cap: usize,
    kill_at: u64,
    overflow: &Overflow,
    hash: bool,
) -> Reader {
    let buffer: SharedBuffer = Arc::new(std::sync::Mutex::new(CaptureBuffer::new(cap, hash)));
    Reader {
        task: tokio::spawn(read_stream(
            stream,
            buffer.clone(),
            kill_at,
            overflow.clone(),
        )),
        buffer,
    }
}

async fn read_stream<R: AsyncRead + Unpin>(
    mut reader: R,
    buffer: SharedBuffer,
    kill_at: u64,
    overflow: Overflow,
) {
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        match reader.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let total = match buffer.lock() {
                    Ok(mut b) => {
                        b.push(chunk.get(..n).unwrap_or_default());
                        b.total
                    }
                    Err(_) => break,
                };
                if total > kill_at {
                    overflow.0.store(true, Ordering::SeqCst);
                    overflow.1.notify_one();
                    break;
                }
            }
        }
    }
}

/// Collect a reader task, giving up after [`DRAIN_DEADLINE`]: a grandchild that left the group
/// (`setsid sleep 1000 &`) may hold the pipe open forever.
/// Whatever was read before the deadline is kept.
pub(super) async fn drain(reader: Option<Reader>) -> Drained {
    let Some(Reader {
        task: mut handle,
        buffer,
    }) = reader
    else {
        return Drained::default();
    };
    let abandoned = match tokio::time::timeout(DRAIN_DEADLINE, &mut handle).await {
        Ok(_) => false,
        Err(_) => {
            handle.abort();
            true
        }
    };
    let (captured, sha256) = match buffer.lock() {
        Ok(mut b) => std::mem::take(&mut *b).finish(),
        Err(_) => (Captured::default(), None),
    };
    Drained {
        captured,
        sha256,
        abandoned,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capture_keeps_head_and_tail() {
        let mut b = CaptureBuffer::new(4, true);
        let keep = 4 + CAPTURE_MARGIN;
        let data: Vec<u8> = (0..(keep * 3)).map(|i| (i % 251) as u8).collect();
        for chunk in data.chunks(1000) {
            b.push(chunk);
        }
        let (c, hash) = b.finish();
        // The hash covers every byte, also the middle that was not kept.
        assert_eq!(hash, Some(<[u8; 32]>::from(Sha256::digest(&data))));
        assert_eq!(c.total, data.len() as u64);
        assert_eq!(c.head, data[..keep]);
        assert_eq!(c.tail, data[data.len() - keep..]);
    }

    #[test]
    fn capture_of_short_output_is_all_head() {
        let mut b = CaptureBuffer::new(100, false);
        b.push(b"hello");
        let (c, hash) = b.finish();
        assert_eq!(hash, None, "no hash unless asked for");
        assert_eq!(c.head, b"hello");
        assert!(c.tail.is_empty());
    }
}
