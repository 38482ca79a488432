//! One app's endpoint as an MCP server: the nine tools over that app's JSON-1 methods, its
//! resources, and instructions that name it.

use std::future::Future;

use jfgui_proto::channel::{Call, CallResult, ResourceInfo};
use jfgui_proto::{Map, Payload, Reason, Value};

use super::backend::Backend;
use super::tools;
use crate::client::Target;
use crate::client::method::{Method, MethodError};
use crate::client::methods;

impl Backend for Target {
    fn display_name(&self) -> String {
        self.app().registration().display_name().to_owned()
    }

    fn call(
        &self,
        method: Method,
        params: Map,
    ) -> impl Future<Output = Result<Payload, MethodError>> + Send {
        methods::call(self, method, params.into())
    }

    async fn list_resources(&self) -> Result<Vec<ResourceInfo>, MethodError> {
        match self.app().call(Call::ListResources {}).await? {
            CallResult::Resources { resources } => Ok(resources),
            _ => Err(MethodError::Action(jfgui_proto::ActionError::new(
                Reason::InvalidReply,
                "The app answered the resource listing with a reply of another kind.",
            ))),
        }
    }

    fn instructions(&self) -> String {
        instructions(&self.display_name())
    }

    fn tool_list(&self) -> &'static [Value] {
        tools::tool_list()
    }
}

/// A one-app endpoint's instructions for the model.
pub(crate) fn instructions(display_name: &str) -> String {
    format!(
        "You are connected to the application \"{display_name}\" through jfgui-agentd. Drive it with semantic actions, never screen coordinates: find actions with jfgui_actions_search (describe: true returns their input schemas too; else read one with jfgui_actions_describe), read the state and its revision with jfgui_state_inspect, then run actions with jfgui_actions_execute, or several with jfgui_actions_batch (atomic: all or nothing). Writes need expectedRevision; after a stale_revision error, re-read the state and retry with data.currentRevision. Long-running actions return a task: follow it with jfgui_tasks_get, stop it with jfgui_tasks_cancel. See the view with jfgui_view_render (the result is the image) and read resources with jfgui_resources_read. {}",
        tools::ERRORS_EXPLAINED
    )
}
