//! `grants.json` in the state dir: the user's standing grants, read once at start and written
//! on every change to a temporary file that is renamed over it (a crash leaves the old book or
//! the new one, never half of one).
//!
//! Trusted only under the runtime dir's ownership rule: the dir owned by us and not writable by
//! group or others, the file a regular file (not a symlink) owned by us and not writable by
//! group or others, strict JSON of bounded size. A file that fails is moved aside
//! (`grants.json.untrusted-<ms>`) and no grant applies, with a log line; a dir that fails keeps
//! the book in memory only (nothing is written there).

use std::fs::{DirBuilder, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::Path;

use jfgui_engine::audit::time;
use jfgui_engine::consent::{GrantStore, Grants, parse};
use jfgui_proto::locations::{DirVerdict, judge_dir, judge_file, replace_private};

/// The file's name in the state dir.
pub const FILE_NAME: &str = "grants.json";

/// The grants book of state dir `dir` (`None`: no state dir known: in memory only).
pub fn open(dir: Option<&Path>) -> Grants {
    let Some(dir) = dir else {
        tracing::warn!("grants: no state directory known; grants hold until the daemon exits");
        return Grants::new(Vec::new(), None);
    };
    if let Err(e) = ensure_dir(dir) {
        tracing::error!(dir = %dir.display(), "grants: the state directory is not trusted ({e}); no grant applies and none is written");
        return Grants::new(Vec::new(), None);
    }
    let path = dir.join(FILE_NAME);
    let grants = match read_trusted(&path) {
        Ok(grants) => grants,
        Err(Untrusted::Missing) => Vec::new(),
        Err(Untrusted::Refused(reason)) => {
            let aside = dir.join(format!("{FILE_NAME}.untrusted-{}", time::now_ms()));
            match std::fs::rename(&path, &aside) {
                Ok(()) => {
                    tracing::error!(file = %path.display(), moved_to = %aside.display(), "grants: file refused ({reason}); moved aside, no grant applies")
                }
                Err(e) => {
                    tracing::error!(file = %path.display(), error = %e, "grants: file refused ({reason}) and could not be moved aside; no grant applies")
                }
            }
            Vec::new()
        }
    };
    Grants::new(grants, Some(GrantStore::new(move |bytes| replace_private(&path, bytes))))
}

/// Creates the dir 0700 if missing, then applies the rule to it.
fn ensure_dir(dir: &Path) -> io::Result<()> {
    match DirBuilder::new().recursive(true).mode(0o700).create(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e),
    }
    let meta = std::fs::symlink_metadata(dir)?;
    if !meta.is_dir() {
        return Err(io::Error::other("not a directory"));
    }
    match judge_dir(meta.uid(), meta.mode() & 0o7777, jfgui_proto::locations::uid()) {
        DirVerdict::Refuse(problem) => Err(io::Error::other(format!(
            "{problem:?}: owner uid {}, mode {:o}",
            meta.uid(),
            meta.mode() & 0o7777
        ))),
        DirVerdict::Accept | DirVerdict::Tighten => Ok(()),
    }
}

enum Untrusted {
    Missing,
    Refused(String),
}

fn read_trusted(path: &Path) -> Result<Vec<jfgui_engine::consent::Grant>, Untrusted> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NONBLOCK)
        .open(path);
    let file = match file {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(Untrusted::Missing),
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
            return Err(Untrusted::Refused("it is a symlink".into()));
        }
        Err(e) => return Err(Untrusted::Refused(format!("cannot open it: {e}"))),
    };
    let meta = file.metadata().map_err(|e| Untrusted::Refused(e.to_string()))?;
    if !meta.is_file() {
        return Err(Untrusted::Refused("not a regular file".into()));
    }
    judge_file(meta.uid(), meta.mode(), jfgui_proto::locations::uid())
        .map_err(Untrusted::Refused)?;
    let limit = jfgui_engine::consent::MAX_FILE_BYTES as u64;
    let mut bytes = Vec::new();
    file.take(limit + 1).read_to_end(&mut bytes).map_err(|e| Untrusted::Refused(e.to_string()))?;
    parse(&bytes).map_err(|e| Untrusted::Refused(e.0))
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;
    use std::path::PathBuf;

    use super::*;

    fn dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("jfgui-grants-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn grants_survive_a_restart_in_a_private_file() {
        let d = dir("restart");
        let book = open(Some(&d));
        book.add("/usr/bin/agent", "Notepad", "document.clear", "cli").unwrap();
        let meta = std::fs::metadata(d.join(FILE_NAME)).unwrap();
        assert_eq!(meta.permissions().mode() & 0o777, 0o600);
        let again = open(Some(&d));
        assert_eq!(again.list(), book.list());
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_file_others_may_write_or_that_does_not_parse_is_moved_aside() {
        for (bytes, mode) in [(&b"{\"grants\":[]}"[..], 0o666), (&b"{\"grants\":["[..], 0o600)] {
            let d = dir("aside");
            ensure_dir(&d).unwrap();
            let file = d.join(FILE_NAME);
            std::fs::write(&file, bytes).unwrap();
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(mode)).unwrap();
            let book = open(Some(&d));
            assert!(book.list().is_empty());
            assert!(!file.exists(), "moved aside");
            let aside = std::fs::read_dir(&d)
                .unwrap()
                .filter_map(Result::ok)
                .any(|e| e.file_name().to_string_lossy().starts_with("grants.json.untrusted-"));
            assert!(aside);
            std::fs::remove_dir_all(&d).unwrap();
        }
    }
}
