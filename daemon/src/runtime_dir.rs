//! The runtime dir: create it 0700 or adopt an existing one only after checking it through an open
//! directory fd, then make it the working directory so every later file and socket is created
//! relative to the verified inode, never re-resolved by path (a swapped symlink after the check
//! cannot redirect us).
//!
//! Rules: the final component must not be a symlink (parents may be: macOS `/var` is one); the
//! owner must be our uid; group/other write bits are refused (entries may have been planted);
//! group/other read or search bits on our own dir are removed with a warning.

use std::fmt;
use std::fs::{DirBuilder, File, OpenOptions};
use std::io;
use std::os::unix::fs::{DirBuilderExt, FileTypeExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use jfgui_proto::locations::{DirProblem, DirVerdict, judge_dir};

/// Longest socket path the platform's `sockaddr_un.sun_path` holds, without the NUL.
#[cfg(any(target_os = "macos", target_os = "ios", target_os = "freebsd", target_os = "openbsd"))]
pub const SUN_PATH_MAX: usize = 103;
/// Longest socket path the platform's `sockaddr_un.sun_path` holds, without the NUL.
#[cfg(not(any(
    target_os = "macos",
    target_os = "ios",
    target_os = "freebsd",
    target_os = "openbsd"
)))]
pub const SUN_PATH_MAX: usize = 107;

/// Why the runtime dir (or a path inside it) cannot be used. Every message names the path.
#[derive(Debug)]
pub enum DirError {
    /// Refused on purpose: foreign owner, writable by others, symlink, wrong file type.
    Refused {
        /// The offending path.
        path: PathBuf,
        /// What is wrong and what to do.
        reason: String,
    },
    /// A socket path would not fit `sun_path`.
    PathTooLong {
        /// The full path.
        path: PathBuf,
        /// The platform limit in bytes.
        limit: usize,
    },
    /// An unexpected I/O error.
    Io {
        /// What we were doing.
        path: PathBuf,
        /// The error.
        source: io::Error,
    },
}

impl fmt::Display for DirError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DirError::Refused { path, reason } => {
                write!(f, "refusing runtime path {}: {reason}", path.display())
            }
            DirError::PathTooLong { path, limit } => write!(
                f,
                "socket path {} is {} bytes, over the platform's {}-byte sun_path limit ({limit} \
                 usable); choose a shorter runtime dir (--runtime-dir or JFGUI_RUNTIME_DIR)",
                path.display(),
                path.as_os_str().len(),
                limit + 1
            ),
            DirError::Io { path, source } => write!(f, "{}: {source}", path.display()),
        }
    }
}

impl std::error::Error for DirError {}

/// The verified runtime dir. While it lives, the process's working directory is this dir.
#[derive(Debug)]
pub struct RuntimeDir {
    path: PathBuf,
    dir: File,
    dev: u64,
    ino: u64,
}

/// What opening found, for the log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Opened {
    /// We created the dir.
    Created,
    /// An existing dir passed as it was.
    Adopted,
    /// An existing dir of ours had group/other read or search bits; they were removed.
    Tightened {
        /// The mode found.
        old_mode: u32,
    },
}

/// Endpoints need room for at least this many slug characters in `sun_path`, or the runtime
/// dir is refused at start-up rather than every app failing later.
pub const MIN_SLUG_ROOM: usize = 8;

/// Refuses a runtime dir whose socket paths would not fit `sun_path` (checked before anything
/// is created, so a refused path leaves nothing behind).
pub fn check_socket_room(path: &Path) -> Result<(), DirError> {
    use jfgui_proto::locations::{APPS_DIR, CONTROL_SOCKET, ENDPOINT_SUFFIX, HOST_SOCKET};
    let endpoint = format!("{APPS_DIR}/{}{ENDPOINT_SUFFIX}", "x".repeat(MIN_SLUG_ROOM));
    for name in [CONTROL_SOCKET, HOST_SOCKET, &endpoint] {
        let full = path.join(name);
        if full.as_os_str().len() > SUN_PATH_MAX {
            return Err(DirError::PathTooLong { path: full, limit: SUN_PATH_MAX });
        }
    }
    Ok(())
}

