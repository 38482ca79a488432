//! Where the daemon's files live (ARCHITECTURE "Locations"), resolved the same way by the
//! daemon, the CLI and the host-sdk connector, so all three always agree.
//!
//! `$JFGUI_RUNTIME_DIR` if set, else `$XDG_RUNTIME_DIR/jfgui-agent`, else (macOS)
//! `$TMPDIR/jfgui-agent`, else `/tmp/jfgui-agent-UID`. A set but relative or empty variable is
//! an error, never a silent fallback (FAULTS A14). Ownership and modes are checked by the
//! daemon when it creates or adopts the directory, not here.

#[cfg(windows)]
mod windows;

use std::ffi::OsString;
use std::fmt;
use std::format;
use std::path::PathBuf;
use std::string::String;

#[cfg(windows)]
pub use windows::current_user_sid;

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
    /// The endpoint of the app with this slug, the twin of `apps/SLUG.sock`.
    App(&'a str),
}

/// `\\.\pipe\jfgui-agent-<SID>-control`, `-host` or `-app-SLUG` (ARCHITECTURE "Locations"):
/// the daemon creates these names and the connector opens them, so both build them here. The
/// `app-` prefix keeps a slug from ever naming the control or host pipe.
pub fn pipe_name(sid: &str, pipe: Pipe<'_>) -> String {
    let prefix = r"\\.\pipe\jfgui-agent-";
    match pipe {
        Pipe::Control => format!("{prefix}{sid}-control"),
        Pipe::Host => format!("{prefix}{sid}-host"),
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
    /// `$TMPDIR/jfgui-agent` (macOS) or `/tmp/jfgui-agent-UID`; the daemon warns about it.
    Fallback,
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

/// Resolves the runtime dir from the process environment.
pub fn runtime_dir() -> Result<RuntimeDir, LocationError> {
    resolve(|name| std::env::var_os(name))
}

/// Resolves the runtime dir from `env` (a lookup function, so tests need not touch the
/// process environment).
pub fn resolve(env: impl Fn(&str) -> Option<OsString>) -> Result<RuntimeDir, LocationError> {
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
    Ok(RuntimeDir { path: fallback(&env)?, source: Source::Fallback })
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

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<OsString> + 'a {
        move |name| vars.iter().find(|(k, _)| *k == name).map(|(_, v)| OsString::from(v))
    }

    #[test]
    fn explicit_wins() {
        let d = resolve(env(&[("JFGUI_RUNTIME_DIR", "/x/rt"), ("XDG_RUNTIME_DIR", "/run/user/1")]))
            .unwrap();
        assert_eq!(d, RuntimeDir { path: "/x/rt".into(), source: Source::Explicit });
        assert_eq!(d.endpoint("notepad"), PathBuf::from("/x/rt/apps/notepad.sock"));
    }

    #[test]
    fn xdg_then_fallback() {
        let d = resolve(env(&[("XDG_RUNTIME_DIR", "/run/user/1")])).unwrap();
        assert_eq!(d.path, PathBuf::from("/run/user/1/jfgui-agent"));
        let d = resolve(env(&[])).unwrap();
        assert_eq!(d.source, Source::Fallback);
    }

    #[test]
    fn pipe_names_are_per_user_and_app_names_cannot_collide() {
        let sid = "S-1-5-21-1-2-3-1001";
        assert_eq!(
            pipe_name(sid, Pipe::Control),
            r"\\.\pipe\jfgui-agent-S-1-5-21-1-2-3-1001-control"
        );
        assert_eq!(pipe_name(sid, Pipe::Host), r"\\.\pipe\jfgui-agent-S-1-5-21-1-2-3-1001-host");
        assert_eq!(
            pipe_name(sid, Pipe::App("host")),
            r"\\.\pipe\jfgui-agent-S-1-5-21-1-2-3-1001-app-host"
        );
    }

    #[test]
    fn relative_or_empty_is_refused() {
        for bad in ["rel/dir", ""] {
            let e = resolve(env(&[("XDG_RUNTIME_DIR", bad)])).unwrap_err();
            assert_eq!(e.variable, "XDG_RUNTIME_DIR");
            let e = resolve(env(&[("JFGUI_RUNTIME_DIR", bad)])).unwrap_err();
            assert_eq!(e.variable, "JFGUI_RUNTIME_DIR");
        }
    }
}
