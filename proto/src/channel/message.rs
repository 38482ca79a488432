//! The typed messages of the host channel. Every struct rejects unknown fields; every enum is
//! externally tagged (`{"hello":{...}}`), so decoding never buffers and numbers stay exact.
//! Member names are camelCase everywhere, struct variants included (`rename_all_fields`).

use alloc::boxed::Box;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use serde::{Deserialize, Serialize};

use super::CHANNEL_VERSION;
use super::consent::{Awaiting, Consent, ConsentDecision, Withdraw};
use crate::action::{check_action, check_registration};
use crate::{ActionError, ActionKind, ActionSpec, Payload, RegistrationError, Value};

/// App → daemon.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub enum AppMessage {
    /// First message: who the app is.
    Hello(Hello),
    /// One page of action specs (after `hello`, before `ready`).
    Actions(ActionsPage),
    /// Registration complete.
    Ready(Ready),
    /// The dispatcher was enabled or disabled (after `ready`).
    Enabled(EnabledState),
    /// The answer to one request.
    Reply(Reply),
    /// A deferred task changed state.
    Task(TaskSnapshot),
    /// The app is leaving.
    Bye(Bye),
}

/// Daemon → app.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub enum DaemonMessage {
    /// Registration accepted.
    Welcome(Welcome),
    /// Registration refused; the daemon closes the connection after this.
    Refused(Refused),
    /// A call for the app to answer with a [`Reply`] of the same id.
    Request(Request),
    /// The daemon is leaving (shutdown).
    Bye(Bye),
    /// A call the app served was recorded in the audit log; sent only to an app that asked
    /// for it in `hello.activity` (an older app would reject the unknown message).
    Activity(Activity),
    /// A prompt taken back: its confirmation deadline passed or its client went away. Sent
    /// only for a task the app reported as `awaiting: "confirmation"`.
    Withdraw(Withdraw),
}

/// `hello{channelVersion, displayName, pid, enabled, activity?}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Hello {
    /// Must equal the daemon's [`CHANNEL_VERSION`](super::CHANNEL_VERSION).
    pub channel_version: u32,
    /// Shown to people; any Unicode. The daemon derives the endpoint slug from it.
    pub display_name: String,
    /// The app's process id (informational; the daemon also reads peer credentials).
    pub pid: u32,
    /// Whether the dispatcher starts enabled.
    pub enabled: bool,
    /// Whether the app wants an [`Activity`] notice after each recorded call it served.
    /// Serialized only when true, so a hello that does not ask has the original shape.
    #[serde(default, skip_serializing_if = "core::ops::Not::not")]
    pub activity: bool,
}

impl Hello {
    /// The handshake's version check: `Ok` when the app speaks [`CHANNEL_VERSION`], else the
    /// `refused{reason:"channel_version"}` the daemon sends before closing.
    ///
    /// ```
    /// # use jfgui_proto::channel::{CHANNEL_VERSION, Hello, Refused};
    /// let hello = Hello { channel_version: CHANNEL_VERSION + 1, display_name: "Notepad".into(), pid: 1, enabled: false, activity: false };
    /// assert_eq!(hello.check_version().unwrap_err().reason, Refused::CHANNEL_VERSION);
    /// ```
    pub fn check_version(&self) -> Result<(), Refused> {
        if self.channel_version == CHANNEL_VERSION {
            return Ok(());
        }
        Err(Refused {
            reason: Refused::CHANNEL_VERSION.to_string(),
            message: format!(
                "channel version {} is not supported; this daemon speaks version {CHANNEL_VERSION}",
                self.channel_version
            ),
        })
    }
}

/// One page of action specs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ActionsPage {
    /// At most [`MAX_ACTIONS_PER_PAGE`](super::MAX_ACTIONS_PER_PAGE).
    pub actions: Vec<ActionInfo>,
}

/// An action as the daemon caches it, with schemas already rendered to JSON Schema. This is
/// also the `action` object of `actions/describe`; its members come in this order, so the
/// daemon's `actions/list` row (`name` to `confirm`) is a prefix of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ActionInfo {
    /// Action name (1–128 ASCII letters, digits, `.`, `_` or `-`).
    pub name: String,
    /// Description.
    pub description: String,
    /// Read or write.
    pub kind: ActionKind,
    /// Short human name for prompts, notices and the audit table.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Whether every external call needs the user's yes or a standing grant. Serialized only
    /// when true, so an action without it has the original shape.
    #[serde(default, skip_serializing_if = "core::ops::Not::not")]
    pub confirm: bool,
    /// JSON Schema of the input.
    pub input_schema: Value,
    /// JSON Schema of the output.
    pub output_schema: Value,
    /// Required capability bits.
    pub capabilities: u64,
    /// Whether a call adds an undo step.
    pub undo: bool,
    /// Transaction domain.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transaction: Option<String>,
    /// GUI command id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command_id: Option<u32>,
}

