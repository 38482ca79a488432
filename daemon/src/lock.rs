//! The single-instance lock `agentd.lock`: `flock(LOCK_EX|LOCK_NB)` on a file opened
//! `O_NOFOLLOW|O_NONBLOCK` (a planted symlink is refused, a planted FIFO cannot block us), holding
//! the winner's pid. A lock file nobody holds (a crashed daemon's) is simply taken over: the kernel
//! released the flock when its holder died.

use std::fmt;
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::PathBuf;
use std::time::Duration;

use crate::runtime_dir::{DirError, RuntimeDir, kind};

/// Why the lock was not taken.
#[derive(Debug)]
pub enum LockError {
    /// Another daemon holds it.
    AlreadyRunning {
        /// The holder's pid, if it had written it yet.
        pid: Option<u32>,
        /// The lock file.
        path: PathBuf,
    },
    /// The lock file path is unusable (symlink, FIFO, I/O).
    Dir(DirError),
}

impl fmt::Display for LockError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LockError::AlreadyRunning { pid: Some(pid), path } => write!(
                f,
                "jfgui-agentd is already running, pid {pid} (it holds {})",
                path.display()
            ),
            LockError::AlreadyRunning { pid: None, path } => write!(
                f,
                "jfgui-agentd is already running (it holds {}; its pid is not written yet)",
                path.display()
            ),
            LockError::Dir(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for LockError {}

/// The held lock. Dropping it releases the flock; [`Lock::remove`] also unlinks the file.
#[derive(Debug)]
pub struct Lock {
    file: File,
    path: PathBuf,
}

impl Lock {
    /// Takes the lock in `rt` (the working directory) or says who holds it.
    pub fn acquire(rt: &RuntimeDir) -> Result<Lock, LockError> {
        let name = jfgui_proto::locations::LOCK_FILE;
        let path = rt.path().join(name);
        // A holder that unlinked its file on exit may leave us locking a dead inode: retry
        // until the inode we locked is the one the name points at.
        for _ in 0..8 {
            let mut file = open(&path, name)?;
            match try_flock(&file) {
                Ok(true) => {}
                Ok(false) => {
                    return Err(LockError::AlreadyRunning { pid: read_pid(&mut file), path });
                }
                Err(source) => return Err(LockError::Dir(DirError::Io { path, source })),
            }
            let locked = file.metadata().map_err(|source| io_err(&path, source))?;
            match std::fs::symlink_metadata(name) {
                Ok(now) if now.dev() == locked.dev() && now.ino() == locked.ino() => {
                    write_pid(&mut file).map_err(|source| io_err(&path, source))?;
                    return Ok(Lock { file, path });
                }
                Ok(_) => continue,
                Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                Err(source) => return Err(io_err(&path, source)),
            }
        }
        Err(LockError::Dir(DirError::Refused {
            path,
            reason: "the lock file keeps being replaced while we take it".into(),
        }))
    }

    /// Unlinks the lock file, then releases the lock (clean shutdown).
    pub fn remove(self) {
        let name = jfgui_proto::locations::LOCK_FILE;
        if let Err(e) = std::fs::remove_file(name)
            && e.kind() != io::ErrorKind::NotFound
        {
            tracing::warn!(path = %self.path.display(), error = %e, "could not remove the lock file");
        }
        drop(self.file);
    }
}

fn io_err(path: &std::path::Path, source: io::Error) -> LockError {
    LockError::Dir(DirError::Io { path: path.into(), source })
}

fn open(path: &std::path::Path, name: &str) -> Result<File, LockError> {
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(name);
    let file = match file {
        Ok(file) => file,
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
            return Err(LockError::Dir(DirError::Refused {
                path: path.into(),
                reason: "it is a symlink; it was left untouched: remove it yourself".into(),
            }));
        }
        Err(source) => return Err(io_err(path, source)),
    };
    let meta = file.metadata().map_err(|source| io_err(path, source))?;
    if !meta.file_type().is_file() {
        return Err(LockError::Dir(DirError::Refused {
            path: path.into(),
            reason: format!(
                "it is a {}, expected a regular file; it was left untouched: remove it yourself",
                kind(&meta)
            ),
        }));
    }
    if meta.mode() & 0o077 != 0 {
        file.set_permissions(std::fs::Permissions::from_mode(0o600))
            .map_err(|source| io_err(path, source))?;
    }
    Ok(file)
}

fn write_pid(file: &mut File) -> io::Result<()> {
    file.set_len(0)?;
    file.rewind()?;
    file.write_all(format!("{}\n", std::process::id()).as_bytes())
}

/// The holder writes its pid right after locking; give it a moment before saying "unknown".
fn read_pid(file: &mut File) -> Option<u32> {
    for _ in 0..20 {
        let mut text = String::new();
        if file.rewind().is_ok()
            && file.take(32).read_to_string(&mut text).is_ok()
            && let Ok(pid) = text.trim().parse()
        {
            return Some(pid);
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    None
}

/// `flock(LOCK_EX|LOCK_NB)`: Ok(false) when another open file description holds it.
#[allow(unsafe_code)]
fn try_flock(file: &File) -> io::Result<bool> {
    use std::os::fd::AsRawFd;
    // SAFETY: flock only reads the descriptor number, which `file` keeps open for the call.
    let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    if rc == 0 {
        return Ok(true);
    }
    let e = io::Error::last_os_error();
    if e.raw_os_error() == Some(libc::EWOULDBLOCK) { Ok(false) } else { Err(e) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flock_is_exclusive_between_open_file_descriptions() {
        let dir = std::env::temp_dir().join(format!("jfgui-lock-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("l");
        let a = File::create(&path).unwrap();
        let b = File::open(&path).unwrap();
        assert!(try_flock(&a).unwrap());
        assert!(!try_flock(&b).unwrap());
        drop(a);
        assert!(try_flock(&b).unwrap());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
