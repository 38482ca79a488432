//! Calls that wait for the user (docs/PROTOCOL.md, "Consent"): an external call of a
//! `confirm` action without a standing grant, once every check passed, becomes a task that
//! waits (`awaiting: "confirmation"`) while the host asks; the answer (now or later) allows,
//! denies or cannot be had; the daemon may withdraw the prompt; a cancel ends it.
//!
//! Nothing of a waiting call runs before the user's yes has been *reported*: an allowed call
//! first updates its task (`running`, no longer awaiting), and runs only in
//! [`Dispatcher::run_allowed`] once that update was taken for the daemon
//! ([`Dispatcher::take_task_events`]; the endpoint runs them when its output is written). So a
//! daemon that still sees `awaiting` when the app dies knows that nothing ran.

use alloc::format;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

use jfgui_proto::channel::{
    BatchCall, BatchOutcome, CallResult, Consent, ConsentAnswer, ExecuteCall, TaskSnapshot,
    TaskState, WithdrawReason,
};
use jfgui_proto::{ActionError, Reason, Value};

use super::{Produced, check_call, check_revision, result_of};
use crate::consent::{Answer, ConfirmCall, Confirmation, MAX_PENDING_CONFIRMATIONS, StrayAnswer};
use crate::{Dispatcher, Host, Origin};

/// The calls waiting for the user or allowed and not yet run, and the prompts the host is
/// still to be told to close.
#[derive(Debug, Default)]
pub(crate) struct Confirmations {
    /// At most [`MAX_PENDING_CONFIRMATIONS`], oldest first.
    pending: Vec<Pending>,
    /// Tickets whose prompt was withdrawn; [`Dispatcher::tick`] tells the host.
    withdrawn: Vec<String>,
    /// The number in the last ticket made (`confirm-N`).
    last: u64,
}

/// One call asked about.
#[derive(Debug)]
struct Pending {
    ticket: String,
    /// The daemon's request id of the call (the host sees it in [`Origin::External`]).
    request: u64,
    call: Asked,
    /// What the user is asked to allow, for the task's messages.
    summary: String,
    stage: Stage,
}

/// The call as it came, run as it came once allowed.
#[derive(Debug)]
pub(crate) enum Asked {
    Execute(ExecuteCall),
    Batch(BatchCall),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// Asked; no answer yet.
    Waiting,
    /// The user said yes; `released` once the task's update saying so was taken for the
    /// daemon, after which the call may run.
    Allowed { released: bool },
}

/// Whether `consent` names a standing grant covering the call.
pub(crate) fn granted(consent: Option<&Consent>) -> bool {
    consent.is_some_and(|c| c.granted.is_some())
}

impl Dispatcher {
    /// Asks the host about `asked` (whose checks all passed) and answers with the waiting
    /// task; `calls` are the calls that need the user's yes.
    pub(crate) fn ask<H: Host + ?Sized>(
        &mut self,
        host: &mut H,
        request: u64,
        asked: Asked,
        calls: Vec<ConfirmCall>,
    ) -> Result<CallResult, ActionError> {
        if self.confirmations.pending.len() >= MAX_PENDING_CONFIRMATIONS {
            return Err(ActionError::new(
                Reason::TooManyPendingConfirmations,
                format!(
                    "{MAX_PENDING_CONFIRMATIONS} calls already wait for the user's answer in this app; retry once they are answered"
                ),
            ));
        }
        let (consent, batch_len) = match &asked {
            Asked::Execute(call) => (call.consent.as_deref(), None),
            Asked::Batch(batch) => (batch.consent.as_deref(), Some(batch.calls.len() as u32)),
        };
        let confirmation = Confirmation {
            ticket: self.new_ticket(),
            calls,
            batch_len,
            agent: consent.map(|c| c.agent.clone()),
            may_always: consent.is_some_and(|c| c.may_grant),
        };
        let summary = confirmation.summary();
        let ticket = confirmation.ticket.clone();
        self.tasks.start_awaiting(ticket.clone(), format!("waiting for you to allow {summary}"))?;
        let task = self.tasks.get(&ticket).cloned().ok_or_else(lost_task)?;
        // The reply carries the task's creation; only later changes are task messages.
        self.tasks.forget_queued(&ticket);
        let stage = Stage::Waiting;
        self.confirmations.pending.push(Pending { ticket, request, call: asked, summary, stage });
        if let Some(answer) = host.confirm(&confirmation) {
            // An answer for a task that is still waiting cannot be stray.
            let _ = self.answer(&confirmation.ticket, answer);
        }
        Ok(CallResult::Deferred { task, revision: host.revision() })
    }

