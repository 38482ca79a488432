//! Application errors (docs/PROTOCOL.md, "Application errors"): one class per meaning for the caller, a
//! machine-readable reason with its data, and a one-sentence message.
//!
//! The same object travels on the host channel, inside JSON-1 errors
//! (`{code, message, data:{class, reason, ...}}`) and inside MCP tool results
//! (`structuredContent.error{code, class, reason, message, data}`).

use alloc::boxed::Box;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
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
        /// The registered names nearest to it ([`crate::resolve::nearest`]), nearest first;
        /// on the wire only when there are some.
        suggestions: Vec<String>,
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
    /// not_executed: the user said no to the call.
    DeniedByUser,
    /// not_executed: the call needs the user's yes, and the app has no way to ask.
    NoConfirmationUi,
    /// not_executed: nobody answered the call's prompt in time.
    ConfirmationTimeout,
    /// not_executed: the app already has the most calls waiting for the user's answer.
    TooManyPendingConfirmations,
    /// not_executed: the app went away while the call waited for the user's answer, so none
    /// of it ran. Its wire name is `app_disconnected`, as for [`Reason::AppDisconnected`];
    /// the class tells the two apart.
    AppDisconnectedUnconfirmed,
    /// not_executed: the all-apps MCP gateway (`jfgui-agent mcp`) has no daemon connection and
    /// the call never left it. Its wire name is `daemon_unavailable`, as for
    /// [`Reason::DaemonUnavailable`]; the class tells the two apart.
    DaemonUnavailableUnsent,
    /// not_executed: the app is registered but its user has not turned agent access on
    /// (all-apps MCP).
    AppDisabled {
        /// The app's slug.
        app: String,
    },
    /// not_executed: the daemon could not start the installed app the call names: it exited,
    /// could not be run, or did not register with agent access on within the deadline; or its
    /// last start failed moments ago and the next is not due yet.
    ActivationFailed {
        /// The app's slug.
        app: String,
        /// How the process ended (`exit status 3`, `signal 9`), when it did.
        exit_status: Option<String>,
        /// The last KiB of what it wrote to stderr.
        stderr: String,
        /// Milliseconds until the daemon will try to start it again.
        retry_after_ms: u64,
    },
    /// outcome_unknown: no reply within the request deadline.
    Timeout,
    /// outcome_unknown: the app went away while the call was outstanding.
    AppDisconnected,
    /// outcome_unknown: the daemon is shutting down.
    DaemonShutdown,
    /// outcome_unknown: the all-apps MCP gateway (`jfgui-agent mcp`) lost its daemon connection
    /// while the call was outstanding.
    DaemonUnavailable,
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
        /// The registered names nearest to it, as for [`Reason::UnknownAction`].
        suggestions: Vec<String>,
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
    /// not_found: no enabled app answers to this name (all-apps MCP).
    App {
        /// The requested slug, display name or prefix.
        app: String,
        /// The enabled apps, so the caller can pick one.
        apps: Vec<AppRef>,
        /// The enabled apps' slugs nearest to `app`, as for [`Reason::UnknownAction`].
        suggestions: Vec<String>,
    },
}

/// An enabled app as a `not_found/app` error lists it: `{app, displayName}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppRef {
    /// The endpoint slug (what `app` arguments take).
    pub slug: String,
    /// The display name, intact.
    pub display_name: String,
}

impl AppRef {
    fn to_value(&self) -> Value {
        let mut m = Map::with_capacity(2);
        m.insert("app", self.slug.as_str());
        m.insert("displayName", self.display_name.as_str());
        Value::Object(m)
    }

