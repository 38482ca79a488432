//! Client-side trust: what an app's connector and the CLI check before they send a
//! byte to something that claims to be this user's daemon, and the directory rule the daemon
//! itself applies to its runtime dir, kept here once so both sides judge a directory alike.
//!
//! Why clients check at all: the runtime dir's fallback `/tmp/jfgui-agent-UID` lives in a
//! world-writable directory, so another local user can create it first and listen in it.
//! The daemon refuses such a dir, but a client that just connects would register
//! with (or send its requests to) the squatter. So a client checks, in this order:
//!
//! 1. the directories on the way to the socket ([`check_socket_dirs`]): the socket's directory,
//!    and for an endpoint socket (`apps/SLUG.sock`) the runtime dir above it. Each must be a
//!    real directory (its last component not a symlink), owned by us, without group or other
//!    write permission: the daemon's own rule ([`judge_dir`]), minus the tightening of read
//!    bits, which only the daemon does;
//! 2. after connecting and before sending anything, the peer ([`check_peer`]): the uid of the
//!    process that listens must be ours or root's (root can bypass file modes anyway, as with
//!    ssh-agent and D-Bus). Linux reads it with `SO_PEERCRED`, macOS and the BSDs with
//!    `getpeereid`: both report the credentials the listener had when it called `listen(2)`.
//!
//! Windows has no directory; its check of the pipe server's owner is in `locations/windows.rs`.
//!
//! A failure is a [`Refusal`], carried inside an [`std::io::Error`] of kind
//! `PermissionDenied` by the checks (so they compose with connect errors);
//! [`Refusal::find`] gets it back out.

use std::fmt;
use std::format;
use std::io;
use std::path::PathBuf;
use std::string::String;

/// What is wrong with a directory, by the daemon's rule (ours, not a
/// symlink, not writable by group or others).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum DirProblem {
    /// Another uid owns it.
    ForeignOwner,
    /// Group or others may write in it, so entries may have been planted.
    WritableByOthers,
    /// Its last component is a symlink.
    Symlink,
    /// It is not a directory at all.
    NotADirectory,
}

/// The daemon's verdict on a directory (its runtime dir or `apps/`) from its owner and mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DirVerdict {
    /// Owned by us, mode 0700.
    Accept,
    /// Owned by us and not writable by others, but readable or searchable by them: the daemon
    /// removes those bits (with a warning); a client may use it as it is.
    Tighten,
    /// Refused.
    Refuse(DirProblem),
}

/// The rule for a directory owned by `owner` with permission bits `mode`, judged by `me`.
///
/// ```
/// use jfgui_proto::locations::{DirProblem, DirVerdict, judge_dir};
/// assert_eq!(judge_dir(1000, 0o700, 1000), DirVerdict::Accept);
/// assert_eq!(judge_dir(1000, 0o755, 1000), DirVerdict::Tighten);
/// assert_eq!(judge_dir(1000, 0o777, 1000), DirVerdict::Refuse(DirProblem::WritableByOthers));
/// assert_eq!(judge_dir(1001, 0o700, 1000), DirVerdict::Refuse(DirProblem::ForeignOwner));
/// ```
pub fn judge_dir(owner: u32, mode: u32, me: u32) -> DirVerdict {
    if owner != me {
        DirVerdict::Refuse(DirProblem::ForeignOwner)
    } else if mode & 0o022 != 0 {
        DirVerdict::Refuse(DirProblem::WritableByOthers)
    } else if mode & 0o7777 != 0o700 {
        DirVerdict::Tighten
    } else {
        DirVerdict::Accept
    }
}

/// The same rule for a file (a grants book, a launch file): owned by `me` and not writable by
/// group or others; read bits do not matter. The error names the owner or the mode.
///
/// ```
/// use jfgui_proto::locations::judge_file;
/// assert_eq!(judge_file(1000, 0o644, 1000), Ok(()));
/// assert!(judge_file(1000, 0o620, 1000).unwrap_err().contains("writable by group or others"));
/// assert!(judge_file(0, 0o600, 1000).unwrap_err().contains("owned by uid 0"));
/// ```
pub fn judge_file(owner: u32, mode: u32, me: u32) -> Result<(), String> {
    match judge_dir(owner, mode, me) {
        DirVerdict::Accept | DirVerdict::Tighten => Ok(()),
        DirVerdict::Refuse(DirProblem::ForeignOwner) => {
            Err(format!("owned by uid {owner}, not by uid {me}"))
        }
        DirVerdict::Refuse(_) => {
            Err(format!("writable by group or others (mode {:o})", mode & 0o7777))
        }
    }
}

