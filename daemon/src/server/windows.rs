//! The daemon's life on Windows: named pipes in the user's namespace
//! (`\\.\pipe\jfgui-agent-<SID>-control`, `-host`, `-mcp`, `-app-SLUG`; see `transport::windows`).
//!
//! Single instance: the control pipe is created first with `FILE_FLAG_FIRST_PIPE_INSTANCE`;
//! if the name exists, another daemon of this user runs and we exit 4. There is no runtime
//! dir to create or check, and pipes vanish with their last handle, so a crashed daemon
//! leaves nothing stale. Stop: Ctrl-C / Ctrl-Break / console close, or `--idle-exit`.

use std::path::PathBuf;
use std::time::Duration;

use jfgui_engine::Counter;
use jfgui_proto::locations::Pipe;
use tokio::sync::watch;

use super::endpoints::EndpointSpace;
use super::gate::Gate;
use super::{Listeners, SHUTDOWN_SLACK, Service, demo, idle, listen};
use crate::config::{Config, exit, to_usize};
use crate::transport::{Listener, PipeSpace, is_taken};

/// Runs the daemon until it stops; returns the process exit status (see `config::exit`).
pub fn run(config: Config, log_dropped: Counter) -> u8 {
    let demo_app = match demo::locate_if_wanted(config.demo) {
        Ok(app) => app,
        Err(code) => return code,
    };
    let runtime = match super::runtime(&config) {
        Ok(runtime) => runtime,
        Err(e) => {
            tracing::error!("cannot start the async runtime: {e}");
            return exit::RUNTIME;
        }
    };
    runtime.block_on(serve(config, log_dropped, demo_app))
}

async fn serve(config: Config, log_dropped: Counter, demo_app: Option<PathBuf>) -> u8 {
    let space = match PipeSpace::new() {
        Ok(space) => space,
        Err(e) => {
            tracing::error!("cannot prepare the user's pipe security descriptor: {e}");
            return exit::RUNTIME;
        }
    };
    let control = match Listener::bind(&space, Pipe::Control) {
        Ok(l) => l,
        Err(e) if is_taken(&e) => {
            tracing::error!(
                "jfgui-agentd is already running (its control pipe {} exists)",
                space.pipe_name(Pipe::Control)
            );
            return exit::ALREADY_RUNNING;
        }
        Err(e) => {
            tracing::error!("{}: {e}", space.pipe_name(Pipe::Control));
            return exit::RUNTIME;
        }
    };
    let host = match Listener::bind(&space, Pipe::Host) {
        Ok(l) => l,
        Err(e) => {
            tracing::error!("{}: {e}", space.pipe_name(Pipe::Host));
            return exit::RUNTIME;
        }
    };
    let mcp = match Listener::bind(&space, Pipe::Mcp) {
        Ok(l) => l,
        Err(e) => {
            tracing::error!("{}: {e}", space.pipe_name(Pipe::Mcp));
            return exit::RUNTIME;
        }
    };
    // Pipe names have room for any slug the spec allows (48 characters).
    let engine = Service::new(&config, None, space.naming(), usize::MAX, log_dropped, None);
    let gate = Gate::new(to_usize(config.max_clients), to_usize(config.max_apps));
    let (stop_tx, stop_rx) = watch::channel(false);
    let accepting = listen(Listeners { control, host, mcp }, &gate, &engine);
    let endpoints_task = tokio::spawn(super::endpoints::run(
        engine.clone(),
        std::sync::Arc::new(space.clone()),
        gate.clone(),
        stop_rx,
    ));
    tracing::info!(control = %space.pipe_name(Pipe::Control), pid = std::process::id(), "jfgui-agentd listening");
    let demo = demo_app.and_then(|app| demo::start(&app, None));

    tokio::select! {
        r = tokio::signal::ctrl_c() => match r {
            Ok(()) => tracing::info!("Ctrl-C: shutting down"),
            Err(e) => tracing::error!("cannot wait for Ctrl-C ({e}); shutting down"),
        },
        () = idle(gate.live(), config.idle_exit.map(Duration::from_secs)) => {
            tracing::info!("no app and no client for --idle-exit; shutting down");
        }
    }
    for task in &accepting {
        task.abort();
    }
    let _ = stop_tx.send(true);
    let _ = endpoints_task.await;
    if tokio::time::timeout(config.shutdown_drain + SHUTDOWN_SLACK, engine.shutdown())
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