    fn from_value(value: &Value) -> Option<AppRef> {
        let m = value.as_object()?;
        let slug = m.get("app")?.as_str()?.to_string();
        let display_name = m.get("displayName")?.as_str()?.to_string();
        (m.len() == 2).then_some(AppRef { slug, display_name })
    }
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
            | BatchPreflight { .. }
            | DeniedByUser
            | NoConfirmationUi
            | ConfirmationTimeout
            | TooManyPendingConfirmations
            | AppDisconnectedUnconfirmed
            | DaemonUnavailableUnsent
            | AppDisabled { .. }
            | ActivationFailed { .. } => ErrorClass::NotExecuted,
            Timeout | AppDisconnected | DaemonShutdown | DaemonUnavailable => {
                ErrorClass::OutcomeUnknown
            }
            HostError { .. } | RolledBack { .. } => ErrorClass::Failed,
            OutputSchema { .. } | ResponseTooLarge { .. } | InvalidReply | DeferredInAtomic => {
                ErrorClass::Internal
            }
            Action { .. } | Task { .. } | Resource { .. } | App { .. } => ErrorClass::NotFound,
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
            DeniedByUser => "denied_by_user",
            NoConfirmationUi => "no_confirmation_ui",
            ConfirmationTimeout => "confirmation_timeout",
            TooManyPendingConfirmations => "too_many_pending_confirmations",
            ActivationFailed { .. } => "activation_failed",
            Timeout => "timeout",
            AppDisconnected | AppDisconnectedUnconfirmed => "app_disconnected",
            DaemonShutdown => "daemon_shutdown",
            DaemonUnavailable | DaemonUnavailableUnsent => "daemon_unavailable",
            AppDisabled { .. } => "app_disabled",
            HostError { .. } => "host_error",
            RolledBack { .. } => "rolled_back",
            OutputSchema { .. } => "output_schema",
            ResponseTooLarge { .. } => "response_too_large",
            InvalidReply => "invalid_reply",
            DeferredInAtomic => "deferred_in_atomic",
            Action { .. } => "action",
            Task { .. } => "task",
            Resource { .. } => "resource",
            App { .. } => "app",
        }
    }

    /// The reason's data as the members of the wire `data` object (camelCase names).
    pub fn data(&self) -> Map {
        use Reason::*;
        let mut m = Map::new();
        match self {
            UnknownAction { action, suggestions } | Action { action, suggestions } => {
                m.insert("action", action.as_str());
                insert_suggestions(&mut m, suggestions);
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
            AppDisabled { app } => {
                m.insert("app", app.as_str());
            }
            App { app, apps, suggestions } => {
                m.insert("app", app.as_str());
                m.insert("apps", apps.iter().map(AppRef::to_value).collect::<Vec<_>>());
                insert_suggestions(&mut m, suggestions);
            }
            ActivationFailed { app, exit_status, stderr, retry_after_ms } => {
                m.insert("app", app.as_str());
                if let Some(status) = exit_status {
                    m.insert("exitStatus", status.as_str());
                }
                m.insert("stderr", stderr.as_str());
                m.insert("retryAfterMs", *retry_after_ms);
            }
            RevisionRequired
            | Disabled
            | Busy
            | TransactionUnsupported { domain: None }
            | DeniedByUser
            | NoConfirmationUi
            | ConfirmationTimeout
            | TooManyPendingConfirmations
            | AppDisconnectedUnconfirmed
            | Timeout
            | AppDisconnected
            | DaemonShutdown
            | DaemonUnavailable
            | DaemonUnavailableUnsent
            | HostError { code: None }
            | ResponseTooLarge { action: None }
            | InvalidReply
            | DeferredInAtomic => {}
        }
        m
    }

    /// Rebuilds a reason from its name and data; `None` when the name is unknown or the data
    /// lacks a member the reason needs, is of the wrong type, or has extra members. The name
    /// `app_disconnected` gives [`Reason::AppDisconnected`] and `daemon_unavailable`
    /// [`Reason::DaemonUnavailable`]; [`ActionError::from_wire`] reads
    /// the class to tell the `…Unconfirmed` and `…Unsent` variants from them.
    pub fn from_parts(name: &str, data: &Map) -> Option<Reason> {
        let s = |k: &str| data.get(k).and_then(Value::as_str).map(ToString::to_string);
        let u = |k: &str| data.get(k).and_then(Value::as_u64);
        let cause = || data.get("cause").and_then(ActionError::from_wire).map(Box::new);
        let index = || u("index").and_then(|i| u32::try_from(i).ok());
        // Optional: absent means none.
        let suggestions = || match data.get("suggestions") {
            None => Some(Vec::new()),
            Some(v) => v.as_array()?.iter().map(|n| n.as_str().map(ToString::to_string)).collect(),
        };
        let reason = match name {
            "unknown_action" => {
                Reason::UnknownAction { action: s("action")?, suggestions: suggestions()? }
            }
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
            "denied_by_user" => Reason::DeniedByUser,
            "no_confirmation_ui" => Reason::NoConfirmationUi,
            "confirmation_timeout" => Reason::ConfirmationTimeout,
            "too_many_pending_confirmations" => Reason::TooManyPendingConfirmations,
            "activation_failed" => Reason::ActivationFailed {
                app: s("app")?,
                exit_status: s("exitStatus"),
                stderr: s("stderr")?,
                retry_after_ms: u("retryAfterMs")?,
            },
            "timeout" => Reason::Timeout,
            "app_disconnected" => Reason::AppDisconnected,
            "daemon_shutdown" => Reason::DaemonShutdown,
            "daemon_unavailable" => Reason::DaemonUnavailable,
            "app_disabled" => Reason::AppDisabled { app: s("app")? },
            "host_error" => Reason::HostError { code: s("code") },
            "rolled_back" => Reason::RolledBack { index: index()?, cause: cause()? },
            "output_schema" => {
                Reason::OutputSchema { action: s("action")?, pointer: s("pointer")? }
            }
            "response_too_large" => Reason::ResponseTooLarge { action: s("action") },
            "invalid_reply" => Reason::InvalidReply,
            "deferred_in_atomic" => Reason::DeferredInAtomic,
            "action" => Reason::Action { action: s("action")?, suggestions: suggestions()? },
            "task" => Reason::Task { task: s("task")? },
            "resource" => Reason::Resource { resource: s("resource")? },
            "app" => Reason::App {
                app: s("app")?,
                apps: data
                    .get("apps")?
                    .as_array()?
                    .iter()
                    .map(AppRef::from_value)
                    .collect::<Option<Vec<_>>>()?,
                suggestions: suggestions()?,
            },
            _ => return None,
        };
        // Strict: the data must hold exactly the members the reason carries, nothing else.
        // Compared by name, not by value, so member order and integral spellings such as
        // `5.0` do not matter (every member was type-checked above).
        let expected = reason.data();
        let exact = data.len() == expected.len() && data.keys().all(|k| expected.contains_key(k));
        exact.then_some(reason)
    }
}