/// Why a client will not talk to what it found. Every message names the directory (with its
/// owner uid and mode) or the peer's uid, in one line.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Refusal {
    /// A directory on the way to the daemon's socket fails the daemon's own rule.
    Dir {
        /// The directory.
        path: PathBuf,
        /// Its owner (of the symlink itself, for [`DirProblem::Symlink`]).
        owner: u32,
        /// Its permission bits.
        mode: u32,
        /// What is wrong.
        problem: DirProblem,
        /// Our uid.
        me: u32,
    },
    /// The process listening on the socket runs as another user.
    Peer {
        /// The socket.
        socket: PathBuf,
        /// The listener's uid.
        uid: u32,
        /// Our uid.
        me: u32,
    },
    /// Windows: the pipe's server process is not ours, or its owner could not be read.
    PipeServer {
        /// The pipe name.
        pipe: PathBuf,
        /// What was found (the owner's SID, or why it could not be read).
        found: String,
    },
}

impl Refusal {
    /// The refusal inside `e`, when `e` came from one of the trust checks.
    pub fn find(e: &io::Error) -> Option<&Refusal> {
        e.get_ref().and_then(|inner| inner.downcast_ref::<Refusal>())
    }

    /// Wraps the refusal in an `io::Error` of kind `PermissionDenied`.
    pub fn into_io(self) -> io::Error {
        io::Error::new(io::ErrorKind::PermissionDenied, self)
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::Dir { path, owner, mode, problem, me } => {
                write!(
                    f,
                    "refusing the daemon directory {} (owner uid {owner}, mode {mode:04o}): ",
                    path.display()
                )?;
                match problem {
                    DirProblem::ForeignOwner => write!(
                        f,
                        "it is owned by another user, not by us (uid {me}), so another user may \
                         be impersonating the daemon"
                    ),
                    DirProblem::WritableByOthers => f.write_str(
                        "it is writable by group or others, so another user may have planted a \
                         socket in it",
                    ),
                    DirProblem::Symlink => {
                        f.write_str("it is a symlink; the runtime dir must be a real directory")
                    }
                    DirProblem::NotADirectory => f.write_str("it is not a directory"),
                }
            }
            Refusal::Peer { socket, uid, me } => write!(
                f,
                "refusing {}: the process listening on it runs as uid {uid}, not as us (uid \
                 {me}) or root, so it is not our daemon",
                socket.display()
            ),
            Refusal::PipeServer { pipe, found } => write!(
                f,
                "refusing pipe {}: its server process is not ours ({found}), so it is not our \
                 daemon",
                pipe.display()
            ),
        }
    }
}

impl std::error::Error for Refusal {}

#[cfg(unix)]
pub use unix::{check_dir, check_peer, check_socket_dirs, peer_uid};

#[cfg(unix)]
mod unix {
    use std::io;
    use std::os::fd::{AsRawFd, BorrowedFd};
    use std::os::unix::fs::MetadataExt;
    use std::path::Path;

    use super::{DirProblem, DirVerdict, Refusal, judge_dir};
    use crate::locations::{APPS_DIR, uid};

    /// Checks one directory by the daemon's rule (through `lstat`, so a final symlink is seen
    /// as one). A missing directory is an `io::Error` of kind `NotFound` (no daemon there), a
    /// refused one carries a [`Refusal`].
    pub fn check_dir(path: &Path) -> io::Result<()> {
        let meta = std::fs::symlink_metadata(path)?;
        let kind = meta.file_type();
        let problem = if kind.is_symlink() {
            Some(DirProblem::Symlink)
        } else if !kind.is_dir() {
            Some(DirProblem::NotADirectory)
        } else {
            match judge_dir(meta.uid(), meta.mode() & 0o7777, uid()) {
                DirVerdict::Accept | DirVerdict::Tighten => None,
                DirVerdict::Refuse(problem) => Some(problem),
            }
        };
        match problem {
            None => Ok(()),
            Some(problem) => Err(Refusal::Dir {
                path: path.into(),
                owner: meta.uid(),
                mode: meta.mode() & 0o7777,
                problem,
                me: uid(),
            }
            .into_io()),
        }
    }

