//! `CHost`: host-sdk's [`Host`] trait implemented by the app's callback table, so a C or
//! Python app runs behind the same `Dispatcher` as a Rust app. This file translates only:
//! values to JSON text and back, replies to results, and an unwinding callback to an error
//! for that one call. Every check (schemas, capabilities, availability, revisions,
//! transactions, sizes) stays in host-sdk.

use core::time::Duration;
use std::format;
use std::rc::Rc;
use std::string::String;
use std::vec::Vec;

use jfgui_host_sdk::declare::Registration;
use jfgui_host_sdk::{
    ActionError, ActionSpec, Answer, Availability, Confirmation, Context, Execution, Host, Map,
    Origin, Reason, ResourceData, ResourceInfo, TaskTable, Value,
};
use jfgui_proto::encode;

use crate::answer::{JFGUI_ANSWER_LATER, answer_of};
use crate::callbacks::{Callbacks, JfguiCallInfo, JfguiConfirmation, JfguiStr, Unwound};
use crate::reply::{APP_JSON_LIMITS, JfguiReply, Kind, Written, app_bug};
use crate::shared::Shared;

/// Revision reported when the app's revision callback unwinds: no `expectedRevision` (at
/// most 2^53 - 1) matches it, so no write passes its check, and the daemon refuses a result
/// carrying it.
const UNREADABLE_REVISION: u64 = u64::MAX;

fn unwound(callback: &str) -> ActionError {
    app_bug(format!("the app's {callback} callback panicked or unwound"))
}

/// The app as a [`Host`]. See the module docs.
#[derive(Debug)]
pub(crate) struct CHost {
    callbacks: Callbacks,
    shared: Rc<Shared>,
    /// Tasks whose cancel request the app has been told about.
    cancels_told: Vec<String>,
    /// Last: the dispatcher holds views into it, and the handle drops the dispatcher first.
    registration: Option<Registration>,
}

impl CHost {
    pub(crate) fn new(callbacks: Callbacks, shared: Rc<Shared>) -> CHost {
        CHost { callbacks, shared, cancels_told: Vec::new(), registration: None }
    }

    /// Replaces the declarations. Only while no dispatcher was built from the old ones.
    pub(crate) fn set_registration(&mut self, registration: Option<Registration>) {
        self.registration = registration;
    }

    fn reply(&self, kind: Kind) -> JfguiReply {
        JfguiReply::new(kind, Rc::clone(&self.shared))
    }
}

/// The input as JSON text for a callback.
fn json_text(value: &Value) -> Result<Vec<u8>, ActionError> {
    encode(value, &APP_JSON_LIMITS)
        .map_err(|e| app_bug(format!("the input cannot be encoded for the app: {e}")))
}

impl Host for CHost {
    fn actions(&self) -> &[ActionSpec] {
        // SAFETY: the handle drops the dispatcher, which holds copies of the specs, before
        // the host that owns the registration (handle.rs), and a registration is replaced only
        // while no dispatcher was built from it (`set_registration`).
        self.registration.as_ref().map_or(&[], |r| unsafe { r.specs() })
    }

    fn revision(&self) -> u64 {
        self.callbacks.revision().unwrap_or(UNREADABLE_REVISION)
    }

    fn capabilities(&self) -> u64 {
        // An unwinding callback grants nothing.
        self.callbacks.capabilities().map_or(0, |r| r.unwrap_or(0))
    }

    fn execute(
        &mut self,
        cx: &mut Context<'_>,
        action: &ActionSpec,
        input: &Value,
    ) -> Result<Execution, ActionError> {
        let input = json_text(input)?;
        let info = JfguiCallInfo {
            request: match cx.origin() {
                Origin::External { request } => request,
                Origin::Local => 0,
            },
            batch_index: cx.batch_index().map_or(-1, i64::from),
            external: matches!(cx.origin(), Origin::External { .. }),
            in_transaction: cx.in_transaction(),
        };
        let mut reply = self.reply(Kind::Execute);
        let callbacks = &self.callbacks;
        self.shared
            .lend_tasks(cx.tasks(), || callbacks.execute(action.name, &input, &info, &mut reply))
            .map_err(|Unwound| unwound("execute"))?;
        match reply.take() {
            Some(Written::Json(output)) => Ok(Execution::Output(output)),
            Some(Written::Deferred(id)) => {
                cx.tasks().start(id.clone())?;
                Ok(Execution::Deferred(id))
            }
            Some(Written::Error(e)) => Err(e),
            _ => Err(reply.nothing_written()),
        }
    }

    fn availability(&self, action: &ActionSpec) -> Availability {
        let mut reply = self.reply(Kind::Availability);
        match self.callbacks.availability(action.name, &mut reply) {
            None | Some(Ok(())) => match reply.take() {
                Some(Written::Unavailable { code, explanation }) => {
                    Availability::Unavailable { code, explanation }
                }
                _ => Availability::Available,
            },
            // Refusing is the side-effect-free answer when the check itself broke.
            Some(Err(Unwound)) => Availability::Unavailable {
                code: String::from("availability_check_failed"),
                explanation: String::from("the app's availability callback panicked or unwound"),
            },
        }
    }

    fn inspect(&mut self, input: &Value) -> Result<Value, ActionError> {
        let input = json_text(input)?;
        let mut reply = self.reply(Kind::Inspect);
        match self.callbacks.inspect(&input, &mut reply) {
            None => return Ok(Value::Object(Map::new())),
            Some(r) => r.map_err(|Unwound| unwound("inspect"))?,
        }
        match reply.take() {
            Some(Written::Json(state)) => Ok(state),
            Some(Written::Error(e)) => Err(e),
            _ => Err(reply.nothing_written()),
        }
    }

