//! Where the daemon's files live (docs/PROTOCOL.md, "The runtime directory"), resolved by one function,
//! [`runtime_dir`], that the daemon, the CLI and the host-sdk connector all call, so they always
//! agree; and the checks a client makes before it trusts what it finds there (`trust`).
//!
//! The rule, first match wins:
//!
//! 1. `$JFGUI_RUNTIME_DIR` (tests use it);
//! 2. `$XDG_RUNTIME_DIR/jfgui-agent`;
//! 3. Linux and other Unix except macOS: `/run/user/UID/jfgui-agent` when `/run/user/UID` is a
//!    directory owned by UID and not writable by group or others. This is systemd's
//!    `XDG_RUNTIME_DIR`, where the packaged user units put the daemon (`%t/jfgui-agent`). The
//!    step exists because the official MCP SDKs start stdio servers with only `HOME LOGNAME
//!    PATH SHELL TERM USER` in their environment: without it, a gateway an MCP client starts
//!    would look in `/tmp` and miss the daemon systemd started;
//! 4. `/tmp/jfgui-agent-UID` (macOS: `$TMPDIR/jfgui-agent`, the per-user private `$TMPDIR`;
//!    Windows: `%LOCALAPPDATA%\jfgui-agent`, which holds only the lock file there).
//!
//! A set but relative or empty variable is an error, never a silent fallback to
//! another directory.
//! The daemon checks ownership and modes when it creates or adopts the directory; clients check
//! them again before connecting (`trust`).

mod trust;
#[cfg(windows)]
mod windows;

use std::ffi::OsString;
use std::fmt;
use std::format;
use std::path::{Path, PathBuf};
use std::string::String;

pub use trust::{DirProblem, DirVerdict, Refusal, judge_dir, judge_file};
#[cfg(unix)]
pub use trust::{check_dir, check_peer, check_socket_dirs, peer_uid};
#[cfg(windows)]
pub use windows::{check_pipe_server, current_user_sid};

/// Overrides the runtime dir (tests use it).
pub const ENV_RUNTIME_DIR: &str = "JFGUI_RUNTIME_DIR";
/// Set to `stdio` by `jfgui-agent headless`: the app speaks the host channel on stdin/stdout.
pub const ENV_HOST_CHANNEL: &str = "JFGUI_HOST_CHANNEL";
/// The single-instance lock file.
pub const LOCK_FILE: &str = "agentd.lock";
/// The control socket (CLI: list, status).
pub const CONTROL_SOCKET: &str = "agentd.sock";
/// The socket apps register on.
pub const HOST_SOCKET: &str = "host.sock";
/// The all-apps MCP socket (`jfgui-agent mcp`).
pub const MCP_SOCKET: &str = "mcp.sock";
/// Directory of the per-app endpoint sockets, `apps/SLUG.sock`.
pub const APPS_DIR: &str = "apps";
/// Suffix of endpoint sockets.
pub const ENDPOINT_SUFFIX: &str = ".sock";

/// One of the daemon's named pipes (Windows, where endpoints are pipes, not sockets).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pipe<'a> {
    /// The control pipe (CLI: list, status), the twin of `agentd.sock`.
    Control,
    /// The pipe apps register on, the twin of `host.sock`.
    Host,
    /// The all-apps MCP pipe, the twin of `mcp.sock`.
    Mcp,
    /// The endpoint of the app with this slug, the twin of `apps/SLUG.sock`.
    App(&'a str),
}

/// `\\.\pipe\jfgui-agent-<SID>-control`, `-host`, `-mcp` or `-app-SLUG` (ARCHITECTURE "Locations"):
/// the daemon creates these names and the connector opens them, so both build them here. The
/// `app-` prefix keeps a slug from ever naming the control or host pipe.
pub fn pipe_name(sid: &str, pipe: Pipe<'_>) -> String {
    let prefix = r"\\.\pipe\jfgui-agent-";
    match pipe {
        Pipe::Control => format!("{prefix}{sid}-control"),
        Pipe::Host => format!("{prefix}{sid}-host"),
        Pipe::Mcp => format!("{prefix}{sid}-mcp"),
        Pipe::App(slug) => format!("{prefix}{sid}-app-{slug}"),
    }
}

