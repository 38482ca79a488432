//! The ten JSON-1 methods, implemented once and protocol-neutral: JSON-1 and MCP both call
//! [`call`] with the JSON-1 params and get the JSON-1 result without `protocolVersion`.
//!
//! `actions/list`, `actions/describe` and `tasks/get` are answered from the registration cache
//! (whose answer objects are encoded once, `app/registration/catalog.rs`) and the task records
//! (filled from replies and task updates, `app/replies.rs`); everything else is forwarded to
//! the app as a
//! host-channel call. Params are checked strictly: unknown params, wrong types, inexact or
//! out-of-range integers are -32602 with `data.reason` and `data.param`.

use std::sync::Arc;

use jfgui_proto::channel::{
    Awaiting, BatchCall, BatchOutcome, Call, CallResult, Consent, ExecuteCall, ReadResource,
    TaskSnapshot,
};
use jfgui_proto::{ActionError, MAX_REVISION, Map, Payload, RawJson, Reason, Value};

use super::Target;
use super::method::{Args, Method, MethodError};
use super::observer::Observer;
use crate::app::{App, Query};
use crate::audit::record::ConsentNote;
use crate::consent::Asking;
use crate::tasks::Refused;

pub use jfgui_proto::channel::MAX_BATCH_CALLS;
/// Largest `resources/read` chunk.
pub const MAX_RESOURCE_CHUNK: u64 = jfgui_proto::channel::MAX_RESOURCE_CHUNK as u64;
/// Largest `actions/list` page.
pub const MAX_LIST_LIMIT: u64 = 100;
/// The `actions/list` page size when the client names none.
pub const DEFAULT_LIST_LIMIT: u64 = 50;

fn invalid(reason: &str, param: &str, message: String) -> MethodError {
    let mut data = Map::with_capacity(2);
    data.insert("reason", reason);
    data.insert("param", param);
    MethodError::InvalidParams { message, data }
}

/// Strict access to a params object: each param is taken once, and whatever is left at
/// [`Params::finish`] is an unknown param.
struct Params {
    map: Map,
    /// Path prefix for nested objects (`calls[3].`), for error data.
    prefix: String,
    /// `input` as the fragment it was read as (its place in `map` holds `null`).
    input: Option<RawJson>,
}

impl Params {
    fn new(args: Args) -> Self {
        Params { map: args.params, prefix: String::new(), input: args.input }
    }

    fn path(&self, name: &str) -> String {
        format!("{}{name}", self.prefix)
    }

    fn finish(self) -> Result<(), MethodError> {
        match self.map.keys().next() {
            None => Ok(()),
            Some(k) => {
                let path = self.path(k);
                Err(invalid("unknown_param", &path, format!("Unknown parameter {path:?}.")))
            }
        }
    }

    fn any(&mut self, name: &str) -> Option<Value> {
        self.payload(name).map(Payload::into_value)
    }

    /// A param as received: the `input` fragment, when there is one, else the tree.
    fn payload(&mut self, name: &str) -> Option<Payload> {
        let tree = self.map.remove(name)?;
        match self.input.take() {
            Some(raw) if name == "input" => Some(Payload::Raw(raw)),
            fragment => {
                self.input = fragment;
                Some(Payload::Value(tree))
            }
        }
    }