    fn supports_transaction(&self, domain: &str) -> bool {
        self.callbacks.supports_transaction(domain).is_some_and(|r| r.unwrap_or(false))
    }

    fn begin_transaction(&mut self, domains: &[&str]) -> Result<(), ActionError> {
        let mut reply = self.reply(Kind::BeginTransaction);
        match self.callbacks.begin_transaction(domains, &mut reply) {
            // `Callbacks::new` requires it whenever `supports_transaction` can say yes.
            None => Err(ActionError::new(
                Reason::TransactionUnsupported { domain: None },
                "this app does not support transactions",
            )),
            Some(Err(Unwound)) => Err(unwound("begin_transaction")),
            Some(Ok(())) => match reply.take() {
                Some(Written::Error(e)) => Err(e),
                _ => Ok(()),
            },
        }
    }

    fn commit_transaction(&mut self) {
        // Commit and rollback cannot fail (the trait's contract); an unwinding app is a bug
        // the call's result cannot report any more.
        let _ = self.callbacks.commit_transaction();
    }

    fn rollback_transaction(&mut self) {
        let _ = self.callbacks.rollback_transaction();
    }

    fn resources(&mut self) -> Vec<ResourceInfo> {
        let mut reply = self.reply(Kind::ListResources);
        match self.callbacks.list_resources(&mut reply) {
            Some(Ok(())) => match reply.take() {
                Some(Written::Resources(list)) => list,
                _ => Vec::new(),
            },
            None | Some(Err(Unwound)) => Vec::new(),
        }
    }

    fn read_resource(
        &mut self,
        uri: &str,
        offset: u64,
        limit: u32,
    ) -> Result<ResourceData, ActionError> {
        let mut reply = self.reply(Kind::ReadResource);
        match self.callbacks.read_resource(uri, offset, limit, &mut reply) {
            Some(Err(Unwound)) => Err(unwound("read_resource")),
            None | Some(Ok(())) => match reply.take() {
                Some(Written::Resource(data)) => Ok(data),
                Some(Written::Error(e)) => Err(e),
                // No callback, or nothing written: the Rust default's answer.
                _ => Err(ActionError::new(
                    Reason::Resource { resource: String::from(uri) },
                    format!("no such resource: {uri}"),
                )),
            },
        }
    }

    fn tick(&mut self, tasks: &mut TaskTable) -> Option<Duration> {
        let callbacks = &self.callbacks;
        let next = self.shared.lend_tasks(tasks, || callbacks.tick());
        // Tell the app once about each task a client asked to cancel.
        self.cancels_told.retain(|id| tasks.is_cancel_requested(id));
        let new: Vec<String> = tasks
            .active_ids()
            .filter(|id| {
                tasks.is_cancel_requested(id) && !self.cancels_told.iter().any(|t| t == id)
            })
            .map(String::from)
            .collect();
        for id in new {
            let callbacks = &self.callbacks;
            let _ = self.shared.lend_tasks(tasks, || callbacks.cancel_task(&id));
            self.cancels_told.push(id);
        }
        match next {
            Some(Ok(ms)) if ms >= 0 => Some(Duration::from_millis(ms as u64)),
            _ => None,
        }
    }

    fn confirm(&mut self, confirmation: &Confirmation) -> Option<Answer> {
        let json = confirmation_json(confirmation);
        let (summary, name, label) =
            (confirmation.summary(), confirmation.agent_name(), confirmation.agent_label());
        let c = JfguiConfirmation {
            ticket: JfguiStr::of(&confirmation.ticket),
            action: JfguiStr::of(confirmation.action().name),
            title: JfguiStr::of(confirmation.title()),
            summary: JfguiStr::of(&summary),
            agent_name: JfguiStr::of(&name),
            agent_label: JfguiStr::of(&label),
            may_always: confirmation.may_always,
            json: JfguiStr::of(&json),
        };
        match self.callbacks.confirm(&c) {
            // No callback: the app cannot ask (the trait's default).
            None => Some(Answer::NoUi),
            Some(Ok(JFGUI_ANSWER_LATER)) => None,
            // An unknown value or an unwinding callback: nobody could be asked.
            Some(Ok(v)) => Some(answer_of(v).unwrap_or(Answer::NoUi)),
            Some(Err(Unwound)) => Some(Answer::NoUi),
        }
    }

    fn withdraw_confirmation(&mut self, ticket: &str) {
        let _ = self.callbacks.withdraw_confirmation(ticket);
    }
}

/// The `json` member of a [`JfguiConfirmation`] (see there).
fn confirmation_json(c: &Confirmation) -> String {
    let calls: Vec<Value> = c
        .calls
        .iter()
        .map(|call| {
            let mut m = Map::new();
            if let Some(i) = call.index {
                m.insert("index", i);
            }
            m.insert("action", call.action.name);
            m.insert("title", call.title());
            m.insert("description", call.action.description);
            m.insert("input", call.input.clone());
            Value::Object(m)
        })
        .collect();
    let mut m = Map::new();
    m.insert("ticket", c.ticket.as_str());
    m.insert("calls", Value::Array(calls));
    if let Some(n) = c.batch_len {
        m.insert("batchLen", n);
    }
    m.insert(
        "agent",
        c.agent.as_ref().map_or(Value::Null, |a| jfgui_proto::to_value(a).unwrap_or_default()),
    );
    m.insert("mayAlways", c.may_always);
    // The input passed the app's own schema within these bounds, so this encodes.
    let bytes = encode(&Value::Object(m), &APP_JSON_LIMITS).unwrap_or_default();
    String::from_utf8(bytes).unwrap_or_default()
}
