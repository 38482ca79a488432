//! The port between the OS layer and the session engine: what the listeners need from the
//! engine (serve accepted streams, report endpoint changes, shut down), as a trait so the OS
//! layer depends on these operations only; `engine_adapter.rs` is the one `impl`.

use std::future::Future;

use crate::EndpointEvent;
use crate::transport::{Peer, Stream};

/// A stream of changes to the set of endpoints that must exist (`apps/SLUG.sock`); `None`
/// once the engine is gone.
pub trait EndpointFeed: Send + 'static {
    /// The next change.
    fn next(&mut self) -> impl Future<Output = Option<EndpointEvent>> + Send;
}

/// The engine as the listeners see it. The `serve_*` methods take `self` (a cheap clone) so
/// their futures borrow nothing and can be spawned.
pub trait EnginePort: Clone + Send + Sync + 'static {
    /// Serves one app connection from `host.sock` until it ends.
    fn serve_app(self, stream: Stream, peer: Peer) -> impl Future<Output = ()> + Send + 'static;
    /// Serves one client connection to the endpoint `slug` until it ends.
    fn serve_client(
        self,
        stream: Stream,
        slug: String,
        peer: Peer,
    ) -> impl Future<Output = ()> + Send + 'static;
    /// Serves one all-apps MCP connection from `mcp.sock` until it ends.
    fn serve_mcp(self, stream: Stream, peer: Peer) -> impl Future<Output = ()> + Send + 'static;
    /// Serves one control connection from `agentd.sock` until it ends.
    fn serve_control(self, stream: Stream, peer: Peer)
    -> impl Future<Output = ()> + Send + 'static;
    /// Endpoint changes from now on, starting with an [`EndpointEvent::Resync`].
    fn endpoint_changes(&self) -> impl EndpointFeed;
    /// Graceful stop: apps told, in-flight calls answered, every `serve_*` future ended.
    fn shutdown(&self) -> impl Future<Output = ()> + Send;
}
