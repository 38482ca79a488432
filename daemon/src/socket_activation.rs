//! Socket activation and readiness for systemd: the listening sockets a service manager hands over
//! (`LISTEN_PID`, `LISTEN_FDS`, `LISTEN_FDNAMES`, as sd_listen_fds(3) defines them) and the
//! `sd_notify` states READY=1 and STOPPING=1.
//!
//! Pinned semantics:
//! - No `LISTEN_PID`: not activated; the daemon binds its own sockets.
//! - `LISTEN_PID` names another process: the variables were meant for someone else (a parent
//!   that forgot to unset them) and are **ignored**, exactly as sd_listen_fds does; the
//!   daemon binds its own sockets and logs why.
//! - Otherwise exactly two descriptors, named `host` and `control` (the `FileDescriptorName=`s
//!   of the shipped socket units, so the order does not matter), each a listening `AF_UNIX`
//!   stream socket. Anything else (another count, an unknown or repeated name, a TCP, datagram
//!   or not-listening socket, a regular file) is refused with a message naming the
//!   descriptor, and the daemon exits with status 5.
//! - The variables are removed from the environment, so children (`--demo`) never see them.
//! - Inherited sockets belong to systemd: the daemon never unlinks them, and connections it
//!   has not accepted when it exits stay queued for the next activation.

use std::fmt;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::net::UnixListener;
use std::time::Duration;

/// `FileDescriptorName=` of the apps' socket (`host.sock`).
pub const HOST_NAME: &str = "host";
/// `FileDescriptorName=` of the control socket (`agentd.sock`).
pub const CONTROL_NAME: &str = "control";
/// `--idle-exit` when activated and the flag is not given (a socket-activated daemon is restarted
/// on demand, so it may leave when idle).
const ACTIVATED_IDLE_EXIT: Duration = Duration::from_secs(30);

const LISTEN_PID: &str = "LISTEN_PID";
const LISTEN_FDS: &str = "LISTEN_FDS";
const LISTEN_FDNAMES: &str = "LISTEN_FDNAMES";

/// The two listening sockets handed over by the service manager.
#[derive(Debug)]
pub struct Inherited {
    /// `host.sock`, where apps register.
    pub host: UnixListener,
    /// `agentd.sock`, the control socket.
    pub control: UnixListener,
}

/// Why inherited descriptors were refused.
#[derive(Debug)]
pub enum ActivationError {
    /// `LISTEN_PID`, `LISTEN_FDS` or `LISTEN_FDNAMES` is malformed, or a descriptor is not open.
    Environment(String),
    /// Not exactly the two named sockets.
    Names(String),
    /// A descriptor is not a listening `AF_UNIX` stream socket.
    Descriptor {
        /// Its number.
        fd: RawFd,
        /// Its `LISTEN_FDNAMES` name.
        name: String,
        /// What it is instead.
        what: String,
    },
}

impl fmt::Display for ActivationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ActivationError::Environment(m) | ActivationError::Names(m) => {
                write!(f, "socket activation refused: {m}")
            }
            ActivationError::Descriptor { fd, name, what } => write!(
                f,
                "socket activation refused: descriptor {fd} ({name:?}) is {what}, not a \
                 listening Unix stream socket (ListenStream= of a path)"
            ),
        }
    }
}

impl std::error::Error for ActivationError {}

/// Takes the sockets passed by a service manager, if any (see the module docs), and removes
/// the `LISTEN_*` variables. Must run before the process starts a thread (it edits the
/// environment): `server::run` calls it first thing.
pub fn take() -> Result<Option<Inherited>, ActivationError> {
    let Some(pid) = std::env::var_os(LISTEN_PID) else { return Ok(None) };
    let result = match pid.to_str().and_then(|p| p.parse::<u32>().ok()) {
        None => Err(ActivationError::Environment(format!("LISTEN_PID={pid:?} is not a pid"))),
        Some(pid) if pid != std::process::id() => {
            tracing::info!(
                listen_pid = pid,
                pid = std::process::id(),
                "LISTEN_PID names another process: ignoring LISTEN_FDS (sd_listen_fds semantics) \
                 and binding the sockets here"
            );
            Ok(None)
        }
        Some(_) => adopt_all(),
    };
    unset_environment();
    result
}

