//! The daemon's life: start-up, listeners (`agentd.sock`, `host.sock`, `mcp.sock` and the
//! endpoints, or their named pipes), engine, stop. Everything platform lives here and below
//! (`unix`, `windows`); the engine only ever sees accepted, peer-checked streams, handed to it
//! by the [`Service`] (`service.rs`).

mod accept;
mod demo;
#[cfg(unix)]
mod dir_watch;
mod endpoints;
mod gate;
mod service;
#[cfg(all(target_os = "linux", target_env = "gnu"))]
mod trim;
#[cfg(unix)]
mod unix;
#[cfg(windows)]
mod windows;

use std::time::Duration;

use tokio::sync::watch;
use tokio::task::JoinHandle;

use accept::{TurnAway, accept_loop};
use gate::{Class, Gate};

use crate::config::{Config, to_usize};
use crate::transport::Listener;

pub use service::Service;
#[cfg(unix)]
pub use unix::run;
#[cfg(windows)]
pub use windows::run;

/// Slack on top of `--shutdown-drain` before the daemon stops waiting for the engine: its
/// grace for peers that do not let go, then the audit flush.
const SHUTDOWN_SLACK: Duration = Duration::from_secs(2).saturating_add(jfgui_engine::AUDIT_FLUSH);

/// The async runtime: the current thread by default, a pool of `--worker-threads` workers
/// otherwise (the same on every platform).
fn runtime(config: &Config) -> std::io::Result<tokio::runtime::Runtime> {
    let mut builder = match config.worker_threads {
        0 => tokio::runtime::Builder::new_current_thread(),
        n => {
            let mut b = tokio::runtime::Builder::new_multi_thread();
            b.worker_threads(to_usize(n));
            b
        }
    };
    builder.enable_all().build()
}

/// Completes once no connection has existed for `after` (never when `after` is `None`).
async fn idle(mut live: watch::Receiver<usize>, after: Option<Duration>) {
    let Some(after) = after else { return std::future::pending().await };
    loop {
        if live.wait_for(|n| *n == 0).await.is_err() {
            return std::future::pending().await;
        }
        tokio::select! {
            () = tokio::time::sleep(after) => return,
            _ = live.wait_for(|n| *n > 0) => {}
        }
    }
}

/// The listeners every platform has: control, host (apps) and all-apps MCP.
struct Listeners {
    control: Listener,
    host: Listener,
    mcp: Listener,
}

/// Accepts on the control, host and MCP listeners (the same on every platform), each in a
/// task of its own; abort the tasks to stop accepting. The MCP listener counts as a client
/// listener under the connection cap.
fn listen(listeners: Listeners, gate: &Gate, engine: &Service) -> [JoinHandle<()>; 3] {
    let Listeners { control, host, mcp } = listeners;
    [
        tokio::spawn(accept_loop(control, gate.clone(), Class::Client, TurnAway::JsonRpc, {
            let s = engine.clone();
            move |stream, peer| s.clone().serve_control(stream, peer)
        })),
        tokio::spawn(accept_loop(host, gate.clone(), Class::App, TurnAway::Close, {
            let s = engine.clone();
            move |stream, peer| s.clone().serve_app(stream, peer)
        })),
        tokio::spawn(accept_loop(mcp, gate.clone(), Class::Client, TurnAway::Mcp, {
            let s = engine.clone();
            move |stream, peer| s.clone().serve_mcp(stream, peer)
        })),
    ]
}
