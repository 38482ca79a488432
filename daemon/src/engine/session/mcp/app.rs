//! What the MCP layer needs of the one app a connection is bound to: the JSON-1 methods (run
//! once, protocol-neutral, by [`methods::call`]) and the app's resource listing.
//!
//! A trait rather than [`App`] itself, so the translation is tested against an in-memory app;
//! [`App`] is the one production implementation.

use std::future::Future;

use jfgui_proto::channel::{Call, CallResult, ResourceInfo};
use jfgui_proto::{Map, Reason};

use crate::engine::session::App;
use crate::engine::session::methods::{self, Method};

pub(crate) use crate::engine::session::methods::MethodError;

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
