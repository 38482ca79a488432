//! The engine behind the listeners: the [`EnginePort`] adapter for [`EngineSessions`] (the
//! engine, plus the browser bridges that control connections may open), and the `EngineConfig`
//! built from the flags and the runtime dir.

use std::future::Future;
use std::path::Path;

use super::port::{EndpointFeed, EnginePort};
use crate::audit::{Audit, Transport};
use crate::bridge::Bridges;
use crate::config::{Config, to_usize};
use crate::transport::{Peer, Stream};
use crate::{EndpointEvent, EndpointEvents, EndpointNaming, Engine, EngineConfig, PeerInfo};

/// The slug bound of SPEC S8, lowered when the runtime dir leaves less room in `sun_path`.
const SPEC_MAX_SLUG: usize = 48;

/// The engine and the browser bridges its control connections may open.
#[derive(Debug, Clone)]
pub struct EngineSessions {
    engine: Engine,
    bridges: Bridges,
}

/// Builds the engine for `config`. `runtime_dir` (Unix) is reported by `daemon/status`;
/// `endpoints` names the endpoints of `apps/list` (socket paths or pipe names); `max_slug_len`
/// is what the endpoint names leave room for (the `sun_path` limit on Unix).
pub fn engine(
    config: &Config,
    runtime_dir: Option<&Path>,
    endpoints: EndpointNaming,
    max_slug_len: usize,
) -> EngineSessions {
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
        shutdown_drain: config.shutdown_drain,
        max_slug_len: SPEC_MAX_SLUG.min(max_slug_len),
        runtime_dir: runtime_dir.map(Path::to_path_buf),
        endpoint_naming: Some(endpoints),
        audit: Some(Audit::start(config.audit())),
    });
    let bridges = Bridges::new(engine.clone(), config.bridge_limits());
    EngineSessions { engine, bridges }
}

fn info(peer: Peer) -> PeerInfo {
    PeerInfo { pid: peer.pid, uid: peer.uid, transport: Transport::Endpoint }
}

impl EnginePort for EngineSessions {
    async fn serve_app(self, stream: Stream, peer: Peer) {
        self.engine.serve_app(stream, info(peer)).await;
    }

    async fn serve_client(self, stream: Stream, slug: String, peer: Peer) {
        self.engine.serve_client(stream, &slug, info(peer)).await;
    }

    async fn serve_mcp(self, stream: Stream, peer: Peer) {
        self.engine.serve_mcp(stream, info(peer)).await;
    }

    async fn serve_control(self, stream: Stream, peer: Peer) {
        self.engine.serve_control_with(stream, info(peer), self.bridges.control()).await;
    }

    fn endpoint_changes(&self) -> impl EndpointFeed {
        self.engine.subscribe()
    }

    fn shutdown(&self) -> impl Future<Output = ()> + Send {
        Engine::shutdown(&self.engine)
    }
}

impl EndpointFeed for EndpointEvents {
    async fn next(&mut self) -> Option<EndpointEvent> {
        EndpointEvents::next(self).await
    }
}
