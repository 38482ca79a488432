//! App activation, the OS part: the engine's [`Launcher`] on Unix. It lists the installed apps
//! (launch files, judged by proto's trust rules; an ignored file is logged once per reason)
//! and starts one as the user's own app, not the daemon's child in any way that matters:
//!
//! - the argv of the launch file, exactly (no shell), read and judged again at the start;
//! - its own session (`setsid`), so no signal for the daemon's session or terminal reaches it;
//!   under systemd (the daemon runs in a unit) through `systemd-run --user --scope`, so it
//!   lives in a scope of its own and the unit stopping (idle exit, restart) does not kill it;
//! - stdin from `/dev/null`, stdout and stderr to `RUNTIME_DIR/activated/SLUG.log` (a file,
//!   not a pipe: the app keeps writing after the daemon is gone), whose last KiB a failed
//!   start reports;
//! - the daemon's environment, minus what is the daemon's own (`JFGUI_HOST_CHANNEL`, systemd's
//!   `LISTEN_*` and `NOTIFY_SOCKET`), plus `JFGUI_ACTIVATED=1`, `JFGUI_RUNTIME_DIR` (this
//!   daemon), and, when the daemon has no display (it started before the graphical session),
//!   the display variables of the first process in the requesting client's lineage that has
//!   one: an MCP client's stdio server (the gateway) gets a trimmed environment, but the
//!   client above it runs in the user's session.
//!
//! The daemon reaps what it started, and keeps reaping a released app in the background, so no
//! zombie is left; an app still running when the daemon exits is reparented, not stopped.

use std::collections::HashSet;
use std::ffi::OsString;
use std::fs::{self, File};
use std::io::{self, Read, Seek, SeekFrom};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::sync::Mutex;

use jfgui_engine::activation::{Exit, ExitFuture, Installed, Launcher, Started};
use jfgui_proto::launch::{self, ENV_ACTIVATED, SUFFIX};
use jfgui_proto::locations::ENV_RUNTIME_DIR;
use jfgui_proto::process;
use tokio::process::{Child, Command};

/// Bytes of a failed start's output that its error carries.
const STDERR_TAIL: u64 = 1024;
/// The variables that say where the user's graphical session is.
const DISPLAY_VARS: [&str; 6] = [
    "DISPLAY",
    "WAYLAND_DISPLAY",
    "XAUTHORITY",
    "DBUS_SESSION_BUS_ADDRESS",
    "XDG_SESSION_TYPE",
    "XDG_CURRENT_DESKTOP",
];
/// The daemon's own variables, never handed to an app.
const DAEMON_VARS: [&str; 5] =
    ["JFGUI_HOST_CHANNEL", "LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES", "NOTIFY_SOCKET"];

/// See the module docs.
#[derive(Debug)]
pub struct AppLauncher {
    /// Where the launch files are (`None`: no data dir, nothing is installed).
    apps_dir: Option<PathBuf>,
    runtime_dir: PathBuf,
    /// `systemd-run`, when the daemon runs under systemd and it is installed.
    systemd_run: Option<PathBuf>,
    /// The ignored files already logged, with their reason.
    logged: Mutex<HashSet<(PathBuf, String)>>,
}

impl AppLauncher {
    /// Activation from the user's launch files for the daemon of `runtime_dir`.
    pub fn new(runtime_dir: &Path) -> AppLauncher {
        // INVOCATION_ID is set by systemd for the processes of a unit.
        let systemd_run =
            std::env::var_os("INVOCATION_ID").and_then(|_| find_in_path("systemd-run"));
        let apps_dir = launch::apps_dir();
        tracing::debug!(?apps_dir, ?systemd_run, "app activation");
        AppLauncher {
            apps_dir,
            runtime_dir: runtime_dir.to_path_buf(),
            systemd_run,
            logged: Mutex::new(HashSet::new()),
        }
    }

    fn log_ignored(&self, ignored: &[launch::Ignored]) {
        let mut logged = self.logged.lock().unwrap_or_else(|e| e.into_inner());
        for i in ignored {
            if logged.insert((i.path.clone(), i.why.clone())) {
                tracing::warn!("{i}");
            }
        }
    }

    /// The launch file of `slug`, judged now.
    fn launch_file(&self, slug: &str) -> Result<launch::LaunchFile, String> {
        let dir = self.apps_dir.as_ref().ok_or("no data directory (HOME is not set)")?;
        let (_, ignored) = launch::read_dir(dir);
        if let Some(dir_problem) = ignored.iter().find(|i| i.path == *dir) {
            self.log_ignored(std::slice::from_ref(dir_problem));
            return Err(dir_problem.to_string());
        }
        launch::read_file(&dir.join(format!("{slug}{SUFFIX}"))).map_err(|e| {
            self.log_ignored(std::slice::from_ref(&e));
            e.to_string()
        })
    }

    /// `RUNTIME_DIR/activated/SLUG.log`, truncated, for the app's stdout and stderr.
    fn log_file(&self, slug: &str) -> io::Result<(PathBuf, File)> {
        let dir = self.runtime_dir.join("activated");
        match fs::DirBuilder::new().mode(0o700).create(&dir) {
            Err(e) if e.kind() != io::ErrorKind::AlreadyExists => return Err(e),
            _ => {}
        }
        let path = dir.join(format!("{slug}.log"));
        let file = fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&path)?;
        Ok((path, file))
    }

    fn command(&self, exec: &[String]) -> Command {
        let mut command = match &self.systemd_run {
            Some(systemd_run) => {
                let mut c = Command::new(systemd_run);
                c.args(["--user", "--scope", "--quiet", "--collect", "--"]);
                c
            }
            None => Command::new(&exec[0]),
        };
        let args = if self.systemd_run.is_some() { exec } else { &exec[1..] };
        command.args(args);
        command
    }
}

