//! What an app's replies and task updates mean: the tasks they report go into the task table
//! (SPEC S4), a revision beyond [`MAX_REVISION`] makes the reply invalid (SPEC S6), and so does
//! a reply of the wrong kind. The link only matches replies to calls; [`App`] is the app as the
//! protocols use it, so every call's reply is read here, the same way.
//!
//! Tasks are recorded on the link's reading side ([`App::reply`], called in channel order), not
//! by the caller when it wakes up: a task update that follows a deferred reply on the channel
//! then always lands after the task it updates.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use jfgui_proto::channel::{BatchOutcome, Call, CallResult, TaskSnapshot};
use jfgui_proto::{ActionError, MAX_REVISION, Reason};

use super::methods::MethodError;
use super::observer::Caller;
use crate::audit::Protocol;
use crate::link::{AppHandle, CallOutcome, Waiter};
use crate::tasks::TaskTable;

/// An app as the protocols see it: its link (registration cache, calls) and the daemon's task
/// table its replies and task updates feed. Cheap to clone.
#[derive(Clone, Debug)]
pub struct App {
    link: AppHandle,
    tasks: Arc<Mutex<TaskTable>>,
    /// Task updates refused so far (for a log that cannot be flooded).
    dropped_updates: Arc<AtomicU64>,
    /// Who calls, when calls are audited (`observer.rs`).
    caller: Option<Caller>,
}

impl App {
    /// `link`'s app with the engine's task table (calls not audited: see [`App::audited`]).
    pub fn new(link: AppHandle, tasks: Arc<Mutex<TaskTable>>) -> App {
        App { link, tasks, dropped_updates: Arc::default(), caller: None }
    }

    /// The same app, its calls recorded in the audit log as made by `caller`.
    pub fn audited(mut self, caller: Caller) -> App {
        self.caller = Some(caller);
        self
    }

    /// The same app, called in `protocol` (MCP sets the revision and `clientInfo` per request).
    pub fn speaking(mut self, protocol: &Protocol) -> App {
        self.caller = self.caller.map(|c| c.speaking(protocol.clone()));
        self
    }

    /// Who calls, when calls are audited.
    pub fn caller(&self) -> Option<&Caller> {
        self.caller.as_ref()
    }

    /// The link: registration cache, status, configuration.
    pub fn link(&self) -> &AppHandle {
        &self.link
    }

    /// The task table (this app's tasks are keyed by its link id).
    pub fn tasks(&self) -> MutexGuard<'_, TaskTable> {
        self.tasks.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Sends `call` and waits for the reply, read as this module says: the link's errors, the
    /// app's own error, or its result with every revision within [`MAX_REVISION`].
    pub async fn call(&self, call: Call) -> Result<CallResult, ActionError> {
        let outcome = self.link.request(call).await;
        match revision_beyond_bound(&outcome) {
            Some(revision) => {
                tracing::error!(app = %self.link.slug(), revision, "the app reported a revision beyond 2^53-1");
                Err(ActionError::new(
                    Reason::InvalidReply,
                    format!(
                        "The app reported revision {revision}, beyond the protocol's bound {MAX_REVISION} (2^53-1); this is a bug in the app."
                    ),
                ))
            }
            None => outcome,
        }
    }

    /// A reply the link matched to its call (reading side, channel order): records the tasks
    /// it reports, then hands it to the caller.
    pub fn reply(&self, waiter: Waiter, outcome: CallOutcome) {
        if let Ok(result) = &outcome {
            self.record_tasks(result);
        }
        waiter.send(outcome);
    }

    /// A task update from the app: taken only for a task it returned in a deferred reply
    /// (`tasks.rs`); anything else is dropped and logged.
    pub fn task_update(&self, snapshot: TaskSnapshot) {
        let id = snapshot.id.clone();
        if let Err(refused) = self.tasks().update(self.link.id(), snapshot) {
            // Logged at the 1st, 2nd, 4th, 8th, ... drop: a hostile app cannot flood the log.
            let dropped = self.dropped_updates.fetch_add(1, Ordering::Relaxed) + 1;
            if dropped.is_power_of_two() {
                tracing::warn!(app = self.link.slug(), task = %id, dropped, "task update dropped: {}", refused.as_str());
            }
        }
    }

    /// The app went away: its unfinished tasks fail (their outcome is unknown), each logged;
    /// its tasks stay answerable under its display name (`tasks.rs`).
    pub fn gone(&self, reason: &Reason) {
        let failed = self.tasks().depart(self.link.id(), self.link.display_name());
        for task in &failed {
            tracing::warn!(slug = self.link.slug(), task = %task, reason = reason.as_str(), "task failed");
        }
    }

    /// Stores the tasks a reply reports: deferred results start tasks, a `tasks/cancel` reply
    /// updates one.
    fn record_tasks(&self, result: &CallResult) {
        let (tasks, started): (Vec<&TaskSnapshot>, bool) = match result {
            CallResult::Deferred { task, .. } => (vec![task], true),
            CallResult::Task(task) => (vec![task], false),
            CallResult::Batch { results, .. } => (
                results
                    .iter()
                    .filter_map(|e| match &e.outcome {
                        BatchOutcome::Task(t) => Some(t),
                        _ => None,
                    })
                    .collect(),
                true,
            ),
            _ => return,
        };
        let mut table = self.tasks();
        for task in tasks {
            let recorded = if started {
                table.start(self.link.id(), task.clone())
            } else {
                table.update(self.link.id(), task.clone())
            };
            if let Err(refused) = recorded {
                tracing::error!(app = %self.link.slug(), task = %task.id, "task not tracked: {}", refused.as_str());
            }
        }
    }
}

/// A revision in `outcome` beyond 2^53−1 (SPEC S6: float-only clients must keep revisions
/// exactly and send them back as `expectedRevision`), if any.
fn revision_beyond_bound(outcome: &CallOutcome) -> Option<u64> {
    let revision = match outcome {
        Ok(
            CallResult::Executed { revision, .. }
            | CallResult::Deferred { revision, .. }
            | CallResult::Batch { revision, .. }
            | CallResult::Revision { revision }
            | CallResult::Inspected { revision, .. }
            | CallResult::Rendered { revision, .. },
        ) => *revision,
        Err(ActionError { reason: Reason::StaleRevision { current_revision }, .. }) => {
            *current_revision
        }
        _ => return None,
    };
    (revision > MAX_REVISION).then_some(revision)
}

/// A reply of another kind than the call asked for: the app's bug.
pub fn invalid_reply() -> MethodError {
    ActionError::new(Reason::InvalidReply, "The app answered with a reply of the wrong kind.")
        .into()
}
