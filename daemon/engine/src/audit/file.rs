//! The audit file on disk: a private directory (0700) holding `audit.jsonl` (0600), opened
//! with `O_APPEND` (and, on Unix, `O_NOFOLLOW`: a symlink planted at the log's name is
//! refused, not followed) and written in whole records: the records the writer took at once
//! go in as few `write`s as the size bound allows, a record is never split across writes or
//! files. At the size bound the file is rotated: `audit.jsonl` → `.1` → `.2` → `.3`, the
//! oldest removed, so [`KEPT_FILES`] files exist at most.
//!
//! The daemon and a headless `jfgui-agent` may append to the same log at once, so the size
//! and identity of the live file are read from its path before each write (not counted from
//! what this process wrote): after another process rotated it, this one reopens the new file.
//! On Unix, rotation is serialized across processes by an exclusive `flock` on `audit.lock`,
//! and the size is checked again under the lock, so a file is never rotated twice (which
//! would push a file out of the kept four early).
//!
//! Any error closes the file; the next record tries to open it again, so a directory that
//! becomes writable again (disk space freed, permissions fixed) resumes the log by itself.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use super::location::FILE_NAME;

/// Files kept: the live one and three rotated ones.
pub const KEPT_FILES: usize = 4;
/// The default rotation bound.
pub const DEFAULT_MAX_BYTES: u64 = 8 * 1024 * 1024;

/// The open log (or the knowledge of where to open it).
#[derive(Debug)]
pub struct AuditFile {
    dir: PathBuf,
    max_bytes: u64,
    open: Option<Open>,
}

/// The live file as this process opened it.
#[derive(Debug)]
struct Open {
    file: File,
    /// Device and inode at open (Unix): another process's rotation replaces the live file.
    id: Option<FileId>,
}

/// Device and inode.
type FileId = (u64, u64);

/// What [`AuditFile::append`] could not do.
#[derive(Debug)]
pub struct AppendError {
    pub error: io::Error,
    /// Lines written before the error (the rest are not in the file).
    pub written: usize,
}

/// The name of the lock file rotations take, beside the log.
#[cfg(unix)]
const LOCK_NAME: &str = "audit.lock";

impl AuditFile {
    /// The log in `dir`, rotated beyond `max_bytes`. Nothing is touched until the first write.
    pub fn new(dir: PathBuf, max_bytes: u64) -> AuditFile {
        AuditFile { dir, max_bytes: max_bytes.max(1), open: None }
    }

    /// `dir/audit.jsonl` (`n` = 0) or its `n`th rotated file.
    pub fn path(dir: &Path, n: usize) -> PathBuf {
        match n {
            0 => dir.join(FILE_NAME),
            n => dir.join(format!("{FILE_NAME}.{n}")),
        }
    }

    /// Appends `lines`, each with its newline, in order: as many whole lines per write as
    /// fit below the bound, rotating first when the next line would cross it. On error the
    /// file is closed (and reopened by the next call).
    pub fn append(&mut self, lines: &[&[u8]]) -> Result<(), AppendError> {
        let mut buf = Vec::new();
        let mut written = 0;
        while written < lines.len() {
            match self.append_some(&lines[written..], &mut buf) {
                Ok(n) => written += n,
                Err(error) => {
                    self.open = None;
                    return Err(AppendError { error, written });
                }
            }
        }
        Ok(())
    }

    /// Writes the first of `lines` (not empty) and those after it that still fit below the
    /// bound in one write; returns how many.
    fn append_some(&mut self, lines: &[&[u8]], buf: &mut Vec<u8>) -> io::Result<usize> {
        let live = self.live()?;
        if self.open.as_ref().is_some_and(|open| live.is_none_or(|(_, id)| open.id != id)) {
            // Another process rotated it: append to the live file, not the renamed one.
            self.open = None;
        }
        let mut size = live.map_or(0, |(size, _)| size);
        let first = lines[0].len() as u64 + 1;
        if size > 0 && size + first > self.max_bytes {
            self.open = None;
            self.rotate_once(first)?;
            size = self.live()?.map_or(0, |(size, _)| size);
        }
        buf.clear();
        let mut n = 0;
        for line in lines {
            if n > 0 && size + (buf.len() + line.len() + 1) as u64 > self.max_bytes {
                break;
            }
            buf.extend_from_slice(line);
            buf.push(b'\n');
            n += 1;
        }
        let open = match &mut self.open {
            Some(open) => open,
            slot @ None => slot.insert(open_file(&self.dir)?),
        };
        let written = open.file.write(buf)?;
        if written != buf.len() {
            return Err(io::Error::new(io::ErrorKind::WriteZero, "short write to the audit log"));
        }
        Ok(n)
    }

