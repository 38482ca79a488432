//! What the listeners hand their streams to: [`Service`], the engine plus the browser bridges
//! its control connections may open, built from the flags and the runtime dir.

use std::path::Path;
use std::sync::Arc;

use jfgui_engine::activation::{Activation, Launcher};
use jfgui_engine::audit::{Audit, Transport};
use jfgui_engine::consent::{ConsentConfig, Grants};
use jfgui_engine::{Counter, EndpointEvents, EndpointNaming, Engine, EngineConfig, PeerInfo};

use crate::bridge::Bridges;
use crate::config::{Config, to_usize};
use crate::transport::{Peer, Stream};

/// The slug bound of the endpoint names, lowered when the runtime dir leaves less room in
/// `sun_path`.
const MAX_SLUG: usize = 48;

/// The engine and the browser bridges its control connections may open. Cheap to clone: the
/// `serve_*` methods take it by value, so their futures borrow nothing and can be spawned.
#[derive(Debug, Clone)]
pub struct Service {
    engine: Engine,
    bridges: Bridges,
}

impl Service {
    /// The engine for `config`. `runtime_dir` (Unix) is reported by `daemon/status`;
    /// `endpoints` names the endpoints of `apps/list` (socket paths or pipe names);
    /// `max_slug_len` is what the endpoint names leave room for (the `sun_path` limit on
    /// Unix); `log_dropped` is the log writer's count of dropped lines; `launcher` starts
    /// installed apps (`None`: no activation).
    pub fn new(
        config: &Config,
        runtime_dir: Option<&Path>,
        endpoints: EndpointNaming,
        max_slug_len: usize,
        log_dropped: Counter,
        launcher: Option<Arc<dyn Launcher>>,
    ) -> Service {
        let activation = launcher.map(|launcher| {
            let mut activation = Activation::new(launcher);
            activation.deadline = config.activation_deadline;
            activation.backoff = config.activation_backoff;
            activation
        });
        let engine = Engine::new(EngineConfig {
            json: config.json_limits(),
            max_frame: to_usize(config.max_frame),
            handshake_deadline: config.handshake_deadline,
            request_deadline: config.request_deadline,
            partial_deadline: config.partial_idle,
            max_apps: to_usize(config.max_apps),
            max_in_flight_per_client: to_usize(config.max_in_flight_per_client),
            max_queued_per_app: to_usize(config.max_queued_per_app),
            max_tasks: to_usize(config.max_tasks),
            max_tasks_per_app: to_usize(config.max_tasks_per_app),
            max_task_bytes: to_usize(config.max_task_bytes),
            max_partial_bytes: to_usize(config.max_partial_bytes),
            max_registration_bytes: to_usize(config.max_registration_bytes),
            shutdown_drain: config.shutdown_drain,
            max_slug_len: MAX_SLUG.min(max_slug_len),
            runtime_dir: runtime_dir.map(Path::to_path_buf),
            endpoint_naming: Some(endpoints),
            audit: Some(Audit::start(config.audit())),
            activation,
            log_dropped,
            consent: ConsentConfig {
                timeout: config.confirm_timeout,
                grants: grants(config),
                identify: Some(crate::agents::identify()),
            },
        });
        let bridges = Bridges::new(engine.clone(), config.bridge_limits());
        Service { engine, bridges }
    }

    /// Serves one app connection from `host.sock` until it ends.
    pub async fn serve_app(self, stream: Stream, peer: Peer) {
        self.engine.serve_app(stream, info(peer)).await;
    }

    /// Serves one client connection to the endpoint `slug` until it ends.
    pub async fn serve_client(self, stream: Stream, slug: String, peer: Peer) {
        self.engine.serve_client(stream, &slug, info(peer)).await;
    }

    /// Serves one all-apps MCP connection from `mcp.sock` until it ends.
    pub async fn serve_mcp(self, stream: Stream, peer: Peer) {
        self.engine.serve_mcp(stream, info(peer)).await;
    }

    /// Serves one control connection from `agentd.sock` until it ends; `bridge/open` on it
    /// opens a browser bridge that lives as long as the connection.
    pub async fn serve_control(self, stream: Stream, peer: Peer) {
        self.engine.serve_control_with(stream, info(peer), self.bridges.control()).await;
    }

    /// Endpoint changes from now on, starting with the endpoints that exist.
    pub fn endpoint_events(&self) -> EndpointEvents {
        self.engine.subscribe()
    }

    /// Graceful stop: apps told, in-flight calls answered, every `serve_*` future ended.
    pub async fn shutdown(&self) {
        self.engine.shutdown().await;
    }
}

fn info(peer: Peer) -> PeerInfo {
    PeerInfo { pid: peer.pid, uid: peer.uid, transport: Transport::Endpoint }
}

/// The user's grants, from the state dir's `grants.json` (Unix; elsewhere kept in memory).
fn grants(config: &Config) -> Grants {
    #[cfg(unix)]
    return crate::grants_file::open(config.state_dir().as_deref());
    #[cfg(not(unix))]
    {
        let _ = config;
        Grants::new(Vec::new(), None)
    }
}
