//! `actions/batch`: non-atomic batches call by call, atomic batches as preflight of
//! every call, one transaction, rollback on any failure, one commit. A batch with a call that
//! needs the user's yes is checked whole first and asks once, before any call runs.

use alloc::boxed::Box;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use jfgui_proto::channel::{BatchCall, BatchEntry, BatchOutcome, CallResult, ExecuteCall};
use jfgui_proto::{ActionError, ActionKind, Reason};

use super::consent::{Asked, confirm_calls};
use super::{MAX_BATCH_CALLS, Produced, check_call, check_revision};
use crate::{Dispatcher, Host, Origin};

/// A preflight's result: every call's spec, and the transaction domains they touch.
type Preflight = (Vec<jfgui_proto::ActionSpec>, Vec<&'static str>);

impl Dispatcher {
    /// An external `actions/batch`.
    pub fn batch<H: Host + ?Sized>(
        &mut self,
        host: &mut H,
        request: u64,
        batch: &BatchCall,
    ) -> Result<CallResult, ActionError> {
        self.check_enabled()?;
        if batch.calls.is_empty() || batch.calls.len() > MAX_BATCH_CALLS {
            return Err(ActionError::new(
                Reason::SchemaViolation { pointer: String::from("/calls") },
                format!("a batch has 1 to {MAX_BATCH_CALLS} calls, not {}", batch.calls.len()),
            ));
        }
        let asking = confirm_calls(self, &batch.calls, batch.consent.as_deref());
        if !asking.is_empty() {
            // Refused without asking when any call would be refused.
            if batch.atomic {
                self.preflight(host, &batch.calls)?;
            } else {
                self.precheck(host, &batch.calls)?;
            }
            return self.ask(host, request, Asked::Batch(batch.clone()), asking);
        }
        if batch.atomic {
            self.atomic(host, request, &batch.calls)
        } else {
            self.sequential(host, request, &batch.calls, batch.stop_on_error)
        }
    }

    /// The checks of a non-atomic batch that asks the user, before asking: every call's
    /// action, input, capabilities and availability, `expectedRevision` on every write, and
    /// the revisions named up to the first write (later ones refer to states that do not exist
    /// yet, and are checked as each call runs).
    fn precheck<H: Host + ?Sized>(
        &self,
        host: &H,
        calls: &[ExecuteCall],
    ) -> Result<(), ActionError> {
        let current = host.revision();
        let mut written = false;
        for (i, call) in calls.iter().enumerate() {
            let checked = self.lookup(&call.action).and_then(|spec| {
                check_call(host, &spec, &call.input.as_value())?;
                let expected = if written { None } else { call.expected_revision };
                if !(written && call.expected_revision.is_some()) {
                    check_revision(&spec, expected, current)?;
                }
                written |= spec.kind == ActionKind::Write;
                Ok(())
            });
            checked.map_err(|cause| {
                ActionError::new(
                    Reason::BatchPreflight { index: i as u32, cause: Box::new(cause) },
                    format!("the batch was not started: call {i} failed its checks (a batch that asks the user is checked whole before asking)"),
                )
            })?;
        }
        Ok(())
    }

    /// Each call is checked and run at the moment it is reached; its `expectedRevision`
    /// refers to that moment.
    pub(super) fn sequential<H: Host + ?Sized>(
        &mut self,
        host: &mut H,
        request: u64,
        calls: &[ExecuteCall],
        stop_on_error: bool,
    ) -> Result<CallResult, ActionError> {
        let mut results = Vec::with_capacity(calls.len());
        for (i, call) in calls.iter().enumerate() {
            let index = i as u32;
            let outcome = self.lookup(&call.action).and_then(|spec| {
                check_call(host, &spec, &call.input.as_value())?;
                check_revision(&spec, call.expected_revision, host.revision())?;
                self.invoke(
                    host,
                    &spec,
                    &call.input.as_value(),
                    Origin::External { request },
                    Some(index),
                    false,
                )
            });
            let failed = outcome.is_err();
            results.push(BatchEntry {
                index,
                outcome: match outcome {
                    Ok(Produced::Output(v)) => BatchOutcome::Output(v),
                    Ok(Produced::Task(t)) => BatchOutcome::Task(t),
                    Err(e) => BatchOutcome::Error(e),
                },
            });
            if failed && stop_on_error {
                break;
            }
        }
        Ok(CallResult::Batch { results, revision: host.revision() })
    }

    /// The atomic preflight: every call's action, input, capabilities, availability and
    /// revision against the state now, and a transaction domain the host can roll back for
    /// each call that needs one.
    fn preflight<H: Host + ?Sized>(
        &self,
        host: &H,
        calls: &[ExecuteCall],
    ) -> Result<Preflight, ActionError> {
        let initial = host.revision();
        let mut specs = Vec::with_capacity(calls.len());
        let mut domains: Vec<&'static str> = Vec::new();
        for (i, call) in calls.iter().enumerate() {
            let checked = self.lookup(&call.action).and_then(|spec| {
                check_call(host, &spec, &call.input.as_value())?;
                check_revision(&spec, call.expected_revision, initial)?;
                match spec.transaction {
                    Some(domain) if host.supports_transaction(domain) => {
                        if !domains.contains(&domain) {
                            domains.push(domain);
                        }
                    }
                    // A read without a domain changes nothing and needs no rollback.
                    None if spec.kind == ActionKind::Read => {}
                    domain => {
                        return Err(ActionError::new(
                            Reason::TransactionUnsupported { domain: domain.map(String::from) },
                            format!("{} cannot take part in an atomic batch: the app cannot roll it back", spec.name),
                        ));
                    }
                }
                Ok(spec)
            });
            match checked {
                Ok(spec) => specs.push(spec),
                Err(cause) => {
                    return Err(ActionError::new(
                        Reason::BatchPreflight { index: i as u32, cause: Box::new(cause) },
                        format!("the atomic batch was not started: call {i} failed its checks"),
                    ));
                }
            }
        }

        Ok((specs, domains))
    }

    /// Preflight of every call against the initial state, then one transaction.
    pub(super) fn atomic<H: Host + ?Sized>(
        &mut self,
        host: &mut H,
        request: u64,
        calls: &[ExecuteCall],
    ) -> Result<CallResult, ActionError> {
        let (specs, domains) = self.preflight(host, calls)?;

        // A batch of reads only changes nothing and needs no transaction.
        let transaction = !domains.is_empty();
        if transaction {
            host.begin_transaction(&domains)?;
        }
        let mut results = Vec::with_capacity(calls.len());
        for (i, (call, spec)) in calls.iter().zip(&specs).enumerate() {
            let index = i as u32;
            let cause = match self.invoke(
                host,
                spec,
                &call.input.as_value(),
                Origin::External { request },
                Some(index),
                transaction,
            ) {
                Ok(Produced::Output(output)) => {
                    results.push(BatchEntry { index, outcome: BatchOutcome::Output(output) });
                    continue;
                }
                Ok(Produced::Task(task)) => {
                    self.tasks.discard(&task.id);
                    ActionError::new(
                        Reason::DeferredInAtomic,
                        format!(
                            "{} started a deferred task, which an atomic batch cannot wait for",
                            spec.name
                        ),
                    )
                }
                Err(e) => e,
            };
            if transaction {
                host.rollback_transaction();
            }
            return Err(ActionError::new(
                Reason::RolledBack { index, cause: Box::new(cause) },
                format!("the atomic batch failed at call {i} and was rolled back; nothing changed"),
            ));
        }
        if transaction {
            host.commit_transaction();
        }
        Ok(CallResult::Batch { results, revision: host.revision() })
    }
}
