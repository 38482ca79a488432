//! The `Dispatcher`: every contract of a call (checks in a fixed order before the host runs,
//! output schema after, revisions read from the host) for single calls and for each kind of
//! daemon request. Batches live in `dispatcher/batch.rs`, calls that wait for the user's yes
//! in `dispatcher/consent.rs`.

mod batch;
mod consent;
#[cfg(test)]
mod tests;

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use base64::Engine;
use jfgui_proto::channel::{Call, CallResult, ExecuteCall, ResourceChunk, TaskSnapshot};
use jfgui_proto::{ActionError, ActionKind, ActionSpec, Reason, Value};

use self::consent::{Asked, Confirmations, granted};
use crate::consent::ConfirmCall;
use crate::registration::{RENDER_ACTION, Registry};
use crate::{Availability, Context, Execution, Host, Origin, RegistrationError, TaskTable};

pub use jfgui_proto::channel::{MAX_BATCH_CALLS, MAX_RESOURCE_CHUNK};

/// Runs calls against a [`Host`] with every contract of a call and a batch enforced.
///
/// It starts **disabled**: external calls are rejected with `not_executed/disabled` until the
/// app calls [`set_enabled(true)`](Dispatcher::set_enabled). GUI code uses
/// [`execute_local`](Dispatcher::execute_local) and
/// [`execute_command`](Dispatcher::execute_command), which run the same schema, capability,
/// availability and output checks but need neither an enabled dispatcher nor an expected
/// revision.
///
/// Checks of an external call, in this order, all before the host is called:
/// enabled → action exists → input schema → capabilities → availability → expected revision
/// (writes: required; reads: only if given). After the call: output schema. The revision in
/// every result is read from [`Host::revision`] after the call.
///
/// A call of an action with [`ActionSpec::confirm`] that passed every check and has no
/// standing grant runs only once the user said yes: it answers at once with a task that waits
/// (`awaiting: "confirmation"`), the host asks ([`Host::confirm`]), and the answer comes now or
/// through [`answer`](Dispatcher::answer). Local calls never ask.
#[derive(Debug)]
pub struct Dispatcher {
    registry: Registry,
    enabled: bool,
    tasks: TaskTable,
    confirmations: Confirmations,
}

/// What a checked host call produced.
pub(crate) enum Produced {
    Output(Value),
    Task(TaskSnapshot),
}

impl Dispatcher {
    /// Validates `host`'s registration (valid, unique names and command ids) and builds a disabled dispatcher.
    pub fn new<H: Host + ?Sized>(host: &H) -> Result<Dispatcher, RegistrationError> {
        Ok(Dispatcher {
            registry: Registry::new(host.actions())?,
            enabled: false,
            tasks: TaskTable::new(),
            confirmations: Confirmations::default(),
        })
    }

    /// Enables or disables external calls; returns whether the state changed. Through a
    /// host channel, use [`HostChannel::set_enabled`](crate::channel::HostChannel::set_enabled)
    /// so the daemon is told. Disabling ends every call still waiting for the user
    /// (`not_executed/disabled`; the prompts are withdrawn at the next
    /// [`tick`](Dispatcher::tick)).
    pub fn set_enabled(&mut self, enabled: bool) -> bool {
        if !enabled {
            self.end_waiting_on_disable();
        }
        core::mem::replace(&mut self.enabled, enabled) != enabled
    }

    /// Whether external calls are accepted.
    pub fn is_enabled(&self) -> bool {
        self.enabled
    }

    /// The validated registration, in registration order.
    pub fn actions(&self) -> &[ActionSpec] {
        &self.registry.specs
    }

    /// The task table (read).
    pub fn tasks(&self) -> &TaskTable {
        &self.tasks
    }

    /// The task table, for the host to advance its deferred work.
    pub fn tasks_mut(&mut self) -> &mut TaskTable {
        &mut self.tasks
    }

    /// Tells the host which prompts were withdrawn ([`Host::withdraw_confirmation`]) and lets
    /// it advance deferred work ([`Host::tick`]).
    pub fn tick<H: Host + ?Sized>(&mut self, host: &mut H) -> Option<core::time::Duration> {
        self.deliver_withdrawals(host);
        host.tick(&mut self.tasks)
    }

    /// A trusted GUI call by action name: schema, capabilities, availability, the host, then
    /// the output schema. Answers [`CallResult::Executed`] or [`CallResult::Deferred`].
    pub fn execute_local<H: Host + ?Sized>(
        &mut self,
        host: &mut H,
        action: &str,
        input: &Value,
    ) -> Result<CallResult, ActionError> {
        let spec = self.lookup(action)?;
        self.run_local(host, spec, input)
    }

