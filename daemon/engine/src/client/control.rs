//! The control socket `agentd.sock`: line-delimited JSON-RPC 2.0 with the same codec and
//! bounds as the endpoints; `daemon/status`, `apps/list` (paged) and the grants methods
//! (`control/grants.rs`), plus the methods of
//! the OS layer's [`ControlMethods`] (the browser bridge's `bridge/open` and `bridge/close`),
//! `apps/activate`, which starts an installed app (`control/activate.rs`), and `audit/follow`,
//! which turns the connection into a stream of audit records (`control/follow.rs`).
//!
//! Requests are answered one at a time in order, yielding to other connections between two:
//! every method but those two is local and immediate (`apps/list` is paged); an activation
//! waits for its app beside the other lines, and a follow stream runs until the end.

mod activate;
mod follow;
mod grants;

use jfgui_proto::{Limits, Map, Value};
use tokio::io::{AsyncRead, AsyncWrite};

use super::backpressure::CallPermit;
use super::connection::{Connection, Ending, Handler};
use super::json1::{self, code};
use super::running::Call;
use crate::output::Output;
use crate::{Engine, PeerInfo, until};

/// Control methods beyond the engine's own, with state that belongs to one control connection:
/// it is dropped when that connection ends (EOF, error, shutdown), so whatever the connection
/// opened through it (the browser bridge's TCP listener) lives exactly as long as the
/// connection.
pub trait ControlMethods: Send {
    /// The method names, for the unknown-method message.
    fn names(&self) -> &'static [&'static str];

    /// Answers `method` with `params`, or `None` when the method is not one of [`names`].
    ///
    /// [`names`]: ControlMethods::names
    fn call(&mut self, method: &str, params: Map) -> Option<Result<Map, ControlError>>;
}

/// A JSON-RPC error answer of a [`ControlMethods`] call.
#[derive(Debug, Clone, PartialEq)]
pub struct ControlError {
    /// The JSON-RPC error code (-32602 for bad params; implementation errors -32000..-32099).
    pub code: i64,
    /// One sentence for people.
    pub message: String,
    /// `data`, with at least `reason`.
    pub data: Map,
}

/// Serves one control connection from `peer` until EOF or shutdown, through the one client
/// connection loop (`client/connection.rs`); the methods of `extra`, when given, are answered
/// too, and `extra` is dropped when the connection ends.
pub async fn serve<S>(
    stream: S,
    engine: &Engine,
    peer: PeerInfo,
    extra: Option<Box<dyn ControlMethods>>,
) where
    S: AsyncRead + AsyncWrite + Send + Unpin + 'static,
{
    let handler = ControlConnection { engine: engine.clone(), extra, following: false, peer };
    let mut shutdown = engine.0.shutdown.subscribe();
    let connection = Connection {
        config: engine.config(),
        partial: engine.partial(),
        peer,
        fate: None,
        // An `audit/follow` stream ends with the connection.
        ending: Ending::Drop,
    };
    let stop = async move {
        until(&mut shutdown, |s| *s).await;
        "shutdown"
    };
    connection.serve(stream, handler, stop).await;
}

/// One control connection's state: the OS layer's extra methods, and whether it turned into an
/// `audit/follow` stream (then every further line is read and ignored).
struct ControlConnection {
    engine: Engine,
    extra: Option<Box<dyn ControlMethods>>,
    following: bool,
    /// Who connected: an activation takes the display from its environment.
    peer: PeerInfo,
}

impl Handler for ControlConnection {
    /// Every method is local and immediate (`apps/list` is paged), so each line is answered
    /// here, in order; only `audit/follow` returns a call: the stream of records.
    async fn line(&mut self, line: &[u8], _permit: CallPermit, output: &Output) -> Option<Call> {
        if self.following {
            return None;
        }
        let engine = &self.engine;
        if let Some(call) = activate::check(engine, line, self.peer, output) {
            return call;
        }
        let response = match follow::check(engine, line) {
            follow::Follow::No => answer(engine, self.extra.as_deref_mut(), line),
            follow::Follow::Refused(response) => Some(response),
            follow::Follow::Yes(id) => {
                self.following = true;
                return follow::start(engine, id, output).await;
            }
        };
        if let Some(response) = response {
            output.send(response).await;
        }
        None
    }

