//! Unix-domain listeners: bound relative to the verified runtime dir under umask 077 (no instant
//! where a socket is wider than 0600), stale sockets removed first (sockets only), the peer's uid
//! checked on every accept before a byte is read, and an accept loop that backs off instead of
//! spinning when the process is out of descriptors. The streams it hands out are tokio's.

use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use tokio::net::UnixListener;

use crate::runtime_dir::{DirError, RuntimeDir, remove_stale_socket};

/// An accepted, identity-checked connection.
pub type Stream = tokio::net::UnixStream;

/// Who is on the other end (from `SO_PEERCRED` / `getpeereid`), for logs and the engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Peer {
    /// Effective uid of the peer (always known on Unix).
    pub uid: Option<u32>,
    /// Its pid where the platform reports one.
    pub pid: Option<u32>,
}

/// How long accept pauses after `EMFILE`/`ENFILE`/`ENOBUFS`/`ENOMEM`: the pending connection
/// stays in the backlog and is retried, at most ten times a second (ssh-agent disarms its
/// listener the same way).
const EXHAUSTED_BACKOFF: Duration = Duration::from_millis(100);
/// At most one "another user" line per listener and interval: each attempt is logged unless
/// someone floods, and then the next line counts what was left out.
const REJECTION_LOG_EVERY: Duration = Duration::from_secs(1);
/// At most one "out of descriptors" warning per this interval.
const EXHAUSTED_LOG_EVERY: Duration = Duration::from_secs(10);

/// Sets the process umask to 077, before the runtime dir, lock or any socket is created, so
/// every node we create starts private whatever umask we were started with.
pub fn restrict_umask() {
    set_umask(0o077);
}

/// A socket node gets `0777 & !umask`; binding under 0177 makes it 0600 from its first instant.
/// The daemon creates files from one thread, so flipping the process umask around `bind` is
/// race-free; a child spawned meanwhile would only inherit a stricter mask.
const SOCKET_UMASK: u32 = 0o177;

#[allow(unsafe_code)]
fn set_umask(mask: u32) -> u32 {
    // SAFETY: umask has no preconditions and cannot fail.
    let old = unsafe { libc::umask(mask as libc::mode_t) };
    #[allow(clippy::useless_conversion)] // mode_t is u16 on macOS, u32 on Linux.
    u32::from(old)
}

/// Raises the soft `RLIMIT_NOFILE` to `needed` descriptors (never above the hard limit, never
/// lowering it): login sessions often start daemons with a soft limit of 1024, below what the
/// connection caps allow. Returns the soft limit now in force.
#[allow(unsafe_code)]
#[allow(clippy::unnecessary_cast)] // rlim_t is u64 on Linux and macOS, i64 on FreeBSD.
pub fn raise_fd_limit(needed: u64) -> io::Result<u64> {
    let mut lim = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit writes one rlimit into the valid, exclusively borrowed `lim`.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
        return Err(io::Error::last_os_error());
    }
    let want = needed.min(lim.rlim_max as u64) as libc::rlim_t;
    if lim.rlim_cur >= want {
        return Ok(lim.rlim_cur as u64);
    }
    let new = libc::rlimit { rlim_cur: want, rlim_max: lim.rlim_max };
    // SAFETY: setrlimit only reads the valid `new`.
    if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &new) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(want as u64)
}

/// A listening socket inside the runtime dir.
#[derive(Debug)]
pub struct Listener {
    inner: UnixListener,
    /// Absolute: what clients connect to, and what messages name.
    path: PathBuf,
    me: u32,
    last_exhausted_warning: Option<Instant>,
    last_rejection_warning: Option<Instant>,
    unlogged_rejections: u64,
}

impl Listener {
    /// Binds `name` (relative to the runtime dir, e.g. `agentd.sock` or `apps/x.sock`).
    /// Must run under the single-instance lock: a socket already at `name` is stale and is
    /// removed; any other kind of file there is refused, untouched.
    pub fn bind(rt: &RuntimeDir, name: &str) -> Result<Listener, DirError> {
        let path = rt.socket_path(name)?;
        remove_stale_socket(rt, name)?;
        let old = set_umask(SOCKET_UMASK);
        let bound = UnixListener::bind(name);
        set_umask(old);
        let inner = bound.map_err(|source| DirError::Io { path: path.clone(), source })?;
        Ok(Listener::serving(inner, path))
    }