    /// The user's answer to the prompt of `ticket` ([`Host::confirm`] returned `None`). A
    /// yes updates the task at once and the call runs at the next
    /// [`run_allowed`](Dispatcher::run_allowed) after that update went out (an endpoint does
    /// both in its next pump); a no ends the task `not_executed/denied_by_user`, nothing run.
    /// An answer to a ticket that waits no more (withdrawn, cancelled, answered) changes
    /// nothing and says why.
    pub fn answer(&mut self, ticket: &str, answer: Answer) -> Result<(), StrayAnswer> {
        let i = self.position(ticket).ok_or(StrayAnswer::Unknown)?;
        if self.confirmations.pending[i].stage != Stage::Waiting {
            return Err(StrayAnswer::AlreadyAnswered);
        }
        if self.tasks.state(ticket).is_none_or(TaskState::is_final) {
            // The host ended the task itself: nothing waits under the ticket any more.
            self.confirmations.pending.remove(i);
            return Err(StrayAnswer::Unknown);
        }
        let decision = answer.decision();
        let pending = &mut self.confirmations.pending[i];
        let summary = pending.summary.clone();
        match answer {
            Answer::Allow | Answer::AllowAlways => {
                pending.stage = Stage::Allowed { released: false };
                let message = format!("allowed; running {summary}");
                let _ = self.tasks.allowed(ticket, decision, message);
            }
            Answer::Deny => {
                self.confirmations.pending.remove(i);
                let error = ActionError::new(
                    Reason::DeniedByUser,
                    format!("the user did not allow {summary}; nothing was done"),
                );
                self.end(ticket, decision, Some(error));
            }
            Answer::NoUi => {
                self.confirmations.pending.remove(i);
                let error = ActionError::new(
                    Reason::NoConfirmationUi,
                    format!(
                        "{summary} needs the user's yes, and the app has no way to ask; nothing was done"
                    ),
                );
                self.end(ticket, decision, Some(error));
            }
        }
        Ok(())
    }

    /// The daemon withdrew the prompt of `ticket` (`withdraw`): a call still waiting ends
    /// (`confirmation_timeout`, or `cancelled` when its client went away) and the host is
    /// told to close the prompt; an answered or unknown ticket is left as it is.
    pub fn withdraw(&mut self, ticket: &str, reason: WithdrawReason) -> Result<(), StrayAnswer> {
        let i = self.position(ticket).ok_or(StrayAnswer::Unknown)?;
        if self.confirmations.pending[i].stage != Stage::Waiting {
            return Err(StrayAnswer::AlreadyAnswered);
        }
        let pending = self.confirmations.pending.remove(i);
        self.confirmations.withdrawn.push(pending.ticket);
        match reason {
            WithdrawReason::ConfirmationTimeout => {
                let error = ActionError::new(
                    Reason::ConfirmationTimeout,
                    format!(
                        "nobody answered in time whether to allow {}; nothing was done",
                        pending.summary
                    ),
                );
                self.end(ticket, ConsentAnswer::Timeout, Some(error));
            }
            WithdrawReason::ClientGone => self.end(ticket, ConsentAnswer::Cancelled, None),
        }
        Ok(())
    }

