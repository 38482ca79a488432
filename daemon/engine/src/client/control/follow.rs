//! `audit/follow` on the control socket: the answer `{"following": true}`, then one
//! notification `{"jsonrpc":"2.0","method":"audit/record","params":{"record":R}}` per line the
//! audit log writes from then on (records and `{"dropped":N}` notices), until the client
//! closes the connection or the daemon stops. The connection does nothing else from then on:
//! further requests on it are read and ignored.
//!
//! A follower that reads slower than records come falls behind by at most the writer's
//! backlog; what it missed is reported to it as a `{"dropped":N}` record, as the file does.

use jfgui_proto::{Limits, Map, Value};

use crate::audit::{record::dropped_line, time::now_ms};
use crate::backlog::RecvError;
use crate::client::json1::{self, code};
use crate::client::running::Call;
use crate::output::Output;
use crate::{Engine, until};

/// The method name.
pub const METHOD: &str = "audit/follow";

/// What to do with a control line that may be `audit/follow`.
pub enum Follow {
    /// Not an `audit/follow` request: answer it as usual.
    No,
    /// A refused `audit/follow` (bad params, no audit log): send this error line.
    Refused(Vec<u8>),
    /// Follow: the id to answer.
    Yes(Value),
}

/// Checks whether `line` is an `audit/follow` request (cheaply: most control lines are not).
pub fn check(engine: &Engine, line: &[u8]) -> Follow {
    if !line.windows(METHOD.len()).any(|w| w == METHOD.as_bytes()) {
        return Follow::No;
    }
    let limits = engine.config().json;
    let Ok(envelope) = json1::parse_envelope(line, &limits, false) else { return Follow::No };
    let Some(id) = envelope.id.filter(|_| envelope.method == METHOD) else { return Follow::No };
    if let Some(param) = envelope.params.keys().next() {
        let mut data = json1::reason_data("unknown_param");
        data.insert("param", param);
        let message = format!("Unknown parameter {param:?}: audit/follow takes none.");
        return Follow::Refused(json1::error_line(
            &id,
            code::INVALID_PARAMS,
            &message,
            data,
            &limits,
        ));
    }
    if engine.config().audit.is_none() {
        let message = "This engine keeps no audit log.";
        let data = json1::reason_data("audit_off");
        return Follow::Refused(json1::error_line(&id, -32000, message, data, &limits));
    }
    Follow::Yes(id)
}

/// Answers `id` and gives the stream of records to run beside the connection's reading: it
/// ends when the daemon stops or the audit log is gone, and with the connection (whose lines
/// are read and ignored meanwhile).
pub async fn start(engine: &Engine, id: Value, output: &Output) -> Option<Call> {
    let audit = engine.config().audit.as_ref()?;
    let limits = engine.config().json;
    // Subscribe before answering, so a record written right after the answer is not missed.
    let mut records = audit.follow();
    let mut shutdown = engine.0.shutdown.subscribe();
    let mut result = Map::with_capacity(1);
    result.insert("following", true);
    output.send(result_line(&id, result, &limits)).await;
    let output = output.clone();
    Some(Box::pin(async move {
        loop {
            let line = tokio::select! {
                r = records.recv() => match r {
                    Ok(line) => line.to_vec(),
                    Err(RecvError::Lagged(n)) => dropped_line(now_ms(), n),
                    Err(RecvError::Closed) => break,
                },
                _ = until(&mut shutdown, |s| *s) => break,
            };
            output.send(notification(&line)).await;
        }
    }))
}

fn result_line(id: &Value, result: Map, limits: &Limits) -> Vec<u8> {
    let mut response = Map::with_capacity(3);
    response.insert("jsonrpc", "2.0");
    response.insert("id", id.clone());
    response.insert("result", result);
    jfgui_proto::encode(&Value::Object(response), limits).unwrap_or_default()
}

/// The notification around a record line (strict JSON already: spliced, not re-encoded).
fn notification(record: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(record.len() + 64);
    out.extend_from_slice(br#"{"jsonrpc":"2.0","method":"audit/record","params":{"record":"#);
    out.extend_from_slice(record);
    out.extend_from_slice(b"}}");
    out
}