impl ActionSpec {
    /// The spec as registered on the host channel and shown by `actions/describe`, with both
    /// schemas rendered to JSON Schema. Fails when the name is not 1–128 ASCII letters, digits,
    /// `.`, `_` or `-`, or the title breaks its rule.
    pub fn info(&self) -> Result<ActionInfo, RegistrationError> {
        check_action(self.name, self.title)?;
        Ok(ActionInfo {
            name: self.name.to_string(),
            description: self.description.to_string(),
            kind: self.kind,
            input_schema: self.input.to_json_schema(),
            output_schema: self.output.to_json_schema(),
            capabilities: self.capabilities,
            undo: self.undo,
            transaction: self.transaction.map(ToString::to_string),
            command_id: self.command_id,
            title: self.title.map(ToString::to_string),
            confirm: self.confirm,
        })
    }
}

/// [`validate_registration`](crate::validate_registration) for actions as received on the host
/// channel.
pub fn validate_action_infos(actions: &[ActionInfo]) -> Result<(), RegistrationError> {
    check_registration(actions.iter().map(|a| (a.name.as_str(), a.command_id, a.title.as_deref())))
}

/// `ready{actionCount}`: ends registration; the count must equal the actions sent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Ready {
    /// Total actions sent in `actions` pages.
    pub action_count: u32,
}

/// `enabled{enabled}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EnabledState {
    /// The new state.
    pub enabled: bool,
}

/// `welcome{slug, limits}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Welcome {
    /// The endpoint slug the daemon allocated (unique, ASCII, at most 48 characters).
    pub slug: String,
    /// Bounds the app must respect in its replies.
    pub limits: ChannelLimits,
}

/// Bounds announced by the daemon in `welcome`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ChannelLimits {
    /// Largest frame body the daemon accepts.
    pub max_frame_bytes: u32,
    /// Largest client-visible message; a reply that would make a larger client response is
    /// answered `internal/response_too_large` by the app itself.
    pub max_message_bytes: u32,
}

/// `refused{reason, message}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Refused {
    /// Machine-readable: one of the `Refused::*` constants ([`Refused::CHANNEL_VERSION`], ...).
    pub reason: String,
    /// One sentence.
    pub message: String,
}

impl Refused {
    /// `hello.channelVersion` differs from the daemon's [`CHANNEL_VERSION`].
    pub const CHANNEL_VERSION: &'static str = "channel_version";
    /// The action list has an invalid or duplicate name or command id, or the registration sequence was wrong (a page over
    /// [`MAX_ACTIONS_PER_PAGE`](super::MAX_ACTIONS_PER_PAGE), `ready.actionCount` not the
    /// number of actions sent, a message other than `actions`/`ready` before `welcome`).
    pub const INVALID_REGISTRATION: &'static str = "invalid_registration";
    /// The daemon already serves its maximum number of apps.
    pub const TOO_MANY_APPS: &'static str = "too_many_apps";
    /// The registration would take the daemon past its budget for all registrations.
    pub const REGISTRATION_TOO_LARGE: &'static str = "registration_too_large";
    /// The daemon is shutting down.
    pub const SHUTDOWN: &'static str = "shutdown";
}

impl From<RegistrationError> for Refused {
    /// `invalid_registration`, with the error (naming the culprit) as the message.
    fn from(error: RegistrationError) -> Self {
        Refused { reason: Refused::INVALID_REGISTRATION.to_string(), message: error.to_string() }
    }
}

/// `bye{reason}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Bye {
    /// Machine-readable, e.g. [`Bye::SHUTDOWN`], [`Bye::EXIT`].
    pub reason: String,
}

impl Bye {
    /// The daemon is shutting down.
    pub const SHUTDOWN: &'static str = "shutdown";
    /// The app is exiting.
    pub const EXIT: &'static str = "exit";
}

/// `activity{client, action, outcome, reason?}`: who did what through the app, and how it
/// ended, as the audit log recorded it. A notice: the app never answers it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Activity {
    /// The client in a few words: its MCP `clientInfo` name and version, else its
    /// executable's name and pid, then how it came (`via endpoint`, `via all-apps-mcp`, ...).
    pub client: String,
    /// The action; a batch's actions joined by `, `; `tasks/cancel` for a task cancel.
    pub action: String,
    /// `ok`, `refused`, `failed` or `unknown` (as in the audit record).
    pub outcome: String,
    /// The machine-readable reason when not `ok`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// `request{id, call}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Request {
    /// Chosen by the daemon, unique among its outstanding requests on this channel.
    pub id: u64,
    /// What to do.
    pub call: Call,
}

