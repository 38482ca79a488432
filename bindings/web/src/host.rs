//! `ScriptHost`: host-sdk's [`Host`] trait answered by the page's script, so a JavaScript app
//! runs behind the same `Dispatcher` as a Rust app. This file translates only: each trait
//! method is one request to the script ([`script::ask`]), its reply a value or an error. Every
//! check (schemas, capabilities, availability, revisions, batches, transactions, sizes) stays
//! in host-sdk, before and after the script runs.
//!
//! Optional parts the app did not define ([`Hooks`]) are not asked at all: they answer what
//! the trait's defaults answer (always available, `{}` inspected, no transactions, no
//! resources, a cancel request stops the task at once).

use alloc::boxed::Box;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use jfgui_host_sdk::declare::Registration;
use jfgui_host_sdk::{
    ActionError, ActionSpec, Availability, Context, Execution, Host, Map, Origin, Reason,
    ResourceBytes, ResourceInfo, TaskTable, Value,
};

use jfgui_proto::MAX_REVISION;

use crate::script::{self, Script, app_bug};

/// Revision reported when the app's `revision` fails or answers something other than a
/// non-negative safe integer: no `expectedRevision` (at most 2^53 - 1) matches it, so no write
/// passes its check, and the daemon refuses a result carrying it.
const UNREADABLE_REVISION: u64 = u64::MAX;

/// The optional parts the app defined (its declaration's `hooks`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Hooks {
    /// `capabilities()`: the bits callers are granted (else 0).
    pub capabilities: bool,
    /// `availability(action)`.
    pub availability: bool,
    /// `inspect(input)`.
    pub inspect: bool,
    /// `supportsTransaction`, `beginTransaction`, `commitTransaction`, `rollbackTransaction`.
    pub transactions: bool,
    /// `resources()` and `readResource(uri)`.
    pub resources: bool,
    /// `cancel(tasks)`: told which tasks a client asked to cancel.
    pub cancel: bool,
}

impl Hooks {
    /// The hooks named in `names`; an unknown name is an error naming it.
    pub fn from_names<'a>(names: impl IntoIterator<Item = &'a str>) -> Result<Hooks, String> {
        let mut hooks = Hooks::default();
        for name in names {
            let flag = match name {
                "capabilities" => &mut hooks.capabilities,
                "availability" => &mut hooks.availability,
                "inspect" => &mut hooks.inspect,
                "transactions" => &mut hooks.transactions,
                "resources" => &mut hooks.resources,
                "cancel" => &mut hooks.cancel,
                other => return Err(format!("unknown hook {other:?}")),
            };
            *flag = true;
        }
        Ok(hooks)
    }
}

/// The app as a [`Host`]. See the module docs.
#[derive(Debug)]
pub struct ScriptHost {
    script: Box<dyn Script>,
    hooks: Hooks,
    /// Tasks whose cancel request the app has been told about.
    cancels_told: Vec<String>,
    /// The resource the last `readResource` returned, lent to the default chunking.
    resource: Option<(String, Vec<u8>)>,
    /// Last: a dispatcher holds copies of its specs, and the app drops the dispatcher first.
    registration: Registration,
}

impl ScriptHost {
    /// The host for `registration`, answered by `script`.
    pub fn new(registration: Registration, hooks: Hooks, script: Box<dyn Script>) -> ScriptHost {
        ScriptHost { script, hooks, cancels_told: Vec::new(), resource: None, registration }
    }

    fn ask(&self, method: &str, params: Map) -> Result<Value, ActionError> {
        script::ask(self.script.as_ref(), method, params)
    }
}

/// The input `{"name": value}`.
fn one(name: &str, value: impl Into<Value>) -> Map {
    let mut m = Map::with_capacity(1);
    m.insert(name, value.into());
    m
}

impl Host for ScriptHost {
    fn actions(&self) -> &[ActionSpec] {
        // SAFETY: the app drops its endpoint (and with it the dispatcher, which holds copies
        // of these specs) before this host and its registration (field order in app.rs), and
        // the registration is never replaced.
        #[allow(unsafe_code)]
        unsafe {
            self.registration.specs()
        }
    }

    fn revision(&self) -> u64 {
        match self.ask("revision", Map::new()) {
            Ok(v) => v.as_u64().filter(|r| *r <= MAX_REVISION).unwrap_or(UNREADABLE_REVISION),
            Err(_) => UNREADABLE_REVISION,
        }
    }

    fn capabilities(&self) -> u64 {
        if !self.hooks.capabilities {
            return 0;
        }
        // A failing callback grants nothing.
        self.ask("capabilities", Map::new()).ok().and_then(|v| v.as_u64()).unwrap_or(0)
    }