fn adopt_all() -> Result<Option<Inherited>, ActivationError> {
    let fds: Vec<(RawFd, String)> = sd_notify::listen_fds_with_names()
        .map_err(|e| ActivationError::Environment(format!("{LISTEN_FDS}/{LISTEN_FDNAMES}: {e}")))?
        .collect();
    if fds.is_empty() {
        // LISTEN_FDS=0 or unset: sd_listen_fds reports "not activated" too.
        return Ok(None);
    }
    let (host, control) = assign(&fds)?;
    let host = check(own(host), HOST_NAME)?;
    let control = check(own(control), CONTROL_NAME)?;
    tracing::info!(host = ?host.local_addr().ok(), control = ?control.local_addr().ok(),
        "socket activation: serving the sockets passed by the service manager");
    Ok(Some(Inherited { host, control }))
}

/// Picks the `host` and `control` descriptors out of the named list.
fn assign(fds: &[(RawFd, String)]) -> Result<(RawFd, RawFd), ActivationError> {
    let names: Vec<&str> = fds.iter().map(|(_, n)| n.as_str()).collect();
    let find = |wanted: &str| -> Result<RawFd, ActivationError> {
        let mut hits = fds.iter().filter(|(_, n)| n == wanted);
        match (hits.next(), hits.next()) {
            (Some((fd, _)), None) => Ok(*fd),
            (None, _) => Err(ActivationError::Names(format!(
                "no descriptor named {wanted:?} among {} passed ({names:?}); expected exactly \
                 {HOST_NAME:?} and {CONTROL_NAME:?} (FileDescriptorName= of the socket units)",
                fds.len()
            ))),
            (Some(_), Some(_)) => Err(ActivationError::Names(format!(
                "more than one descriptor named {wanted:?} ({names:?})"
            ))),
        }
    };
    let pair = (find(HOST_NAME)?, find(CONTROL_NAME)?);
    if fds.len() != 2 {
        return Err(ActivationError::Names(format!(
            "{} descriptors passed ({names:?}); expected exactly {HOST_NAME:?} and {CONTROL_NAME:?}",
            fds.len()
        )));
    }
    Ok(pair)
}

/// Checks that `fd` is a listening `AF_UNIX` stream socket.
fn check(fd: OwnedFd, name: &str) -> Result<UnixListener, ActivationError> {
    let raw = fd.as_raw_fd();
    let refuse = |what: String| ActivationError::Descriptor { fd: raw, name: name.into(), what };
    let kind = match sockopt(fd.as_fd(), libc::SO_TYPE) {
        Ok(kind) => kind,
        Err(e) if e.raw_os_error() == Some(libc::ENOTSOCK) => {
            return Err(refuse("not a socket".into()));
        }
        Err(e) => return Err(refuse(format!("unreadable ({e})"))),
    };
    if kind != libc::SOCK_STREAM {
        return Err(refuse(format!("a socket of type {kind} (datagram or seqpacket)")));
    }
    // std refuses a socket of another family when reading its address.
    let listener = UnixListener::from(fd);
    if let Err(e) = listener.local_addr() {
        return Err(refuse(format!("not a Unix socket ({e}); a TCP socket?")));
    }
    match sockopt(listener.as_fd(), libc::SO_ACCEPTCONN) {
        Ok(0) => Err(refuse("a Unix stream socket that is not listening".into())),
        Ok(_) => Ok(listener),
        Err(e) => Err(refuse(format!("unreadable ({e})"))),
    }
}

#[allow(unsafe_code)]
fn own(fd: RawFd) -> OwnedFd {
    // SAFETY: `fd` is one of the descriptors the service manager passed (LISTEN_FDS, checked
    // open by sd_notify, which also set FD_CLOEXEC on it); nothing else in this process refers
    // to it, and `assign` returns each number once.
    unsafe { OwnedFd::from_raw_fd(fd) }
}

#[allow(unsafe_code)]
fn sockopt(fd: BorrowedFd<'_>, option: libc::c_int) -> io::Result<libc::c_int> {
    let mut value: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: `fd` is a live descriptor for the duration of the borrow; `value` and `len`
    // are valid for writes and `len` holds the size of `value`.
    let rc = unsafe {
        libc::getsockopt(
            fd.as_raw_fd(),
            libc::SOL_SOCKET,
            option,
            (&raw mut value).cast(),
            &raw mut len,
        )
    };
    if rc == 0 { Ok(value) } else { Err(io::Error::last_os_error()) }
}