    fn string(&mut self, name: &str) -> Result<Option<String>, MethodError> {
        match self.map.remove(name) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(other) => {
                let path = self.path(name);
                Err(invalid(
                    "invalid_type",
                    &path,
                    format!("Parameter {path:?} must be a string, not {}.", other.type_name()),
                ))
            }
        }
    }

    fn required_string(&mut self, name: &str) -> Result<String, MethodError> {
        self.string(name)?.ok_or_else(|| {
            let path = self.path(name);
            invalid("missing_param", &path, format!("Parameter {path:?} is required."))
        })
    }

    fn boolean(&mut self, name: &str) -> Result<Option<bool>, MethodError> {
        match self.map.remove(name) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(b)),
            Some(other) => {
                let path = self.path(name);
                Err(invalid(
                    "invalid_type",
                    &path,
                    format!("Parameter {path:?} must be a boolean, not {}.", other.type_name()),
                ))
            }
        }
    }

    /// An integer in `min..=max`, converted exactly: `1.0` and `1e2` are integers, `12E-1`,
    /// fractions, negatives and anything beyond `max` are errors, never rounded.
    fn integer(&mut self, name: &str, min: u64, max: u64) -> Result<Option<u64>, MethodError> {
        let Some(value) = self.map.remove(name) else { return Ok(None) };
        let path = self.path(name);
        let Value::Number(n) = &value else {
            return Err(invalid(
                "invalid_type",
                &path,
                format!("Parameter {path:?} must be an integer, not {}.", value.type_name()),
            ));
        };
        match n.to_u64() {
            Some(v) if (min..=max).contains(&v) => Ok(Some(v)),
            _ => Err(invalid(
                "out_of_range",
                &path,
                format!("Parameter {path:?} must be an integer from {min} to {max}, not {n}."),
            )),
        }
    }

    fn revision(&mut self) -> Result<Option<u64>, MethodError> {
        self.integer("expectedRevision", 0, MAX_REVISION)
    }
}

/// One call for one app (see the module docs). `params` are the JSON-1 params without
/// `protocolVersion`; the result is the JSON-1 result object without `protocolVersion`.
/// Calls that can change the app are recorded in the audit log (`observer.rs`).
pub async fn call(target: &Target, method: Method, args: Args) -> Result<Payload, MethodError> {
    let observer = Observer::start(target, method, &args);
    let mut asks = Asks { target, observer: observer.as_ref(), note: None };
    let result = dispatch(target.app(), method, args, &mut asks).await;
    // Refused by a check before anything was asked: nothing to say about consent.
    let awaits = |r: &Payload| r.get("task").and_then(|t| t.get("awaiting")).is_some();
    let note = asks.note.filter(|n| !n.asked || result.as_ref().is_ok_and(awaits));
    if let Some(observer) = observer {
        observer.finish(&result, note);
    }
    result
}

/// How a call of `confirm` actions goes out: who asks (the connection's agent), whether a
/// grant covers it, and what keeps its prompt (`consent.rs`); afterwards, how it went for the
/// audit record.
struct Asks<'a> {
    target: &'a Target,
    observer: Option<&'a Observer>,
    note: Option<ConsentNote>,
}

impl Asks<'_> {
    /// The `consent` for a call of `names` and what keeps its prompt, when one of them is a
    /// `confirm` action (else `None`: the call keeps its shape).
    fn consent<'n>(
        &mut self,
        app: &App,
        names: impl Iterator<Item = &'n str>,
    ) -> Option<(Box<Consent>, Option<Arc<Asking>>)> {
        let registration = app.registration();
        let mut actions: Vec<String> = Vec::new();
        for name in names {
            if registration.action(name).is_some_and(|a| a.confirm)
                && !actions.iter().any(|a| a == name)
            {
                actions.push(name.to_owned());
            }
        }
        if actions.is_empty() {
            return None;
        }
        let asker = self.target.asker();
        let grants = &app.config().consent.grants;
        let app_name = registration.display_name();
        // Only an agent the OS named is covered by a grant, and only when every confirm call
        // of the batch is.
        let granted = if asker.may_grant() {
            actions
                .iter()
                .map(|action| grants.find(asker.exe(), app_name, action))
                .collect::<Option<Vec<u64>>>()
                .and_then(|ids| ids.first().copied())
        } else {
            None
        };
        let may_grant = asker.may_grant() && grants.is_stored();
        let consent =
            Box::new(Consent { agent: asker.agent(self.target.says()), granted, may_grant });
        self.note = Some(ConsentNote { asked: granted.is_none(), answer: None, grant: granted });
        let asking = granted.is_none().then(|| {
            Arc::new(Asking {
                agent: asker.exe().to_owned(),
                actions,
                may_grant,
                asker: Arc::downgrade(asker),
                decided: self.observer.map(Observer::decision),
            })
        });
        Some((consent, asking))
    }
}