    /// Serves a socket the service manager bound and passed (socket activation) as `name`.
    /// Nothing is unlinked or bound; a socket bound elsewhere than `name` in the runtime dir
    /// is served anyway, with a warning, since clients will not find it there.
    pub fn adopt(
        rt: &RuntimeDir,
        name: &str,
        listener: std::os::unix::net::UnixListener,
    ) -> Result<Listener, DirError> {
        let path = rt.socket_path(name)?;
        let io = |source| DirError::Io { path: path.clone(), source };
        let bound = listener.local_addr().map_err(io)?.as_pathname().map(Path::to_path_buf);
        if bound.as_deref() != Some(path.as_path()) {
            tracing::warn!(expected = %path.display(), bound = ?bound,
                "the socket passed by the service manager is not where clients look for it");
        }
        listener.set_nonblocking(true).map_err(io)?;
        let inner = UnixListener::from_std(listener).map_err(io)?;
        Ok(Listener::serving(inner, path))
    }

    /// A second handle on the same listening socket (a `dup`), so accepting can resume after
    /// the accept task holding this one was stopped.
    pub fn try_clone(&self) -> io::Result<Listener> {
        use std::os::fd::AsFd;
        let fd = self.inner.as_fd().try_clone_to_owned()?;
        let listener = std::os::unix::net::UnixListener::from(fd);
        listener.set_nonblocking(true)?;
        Ok(Listener::serving(UnixListener::from_std(listener)?, self.path.clone()))
    }

    /// A listener on `inner` with no warnings issued yet, admitting our own uid.
    fn serving(inner: UnixListener, path: PathBuf) -> Listener {
        Listener {
            inner,
            path,
            me: jfgui_proto::locations::uid(),
            last_exhausted_warning: None,
            last_rejection_warning: None,
            unlogged_rejections: 0,
        }
    }

    /// The absolute socket path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Waits for the next connection from our own uid or root. Others are closed at once,
    /// before anything is read, with one log line naming both uids. Never fails: transient
    /// errors are logged and retried (descriptor exhaustion with a pause).
    pub async fn accept(&mut self) -> (Stream, Peer) {
        loop {
            match self.inner.accept().await {
                Ok((stream, _)) => {
                    let Some(peer) = self.admit(&stream) else { continue };
                    return (stream, peer);
                }
                Err(e) if is_exhaustion(&e) => {
                    let now = Instant::now();
                    if self.last_exhausted_warning.is_none_or(|t| now - t >= EXHAUSTED_LOG_EVERY) {
                        self.last_exhausted_warning = Some(now);
                        tracing::warn!(socket = %self.path.display(), error = %e,
                            "cannot accept: out of descriptors or memory; retrying every {} ms",
                            EXHAUSTED_BACKOFF.as_millis());
                    }
                    tokio::time::sleep(EXHAUSTED_BACKOFF).await;
                }
                Err(e) => {
                    tracing::debug!(socket = %self.path.display(), error = %e, "accept failed");
                }
            }
        }
    }

    /// The peer check: same uid, or root, which can bypass file modes anyway.
    fn admit(&mut self, stream: &Stream) -> Option<Peer> {
        let cred = match stream.peer_cred() {
            Ok(cred) => cred,
            Err(e) => {
                tracing::warn!(socket = %self.path.display(), error = %e,
                    "closed a connection whose peer credentials could not be read");
                return None;
            }
        };
        let uid = cred.uid();
        let peer = Peer { uid: Some(uid), pid: cred.pid().and_then(|p| u32::try_from(p).ok()) };
        if uid == self.me || uid == 0 {
            Some(peer)
        } else {
            let now = Instant::now();
            if self.last_rejection_warning.is_some_and(|t| now - t < REJECTION_LOG_EVERY) {
                self.unlogged_rejections += 1;
                return None;
            }
            tracing::warn!(socket = %self.path.display(), peer_uid = uid, daemon_uid = self.me,
                peer_pid = ?peer.pid, also_rejected_since_last_report = self.unlogged_rejections,
                "closed a connection from another user before reading from it");
            self.last_rejection_warning = Some(now);
            self.unlogged_rejections = 0;
            None
        }
    }
}

fn is_exhaustion(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::EMFILE | libc::ENFILE | libc::ENOBUFS | libc::ENOMEM))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exhaustion_errors_are_recognised() {
        assert!(is_exhaustion(&io::Error::from_raw_os_error(libc::EMFILE)));
        assert!(is_exhaustion(&io::Error::from_raw_os_error(libc::ENFILE)));
        assert!(!is_exhaustion(&io::Error::from_raw_os_error(libc::ECONNABORTED)));
    }
}
