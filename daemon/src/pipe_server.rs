//! The daemon's life on Windows (ARCHITECTURE "Locations"): the engine behind named pipes
//! instead of a runtime dir. `-control` is created first; its first-instance flag is the
//! single-instance check (a second daemon gets "exists already", status 4). `-host` takes
//! apps; `-<slug>` follows the engine's endpoint events. Ctrl-C / console close or
//! `--idle-exit` stop it: pipes closed, then the engine shut down.
//!
//! Not here (Unix only, by design): the runtime dir and its lock (pipes need neither),
//! `--dir-check`, `--demo`; `--max-clients` bounds apps and clients together here. Discovery goes through `apps/list` on the control pipe, whose
//! `endpoint` is null here: clients build `-<slug>` from the slug.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::sync::{broadcast, watch};
use tokio::task::JoinHandle;

use crate::config::{Config, exit, to_usize};
use crate::transport::windows::{
    BindError, Listener, Peer, SecurityDescriptor, Stream, current_user_sid, pipe_name, sddl_for,
};
use crate::{EndpointEvent, Engine, EngineConfig, PeerInfo};

/// Slack on top of `--shutdown-drain` before the daemon stops waiting for the engine.
const SHUTDOWN_SLACK: Duration = Duration::from_secs(2);
/// The slug bound of SPEC S8 (pipe names have room to spare).
const MAX_SLUG: usize = 48;

/// Runs the daemon until it stops; returns the process exit status (see `config::exit`).
pub fn run(config: Config) -> u8 {
    match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(runtime) => runtime.block_on(serve(config)),
        Err(e) => {
            tracing::error!("cannot start the async runtime: {e}");
            exit::RUNTIME
        }
    }
}

async fn serve(config: Config) -> u8 {
    let sid = match current_user_sid() {
        Ok(sid) => sid,
        Err(e) => {
            tracing::error!("cannot read this user's SID: {e}");
            return exit::RUNTIME;
        }
    };
    let sd = match SecurityDescriptor::from_sddl(&sddl_for(&sid)) {
        Ok(sd) => Arc::new(sd),
        Err(e) => {
            tracing::error!("cannot build the pipes' security descriptor: {e}");
            return exit::RUNTIME;
        }
    };
    let (control, host) = match bind_pair(&sid, &sd) {
        Ok(pair) => pair,
        Err(e @ BindError::Taken(_)) => {
            tracing::error!("{e}");
            return exit::ALREADY_RUNNING;
        }
        Err(e) => {
            tracing::error!("{e}");
            return exit::RUNTIME;
        }
    };
    let engine = Engine::new(EngineConfig {
        json: config.json_limits(),
        max_frame: to_usize(config.max_frame),
        handshake_deadline: config.handshake_deadline,
        request_deadline: config.request_deadline,
        partial_idle: config.partial_idle,
        max_apps: to_usize(config.max_apps),
        max_in_flight_per_client: to_usize(config.max_in_flight_per_client),
        max_queued_per_app: to_usize(config.max_queued_per_app),
        max_tasks: to_usize(config.max_tasks),
        shutdown_drain: config.shutdown_drain,
        max_slug_len: MAX_SLUG,
        runtime_dir: None,
    });
    let live = Live::new(to_usize(config.max_clients));
    let events = engine.subscribe();
    let tasks = [
        tokio::spawn(accept_loop(control, live.clone(), {
            let engine = engine.clone();
            move |stream, peer| {
                let engine = engine.clone();
                async move { engine.serve_control(stream, info(peer)).await }
            }
        })),
        tokio::spawn(accept_loop(host, live.clone(), {
            let engine = engine.clone();
            move |stream, peer| {
                let engine = engine.clone();
                async move { engine.serve_app(stream, info(peer)).await }
            }
        })),
        tokio::spawn(endpoints(engine.clone(), events, sid.clone(), sd, live.clone())),
    ];
    tracing::info!(pipe = %pipe_name(&sid, "control"), pid = std::process::id(), "jfgui-agentd listening");

    let why = tokio::select! {
        r = tokio::signal::ctrl_c() => match r {
            Ok(()) => "Ctrl-C",
            Err(e) => {
                tracing::error!("cannot wait for Ctrl-C: {e}");
                "no console"
            }
        },
        () = idle(live.watch(), config.idle_exit.map(Duration::from_secs)) => "idle exit",
    };
    tracing::info!("{why}: shutting down");
    for task in &tasks {
        task.abort();
    }
    let drain = config.shutdown_drain + SHUTDOWN_SLACK;
    if tokio::time::timeout(drain, engine.shutdown()).await.is_err() {
        tracing::warn!("the engine did not finish shutting down in time");
    }
    exit::OK
}

