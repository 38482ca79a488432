//! `ScriptApp`: one page's app, its declaration read, its host behind a `Dispatcher` inside
//! host-sdk's bridge endpoint; and what the script asks of it beyond the bridge loop: task
//! reports ([`ScriptApp::report_tasks`]) and its own UI's calls ([`ScriptApp::execute_local`]).

use alloc::boxed::Box;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use jfgui_host_sdk::bridge::BridgeChannel;
use jfgui_host_sdk::bridge::web::WebApp;
use jfgui_host_sdk::channel::Identity;
use jfgui_host_sdk::declare::{DeclarationError, Registration};
use jfgui_host_sdk::{ActionError, Dispatcher, Host, Map, Progress, Reason, Value, host_error};

use crate::host::{Hooks, ScriptHost};
use crate::script::{SCRIPT_JSON_LIMITS, Script};

/// One page's app. See the module docs.
#[derive(Debug)]
pub struct ScriptApp {
    /// First: its dispatcher holds copies of the host's specs, so it is dropped before them.
    link: BridgeChannel,
    host: ScriptHost,
}

impl WebApp for ScriptApp {
    fn parts(&mut self) -> (&mut BridgeChannel, &mut dyn Host) {
        (&mut self.link, &mut self.host)
    }
}

fn parse(document: &[u8], what: &str) -> Result<Map, String> {
    match jfgui_proto::parse(document, &SCRIPT_JSON_LIMITS) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => Err(format!("{what} must be a JSON object")),
        Err(e) => Err(format!("{what} is not strict JSON: {e}")),
    }
}

impl ScriptApp {
    /// The app a declaration describes: `{"name": DISPLAY_NAME, "actions": [ACTION, ...],
    /// "hooks": [NAME, ...]}`, each action in the shape `actions/describe` shows (as the C
    /// ABI takes them), checked by the same registration rules as a Rust app's; agent access
    /// is off until the page turns it on (`jfgui_set_enabled`).
    pub fn declare(document: &[u8], script: Box<dyn Script>) -> Result<ScriptApp, String> {
        let mut document = parse(document, "the declaration")?;
        let name = match document.remove("name") {
            Some(Value::String(name)) => name,
            _ => return Err(String::from("the declaration needs a \"name\" (the display name)")),
        };
        let hooks = match document.remove("hooks") {
            None => Hooks::default(),
            Some(Value::Array(names)) => {
                Hooks::from_names(names.iter().map(|n| n.as_str().unwrap_or("")))?
            }
            Some(_) => return Err(String::from("\"hooks\" must be an array of names")),
        };
        let actions = document
            .remove("actions")
            .ok_or_else(|| String::from("the declaration needs \"actions\""))?;
        if let Some(member) = document.keys().next() {
            return Err(format!("unknown member {member:?} in the declaration"));
        }
        let actions =
            jfgui_proto::encode(&actions, &SCRIPT_JSON_LIMITS).map_err(|e| e.to_string())?;
        // Its pointers start at the array: say which member they are in.
        let registration = Registration::from_json(&actions).map_err(|e| match e {
            DeclarationError::Json(m) | DeclarationError::Shape(m) => format!("actions: {m}"),
        })?;
        let host = ScriptHost::new(registration, hooks, script);
        let dispatcher = Dispatcher::new(&host).map_err(|e| e.to_string())?;
        let identity = Identity { display_name: name, pid: 0 };
        Ok(ScriptApp { link: BridgeChannel::new(dispatcher, identity), host })
    }

    /// Applies the app's task reports, a JSON array of `{"task": ID, "progress": {done,
    /// total?, message?}}`, `{"task": ID, "complete": RESULT}`, `{"task": ID, "fail": {code?,
    /// message}}` or `{"task": ID, "cancelled": true}`, in order, and queues the changes for
    /// the bridge. The first report the task table refuses (no such task, already finished)
    /// stops there with its reason; the ones before it stay applied.
    pub fn report_tasks(&mut self, reports: &[u8]) -> Result<usize, String> {
        let reports = match jfgui_proto::parse(reports, &SCRIPT_JSON_LIMITS) {
            Ok(Value::Array(reports)) => reports,
            _ => return Err(String::from("task reports must be a JSON array")),
        };
        let applied = self.apply(&reports);
        // Queue the changes (and let the host see new cancel requests) whatever happened.
        let _ = self.link.tick(&mut self.host);
        applied.map(|()| reports.len())
    }

    fn apply(&mut self, reports: &[Value]) -> Result<(), String> {
        let tasks = self.link.dispatcher_mut().tasks_mut();
        for (i, report) in reports.iter().enumerate() {
            let id = report
                .get("task")
                .and_then(Value::as_str)
                .ok_or_else(|| format!("task report {i} has no \"task\" id"))?;
            let done = if let Some(progress) = report.get("progress") {
                let progress: Progress = jfgui_proto::from_value(progress.clone())
                    .map_err(|e| format!("task report {i}: progress: {}", e.message()))?;
                tasks.progress(id, progress)
            } else if let Some(result) = report.get("complete") {
                tasks.complete(id, result.clone())
            } else if let Some(failure) = report.get("fail") {
                let message =
                    failure.get("message").and_then(Value::as_str).unwrap_or("the task failed");
                let error = match failure.get("code").and_then(Value::as_str) {
                    Some(code) => host_error(code, message),
                    None => ActionError::new(Reason::HostError { code: None }, message),
                };
                tasks.fail(id, error)
            } else if report.get("cancelled") == Some(&Value::Bool(true)) {
                tasks.cancelled(id)
            } else {
                return Err(format!(
                    "task report {i} is none of progress, complete, fail, cancelled"
                ));
            };
            done.map_err(|e| format!("task report {i} ({id}): {e}"))?;
        }
        Ok(())
    }

    /// The app's own UI calling one of its actions, `{"action": NAME, "input": VALUE}`,
    /// through the dispatcher (schema, capabilities, availability, the host, the output
    /// schema; not the agent-only enabled and revision checks). Answers `{"ok": RESULT}`
    /// (`{"executed": {output, revision}}` or `{"deferred": {task, revision}}`) or
    /// `{"error": ERROR}` (the host channel's error object).
    pub fn execute_local(&mut self, request: &[u8]) -> Result<Vec<u8>, String> {
        let mut request = parse(request, "the call")?;
        let action = match request.remove("action") {
            Some(Value::String(a)) => a,
            _ => return Err(String::from("the call needs an \"action\" name")),
        };
        let input = request.remove("input").unwrap_or_else(|| Value::Object(Map::new()));
        let dispatcher = self.link.dispatcher_mut();
        let mut answer = Map::with_capacity(1);
        match dispatcher.execute_local(&mut self.host, &action, &input) {
            Ok(result) => {
                answer.insert("ok", jfgui_proto::to_value(&result).map_err(|e| e.to_string())?)
            }
            Err(e) => answer.insert("error", e.to_wire()),
        };
        // A task it started, or finished at once, goes to the bridge too.
        let _ = self.link.tick(&mut self.host);
        jfgui_proto::encode(&Value::Object(answer), &SCRIPT_JSON_LIMITS).map_err(|e| e.to_string())
    }
}

#[cfg(test)]
mod tests;