    /// Checks the directories a client passes through to reach `socket`: its directory, and
    /// when that is the runtime dir's `apps/` (an endpoint socket), the runtime dir too.
    pub fn check_socket_dirs(socket: &Path) -> io::Result<()> {
        let Some(dir) = socket.parent().filter(|d| !d.as_os_str().is_empty()) else {
            return Ok(());
        };
        if dir.file_name().is_some_and(|name| name == APPS_DIR)
            && let Some(runtime) = dir.parent().filter(|d| !d.as_os_str().is_empty())
        {
            check_dir(runtime)?;
        }
        check_dir(dir)
    }

    /// Checks that the peer of the connected socket `fd` (the listener on `socket`, named in
    /// the refusal) runs as us or as root.
    pub fn check_peer(fd: BorrowedFd<'_>, socket: &Path) -> io::Result<()> {
        let peer = peer_uid(fd)?;
        let me = uid();
        if peer == me || peer == 0 {
            Ok(())
        } else {
            Err(Refusal::Peer { socket: socket.into(), uid: peer, me }.into_io())
        }
    }

    /// The uid of the peer of the connected Unix socket `fd` (Linux: `SO_PEERCRED`).
    #[cfg(any(target_os = "linux", target_os = "android"))]
    #[allow(unsafe_code)]
    pub fn peer_uid(fd: BorrowedFd<'_>) -> io::Result<u32> {
        let mut cred = libc::ucred { pid: 0, uid: 0, gid: 0 };
        let mut len = core::mem::size_of::<libc::ucred>() as libc::socklen_t;
        // SAFETY: `cred` is a valid, writable ucred and `len` holds its exact size, as
        // SO_PEERCRED requires; the descriptor is borrowed from a live socket for the call.
        let rc = unsafe {
            libc::getsockopt(
                fd.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_PEERCRED,
                (&raw mut cred).cast(),
                &mut len,
            )
        };
        if rc == 0 { Ok(cred.uid) } else { Err(io::Error::last_os_error()) }
    }

    /// The uid of the peer of the connected Unix socket `fd` (`getpeereid`).
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    #[allow(unsafe_code)]
    pub fn peer_uid(fd: BorrowedFd<'_>) -> io::Result<u32> {
        let mut uid: libc::uid_t = 0;
        let mut gid: libc::gid_t = 0;
        // SAFETY: both out pointers are valid for writes; the descriptor is borrowed from a
        // live socket for the call.
        let rc = unsafe { libc::getpeereid(fd.as_raw_fd(), &mut uid, &mut gid) };
        if rc == 0 { Ok(uid) } else { Err(io::Error::last_os_error()) }
    }
}

#[cfg(test)]
mod tests {
    use std::string::ToString;

    use super::*;

    #[test]
    fn judge_dir_follows_s11() {
        assert_eq!(judge_dir(1000, 0o700, 1000), DirVerdict::Accept);
        for readable in [0o755, 0o750, 0o711, 0o2700] {
            assert_eq!(judge_dir(1000, readable, 1000), DirVerdict::Tighten, "{readable:o}");
        }
        for writable in [0o777, 0o770, 0o757, 0o720, 0o702, 0o1777] {
            assert_eq!(
                judge_dir(1000, writable, 1000),
                DirVerdict::Refuse(DirProblem::WritableByOthers),
                "{writable:o}"
            );
        }
        assert_eq!(judge_dir(1001, 0o700, 1000), DirVerdict::Refuse(DirProblem::ForeignOwner));
        assert_eq!(judge_dir(0, 0o700, 1000), DirVerdict::Refuse(DirProblem::ForeignOwner));
    }

    #[test]
    fn refusals_name_the_dir_or_the_peer_in_one_line() {
        let dir = Refusal::Dir {
            path: PathBuf::from("/tmp/jfgui-agent-1001"),
            owner: 1002,
            mode: 0o777,
            problem: DirProblem::ForeignOwner,
            me: 1001,
        };
        let m = dir.to_string();
        assert!(m.contains("/tmp/jfgui-agent-1001") && m.contains("uid 1002"), "{m}");
        assert!(m.contains("mode 0777") && m.contains("uid 1001"), "{m}");
        let peer = Refusal::Peer { socket: PathBuf::from("/x/host.sock"), uid: 1002, me: 1001 };
        let m = peer.to_string();
        assert!(m.contains("/x/host.sock") && m.contains("uid 1002"), "{m}");
        for m in [dir.to_string(), peer.to_string()] {
            assert!(!m.contains('\n'), "{m}");
        }
        let e = peer.clone().into_io();
        assert_eq!(e.kind(), io::ErrorKind::PermissionDenied);
        assert_eq!(Refusal::find(&e), Some(&peer));
        assert_eq!(Refusal::find(&io::Error::from(io::ErrorKind::PermissionDenied)), None);
    }

