//! What the MCP layer needs of what a connection serves: the JSON-1 methods (run once,
//! protocol-neutral, by [`methods::call`]), the resource listing, the instructions and the tool
//! set.
//!
//! A trait rather than [`App`] itself, so the translation is tested against an in-memory app.
//! [`App`] is one app's endpoint; `all_apps.rs` implements it for the all-apps server, whose
//! methods take the app from the `app` argument and which adds `jfgui_apps_list`.

use std::future::Future;

use jfgui_proto::channel::{Call, CallResult, ResourceInfo};
use jfgui_proto::{ActionError, Map, Reason, Value};

use crate::session::App;
use crate::session::methods::{self, Method};

pub(crate) use crate::session::methods::MethodError;

/// One app, as seen by an MCP session.
pub(crate) trait AppPort: Sync {
    /// The app's display name (for `serverInfo.title` and the instructions).
    fn display_name(&self) -> String;

    /// Runs a JSON-1 method with `params` (without `protocolVersion`); the result is the JSON-1
    /// result object without `protocolVersion`.
    fn call(
        &self,
        method: Method,
        params: Map,
    ) -> impl Future<Output = Result<Map, MethodError>> + Send;

    /// The app's resource listing (empty when the host lists none).
    fn list_resources(&self)
    -> impl Future<Output = Result<Vec<ResourceInfo>, MethodError>> + Send;

    /// The server's instructions for the model.
    fn instructions(&self) -> String {
        super::select::instructions(&self.display_name())
    }

    /// The `Tool` objects of `tools/list`.
    fn tool_list(&self) -> &'static [Value] {
        super::tools::tool_list()
    }

    /// The `jfgui_apps_list` result, for a server that offers that tool (`None`: the tool does
    /// not exist here).
    fn apps_list(&self) -> Option<Result<Map, ActionError>> {
        None
    }
}

impl AppPort for App {
    fn display_name(&self) -> String {
        self.link().display_name().to_owned()
    }

    fn call(
        &self,
        method: Method,
        params: Map,
    ) -> impl Future<Output = Result<Map, MethodError>> + Send {
        methods::call(self, method, params)
    }

    async fn list_resources(&self) -> Result<Vec<ResourceInfo>, MethodError> {
        match App::call(self, Call::ListResources {}).await? {
            CallResult::Resources { resources } => Ok(resources),
            _ => Err(MethodError::Action(jfgui_proto::ActionError::new(
                Reason::InvalidReply,
                "The app answered the resource listing with a reply of another kind.",
            ))),
        }
    }
}