    /// The live file's size and identity, `None` when there is none.
    fn live(&self) -> io::Result<Option<(u64, Option<FileId>)>> {
        match std::fs::symlink_metadata(Self::path(&self.dir, 0)) {
            Ok(meta) => Ok(Some((meta.len(), file_id(&meta)))),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Rotates unless another process did while this one waited for the lock (the live file
    /// then has room for `len` more bytes again).
    fn rotate_once(&self, len: u64) -> io::Result<()> {
        let _lock = RotationLock::take(&self.dir)?;
        if self.live()?.is_some_and(|(size, _)| size > 0 && size + len > self.max_bytes) {
            self.rotate()?;
        }
        Ok(())
    }

    fn rotate(&self) -> io::Result<()> {
        for n in (1..KEPT_FILES).rev() {
            let from = Self::path(&self.dir, n - 1);
            match std::fs::rename(&from, Self::path(&self.dir, n)) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}

/// Opens (creating) `dir/audit.jsonl` for appending.
fn open_file(dir: &Path) -> io::Result<Open> {
    make_private_dir(dir)?;
    let file = open_append(&AuditFile::path(dir, 0))?;
    let id = file_id(&file.metadata()?);
    Ok(Open { file, id })
}

#[cfg(unix)]
fn file_id(meta: &std::fs::Metadata) -> Option<FileId> {
    use std::os::unix::fs::MetadataExt;
    Some((meta.dev(), meta.ino()))
}

#[cfg(not(unix))]
fn file_id(_meta: &std::fs::Metadata) -> Option<FileId> {
    None
}

/// An exclusive lock on `dir/audit.lock`, held while one process rotates; released on drop.
struct RotationLock {
    #[cfg(unix)]
    _file: File,
}

impl RotationLock {
    #[cfg(unix)]
    #[allow(unsafe_code)]
    fn take(dir: &Path) -> io::Result<RotationLock> {
        use std::os::fd::AsRawFd;
        let file = open_append(&dir.join(LOCK_NAME))?;
        loop {
            // SAFETY: flock only reads the descriptor number, which `file` keeps open.
            if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } == 0 {
                return Ok(RotationLock { _file: file });
            }
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }

    /// Not serialized elsewhere yet: there two processes rotating at the same moment may
    /// rotate twice (the daemon alone never does).
    #[cfg(not(unix))]
    fn take(_dir: &Path) -> io::Result<RotationLock> {
        Ok(RotationLock {})
    }
}

#[cfg(unix)]
fn make_private_dir(dir: &Path) -> io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
    let meta = std::fs::symlink_metadata(dir)?;
    if !meta.is_dir() {
        return Err(io::Error::other(format!("{} is not a directory", dir.display())));
    }
    // An existing dir made by someone else's umask: records are the user's business only.
    if meta.permissions().mode() & 0o077 != 0 {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    }
    Ok(())
}

#[cfg(not(unix))]
fn make_private_dir(dir: &Path) -> io::Result<()> {
    // %LOCALAPPDATA% is private to the user by its inherited ACL.
    std::fs::create_dir_all(dir)
}

#[cfg(unix)]
fn open_append(path: &Path) -> io::Result<File> {
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    let file = OpenOptions::new()
        .append(true)
        .create(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(io::Error::other(format!("{} is not a regular file", path.display())));
    }
    if meta.permissions().mode() & 0o077 != 0 {
        file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    }
    Ok(file)
}

#[cfg(not(unix))]
fn open_append(path: &Path) -> io::Result<File> {
    OpenOptions::new().append(true).create(true).open(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("jfgui-audit-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn rotation_keeps_four_files_and_never_splits_a_record() {
        let dir = temp_dir("rotate");
        let mut f = AuditFile::new(dir.join("state"), 100);
        let line = |i: i32| format!("{{\"n\":{i:03},\"pad\":\"xxxxxxxxxxxxxxx\"}}");
        for i in 0..20 {
            f.append(&[line(i).as_bytes()]).unwrap();
        }
        // Taken at once: as few writes as the bound allows, none crossing it.
        let batch: Vec<String> = (20..40).map(line).collect();
        let batch: Vec<&[u8]> = batch.iter().map(|l| l.as_bytes()).collect();
        f.append(&batch).unwrap();
        let mut names: Vec<String> = std::fs::read_dir(dir.join("state"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        let lock: &[&str] = if cfg!(unix) { &["audit.lock"] } else { &[] };
        let logs = ["audit.jsonl", "audit.jsonl.1", "audit.jsonl.2", "audit.jsonl.3"];
        assert_eq!(names, [&logs[..], lock].concat());
        for n in 0..KEPT_FILES {
            let text = std::fs::read_to_string(AuditFile::path(&dir.join("state"), n)).unwrap();
            assert!(text.len() <= 100 && text.ends_with('\n'), "{text:?}");
        }
        let newest = std::fs::read_to_string(AuditFile::path(&dir.join("state"), 0)).unwrap();
        assert!(newest.contains("\"n\":039"), "{newest}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[cfg(unix)]
    #[test]
    fn modes_are_private_and_a_symlink_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = temp_dir("modes");
        let state = dir.join("state");
        let mut f = AuditFile::new(state.clone(), 1 << 20);
        f.append(&[b"{}"]).unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&state), 0o700);
        assert_eq!(mode(&AuditFile::path(&state, 0)), 0o600);
        std::fs::remove_file(AuditFile::path(&state, 0)).unwrap();
        std::os::unix::fs::symlink(dir.join("elsewhere"), AuditFile::path(&state, 0)).unwrap();
        let mut f = AuditFile::new(state, 1 << 20);
        assert!(f.append(&[b"{}"]).is_err_and(|e| e.written == 0));
        assert!(!dir.join("elsewhere").exists());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
