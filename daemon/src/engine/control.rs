//! The control socket `agentd.sock` (SPEC S8): line-delimited JSON-RPC 2.0 with the same codec
//! and bounds as the endpoints; `daemon/status` and `apps/list`, plus the methods of the OS
//! layer's [`ControlMethods`] (the browser bridge's `bridge/open` and `bridge/close`), and
//! `audit/follow`, which turns the connection into a stream of audit records
//! (`control/follow.rs`).
//!
//! Requests are answered one at a time in order: every method is local and immediate, so
//! there is nothing to run concurrently, and the writer's backpressure is the socket itself.

mod follow;

use jfgui_proto::{Map, Value};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};

use super::lines::{Line, LineReader};
use super::session::json1::{self, code};
use super::{Engine, PeerInfo, until};

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

/// Serves one control connection until EOF or shutdown.
pub async fn serve<S>(
    stream: S,
    engine: &Engine,
    peer: PeerInfo,
    mut extra: Option<Box<dyn ControlMethods>>,
) where
    S: AsyncRead + AsyncWrite + Send + Unpin + 'static,
{
    let config = engine.config().clone();
    let limits = config.json;
    let (rd, mut wr) = tokio::io::split(stream);
    let mut lines = LineReader::new(rd, limits.max_bytes, config.partial_idle);
    let mut shutdown = engine.0.shutdown.subscribe();
    loop {
        let line = tokio::select! {
            l = lines.next_line() => l,
            _ = until(&mut shutdown, |s| *s) => break,
        };
        let response = match line {
            Ok(Some(Line::Complete(bytes))) => match follow::check(engine, &bytes) {
                follow::Follow::No => answer(engine, extra.as_deref_mut(), &bytes),
                follow::Follow::Refused(response) => Some(response),
                follow::Follow::Yes(id) => {
                    follow::run(engine, id, lines, &mut wr).await;
                    break;
                }
            },
            Ok(Some(Line::TooLong)) => Some(json1::too_long_response(&limits)),
            Ok(None) => break,
            Err(e) => {
                tracing::info!(?peer, "control connection ended: {e}");
                break;
            }
        };
        if let Some(mut response) = response {
            response.push(b'\n');
            if wr.write_all(&response).await.is_err() {
                break;
            }
        }
    }
    // Ends what the connection opened (the bridge's listener) now, not when the task is freed.
    drop(extra);
    let _ = wr.shutdown().await;
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
        "apps/list" => apps_list(engine),
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
                    let mut all = vec!["daemon/status", "apps/list", follow::METHOD];
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

fn result_line(id: &Value, result: Map, limits: &jfgui_proto::Limits) -> Vec<u8> {
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
    let mut m = Map::with_capacity(7);
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
    // Records the audit log lost (full queue, write errors); null when there is no log.
    let audit = config.audit.as_ref();
    m.insert("auditDropped", audit.map_or(Value::Null, |a| Value::from(a.dropped())));
    m.insert(
        "auditDir",
        match audit.and_then(|a| a.dir()) {
            Some(dir) => Value::from(dir.to_string_lossy().into_owned()),
            None => Value::Null,
        },
    );
    // Process-wide: log lines lost to a stalled stderr (logging.rs; 0 when nothing logs).
    m.insert("logDropped", crate::logging::dropped_lines());
    m
}

fn apps_list(engine: &Engine) -> Map {
    let config = engine.config();
    let apps: Vec<Value> = engine
        .apps()
        .into_iter()
        .map(|a| {
            let endpoint = match config.endpoint_name(&a.slug) {
                Some(name) if a.enabled => Value::from(name),
                _ => Value::Null,
            };
            let mut m = Map::with_capacity(6);
            m.insert("slug", a.slug);
            m.insert("displayName", a.display_name);
            m.insert("pid", a.pid);
            m.insert("enabled", a.enabled);
            m.insert("actionCount", a.action_count as u64);
            m.insert("endpoint", endpoint);
            Value::Object(m)
        })
        .collect();
    let mut m = Map::with_capacity(1);
    m.insert("apps", Value::Array(apps));
    m
}
