//! What the MCP layer needs of what a connection serves: the JSON-1 methods (run once,
//! protocol-neutral, by `methods::call`), the resource listing, the instructions and the tool
//! set. A trait, not the endpoint's [`Target`](crate::client::Target) itself, because two
//! things serve MCP: one app's endpoint (`mcp/endpoint.rs`) and the all-apps server, whose
//! methods take the app from the `app` argument and which adds `jfgui_apps_list`
//! (`mcp/all_apps.rs`); the unit tests serve it from an in-memory app (`mcp/tests.rs`).

use std::future::Future;

use jfgui_proto::channel::ResourceInfo;
use jfgui_proto::{ActionError, Map, Payload, Value};

use crate::client::method::{Method, MethodError};

/// What an MCP connection serves.
pub(crate) trait Backend: Sync {
    /// The display name (for `serverInfo.title` and the instructions).
    fn display_name(&self) -> String;

    /// Runs a JSON-1 method with `params` (without `protocolVersion`); the result is the JSON-1
    /// result object without `protocolVersion`.
    fn call(
        &self,
        method: Method,
        params: Map,
    ) -> impl Future<Output = Result<Payload, MethodError>> + Send;

    /// The resource listing (empty when the host lists none).
    fn list_resources(&self)
    -> impl Future<Output = Result<Vec<ResourceInfo>, MethodError>> + Send;

    /// The server's instructions for the model.
    fn instructions(&self) -> String;

    /// The `Tool` objects of `tools/list`.
    fn tool_list(&self) -> &'static [Value];

    /// The -32601 message for `resources/*` while nothing lists resources: what to use instead.
    fn no_resources_message(&self) -> &'static str {
        "This app lists no resources, so resources/* is not offered; use the jfgui_resources_read tool with a URI an action returned."
    }

    /// The `jfgui_apps_list` result, for a server that offers that tool (`None`: the tool does
    /// not exist here).
    fn apps_list(&self) -> Option<Result<Map, ActionError>> {
        None
    }
}
