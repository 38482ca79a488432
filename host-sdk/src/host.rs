//! The `Host` trait: what an app implements, one method per kind of request, every optional
//! one with a safe default (the shape of rmcp's `ServerHandler`).

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::time::Duration;

use jfgui_proto::channel::{Activity, ResourceInfo};
use jfgui_proto::{ActionError, ActionSpec, Reason, Value};

use crate::{Answer, Confirmation, TaskTable};

/// An app's domain model as the [`Dispatcher`](crate::Dispatcher) sees it.
///
/// The dispatcher runs every contract of a call and a batch (enabled, action exists, input schema,
/// capabilities, availability, expected revision, output schema, batch preflight and
/// transactions) *before and after* calling [`Host::execute`], so an implementation only
/// applies the action. It is never called for a request that failed a check.
///
/// # When to return an error and when to panic
///
/// [`Host::execute`] returns `Err` for failures the caller should see (an out-of-range
/// position: [`host_error`]); it must not change state when it returns an error inside a
/// transaction it cannot undo. Returning an output that violates the action's output schema is
/// a host bug: the dispatcher reports it as `internal/output_schema` naming the action.
pub trait Host {
    /// The registration: every action the app offers. Read once, when the
    /// [`Dispatcher`](crate::Dispatcher) is built; it must not change afterwards.
    fn actions(&self) -> &[ActionSpec];

    /// The current revision. It must move (increase) with every change of state, and only
    /// then. The dispatcher reads it for `expectedRevision` checks and after every call.
    fn revision(&self) -> u64;

    /// The capability bits the platform grants callers (opaque to the SDK). A call needs every
    /// bit of its action's [`ActionSpec::capabilities`].
    fn capabilities(&self) -> u64;

    /// Applies one action whose input already matched its schema. Return
    /// [`Execution::Output`] for synchronous work, or start a task with
    /// [`Context::tasks`] and return [`Execution::Deferred`] with its id.
    fn execute(
        &mut self,
        cx: &mut Context<'_>,
        action: &ActionSpec,
        input: &Value,
    ) -> Result<Execution, ActionError>;

    /// Whether `action` can run now. Default: always available. Return
    /// [`Availability::Unavailable`] with a machine-readable code while, e.g., a modal dialog
    /// is open.
    fn availability(&self, action: &ActionSpec) -> Availability {
        let _ = action;
        Availability::Available
    }

    /// `state/inspect`: a host-defined view of the state for `input` (query, filter, paging,
    /// `sinceRevision`). Default: `{}`. The dispatcher adds the revision.
    fn inspect(&mut self, input: &Value) -> Result<Value, ActionError> {
        let _ = input;
        Ok(Value::Object(jfgui_proto::Map::new()))
    }

    /// Whether the host can roll back every change made in `domain` between
    /// [`begin_transaction`](Host::begin_transaction) and
    /// [`rollback_transaction`](Host::rollback_transaction), revision included. Default
    /// `false`: atomic batches touching the domain are refused in preflight.
    fn supports_transaction(&self, domain: &str) -> bool {
        let _ = domain;
        false
    }

    /// Starts a transaction over `domains` (each one passed
    /// [`supports_transaction`](Host::supports_transaction)). Called only after a successful
    /// preflight of the whole atomic batch. Until the matching commit or rollback, the host
    /// should group its changes into one undo step.
    fn begin_transaction(&mut self, domains: &[&str]) -> Result<(), ActionError> {
        let _ = domains;
        Err(ActionError::new(
            Reason::TransactionUnsupported { domain: None },
            "this app does not support transactions",
        ))
    }

    /// Makes the transaction's changes permanent as one undoable operation. Must not fail.
    fn commit_transaction(&mut self) {}

    /// Restores the state *and* the revision of [`begin_transaction`](Host::begin_transaction).
    /// Must not fail.
    fn rollback_transaction(&mut self) {}

    /// The resources currently offered (`{uri, name, mimeType, size?}`). Default: none.
    fn resources(&mut self) -> Vec<ResourceInfo> {
        Vec::new()
    }