    #[cfg(unix)]
    mod unix {
        use std::os::fd::AsFd;
        use std::os::unix::fs::{PermissionsExt, symlink};
        use std::os::unix::net::{UnixListener, UnixStream};

        use std::string::ToString;

        use super::super::*;
        use crate::locations::uid;

        struct Scratch(PathBuf);

        impl Scratch {
            fn new(name: &str) -> Scratch {
                let path = std::env::temp_dir()
                    .join(std::format!("jfgui-trust-{}-{name}", std::process::id()));
                let _ = std::fs::remove_dir_all(&path);
                std::fs::create_dir(&path).unwrap();
                std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o700)).unwrap();
                Scratch(path)
            }
        }

        impl Drop for Scratch {
            fn drop(&mut self) {
                let _ = std::fs::remove_dir_all(&self.0);
            }
        }

        fn problem(e: &io::Error) -> Option<DirProblem> {
            match Refusal::find(e) {
                Some(Refusal::Dir { problem, .. }) => Some(*problem),
                _ => None,
            }
        }

        #[test]
        fn directories_are_judged_as_the_daemon_judges_them() {
            let s = Scratch::new("dirs");
            let rt = s.0.join("rt");
            assert_eq!(check_dir(&rt).unwrap_err().kind(), io::ErrorKind::NotFound);
            std::fs::create_dir(&rt).unwrap();
            for (mode, ok) in [(0o700, true), (0o755, true), (0o777, false), (0o770, false)] {
                std::fs::set_permissions(&rt, std::fs::Permissions::from_mode(mode)).unwrap();
                let got = check_dir(&rt);
                assert_eq!(got.is_ok(), ok, "{mode:o}: {got:?}");
                if !ok {
                    let e = got.unwrap_err();
                    assert_eq!(problem(&e), Some(DirProblem::WritableByOthers));
                    assert!(e.to_string().contains(&std::format!("mode {mode:04o}")), "{e}");
                }
            }
            std::fs::set_permissions(&rt, std::fs::Permissions::from_mode(0o700)).unwrap();
            let link = s.0.join("link");
            symlink(&rt, &link).unwrap();
            assert_eq!(problem(&check_dir(&link).unwrap_err()), Some(DirProblem::Symlink));
            // A symlink in a parent component is fine (macOS /var is one).
            std::fs::create_dir(rt.join("apps")).unwrap();
            assert!(check_dir(&link.join("apps")).is_ok());
            let file = s.0.join("file");
            std::fs::write(&file, b"").unwrap();
            assert_eq!(problem(&check_dir(&file).unwrap_err()), Some(DirProblem::NotADirectory));
        }

        #[test]
        fn endpoint_sockets_check_apps_and_the_runtime_dir() {
            let s = Scratch::new("apps");
            let rt = s.0.join("rt");
            std::fs::create_dir(&rt).unwrap();
            std::fs::create_dir(rt.join("apps")).unwrap();
            std::fs::set_permissions(&rt, std::fs::Permissions::from_mode(0o700)).unwrap();
            let endpoint = rt.join("apps").join("notepad.sock");
            assert!(check_socket_dirs(&endpoint).is_ok());
            assert!(check_socket_dirs(&rt.join("agentd.sock")).is_ok());
            std::fs::set_permissions(rt.join("apps"), std::fs::Permissions::from_mode(0o777))
                .unwrap();
            let e = check_socket_dirs(&endpoint).unwrap_err();
            assert!(e.to_string().contains("apps"), "{e}");
            std::fs::set_permissions(rt.join("apps"), std::fs::Permissions::from_mode(0o700))
                .unwrap();
            std::fs::set_permissions(&rt, std::fs::Permissions::from_mode(0o757)).unwrap();
            let e = check_socket_dirs(&endpoint).unwrap_err();
            assert_eq!(problem(&e), Some(DirProblem::WritableByOthers), "{e}");
        }

        #[test]
        fn our_own_listener_passes_the_peer_check() {
            let s = Scratch::new("peer");
            let path = s.0.join("x.sock");
            let _listener = UnixListener::bind(&path).unwrap();
            let stream = UnixStream::connect(&path).unwrap();
            assert_eq!(peer_uid(stream.as_fd()).unwrap(), uid());
            assert!(check_peer(stream.as_fd(), &path).is_ok());
            let (a, _b) = UnixStream::pair().unwrap();
            assert_eq!(peer_uid(a.as_fd()).unwrap(), uid());
        }
    }
}
