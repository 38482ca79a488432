//! MCP on the client side: the modern (2026-07-28) and legacy (2025-11-25) revisions, the nine
//! `jfgui_*` tools, standard resources and cancellation, for one app's endpoint and for every
//! app at once (`mcp.sock`).
//!
//! The connection loop (`client/connection.rs`) owns the bytes (framing, strict parsing,
//! bounds, writing); this module owns the decisions. For every MCP message the connection asks
//! [`McpState::accept`], synchronously and in arrival order, and gets a [`Route`]:
//!
//! | route | what the connection does |
//! |---|---|
//! | [`Route::Answer`] | writes the reply now (`ping`, protocol errors, …) |
//! | [`Route::Run`] | runs [`Pending::run`] against what it serves ([`Backend`]): on its own task when [`Pending::is_local`] (`tools/list`, the tool list's searches), else beside the other calls; writes the reply it yields |
//! | [`Route::Silent`] | nothing (notifications, responses from the client) |
//!
//! | part | file |
//! |---|---|
//! | what MCP needs of what it serves | `mcp/backend.rs` |
//! | one app's endpoint as what it serves | `mcp/endpoint.rs` |
//! | the all-apps server (`mcp.sock`): `app` argument, `jfgui_apps_list`, the no-daemon twin | `mcp/all_apps.rs` |
//! | one connection's MCP state; what each message is | `mcp/state.rs` |
//! | 2026-07-28: `_meta` envelope, discover, cache hints | `mcp/modern.rs` |
//! | 2025-11-25: `initialize` and its state | `mcp/legacy.rs` |
//! | the nine tools and `tools/call` | `mcp/tools.rs` |
//! | what a model sees of a render or a resource chunk (image and text items) | `mcp/seen.rs` |
//! | their argument and result schemas, built as values | `mcp/tool_schemas.rs` |
//! | standard `resources/list` / `resources/read` | `mcp/resources.rs` |
//! | requests in flight and `notifications/cancelled` | `mcp/cancel.rs` |
//! | JSON-RPC pieces shared by the above | `mcp/rpc.rs` |

mod all_apps;
mod backend;
mod cancel;
mod endpoint;
mod legacy;
mod modern;
mod resources;
mod rpc;
mod seen;
mod state;
mod tool_schemas;
mod tools;

use jfgui_proto::{Limits, Value};

pub use all_apps::OfflineMcp;
pub(crate) use all_apps::{not_found, serve as serve_all_apps};
pub(crate) use modern::{META_PROTOCOL_VERSION, has_envelope, no_way_in};
pub(crate) use rpc::{Incoming, METHOD_NOT_FOUND, Reply, RpcError, invalid_id, object};
pub use rpc::{drop_non_mcp_error_id, is_mcp_request_id, mcp_error_line};
pub(crate) use state::{McpState, Route};
#[cfg(test)]
pub(crate) use {backend::Backend, endpoint::instructions, tools::tool_list};

/// Encodes the response line (without its newline) for `reply` to a request with `id` as sent.
/// An id MCP does not allow (only strings and integers) is never echoed: the member is omitted
/// (such a request only ever gets an error).
///
/// A result over the message bounds never goes out truncated or split: a tool result becomes a
/// tool error (`internal/response_too_large`) the model can act on, anything else a -32603
/// error. A tool result is the one that grows most, since it carries its text twin.
pub(crate) fn response_line(id: Option<&Value>, reply: Reply, limits: &Limits) -> Vec<u8> {
    let echo = id.filter(|id| is_mcp_request_id(id));
    let error = match (reply, echo) {
        (Ok(result), Some(id)) => match rpc::result_line(id, result, limits) {
            Ok(line) => return line,
            Err(result) if result.has("structuredContent") => {
                match rpc::result_line(id, tools::too_large(&result, limits.max_bytes), limits) {
                    Ok(line) => return line,
                    Err(_) => too_large(limits),
                }
            }
            Err(_) => too_large(limits),
        },
        // The router answers only well-formed ids with a result; should one slip through, it
        // gets the error a bad id gets rather than a result nobody can correlate.
        (Ok(_), None) => rpc::invalid_id(id.unwrap_or(&Value::Null)),
        (Err(e), _) => e,
    };
    rpc::error_line(echo, &error, limits)
}

fn too_large(limits: &Limits) -> RpcError {
    RpcError::with_data(
        rpc::INTERNAL_ERROR,
        "The result exceeds the message size bound; page the request (cursor, limit) or read resources in chunks with jfgui_resources_read.",
        rpc::object([
            ("reason", "response_too_large".into()),
            ("limit", (limits.max_bytes as u64).into()),
        ]),
    )
}