/// The calls the daemon forwards to an app.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", rename_all_fields = "camelCase", deny_unknown_fields)]
pub enum Call {
    /// `actions/execute` → [`CallResult::Executed`] or [`CallResult::Deferred`].
    Execute(ExecuteCall),
    /// `actions/batch` → [`CallResult::Batch`].
    Batch(BatchCall),
    /// Current revision (for `agent/info`) → [`CallResult::Revision`].
    Revision {},
    /// `state/inspect` → [`CallResult::Inspected`].
    Inspect {
        /// Host-defined query (`{}` when the client gave none).
        input: Value,
    },
    /// Resource listing (MCP `resources/list`) → [`CallResult::Resources`].
    ListResources {},
    /// `resources/read` → [`CallResult::Chunk`].
    ReadResource(ReadResource),
    /// `view/render` → [`CallResult::Rendered`].
    Render {
        /// Arguments of the app's `ui.render` action.
        input: Value,
    },
    /// `tasks/cancel` → [`CallResult::Task`].
    CancelTask {
        /// The task id.
        id: String,
    },
}

/// One action call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ExecuteCall {
    /// Action name.
    pub action: String,
    /// Input (`{}` when the client gave none): a tree, except that the daemon may send the
    /// fragment a client's request carried ([`Payload::Raw`]); an app always decodes a tree.
    pub input: Payload,
    /// Required for external writes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_revision: Option<u64>,
    /// Who asks, and whether a grant covers the call: only on a call of a `confirm` action.
    /// Inside a batch's `calls` it is never set (the batch carries it). Boxed: every call
    /// moves through queues, and most carry none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consent: Option<Box<Consent>>,
}

/// A batch: in order, or atomic (all or nothing).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BatchCall {
    /// 1–128 calls.
    pub calls: Vec<ExecuteCall>,
    /// All-or-nothing.
    pub atomic: bool,
    /// Non-atomic only: stop at the first error.
    pub stop_on_error: bool,
    /// Who asks, and whether a grant covers every `confirm` call of the batch: only on a batch
    /// holding one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consent: Option<Box<Consent>>,
}

/// A chunked resource read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReadResource {
    /// App-owned opaque URI.
    pub uri: String,
    /// Byte offset.
    pub offset: u64,
    /// 1–65536 bytes.
    pub limit: u32,
}

/// `reply{id, outcome}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Reply {
    /// The request's id.
    pub id: u64,
    /// Result or error.
    pub outcome: Outcome,
}

/// `{"ok": result}` or `{"error": error}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub enum Outcome {
    /// Success.
    Ok(CallResult),
    /// An application error.
    Error(ActionError),
}

/// Successful results, one variant per [`Call`] kind.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", rename_all_fields = "camelCase", deny_unknown_fields)]
pub enum CallResult {
    /// The action ran synchronously.
    Executed {
        /// Output (valid against the output schema): a tree as the app sends it, kept as the
        /// fragment it arrived as on the daemon's side ([`Payload::Raw`]).
        output: Payload,
        /// Revision read from the host after the call.
        revision: u64,
    },
    /// The action started a task.
    Deferred {
        /// The task as just created.
        task: TaskSnapshot,
        /// Revision after starting it.
        revision: u64,
    },
    /// Batch results.
    Batch {
        /// One entry per attempted call, in order.
        results: Vec<BatchEntry>,
        /// Revision after the batch.
        revision: u64,
    },
    /// The current revision.
    Revision {
        /// Revision.
        revision: u64,
    },
    /// Inspection result.
    Inspected {
        /// Revision.
        revision: u64,
        /// Host-defined state.
        state: Value,
    },
    /// Resource listing.
    Resources {
        /// Resources currently offered.
        resources: Vec<ResourceInfo>,
    },
    /// One resource chunk.
    Chunk(ResourceChunk),
    /// What `ui.render` returned.
    Rendered {
        /// Output of `ui.render`.
        output: Value,
        /// Revision.
        revision: u64,
    },
    /// A task's state after a cancel request.
    Task(TaskSnapshot),
}

/// One attempted call of a batch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BatchEntry {
    /// Index into `calls`.
    pub index: u32,
    /// What happened.
    pub outcome: BatchOutcome,
}

/// The outcome of one batch call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub enum BatchOutcome {
    /// Output of a synchronous call.
    Output(Value),
    /// A deferred call started this task (non-atomic batches only).
    Task(TaskSnapshot),
    /// The call failed.
    Error(ActionError),
}

/// `{uri, name, mimeType, size?}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ResourceInfo {
    /// App-owned opaque URI.
    pub uri: String,
    /// Short name.
    pub name: String,
    /// MIME type.
    pub mime_type: String,
    /// Size in bytes, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
}

/// A chunk of a resource.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ResourceChunk {
    /// The URI read.
    pub uri: String,
    /// MIME type.
    pub mime_type: String,
    /// Offset of this chunk.
    pub offset: u64,
    /// Total size of the resource.
    pub total_size: u64,
    /// The bytes, standard base64 with padding.
    pub data: String,
    /// True when this chunk reaches the end.
    pub eof: bool,
}

