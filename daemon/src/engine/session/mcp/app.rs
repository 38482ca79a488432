//! What the MCP layer needs of the one app a connection is bound to: the JSON-1 methods (run
//! once, protocol-neutral, by the session engine) and the app's resource listing.
//!
//! A trait rather than the engine's handle type, so the translation is tested against an
//! in-memory app and the engine stays free to shape its handle as it likes.

use std::future::Future;

use jfgui_proto::channel::ResourceInfo;
use jfgui_proto::{ActionError, Map};

/// Why a JSON-1 method failed (the engine's method errors, one to one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum CallError {
    /// -32602: the params do not fit the method; `data` carries `reason` and details.
    InvalidParams {
        /// One sentence.
        message: String,
        /// Machine-readable details (`reason`, `pointer`, …).
        data: Map,
    },
    /// -32603: a bug in the daemon.
    Internal {
        /// One sentence.
        message: String,
    },
    /// An application error (SPEC S6 codes 1000–1004).
    Action(ActionError),
}

/// One app, as seen by an MCP session.
pub(crate) trait AppPort: Sync {
    /// The app's display name (for `serverInfo.title` and the instructions).
    fn display_name(&self) -> String;

    /// Runs the JSON-1 method `method` (e.g. `"actions/list"`) with `params` (without
    /// `protocolVersion`); the result is the JSON-1 result object without `protocolVersion`.
    fn call(
        &self,
        method: &'static str,
        params: Map,
    ) -> impl Future<Output = Result<Map, CallError>> + Send;

    /// The app's resource listing (empty when the host lists none).
    fn list_resources(&self) -> impl Future<Output = Result<Vec<ResourceInfo>, CallError>> + Send;
}