impl RuntimeDir {
    /// Creates or adopts `path` (absolute), then `fchdir`s into it.
    pub fn open(path: &Path) -> Result<(RuntimeDir, Opened), DirError> {
        if !path.is_absolute() {
            return Err(refused(path, "the runtime dir must be an absolute path".into()));
        }
        check_socket_room(path)?;
        let created = match DirBuilder::new().mode(0o700).create(path) {
            Ok(()) => true,
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => false,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Err(refused(
                    path,
                    "its parent directory does not exist (only the last component is created)"
                        .into(),
                ));
            }
            // mkdir may report EACCES for an existing entry in a parent we cannot write: judge
            // what is there instead of reporting the less useful error.
            Err(_) if std::fs::symlink_metadata(path).is_ok() => false,
            Err(source) => return Err(DirError::Io { path: path.into(), source }),
        };
        let dir = match OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(path)
        {
            Ok(dir) => dir,
            // O_NOFOLLOW|O_DIRECTORY on a symlink fails with ELOOP or ENOTDIR, depending on
            // the platform: lstat tells which case it is.
            Err(e) if matches!(e.raw_os_error(), Some(libc::ELOOP | libc::ENOTDIR)) => {
                let is_link =
                    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
                let reason = if is_link {
                    "it is a symlink; the runtime dir's last component must be a real directory \
                     (symlinks in parent directories are fine)"
                } else {
                    "it exists and is not a directory"
                };
                return Err(refused(path, reason.into()));
            }
            // Someone else's private dir cannot even be opened: lstat names its owner and mode.
            Err(source) if source.kind() == io::ErrorKind::PermissionDenied => {
                if let Ok(meta) = std::fs::symlink_metadata(path) {
                    let me = jfgui_proto::locations::uid();
                    if let Verdict::Refuse(reason) = judge(meta.uid(), meta.mode() & 0o7777, me) {
                        return Err(refused(path, reason));
                    }
                }
                return Err(DirError::Io { path: path.into(), source });
            }
            Err(source) => return Err(DirError::Io { path: path.into(), source }),
        };
        let meta = dir.metadata().map_err(|source| DirError::Io { path: path.into(), source })?;
        let mode = meta.mode() & 0o7777;
        let verdict = judge(meta.uid(), mode, jfgui_proto::locations::uid());
        let opened = match verdict {
            Verdict::Refuse(reason) => return Err(refused(path, reason)),
            Verdict::Accept if created => Opened::Created,
            Verdict::Accept => Opened::Adopted,
            Verdict::Tighten => {
                // fchmod on the verified fd, not chmod on the path.
                dir.set_permissions(std::fs::Permissions::from_mode(0o700))
                    .map_err(|source| DirError::Io { path: path.into(), source })?;
                Opened::Tightened { old_mode: mode }
            }
        };
        fchdir(&dir).map_err(|source| DirError::Io { path: path.into(), source })?;
        let rt = RuntimeDir { path: path.into(), dir, dev: meta.dev(), ino: meta.ino() };
        Ok((rt, opened))
    }

    /// The absolute path (for messages and for the paths clients connect to).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The absolute path of `name` inside the dir, checked against the `sun_path` limit.
    pub fn socket_path(&self, name: &str) -> Result<PathBuf, DirError> {
        let path = self.path.join(name);
        if path.as_os_str().len() > SUN_PATH_MAX {
            return Err(DirError::PathTooLong { path, limit: SUN_PATH_MAX });
        }
        Ok(path)
    }

    /// The longest endpoint slug whose `apps/SLUG.sock` still fits `sun_path`.
    pub fn max_slug_len(&self) -> usize {
        let fixed = self.path.as_os_str().len()
            + 1
            + jfgui_proto::locations::APPS_DIR.len()
            + 1
            + jfgui_proto::locations::ENDPOINT_SUFFIX.len();
        SUN_PATH_MAX.saturating_sub(fixed)
    }

    /// Creates `apps/` (0700) inside the dir, or adopts it after the same checks as the dir
    /// itself (a planted file or symlink of that name is refused).
    pub fn ensure_apps_dir(&self) -> Result<(), DirError> {
        let name = jfgui_proto::locations::APPS_DIR;
        let path = self.path.join(name);
        match DirBuilder::new().mode(0o700).create(name) {
            Ok(()) => return Ok(()),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(source) => return Err(DirError::Io { path, source }),
        }
        let meta = std::fs::symlink_metadata(name)
            .map_err(|source| DirError::Io { path: path.clone(), source })?;
        if !meta.file_type().is_dir() {
            return Err(refused(&path, format!("it is a {}, expected a directory", kind(&meta))));
        }
        match judge(meta.uid(), meta.mode() & 0o7777, jfgui_proto::locations::uid()) {
            Verdict::Refuse(reason) => Err(refused(&path, reason)),
            Verdict::Accept => Ok(()),
            Verdict::Tighten => {
                std::fs::set_permissions(name, std::fs::Permissions::from_mode(0o700))
                    .map_err(|source| DirError::Io { path, source })
            }
        }
    }

    /// False once the dir was removed or replaced under us (logout cleanup): its link count dropped
    /// to zero, or the path now names another inode.
    pub fn still_present(&self) -> bool {
        let alive = self.dir.metadata().map(|m| m.nlink() > 0).unwrap_or(false);
        let same = std::fs::symlink_metadata(&self.path)
            .map(|m| m.dev() == self.dev && m.ino() == self.ino)
            .unwrap_or(false);
        alive && same
    }
}

/// Removes `name` from the dir only if it is a socket (lstat, never following a link). A missing
/// entry is fine; anything else is refused with a message naming it (a planted file or link is
/// never deleted).
pub fn remove_stale_socket(rt: &RuntimeDir, name: &str) -> Result<(), DirError> {
    let path = rt.path.join(name);
    match std::fs::symlink_metadata(name) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(source) => Err(DirError::Io { path, source }),
        Ok(meta) if meta.file_type().is_socket() => match std::fs::remove_file(name) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
            Err(source) => Err(DirError::Io { path, source }),
        },
        Ok(meta) => Err(refused(
            &path,
            format!(
                "a {} is in the way of a socket we need; it was left untouched: remove it \
                 yourself if it is not needed",
                kind(&meta)
            ),
        )),
    }
}