async fn dispatch(
    app: &App,
    method: Method,
    args: Args,
    asks: &mut Asks<'_>,
) -> Result<Payload, MethodError> {
    let mut p = Params::new(args);
    match method {
        Method::AgentInfo => {
            p.finish()?;
            agent_info(app).await.map(Payload::from)
        }
        Method::ActionsList => actions_list(app, p).await,
        Method::ActionsDescribe => {
            let name = p.required_string("action")?;
            p.finish()?;
            let Some(info) = app.registration().action(&name) else {
                let names = app.registration().actions().iter().map(|a| a.name());
                let suggestions = jfgui_proto::resolve::nearest(&name, names);
                let suggestions = suggestions.into_iter().map(str::to_owned).collect();
                return Err(ActionError::new(
                    Reason::Action { action: name, suggestions },
                    "No action of that name is registered; list the actions to find one (data.suggestions has the nearest names, if any).",
                )
                .into());
            };
            Ok(Payload::object([("action", info.described())]))
        }
        Method::ActionsExecute => {
            let mut execute = execute_call(&mut p)?;
            p.finish()?;
            check_task_room(app)?;
            let asking = asks.consent(app, std::iter::once(execute.action.as_str())).and_then(
                |(consent, asking)| {
                    execute.consent = Some(consent);
                    asking
                },
            );
            match app.ask(Call::Execute(execute), asking).await? {
                CallResult::Executed { output, revision } => {
                    Ok(Payload::object([("output", output), ("revision", revision.into())]))
                }
                CallResult::Deferred { task, revision } => Ok(deferred(&task, revision).into()),
                _ => Err(invalid_reply()),
            }
        }
        Method::ActionsBatch => actions_batch(app, p, asks).await.map(Payload::from),
        Method::StateInspect => {
            let input = p.any("input").unwrap_or_else(empty_object);
            p.finish()?;
            match app.call(Call::Inspect { input }).await? {
                CallResult::Inspected { revision, state } => {
                    let mut m = one("revision", Value::from(revision));
                    m.insert("state", state);
                    Ok(m.into())
                }
                _ => Err(invalid_reply()),
            }
        }
        Method::TasksGet => {
            let id = p.required_string("id")?;
            p.finish()?;
            let task = lookup_task(app, &id)?;
            Ok(one("task", to_value(&task)?).into())
        }
        Method::TasksCancel => {
            let id = p.required_string("id")?;
            p.finish()?;
            let task = lookup_task(app, &id)?;
            if task.state.is_final() {
                return Ok(one("task", task_brief(&task)).into());
            }
            match app.cancel_task(id).await? {
                CallResult::Task(task) => Ok(one("task", task_brief(&task)).into()),
                _ => Err(invalid_reply()),
            }
        }
        Method::ResourcesRead => {
            let uri = p.required_string("uri")?;
            let offset = p.integer("offset", 0, u64::MAX)?.unwrap_or(0);
            let limit = p.integer("limit", 1, MAX_RESOURCE_CHUNK)?.unwrap_or(MAX_RESOURCE_CHUNK);
            p.finish()?;
            let limit = u32::try_from(limit).unwrap_or(u32::MAX);
            match app.call(Call::ReadResource(ReadResource { uri, offset, limit })).await? {
                // A paging parameter out of range is -32602; the end itself is a valid offset
                // (an empty chunk with eof), one past it is not.
                CallResult::Chunk(chunk) if chunk.offset > chunk.total_size => {
                    let mut data = Map::with_capacity(3);
                    data.insert("reason", "out_of_range");
                    data.insert("param", "offset");
                    data.insert("totalSize", chunk.total_size);
                    let message = format!(
                        "Parameter \"offset\" must be at most the resource's totalSize {}, not {}.",
                        chunk.total_size, chunk.offset
                    );
                    Err(MethodError::InvalidParams { message, data })
                }
                CallResult::Chunk(chunk) => match to_value(&chunk)? {
                    Value::Object(m) => Ok(m.into()),
                    _ => Err(internal("a resource chunk did not map to an object")),
                },
                _ => Err(invalid_reply()),
            }
        }
        Method::ViewRender => {
            let input = p.any("input").unwrap_or_else(empty_object);
            p.finish()?;
            match app.call(Call::Render { input }).await? {
                CallResult::Rendered { output, revision } => {
                    let mut m = one("output", output);
                    m.insert("revision", revision);
                    Ok(m.into())
                }
                _ => Err(invalid_reply()),
            }
        }
    }
}

