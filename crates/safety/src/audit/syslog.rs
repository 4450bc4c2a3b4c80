//! Every record also to syslog (`[audit.syslog]`): RFC 5424 over a Unix datagram socket, UDP,
//! or TCP with octet-counting framing (RFC 6587), so a fleet's central rsyslog holds a copy.
//!
//! ```text
//! <PRI>1 <ts> <host> safe-mcp <pid> audit [safe-mcp@32473 seq="12" hash="<hex>"] <the JSON line>
//! ```
//!
//! `PRI` is the facility's code times 8 plus 6 (informational), 5 (notice) for a checkpoint,
//! whose `MSGID` is `checkpoint`; `32473` is the enterprise number RFC 5612 sets aside for
//! examples. The local log is the source of truth: a record is shipped after its line is
//! written, and a failure to ship loses nothing locally (see `AuditLog::ship`).

use std::io::Write;
use std::net::{SocketAddr, TcpStream, UdpSocket};
use std::os::unix::net::UnixDatagram;
use std::path::PathBuf;
use std::time::Duration;

use crate::config::{SyslogSettings, SyslogTransport, syslog_address, syslog_facility};

/// How long a connect or a send may take before the record counts as not shipped: a syslog
/// daemon that hangs must not hold up the server's calls for long.
const SEND_TIMEOUT: Duration = Duration::from_secs(1);

/// Where records go, and the open connection.
#[derive(Debug)]
pub(crate) struct Shipper {
    target: Target,
    facility: u8,
    host: String,
    pid: u32,
    conn: Option<Conn>,
}

#[derive(Debug, Clone)]
enum Target {
    Unix(PathBuf),
    Udp(SocketAddr),
    Tcp(SocketAddr),
}

#[derive(Debug)]
enum Conn {
    Unix(UnixDatagram),
    Udp(UdpSocket),
    Tcp(TcpStream),
}

impl Shipper {
    /// A shipper for validated `settings` (the address parsed by the policy check).
    pub(crate) fn new(settings: &SyslogSettings) -> Result<Shipper, String> {
        let target = match settings.transport {
            SyslogTransport::Unix => Target::Unix(PathBuf::from(&settings.address)),
            SyslogTransport::Udp => Target::Udp(syslog_address(&settings.address)?),
            SyslogTransport::Tcp => Target::Tcp(syslog_address(&settings.address)?),
        };
        // The kernel's host name (the product is Linux-only); RFC 5424's nil value if unreadable.
        let host: String = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .unwrap_or_default()
            .trim()
            .chars()
            .filter(|c| c.is_ascii_graphic())
            .collect();
        Ok(Shipper {
            target,
            facility: syslog_facility(&settings.facility)?,
            host: if host.is_empty() { "-".into() } else { host },
            pid: std::process::id(),
            conn: None,
        })
    }

    /// Send one record's line (no newline): connecting if need be, and once more on a fresh
    /// connection when the one kept failed (the daemon restarted). `Err` says why.
    pub(crate) fn ship(
        &mut self,
        line: &[u8],
        seq: u64,
        hash: &str,
        ts: &str,
        checkpoint: bool,
    ) -> Result<(), String> {
        let message = message(
            self.facility,
            checkpoint,
            ts,
            &self.host,
            self.pid,
            seq,
            hash,
            line,
        );
        let first = self.send(&message);
        if first.is_ok() {
            return first;
        }
        self.conn = None;
        self.send(&message)
            .map_err(|e| format!("{}: {e}", self.describe()))
    }

    fn describe(&self) -> String {
        match &self.target {
            Target::Unix(path) => format!("unix socket {}", path.display()),
            Target::Udp(addr) => format!("udp {addr}"),
            Target::Tcp(addr) => format!("tcp {addr}"),
        }
    }

    fn send(&mut self, message: &[u8]) -> Result<(), String> {
        if self.conn.is_none() {
            self.conn = Some(self.connect().map_err(|e| e.to_string())?);
        }
        let result = match (&mut self.conn, &self.target) {
            (Some(Conn::Unix(socket)), Target::Unix(path)) => {
                socket.send_to(message, path).map(|_| ())
            }
            (Some(Conn::Udp(socket)), _) => socket.send(message).map(|_| ()),
            (Some(Conn::Tcp(stream)), _) => {
                // RFC 6587 octet counting: the length, a space, the message.
                let mut framed = format!("{} ", message.len()).into_bytes();
                framed.extend_from_slice(message);
                stream.write_all(&framed)
            }
            _ => Err(std::io::Error::other("no connection")),
        };
        result.map_err(|e| e.to_string())
    }

    fn connect(&self) -> std::io::Result<Conn> {
        match &self.target {
            Target::Unix(_) => {
                let socket = UnixDatagram::unbound()?;
                socket.set_write_timeout(Some(SEND_TIMEOUT))?;
                Ok(Conn::Unix(socket))
            }
            Target::Udp(addr) => {
                let local: SocketAddr = match addr {
                    SocketAddr::V4(_) => ([0, 0, 0, 0], 0).into(),
                    SocketAddr::V6(_) => (std::net::Ipv6Addr::UNSPECIFIED, 0).into(),
                };
                let socket = UdpSocket::bind(local)?;
                socket.connect(addr)?;
                Ok(Conn::Udp(socket))
            }
            Target::Tcp(addr) => {
                let stream = TcpStream::connect_timeout(addr, SEND_TIMEOUT)?;
                stream.set_write_timeout(Some(SEND_TIMEOUT))?;
                stream.set_nodelay(true)?;
                Ok(Conn::Tcp(stream))
            }
        }
    }
}

/// One RFC 5424 message. `ts` is the record's own (RFC 3339, UTC); the structured data holds
/// its `seq` and `hash` (hex: nothing in them needs escaping).
#[allow(
    clippy::too_many_arguments,
    reason = "the fields of one message, each named where it is built"
)]
fn message(
    facility: u8,
    checkpoint: bool,
    ts: &str,
    host: &str,
    pid: u32,
    seq: u64,
    hash: &str,
    line: &[u8],
) -> Vec<u8> {
    let (severity, msgid) = if checkpoint {
        (5, "checkpoint")
    } else {
        (6, "audit")
    };
    let pri = u16::from(facility) * 8 + severity;
    let mut out = format!(
        "<{pri}>1 {ts} {host} safe-mcp {pid} {msgid} [safe-mcp@32473 seq=\"{seq}\" hash=\"{hash}\"] "
    )
    .into_bytes();
    out.extend_from_slice(line);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_is_one_rfc_5424_message_with_its_seq_and_hash() {
        let m = message(
            16,
            false,
            "2026-12-04T00:00:00.000001Z",
            "host-1",
            42,
            7,
            "ab",
            b"{\"a\":1}",
        );
        assert_eq!(
            String::from_utf8(m).unwrap(),
            "<134>1 2026-12-04T00:00:00.000001Z host-1 safe-mcp 42 audit [safe-mcp@32473 seq=\"7\" hash=\"ab\"] {\"a\":1}"
        );
        let c = message(4, true, "t", "h", 1, 8, "cd", b"{}");
        assert!(
            String::from_utf8(c)
                .unwrap()
                .starts_with("<37>1 t h safe-mcp 1 checkpoint ")
        );
    }
}