    /// `tasks/cancel` of a call still waiting: the prompt is withdrawn and the task ends
    /// `cancelled` now. `None` for any other task (an allowed call runs: its yes came first).
    pub(crate) fn cancel_waiting(&mut self, id: &str) -> Option<TaskSnapshot> {
        let i = self.position(id)?;
        if self.confirmations.pending[i].stage != Stage::Waiting {
            return None;
        }
        let pending = self.confirmations.pending.remove(i);
        self.confirmations.withdrawn.push(pending.ticket);
        self.end(id, ConsentAnswer::Cancelled, None);
        self.tasks.get(id).cloned()
    }

    /// Agent access was turned off: every call still waiting ends `not_executed/disabled`
    /// and its prompt is withdrawn (allowed calls fail the same way when they would run).
    pub(crate) fn end_waiting_on_disable(&mut self) {
        for ticket in self.take_waiting() {
            let error = ActionError::new(
                Reason::Disabled,
                "agent access was turned off while the call waited for the user; nothing was done",
            );
            self.end(&ticket, ConsentAnswer::Cancelled, Some(error));
        }
    }

    /// The connection to the daemon is gone (a new one starts): nobody can follow these
    /// calls any more. Each ends `cancelled`, nothing run; waiting prompts are withdrawn.
    pub(crate) fn abandon_confirmations(&mut self) {
        for ticket in self.take_waiting() {
            self.end(&ticket, ConsentAnswer::Cancelled, None);
        }
        for pending in core::mem::take(&mut self.confirmations.pending) {
            let _ = self.tasks.cancelled(&pending.ticket);
        }
    }

    /// Calls allowed whose update has gone out, ready for [`run_allowed`](Dispatcher::run_allowed).
    pub fn allowed_to_run(&self) -> usize {
        let ready = |p: &&Pending| p.stage == Stage::Allowed { released: true };
        self.confirmations.pending.iter().filter(ready).count()
    }

    /// Runs every call the user allowed whose task update saying so has been taken for the
    /// daemon ([`take_task_events`](Dispatcher::take_task_events)): checked again as it runs
    /// (agent access, availability, and the revision the call named: `stale_revision` if the
    /// state moved since; an atomic batch re-runs its whole preflight), then run, and its task
    /// completes with what the call would have answered at once (`{output, revision}`, a
    /// batch's `{results, revision}`) or fails with the call's error. Returns how many ran.
    ///
    /// A transport runs this only once everything taken before was written, as the
    /// [`HostChannel`](crate::channel::HostChannel) does at the start of a pump with its output
    /// empty.
    pub fn run_allowed<H: Host + ?Sized>(&mut self, host: &mut H) -> usize {
        // Every pump asks: with nothing asked about, the answer costs one comparison.
        if self.confirmations.pending.is_empty() {
            return 0;
        }
        let (ready, waiting) = core::mem::take(&mut self.confirmations.pending)
            .into_iter()
            .partition(|p| p.stage == Stage::Allowed { released: true });
        self.confirmations.pending = waiting;
        let ready: Vec<Pending> = ready;
        let ran = ready.len();
        for pending in ready {
            self.run_confirmed(host, pending);
        }
        ran
    }

    /// The task table's queued changes, oldest first, for the daemon; calls allowed before
    /// now may run from here on ([`run_allowed`](Dispatcher::run_allowed)).
    pub fn take_task_events(&mut self) -> Vec<TaskSnapshot> {
        for p in &mut self.confirmations.pending {
            if p.stage == (Stage::Allowed { released: false }) {
                p.stage = Stage::Allowed { released: true };
            }
        }
        self.tasks.take_events()
    }

    /// Tells the host about every withdrawn prompt.
    pub(crate) fn deliver_withdrawals<H: Host + ?Sized>(&mut self, host: &mut H) {
        for ticket in core::mem::take(&mut self.confirmations.withdrawn) {
            host.withdraw_confirmation(&ticket);
        }
    }