async fn agent_info(app: &App) -> Result<Map, MethodError> {
    let revision = match app.call(Call::Revision {}).await? {
        CallResult::Revision { revision } => revision,
        _ => return Err(invalid_reply()),
    };
    let config = app.config();
    let mut daemon = Map::with_capacity(2);
    daemon.insert("name", "jfgui-agentd");
    daemon.insert("version", env!("CARGO_PKG_VERSION"));
    let mut app_info = Map::with_capacity(4);
    app_info.insert("displayName", app.registration().display_name());
    if app.registration().display_name_truncated() {
        app_info.insert("displayNameTruncated", true);
    }
    app_info.insert("slug", app.registration().slug());
    app_info.insert("pid", app.registration().pid());
    let mut limits = Map::with_capacity(3);
    limits.insert("maxMessageBytes", config.json.max_bytes as u64);
    limits.insert("maxBatchCalls", MAX_BATCH_CALLS as u64);
    limits.insert("maxResourceChunk", MAX_RESOURCE_CHUNK);
    let mut m = Map::with_capacity(5);
    m.insert("daemon", daemon);
    m.insert("app", app_info);
    m.insert("revision", revision);
    m.insert("actionCount", app.registration().actions().len() as u64);
    m.insert("limits", limits);
    Ok(m)
}

/// Bytes of search text scanned between two yields, so a query against thousands of long
/// descriptions lets every other connection run in between.
const SEARCH_SLICE: usize = 64 * 1024;

/// `actions/list`. The cursor is the registration index to resume at (tied to the endpoint and
/// the query), so a page scans from there until it has `limit` matches and knows whether
/// another follows: a page costs at most one pass over the actions, yielding every
/// [`SEARCH_SLICE`] bytes.
async fn actions_list(app: &App, mut p: Params) -> Result<Payload, MethodError> {
    let query = p.string("query")?;
    let cursor = p.string("cursor")?;
    let limit = p.integer("limit", 1, MAX_LIST_LIMIT)?.unwrap_or(DEFAULT_LIST_LIMIT) as usize;
    let describe = p.boolean("describe")?.unwrap_or(false);
    p.finish()?;
    let mut query_text = query.as_deref().map(Query::new);
    let actions = app.registration().actions();
    let fingerprint = cursor_fingerprint(app.registration().id(), query.as_deref());
    let start = match cursor {
        None => 0,
        Some(c) => parse_cursor(&c, fingerprint)
            .filter(|&offset| offset <= actions.len())
            .ok_or_else(|| {
                invalid(
                    "invalid_cursor",
                    "cursor",
                    "The cursor is not one this endpoint gave for this query.".into(),
                )
            })?,
    };
    let mut page = Vec::with_capacity(limit.min(actions.len()));
    let mut next = None;
    let mut scanned = 0;
    for (i, action) in actions.iter().enumerate().skip(start) {
        let hit = match &mut query_text {
            None => true,
            Some(q) => {
                let (hit, cost) = q.matches(action);
                scanned += cost;
                hit
            }
        };
        if hit {
            if page.len() == limit {
                next = Some(i);
                break;
            }
            page.push(if describe { action.described_row() } else { action.row() });
        }
        if scanned >= SEARCH_SLICE {
            scanned = 0;
            tokio::task::yield_now().await;
        }
    }
    let mut m = Payload::object([("actions", Payload::Array(page))]);
    if let Some(next) = next {
        m.insert("nextCursor", format!("{next}.{fingerprint:016x}"));
    }
    Ok(m)
}