/// A deferred task's state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TaskSnapshot {
    /// App-chosen id, unique within the app.
    pub id: String,
    /// State.
    pub state: TaskState,
    /// Progress while running.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub progress: Option<Progress>,
    /// Result when completed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// Error when failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ActionError>,
    /// Set while a running task waits for the user to allow its call (nothing of it has run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub awaiting: Option<Awaiting>,
    /// How the user decided, on a task that waited for a confirmation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consent: Option<ConsentDecision>,
}

impl TaskSnapshot {
    /// A task in `state` with nothing else reported.
    pub fn new(id: impl Into<String>, state: TaskState) -> TaskSnapshot {
        TaskSnapshot {
            id: id.into(),
            state,
            progress: None,
            result: None,
            error: None,
            awaiting: None,
            consent: None,
        }
    }
}

/// Task states. `running → cancelling → cancelled`, `running → completed | failed`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskState {
    /// Working.
    Running,
    /// Cancel requested; the host stops at its next checkpoint.
    Cancelling,
    /// Stopped by a cancel request.
    Cancelled,
    /// Finished with a result.
    Completed,
    /// Finished with an error.
    Failed,
}

impl TaskState {
    /// True for `cancelled`, `completed` and `failed`.
    pub const fn is_final(self) -> bool {
        matches!(self, TaskState::Cancelled | TaskState::Completed | TaskState::Failed)
    }
}

/// Progress of a running task.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Progress {
    /// Units done so far.
    pub done: u64,
    /// Units in all, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    /// A short status line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

#[cfg(test)]
mod tests {
    use alloc::boxed::Box;
    use alloc::vec;

    use super::super::{
        Agent, ConsentAnswer, DEFAULT_MAX_FRAME, FrameDecoder, FrameError, WithdrawReason,
        decode_message, encode_frame,
    };
    use super::*;
    use crate::{ActionSpec, Limits, Map, Number, Reason};

    fn limits() -> Limits {
        super::super::frame_limits(&Limits::DEFAULT, DEFAULT_MAX_FRAME)
    }

    fn obj(members: &[(&str, Value)]) -> Value {
        let mut m = Map::new();
        for (k, v) in members {
            m.insert(*k, v.clone());
        }
        Value::Object(m)
    }

    fn task(state: TaskState) -> TaskSnapshot {
        TaskSnapshot {
            id: "export-1".into(),
            state,
            progress: (state == TaskState::Running).then(|| Progress {
                done: 3,
                total: Some(10),
                message: Some("writing".into()),
            }),
            result: (state == TaskState::Completed).then(|| obj(&[("uri", "export://a".into())])),
            error: (state == TaskState::Failed).then(|| {
                ActionError::new(Reason::HostError { code: Some("disk_full".into()) }, "Disk full.")
            }),
            awaiting: None,
            consent: None,
        }
    }

    fn execute(action: &str, expected_revision: Option<u64>) -> ExecuteCall {
        ExecuteCall {
            action: action.into(),
            input: obj(&[("text", "hi".into())]).into(),
            expected_revision,
            consent: None,
        }
    }

    fn consent(granted: Option<u64>, says: Option<&str>) -> Box<Consent> {
        Box::new(Consent {
            agent: Agent {
                exe: "/usr/bin/claude".into(),
                pid: granted.is_none().then_some(4242),
                says: says.map(Into::into),
                transport: "all-apps-mcp".into(),
            },
            granted,
            may_grant: granted.is_none(),
        })
    }

    fn reply(id: u64, outcome: Outcome) -> AppMessage {
        AppMessage::Reply(Reply { id, outcome })
    }

