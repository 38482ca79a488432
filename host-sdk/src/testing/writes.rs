//! The state-changing checks (`--mutate`, for a scratch document): for every write, a stale
//! write and a schema-violating one are refused and change nothing, and one with a generated
//! valid input moves the revision; a deferred write's task goes `cancelling` → `cancelled` (a
//! write that waits for the user's yes is cancelled while it waits, so nobody is asked for
//! long and nothing runs); an atomic batch of a valid and an invalid call is refused with
//! state and revision restored.

use alloc::format;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;
use core::time::Duration;
use std::time::Instant;

use jfgui_proto::channel::{
    ActionInfo, BatchCall, Call, CallResult, ExecuteCall, TaskSnapshot, TaskState,
};
use jfgui_proto::schema::{minimal_instance, violating_instance};
use jfgui_proto::{ActionKind, ErrorClass, Reason, Value};

use super::report::{Check, Level, Subject};
use super::session::{Change, Session, Snapshot, show};
use super::target::Target;

/// How to fix a task that does not stop when cancelled, in each language's terms.
const CANCEL_FIX: &str = "at each step of the work check TaskTable::is_cancel_requested and call TaskTable::cancelled (C: the cancel_task callback and jfgui_host_task_cancelled; Python: task_cancel_requested and task_cancelled)";

/// What a valid write did, for choosing the atomic batch's calls.
enum Ran {
    Output,
    Deferred,
    /// It waited for the user's yes (and was cancelled): not a call to batch.
    Asked,
    Refused,
}

/// A write and its generated valid input.
type Planned<'a> = (&'a ActionInfo, Value);

