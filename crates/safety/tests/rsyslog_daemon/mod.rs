//! A real rsyslogd (Debian's package) for tests: started unprivileged in a temporary folder
//! on a Unix datagram socket (`log.sock`) and loopback TCP and UDP ports, writing what it
//! receives to `out.log` as `%msgid% %structured-data% %msg%` and, as a fleet's central
//! rsyslog would keep it, the bare records to `copy.jsonl`; killed when dropped. Shared by
//! the safety core's syslog tests and the HTTP load test of the binary.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// The lines of a file (none when it does not exist).
pub fn lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .map(|t| t.lines().map(str::to_string).collect())
        .unwrap_or_default()
}

/// A running rsyslogd writing what it receives to `out.log`: `%msgid% %structured-data% %msg%`.
pub struct Rsyslog {
    dir: PathBuf,
    child: Child,
    pub tcp: u16,
    pub udp: u16,
}

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl Rsyslog {
    /// Start rsyslogd in `dir` (`None`, and a note, where it is not installed, unless
    /// `STRICT_SANDBOX_TESTS=1`).
    pub fn start(dir: &Path, ports: Option<(u16, u16)>) -> Option<Rsyslog> {
        let binary = ["/usr/sbin/rsyslogd", "/sbin/rsyslogd"]
            .into_iter()
            .find(|p| Path::new(p).exists());
        let Some(binary) = binary else {
            assert!(
                std::env::var("STRICT_SANDBOX_TESTS").as_deref() != Ok("1"),
                "rsyslogd is not installed (Debian package rsyslog)"
            );
            eprintln!("skipped: rsyslogd is not installed");
            return None;
        };
        let (tcp, udp) = ports.unwrap_or_else(|| (free_port(), free_port()));
        let d = dir.display();
        let conf = dir.join("rsyslog.conf");
        std::fs::write(
            &conf,
            format!(
                "global(workDirectory=\"{d}\" maxMessageSize=\"64k\")\n\
                 module(load=\"imuxsock\" SysSock.Use=\"off\")\n\
                 input(type=\"imuxsock\" Socket=\"{d}/log.sock\" UseSpecialParser=\"off\" ParseHostname=\"on\")\n\
                 module(load=\"imtcp\")\ninput(type=\"imtcp\" port=\"{tcp}\" address=\"127.0.0.1\")\n\
                 module(load=\"imudp\")\ninput(type=\"imudp\" port=\"{udp}\" address=\"127.0.0.1\")\n\
                 template(name=\"fields\" type=\"string\" string=\"%msgid% %structured-data% %msg%\\n\")\n\
                 *.* action(type=\"omfile\" file=\"{d}/out.log\" template=\"fields\")\n\
                 template(name=\"record\" type=\"string\" string=\"%msg%\\n\")\n\
                 *.* action(type=\"omfile\" file=\"{d}/copy.jsonl\" template=\"record\")\n"
            ),
        )
        .unwrap();
        let _ = std::fs::remove_file(dir.join("pid"));
        let child = Command::new(binary)
            .args(["-n", "-f"])
            .arg(&conf)
            .arg("-i")
            .arg(dir.join("pid"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let rsyslog = Rsyslog {
            dir: dir.to_path_buf(),
            child,
            tcp,
            udp,
        };
        // Ready once its socket is there and its TCP port answers (bounded).
        for _ in 0..100 {
            if dir.join("log.sock").exists()
                && std::net::TcpStream::connect(("127.0.0.1", tcp)).is_ok()
            {
                return Some(rsyslog);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("rsyslogd did not start in {}", dir.display());
    }

    pub fn kill(mut self) -> (u16, u16) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        (self.tcp, self.udp)
    }

    /// The lines rsyslogd wrote, once there are at least `n` (bounded wait).
    pub fn received(&self, n: usize) -> Vec<String> {
        let out = self.dir.join("out.log");
        for _ in 0..100 {
            let got = lines(&out);
            if got.len() >= n {
                return got;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        lines(&out)
    }
}

impl Drop for Rsyslog {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