/// Ties a cursor to its endpoint instance and query (FNV-1a), so a cursor from another query
/// or another app is refused instead of silently paging something else.
fn cursor_fingerprint(app_id: u64, query: Option<&str>) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |bytes: &[u8]| {
        for &b in bytes {
            hash ^= u64::from(b);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
    };
    eat(&app_id.to_le_bytes());
    match query {
        None => eat(&[0]),
        Some(q) => {
            eat(&[1]);
            eat(q.as_bytes());
        }
    }
    hash
}

fn parse_cursor(cursor: &str, fingerprint: u64) -> Option<usize> {
    let (offset, fp) = cursor.split_once('.')?;
    if fp.len() != 16 || u64::from_str_radix(fp, 16).ok()? != fingerprint {
        return None;
    }
    if offset.is_empty() || !offset.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    offset.parse().ok().filter(|&o| o > 0)
}

fn execute_call(p: &mut Params) -> Result<ExecuteCall, MethodError> {
    let action = p.required_string("action")?;
    let input = p.payload("input").unwrap_or_else(|| empty_object().into());
    let expected_revision = p.revision()?;
    Ok(ExecuteCall { action, input, expected_revision, consent: None })
}

async fn actions_batch(app: &App, mut p: Params, asks: &mut Asks<'_>) -> Result<Map, MethodError> {
    let calls = match p.any("calls") {
        Some(Value::Array(calls)) => calls,
        Some(other) => {
            return Err(invalid(
                "invalid_type",
                "calls",
                format!("Parameter \"calls\" must be an array, not {}.", other.type_name()),
            ));
        }
        None => {
            return Err(invalid(
                "missing_param",
                "calls",
                "Parameter \"calls\" is required.".into(),
            ));
        }
    };
    if calls.is_empty() || calls.len() > MAX_BATCH_CALLS {
        return Err(invalid(
            "out_of_range",
            "calls",
            format!("A batch holds 1 to {MAX_BATCH_CALLS} calls, not {}.", calls.len()),
        ));
    }
    let atomic = p.boolean("atomic")?.unwrap_or(false);
    let stop_on_error = p.boolean("stopOnError")?.unwrap_or(true);
    p.finish()?;
    let mut parsed = Vec::with_capacity(calls.len());
    for (i, call) in calls.into_iter().enumerate() {
        let Value::Object(map) = call else {
            let path = format!("calls[{i}]");
            return Err(invalid(
                "invalid_type",
                &path,
                format!("{path} must be an object {{action, input?, expectedRevision?}}."),
            ));
        };
        let mut cp = Params { map, prefix: format!("calls[{i}]."), input: None };
        parsed.push(execute_call(&mut cp)?);
        cp.finish()?;
    }
    check_task_room(app)?;
    let count = parsed.len();
    let mut batch = BatchCall { calls: parsed, atomic, stop_on_error, consent: None };
    let asking = asks.consent(app, batch.calls.iter().map(|c| c.action.as_str())).and_then(
        |(consent, asking)| {
            batch.consent = Some(consent);
            asking
        },
    );
    match app.ask(Call::Batch(batch), asking).await? {
        // The batch waits for the user: one task for all of it.
        CallResult::Deferred { task, revision } => Ok(deferred(&task, revision)),
        CallResult::Batch { results, revision } => {
            // Each attempted call once, in order: anything else is the host's bug.
            let in_order =
                results.iter().map(|e| e.index as usize).enumerate().all(|(i, index)| {
                    index < count && (i == 0 || index > results[i - 1].index as usize)
                });
            if !in_order {
                return Err(invalid_reply());
            }
            let mut out = Vec::with_capacity(results.len());
            for entry in results {
                let mut m = one("index", Value::from(entry.index));
                match entry.outcome {
                    BatchOutcome::Output(v) => {
                        m.insert("output", v);
                    }
                    BatchOutcome::Task(task) => {
                        m.insert("task", task_brief(&task));
                    }
                    BatchOutcome::Error(e) => {
                        m.insert("error", e.to_wire());
                    }
                }
                out.push(Value::Object(m));
            }
            let mut m = one("results", Value::Array(out));
            m.insert("revision", revision);
            Ok(m)
        }
        _ => Err(invalid_reply()),
    }
}