    /// Every app message, every call result and every outcome shape.
    fn app_samples() -> Vec<AppMessage> {
        let insert = ActionSpec {
            command_id: Some(100),
            transaction: Some("document"),
            ..ActionSpec::write("document.text.insert", "Insert text.")
        };
        let mut out = vec![
            AppMessage::Hello(Hello {
                channel_version: super::super::CHANNEL_VERSION,
                display_name: "Notepad — ünïcode".into(),
                pid: 4242,
                enabled: true,
                activity: true,
            }),
            AppMessage::Actions(ActionsPage {
                actions: vec![
                    insert.info().unwrap(),
                    ActionSpec::read("document.get", "Read.").info().unwrap(),
                    ActionSpec::write("document.clear", "Clear.")
                        .titled("Clear the document")
                        .confirmed()
                        .info()
                        .unwrap(),
                ],
            }),
            AppMessage::Actions(ActionsPage { actions: vec![] }),
            AppMessage::Ready(Ready { action_count: 2 }),
            AppMessage::Enabled(EnabledState { enabled: false }),
            AppMessage::Bye(Bye { reason: Bye::EXIT.into() }),
            reply(1, Outcome::Ok(CallResult::Executed { output: obj(&[]).into(), revision: 7 })),
            reply(
                2,
                Outcome::Ok(CallResult::Deferred { task: task(TaskState::Running), revision: 8 }),
            ),
            reply(
                3,
                Outcome::Ok(CallResult::Batch {
                    results: vec![
                        BatchEntry { index: 0, outcome: BatchOutcome::Output(Value::Null) },
                        BatchEntry {
                            index: 1,
                            outcome: BatchOutcome::Task(task(TaskState::Running)),
                        },
                        BatchEntry {
                            index: 2,
                            outcome: BatchOutcome::Error(ActionError::new(
                                Reason::StaleRevision { current_revision: 9 },
                                "Stale.",
                            )),
                        },
                    ],
                    revision: 9,
                }),
            ),
            reply(4, Outcome::Ok(CallResult::Revision { revision: u64::MAX })),
            reply(
                5,
                Outcome::Ok(CallResult::Inspected {
                    revision: 1,
                    state: obj(&[("unchanged", true.into())]),
                }),
            ),
            reply(
                6,
                Outcome::Ok(CallResult::Resources {
                    resources: vec![
                        ResourceInfo {
                            uri: "render://view.png".into(),
                            name: "view".into(),
                            mime_type: "image/png".into(),
                            size: Some(1234),
                        },
                        ResourceInfo {
                            uri: "export://document.txt".into(),
                            name: "export".into(),
                            mime_type: "text/plain".into(),
                            size: None,
                        },
                    ],
                }),
            ),
            reply(
                7,
                Outcome::Ok(CallResult::Chunk(ResourceChunk {
                    uri: "render://view.png".into(),
                    mime_type: "image/png".into(),
                    offset: 0,
                    total_size: 3,
                    data: "AAEC".into(),
                    eof: true,
                })),
            ),
            reply(
                8,
                Outcome::Ok(CallResult::Rendered {
                    output: obj(&[("uri", "render://view.png".into())]),
                    revision: 2,
                }),
            ),
            reply(9, Outcome::Ok(CallResult::Task(task(TaskState::Cancelling)))),
            reply(
                10,
                Outcome::Error(ActionError::new(
                    Reason::RolledBack {
                        index: 1,
                        cause: Box::new(ActionError::new(Reason::HostError { code: None }, "No.")),
                    },
                    "Rolled back.",
                )),
            ),
        ];
        for state in [
            TaskState::Running,
            TaskState::Cancelling,
            TaskState::Cancelled,
            TaskState::Completed,
            TaskState::Failed,
        ] {
            out.push(AppMessage::Task(task(state)));
        }
        let waiting = TaskSnapshot {
            progress: Some(Progress {
                done: 0,
                total: None,
                message: Some("waiting for you to allow Clear the canvas".into()),
            }),
            awaiting: Some(Awaiting::Confirmation),
            ..TaskSnapshot::new("confirm-1", TaskState::Running)
        };
        out.push(AppMessage::Task(waiting));
        for answer in [
            ConsentAnswer::Allow,
            ConsentAnswer::AllowAlways,
            ConsentAnswer::Deny,
            ConsentAnswer::Timeout,
            ConsentAnswer::Cancelled,
            ConsentAnswer::NoUi,
        ] {
            out.push(AppMessage::Task(TaskSnapshot {
                consent: Some(ConsentDecision { answer }),
                ..task(TaskState::Failed)
            }));
        }
        out
    }