    fn too_long(&self, limits: &Limits) -> Vec<u8> {
        json1::too_long_response(limits)
    }
}

fn answer(
    engine: &Engine,
    extra: Option<&mut (dyn ControlMethods + 'static)>,
    line: &[u8],
) -> Option<Vec<u8>> {
    let limits = engine.config().json;
    let envelope = match json1::parse_envelope(line, &limits, false) {
        Ok(e) => e,
        Err(response) => return response,
    };
    let id = envelope.id?;
    let result = match envelope.method.as_str() {
        "daemon/status" => status(engine),
        "apps/list" => {
            return Some(match apps_list(engine, envelope.params) {
                Ok(result) => result_line(&id, result, &limits),
                Err(e) => json1::error_line(&id, e.code, &e.message, e.data, &limits),
            });
        }
        other if grants::METHODS.contains(&other) => {
            let grants = &engine.config().consent.grants;
            return Some(match grants::call(grants, other, envelope.params) {
                Ok(result) => result_line(&id, result, &limits),
                Err(e) => json1::error_line(&id, e.code, &e.message, e.data, &limits),
            });
        }
        other => {
            let names = extra.as_ref().map_or(&[][..], |e| e.names());
            let answer = match extra {
                Some(extra) if names.contains(&other) => extra.call(other, envelope.params),
                _ => None,
            };
            let result = match answer {
                Some(Ok(result)) => result,
                Some(Err(e)) => {
                    return Some(json1::error_line(&id, e.code, &e.message, e.data, &limits));
                }
                None => {
                    let mut data = json1::reason_data("unknown_method");
                    data.insert("method", other);
                    let mut all =
                        vec!["daemon/status", "apps/list", activate::METHOD, follow::METHOD];
                    all.extend_from_slice(&grants::METHODS);
                    all.extend_from_slice(names);
                    let last = all.pop().unwrap_or_default();
                    let message = format!(
                        "Unknown method {other:?}; the control socket has {} and {last}.",
                        all.join(", ")
                    );
                    return Some(json1::error_line(
                        &id,
                        code::METHOD_NOT_FOUND,
                        &message,
                        data,
                        &limits,
                    ));
                }
            };
            return Some(result_line(&id, result, &limits));
        }
    };
    if let Some(param) = envelope.params.keys().next() {
        let mut data = json1::reason_data("unknown_param");
        data.insert("param", param);
        let message = format!("Unknown parameter {param:?}.");
        return Some(json1::error_line(&id, code::INVALID_PARAMS, &message, data, &limits));
    }
    Some(result_line(&id, result, &limits))
}

pub(super) fn result_line(id: &Value, result: Map, limits: &jfgui_proto::Limits) -> Vec<u8> {
    let mut response = Map::with_capacity(3);
    response.insert("jsonrpc", "2.0");
    response.insert("id", id.clone());
    response.insert("result", result);
    match jfgui_proto::encode(&Value::Object(response), limits) {
        Ok(bytes) => bytes,
        Err(e) => {
            let message = format!("The answer exceeds the message bounds: {e}.");
            let data = json1::reason_data("response_too_large");
            json1::error_line(id, code::INTERNAL_ERROR, &message, data, limits)
        }
    }
}

fn status(engine: &Engine) -> Map {
    let config = engine.config();
    let mut m = Map::with_capacity(12);
    m.insert("version", env!("CARGO_PKG_VERSION"));
    m.insert("pid", std::process::id());
    m.insert("uptimeMs", u64::try_from(engine.uptime().as_millis()).unwrap_or(u64::MAX));
    m.insert(
        "runtimeDir",
        match &config.runtime_dir {
            Some(dir) => Value::from(dir.to_string_lossy().into_owned()),
            None => Value::Null,
        },
    );
    m.insert("apps", engine.apps().len() as u64);
    m.insert("clients", engine.client_count() as u64);
    // What the registered apps' actions take, against the budget a registration must fit in.
    let registrations = engine.registration_bytes();
    m.insert("registrationBytes", registrations.used as u64);
    m.insert("registrationBudget", registrations.budget as u64);
    // Records the audit log lost (full queue, write errors); null when there is no log.
    let audit = config.audit.as_ref();
    m.insert("auditDropped", audit.map_or(Value::Null, |a| Value::from(a.dropped())));
    m.insert("activityDropped", audit.map_or(Value::Null, |a| Value::from(a.activity_dropped())));
    m.insert(
        "auditDir",
        match audit.and_then(|a| a.dir()) {
            Some(dir) => Value::from(dir.to_string_lossy().into_owned()),
            None => Value::Null,
        },
    );
    // Log lines lost to a stalled stderr, as the OS layer's log writer counted them.
    m.insert("logDropped", config.log_dropped.get());
    m
}

/// Largest `apps/list` page, and its default (as `actions/list`).
const MAX_APPS_LIMIT: u64 = 100;
const DEFAULT_APPS_LIMIT: u64 = 50;

/// `apps/list {cursor?, limit?}`: a page of the registered apps in registration order, with
/// `nextCursor` when more follow, so a listing stays within the response bound whatever the
/// apps registered; the last page ends with the installed apps that are not running
/// (`running: false`).
fn apps_list(engine: &Engine, mut params: Map) -> Result<Map, ControlError> {
    let invalid = |reason: &str, param: &str, message: String| {
        let mut data = json1::reason_data(reason);
        data.insert("param", param);
        ControlError { code: code::INVALID_PARAMS, message, data }
    };
    let from = match params.remove("cursor") {
        None => 0,
        Some(Value::String(c)) => c
            .strip_prefix('a')
            .filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|n| n.parse::<u64>().ok())
            .ok_or_else(|| {
                let message = "The cursor is not one apps/list gave.".to_string();
                invalid("invalid_cursor", "cursor", message)
            })?,
        Some(other) => {
            let message =
                format!("Parameter \"cursor\" must be a string, not {}.", other.type_name());
            return Err(invalid("invalid_type", "cursor", message));
        }
    };
    let limit = match params.remove("limit") {
        None => DEFAULT_APPS_LIMIT,
        Some(v) => match v.as_u64() {
            Some(n) if (1..=MAX_APPS_LIMIT).contains(&n) => n,
            _ => {
                let message =
                    format!("Parameter \"limit\" must be an integer from 1 to {MAX_APPS_LIMIT}.");
                return Err(invalid("out_of_range", "limit", message));
            }
        },
    };
    if let Some(param) = params.keys().next() {
        let mut data = json1::reason_data("unknown_param");
        data.insert("param", param);
        let message = format!("Unknown parameter {param:?}.");
        return Err(ControlError { code: code::INVALID_PARAMS, message, data });
    }
    let config = engine.config();
    let (page, next) = engine.apps_page(from, limit as usize);
    let installed = match next {
        Some(_) => Vec::new(),
        None => crate::activation::not_running(engine),
    };
    let installed = installed.into_iter().map(|i| {
        let mut m = Map::with_capacity(7);
        m.insert("slug", i.slug);
        m.insert("displayName", i.display_name);
        m.insert("pid", Value::Null);
        m.insert("enabled", false);
        m.insert("running", false);
        m.insert("actionCount", Value::Null);
        m.insert("endpoint", Value::Null);
        Value::Object(m)
    });
    let apps: Vec<Value> = page
        .into_iter()
        .map(|a| {
            let endpoint = match config.endpoint_name(&a.slug) {
                Some(name) if a.enabled => Value::from(name),
                _ => Value::Null,
            };
            let mut m = Map::with_capacity(7);
            m.insert("slug", a.slug);
            m.insert("displayName", a.display_name);
            if a.display_name_truncated {
                m.insert("displayNameTruncated", true);
            }
            m.insert("pid", a.pid);
            m.insert("enabled", a.enabled);
            m.insert("actionCount", a.action_count as u64);
            m.insert("endpoint", endpoint);
            Value::Object(m)
        })
        .chain(installed)
        .collect();
    let mut m = Map::with_capacity(2);
    m.insert("apps", Value::Array(apps));
    if let Some(next) = next {
        m.insert("nextCursor", format!("a{next}"));
    }
    Ok(m)
}
