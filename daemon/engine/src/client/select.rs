//! Which protocol an endpoint connection speaks: JSON control protocol 1 or MCP, decided per
//! connection and sticky (`docs/PROTOCOL.md`, "Selection (per connection, sticky)").
//!
//! A connection starts undecided. While undecided, in this order: a request whose
//! `params._meta` carries the modern protocol version selects MCP (even for `resources/read`,
//! which is also a JSON-1 name); `initialize` selects MCP; one of the ten JSON-1 methods selects
//! JSON-1. Other MCP names are answered without deciding (`ping` → `{}`, the rest → -32602
//! naming both ways in); unknown methods get -32601; notifications decide nothing. Once MCP is
//! selected, `mcp/state.rs` classifies each message.
//!
//! An MCP request id is a string or an integer (both official schemas): an MCP request with
//! any other id (null, 1.5, an object, ...) gets -32600 without the id echoed on an undecided
//! connection too, and decides nothing.

use jfgui_proto::Map;

use super::mcp::{self, Incoming, McpState, RpcError};
use super::method::Method;
use super::peer_warnings::PeerWarnings;

/// Client→server request names of either MCP revision (both schemas' `ClientRequest`).
const MCP_METHODS: [&str; 19] = [
    "initialize",
    "ping",
    "server/discover",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/read",
    "resources/templates/list",
    "resources/subscribe",
    "resources/unsubscribe",
    "prompts/list",
    "prompts/get",
    "completion/complete",
    "logging/setLevel",
    "subscriptions/listen",
    "tasks/get",
    "tasks/result",
    "tasks/list",
    "tasks/cancel",
];

/// What an endpoint connection speaks.
#[derive(Debug, Default)]
pub(crate) enum Selection {
    /// No deciding message yet.
    #[default]
    Undecided,
    /// JSON control protocol 1, for good.
    Json1,
    /// MCP, for good, with its state.
    Mcp(McpState),
}

/// What the connection does with one message.
#[derive(Debug)]
pub(crate) enum Route {
    /// Serve it as JSON-1.
    Json1,
    /// Serve it as MCP.
    Mcp(mcp::Route),
}

impl Selection {
    /// True once MCP is selected.
    pub(crate) fn is_mcp(&self) -> bool {
        matches!(self, Selection::Mcp(_))
    }

    /// Decides what to do with `msg`, updating the selection. Call it for every message, in
    /// arrival order, before serving anything concurrently. The warning for a dropped write
    /// goes through the connection's rate limit `warnings`.
    pub(crate) fn route(&mut self, msg: &Incoming<'_>, warnings: &mut PeerWarnings) -> Route {
        let undecided = match self {
            Selection::Json1 => return Route::Json1,
            Selection::Mcp(state) => return Route::Mcp(state.accept(msg)),
            Selection::Undecided => mcp::Route::Silent,
        };
        let answer = |reply| Route::Mcp(mcp::Route::Answer(reply));
        let Some(method) = msg.method else {
            tracing::debug!("ignoring a JSON-RPC response on an undecided connection");
            return Route::Mcp(undecided);
        };
        // What would select MCP or be answered as MCP below (a JSON-1 name without the
        // envelope selects JSON-1, whose ids may be null).
        let mcp_shaped = mcp::has_envelope(msg.params)
            || (Method::from_name(method).is_none()
                && (method == "ping" || MCP_METHODS.contains(&method)));
        if let Some(id) = msg.id.filter(|id| mcp_shaped && !mcp::is_mcp_request_id(id)) {
            // An MCP request with an id MCP does not allow decides nothing.
            return answer(Err(mcp::invalid_id(id)));
        }
        if msg.id.is_some() && (mcp::has_envelope(msg.params) || method == "initialize") {
            tracing::debug!(method, "connection selects MCP");
            let mut state = McpState::default();
            let route = state.accept(msg);
            *self = Selection::Mcp(state);
            return Route::Mcp(route);
        }
        if msg.id.is_none() {
            // A notification is never answered and never forwarded to an app, so it cannot
            // decide what this connection speaks.
            if matches!(method, "actions/execute" | "actions/batch") {
                if let Some(suppressed) = warnings.admit() {
                    tracing::warn!(
                        method,
                        suppressed,
                        "dropped a write sent as a notification: its outcome could never be reported"
                    );
                }
            } else {
                tracing::debug!(method, "ignoring a notification on an undecided connection");
            }
            return Route::Mcp(undecided);
        }
        if Method::from_name(method).is_some() {
            tracing::debug!(method, "connection selects JSON-1");
            *self = Selection::Json1;
            return Route::Json1;
        }
        if method == "ping" {
            return answer(Ok(Map::new().into()));
        }
        if MCP_METHODS.contains(&method) {
            return answer(Err(mcp::no_way_in(method)));
        }
        answer(Err(unknown_method(method)))
    }
}

fn unknown_method(method: &str) -> RpcError {
    RpcError::with_data(
        mcp::METHOD_NOT_FOUND,
        format!(
            "Method not found: {method}. This endpoint speaks JSON control protocol 1 (e.g. agent/info, actions/list) and MCP (initialize, or any request with params._meta {}).",
            mcp::META_PROTOCOL_VERSION
        ),
        mcp::object([("reason", "unknown_method".into()), ("method", method.into())]),
    )
}

#[cfg(test)]
pub(crate) mod tests;