fn bind_pair(sid: &str, sd: &Arc<SecurityDescriptor>) -> Result<(Listener, Listener), BindError> {
    let control = Listener::bind(pipe_name(sid, "control"), sd.clone())?;
    let host = Listener::bind(pipe_name(sid, "host"), sd.clone())?;
    Ok((control, host))
}

fn info(peer: Peer) -> PeerInfo {
    PeerInfo { pid: peer.pid, uid: None }
}

async fn accept_loop<F, Fut>(mut listener: Listener, live: Live, serve: F)
where
    F: Fn(Stream, Peer) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    loop {
        let (stream, peer) = listener.accept().await;
        let Some(ticket) = live.enter() else {
            tracing::warn!(pipe = listener.name(), "connection refused: too many connections");
            continue;
        };
        let fut = serve(stream, peer);
        tokio::spawn(async move {
            fut.await;
            drop(ticket);
        });
    }
}

/// Keeps one `-<slug>` pipe per connected, enabled app.
async fn endpoints(
    engine: Engine,
    mut events: broadcast::Receiver<EndpointEvent>,
    sid: String,
    sd: Arc<SecurityDescriptor>,
    live: Live,
) {
    let mut bound: HashMap<String, JoinHandle<()>> = HashMap::new();
    let up = |bound: &mut HashMap<String, JoinHandle<()>>, slug: String| {
        if bound.contains_key(&slug) {
            return;
        }
        let listener = match Listener::bind(pipe_name(&sid, &slug), sd.clone()) {
            Ok(l) => l,
            Err(e) => {
                tracing::error!(
                    slug,
                    "cannot create the app's endpoint; it stays unreachable: {e}"
                );
                return;
            }
        };
        tracing::info!(slug, pipe = listener.name(), "endpoint up");
        let (engine, served) = (engine.clone(), slug.clone());
        let task = tokio::spawn(accept_loop(listener, live.clone(), move |stream, peer| {
            let (engine, slug) = (engine.clone(), served.clone());
            async move { engine.serve_client(stream, &slug, info(peer)).await }
        }));
        bound.insert(slug, task);
    };
    let enabled = |engine: &Engine| -> Vec<String> {
        engine.apps().into_iter().filter(|a| a.enabled).map(|a| a.slug).collect()
    };
    for slug in enabled(&engine) {
        up(&mut bound, slug);
    }
    loop {
        match events.recv().await {
            Ok(EndpointEvent::Up { slug }) => up(&mut bound, slug),
            Ok(EndpointEvent::Down { slug }) => {
                if let Some(task) = bound.remove(&slug) {
                    task.abort();
                    tracing::info!(slug, "endpoint down");
                }
            }
            Err(broadcast::error::RecvError::Lagged(_)) => {
                let now = enabled(&engine);
                bound.retain(|slug, task| {
                    let keep = now.contains(slug);
                    if !keep {
                        task.abort();
                    }
                    keep
                });
                for slug in now {
                    up(&mut bound, slug);
                }
            }
            Err(broadcast::error::RecvError::Closed) => break,
        }
    }
    for task in bound.into_values() {
        task.abort();
    }
}

/// Live connections (apps and clients) for the idle exit, and the client cap.
#[derive(Debug, Clone)]
struct Live(Arc<(AtomicUsize, usize, watch::Sender<usize>)>);

#[derive(Debug)]
struct Ticket(Live);

impl Live {
    fn new(max: usize) -> Live {
        Live(Arc::new((AtomicUsize::new(0), max, watch::channel(0).0)))
    }

    fn enter(&self) -> Option<Ticket> {
        let (count, max, total) = &*self.0;
        count
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| (n < *max).then_some(n + 1))
            .ok()?;
        total.send_modify(|t| *t += 1);
        Some(Ticket(self.clone()))
    }

    fn watch(&self) -> watch::Receiver<usize> {
        self.0.2.subscribe()
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        let (count, _, total) = &*(self.0).0;
        count.fetch_sub(1, Ordering::AcqRel);
        total.send_modify(|t| *t -= 1);
    }
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
