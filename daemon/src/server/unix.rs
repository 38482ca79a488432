//! The daemon's life on Unix: runtime dir, lock, sockets, engine, stop.
//!
//! Start: umask 077 → runtime dir (verified through its fd, then the working directory) →
//! `agentd.lock` → stale sockets removed → `agentd.sock`, `host.sock`, `mcp.sock` bound → engine
//! → endpoint sockets follow the engine's events.
//!
//! Stop (SIGTERM, SIGINT, `--idle-exit`, runtime dir removed): stop accepting and unlink
//! `agentd.sock`, `host.sock`, `mcp.sock` and every endpoint (new clients get "no such file" at once
//! instead of hanging), then `shutdown()` the engine (apps told `bye`, in-flight calls answered
//! within the drain), then unlink and release the lock.
//!
//! Socket activation (`socket_activation.rs`): `agentd.sock` and `host.sock` come from systemd
//! instead of being bound, are never unlinked, and `--idle-exit` defaults to 30 s; `mcp.sock`
//! is bound by the daemon either way.
//!
//! Runtime dir removed under us (logout cleanup): watched with inotify on Linux (no wake-up while
//! idle), checked every `--dir-check` elsewhere (`dir_watch.rs`); a missing or replaced dir
//! makes the daemon exit with status 1, so it never keeps serving sockets nobody can find.

use std::path::PathBuf;
use std::sync::Arc;

use jfgui_engine::Counter;
use jfgui_proto::locations::{self, CONTROL_SOCKET, HOST_SOCKET, MCP_SOCKET};
use tokio::sync::watch;

use super::dir_watch::dir_gone;
use super::endpoints::EndpointSpace;
use super::gate::{self, Gate};
use super::{Listeners, SHUTDOWN_SLACK, Service, demo, idle, listen};
use crate::app_activation::AppLauncher;
use crate::config::{Config, exit, to_usize};
use crate::lock::{Lock, LockError};
use crate::runtime_dir::{DirError, Opened, RuntimeDir};
use crate::socket_activation::Inherited;
use crate::transport::{Listener, restrict_umask};

/// Runs the daemon until it stops; returns the process exit status (see `config::exit`).
/// The engine is built once the runtime dir is known and locked; `log_dropped` is the log
/// writer's count of dropped lines, which it reports.
pub fn run(config: Config, log_dropped: Counter) -> u8 {
    // First, while the process has a single thread (it edits the environment).
    let inherited = match crate::socket_activation::take() {
        Ok(inherited) => inherited,
        Err(e) => {
            tracing::error!("{e}");
            return exit::ACTIVATION_REFUSED;
        }
    };
    restrict_umask();
    let demo_app = match demo::locate_if_wanted(config.demo) {
        Ok(app) => app,
        Err(code) => return code,
    };
    let path = match resolve(&config) {
        Ok(path) => path,
        Err(message) => {
            tracing::error!("{message}");
            return exit::RUNTIME_DIR_REFUSED;
        }
    };
    let rt = match open_dir(&path) {
        Ok(rt) => Arc::new(rt),
        Err(e) => {
            tracing::error!("{e}");
            return exit::RUNTIME_DIR_REFUSED;
        }
    };
    let lock = match Lock::acquire(&rt) {
        Ok(lock) => lock,
        Err(e @ LockError::AlreadyRunning { .. }) => {
            tracing::error!("{e}");
            return exit::ALREADY_RUNNING;
        }
        Err(e) => {
            tracing::error!("{e}");
            return exit::RUNTIME_DIR_REFUSED;
        }
    };
    let runtime = match super::runtime(&config) {
        Ok(runtime) => runtime,
        Err(e) => {
            tracing::error!("cannot start the async runtime: {e}");
            lock.remove();
            return exit::RUNTIME;
        }
    };
    let code = runtime.block_on(serve(config, rt, log_dropped, demo_app, inherited));
    lock.remove();
    code
}

fn resolve(config: &Config) -> Result<PathBuf, String> {
    if let Some(dir) = &config.runtime_dir {
        return Ok(dir.clone());
    }
    let found =
        locations::runtime_dir().map_err(|e| format!("cannot choose a runtime dir: {e}"))?;
    if found.source == locations::Source::Fallback {
        tracing::warn!(runtime_dir = %found.path.display(),
            "using the fallback runtime dir: neither JFGUI_RUNTIME_DIR nor XDG_RUNTIME_DIR is \
             set and there is no private /run/user/UID; clients resolve the same dir only under \
             the same conditions");
    } else {
        tracing::debug!(runtime_dir = %found.path.display(), "runtime dir chosen {}", found.source);
    }
    Ok(found.path)
}

