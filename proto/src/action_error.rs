//! Application errors (SPEC S6 error model): one class per meaning for the caller, a
//! machine-readable reason with its data, and a one-sentence message.
//!
//! The same object travels on the host channel, inside JSON-1 errors
//! (`{code, message, data:{class, reason, ...}}`) and inside MCP tool results
//! (`structuredContent.error{code, class, reason, message, data}`).

use alloc::boxed::Box;
use alloc::string::{String, ToString};
use core::fmt;

use serde::{Deserialize, Serialize};

use crate::{Map, Value};

/// What an error means for the caller; the JSON-RPC error code is fixed per class.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorClass {
    /// 1000: nothing happened; safe to fix and retry.
    NotExecuted,
    /// 1001: it may or may not have happened; inspect before retrying.
    OutcomeUnknown,
    /// 1002: the host reported failure; its own contract says what changed (atomic: nothing).
    Failed,
    /// 1003: a bug in the host or in us.
    Internal,
    /// 1004: no such action (describe), task or resource.
    NotFound,
}

impl ErrorClass {
    /// The JSON-RPC error code of this class.
    pub const fn code(self) -> i64 {
        match self {
            ErrorClass::NotExecuted => 1000,
            ErrorClass::OutcomeUnknown => 1001,
            ErrorClass::Failed => 1002,
            ErrorClass::Internal => 1003,
            ErrorClass::NotFound => 1004,
        }
    }
    /// The class name, e.g. `"not_executed"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            ErrorClass::NotExecuted => "not_executed",
            ErrorClass::OutcomeUnknown => "outcome_unknown",
            ErrorClass::Failed => "failed",
            ErrorClass::Internal => "internal",
            ErrorClass::NotFound => "not_found",
        }
    }
}

/// The machine-readable reason, with its data. The class follows from the reason.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reason {
    /// not_executed: no action of that name.
    UnknownAction {
        /// The requested name.
        action: String,
    },
    /// not_executed: the input does not match the action's input schema.
    SchemaViolation {
        /// JSON pointer into the input.
        pointer: String,
    },
    /// not_executed: the caller lacks capability bits.
    CapabilityMissing {
        /// The missing bits.
        missing: u64,
    },
    /// not_executed: the host cannot run the action now (e.g. a modal dialog is open).
    Unavailable {
        /// Host-defined machine-readable code.
        code: String,
        /// Human explanation.
        explanation: String,
    },
    /// not_executed: an external write came without `expectedRevision`.
    RevisionRequired,
    /// not_executed: `expectedRevision` is not the current revision.
    StaleRevision {
        /// The revision to retry with (after re-reading state).
        current_revision: u64,
    },
    /// not_executed: the app's dispatcher is disabled.
    Disabled,
    /// not_executed: a queue is full; retry later.
    Busy,
    /// not_executed: an atomic batch touches a transaction domain the host cannot roll back.
    TransactionUnsupported {
        /// The domain (absent when the action has none).
        domain: Option<String>,
    },
    /// not_executed: an atomic batch failed preflight at call `index`.
    BatchPreflight {
        /// Index of the failing call.
        index: u32,
        /// That call's own error.
        cause: Box<ActionError>,
    },
    /// outcome_unknown: no reply within the request deadline.
    Timeout,
    /// outcome_unknown: the app went away while the call was outstanding.
    AppDisconnected,
    /// outcome_unknown: the daemon is shutting down.
    DaemonShutdown,
    /// failed: the host reported failure.
    HostError {
        /// Host-defined machine-readable code, if any.
        code: Option<String>,
    },
    /// failed: an atomic batch failed at call `index` and was rolled back.
    RolledBack {
        /// Index of the failing call.
        index: u32,
        /// That call's own error.
        cause: Box<ActionError>,
    },
    /// internal: the host's output does not match the output schema.
    OutputSchema {
        /// The action.
        action: String,
        /// JSON pointer into the output.
        pointer: String,
    },
    /// internal: the reply would exceed the frame or message bound.
    ResponseTooLarge {
        /// The action, when the reply belongs to one.
        action: Option<String>,
    },
    /// internal: the host answered with a reply that does not fit the request.
    InvalidReply,
    /// internal: a call inside an atomic batch returned a deferred task.
    DeferredInAtomic,
    /// not_found: no such action (describe).
    Action {
        /// The requested name.
        action: String,
    },
    /// not_found: no such task.
    Task {
        /// The requested task id.
        task: String,
    },
    /// not_found: no such resource.
    Resource {
        /// The requested URI.
        resource: String,
    },
}

