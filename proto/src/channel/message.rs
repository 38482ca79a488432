//! The typed messages of the host channel. Every struct rejects unknown fields; every enum is
//! externally tagged (`{"hello":{...}}`), so decoding never buffers and numbers stay exact.

use alloc::string::String;
use alloc::vec::Vec;

use serde::{Deserialize, Serialize};

use crate::{ActionError, ActionKind, Value};

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
}

/// `hello{channelVersion, displayName, pid, enabled}`.
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
}

/// One page of action specs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ActionsPage {
    /// At most [`MAX_ACTIONS_PER_PAGE`](super::MAX_ACTIONS_PER_PAGE).
    pub actions: Vec<ActionInfo>,
}

/// An action as the daemon caches it, with schemas already rendered to JSON Schema. This is
/// also the `action` object of `actions/describe`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ActionInfo {
    /// Action name (SPEC S1 rule).
    pub name: String,
    /// Description.
    pub description: String,
    /// Read or write.
    pub kind: ActionKind,
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
    /// The endpoint slug the daemon allocated (SPEC S8).
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
    /// Machine-readable: `channel_version`, `invalid_registration`, `too_many_apps`, `shutdown`.
    pub reason: String,
    /// One sentence.
    pub message: String,
}

/// `bye{reason}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Bye {
    /// Machine-readable, e.g. `shutdown`, `exit`.
    pub reason: String,
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
#[serde(rename_all = "camelCase", deny_unknown_fields)]
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
    /// Input (`{}` when the client gave none).
    pub input: Value,
    /// Required for external writes (SPEC S2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_revision: Option<u64>,
}

/// A batch (SPEC S3).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BatchCall {
    /// 1–128 calls.
    pub calls: Vec<ExecuteCall>,
    /// All-or-nothing.
    pub atomic: bool,
    /// Non-atomic only: stop at the first error.
    pub stop_on_error: bool,
}

/// A chunked resource read (SPEC S4).
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
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub enum CallResult {
    /// The action ran synchronously.
    Executed {
        /// Output (valid against the output schema).
        output: Value,
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

/// A deferred task's state (SPEC S4).
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
