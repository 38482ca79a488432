//! The daemon's life on Windows: named pipes in the user's namespace
//! (`\\.\pipe\jfgui-agent-<SID>-control`, `-host`, `-app-SLUG`; see `transport::windows`).
//!
//! Single instance: the control pipe is created first with `FILE_FLAG_FIRST_PIPE_INSTANCE`;
//! if the name exists, another daemon of this user runs and we exit 4. There is no runtime
//! dir to create or check, and pipes vanish with their last handle, so a crashed daemon
//! leaves nothing stale. Stop: Ctrl-C / Ctrl-Break / console close, or `--idle-exit`.

use std::path::PathBuf;
use std::time::Duration;

use tokio::sync::watch;

use super::accept::accept_loop;
use super::gate::{Class, Gate};
use super::sessions::Sessions;
use super::{SHUTDOWN_SLACK, demo, idle};
use crate::config::{Config, exit, to_usize};
use crate::transport::{Listener, PipeSpace, is_taken};

/// Pipe names (ARCHITECTURE "Locations": the control socket `agentd.sock` and `host.sock` on
/// Unix).
const CONTROL_PIPE: &str = "control";
const HOST_PIPE: &str = "host";

/// Runs the daemon until it stops; returns the process exit status (see `config::exit`).
pub fn run<S, F>(config: Config, make: F) -> u8
where
    S: Sessions,
    F: FnOnce(&Config, Option<&std::path::Path>, usize) -> S,
{
    let demo_app = if config.demo {
        match demo::locate() {
            Ok(app) => Some(app),
            Err(message) => {
                tracing::error!("{message}");
                return exit::RUNTIME;
            }
        }
    } else {
        None
    };
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => {
            tracing::error!("cannot start the async runtime: {e}");
            return exit::RUNTIME;
        }
    };
    runtime.block_on(serve(config, make, demo_app))
}

async fn serve<S, F>(config: Config, make: F, demo_app: Option<PathBuf>) -> u8
where
    S: Sessions,
    F: FnOnce(&Config, Option<&std::path::Path>, usize) -> S,
{
    let space = match PipeSpace::new() {
        Ok(space) => space,
        Err(e) => {
            tracing::error!("cannot prepare the user's pipe security descriptor: {e}");
            return exit::RUNTIME;
        }
    };
    let control = match Listener::bind(&space, CONTROL_PIPE) {
        Ok(l) => l,
        Err(e) if is_taken(&e) => {
            tracing::error!(
                "jfgui-agentd is already running (its control pipe {} exists)",
                space.pipe_name(CONTROL_PIPE)
            );
            return exit::ALREADY_RUNNING;
        }
        Err(e) => {
            tracing::error!("{}: {e}", space.pipe_name(CONTROL_PIPE));
            return exit::RUNTIME;
        }
    };
    let host = match Listener::bind(&space, HOST_PIPE) {
        Ok(l) => l,
        Err(e) => {
            tracing::error!("{}: {e}", space.pipe_name(HOST_PIPE));
            return exit::RUNTIME;
        }
    };
    // Pipe names have room for any slug the spec allows (48 characters).
    let sessions = make(&config, None, usize::MAX);
    let gate = Gate::new(to_usize(config.max_clients), to_usize(config.max_apps));
    let (stop_tx, stop_rx) = watch::channel(false);
    let control_task = tokio::spawn(accept_loop(control, gate.clone(), Class::Client, {
        let s = sessions.clone();
        move |stream, peer| s.clone().serve_control(stream, peer)
    }));
    let host_task = tokio::spawn(accept_loop(host, gate.clone(), Class::App, {
        let s = sessions.clone();
        move |stream, peer| s.clone().serve_app(stream, peer)
    }));
    let endpoints_task = tokio::spawn(crate::endpoints::run(
        sessions.clone(),
        std::sync::Arc::new(space.clone()),
        gate.clone(),
        stop_rx,
    ));
    tracing::info!(control = %space.pipe_name(CONTROL_PIPE), pid = std::process::id(), "jfgui-agentd listening");
    let demo = demo_app.and_then(|app| match demo::spawn(&app, None) {
        Ok(child) => Some(child),
        Err(e) => {
            tracing::error!(app = %app.display(), "demo: cannot start the example app: {e}");
            None
        }
    });

    tokio::select! {
        r = tokio::signal::ctrl_c() => match r {
            Ok(()) => tracing::info!("Ctrl-C: shutting down"),
            Err(e) => tracing::error!("cannot wait for Ctrl-C ({e}); shutting down"),
        },
        () = idle(gate.live(), config.idle_exit.map(Duration::from_secs)) => {
            tracing::info!("no app and no client for --idle-exit; shutting down");
        }
    }
    control_task.abort();
    host_task.abort();
    let _ = stop_tx.send(true);
    let _ = endpoints_task.await;
    if tokio::time::timeout(config.shutdown_drain + SHUTDOWN_SLACK, sessions.shutdown())
        .await
        .is_err()
    {
        tracing::warn!("the engine did not finish shutting down in time");
    }
    if let Some(child) = demo {
        demo::stop(child).await;
    }
    exit::OK
}