impl Reason {
    /// The class this reason belongs to.
    pub fn class(&self) -> ErrorClass {
        use Reason::*;
        match self {
            UnknownAction { .. }
            | SchemaViolation { .. }
            | CapabilityMissing { .. }
            | Unavailable { .. }
            | RevisionRequired
            | StaleRevision { .. }
            | Disabled
            | Busy
            | TransactionUnsupported { .. }
            | BatchPreflight { .. } => ErrorClass::NotExecuted,
            Timeout | AppDisconnected | DaemonShutdown => ErrorClass::OutcomeUnknown,
            HostError { .. } | RolledBack { .. } => ErrorClass::Failed,
            OutputSchema { .. } | ResponseTooLarge { .. } | InvalidReply | DeferredInAtomic => {
                ErrorClass::Internal
            }
            Action { .. } | Task { .. } | Resource { .. } => ErrorClass::NotFound,
        }
    }

    /// The reason name, e.g. `"stale_revision"`.
    pub fn as_str(&self) -> &'static str {
        use Reason::*;
        match self {
            UnknownAction { .. } => "unknown_action",
            SchemaViolation { .. } => "schema_violation",
            CapabilityMissing { .. } => "capability_missing",
            Unavailable { .. } => "unavailable",
            RevisionRequired => "revision_required",
            StaleRevision { .. } => "stale_revision",
            Disabled => "disabled",
            Busy => "busy",
            TransactionUnsupported { .. } => "transaction_unsupported",
            BatchPreflight { .. } => "batch_preflight",
            Timeout => "timeout",
            AppDisconnected => "app_disconnected",
            DaemonShutdown => "daemon_shutdown",
            HostError { .. } => "host_error",
            RolledBack { .. } => "rolled_back",
            OutputSchema { .. } => "output_schema",
            ResponseTooLarge { .. } => "response_too_large",
            InvalidReply => "invalid_reply",
            DeferredInAtomic => "deferred_in_atomic",
            Action { .. } => "action",
            Task { .. } => "task",
            Resource { .. } => "resource",
        }
    }

    /// The reason's data as the members of the wire `data` object (camelCase names).
    pub fn data(&self) -> Map {
        use Reason::*;
        let mut m = Map::new();
        match self {
            UnknownAction { action } | Action { action } => {
                m.insert("action", action.as_str());
            }
            SchemaViolation { pointer } => {
                m.insert("pointer", pointer.as_str());
            }
            CapabilityMissing { missing } => {
                m.insert("missing", *missing);
            }
            Unavailable { code, explanation } => {
                m.insert("code", code.as_str());
                m.insert("explanation", explanation.as_str());
            }
            StaleRevision { current_revision } => {
                m.insert("currentRevision", *current_revision);
            }
            TransactionUnsupported { domain: Some(d) } => {
                m.insert("domain", d.as_str());
            }
            BatchPreflight { index, cause } | RolledBack { index, cause } => {
                m.insert("index", *index);
                m.insert("cause", cause.to_wire());
            }
            HostError { code: Some(c) } => {
                m.insert("code", c.as_str());
            }
            OutputSchema { action, pointer } => {
                m.insert("action", action.as_str());
                m.insert("pointer", pointer.as_str());
            }
            ResponseTooLarge { action: Some(a) } => {
                m.insert("action", a.as_str());
            }
            Task { task } => {
                m.insert("task", task.as_str());
            }
            Resource { resource } => {
                m.insert("resource", resource.as_str());
            }
            RevisionRequired
            | Disabled
            | Busy
            | TransactionUnsupported { domain: None }
            | Timeout
            | AppDisconnected
            | DaemonShutdown
            | HostError { code: None }
            | ResponseTooLarge { action: None }
            | InvalidReply
            | DeferredInAtomic => {}
        }
        m
    }

    /// Rebuilds a reason from its name and data; `None` when the name is unknown or the data
    /// lacks a member the reason needs, is of the wrong type, or has extra members.
    pub fn from_parts(name: &str, data: &Map) -> Option<Reason> {
        let s = |k: &str| data.get(k).and_then(Value::as_str).map(ToString::to_string);
        let u = |k: &str| data.get(k).and_then(Value::as_u64);
        let cause = || data.get("cause").and_then(ActionError::from_wire).map(Box::new);
        let index = || u("index").and_then(|i| u32::try_from(i).ok());
        let reason = match name {
            "unknown_action" => Reason::UnknownAction { action: s("action")? },
            "schema_violation" => Reason::SchemaViolation { pointer: s("pointer")? },
            "capability_missing" => Reason::CapabilityMissing { missing: u("missing")? },
            "unavailable" => {
                Reason::Unavailable { code: s("code")?, explanation: s("explanation")? }
            }
            "revision_required" => Reason::RevisionRequired,
            "stale_revision" => Reason::StaleRevision { current_revision: u("currentRevision")? },
            "disabled" => Reason::Disabled,
            "busy" => Reason::Busy,
            "transaction_unsupported" => Reason::TransactionUnsupported { domain: s("domain") },
            "batch_preflight" => Reason::BatchPreflight { index: index()?, cause: cause()? },
            "timeout" => Reason::Timeout,
            "app_disconnected" => Reason::AppDisconnected,
            "daemon_shutdown" => Reason::DaemonShutdown,
            "host_error" => Reason::HostError { code: s("code") },
            "rolled_back" => Reason::RolledBack { index: index()?, cause: cause()? },
            "output_schema" => {
                Reason::OutputSchema { action: s("action")?, pointer: s("pointer")? }
            }
            "response_too_large" => Reason::ResponseTooLarge { action: s("action") },
            "invalid_reply" => Reason::InvalidReply,
            "deferred_in_atomic" => Reason::DeferredInAtomic,
            "action" => Reason::Action { action: s("action")? },
            "task" => Reason::Task { task: s("task")? },
            "resource" => Reason::Resource { resource: s("resource")? },
            _ => return None,
        };
        // Strict: the data must be exactly what the reason carries, nothing else.
        (reason.data() == *data).then_some(reason)
    }
}