    /// A trusted GUI call by numeric command id (same checks as
    /// [`execute_local`](Dispatcher::execute_local)).
    pub fn execute_command<H: Host + ?Sized>(
        &mut self,
        host: &mut H,
        command_id: u32,
        input: &Value,
    ) -> Result<CallResult, ActionError> {
        let spec = *self.registry.by_command(command_id).ok_or_else(|| {
            ActionError::new(
                Reason::UnknownAction {
                    action: format!("command:{command_id}"),
                    suggestions: Vec::new(),
                },
                format!("no action is registered for command id {command_id}"),
            )
        })?;
        self.run_local(host, spec, input)
    }

    /// An external `actions/execute` carrying the daemon's request id.
    pub fn execute<H: Host + ?Sized>(
        &mut self,
        host: &mut H,
        request: u64,
        call: &ExecuteCall,
    ) -> Result<CallResult, ActionError> {
        self.check_enabled()?;
        let spec = self.lookup(&call.action)?;
        check_call(host, &spec, &call.input.as_value())?;
        check_revision(&spec, call.expected_revision, host.revision())?;
        if spec.confirm && !granted(call.consent.as_deref()) {
            let input = call.input.as_value().into_owned();
            let asked = ConfirmCall { index: None, action: spec, input };
            return self.ask(host, request, Asked::Execute(call.clone()), alloc::vec![asked]);
        }
        let produced = self.invoke(
            host,
            &spec,
            &call.input.as_value(),
            Origin::External { request },
            None,
            false,
        )?;
        Ok(result_of(produced, host.revision()))
    }

    /// Answers one daemon request of any kind.
    pub fn handle<H: Host + ?Sized>(
        &mut self,
        host: &mut H,
        request: u64,
        call: &Call,
    ) -> Result<CallResult, ActionError> {
        match call {
            Call::Execute(c) => self.execute(host, request, c),
            Call::Batch(b) => self.batch(host, request, b),
            Call::Revision {} => {
                self.check_enabled()?;
                Ok(CallResult::Revision { revision: host.revision() })
            }
            Call::Inspect { input } => {
                self.check_enabled()?;
                let state = host.inspect(input)?;
                Ok(CallResult::Inspected { revision: host.revision(), state })
            }
            Call::ListResources {} => {
                self.check_enabled()?;
                Ok(CallResult::Resources { resources: host.resources() })
            }
            Call::ReadResource(r) => {
                self.check_enabled()?;
                read_resource(host, &r.uri, r.offset, r.limit)
            }
            Call::Render { input } => self.render(host, request, input),
            Call::CancelTask { id } => {
                self.check_enabled()?;
                if let Some(cancelled) = self.cancel_waiting(id) {
                    return Ok(CallResult::Task(cancelled));
                }
                self.tasks.request_cancel(id).map(CallResult::Task).ok_or_else(|| {
                    ActionError::new(Reason::Task { task: id.clone() }, "no such task")
                })
            }
        }
    }

    /// `view/render`: the registered `ui.render` read action, checked like any external read.
    fn render<H: Host + ?Sized>(
        &mut self,
        host: &mut H,
        request: u64,
        input: &Value,
    ) -> Result<CallResult, ActionError> {
        self.check_enabled()?;
        let spec = self.lookup(RENDER_ACTION)?;
        check_call(host, &spec, input)?;
        match self.invoke(host, &spec, input, Origin::External { request }, None, false)? {
            Produced::Output(output) => {
                Ok(CallResult::Rendered { output, revision: host.revision() })
            }
            Produced::Task(task) => {
                self.tasks.discard(&task.id);
                Err(ActionError::new(
                    Reason::InvalidReply,
                    "the app's ui.render started a task, but rendering must answer synchronously",
                ))
            }
        }
    }

    fn run_local<H: Host + ?Sized>(
        &mut self,
        host: &mut H,
        spec: ActionSpec,
        input: &Value,
    ) -> Result<CallResult, ActionError> {
        check_call(host, &spec, input)?;
        let produced = self.invoke(host, &spec, input, Origin::Local, None, false)?;
        Ok(result_of(produced, host.revision()))
    }

    fn check_enabled(&self) -> Result<(), ActionError> {
        if self.enabled {
            Ok(())
        } else {
            Err(ActionError::new(Reason::Disabled, "the app has not enabled agent access"))
        }
    }

    pub(crate) fn lookup(&self, name: &str) -> Result<ActionSpec, ActionError> {
        self.registry.by_name(name).copied().ok_or_else(|| {
            ActionError::new(
                Reason::UnknownAction {
                    action: String::from(name),
                    suggestions: self.registry.nearest(name),
                },
                format!("the app has no action named {name:?}; list its actions first"),
            )
        })
    }