impl<T: Target> Session<'_, T> {
    /// Every write action in registration order, then the atomic batch.
    pub(crate) fn check_writes(
        &mut self,
        actions: &[ActionInfo],
        cancel_patience: Duration,
    ) -> Result<(), T::Error> {
        let writes: Vec<&ActionInfo> =
            actions.iter().filter(|a| a.kind == ActionKind::Write).collect();
        let mut batchable: Option<Planned<'_>> = None;
        let mut deferred: Option<Planned<'_>> = None;
        for write in &writes {
            let subject = Subject::Action(write.name.clone());
            let valid = match minimal_instance(&write.input_schema) {
                Ok(valid) => Some(valid),
                Err(e) => {
                    self.push(
                        Level::Warn,
                        Check::ValidWrite,
                        &subject,
                        format!("not run: {e}"),
                        "make the input schema satisfiable, so callers can form a valid input",
                    );
                    None
                }
            };
            if let Some(valid) = &valid {
                self.check_stale(write, valid)?;
            }
            self.check_invalid(write)?;
            let Some(valid) = valid else { continue };
            let ran = self.check_valid(write, &valid, cancel_patience)?;
            if write.transaction.is_some() {
                match ran {
                    Ran::Output if batchable.is_none() => batchable = Some((write, valid)),
                    Ran::Deferred if deferred.is_none() => deferred = Some((write, valid)),
                    _ => {}
                }
            }
        }
        if !writes.is_empty() {
            let transactional = writes.iter().any(|w| w.transaction.is_some());
            self.check_atomic(transactional, batchable, deferred)?;
        }
        Ok(())
    }

    fn before(&mut self, check: Check, subject: &Subject) -> Result<Option<Snapshot>, T::Error> {
        match self.snapshot()? {
            Ok(snapshot) => Ok(Some(snapshot)),
            Err(e) => {
                self.push(
                    Level::Warn,
                    check,
                    subject,
                    format!("not run: the revision could not be read ({e})"),
                    "answer agent/info and state/inspect",
                );
                Ok(None)
            }
        }
    }

    /// The change between `before` and now, or `None` when the revision cannot be read.
    fn since(&mut self, before: &Snapshot) -> Result<Option<Change>, T::Error> {
        Ok(self.snapshot()?.ok().map(|after| self.change(before, &after)))
    }

    /// For a refused call whose state changed but whose revision did not: the members are
    /// taken for presentation (see [`Session::presentation`]); the finding says so.
    fn presentation_seen(
        &mut self,
        check: Check,
        subject: &Subject,
        reason: &str,
        change: &Change,
    ) {
        self.learn_presentation(change);
        let why = format!(
            "refused ({reason}), but {}: taken for presentation (not compared from here on)",
            change.describe()
        );
        self.push(
            Level::Warn,
            check,
            subject,
            why,
            "nothing to fix if they are presentation (view, activity); if they are the document, the refused call changed it without moving the revision",
        );
    }

    fn check_stale(&mut self, write: &ActionInfo, valid: &Value) -> Result<(), T::Error> {
        let subject = Subject::Action(write.name.clone());
        let Some(before) = self.before(Check::StaleWrite, &subject)? else { return Ok(()) };
        let current = before.revision;
        // An older revision, as a client that missed a change sends (newer if there is none).
        let stale = if current > 0 { current - 1 } else { current + 1 };
        let reply = self.execute(&write.name, valid, Some(stale))?;
        let Some(change) = self.since(&before)? else { return Ok(()) };
        let (level, why, fix) = match reply {
            Ok(_) => (
                Level::Fail,
                format!(
                    "a write with the stale expectedRevision {stale} (current {current}) was applied: {}",
                    change.describe()
                ),
                "compare expectedRevision with the current revision before applying anything (host-sdk's Dispatcher does; an app answering the host channel itself must too)",
            ),
            Err(e) if change.revision_moved() => (
                Level::Fail,
                format!("refused ({}), but {}", e.reason.as_str(), change.describe()),
                "nothing may change before the revision check: no side effects in availability(), capabilities() or revision()",
            ),
            Err(e) if !change.is_none() => {
                self.presentation_seen(Check::StaleWrite, &subject, e.reason.as_str(), &change);
                return Ok(());
            }
            Err(e) => match e.reason {
                Reason::StaleRevision { current_revision } if current_revision == current => (
                    Level::Pass,
                    format!(
                        "expectedRevision {stale} refused with stale_revision (current {current}); nothing changed"
                    ),
                    "",
                ),
                Reason::StaleRevision { current_revision } => (
                    Level::Fail,
                    format!(
                        "stale_revision names the current revision {current_revision}, but it is {current}"
                    ),
                    "report the revision the host has now, so the caller can retry with it",
                ),
                _ => (
                    Level::Warn,
                    format!("refused before its revision was checked: {e}"),
                    "run the check while the action is available to agents",
                ),
            },
        };
        self.push(level, Check::StaleWrite, &subject, why, fix);
        Ok(())
    }

    fn check_invalid(&mut self, write: &ActionInfo) -> Result<(), T::Error> {
        let subject = Subject::Action(write.name.clone());
        let Some(bad) = violating_instance(&write.input_schema) else {
            self.push(
                Level::Warn,
                Check::InvalidWrite,
                &subject,
                "not run: the input schema admits every value, so there is nothing to refuse",
                "declare what the input must look like",
            );
            return Ok(());
        };
        let Some(before) = self.before(Check::InvalidWrite, &subject)? else { return Ok(()) };
        let reply = self.execute(&write.name, &bad, Some(before.revision))?;
        let Some(change) = self.since(&before)? else { return Ok(()) };
        let shown = show(&bad);
        let (level, why, fix) = match reply {
            Ok(_) => (
                Level::Fail,
                format!("accepted the input {shown}, which its schema refuses"),
                "validate the input against the declared schema before applying it (host-sdk's Dispatcher does)",
            ),
            Err(e) if change.revision_moved() => (
                Level::Fail,
                format!("refused {shown} ({}), but {}", e.reason.as_str(), change.describe()),
                "nothing may change when an input is refused",
            ),
            Err(e) if !change.is_none() => {
                self.presentation_seen(Check::InvalidWrite, &subject, e.reason.as_str(), &change);
                return Ok(());
            }
            Err(e) => match &e.reason {
                Reason::SchemaViolation { pointer } => (
                    Level::Pass,
                    format!(
                        "{shown} refused with schema_violation at {pointer:?}; nothing changed"
                    ),
                    "",
                ),
                _ => (
                    Level::Warn,
                    format!(
                        "{shown} refused with {} instead of schema_violation: {e}",
                        e.reason.as_str()
                    ),
                    "check the input against the schema first, so callers learn what to fix",
                ),
            },
        };
        self.push(level, Check::InvalidWrite, &subject, why, fix);
        Ok(())
    }

    fn check_valid(
        &mut self,
        write: &ActionInfo,
        valid: &Value,
        cancel_patience: Duration,
    ) -> Result<Ran, T::Error> {
        let subject = Subject::Action(write.name.clone());
        let Some(before) = self.before(Check::ValidWrite, &subject)? else {
            return Ok(Ran::Refused);
        };
        let shown = show(valid);
        let reply = self.execute(&write.name, valid, Some(before.revision))?;
        let (level, why, fix) = match reply {
            Ok(CallResult::Executed { .. }) => {
                let Some(change) = self.since(&before)? else { return Ok(Ran::Output) };
                let (r0, r1) = (change.from, change.to);
                let verdict = if r1 > r0 {
                    (Level::Pass, format!("input {shown} moved the revision from {r0} to {r1}"), "")
                } else if r1 < r0 {
                    (
                        Level::Fail,
                        format!("input {shown} moved the revision back from {r0} to {r1}"),
                        "revisions only ever increase",
                    )
                } else if !change.is_none() {
                    (
                        Level::Fail,
                        format!("input {shown}: {}", change.describe()),
                        "move the revision with every change of state, so stale writes can be refused",
                    )
                } else {
                    (
                        Level::Warn,
                        format!(
                            "input {shown} changed nothing visible (state and revision {r0} as before), so the revision could not be seen moving"
                        ),
                        "nothing to fix if this input changes nothing; state/inspect should show what writes change",
                    )
                };
                self.push(verdict.0, Check::ValidWrite, &subject, verdict.1, verdict.2);
                return Ok(Ran::Output);
            }
            // An action that asks the user first: the call waits, and cancelling it withdraws
            // the prompt (the checks never answer for the user). A daemon's answer names the
            // task only, so the declaration says it asks.
            Ok(CallResult::Deferred { task, .. }) if write.confirm || task.awaiting.is_some() => {
                self.check_cancel(write, &task, cancel_patience)?;
                return Ok(Ran::Asked);
            }
            Ok(CallResult::Deferred { task, .. }) => {
                self.check_cancel(write, &task, cancel_patience)?;
                return Ok(Ran::Deferred);
            }
            Ok(other) => (
                Level::Fail,
                super::session::unexpected("an output or a task", &other).message,
                "answer actions/execute with an output or a task",
            ),
            Err(e) if e.class() == ErrorClass::Internal => (
                Level::Fail,
                format!("input {shown} got an internal error: {}", e.message),
                "return an output that matches the declared output schema (or declare the schema the output has)",
            ),
            Err(e) => (
                Level::Warn,
                format!("refused the generated input {shown}: {e}"),
                "accept every input the schema allows, or narrow the schema to what the action accepts",
            ),
        };
        self.push(level, Check::ValidWrite, &subject, why, fix);
        Ok(Ran::Refused)
    }

    /// Cancels the task a deferred write started and follows it to `cancelled`.
    fn check_cancel(
        &mut self,
        write: &ActionInfo,
        task: &TaskSnapshot,
        patience: Duration,
    ) -> Result<(), T::Error> {
        let subject = Subject::Action(write.name.clone());
        let id = task.id.as_str();
        let answer = match self.target.call(&Call::CancelTask { id: String::from(id) })? {
            Ok(CallResult::Task(snapshot)) => snapshot,
            Ok(other) => {
                let why = super::session::unexpected("a task state", &other).message;
                self.push(
                    Level::Fail,
                    Check::TaskCancel,
                    &subject,
                    why,
                    "answer tasks/cancel with the task",
                );
                return Ok(());
            }
            Err(e) => {
                self.push(
                    Level::Fail,
                    Check::TaskCancel,
                    &subject,
                    format!("tasks/cancel of task {id:?} failed: {e}"),
                    "keep every started task in the task table until it ends",
                );
                return Ok(());
            }
        };
        let (level, why, fix) = match answer.state {
            TaskState::Cancelled if write.confirm || task.awaiting.is_some() => (
                Level::Pass,
                format!(
                    "the call waited for the user's yes (task {id:?}); cancelling it withdrew the prompt at once"
                ),
                "",
            ),
            TaskState::Cancelled => (Level::Pass, format!("task {id:?} was cancelled at once"), ""),
            TaskState::Failed if write.confirm => self.answered_at_once(id)?,
            state @ (TaskState::Completed | TaskState::Failed) => (
                Level::Warn,
                format!(
                    "task {id:?} had already ended ({}) when the cancel arrived, so cancelling could not be tried",
                    state_name(state)
                ),
                "nothing to fix if the work is that quick",
            ),
            TaskState::Running => (
                Level::Fail,
                format!("tasks/cancel left task {id:?} running; it must become cancelling"),
                "let tasks/cancel reach the task table (TaskTable::request_cancel)",
            ),
            TaskState::Cancelling => {
                let started = Instant::now();
                loop {
                    self.target.pause();
                    let snapshot = match self.target.task(id)? {
                        Ok(snapshot) => snapshot,
                        Err(e) => {
                            break (
                                Level::Fail,
                                format!(
                                    "tasks/get of task {id:?} failed while it was cancelling: {e}"
                                ),
                                "keep the task until it ends",
                            );
                        }
                    };
                    let waited = started.elapsed();
                    match snapshot.state {
                        TaskState::Cancelled => {
                            break (
                                Level::Pass,
                                format!("task {id:?} went cancelling → cancelled"),
                                "",
                            );
                        }
                        state @ (TaskState::Completed | TaskState::Failed) => {
                            break (
                                Level::Fail,
                                format!(
                                    "task {id:?} ended {} after its cancel was requested: the cancel was ignored",
                                    state_name(state)
                                ),
                                CANCEL_FIX,
                            );
                        }
                        state if waited > patience => {
                            break (
                                Level::Fail,
                                format!(
                                    "task {id:?} was still {} {} s after its cancel was requested",
                                    state_name(state),
                                    patience.as_secs()
                                ),
                                CANCEL_FIX,
                            );
                        }
                        _ => {}
                    }
                }
            }
        };
        self.push(level, Check::TaskCancel, &subject, why, fix);
        Ok(())
    }

    /// A call that needed the user's yes and failed before the cancel arrived: the app answered
    /// at once. No way to ask is worth knowing (such calls never run); a no is the app's
    /// business.
    fn answered_at_once(&mut self, id: &str) -> Result<(Level, String, &'static str), T::Error> {
        let reason = match self.target.task(id)? {
            Ok(task) => task.error.map(|e| e.reason),
            Err(_) => None,
        };
        Ok(match reason {
            Some(Reason::NoConfirmationUi) => (
                Level::Warn,
                format!(
                    "the call needs the user's yes, and the app said at once it has no way to ask (task {id:?}: no_confirmation_ui); nothing ran"
                ),
                "ask in the app's own UI (Host::confirm; C: the confirm callback; Python: Host.confirm), or run the app where it can ask",
            ),
            Some(reason) => (
                Level::Pass,
                format!(
                    "the call needs the user's yes and was answered at once ({}); nothing ran",
                    reason.as_str()
                ),
                "",
            ),
            None => (
                Level::Warn,
                format!(
                    "task {id:?} had already failed when the cancel arrived, so cancelling could not be tried"
                ),
                "nothing to fix if the answer came that quick",
            ),
        })
    }

    /// An atomic batch: a valid write, then a call that must make the whole batch fail. When
    /// the app has a deferred write in a transaction domain, that is the second call: it passes
    /// preflight and fails as it runs, so the app's own rollback is what restores the first
    /// call's change. Otherwise the second call violates its schema and preflight refuses the
    /// batch before anything runs.
    fn check_atomic(
        &mut self,
        transactional: bool,
        batchable: Option<Planned<'_>>,
        deferred: Option<Planned<'_>>,
    ) -> Result<(), T::Error> {
        let subject = Subject::App;
        if !transactional {
            self.push(
                Level::Warn,
                Check::AtomicBatch,
                &subject,
                "not run: no write declares a transaction domain, so atomic batches cannot include any",
                "declare a transaction domain on the writes agents combine, and implement begin/commit/rollback_transaction",
            );
            return Ok(());
        }
        let Some((first, valid)) = batchable else {
            self.push(
                Level::Warn,
                Check::AtomicBatch,
                &subject,
                "not run: no write with a transaction domain ran with a generated input, so there is no valid first call",
                "see the valid_write findings",
            );
            return Ok(());
        };
        let (second, second_input, what) = match deferred {
            Some((d, input)) => {
                let what = format!(
                    "{} then {} (deferred, which an atomic batch cannot wait for)",
                    first.name, d.name
                );
                (d, input, what)
            }
            None => match violating_instance(&first.input_schema) {
                Some(bad) => {
                    let what = format!(
                        "{} then {} with the refused input {}",
                        first.name,
                        first.name,
                        show(&bad)
                    );
                    (first, bad, what)
                }
                None => {
                    self.push(
                        Level::Warn,
                        Check::AtomicBatch,
                        &subject,
                        format!("not run: {}'s schema admits every input, so no invalid call can be made", first.name),
                        "declare what the input must look like",
                    );
                    return Ok(());
                }
            },
        };
        let Some(before) = self.before(Check::AtomicBatch, &subject)? else { return Ok(()) };
        let r0 = before.revision;
        let call = |action: &ActionInfo, input: Value| ExecuteCall {
            action: action.name.clone(),
            input: input.into(),
            expected_revision: Some(r0),
            consent: None,
        };
        let batch = BatchCall {
            calls: vec![call(first, valid), call(second, second_input)],
            atomic: true,
            stop_on_error: true,
            consent: None,
        };
        let reply = self.target.call(&Call::Batch(batch))?;
        let Some(change) = self.since(&before)? else { return Ok(()) };
        let (level, why, fix) = match reply {
            Ok(_) => (
                Level::Fail,
                format!("the atomic batch {what} was applied"),
                "an atomic batch with a failing call must apply nothing",
            ),
            Err(e) => {
                let reason = e.reason.as_str();
                match &e.reason {
                    Reason::BatchPreflight { index: 0, .. }
                    | Reason::RolledBack { index: 0, .. } => (
                        Level::Warn,
                        format!("not run: the batch {what} was refused at its first call: {e}"),
                        "let writes with a transaction domain take part in atomic batches (supports_transaction)",
                    ),
                    _ if change.is_none() => (
                        Level::Pass,
                        format!(
                            "the batch {what} was refused ({reason}); state and revision {r0} as before"
                        ),
                        "",
                    ),
                    _ if change.members.is_empty() => (
                        Level::Fail,
                        format!(
                            "the batch {what} was refused ({reason}) and the state restored, but the revision moved from {r0} to {}",
                            change.to
                        ),
                        "rollback_transaction must restore the revision of begin_transaction as well as the state",
                    ),
                    _ => (
                        Level::Fail,
                        format!(
                            "the batch {what} was refused ({reason}), but its first call stayed applied: {}",
                            change.describe()
                        ),
                        "roll back every change made since begin_transaction",
                    ),
                }
            }
        };
        self.push(level, Check::AtomicBatch, &subject, why, fix);
        Ok(())
    }
}

fn state_name(state: TaskState) -> &'static str {
    match state {
        TaskState::Running => "running",
        TaskState::Cancelling => "cancelling",
        TaskState::Cancelled => "cancelled",
        TaskState::Completed => "completed",
        TaskState::Failed => "failed",
    }
}