/// An application error: a [`Reason`] and a one-sentence message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActionError {
    /// Why.
    pub reason: Reason,
    /// One sentence for people and models.
    pub message: String,
}

impl ActionError {
    /// An error with the given reason and message.
    pub fn new(reason: Reason, message: impl Into<String>) -> Self {
        ActionError { reason, message: message.into() }
    }

    /// The class (from the reason).
    pub fn class(&self) -> ErrorClass {
        self.reason.class()
    }

    /// The wire object `{code, class, reason, message, data}`.
    pub fn to_wire(&self) -> Value {
        let class = self.class();
        let mut m = Map::with_capacity(5);
        m.insert("code", class.code());
        m.insert("class", class.as_str());
        m.insert("reason", self.reason.as_str());
        m.insert("message", self.message.as_str());
        m.insert("data", self.reason.data());
        Value::Object(m)
    }

    /// Parses the wire object strictly (exact member set, consistent code and class).
    pub fn from_wire(value: &Value) -> Option<ActionError> {
        let m = value.as_object()?;
        if m.len() != 5 {
            return None;
        }
        let reason = Reason::from_parts(m.get("reason")?.as_str()?, m.get("data")?.as_object()?)?;
        let class = reason.class();
        if m.get("class")?.as_str()? != class.as_str() || m.get("code")?.as_i64()? != class.code() {
            return None;
        }
        Some(ActionError { reason, message: m.get("message")?.as_str()?.to_string() })
    }
}

impl fmt::Display for ActionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.message, self.reason.as_str())
    }
}

#[cfg(feature = "std")]
impl std::error::Error for ActionError {}

impl Serialize for ActionError {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.to_wire().serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for ActionError {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        ActionError::from_wire(&value).ok_or_else(|| {
            serde::de::Error::custom(
                "invalid error object: expected {code, class, reason, message, data} with a known reason",
            )
        })
    }
}