    /// An in-memory resource, whole. The default [`read_resource`](Host::read_resource)
    /// slices it into chunks. Default: no such resource.
    fn resource(&mut self, uri: &str) -> Option<ResourceBytes<'_>> {
        let _ = uri;
        None
    }

    /// One chunk of a resource: at most `limit` bytes from `offset`. Override it for resources
    /// that are not held in memory; the default slices [`resource`](Host::resource).
    fn read_resource(
        &mut self,
        uri: &str,
        offset: u64,
        limit: u32,
    ) -> Result<ResourceData, ActionError> {
        let Some(res) = self.resource(uri) else {
            return Err(ActionError::new(
                Reason::Resource { resource: String::from(uri) },
                format!("no such resource: {uri}"),
            ));
        };
        let total = res.bytes.len();
        let start = usize::try_from(offset).unwrap_or(usize::MAX).min(total);
        let end = start.saturating_add(limit as usize).min(total);
        Ok(ResourceData {
            mime_type: String::from(res.mime_type),
            total_size: total as u64,
            bytes: res.bytes[start..end].to_vec(),
        })
    }

    /// Advances deferred work: report progress, finish tasks, and move tasks whose cancel was
    /// requested (state `cancelling`) to `cancelled` at a safe checkpoint; show what
    /// [`Host::activity`] kept for later. Called by the channel after every pump and by the
    /// run loops, also after they delivered `activity` notices. Returns how soon it wants to
    /// be called again (`None`: only when a request arrives, so an idle app never wakes up).
    fn tick(&mut self, tasks: &mut TaskTable) -> Option<Duration> {
        let _ = tasks;
        None
    }

    /// An external call this app served was recorded in the daemon's audit log: who (a client
    /// name the app cannot know itself), what, and how it ended; for a "last agent action"
    /// display. Delivered after the replies are written
    /// ([`HostChannel::deliver_activities`](crate::channel::HostChannel::deliver_activities)) and
    /// only when the app asked for it
    /// ([`HostChannel::with_activity`](crate::channel::HostChannel::with_activity)).
    ///
    /// A UI shows it at its own pace, not one repaint per notice: keep the latest and show it
    /// from [`Host::tick`] (which is called after notices are delivered, so a deadline it
    /// returns then is kept).
    fn activity(&mut self, activity: &Activity) {
        let _ = activity;
    }

    /// An external call of an action with [`ActionSpec::confirm`] passed every check and has
    /// no standing grant: ask the user. Return `Some(answer)` to answer now, or `None` to
    /// show a prompt and answer later with [`Dispatcher::answer`](crate::Dispatcher::answer)
    /// (through a channel: [`HostChannel::answer`](crate::channel::HostChannel::answer)). Until
    /// then the caller holds a task that waits (`awaiting: "confirmation"`) and nothing of
    /// the call has run. A prompt shows who asks ([`Confirmation::agent_name`],
    /// [`Confirmation::agent_label`]) and what ([`Confirmation::summary`]), and offers
    /// "always" only when [`Confirmation::may_always`].
    ///
    /// Default: [`Answer::NoUi`], so an app without a way to ask never runs such a call
    /// (`not_executed/no_confirmation_ui`).
    fn confirm(&mut self, confirmation: &Confirmation) -> Option<Answer> {
        let _ = confirmation;
        Some(Answer::NoUi)
    }

    /// The prompt for `ticket` is withdrawn (the caller cancelled, gave up waiting or went
    /// away, or agent access was turned off): close it; an answer to it is ignored now.
    /// Default: nothing to close.
    fn withdraw_confirmation(&mut self, ticket: &str) {
        let _ = ticket;
    }
}

/// What a successful [`Host::execute`] produced.
#[derive(Debug, Clone, PartialEq)]
pub enum Execution {
    /// Synchronous output, checked against the output schema.
    Output(Value),
    /// The id of a task started in [`Context::tasks`] (not allowed inside atomic batches).
    Deferred(String),
}

/// Whether an action can run now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Availability {
    /// It can.
    Available,
    /// It cannot; the caller gets `not_executed/unavailable{code, explanation}`.
    Unavailable {
        /// Machine-readable, e.g. `modal_dialog_open`.
        code: String,
        /// One sentence for people and models.
        explanation: String,
    },
}

/// Who is calling [`Host::execute`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// A client through the daemon (`actions/execute`, `actions/batch`, `view/render`).
    External {
        /// The daemon's request id (unique among its outstanding requests on the channel).
        request: u64,
    },
    /// The app's own GUI (`execute_local`, `execute_command`).
    Local,
}

/// Per-call information and the task table, handed to [`Host::execute`].
#[derive(Debug)]
pub struct Context<'a> {
    pub(crate) tasks: &'a mut TaskTable,
    pub(crate) origin: Origin,
    pub(crate) batch_index: Option<u32>,
    pub(crate) in_transaction: bool,
}

impl<'a> Context<'a> {
    /// The task table, to start deferred work.
    pub fn tasks(&mut self) -> &mut TaskTable {
        self.tasks
    }
    /// Who is calling.
    pub fn origin(&self) -> Origin {
        self.origin
    }
    /// The call's index when it is part of a batch.
    pub fn batch_index(&self) -> Option<u32> {
        self.batch_index
    }
    /// True inside an atomic batch, between `begin_transaction` and commit/rollback.
    pub fn in_transaction(&self) -> bool {
        self.in_transaction
    }
}

/// A whole in-memory resource, borrowed from the host.
#[derive(Debug, Clone, Copy)]
pub struct ResourceBytes<'a> {
    /// MIME type, e.g. `image/png`.
    pub mime_type: &'a str,
    /// The bytes.
    pub bytes: &'a [u8],
}

/// One chunk of a resource as [`Host::read_resource`] returns it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceData {
    /// MIME type.
    pub mime_type: String,
    /// Size of the whole resource.
    pub total_size: u64,
    /// The chunk (at most the requested limit).
    pub bytes: Vec<u8>,
}

/// A `failed/host_error{code}` error: the host refused or could not apply the action.
///
/// ```
/// # use jfgui_host_sdk::host_error;
/// let e = host_error("out_of_range", "start is past the end of the text");
/// assert_eq!(e.reason.as_str(), "host_error");
/// ```
pub fn host_error(code: &str, message: &str) -> ActionError {
    ActionError::new(Reason::HostError { code: Some(String::from(code)) }, message)
}
