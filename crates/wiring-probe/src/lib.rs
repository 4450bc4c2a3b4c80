//! Proof of the wiring crates' lint list: every item of `crates/wiring.clippy.toml`, used
//! once, one per line, the item named in the line's comment. `scripts/wiring-lints.sh`
//! runs clippy here (with the same list: `clippy.toml` links to it) and fails unless every
//! marked line is flagged and every listed item has a line. Never built into anything.

#![allow(clippy::let_underscore_future, dead_code, deprecated, unused_must_use)]

/// Each marked line uses one item a server crate may not.
pub fn every_forbidden_item(
    path: &std::path::Path,
    permissions: std::fs::Permissions, // (a value for set_permissions)
) {
    let _ = std::fs::canonicalize("a"); // std::fs::canonicalize
    let _ = std::fs::copy("a", "b"); // std::fs::copy
    let _ = std::fs::create_dir("a"); // std::fs::create_dir
    let _ = std::fs::create_dir_all("a"); // std::fs::create_dir_all
    let _ = std::fs::exists("a"); // std::fs::exists
    let _ = std::fs::hard_link("a", "b"); // std::fs::hard_link
    let _ = std::fs::metadata("a"); // std::fs::metadata
    let _ = std::fs::read("a"); // std::fs::read
    let _ = std::fs::read_dir("a"); // std::fs::read_dir
    let _ = std::fs::read_link("a"); // std::fs::read_link
    let _ = std::fs::read_to_string("a"); // std::fs::read_to_string
    let _ = std::fs::remove_dir("a"); // std::fs::remove_dir
    let _ = std::fs::remove_dir_all("a"); // std::fs::remove_dir_all
    let _ = std::fs::remove_file("a"); // std::fs::remove_file
    let _ = std::fs::rename("a", "b"); // std::fs::rename
    let _ = std::fs::set_permissions("a", permissions.clone()); // std::fs::set_permissions
    let _ = std::fs::soft_link("a", "b"); // std::fs::soft_link
    let _ = std::fs::symlink_metadata("a"); // std::fs::symlink_metadata
    let _ = std::fs::write("a", "b"); // std::fs::write
    let _ = std::os::unix::fs::chown("a", None, None); // std::os::unix::fs::chown
    let _ = std::os::unix::fs::fchown(std::io::stdin(), None, None); // std::os::unix::fs::fchown
    let _ = std::os::unix::fs::lchown("a", None, None); // std::os::unix::fs::lchown
    let _ = std::os::unix::fs::chroot("a"); // std::os::unix::fs::chroot
    let _ = std::os::unix::fs::symlink("a", "b"); // std::os::unix::fs::symlink
    let _ = path.canonicalize(); // std::path::Path::canonicalize
    let _ = path.exists(); // std::path::Path::exists
    let _ = path.is_dir(); // std::path::Path::is_dir
    let _ = path.is_file(); // std::path::Path::is_file
    let _ = path.is_symlink(); // std::path::Path::is_symlink
    let _ = path.metadata(); // std::path::Path::metadata
    let _ = path.read_dir(); // std::path::Path::read_dir
    let _ = path.read_link(); // std::path::Path::read_link
    let _ = path.symlink_metadata(); // std::path::Path::symlink_metadata
    let _ = path.try_exists(); // std::path::Path::try_exists
    let _ = std::env::set_current_dir("a"); // std::env::set_current_dir
    let _ = tokio::fs::canonicalize("a"); // tokio::fs::canonicalize
    let _ = tokio::fs::copy("a", "b"); // tokio::fs::copy
    let _ = tokio::fs::create_dir("a"); // tokio::fs::create_dir
    let _ = tokio::fs::create_dir_all("a"); // tokio::fs::create_dir_all
    let _ = tokio::fs::hard_link("a", "b"); // tokio::fs::hard_link
    let _ = tokio::fs::metadata("a"); // tokio::fs::metadata
    let _ = tokio::fs::read("a"); // tokio::fs::read
    let _ = tokio::fs::read_dir("a"); // tokio::fs::read_dir
    let _ = tokio::fs::read_link("a"); // tokio::fs::read_link
    let _ = tokio::fs::read_to_string("a"); // tokio::fs::read_to_string
    let _ = tokio::fs::remove_dir("a"); // tokio::fs::remove_dir
    let _ = tokio::fs::remove_dir_all("a"); // tokio::fs::remove_dir_all
    let _ = tokio::fs::remove_file("a"); // tokio::fs::remove_file
    let _ = tokio::fs::rename("a", "b"); // tokio::fs::rename
    let _ = tokio::fs::set_permissions("a", permissions); // tokio::fs::set_permissions
    let _ = tokio::fs::symlink("a", "b"); // tokio::fs::symlink
    let _ = tokio::fs::symlink_metadata("a"); // tokio::fs::symlink_metadata
    let _ = tokio::fs::try_exists("a"); // tokio::fs::try_exists
    let _ = tokio::fs::write("a", "b"); // tokio::fs::write
    let _ = tokio::net::lookup_host("localhost:1"); // tokio::net::lookup_host
    let _: Option<std::fs::DirBuilder> = None; // std::fs::DirBuilder
    let _: Option<std::fs::DirEntry> = None; // std::fs::DirEntry
    let _: Option<std::fs::File> = None; // std::fs::File
    let _: Option<std::fs::FileTimes> = None; // std::fs::FileTimes
    let _: Option<std::fs::FileType> = None; // std::fs::FileType
    let _: Option<std::fs::Metadata> = None; // std::fs::Metadata
    let _: Option<std::fs::OpenOptions> = None; // std::fs::OpenOptions
    let _: Option<std::fs::Permissions> = None; // std::fs::Permissions
    let _: Option<std::fs::ReadDir> = None; // std::fs::ReadDir
    let _: Option<std::fs::TryLockError> = None; // std::fs::TryLockError
    fn _bound10<T: std::os::unix::fs::DirBuilderExt>() {} // std::os::unix::fs::DirBuilderExt
    fn _bound11<T: std::os::unix::fs::DirEntryExt>() {} // std::os::unix::fs::DirEntryExt
    fn _bound12<T: std::os::unix::fs::FileExt>() {} // std::os::unix::fs::FileExt
    fn _bound13<T: std::os::unix::fs::FileTypeExt>() {} // std::os::unix::fs::FileTypeExt
    fn _bound14<T: std::os::unix::fs::MetadataExt>() {} // std::os::unix::fs::MetadataExt
    fn _bound15<T: std::os::unix::fs::OpenOptionsExt>() {} // std::os::unix::fs::OpenOptionsExt
    fn _bound16<T: std::os::unix::fs::PermissionsExt>() {} // std::os::unix::fs::PermissionsExt
    let _: Option<std::process::Child> = None; // std::process::Child
    let _: Option<std::process::ChildStderr> = None; // std::process::ChildStderr
    let _: Option<std::process::ChildStdin> = None; // std::process::ChildStdin
    let _: Option<std::process::ChildStdout> = None; // std::process::ChildStdout
    let _: Option<std::process::Command> = None; // std::process::Command
    let _: Option<std::process::Stdio> = None; // std::process::Stdio
    fn _bound23<T: std::os::unix::process::CommandExt>() {} // std::os::unix::process::CommandExt
    let _: Option<std::os::unix::net::Incoming> = None; // std::os::unix::net::Incoming
    let _: Option<std::os::unix::net::SocketAddr> = None; // std::os::unix::net::SocketAddr
    let _: Option<std::os::unix::net::UnixDatagram> = None; // std::os::unix::net::UnixDatagram
    let _: Option<std::os::unix::net::UnixListener> = None; // std::os::unix::net::UnixListener
    let _: Option<std::os::unix::net::UnixStream> = None; // std::os::unix::net::UnixStream
    let _: Option<std::net::Incoming> = None; // std::net::Incoming
    let _: Option<std::net::TcpListener> = None; // std::net::TcpListener
    let _: Option<std::net::TcpStream> = None; // std::net::TcpStream
    fn _bound32<T: std::net::ToSocketAddrs>() {} // std::net::ToSocketAddrs
    let _: Option<std::net::UdpSocket> = None; // std::net::UdpSocket
    let _: Option<tokio::fs::DirBuilder> = None; // tokio::fs::DirBuilder
    let _: Option<tokio::fs::DirEntry> = None; // tokio::fs::DirEntry
    let _: Option<tokio::fs::File> = None; // tokio::fs::File
    let _: Option<tokio::fs::OpenOptions> = None; // tokio::fs::OpenOptions
    let _: Option<tokio::fs::ReadDir> = None; // tokio::fs::ReadDir
    let _: Option<tokio::process::Child> = None; // tokio::process::Child
    let _: Option<tokio::process::ChildStderr> = None; // tokio::process::ChildStderr
    let _: Option<tokio::process::ChildStdin> = None; // tokio::process::ChildStdin
    let _: Option<tokio::process::ChildStdout> = None; // tokio::process::ChildStdout
    let _: Option<tokio::process::Command> = None; // tokio::process::Command
    let _: Option<tokio::net::TcpListener> = None; // tokio::net::TcpListener
    let _: Option<tokio::net::TcpSocket> = None; // tokio::net::TcpSocket
    let _: Option<tokio::net::TcpStream> = None; // tokio::net::TcpStream
    let _: Option<tokio::net::UdpSocket> = None; // tokio::net::UdpSocket
    let _: Option<tokio::net::UnixDatagram> = None; // tokio::net::UnixDatagram
    let _: Option<tokio::net::UnixListener> = None; // tokio::net::UnixListener
    let _: Option<tokio::net::UnixSocket> = None; // tokio::net::UnixSocket
    let _: Option<tokio::net::UnixStream> = None; // tokio::net::UnixStream
    let _: Option<tokio::net::unix::pipe::OpenOptions> = None; // tokio::net::unix::pipe::OpenOptions
    let _: Option<tokio::net::unix::pipe::Receiver> = None; // tokio::net::unix::pipe::Receiver
    let _: Option<tokio::net::unix::pipe::Sender> = None; // tokio::net::unix::pipe::Sender
}