/// Which rule chose the runtime dir.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// `$JFGUI_RUNTIME_DIR`.
    Explicit,
    /// `$XDG_RUNTIME_DIR/jfgui-agent`.
    Xdg,
    /// `/run/user/UID/jfgui-agent`, found without `XDG_RUNTIME_DIR` in the environment.
    RunUser,
    /// `$TMPDIR/jfgui-agent` (macOS) or `/tmp/jfgui-agent-UID`; the daemon warns about it.
    Fallback,
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Source::Explicit => "from JFGUI_RUNTIME_DIR",
            Source::Xdg => "from XDG_RUNTIME_DIR",
            Source::RunUser => "from /run/user/UID, since XDG_RUNTIME_DIR is not set",
            Source::Fallback => {
                "as the fallback, since neither JFGUI_RUNTIME_DIR nor XDG_RUNTIME_DIR is set \
                 and there is no private /run/user/UID"
            }
        })
    }
}

/// The resolved runtime dir.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuntimeDir {
    /// Absolute path.
    pub path: PathBuf,
    /// How it was chosen.
    pub source: Source,
}

impl RuntimeDir {
    /// `agentd.sock`.
    pub fn control_socket(&self) -> PathBuf {
        self.path.join(CONTROL_SOCKET)
    }
    /// `host.sock`.
    pub fn host_socket(&self) -> PathBuf {
        self.path.join(HOST_SOCKET)
    }
    /// `mcp.sock`.
    pub fn mcp_socket(&self) -> PathBuf {
        self.path.join(MCP_SOCKET)
    }
    /// `apps/`.
    pub fn apps_dir(&self) -> PathBuf {
        self.path.join(APPS_DIR)
    }
    /// `apps/SLUG.sock`.
    pub fn endpoint(&self, slug: &str) -> PathBuf {
        self.apps_dir().join(format!("{slug}{ENDPOINT_SUFFIX}"))
    }
}

/// A variable that is set but unusable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocationError {
    /// The variable.
    pub variable: &'static str,
    /// Its value.
    pub value: OsString,
}

impl fmt::Display for LocationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} is set to {:?}, which is not an absolute path; set it to an absolute directory or unset it",
            self.variable, self.value
        )
    }
}

impl std::error::Error for LocationError {}

/// Resolves the runtime dir from the process environment and, for step 3, the file system.
pub fn runtime_dir() -> Result<RuntimeDir, LocationError> {
    resolve(|name| std::env::var_os(name), private_dir)
}

/// Whether `/run/user/UID` may hold the runtime dir: the same check a client applies to the
/// runtime dir itself.
#[cfg(unix)]
fn private_dir(path: &Path) -> bool {
    check_dir(path).is_ok()
}

#[cfg(windows)]
fn private_dir(_path: &Path) -> bool {
    false
}

/// The rule of the module docs over `env` (a variable lookup) and `private` (the check of
/// `/run/user/UID`), both passed in so tests need not touch the process environment or `/run`.
fn resolve(
    env: impl Fn(&str) -> Option<OsString>,
    private: impl Fn(&Path) -> bool,
) -> Result<RuntimeDir, LocationError> {
    let absolute = |variable: &'static str| -> Result<Option<PathBuf>, LocationError> {
        match env(variable) {
            None => Ok(None),
            Some(value) => {
                let path = PathBuf::from(&value);
                if path.is_absolute() {
                    Ok(Some(path))
                } else {
                    Err(LocationError { variable, value })
                }
            }
        }
    };
    if let Some(path) = absolute(ENV_RUNTIME_DIR)? {
        return Ok(RuntimeDir { path, source: Source::Explicit });
    }
    if let Some(xdg) = absolute("XDG_RUNTIME_DIR")? {
        return Ok(RuntimeDir { path: xdg.join("jfgui-agent"), source: Source::Xdg });
    }
    if let Some(path) = run_user(&private) {
        return Ok(RuntimeDir { path, source: Source::RunUser });
    }
    Ok(RuntimeDir { path: fallback(&env)?, source: Source::Fallback })
}

