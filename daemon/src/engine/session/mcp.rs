//! MCP on the per-app endpoints (SPEC S7): protocol selection, the modern (2026-07-28) and legacy
//! (2025-11-25) revisions, the nine `jfgui_*` tools, standard resources and cancellation.
//!
//! The connection loop of the session engine owns the bytes (framing, strict parsing, bounds,
//! writing); this module owns the decisions. For every message it calls [`Protocol::route`]
//! synchronously, in arrival order, and gets a [`Route`]:
//!
//! | route | what the loop does |
//! |---|---|
//! | [`Route::Json1`] | serves the message as JSON control protocol 1 |
//! | [`Route::Answer`] | writes the reply now (`ping`, protocol errors, `tools/list`, …) |
//! | [`Route::Mcp`] | runs [`Pending::run`] against the app (concurrently); writes the reply it yields |
//! | [`Route::Silent`] | nothing (notifications, responses from the client) |
//!
//! | part | file |
//! |---|---|
//! | what MCP needs of one app (the seam to the engine) | `mcp/app.rs` |
//! | selection per connection and per message | `mcp/select.rs` |
//! | 2026-07-28: `_meta` envelope, discover, cache hints | `mcp/modern.rs` |
//! | 2025-11-25: `initialize` and its state | `mcp/legacy.rs` |
//! | the nine tools and `tools/call` | `mcp/tools.rs` |
//! | standard `resources/list` / `resources/read` | `mcp/resources.rs` |
//! | requests in flight and `notifications/cancelled` | `mcp/cancel.rs` |
//! | JSON-RPC pieces shared by the above | `mcp/rpc.rs` |

mod app;
mod cancel;
mod legacy;
mod modern;
mod resources;
mod rpc;
mod select;
mod tools;

pub(crate) use rpc::{Incoming, response_line};
pub(crate) use select::{Protocol, Route};

#[cfg(test)]
mod tests;