/// Refuses work that could start a task the records cannot hold: a clear, not-executed error
/// instead of a task nobody can query.
fn check_task_room(app: &App) -> Result<(), MethodError> {
    let message = match app.task_room() {
        Ok(()) => return Ok(()),
        Err(Refused::Quota) => format!(
            "This app already has {} unfinished tasks; retry when some have finished.",
            app.config().max_tasks_per_app
        ),
        Err(_) => {
            "The daemon's task table is full of unfinished tasks; retry when some have finished."
                .to_string()
        }
    };
    Err(ActionError::new(Reason::Busy, message).into())
}

fn lookup_task(app: &App, id: &str) -> Result<TaskSnapshot, MethodError> {
    app.task(id).ok_or_else(|| {
        ActionError::new(
            Reason::Task { task: id.to_string() },
            "No task with that id is known for this app.",
        )
        .into()
    })
}

/// `{task, revision}`: a call that goes on as a task.
fn deferred(task: &TaskSnapshot, revision: u64) -> Map {
    let mut m = one("task", task_brief(task));
    m.insert("revision", revision);
    m
}

/// `{id, state, awaiting?}` of a task: a call that waits for the user says so at once.
fn task_brief(task: &TaskSnapshot) -> Value {
    let mut m = Map::with_capacity(3);
    m.insert("id", task.id.as_str());
    m.insert("state", task_state_name(task.state));
    if task.awaiting == Some(Awaiting::Confirmation) {
        m.insert("awaiting", "confirmation");
    }
    Value::Object(m)
}

fn task_state_name(state: jfgui_proto::channel::TaskState) -> &'static str {
    use jfgui_proto::channel::TaskState::*;
    match state {
        Running => "running",
        Cancelling => "cancelling",
        Cancelled => "cancelled",
        Completed => "completed",
        Failed => "failed",
    }
}

fn one(key: &str, value: impl Into<Value>) -> Map {
    let mut m = Map::with_capacity(2);
    m.insert(key, value);
    m
}

fn empty_object() -> Value {
    Value::Object(Map::new())
}

fn to_value<T: serde::Serialize>(value: &T) -> Result<Value, MethodError> {
    jfgui_proto::to_value(value).map_err(|e| internal(&format!("encoding a result failed: {e}")))
}

/// A reply of another kind than the call asked for: the app's bug.
fn invalid_reply() -> MethodError {
    ActionError::new(Reason::InvalidReply, "The app answered with a reply of the wrong kind.")
        .into()
}

fn internal(message: &str) -> MethodError {
    MethodError::Internal { message: format!("Internal error: {message}.") }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_are_tied_to_query_and_app() {
        let fp = cursor_fingerprint(7, Some("doc"));
        let cursor = format!("50.{fp:016x}");
        assert_eq!(parse_cursor(&cursor, fp), Some(50));
        assert_eq!(parse_cursor(&cursor, cursor_fingerprint(7, None)), None);
        assert_eq!(parse_cursor(&cursor, cursor_fingerprint(8, Some("doc"))), None);
        assert_eq!(parse_cursor("x", fp), None);
        assert_eq!(parse_cursor(&format!("0.{fp:016x}"), fp), None);
        assert_eq!(parse_cursor(&format!("+5.{fp:016x}"), fp), None);
    }
}
