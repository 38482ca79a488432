//! Where the audit log lives: a per-user state directory, never the runtime dir (which is
//! removed at logout, and the log must survive restarts).
//!
//! | OS | directory |
//! |---|---|
//! | Linux and other Unix | `$XDG_STATE_HOME/jfgui-agent` (an absolute value), else `~/.local/state/jfgui-agent` |
//! | macOS | `~/Library/Logs/jfgui-agent` |
//! | Windows | `%LOCALAPPDATA%\jfgui-agent` |
//!
//! `$JFGUI_AUDIT_DIR` (or the daemon's `--audit-dir`) overrides all of them, so tests and
//! sandboxes keep their records apart.

use std::path::PathBuf;

/// The log file's name in the directory; rotated files are `audit.jsonl.1` … `.3`.
pub const FILE_NAME: &str = "audit.jsonl";
/// The environment variable that overrides the directory.
pub const DIR_ENV: &str = "JFGUI_AUDIT_DIR";

/// The audit directory of this user, or `None` when the environment names no home for it.
pub fn default_dir() -> Option<PathBuf> {
    if let Some(dir) = absolute_env(DIR_ENV) {
        return Some(dir);
    }
    platform_dir().map(|dir| dir.join("jfgui-agent"))
}

/// `$name` when it is set to an absolute path (XDG: relative values are ignored).
fn absolute_env(name: &str) -> Option<PathBuf> {
    std::env::var_os(name).map(PathBuf::from).filter(|p| p.is_absolute())
}

#[cfg(all(unix, not(target_os = "macos")))]
fn platform_dir() -> Option<PathBuf> {
    absolute_env("XDG_STATE_HOME")
        .or_else(|| absolute_env("HOME").map(|home| home.join(".local").join("state")))
}

#[cfg(target_os = "macos")]
fn platform_dir() -> Option<PathBuf> {
    absolute_env("HOME").map(|home| home.join("Library").join("Logs"))
}

#[cfg(windows)]
fn platform_dir() -> Option<PathBuf> {
    absolute_env("LOCALAPPDATA")
}