/// Names a file type for messages.
pub fn kind(meta: &std::fs::Metadata) -> &'static str {
    let t = meta.file_type();
    if t.is_symlink() {
        "symlink"
    } else if t.is_dir() {
        "directory"
    } else if t.is_file() {
        "regular file"
    } else if t.is_fifo() {
        "FIFO"
    } else if t.is_socket() {
        "socket"
    } else if t.is_char_device() || t.is_block_device() {
        "device"
    } else {
        "special file"
    }
}

fn refused(path: &Path, reason: String) -> DirError {
    DirError::Refused { path: path.into(), reason }
}

/// The runtime dir rule (`jfgui_proto::locations::judge_dir`, which clients apply too) for a
/// directory with owner `owner` and permission bits `mode`, run as `me`, with the daemon's
/// advice for a refusal.
fn judge(owner: u32, mode: u32, me: u32) -> Verdict {
    match judge_dir(owner, mode, me) {
        DirVerdict::Accept => Verdict::Accept,
        DirVerdict::Tighten => Verdict::Tighten,
        DirVerdict::Refuse(_) if mode & 0o1000 != 0 && mode & 0o022 != 0 => {
            // Sticky and writable by others: a shared directory such as /tmp, whoever owns it.
            // Advising a chmod here would break every other user of it.
            Verdict::Refuse(format!(
                "it is a shared directory (owner uid {owner}, mode {mode:04o}: sticky and \
                 writable by group or others, like /tmp), not a runtime dir: name a dedicated \
                 directory inside it instead, e.g. jfgui-agent-{me} in it (the daemon creates \
                 it 0700)"
            ))
        }
        DirVerdict::Refuse(DirProblem::WritableByOthers) => Verdict::Refuse(format!(
            "it is writable by group or others (owner uid {owner}, mode {mode:04o}), so entries \
             may have been planted; remove it or `chmod 0700` it after checking its contents"
        )),
        DirVerdict::Refuse(_) => Verdict::Refuse(format!(
            "it is owned by uid {owner}, not by us (uid {me}), mode {mode:04o}; nothing was \
             changed in it; give the daemon a directory of its own (one that does not exist yet \
             is created 0700)"
        )),
    }
}

#[derive(Debug, PartialEq, Eq)]
enum Verdict {
    Accept,
    Tighten,
    Refuse(String),
}

/// Makes `dir` the working directory, so relative paths resolve through the verified inode.
#[allow(unsafe_code)]
fn fchdir(dir: &File) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    // SAFETY: fchdir only reads the descriptor number, which `dir` keeps open for the call.
    let rc = unsafe { libc::fchdir(dir.as_raw_fd()) };
    if rc == 0 { Ok(()) } else { Err(io::Error::last_os_error()) }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rule itself is tested in proto (`judge_dir`); here the daemon's messages.
    #[test]
    fn judge_follows_s11() {
        assert_eq!(judge(1000, 0o700, 1000), Verdict::Accept);
        assert_eq!(judge(1000, 0o755, 1000), Verdict::Tighten);
        assert_eq!(judge(1000, 0o750, 1000), Verdict::Tighten);
        assert_eq!(judge(1000, 0o2700, 1000), Verdict::Tighten);
        for writable in [0o777, 0o770, 0o757, 0o720, 0o702] {
            match judge(1000, writable, 1000) {
                Verdict::Refuse(m) => assert!(m.contains("writable by group or others"), "{m}"),
                v => panic!("{writable:o}: {v:?}"),
            }
        }
        // A shared sticky directory (/tmp) is refused with advice to use a dedicated one,
        // never to chmod it.
        for (owner, shared) in [(1000, 0o1777), (0, 0o1777), (1000, 0o1770), (1000, 0o1703)] {
            match judge(owner, shared, 1000) {
                Verdict::Refuse(m) => {
                    assert!(m.contains("dedicated directory") && !m.contains("chmod"), "{m}")
                }
                v => panic!("{shared:o}: {v:?}"),
            }
        }
        match judge(1001, 0o700, 1000) {
            Verdict::Refuse(m) => assert!(m.contains("uid 1001") && m.contains("0700"), "{m}"),
            v => panic!("{v:?}"),
        }
    }

    #[test]
    fn socket_room_is_checked_before_creating_anything() {
        assert!(check_socket_room(Path::new("/run/user/1000/jfgui-agent")).is_ok());
        let long = PathBuf::from(format!("/tmp/{}", "d".repeat(90)));
        match check_socket_room(&long) {
            Err(DirError::PathTooLong { path, limit }) => {
                assert_eq!(limit, SUN_PATH_MAX);
                assert!(path.starts_with(&long));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn too_long_message_names_path_and_limit() {
        let e = DirError::PathTooLong { path: PathBuf::from("/x/agentd.sock"), limit: 107 };
        let m = e.to_string();
        assert!(m.contains("/x/agentd.sock") && m.contains("108-byte"), "{m}");
    }
}