    /// Calls the host and checks what it produced: the output against the output schema, a
    /// deferred task id against the task table.
    pub(crate) fn invoke<H: Host + ?Sized>(
        &mut self,
        host: &mut H,
        spec: &ActionSpec,
        input: &Value,
        origin: Origin,
        batch_index: Option<u32>,
        in_transaction: bool,
    ) -> Result<Produced, ActionError> {
        let mut cx = Context { tasks: &mut self.tasks, origin, batch_index, in_transaction };
        match host.execute(&mut cx, spec, input)? {
            Execution::Output(output) => {
                spec.output.validate(&output).map_err(|v| {
                    ActionError::new(
                        Reason::OutputSchema {
                            action: String::from(spec.name),
                            pointer: v.pointer,
                        },
                        format!(
                            "the app's output for {} does not match its output schema: {}",
                            spec.name, v.message
                        ),
                    )
                })?;
                Ok(Produced::Output(output))
            }
            Execution::Deferred(id) => {
                let task = self.tasks.get(&id).cloned().ok_or_else(|| {
                    ActionError::new(
                        Reason::InvalidReply,
                        format!("{} returned task {id:?}, which it never started", spec.name),
                    )
                })?;
                if let Origin::External { .. } = origin {
                    // The reply carries the creation; the daemon needs no separate message.
                    self.tasks.unqueue_start(&id);
                }
                Ok(Produced::Task(task))
            }
        }
    }
}

/// Input schema, capabilities, availability: the fixed check order, after
/// "enabled" and "action exists".
pub(crate) fn check_call<H: Host + ?Sized>(
    host: &H,
    spec: &ActionSpec,
    input: &Value,
) -> Result<(), ActionError> {
    spec.input.validate(input).map_err(|v| {
        ActionError::new(
            Reason::SchemaViolation { pointer: v.pointer },
            format!("the input of {} does not match its schema: {}", spec.name, v.message),
        )
    })?;
    let missing = spec.capabilities & !host.capabilities();
    if missing != 0 {
        return Err(ActionError::new(
            Reason::CapabilityMissing { missing },
            format!("{} needs capability bits the caller was not granted", spec.name),
        ));
    }
    match host.availability(spec) {
        Availability::Available => Ok(()),
        Availability::Unavailable { code, explanation } => {
            let message = format!("{} is unavailable right now: {explanation}", spec.name);
            Err(ActionError::new(Reason::Unavailable { code, explanation }, message))
        }
    }
}

/// The `expectedRevision` rule of an external call against `current`.
pub(crate) fn check_revision(
    spec: &ActionSpec,
    expected: Option<u64>,
    current: u64,
) -> Result<(), ActionError> {
    match (spec.kind, expected) {
        (ActionKind::Write, None) => Err(ActionError::new(
            Reason::RevisionRequired,
            format!(
                "{} changes state and needs expectedRevision (the current revision is {current})",
                spec.name
            ),
        )),
        (_, Some(expected)) if expected != current => Err(ActionError::new(
            Reason::StaleRevision { current_revision: current },
            format!(
                "expectedRevision {expected} does not match: the current revision is {current}; re-read the state and retry"
            ),
        )),
        _ => Ok(()),
    }
}

pub(crate) fn result_of(produced: Produced, revision: u64) -> CallResult {
    match produced {
        Produced::Output(output) => CallResult::Executed { output: output.into(), revision },
        Produced::Task(task) => CallResult::Deferred { task, revision },
    }
}

fn read_resource<H: Host + ?Sized>(
    host: &mut H,
    uri: &str,
    offset: u64,
    limit: u32,
) -> Result<CallResult, ActionError> {
    if limit == 0 || limit > MAX_RESOURCE_CHUNK {
        return Err(ActionError::new(
            Reason::SchemaViolation { pointer: String::from("/limit") },
            format!("limit must be 1 to {MAX_RESOURCE_CHUNK} bytes"),
        ));
    }
    let data = host.read_resource(uri, offset, limit)?;
    let mut bytes: Vec<u8> = data.bytes;
    // A host that returns more than asked is trimmed rather than allowed to break the bound.
    bytes.truncate(limit as usize);
    let end = offset.saturating_add(bytes.len() as u64);
    Ok(CallResult::Chunk(ResourceChunk {
        uri: String::from(uri),
        mime_type: data.mime_type,
        offset,
        total_size: data.total_size,
        data: base64::engine::general_purpose::STANDARD.encode(&bytes),
        eof: end >= data.total_size,
    }))
}
