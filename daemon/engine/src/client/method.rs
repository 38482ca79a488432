//! The ten JSON-1 methods as names and the errors they can end in: the leaf both protocols and
//! the audit hook share (`methods.rs` implements the methods).

use std::fmt;

use jfgui_proto::{ActionError, Map, Payload, RawJson, Value};

/// A call's parameters as the client sent them: the params object, and its `input` kept as the
/// fragment the client's line held it as when the protocol kept one (JSON-1 does: the daemon
/// only passes an action's input on), with `null` in its place in `params`.
#[derive(Debug, Clone, PartialEq)]
pub struct Args {
    /// The params object (without `protocolVersion`).
    pub params: Map,
    /// `params.input` as the fragment it was read as, when it was.
    pub input: Option<RawJson>,
}

impl Args {
    /// `params.input` as received: the fragment, else the tree.
    pub fn input(&self) -> Option<Payload> {
        match &self.input {
            Some(raw) => Some(Payload::Raw(raw.clone())),
            None => self.params.get("input").cloned().map(Payload::Value),
        }
    }

    /// The whole params object as received, the fragment in its place.
    pub fn to_payload(&self) -> Payload {
        let Some(raw) = &self.input else { return Value::Object(self.params.clone()).into() };
        let mut payload = Payload::from(self.params.clone());
        payload.insert("input", raw.clone());
        payload
    }
}

impl From<Map> for Args {
    fn from(params: Map) -> Args {
        Args { params, input: None }
    }
}

/// The ten methods.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Method {
    /// `agent/info`
    AgentInfo,
    /// `actions/list`
    ActionsList,
    /// `actions/describe`
    ActionsDescribe,
    /// `actions/execute`
    ActionsExecute,
    /// `actions/batch`
    ActionsBatch,
    /// `state/inspect`
    StateInspect,
    /// `tasks/get`
    TasksGet,
    /// `tasks/cancel`
    TasksCancel,
    /// `resources/read`
    ResourcesRead,
    /// `view/render`
    ViewRender,
}

impl Method {
    /// Every method, in the order of `docs/PROTOCOL.md`, "Methods".
    pub const ALL: [Method; 10] = [
        Method::AgentInfo,
        Method::ActionsList,
        Method::ActionsDescribe,
        Method::ActionsExecute,
        Method::ActionsBatch,
        Method::StateInspect,
        Method::TasksGet,
        Method::TasksCancel,
        Method::ResourcesRead,
        Method::ViewRender,
    ];

    /// The method of a JSON-1 name.
    pub fn from_name(name: &str) -> Option<Method> {
        Method::ALL.into_iter().find(|m| m.name() == name)
    }

    /// Answered from the daemon's own state (registration cache, task table), without a
    /// round trip to the app.
    pub fn is_local(self) -> bool {
        matches!(self, Method::ActionsList | Method::ActionsDescribe | Method::TasksGet)
    }

    /// The JSON-1 name, e.g. `"actions/list"`.
    pub fn name(self) -> &'static str {
        match self {
            Method::AgentInfo => "agent/info",
            Method::ActionsList => "actions/list",
            Method::ActionsDescribe => "actions/describe",
            Method::ActionsExecute => "actions/execute",
            Method::ActionsBatch => "actions/batch",
            Method::StateInspect => "state/inspect",
            Method::TasksGet => "tasks/get",
            Method::TasksCancel => "tasks/cancel",
            Method::ResourcesRead => "resources/read",
            Method::ViewRender => "view/render",
        }
    }
}

/// Why a method call failed.
#[derive(Debug, Clone, PartialEq)]
pub enum MethodError {
    /// -32602; `data` carries `reason` (and usually `param`).
    InvalidParams {
        /// One sentence.
        message: String,
        /// `{reason, param?, ...}`.
        data: Map,
    },
    /// -32603: our bug.
    Internal {
        /// One sentence.
        message: String,
    },
    /// An application error (codes 1000–1004).
    Action(ActionError),
}

impl MethodError {
    /// A short outcome name for logs: `invalid_params`, `internal` or the reason.
    pub fn outcome_name(&self) -> &'static str {
        match self {
            MethodError::InvalidParams { .. } => "invalid_params",
            MethodError::Internal { .. } => "internal",
            MethodError::Action(e) => e.reason.as_str(),
        }
    }
}

impl fmt::Display for MethodError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MethodError::InvalidParams { message, .. } | MethodError::Internal { message } => {
                f.write_str(message)
            }
            MethodError::Action(e) => e.fmt(f),
        }
    }
}

impl From<ActionError> for MethodError {
    fn from(e: ActionError) -> Self {
        MethodError::Action(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn method_names_round_trip() {
        for m in Method::ALL {
            assert_eq!(Method::from_name(m.name()), Some(m));
        }
        assert_eq!(Method::from_name("actions/lists"), None);
        assert_eq!(Method::from_name("initialize"), None);
    }
}