    fn execute(
        &mut self,
        cx: &mut Context<'_>,
        action: &ActionSpec,
        input: &Value,
    ) -> Result<Execution, ActionError> {
        let mut call = Map::with_capacity(4);
        match cx.origin() {
            Origin::External { request } => {
                call.insert("external", true);
                // A decimal string: the daemon's ids use all 64 bits, a script's numbers 53.
                call.insert("request", request.to_string());
            }
            Origin::Local => {
                call.insert("external", false);
                call.insert("request", Value::Null);
            }
        }
        call.insert("batchIndex", cx.batch_index().map_or(Value::Null, Value::from));
        call.insert("inTransaction", cx.in_transaction());
        let mut params = Map::with_capacity(3);
        params.insert("action", action.name);
        params.insert("input", input.clone());
        params.insert("call", call);
        let answer = self.ask("execute", params)?;
        if let Some(output) = answer.get("output") {
            return Ok(Execution::Output(output.clone()));
        }
        match answer.get("deferred").and_then(Value::as_str) {
            Some(id) => {
                cx.tasks().start(id)?;
                Ok(Execution::Deferred(String::from(id)))
            }
            None => Err(app_bug(format!(
                "the app's execute of {} answered neither an output nor a deferred task",
                action.name
            ))),
        }
    }

    fn availability(&self, action: &ActionSpec) -> Availability {
        if !self.hooks.availability {
            return Availability::Available;
        }
        let unavailable = |code: &str, explanation: &str| Availability::Unavailable {
            code: String::from(code),
            explanation: String::from(explanation),
        };
        match self.ask("availability", one("action", action.name)) {
            Ok(Value::Null) => Availability::Available,
            Ok(v) => match (
                v.get("code").and_then(Value::as_str),
                v.get("explanation").and_then(Value::as_str),
            ) {
                (Some(code), Some(explanation)) => unavailable(code, explanation),
                _ => unavailable(
                    "availability_check_failed",
                    "the app's availability answered neither null nor {code, explanation}",
                ),
            },
            // Refusing is the side-effect-free answer when the check itself broke.
            Err(e) => unavailable("availability_check_failed", &e.message),
        }
    }

    fn inspect(&mut self, input: &Value) -> Result<Value, ActionError> {
        if !self.hooks.inspect {
            return Ok(Value::Object(Map::new()));
        }
        self.ask("inspect", one("input", input.clone()))
    }

    fn supports_transaction(&self, domain: &str) -> bool {
        self.hooks.transactions
            && self
                .ask("supportsTransaction", one("domain", domain))
                .is_ok_and(|v| v == Value::Bool(true))
    }

    fn begin_transaction(&mut self, domains: &[&str]) -> Result<(), ActionError> {
        if !self.hooks.transactions {
            return Err(ActionError::new(
                Reason::TransactionUnsupported { domain: None },
                "this app does not support transactions",
            ));
        }
        let domains: Vec<Value> = domains.iter().map(|d| Value::from(*d)).collect();
        self.ask("beginTransaction", one("domains", domains)).map(drop)
    }

    fn commit_transaction(&mut self) {
        // Commit and rollback cannot fail (the trait's contract); an app failing here is a
        // bug the call's result cannot report any more.
        let _ = self.ask("commitTransaction", Map::new());
    }

    fn rollback_transaction(&mut self) {
        let _ = self.ask("rollbackTransaction", Map::new());
    }

    fn resources(&mut self) -> Vec<ResourceInfo> {
        if !self.hooks.resources {
            return Vec::new();
        }
        self.ask("resources", Map::new())
            .ok()
            .and_then(|v| jfgui_proto::from_value::<Vec<ResourceInfo>>(v).ok())
            .unwrap_or_default()
    }

    fn resource(&mut self, uri: &str) -> Option<ResourceBytes<'_>> {
        if !self.hooks.resources {
            return None;
        }
        self.resource = None;
        let answer = self.ask("readResource", one("uri", uri)).ok()?;
        let mime = answer.get("mimeType").and_then(Value::as_str)?;
        let bytes = STANDARD.decode(answer.get("base64").and_then(Value::as_str)?).ok()?;
        self.resource = Some((String::from(mime), bytes));
        let (mime_type, bytes) = self.resource.as_ref()?;
        Some(ResourceBytes { mime_type, bytes })
    }

    fn tick(&mut self, tasks: &mut TaskTable) -> Option<Duration> {
        // Tell the app once about each task a client asked to cancel.
        self.cancels_told.retain(|id| tasks.is_cancel_requested(id));
        let new: Vec<String> = tasks
            .active_ids()
            .filter(|id| {
                tasks.is_cancel_requested(id) && !self.cancels_told.iter().any(|t| t == id)
            })
            .map(String::from)
            .collect();
        if new.is_empty() {
            return None;
        }
        if self.hooks.cancel {
            let ids: Vec<Value> = new.iter().map(|id| Value::from(id.as_str())).collect();
            // The app reports the outcome later, through the task updates.
            let _ = self.ask("cancel", one("tasks", ids));
            self.cancels_told.extend(new);
        } else {
            for id in new {
                let _ = tasks.cancelled(&id);
            }
        }
        None
    }
}
