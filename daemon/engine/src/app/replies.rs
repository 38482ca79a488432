//! What an app's replies and task updates mean: the tasks they report go into the task records,
//! a revision beyond [`MAX_REVISION`] makes the reply invalid (float-only clients must keep
//! revisions exactly and send them back as `expectedRevision`), and so does a reply of the
//! wrong kind (the client side's `invalid_reply`). The link only matches replies to calls;
//! every call's reply is read here, the same way.
//!
//! Tasks are recorded on the link's reading side ([`App::reply`], called in channel order), not
//! by the caller when it wakes up: a task update that follows a deferred reply on the channel
//! then always lands after the task it updates.

use std::sync::atomic::Ordering;

use jfgui_proto::channel::{BatchOutcome, CallResult, TaskSnapshot};
use jfgui_proto::{ActionError, MAX_REVISION, Reason};

use super::App;
use super::link::{CallOutcome, Waiter};
use crate::tasks::Refused;

impl App {
    /// `outcome` as a caller gets it: a revision beyond the bound is the app's bug.
    pub(super) fn bounded(&self, outcome: CallOutcome) -> CallOutcome {
        match revision_beyond_bound(&outcome) {
            Some(revision) => {
                let slug = self.registration().slug();
                tracing::error!(app = %slug, revision, "the app reported a revision beyond 2^53-1");
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
    pub(super) fn reply(&self, waiter: Waiter, outcome: CallOutcome) {
        if let Ok(result) = &outcome {
            self.record_tasks(result);
            if let (CallResult::Deferred { task, .. }, Some(asking)) = (result, waiter.asking()) {
                self.asked(task, asking);
            }
        }
        waiter.send(outcome);
    }

    /// A task update from the app: taken for a task it returned in a deferred reply
    /// (`tasks.rs`), or a task a call it was allowed to run started (`prompts.rs`); anything
    /// else is dropped and logged.
    pub(super) fn task_update(&self, snapshot: TaskSnapshot) {
        let id = snapshot.id.clone();
        let registration = self.registration();
        let started_by_allowed = self.prompt_update(&snapshot);
        let recorded = {
            let mut tasks = self.tasks();
            match tasks.update(registration.id(), snapshot.clone()) {
                Err(Refused::Unknown) if started_by_allowed => {
                    tasks.start(registration.id(), snapshot)
                }
                other => other,
            }
        };
        if let Err(refused) = recorded {
            // Logged at the 1st, 2nd, 4th, 8th, ... drop: a hostile app cannot flood the log.
            let dropped = self.0.dropped_updates.fetch_add(1, Ordering::Relaxed) + 1;
            if dropped.is_power_of_two() {
                tracing::warn!(app = registration.slug(), task = %id, dropped, "task update dropped: {}", refused.as_str());
            }
        }
    }

    /// The app went away: its unfinished tasks fail (their outcome is unknown), each logged;
    /// its tasks stay answerable under its display name (`tasks.rs`).
    pub(super) fn gone(&self, reason: &Reason) {
        let registration = self.registration();
        self.prompts_gone();
        let failed = self.tasks().depart(registration.id(), registration.display_name());
        for task in &failed {
            tracing::warn!(slug = registration.slug(), task = %task, reason = reason.as_str(), "task failed");
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
        let registration = self.registration();
        let mut table = self.tasks();
        for task in tasks {
            let recorded = if started {
                table.start(registration.id(), task.clone())
            } else {
                table.update(registration.id(), task.clone())
            };
            if let Err(refused) = recorded {
                tracing::error!(app = %registration.slug(), task = %task.id, "task not tracked: {}", refused.as_str());
            }
        }
    }
}

/// A revision in `outcome` beyond 2^53−1, if any.
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