fn open_dir(path: &std::path::Path) -> Result<RuntimeDir, DirError> {
    let (rt, opened) = RuntimeDir::open(path)?;
    match opened {
        Opened::Created => {
            tracing::debug!(runtime_dir = %path.display(), "created the runtime dir")
        }
        Opened::Adopted => {
            tracing::debug!(runtime_dir = %path.display(), "using the existing runtime dir")
        }
        Opened::Tightened { old_mode } => tracing::warn!(runtime_dir = %path.display(),
            "the runtime dir had mode {old_mode:04o}; tightened it to 0700"),
    }
    Ok(rt)
}

/// Why the daemon stopped.
#[derive(Debug)]
enum Stop {
    Signal(&'static str),
    Idle,
    DirGone,
}

async fn serve(
    config: Config,
    rt: Arc<RuntimeDir>,
    log_dropped: Counter,
    demo_app: Option<PathBuf>,
    inherited: Option<Inherited>,
) -> u8 {
    // Socket activation: systemd owns agentd.sock and host.sock (never unlinked here) and
    // restarts the daemon on the next connection after an idle exit.
    let activated = inherited.is_some();
    let idle_after = crate::socket_activation::idle_exit(config.idle_exit, activated);
    // Before any socket exists, so a SIGTERM during start-up still cleans up.
    let mut signals = match Signals::new() {
        Ok(s) => s,
        Err(e) => {
            tracing::error!("cannot install signal handlers: {e}");
            return exit::RUNTIME;
        }
    };
    let bound = rt.ensure_apps_dir().and_then(|()| {
        super::endpoints::remove_stale(&rt);
        let (control, host) = match inherited {
            Some(Inherited { host, control }) => (
                Listener::adopt(&rt, CONTROL_SOCKET, control)?,
                Listener::adopt(&rt, HOST_SOCKET, host)?,
            ),
            None => {
                let control = Listener::bind(&rt, CONTROL_SOCKET)?;
                match Listener::bind(&rt, HOST_SOCKET) {
                    Ok(host) => (control, host),
                    Err(e) => {
                        // Leave nothing behind when refusing to start.
                        drop(control);
                        let _ = crate::runtime_dir::remove_stale_socket(&rt, CONTROL_SOCKET);
                        return Err(e);
                    }
                }
            }
        };
        // mcp.sock is always ours to bind (also under socket activation): a gateway that finds
        // no daemon keeps retrying by itself.
        match Listener::bind(&rt, MCP_SOCKET) {
            Ok(mcp) => Ok(Listeners { control, host, mcp }),
            Err(e) => {
                drop((control, host));
                if !activated {
                    for name in [CONTROL_SOCKET, HOST_SOCKET] {
                        let _ = crate::runtime_dir::remove_stale_socket(&rt, name);
                    }
                }
                Err(e)
            }
        }
    });
    let listeners = match bound {
        Ok(listeners) => listeners,
        Err(e) => {
            tracing::error!("{e}");
            return exit::RUNTIME_DIR_REFUSED;
        }
    };
    raise_descriptor_limit(&config);
    let engine = Service::new(
        &config,
        Some(rt.path()),
        rt.naming(),
        rt.max_slug_len(),
        log_dropped,
        Some(Arc::new(AppLauncher::new(rt.path()))),
    );
    let gate = Gate::new(to_usize(config.max_clients), to_usize(config.max_apps));
    let (stop_tx, stop_rx) = watch::channel(false);

    // Spare handles to resume accepting if a connection slips in as the idle timer fires.
    let mut spare = idle_after.and_then(|_| spares(&listeners));
    let mut accepting = listen(listeners, &gate, &engine);
    let endpoints_task =
        tokio::spawn(super::endpoints::run(engine.clone(), rt.clone(), gate.clone(), stop_rx));
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    tokio::spawn(super::trim::run(gate.live()));
    // The effective idle exit is logged so it can be checked without waiting for it.
    let idle_exit = idle_after.map_or_else(|| "off".to_string(), |d| format!("{}s", d.as_secs()));
    tracing::info!(runtime_dir = %rt.path().display(), pid = std::process::id(), activated,
        idle_exit = %idle_exit, "jfgui-agentd listening");
    crate::socket_activation::notify_ready();

    let demo = demo_app.and_then(|app| demo::start(&app, Some(rt.path())));

    let stop = loop {
        let stop = tokio::select! {
            name = signals.next() => Stop::Signal(name),
            () = idle(gate.live(), idle_after) => Stop::Idle,
            () = dir_gone(&rt, config.dir_check) => Stop::DirGone,
        };
        for task in &accepting {
            task.abort();
        }
        // An accept task may have run between the timer and this point: a connection it
        // took is live now and must be served, not dropped; accepting resumes. Connections
        // not accepted yet stay queued (for systemd's next activation when activated).
        if matches!(stop, Stop::Idle)
            && *gate.live().borrow() > 0
            && let Some(listeners) = spare.take()
        {
            tracing::debug!("a connection arrived as the idle timer fired; staying up");
            spare = spares(&listeners);
            accepting = listen(listeners, &gate, &engine);
            continue;
        }
        break stop;
    };
    crate::socket_activation::notify_stopping();
    match &stop {
        Stop::Signal(name) => tracing::info!("{name}: shutting down"),
        Stop::Idle => tracing::info!("no app and no client for --idle-exit; shutting down"),
        Stop::DirGone => tracing::error!(runtime_dir = %rt.path().display(),
            "the runtime dir was removed or replaced; shutting down"),
    }

    let ours: &[&str] =
        if activated { &[MCP_SOCKET] } else { &[CONTROL_SOCKET, HOST_SOCKET, MCP_SOCKET] };
    for name in ours {
        if let Err(e) = crate::runtime_dir::remove_stale_socket(&rt, name) {
            tracing::warn!("{e}");
        }
    }
    let _ = stop_tx.send(true);
    let _ = endpoints_task.await;
    let drain = config.shutdown_drain + SHUTDOWN_SLACK;
    if tokio::time::timeout(drain, engine.shutdown()).await.is_err() {
        tracing::warn!("the engine did not finish shutting down in time");
    }
    if let Some(child) = demo {
        demo::stop(child).await;
    }
    match stop {
        Stop::Signal(_) | Stop::Idle => exit::OK,
        Stop::DirGone => exit::RUNTIME,
    }
}

/// Second handles on every listener, or `None` (then an idle exit cannot be called off).
fn spares(listeners: &Listeners) -> Option<Listeners> {
    let Listeners { control, host, mcp } = listeners;
    match (control.try_clone(), host.try_clone(), mcp.try_clone()) {
        (Ok(control), Ok(host), Ok(mcp)) => Some(Listeners { control, host, mcp }),
        (Err(e), _, _) | (_, Err(e), _) | (_, _, Err(e)) => {
            tracing::warn!(error = %e, "cannot duplicate the listening sockets");
            None
        }
    }
}

/// Descriptors the caps allow at once: clients, app connections with handshake headroom, one
/// endpoint listener per app, plus a margin for the runtime's own (listeners, epoll, lock,
/// signal pipe, demo child).
fn raise_descriptor_limit(config: &Config) {
    let needed = config.max_clients
        + 2 * config.max_apps
        + gate::HANDSHAKE_HEADROOM as u64
        + DESCRIPTOR_MARGIN;
    match crate::transport::raise_fd_limit(needed) {
        Ok(limit) if limit < needed => tracing::warn!(
            limit,
            needed,
            "the descriptor limit is below what the connection caps allow; beyond it new \
             connections wait in the backlog"
        ),
        Ok(_) => {}
        Err(e) => tracing::warn!("cannot read or raise the descriptor limit: {e}"),
    }
}

/// Descriptors beyond the connection caps (see [`raise_descriptor_limit`]).
const DESCRIPTOR_MARGIN: u64 = 64;

/// The stop signals: SIGTERM and SIGINT.
struct Signals {
    term: tokio::signal::unix::Signal,
    int: tokio::signal::unix::Signal,
}

impl Signals {
    fn new() -> std::io::Result<Signals> {
        use tokio::signal::unix::{SignalKind, signal};
        Ok(Signals {
            term: signal(SignalKind::terminate())?,
            int: signal(SignalKind::interrupt())?,
        })
    }

    async fn next(&mut self) -> &'static str {
        tokio::select! {
            _ = self.term.recv() => "SIGTERM",
            _ = self.int.recv() => "SIGINT",
        }
    }
}