#[allow(unsafe_code)]
fn unset_environment() {
    for var in [LISTEN_PID, LISTEN_FDS, LISTEN_FDNAMES] {
        // SAFETY: called from `server::run` before the async runtime or any other thread
        // exists, so nothing reads the environment concurrently.
        unsafe { std::env::remove_var(var) };
    }
}

/// How long the daemon stays up with no app and no client: `--idle-exit SECS` when given,
/// else 30 s when socket-activated (systemd starts it again on the next connection), else
/// never.
pub fn idle_exit(flag_secs: Option<u64>, activated: bool) -> Option<Duration> {
    flag_secs.map(Duration::from_secs).or(activated.then_some(ACTIVATED_IDLE_EXIT))
}

/// Tells the service manager the daemon serves its sockets (`Type=notify`). A no-op without
/// `NOTIFY_SOCKET` (not started by systemd).
pub fn notify_ready() {
    notify(sd_notify::NotifyState::Ready);
}

/// Tells the service manager the daemon is stopping.
pub fn notify_stopping() {
    notify(sd_notify::NotifyState::Stopping);
}

fn notify(state: sd_notify::NotifyState<'_>) {
    if let Err(e) = sd_notify::notify(&[state]) {
        tracing::warn!(error = %e, "could not notify the service manager");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::net::{UnixDatagram, UnixStream};

    fn named(list: &[(RawFd, &str)]) -> Vec<(RawFd, String)> {
        list.iter().map(|(fd, n)| (*fd, (*n).to_string())).collect()
    }

    #[test]
    fn idle_exit_is_30_seconds_when_activated_and_off_otherwise() {
        assert_eq!(idle_exit(None, true), Some(Duration::from_secs(30)));
        assert_eq!(idle_exit(None, false), None);
        assert_eq!(idle_exit(Some(3), true), Some(Duration::from_secs(3)));
        assert_eq!(idle_exit(Some(0), false), Some(Duration::ZERO));
    }

    #[test]
    fn names_map_in_any_order() {
        assert_eq!(assign(&named(&[(3, "host"), (4, "control")])).unwrap(), (3, 4));
        assert_eq!(assign(&named(&[(3, "control"), (4, "host")])).unwrap(), (4, 3));
    }

    #[test]
    fn wrong_names_or_counts_are_clear_errors() {
        for (list, needle) in [
            (vec![(3, "host")], "no descriptor named \"control\""),
            (vec![(3, "host"), (4, "control"), (5, "extra")], "3 descriptors passed"),
            (vec![(3, "host"), (4, "host"), (5, "control")], "more than one"),
            (vec![(3, "unknown"), (4, "unknown")], "FileDescriptorName="),
        ] {
            let e = assign(&named(&list)).unwrap_err().to_string();
            assert!(e.contains(needle), "{list:?}: {e}");
        }
    }

    fn refusal(fd: OwnedFd) -> String {
        check(fd, "host").unwrap_err().to_string()
    }

    #[test]
    fn only_listening_unix_stream_sockets_pass() {
        let dir = std::env::temp_dir().join(format!("jfgui-act-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir(&dir).unwrap();

        let ok = UnixListener::bind(dir.join("l.sock")).unwrap();
        assert!(check(OwnedFd::from(ok), "host").is_ok());

        let tcp = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        assert!(refusal(OwnedFd::from(tcp)).contains("not a Unix socket"));

        let (a, _b) = UnixStream::pair().unwrap();
        assert!(refusal(OwnedFd::from(a)).contains("not listening"));

        let dgram = UnixDatagram::unbound().unwrap();
        assert!(refusal(OwnedFd::from(dgram)).contains("of type"));

        let file = std::fs::File::create(dir.join("plain")).unwrap();
        let e = refusal(OwnedFd::from(file));
        assert!(e.contains("not a socket") && e.contains("\"host\""), "{e}");

        std::fs::remove_dir_all(&dir).unwrap();
    }
}
