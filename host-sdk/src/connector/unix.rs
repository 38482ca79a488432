//! Unix transport: `host.sock` over a non-blocking `UnixStream`, readiness waits with
//! `poll(2)` (so a connected, idle app sleeps in the kernel and wakes up zero times).
//!
//! Every connect applies the client-side trust checks of `jfgui_proto::locations`:
//! the socket's directory must pass the daemon's own directory rule before `connect(2)`, and
//! the listener must run as us (or root) before the first byte is written.

use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::Duration;

use jfgui_proto::locations;

/// `host.sock` in the runtime dir (`jfgui_proto::locations::runtime_dir`, the daemon's rule).
pub(crate) fn default_address() -> io::Result<PathBuf> {
    let dir =
        locations::runtime_dir().map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
    Ok(dir.host_socket())
}

/// One connection to the daemon.
#[derive(Debug)]
pub(crate) struct Link {
    stream: UnixStream,
}

impl Link {
    /// Connects without ever blocking the caller (a GUI thread): the socket is non-blocking
    /// before `connect(2)`. A Unix stream connect completes at once or fails: `ENOENT` /
    /// `ECONNREFUSED` when no daemon listens, `EAGAIN` (Linux) or `EINPROGRESS` when the
    /// daemon's accept backlog is full; every failure is retried with backoff. A directory or
    /// a listener that fails the trust checks is an error carrying a
    /// `jfgui_proto::locations::Refusal`; nothing has been written then.
    pub(crate) fn connect(path: &Path) -> io::Result<Link> {
        locations::check_socket_dirs(path)?;
        let stream = connect_nonblocking(path)?;
        locations::check_peer(stream.as_fd(), path)?;
        Ok(Link { stream })
    }

    /// A transport over an already connected stream (tests use `UnixStream::pair`).
    pub(crate) fn from_stream(stream: UnixStream) -> io::Result<Link> {
        stream.set_nonblocking(true)?;
        Ok(Link { stream })
    }

    pub(crate) fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.stream.read(buf)
    }

    pub(crate) fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        self.stream.write(data)
    }

    pub(crate) fn fd(&self) -> BorrowedFd<'_> {
        self.stream.as_fd()
    }

    pub(crate) fn wait(
        &self,
        read: bool,
        write: bool,
        timeout: Option<Duration>,
    ) -> io::Result<()> {
        wait_fd(Some(self.fd()), read, write, timeout).map(|_| ())
    }
}

/// Standard input, unbuffered (a duplicate of fd 0, so no `BufReader` hides bytes from
/// `poll`).
#[derive(Debug)]
pub(crate) struct StdinSource {
    file: File,
}

impl StdinSource {
    pub(crate) fn new() -> io::Result<StdinSource> {
        Ok(StdinSource { file: File::from(io::stdin().as_fd().try_clone_to_owned()?) })
    }

    /// Waits until stdin is readable (true) or `timeout` passes (false).
    pub(crate) fn wait(&mut self, timeout: Option<Duration>) -> io::Result<bool> {
        wait_fd(Some(self.file.as_fd()), true, false, timeout)
    }

    pub(crate) fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.file.read(buf)
    }
}

/// `poll(2)` on one descriptor (or none: a plain sleep) for up to `timeout` (`None`: forever).
/// Returns whether the descriptor became ready. `EINTR` counts as a wake-up without
/// readiness; the caller's loop simply comes round again.
pub(crate) fn wait_fd(
    fd: Option<BorrowedFd<'_>>,
    read: bool,
    write: bool,
    timeout: Option<Duration>,
) -> io::Result<bool> {
    let Some(fd) = fd else {
        std::thread::sleep(timeout.unwrap_or(Duration::from_secs(3600)));
        return Ok(false);
    };
    let mut events = 0;
    if read {
        events |= libc::POLLIN;
    }
    if write {
        events |= libc::POLLOUT;
    }
    let mut pfd = libc::pollfd { fd: fd.as_raw_fd(), events, revents: 0 };
    let ms = match timeout {
        None => -1,
        // Round up so a 0.4 ms deadline does not turn into a busy loop of 0 ms polls.
        Some(t) => i32::try_from(t.as_micros().div_ceil(1000)).unwrap_or(i32::MAX),
    };
    match poll_one(&mut pfd, ms) {
        Ok(n) => Ok(n > 0),
        Err(e) if e.kind() == io::ErrorKind::Interrupted => Ok(false),
        Err(e) => Err(e),
    }
}