    /// Every daemon message and every call.
    fn daemon_samples() -> Vec<DaemonMessage> {
        let request = |id, call| DaemonMessage::Request(Request { id, call });
        vec![
            DaemonMessage::Welcome(Welcome {
                slug: "notepad".into(),
                limits: ChannelLimits { max_frame_bytes: 1_114_112, max_message_bytes: 1_048_576 },
            }),
            DaemonMessage::Refused(Refused {
                reason: Refused::TOO_MANY_APPS.into(),
                message: "Full.".into(),
            }),
            DaemonMessage::Bye(Bye { reason: Bye::SHUTDOWN.into() }),
            request(1, Call::Execute(execute("document.text.insert", Some(3)))),
            request(2, Call::Execute(execute("document.get", None))),
            request(
                3,
                Call::Batch(BatchCall {
                    calls: vec![execute("a", Some(1)), execute("b", None)],
                    atomic: true,
                    stop_on_error: false,
                    consent: None,
                }),
            ),
            request(4, Call::Revision {}),
            request(5, Call::Inspect { input: obj(&[("sinceRevision", 12u64.into())]) }),
            request(6, Call::ListResources {}),
            request(
                7,
                Call::ReadResource(ReadResource {
                    uri: "render://view.png".into(),
                    offset: 65536,
                    limit: 65536,
                }),
            ),
            request(8, Call::Render { input: obj(&[]) }),
            request(u64::MAX, Call::CancelTask { id: "export-1".into() }),
            DaemonMessage::Activity(Activity {
                client: "claude-code 1.2 via endpoint".into(),
                action: "document.text.insert".into(),
                outcome: "ok".into(),
                reason: None,
            }),
            DaemonMessage::Activity(Activity {
                client: "jfgui-agent[77] via endpoint".into(),
                action: "document.text.insert, edit.undo".into(),
                outcome: "refused".into(),
                reason: Some("stale_revision".into()),
            }),
            request(
                9,
                Call::Execute(ExecuteCall {
                    consent: Some(consent(None, Some("claude-code 1.2"))),
                    ..execute("canvas.clear", Some(4))
                }),
            ),
            request(
                10,
                Call::Execute(ExecuteCall {
                    consent: Some(consent(Some(3), None)),
                    ..execute("canvas.clear", None)
                }),
            ),
            request(
                11,
                Call::Batch(BatchCall {
                    calls: vec![execute("canvas.clear", Some(1))],
                    atomic: false,
                    stop_on_error: true,
                    consent: Some(consent(None, None)),
                }),
            ),
            DaemonMessage::Withdraw(Withdraw {
                task: "confirm-1".into(),
                reason: WithdrawReason::ConfirmationTimeout,
            }),
            DaemonMessage::Withdraw(Withdraw {
                task: "confirm-2".into(),
                reason: WithdrawReason::ClientGone,
            }),
        ]
    }

    fn through_the_codec<T: Serialize + serde::de::DeserializeOwned>(message: &T) -> T {
        let frame = encode_frame(message, &limits(), DEFAULT_MAX_FRAME).unwrap();
        assert!(!frame[super::super::HEADER_LEN..].contains(&b'\n'), "one line per body");
        let mut decoder = FrameDecoder::new(DEFAULT_MAX_FRAME);
        decoder.feed(&frame);
        let body = decoder.next_frame().unwrap().unwrap();
        assert_eq!(decoder.next_frame(), Ok(None));
        decode_message(&body, &limits()).unwrap()
    }

    #[test]
    fn every_message_round_trips_through_the_frame_codec() {
        for m in app_samples() {
            assert_eq!(through_the_codec(&m), m);
        }
        for m in daemon_samples() {
            assert_eq!(through_the_codec(&m), m);
        }
    }

    #[test]
    fn wire_names_are_camel_case_and_externally_tagged() {
        let v = crate::to_value(&daemon_samples()[9]).unwrap();
        let body = crate::encode(&v, &limits()).unwrap();
        assert_eq!(
            body,
            br#"{"request":{"id":7,"call":{"readResource":{"uri":"render://view.png","offset":65536,"limit":65536}}}}"#
        );
        let v = crate::to_value(&app_samples()[6]).unwrap();
        let body = crate::encode(&v, &limits()).unwrap();
        assert_eq!(
            body,
            br#"{"reply":{"id":1,"outcome":{"ok":{"executed":{"output":{},"revision":7}}}}}"#
        );
    }

    /// Members whose value is free-form JSON (the app's or client's own data).
    const PAYLOAD: &[&str] = &["input", "output", "state", "result", "inputSchema", "outputSchema"];

    /// JSON pointers (as member paths) of every object in `v` that belongs to the protocol.
    fn protocol_objects(v: &Value, path: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
        match v {
            Value::Object(m) => {
                out.push(path.clone());
                for (k, child) in m.iter() {
                    if PAYLOAD.contains(&k) {
                        continue;
                    }
                    path.push(k.into());
                    protocol_objects(child, path, out);
                    path.pop();
                }
            }
            Value::Array(a) => {
                for (i, child) in a.iter().enumerate() {
                    path.push(format!("{i}"));
                    protocol_objects(child, path, out);
                    path.pop();
                }
            }
            _ => {}
        }
    }