    fn run_confirmed<H: Host + ?Sized>(&mut self, host: &mut H, pending: Pending) {
        let ticket = pending.ticket;
        if self.tasks.state(&ticket).is_none_or(TaskState::is_final) {
            return; // the host ended the task itself
        }
        let request = pending.request;
        let result = self.check_enabled().and_then(|()| match pending.call {
            Asked::Execute(call) => {
                let spec = self.lookup(&call.action)?;
                let input = call.input.as_value();
                check_call(host, &spec, &input)?;
                check_revision(&spec, call.expected_revision, host.revision())?;
                let origin = Origin::External { request };
                let produced = self.invoke(host, &spec, &input, origin, None, false)?;
                if let Produced::Task(task) = &produced {
                    self.tasks.announce(&task.id);
                }
                Ok(result_of(produced, host.revision()))
            }
            Asked::Batch(batch) => {
                let result = if batch.atomic {
                    self.atomic(host, request, &batch.calls)
                } else {
                    self.sequential(host, request, &batch.calls, batch.stop_on_error)
                }?;
                if let CallResult::Batch { results, .. } = &result {
                    for entry in results {
                        if let BatchOutcome::Task(task) = &entry.outcome {
                            self.tasks.announce(&task.id);
                        }
                    }
                }
                Ok(result)
            }
        });
        let _ = match result.map(CallResult::into_client_answer) {
            Ok(Some(answer)) => self.tasks.complete(&ticket, Value::Object(answer)),
            Ok(None) => self.tasks.fail(&ticket, lost_task()),
            Err(error) => self.tasks.fail(&ticket, error),
        };
    }

    /// Ends a waiting call's task with how it was decided: failed with `error`, or cancelled.
    fn end(&mut self, ticket: &str, answer: ConsentAnswer, error: Option<ActionError>) {
        if self.tasks.record_consent(ticket, answer).is_err() {
            return; // the host ended the task itself
        }
        let _ = match error {
            Some(error) => self.tasks.fail(ticket, error),
            None => self.tasks.cancelled(ticket),
        };
    }

    /// Removes the calls still waiting, their prompts marked withdrawn; their tickets.
    fn take_waiting(&mut self) -> Vec<String> {
        let (waiting, rest) = core::mem::take(&mut self.confirmations.pending)
            .into_iter()
            .partition(|p| p.stage == Stage::Waiting);
        self.confirmations.pending = rest;
        let waiting: Vec<Pending> = waiting;
        let tickets: Vec<String> = waiting.into_iter().map(|p| p.ticket).collect();
        self.confirmations.withdrawn.extend(tickets.iter().cloned());
        tickets
    }

    fn position(&self, ticket: &str) -> Option<usize> {
        self.confirmations.pending.iter().position(|p| p.ticket == ticket)
    }

    /// `confirm-N`, the first such id no task of the table holds.
    fn new_ticket(&mut self) -> String {
        loop {
            self.confirmations.last += 1;
            let ticket = format!("confirm-{}", self.confirmations.last);
            if self.tasks.get(&ticket).is_none() {
                return ticket;
            }
        }
    }
}

/// The task of a confirmation vanished or a call answered with a result of the wrong kind:
/// a bug in the SDK, reported rather than hidden.
fn lost_task() -> ActionError {
    ActionError::new(Reason::InvalidReply, "the confirmed call's result could not be recorded")
}

/// The calls of `calls` that need the user's yes, when `consent` names no grant.
pub(crate) fn confirm_calls(
    dispatcher: &Dispatcher,
    calls: &[ExecuteCall],
    consent: Option<&Consent>,
) -> Vec<ConfirmCall> {
    if granted(consent) {
        return vec![];
    }
    calls
        .iter()
        .enumerate()
        .filter_map(|(i, call)| {
            let spec = dispatcher.lookup(&call.action).ok().filter(|s| s.confirm)?;
            let input = call.input.as_value().into_owned();
            Some(ConfirmCall { index: Some(i as u32), action: spec, input })
        })
        .collect()
}

#[cfg(test)]
mod tests;