/// `data.suggestions`, when there are some ("did you mean").
fn insert_suggestions(m: &mut Map, suggestions: &[String]) {
    if !suggestions.is_empty() {
        let names = suggestions.iter().map(|n| Value::from(n.as_str()));
        m.insert("suggestions", names.collect::<Vec<_>>());
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
        let reason = match reason {
            Reason::AppDisconnected
                if m.get("class")?.as_str()? == ErrorClass::NotExecuted.as_str() =>
            {
                Reason::AppDisconnectedUnconfirmed
            }
            Reason::DaemonUnavailable
                if m.get("class")?.as_str()? == ErrorClass::NotExecuted.as_str() =>
            {
                Reason::DaemonUnavailableUnsent
            }
            other => other,
        };
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

#[cfg(test)]
mod tests {
    use alloc::vec;
    use alloc::vec::Vec;

    use super::*;
    use crate::{Limits, Number};

    fn cause() -> Box<ActionError> {
        Box::new(ActionError::new(Reason::SchemaViolation { pointer: "/text".into() }, "Bad."))
    }

    /// One error per reason (both forms of the optional data).
    fn every_reason() -> Vec<ActionError> {
        let s = |x: &str| String::from(x);
        let reasons = vec![
            Reason::UnknownAction { action: s("a.b"), suggestions: Vec::new() },
            Reason::UnknownAction { action: s("a.c"), suggestions: vec![s("a.b")] },
            Reason::SchemaViolation { pointer: s("/x/0") },
            Reason::CapabilityMissing { missing: u64::MAX },
            Reason::Unavailable { code: s("modal"), explanation: s("A dialog is open.") },
            Reason::RevisionRequired,
            Reason::StaleRevision { current_revision: 12 },
            Reason::Disabled,
            Reason::Busy,
            Reason::TransactionUnsupported { domain: Some(s("document")) },
            Reason::TransactionUnsupported { domain: None },
            Reason::BatchPreflight { index: 3, cause: cause() },
            Reason::DeniedByUser,
            Reason::NoConfirmationUi,
            Reason::ConfirmationTimeout,
            Reason::TooManyPendingConfirmations,
            Reason::AppDisconnectedUnconfirmed,
            Reason::DaemonUnavailableUnsent,
            Reason::AppDisabled { app: s("sketch") },
            Reason::ActivationFailed {
                app: s("sketch"),
                exit_status: Some(s("exit status 3")),
                stderr: s("no display"),
                retry_after_ms: 10_000,
            },
            Reason::ActivationFailed {
                app: s("sketch"),
                exit_status: None,
                stderr: s(""),
                retry_after_ms: 0,
            },
            Reason::Timeout,
            Reason::AppDisconnected,
            Reason::DaemonShutdown,
            Reason::DaemonUnavailable,
            Reason::HostError { code: Some(s("disk_full")) },
            Reason::HostError { code: None },
            Reason::RolledBack { index: 0, cause: cause() },
            Reason::OutputSchema { action: s("a"), pointer: s("") },
            Reason::ResponseTooLarge { action: Some(s("a")) },
            Reason::ResponseTooLarge { action: None },
            Reason::InvalidReply,
            Reason::DeferredInAtomic,
            Reason::Action { action: s("a"), suggestions: Vec::new() },
            Reason::Action { action: s("b"), suggestions: vec![s("a"), s("c")] },
            Reason::Task { task: s("t-1") },
            Reason::Resource { resource: s("render://view.png") },
            Reason::App {
                app: s("x"),
                apps: vec![AppRef { slug: s("notes-a"), display_name: s("Notes A") }],
                suggestions: Vec::new(),
            },
            Reason::App {
                app: s("notes"),
                apps: vec![AppRef { slug: s("notes-a"), display_name: s("Notes A") }],
                suggestions: vec![s("notes-a")],
            },
        ];
        reasons.into_iter().map(|r| ActionError::new(r, "Something happened.")).collect()
    }

    fn members(v: &Value) -> &Map {
        v.as_object().unwrap()
    }

    fn with(v: &Value, key: &str, value: Value) -> Value {
        let mut m = members(v).clone();
        m.insert(key, value);
        Value::Object(m)
    }

    fn with_data(v: &Value, key: &str, value: Value) -> Value {
        let mut data = members(v).get("data").unwrap().as_object().unwrap().clone();
        data.insert(key, value);
        with(v, "data", Value::Object(data))
    }

    #[test]
    fn every_reason_round_trips_through_the_wire_object() {
        for e in every_reason() {
            let wire = e.to_wire();
            let m = members(&wire);
            assert_eq!(
                m.keys().collect::<Vec<_>>(),
                ["code", "class", "reason", "message", "data"]
            );
            assert_eq!(m.get("code").and_then(Value::as_i64), Some(e.class().code()));
            assert_eq!(m.get("class").and_then(Value::as_str), Some(e.class().as_str()));
            assert_eq!(m.get("reason").and_then(Value::as_str), Some(e.reason.as_str()));
            assert_eq!(ActionError::from_wire(&wire).as_ref(), Some(&e), "{wire:?}");
        }
    }

    #[test]
    fn every_reason_round_trips_through_serde_and_the_encoder() {
        for e in every_reason() {
            let value = crate::to_value(&e).unwrap();
            assert_eq!(value, e.to_wire());
            let bytes = crate::encode(&value, &Limits::DEFAULT).unwrap();
            let parsed = crate::parse(&bytes, &Limits::DEFAULT).unwrap();
            assert_eq!(crate::from_value::<ActionError>(parsed).unwrap(), e);
        }
    }

    #[test]
    fn classes_and_codes_follow_the_spec_table() {
        let class_of = |name: &str| {
            every_reason().into_iter().find(|e| e.reason.as_str() == name).unwrap().class()
        };
        assert_eq!(class_of("stale_revision"), ErrorClass::NotExecuted);
        assert_eq!(class_of("batch_preflight").code(), 1000);
        assert_eq!(class_of("timeout").code(), 1001);
        assert_eq!(class_of("rolled_back").code(), 1002);
        assert_eq!(class_of("output_schema").code(), 1003);
        assert_eq!(class_of("resource").code(), 1004);
        assert_eq!(class_of("denied_by_user"), ErrorClass::NotExecuted);
        assert_eq!(class_of("too_many_pending_confirmations"), ErrorClass::NotExecuted);
        // One name, two classes: whether the call had run is what the class says.
        let gone = |r: Reason| r.class();
        assert_eq!(gone(Reason::AppDisconnected), ErrorClass::OutcomeUnknown);
        assert_eq!(gone(Reason::AppDisconnectedUnconfirmed), ErrorClass::NotExecuted);
        assert_eq!(gone(Reason::DaemonUnavailable), ErrorClass::OutcomeUnknown);
        assert_eq!(gone(Reason::DaemonUnavailableUnsent), ErrorClass::NotExecuted);
        assert_eq!(ErrorClass::OutcomeUnknown.as_str(), "outcome_unknown");
    }

    #[test]
    fn data_uses_camel_case_names() {
        let e = ActionError::new(Reason::StaleRevision { current_revision: 5 }, "Stale.");
        let data = e.to_wire().get("data").unwrap().clone();
        assert_eq!(data.get("currentRevision").and_then(Value::as_u64), Some(5));
    }

    #[test]
    fn extra_data_members_are_rejected_for_every_reason() {
        for e in every_reason() {
            let bad = with_data(&e.to_wire(), "extra", Value::Null);
            assert_eq!(ActionError::from_wire(&bad), None, "{bad:?}");
        }
    }

    #[test]
    fn missing_or_mistyped_data_is_rejected() {
        for e in every_reason() {
            let wire = e.to_wire();
            let data = members(&wire).get("data").unwrap().as_object().unwrap();
            for key in data.keys() {
                let mut fewer = data.clone();
                fewer.remove(key);
                let optional = matches!(
                    (e.reason.as_str(), key),
                    ("transaction_unsupported", "domain")
                        | ("host_error", "code")
                        | ("response_too_large", "action")
                        | (_, "suggestions")
                        | ("activation_failed", "exitStatus")
                );
                let missing = with(&wire, "data", Value::Object(fewer));
                assert_eq!(ActionError::from_wire(&missing).is_some(), optional, "{missing:?}");
                let mistyped = with_data(&wire, key, Value::Bool(true));
                assert_eq!(ActionError::from_wire(&mistyped), None, "{mistyped:?}");
            }
        }
    }

    #[test]
    fn envelope_is_checked_strictly() {
        let e = ActionError::new(Reason::Busy, "Busy.");
        let wire = e.to_wire();
        assert_eq!(ActionError::from_wire(&with(&wire, "code", 1001i64.into())), None);
        assert_eq!(ActionError::from_wire(&with(&wire, "class", "failed".into())), None);
        assert_eq!(ActionError::from_wire(&with(&wire, "reason", "nope".into())), None);
        assert_eq!(ActionError::from_wire(&with(&wire, "message", Value::Null)), None);
        assert_eq!(ActionError::from_wire(&with(&wire, "data", Value::Null)), None);
        assert_eq!(ActionError::from_wire(&with(&wire, "extra", Value::Null)), None);
        let mut no_message = members(&wire).clone();
        no_message.remove("message");
        assert_eq!(ActionError::from_wire(&Value::Object(no_message)), None);
        assert_eq!(ActionError::from_wire(&Value::Null), None);
        let err = crate::from_value::<ActionError>(with(&wire, "code", 1i64.into())).unwrap_err();
        assert!(err.message().contains("invalid error object"), "{err}");
    }

    #[test]
    fn member_order_and_integral_spellings_do_not_matter() {
        let e = ActionError::new(
            Reason::Unavailable { code: "modal".into(), explanation: "Open.".into() },
            "Unavailable.",
        );
        let wire = e.to_wire();
        let reverse = |m: &Map| {
            let mut entries: Vec<(String, Value)> =
                m.iter().map(|(k, v)| (String::from(k), v.clone())).collect();
            entries.reverse();
            entries.into_iter().collect::<Map>()
        };
        let mut reversed = reverse(members(&wire));
        let data = reverse(reversed.get("data").unwrap().as_object().unwrap());
        reversed.insert("data", data);
        assert_eq!(reversed.keys().next(), Some("data"));
        assert_eq!(ActionError::from_wire(&Value::Object(reversed)), Some(e));
        let stale = ActionError::new(Reason::StaleRevision { current_revision: 5 }, "Stale.");
        let spelled = with(
            &with_data(
                &stale.to_wire(),
                "currentRevision",
                Value::Number(Number::from_token("5.0").unwrap()),
            ),
            "code",
            Value::Number(Number::from_token("1e3").unwrap()),
        );
        assert_eq!(ActionError::from_wire(&spelled), Some(stale));
    }

    #[test]
    fn display_names_the_reason() {
        let e = ActionError::new(Reason::Timeout, "No reply within 30 s.");
        assert_eq!(alloc::format!("{e}"), "No reply within 30 s. (timeout)");
    }
}