    fn at<'v>(v: &'v mut Value, path: &[String]) -> &'v mut Value {
        path.iter().fold(v, |v, step| match v {
            Value::Object(m) => m.get_mut(step).unwrap(),
            Value::Array(a) => &mut a[step.parse::<usize>().unwrap()],
            _ => unreachable!(),
        })
    }

    fn rejects_unknown_members_everywhere<T>(samples: &[T])
    where
        T: Serialize + serde::de::DeserializeOwned + core::fmt::Debug,
    {
        for m in samples {
            let value = crate::to_value(m).unwrap();
            let mut objects = Vec::new();
            protocol_objects(&value, &mut Vec::new(), &mut objects);
            for path in objects {
                let mut bad = value.clone();
                let Value::Object(o) = at(&mut bad, &path) else { unreachable!() };
                o.insert("unexpected", Value::Null);
                let err = crate::from_value::<T>(bad);
                assert!(err.is_err(), "extra member accepted at /{} in {m:?}", path.join("/"));
            }
        }
    }

    #[test]
    fn unknown_members_are_rejected_at_every_level() {
        rejects_unknown_members_everywhere(&app_samples());
        rejects_unknown_members_everywhere(&daemon_samples());
    }

    fn decode_err<T: serde::de::DeserializeOwned + core::fmt::Debug>(json: &str) -> FrameError {
        decode_message::<T>(json.as_bytes(), &limits()).unwrap_err()
    }

    #[test]
    fn wrong_types_are_rejected_with_a_pointer() {
        let FrameError::Message(e) = decode_err::<AppMessage>(
            r#"{"hello":{"channelVersion":"1","displayName":"N","pid":1,"enabled":true}}"#,
        ) else {
            panic!("not a message error")
        };
        assert_eq!(e.pointer(), "/hello/channelVersion");
        let FrameError::Message(e) = decode_err::<DaemonMessage>(
            r#"{"request":{"id":1,"call":{"execute":{"action":"a","input":{},"expectedRevision":1.5}}}}"#,
        ) else {
            panic!("not a message error")
        };
        assert_eq!(e.pointer(), "/request/call/execute/expectedRevision");
        let FrameError::Message(e) =
            decode_err::<DaemonMessage>(r#"{"request":{"id":-1,"call":{"revision":{}}}}"#)
        else {
            panic!("not a message error")
        };
        assert_eq!(e.pointer(), "/request/id");
        assert!(matches!(decode_err::<AppMessage>(r#"{"nope":{}}"#), FrameError::Message(_)));
        assert!(matches!(
            decode_err::<AppMessage>(r#"{"ready":{"actionCount":1},"bye":{"reason":"x"}}"#),
            FrameError::Message(_)
        ));
        assert!(matches!(decode_err::<AppMessage>(r#"{"ready":{}}"#), FrameError::Message(_)));
        assert!(matches!(decode_err::<AppMessage>(r#"["ready"]"#), FrameError::Message(_)));
        assert!(matches!(
            decode_err::<AppMessage>(r#"{"ready":{"actionCount":1}} x"#),
            FrameError::Json(_)
        ));
    }

    #[test]
    fn integers_in_messages_convert_exactly() {
        let m: DaemonMessage =
            decode_message(br#"{"request":{"id":1e3,"call":{"revision":{}}}}"#, &limits()).unwrap();
        assert_eq!(m, DaemonMessage::Request(Request { id: 1000, call: Call::Revision {} }));
        let m: DaemonMessage = decode_message(
            br#"{"request":{"id":1,"call":{"inspect":{"input":{"big":123456789012345678901234567890}}}}}"#,
            &limits(),
        )
        .unwrap();
        let DaemonMessage::Request(Request { call: Call::Inspect { input }, .. }) = m else {
            panic!()
        };
        assert_eq!(
            input.get("big").and_then(Value::as_number),
            Some(&Number::from_token("123456789012345678901234567890").unwrap())
        );
    }

    #[test]
    fn hello_asks_for_activity_only_when_it_wants_it() {
        let mut hello = Hello {
            channel_version: super::super::CHANNEL_VERSION,
            display_name: "N".into(),
            pid: 1,
            enabled: true,
            activity: false,
        };
        let has_member = |h: &Hello| {
            let frame = encode_frame(&AppMessage::Hello(h.clone()), &limits(), DEFAULT_MAX_FRAME);
            frame.unwrap().windows(10).any(|w| w == b"\"activity\"")
        };
        // Not asking is the original shape, which a daemon without the field accepts.
        assert!(!has_member(&hello));
        hello.activity = true;
        assert!(has_member(&hello));
        let old = br#"{"hello":{"channelVersion":1,"displayName":"N","pid":1,"enabled":true}}"#;
        let decoded: AppMessage = decode_message(old, &limits()).unwrap();
        hello.activity = false;
        assert_eq!(decoded, AppMessage::Hello(hello));
    }

    #[test]
    fn consent_members_appear_only_when_set() {
        let json = |m: &DaemonMessage| {
            let frame = encode_frame(m, &limits(), DEFAULT_MAX_FRAME).unwrap();
            String::from_utf8(frame[super::super::HEADER_LEN..].to_vec()).unwrap()
        };
        let plain =
            DaemonMessage::Request(Request { id: 1, call: Call::Execute(execute("a", Some(2))) });
        assert_eq!(
            json(&plain),
            r#"{"request":{"id":1,"call":{"execute":{"action":"a","input":{"text":"hi"},"expectedRevision":2}}}}"#
        );
        let asking = DaemonMessage::Request(Request {
            id: 1,
            call: Call::Execute(ExecuteCall {
                consent: Some(consent(None, Some("c 1"))),
                ..execute("a", Some(2))
            }),
        });
        assert_eq!(
            json(&asking),
            r#"{"request":{"id":1,"call":{"execute":{"action":"a","input":{"text":"hi"},"expectedRevision":2,"consent":{"agent":{"exe":"/usr/bin/claude","pid":4242,"says":"c 1","transport":"all-apps-mcp"},"mayGrant":true}}}}}"#
        );
        let info = ActionSpec::write("a", "A.").info().unwrap();
        let v = crate::to_value(&info).unwrap();
        assert!(v.get("title").is_none() && v.get("confirm").is_none());
        let v = crate::to_value(&TaskSnapshot::new("t", TaskState::Running)).unwrap();
        assert_eq!(v.as_object().unwrap().len(), 2, "{v:?}");
    }

    #[test]
    fn handshake_version_check() {
        let hello = |v| Hello {
            channel_version: v,
            display_name: "N".into(),
            pid: 1,
            enabled: false,
            activity: false,
        };
        assert_eq!(hello(super::super::CHANNEL_VERSION).check_version(), Ok(()));
        let refused = hello(99).check_version().unwrap_err();
        assert_eq!(refused.reason, "channel_version");
        assert_eq!(
            refused.message,
            "channel version 99 is not supported; this daemon speaks version 1"
        );
        assert!(hello(0).check_version().is_err());
    }

    #[test]
    fn registration_errors_become_refusals() {
        let err =
            crate::validate_registration(&[ActionSpec::read("a", ""), ActionSpec::read("a", "")])
                .unwrap_err();
        let refused = Refused::from(err);
        assert_eq!(refused.reason, "invalid_registration");
        assert_eq!(refused.message, "duplicate action name \"a\"");
    }

    #[test]
    fn task_states() {
        assert!(!TaskState::Running.is_final());
        assert!(!TaskState::Cancelling.is_final());
        assert!(TaskState::Cancelled.is_final());
        assert!(TaskState::Completed.is_final());
        assert!(TaskState::Failed.is_final());
    }

    #[test]
    fn oversize_messages_are_refused_by_the_encoder() {
        let big = "x".repeat(200);
        let m = AppMessage::Bye(Bye { reason: big });
        assert!(matches!(
            encode_frame(&m, &limits(), 100),
            Err(FrameError::TooLarge { limit: 100, .. })
        ));
        let small = Limits { max_bytes: 50, ..limits() };
        assert!(matches!(encode_frame(&m, &small, DEFAULT_MAX_FRAME), Err(FrameError::Json(_))));
    }

    /// What a receiver makes of a stream: each frame's decoded message or error, in order.
    fn verdicts<T>(chunks: &[&[u8]]) -> Vec<Result<T, FrameError>>
    where
        T: serde::de::DeserializeOwned,
    {
        let mut decoder = FrameDecoder::new(DEFAULT_MAX_FRAME);
        let mut out = Vec::new();
        for chunk in chunks {
            decoder.feed(chunk);
            loop {
                match decoder.next_frame() {
                    Ok(Some(body)) => out.push(decode_message::<T>(&body, &limits())),
                    Ok(None) => break,
                    Err(e) => {
                        out.push(Err(e));
                        return out;
                    }
                }
            }
        }
        out
    }

    fn stream<T: Serialize>(messages: &[T]) -> Vec<u8> {
        let mut out = Vec::new();
        for m in messages {
            out.extend(encode_frame(m, &limits(), DEFAULT_MAX_FRAME).unwrap());
        }
        out
    }

    proptest::proptest! {
        /// The codec fed as daemon (app messages) and as app (daemon messages), with corrupted
        /// bytes and chunks of at most 143 bytes, reaches the same verdicts as one-shot feeding.
        #[test]
        fn chunked_and_corrupted_streams_match_one_shot(
            flips in proptest::collection::vec((proptest::prelude::any::<proptest::sample::Index>(), proptest::prelude::any::<u8>()), 0..4),
            chunk in 1usize..=143,
            as_daemon in proptest::prelude::any::<bool>(),
        ) {
            let mut bytes = if as_daemon { stream(&app_samples()) } else { stream(&daemon_samples()) };
            for (at, byte) in &flips {
                let i = at.index(bytes.len());
                bytes[i] = *byte;
            }
            let pieces: Vec<&[u8]> = bytes.chunks(chunk).collect();
            if as_daemon {
                proptest::prop_assert_eq!(verdicts::<AppMessage>(&pieces), verdicts::<AppMessage>(&[&bytes]));
            } else {
                proptest::prop_assert_eq!(verdicts::<DaemonMessage>(&pieces), verdicts::<DaemonMessage>(&[&bytes]));
            }
        }
    }
}