/// `socket(2)` + `connect(2)` on a non-blocking, close-on-exec Unix stream socket (std's
/// `UnixStream::connect` blocks while the peer's backlog is full).
#[allow(unsafe_code)]
fn connect_nonblocking(path: &Path) -> io::Result<UnixStream> {
    use std::os::unix::ffi::OsStrExt;

    let bytes = path.as_os_str().as_bytes();
    // SAFETY: sockaddr_un is plain old data, for which all zero bytes is a valid value.
    let mut addr: libc::sockaddr_un = unsafe { std::mem::zeroed() };
    if bytes.is_empty() || bytes.contains(&0) || bytes.len() >= addr.sun_path.len() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "the socket path is empty, contains NUL, or is longer than the platform's sun_path",
        ));
    }
    addr.sun_family = libc::AF_UNIX as libc::sa_family_t;
    for (dst, src) in addr.sun_path.iter_mut().zip(bytes) {
        *dst = *src as libc::c_char;
    }
    let stream = stream_socket()?;
    let len = std::mem::offset_of!(libc::sockaddr_un, sun_path) + bytes.len() + 1;
    // SAFETY: `addr` is a valid, initialised sockaddr_un and `len` does not exceed its size
    // (checked above); the descriptor is open for the duration of the call.
    let r = unsafe {
        libc::connect(
            stream.as_raw_fd(),
            (&raw const addr).cast::<libc::sockaddr>(),
            len as libc::socklen_t,
        )
    };
    if r == 0 { Ok(stream) } else { Err(io::Error::last_os_error()) }
}

/// A new Unix stream socket, non-blocking and close-on-exec from its creation: both flags are
/// part of the `socket(2)` call, so a GUI app that forks and execs on another thread (a
/// browser, a helper tool) never hands the daemon connection to the child, not even in the
/// moment between `socket(2)` and a later `fcntl(2)`. Apple systems have no `SOCK_CLOEXEC`;
/// there the flags follow at once (no atomic form exists on that platform).
#[cfg(any(
    target_os = "linux",
    target_os = "android",
    target_os = "freebsd",
    target_os = "netbsd",
    target_os = "openbsd",
    target_os = "dragonfly",
    target_os = "illumos"
))]
#[allow(unsafe_code)]
fn stream_socket() -> io::Result<UnixStream> {
    let kind = libc::SOCK_STREAM | libc::SOCK_CLOEXEC | libc::SOCK_NONBLOCK;
    // SAFETY: socket(2) takes no pointers; a negative result is an error.
    let raw = unsafe { libc::socket(libc::AF_UNIX, kind, 0) };
    if raw < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `raw` is a fresh descriptor nobody else owns; OwnedFd closes it on every path.
    Ok(UnixStream::from(unsafe { OwnedFd::from_raw_fd(raw) }))
}

/// See the atomic variant above: without `SOCK_CLOEXEC`, the flags are set right after.
#[cfg(not(any(
    target_os = "linux",
    target_os = "android",
    target_os = "freebsd",
    target_os = "netbsd",
    target_os = "openbsd",
    target_os = "dragonfly",
    target_os = "illumos"
)))]
#[allow(unsafe_code)]
fn stream_socket() -> io::Result<UnixStream> {
    // SAFETY: socket(2) takes no pointers; a negative result is an error.
    let raw = unsafe { libc::socket(libc::AF_UNIX, libc::SOCK_STREAM, 0) };
    if raw < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `raw` is a fresh descriptor nobody else owns; OwnedFd closes it on every path.
    let fd = unsafe { OwnedFd::from_raw_fd(raw) };
    // SAFETY: fcntl(F_SETFD) on a descriptor we own; no pointers.
    if unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_SETFD, libc::FD_CLOEXEC) } < 0 {
        return Err(io::Error::last_os_error());
    }
    let stream = UnixStream::from(fd);
    stream.set_nonblocking(true)?;
    Ok(stream)
}

#[allow(unsafe_code)]
fn poll_one(pfd: &mut libc::pollfd, timeout_ms: i32) -> io::Result<libc::c_int> {
    // SAFETY: `pfd` is one valid, exclusively borrowed pollfd and we pass a count of 1; the fd
    // is borrowed from a live object for the duration of the call.
    let n = unsafe { libc::poll(pfd, 1, timeout_ms) };
    if n < 0 { Err(io::Error::last_os_error()) } else { Ok(n) }
}