impl Launcher for AppLauncher {
    fn installed(&self) -> Vec<Installed> {
        let Some(dir) = &self.apps_dir else { return Vec::new() };
        let (found, ignored) = launch::read_dir(dir);
        self.log_ignored(&ignored);
        found
            .into_iter()
            .map(|f| Installed { slug: f.slug, display_name: f.display_name })
            .collect()
    }

    fn start(&self, slug: &str, requester: Option<u32>) -> Result<Box<dyn Started>, Exit> {
        let refused = |why: String| Exit { status: None, stderr: why };
        let file = self.launch_file(slug).map_err(refused)?;
        let (log, out) = self.log_file(slug).map_err(|e| refused(format!("log file: {e}")))?;
        let err = out.try_clone().map_err(|e| refused(format!("log file: {e}")))?;
        let mut command = self.command(&file.exec);
        command.stdin(Stdio::null()).stdout(out).stderr(err);
        for var in DAEMON_VARS {
            command.env_remove(var);
        }
        command.env(ENV_ACTIVATED, "1").env(ENV_RUNTIME_DIR, &self.runtime_dir);
        for (name, value) in display_env(requester) {
            command.env(name, value);
        }
        // SAFETY: setsid(2) is async-signal-safe and touches no memory of the parent.
        #[allow(unsafe_code)]
        unsafe {
            command.pre_exec(|| {
                if libc::setsid() == -1 {
                    return Err(io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = command.spawn().map_err(|e| refused(format!("{}: {e}", file.exec[0])))?;
        tracing::info!(app = slug, pid = child.id(), exec = ?file.exec, "started an installed app");
        Ok(Box::new(StartedApp { child: Some(child), log }))
    }
}

/// The display variables to give an app: none when the daemon has a display itself (the
/// environment it passes on has them), else those of the first process from `requester` up
/// that has `DISPLAY` or `WAYLAND_DISPLAY`.
fn display_env(requester: Option<u32>) -> Vec<(&'static str, OsString)> {
    let has_display = |get: &dyn Fn(&str) -> Option<OsString>| {
        get("DISPLAY").is_some() || get("WAYLAND_DISPLAY").is_some()
    };
    if has_display(&|name| std::env::var_os(name)) {
        return Vec::new();
    }
    let mut pid = requester;
    for _ in 0..process::MAX_ANCESTORS {
        let Some(current) = pid else { break };
        let get = |name: &str| process::environment_var(current, name);
        if has_display(&get) {
            tracing::debug!(pid = current, "display taken from the requester's lineage");
            return DISPLAY_VARS.iter().filter_map(|&name| Some((name, get(name)?))).collect();
        }
        pid = process::parent(current);
    }
    Vec::new()
}

/// A started app, reaped by whoever holds it.
struct StartedApp {
    child: Option<Child>,
    log: PathBuf,
}

impl StartedApp {
    fn exit(&self, status: io::Result<ExitStatus>) -> Exit {
        let status = match status {
            Ok(s) => match (s.code(), std::os::unix::process::ExitStatusExt::signal(&s)) {
                (Some(code), _) => format!("exit status {code}"),
                (None, Some(signal)) => format!("signal {signal}"),
                _ => s.to_string(),
            },
            Err(e) => format!("cannot wait for it: {e}"),
        };
        Exit { status: Some(status), stderr: tail(&self.log).unwrap_or_default() }
    }
}

impl Started for StartedApp {
    fn ended(&mut self) -> ExitFuture<'_> {
        Box::pin(async move {
            let status = match self.child.as_mut() {
                Some(child) => child.wait().await,
                None => std::future::pending().await,
            };
            self.exit(status)
        })
    }

    fn stop(&mut self) -> ExitFuture<'_> {
        Box::pin(async move {
            let status = match self.child.as_mut() {
                Some(child) => {
                    // The app leads its own process group (setsid): stop what it started too.
                    if let Some(pid) = child.id().and_then(|p| i32::try_from(p).ok()) {
                        // SAFETY: kill(2) with a negative pid signals that process group.
                        #[allow(unsafe_code)]
                        unsafe {
                            libc::kill(-pid, libc::SIGKILL);
                        }
                    }
                    let _ = child.start_kill();
                    child.wait().await
                }
                None => std::future::pending().await,
            };
            self.exit(status)
        })
    }

    fn release(mut self: Box<Self>) {
        if let Some(mut child) = self.child.take() {
            tokio::spawn(async move {
                let status = child.wait().await;
                tracing::info!(?status, "an app started for an agent exited");
            });
        }
    }
}

/// The last [`STDERR_TAIL`] bytes of `path`, as text (cut to a character boundary).
fn tail(path: &Path) -> io::Result<String> {
    let mut file = File::open(path)?;
    let len = file.metadata()?.len();
    file.seek(SeekFrom::Start(len.saturating_sub(STDERR_TAIL)))?;
    let mut bytes = Vec::new();
    file.take(STDERR_TAIL).read_to_end(&mut bytes)?;
    let text = String::from_utf8_lossy(&bytes);
    // A cut multi-byte character at the start becomes one replacement character; drop it.
    Ok(text.trim_start_matches('\u{FFFD}').to_string())
}

fn find_in_path(name: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join(name))
        .find(|path| path.is_file())
}