/// `/run/user/UID/jfgui-agent`: step 3 of the rule, and where the packaged systemd user units
/// run the daemon (`%t/jfgui-agent`), whether or not this machine has it.
#[cfg(unix)]
pub fn run_user_runtime_dir() -> PathBuf {
    PathBuf::from(format!("/run/user/{}/jfgui-agent", uid()))
}

/// [`run_user_runtime_dir`] when `/run/user/UID` passes `private`.
#[cfg(all(unix, not(target_os = "macos")))]
fn run_user(private: &impl Fn(&Path) -> bool) -> Option<PathBuf> {
    let dir = run_user_runtime_dir();
    dir.parent().is_some_and(private).then_some(dir)
}

/// macOS has no `/run/user`; Windows keeps its own layout.
#[cfg(any(windows, target_os = "macos"))]
fn run_user(_private: &impl Fn(&Path) -> bool) -> Option<PathBuf> {
    None
}

#[cfg(target_os = "macos")]
fn fallback(env: &impl Fn(&str) -> Option<OsString>) -> Result<PathBuf, LocationError> {
    // The per-user $TMPDIR is already private (0700) on macOS.
    match env("TMPDIR") {
        Some(value) if PathBuf::from(&value).is_absolute() => {
            Ok(PathBuf::from(value).join("jfgui-agent"))
        }
        Some(value) => Err(LocationError { variable: "TMPDIR", value }),
        None => Ok(PathBuf::from(format!("/tmp/jfgui-agent-{}", uid()))),
    }
}

#[cfg(all(unix, not(target_os = "macos")))]
fn fallback(_env: &impl Fn(&str) -> Option<OsString>) -> Result<PathBuf, LocationError> {
    Ok(PathBuf::from(format!("/tmp/jfgui-agent-{}", uid())))
}

#[cfg(windows)]
fn fallback(env: &impl Fn(&str) -> Option<OsString>) -> Result<PathBuf, LocationError> {
    // Windows endpoints are named pipes; the directory only holds the lock file.
    match env("LOCALAPPDATA") {
        Some(value) if PathBuf::from(&value).is_absolute() => {
            Ok(PathBuf::from(value).join("jfgui-agent"))
        }
        Some(value) => Err(LocationError { variable: "LOCALAPPDATA", value }),
        None => Ok(std::env::temp_dir().join("jfgui-agent")),
    }
}

/// The real user id of this process.
#[cfg(unix)]
pub fn uid() -> u32 {
    // SAFETY: getuid() has no preconditions and cannot fail (POSIX).
    #[allow(unsafe_code)]
    unsafe {
        libc::getuid()
    }
}

