//! A client connection to one app's endpoint: JSON control protocol 1 or MCP, chosen by the
//! first deciding message (`select.rs`); until then every line is routed by the selection, and a
//! JSON-1 connection then takes the JSON-1 path directly. It ends when the client stops
//! sending, the app leaves (disabled or gone) or the daemon shuts down; the calls already
//! running are answered first.

use jfgui_proto::{Limits, Value};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::watch;

use super::Target;
use super::backpressure::CallPermit;
use super::connection::{Connection, Ending, Handler};
use super::json1;
use super::mcp::{self, Incoming};
use super::peer_warnings::PeerWarnings;
use super::running::Call;
use super::select::{Route, Selection};
use crate::app::Status;
use crate::output::Output;
use crate::{Engine, PeerInfo, until};

/// Runs the connection of a client from `peer` to `target`'s endpoint until EOF, the app
/// leaving, or shutdown; then answers the calls already running (bounded by the request
/// deadline plus the drain time) and closes.
pub(crate) async fn serve<S>(engine: &Engine, stream: S, target: Target, peer: PeerInfo)
where
    S: AsyncRead + AsyncWrite + Send + Unpin + 'static,
{
    let slug = target.app().registration().slug().to_owned();
    let status = target.app().status();
    let shutdown = engine.0.shutdown.subscribe();
    let connection = Connection {
        config: engine.config(),
        partial: engine.partial(),
        peer,
        fate: target.caller().map(|caller| caller.fate().clone()),
        ending: Ending::Drain,
    };
    let handler = EndpointConnection {
        target,
        selection: Selection::default(),
        warnings: PeerWarnings::new(peer),
    };
    tracing::debug!(slug, ?peer, "client connected");
    connection.serve(stream, handler, app_left_or_shutdown(status, shutdown)).await;
}

/// Completes when the app leaves or the daemon shuts down: one future for the connection's
/// life, so its wake-up registrations are made once, not twice per line.
async fn app_left_or_shutdown(
    mut status: watch::Receiver<Status>,
    mut shutdown: watch::Receiver<bool>,
) -> &'static str {
    tokio::select! {
        biased;
        _ = until(&mut status, |s| *s != Status::Enabled) => "app left",
        _ = until(&mut shutdown, |s| *s) => "shutdown",
    }
}

/// One endpoint connection's protocol state.
struct EndpointConnection {
    target: Target,
    /// JSON-1, MCP or not yet decided.
    selection: Selection,
    /// The rate limit of the warnings this client can cause.
    warnings: PeerWarnings,
}

impl EndpointConnection {
    /// An error line the JSON-1 envelope checks built for a line whose id could not be read
    /// (`"id": null`), as this connection must send it: unchanged on JSON-1 and undecided
    /// connections (JSON-RPC 2.0), without the `id` member once MCP is selected (MCP's
    /// schemas allow no null id).
    fn unreadable_id(&self, line: Vec<u8>) -> Vec<u8> {
        if self.selection.is_mcp() {
            mcp::mcp_error_line(&line, &self.target.app().config().json).unwrap_or(line)
        } else {
            line
        }
    }
}

impl Handler for EndpointConnection {
    /// Local methods (answered from the daemon's own state) run here, one at a time, so a
    /// connection that pipelines costly ones (a search of thousands of actions) is one runnable
    /// task among the others, not one per request; their long loops yield inside
    /// (`methods.rs`).
    async fn line(&mut self, line: &[u8], permit: CallPermit, output: &Output) -> Option<Call> {
        let limits = self.target.app().config().json;
        let slug = self.target.app().registration().slug();
        let prepared = if matches!(self.selection, Selection::Json1) {
            json1::prepare(line, &limits, slug, &mut self.warnings)
        } else {
            let envelope = match json1::parse_envelope(line, &limits, true) {
                Ok(envelope) => envelope,
                Err(Some(response)) => {
                    output.send(self.unreadable_id(response)).await;
                    return None;
                }
                Err(None) => return None,
            };
            let params = Value::Object(envelope.params);
            let incoming = Incoming {
                id: envelope.id.as_ref(),
                method: Some(&envelope.method),
                params: Some(&params),
            };
            match self.selection.route(&incoming, &mut self.warnings) {
                Route::Json1 => {
                    // Built as an object just above; handed back to the JSON-1 checks.
                    let Value::Object(params) = params else { return None };
                    let envelope = json1::Envelope { params, ..envelope };
                    json1::prepare_envelope(envelope, &limits, slug, &mut self.warnings)
                }
                Route::Mcp(route) => return self.mcp(route, envelope.id, permit, output).await,
            }
        };
        match prepared {
            json1::Prepared::Respond(bytes) => output.send(bytes).await,
            json1::Prepared::Silent => {}
            json1::Prepared::Call(call) if call.method.is_local() => {
                let response = json1::execute(&self.target, call).await;
                output.send(response).await;
            }
            json1::Prepared::Call(call) => {
                let target = self.target.clone();
                let output = output.clone();
                return Some(Box::pin(async move {
                    let response = json1::execute(&target, call).await;
                    permit.observe(response.len());
                    output.send(response).await;
                    drop(permit);
                }));
            }
        }
        None
    }

    fn too_long(&self, limits: &Limits) -> Vec<u8> {
        self.unreadable_id(json1::too_long_response(limits))
    }
}

impl EndpointConnection {
    /// Serves one MCP message of the request with `id` as the state routed it.
    async fn mcp(
        &mut self,
        route: mcp::Route,
        id: Option<Value>,
        permit: CallPermit,
        output: &Output,
    ) -> Option<Call> {
        let limits = self.target.app().config().json;
        match route {
            mcp::Route::Silent => {}
            mcp::Route::Answer(reply) => {
                output.send(mcp::response_line(id.as_ref(), reply, &limits)).await;
            }
            mcp::Route::Run(pending) if pending.is_local() => {
                if let Some(reply) = pending.run(&self.target).await {
                    output.send(mcp::response_line(id.as_ref(), reply, &limits)).await;
                }
            }
            mcp::Route::Run(pending) => {
                let target = self.target.clone().speaking(pending.protocol());
                let output = output.clone();
                return Some(Box::pin(async move {
                    if let Some(reply) = pending.run(&target).await {
                        let response = mcp::response_line(id.as_ref(), reply, &limits);
                        permit.observe(response.len());
                        output.send(response).await;
                    }
                    drop(permit);
                }));
            }
        }
        None
    }
}