/// Replaces `path` with `bytes`, readable and writable by this user only (`0600` on Unix): a
/// fresh temporary file beside it, written and flushed to disk, renamed over it, so a crash
/// leaves the old file or the new one, never half of one (the grants book, launch files).
pub fn replace_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("file");
    let temp = path.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    let _ = std::fs::remove_file(&temp); // left by a crash of an earlier process of this pid
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600).custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC);
    }
    let written = options.open(&temp).and_then(|mut file| {
        file.write_all(bytes)?;
        file.sync_all()
    });
    written.and_then(|()| std::fs::rename(&temp, path)).inspect_err(|_| {
        let _ = std::fs::remove_file(&temp);
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<OsString> + 'a {
        move |name| vars.iter().find(|(k, _)| *k == name).map(|(_, v)| OsString::from(v))
    }

    fn resolve_env(vars: &[(&str, &str)]) -> Result<RuntimeDir, LocationError> {
        resolve(env(vars), |_| panic!("/run/user must not be consulted"))
    }

    #[test]
    fn explicit_wins() {
        let d = resolve_env(&[("JFGUI_RUNTIME_DIR", "/x/rt"), ("XDG_RUNTIME_DIR", "/run/user/1")])
            .unwrap();
        assert_eq!(d, RuntimeDir { path: "/x/rt".into(), source: Source::Explicit });
        assert_eq!(d.endpoint("notepad"), PathBuf::from("/x/rt/apps/notepad.sock"));
    }

    #[test]
    fn xdg_then_run_user_then_fallback() {
        let d = resolve_env(&[("XDG_RUNTIME_DIR", "/run/user/1")]).unwrap();
        assert_eq!(d, RuntimeDir { path: "/run/user/1/jfgui-agent".into(), source: Source::Xdg });
        let d = resolve(env(&[]), |_| false).unwrap();
        assert_eq!(d.source, Source::Fallback);
        #[cfg(all(unix, not(target_os = "macos")))]
        {
            assert_eq!(d.path, PathBuf::from(format!("/tmp/jfgui-agent-{}", uid())));
            let base = PathBuf::from(format!("/run/user/{}", uid()));
            let d = resolve(env(&[]), |p| p == base).unwrap();
            assert_eq!(d, RuntimeDir { path: base.join("jfgui-agent"), source: Source::RunUser });
        }
    }

    /// The check that admits `/run/user/UID` is the client's directory check: ours, not
    /// writable by group or others, not a symlink.
    #[cfg(unix)]
    #[test]
    fn run_user_must_be_a_private_dir_of_ours() {
        use std::os::unix::fs::PermissionsExt;
        let base = std::env::temp_dir().join(format!("jfgui-run-user-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        std::fs::create_dir(&base).unwrap();
        for (mode, ok) in [(0o700, true), (0o755, true), (0o775, false), (0o1777, false)] {
            std::fs::set_permissions(&base, std::fs::Permissions::from_mode(mode)).unwrap();
            assert_eq!(private_dir(&base), ok, "{mode:o}");
        }
        let link = base.with_extension("link");
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(&base, &link).unwrap();
        std::fs::set_permissions(&base, std::fs::Permissions::from_mode(0o700)).unwrap();
        assert!(!private_dir(&link), "a symlink is not the dir");
        assert!(!private_dir(&base.join("missing")));
        std::fs::remove_file(&link).unwrap();
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn pipe_names_are_per_user_and_app_names_cannot_collide() {
        let sid = "S-1-5-21-1-2-3-1001";
        assert_eq!(
            pipe_name(sid, Pipe::Control),
            r"\\.\pipe\jfgui-agent-S-1-5-21-1-2-3-1001-control"
        );
        assert_eq!(pipe_name(sid, Pipe::Host), r"\\.\pipe\jfgui-agent-S-1-5-21-1-2-3-1001-host");
        assert_eq!(pipe_name(sid, Pipe::Mcp), r"\\.\pipe\jfgui-agent-S-1-5-21-1-2-3-1001-mcp");
        assert_eq!(
            pipe_name(sid, Pipe::App("host")),
            r"\\.\pipe\jfgui-agent-S-1-5-21-1-2-3-1001-app-host"
        );
    }

    #[test]
    fn relative_or_empty_is_refused() {
        for bad in ["rel/dir", ""] {
            let e = resolve_env(&[("XDG_RUNTIME_DIR", bad)]).unwrap_err();
            assert_eq!(e.variable, "XDG_RUNTIME_DIR");
            let e = resolve_env(&[("JFGUI_RUNTIME_DIR", bad)]).unwrap_err();
            assert_eq!(e.variable, "JFGUI_RUNTIME_DIR");
        }
    }
}
