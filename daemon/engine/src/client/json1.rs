//! JSON control protocol 1 on the wire (docs/PROTOCOL.md "JSON control protocol 1"): the JSON-RPC
//! 2.0 envelope, the protocol errors, `protocolVersion`, and turning [`methods::call`] results into
//! response lines.
//!
//! Protocol errors: -32700 parse error (id `null`), -32600 invalid request (also a top-level
//! array, which is not a batch, and an over-long line), -32601 unknown method, -32602 invalid
//! params, -32603 internal. Every error carries `data.reason`. Application errors use the
//! class code (1000–1004) with `data: {class, reason, ...reason data}`. Ids are echoed with
//! their exact token. Notifications are never answered and never forwarded.

use std::time::Instant;

use jfgui_proto::{
    ActionError, Encode, JsonError, JsonErrorKind, Limits, Map, Payload, RawJson, Value,
};

use super::Target;
use super::method::{Args, Method, MethodError};
use super::methods;
use super::peer_warnings::PeerWarnings;

/// The only protocol revision.
pub const PROTOCOL_VERSION: &str = "1";

/// JSON-RPC 2.0 error codes.
pub mod code {
    /// The line is not strict JSON.
    pub const PARSE_ERROR: i64 = -32700;
    /// Not a valid request object.
    pub const INVALID_REQUEST: i64 = -32600;
    /// No such method.
    pub const METHOD_NOT_FOUND: i64 = -32601;
    /// Bad params.
    pub const INVALID_PARAMS: i64 = -32602;
    /// Our bug.
    pub const INTERNAL_ERROR: i64 = -32603;
}

/// A request envelope that passed the JSON-RPC checks.
#[derive(Debug)]
pub struct Envelope {
    /// The id exactly as sent; `None` for a notification.
    pub id: Option<Value>,
    /// The method name.
    pub method: String,
    /// The params (an absent `params` is `{}`).
    pub params: Map,
    /// `params.input` as the fragment it was read as (its place in `params` holds `null`).
    pub input: Option<RawJson>,
}

/// Where a call's `input` is in a request line: the daemon only passes it on to the app, so it
/// is kept as the validated fragment it was read as and spliced into the request frame.
const INPUT_PATH: &[&str] = &["params", "input"];

/// Parses one line into a request envelope, or the error response line to send back (`None` when
/// nothing may be answered). With `ignore_responses` (MCP and undecided connections, whose JSON-RPC
/// peer may send responses), a line without `method` that carries `result` or `error` is a response
/// from the client: it is logged and gets no answer.
///
/// `params.input` comes back as a fragment ([`Envelope::input`], checked exactly like the rest).
pub fn parse_envelope(
    line: &[u8],
    limits: &Limits,
    ignore_responses: bool,
) -> Result<Envelope, Option<Vec<u8>>> {
    let (value, input) = match jfgui_proto::parse_with_raw(line, limits, INPUT_PATH) {
        Ok(v) => v,
        Err(e) => {
            let mut data = reason_data(e.kind().as_str());
            data.insert("offset", e.offset() as u64);
            return Err(Some(error_line(
                &Value::Null,
                code::PARSE_ERROR,
                &format!("Parse error: {e}."),
                data,
                limits,
            )));
        }
    };
    let mut object = match value {
        Value::Object(m) => m,
        Value::Array(_) => {
            return Err(Some(error_line(
                &Value::Null,
                code::INVALID_REQUEST,
                "A JSON array is not a batch here: send one request per line and use actions/batch.",
                reason_data("batch_array"),
                limits,
            )));
        }
        other => {
            let message = format!("A request must be a JSON object, not {}.", other.type_name());
            return Err(Some(invalid_request(&Value::Null, &message, "not_an_object", limits)));
        }
    };
    let id = object.remove("id");
    let reply_id = match &id {
        Some(v @ (Value::String(_) | Value::Number(_) | Value::Null)) => v.clone(),
        Some(other) => {
            let message =
                format!("The id must be a string, a number or null, not {}.", other.type_name());
            return Err(Some(invalid_request(&Value::Null, &message, "invalid_id", limits)));
        }
        None => Value::Null,
    };
    if object.remove("jsonrpc").as_ref().and_then(Value::as_str) != Some("2.0") {
        return Err(Some(invalid_request(
            &reply_id,
            "The request must carry \"jsonrpc\": \"2.0\".",
            "jsonrpc_version",
            limits,
        )));
    }
    let method = match object.remove("method") {
        Some(Value::String(m)) => m,
        None if ignore_responses
            && (object.contains_key("result") || object.contains_key("error")) =>
        {
            tracing::info!(id = ?reply_id, "ignored a response from the client (no request of ours is outstanding)");
            return Err(None);
        }
        _ => {
            return Err(Some(invalid_request(
                &reply_id,
                "The request must carry a string \"method\".",
                "invalid_method",
                limits,
            )));
        }
    };
    let params = match object.remove("params") {
        None => Map::new(),
        Some(Value::Object(p)) => p,
        Some(Value::Array(_)) => {
            return Err(Some(error_line(
                &reply_id,
                code::INVALID_PARAMS,
                "Params must be an object of named parameters, not an array.",
                reason_data("params_not_object"),
                limits,
            )));
        }
        Some(other) => {
            let message = format!("Params must be an object, not {}.", other.type_name());
            return Err(Some(invalid_request(&reply_id, &message, "invalid_params_type", limits)));
        }
    };
    if let Some(member) = object.keys().next() {
        let message = format!("Unknown request member {member:?}.");
        let mut data = reason_data("unknown_member");
        data.insert("member", member);
        return Err(Some(error_line(&reply_id, code::INVALID_REQUEST, &message, data, limits)));
    }
    Ok(Envelope { id, method, params, input })
}

/// What to do with one line.
#[derive(Debug)]
pub enum Prepared {
    /// Answer with this line at once.
    Respond(Vec<u8>),
    /// Nothing to answer (a notification).
    Silent,
    /// Run this call; its response comes from [`execute`].
    Call(Json1Call),
}

/// A validated JSON-1 call.
#[derive(Debug)]
pub struct Json1Call {
    /// The id exactly as sent.
    pub id: Value,
    /// The method.
    pub method: Method,
    /// The params without `protocolVersion`.
    pub args: Args,
}

/// Checks one line of a JSON-1 connection (envelope, method, `protocolVersion`); the warning
/// for a dropped write goes through the connection's rate limit.
pub fn prepare(line: &[u8], limits: &Limits, slug: &str, warnings: &mut PeerWarnings) -> Prepared {
    match parse_envelope(line, limits, false) {
        Ok(envelope) => prepare_envelope(envelope, limits, slug, warnings),
        Err(Some(response)) => Prepared::Respond(response),
        Err(None) => Prepared::Silent,
    }
}

/// [`prepare`] of a line already parsed (an undecided connection's line that turned out to be
/// JSON-1 is not parsed twice).
pub fn prepare_envelope(
    envelope: Envelope,
    limits: &Limits,
    slug: &str,
    warnings: &mut PeerWarnings,
) -> Prepared {
    let Some(id) = envelope.id else {
        // A notification's outcome could never be reported, so nothing is run.
        if matches!(envelope.method.as_str(), "actions/execute" | "actions/batch") {
            if let Some(suppressed) = warnings.admit() {
                tracing::warn!(endpoint = slug, method = %envelope.method, suppressed, "write notification (no id) dropped, not executed");
            }
        } else {
            tracing::debug!(endpoint = slug, method = %envelope.method, "notification ignored");
        }
        return Prepared::Silent;
    };
    let Some(method) = Method::from_name(&envelope.method) else {
        let message = format!("Unknown method {:?}.", envelope.method);
        let mut data = reason_data("unknown_method");
        data.insert("method", envelope.method.as_str());
        return Prepared::Respond(error_line(&id, code::METHOD_NOT_FOUND, &message, data, limits));
    };
    let Envelope { mut params, input, .. } = envelope;
    if let Some(version) = params.remove("protocolVersion")
        && version.as_str() != Some(PROTOCOL_VERSION)
    {
        let mut data = reason_data("unsupported_protocol_version");
        data.insert("supported", Value::Array(vec![Value::from(PROTOCOL_VERSION)]));
        return Prepared::Respond(error_line(
            &id,
            code::INVALID_PARAMS,
            "Unsupported protocolVersion; this endpoint speaks \"1\".",
            data,
            limits,
        ));
    }
    Prepared::Call(Json1Call { id, method, args: Args { params, input } })
}

/// Runs a call against the app and returns the response line, logged with endpoint, method,
/// action, duration and outcome: every failure at info, successes at debug (so a busy endpoint
/// does not flood the default log).
///
/// The per-call span is a debug span: at the default level it costs nothing, where an info
/// span had the log formatter render its fields on every call (about 5% of the daemon's CPU
/// per call, docs/PERFORMANCE.md). The failure event therefore carries the fields itself.
pub async fn execute(target: &Target, call: Json1Call) -> Vec<u8> {
    let limits = target.app().config().json;
    let action = call.args.params.get("action").and_then(Value::as_str).unwrap_or("").to_string();
    let endpoint = target.app().registration().slug();
    let method = call.method.name();
    let span =
        tracing::debug_span!("call", endpoint = %endpoint, method = %method, action = %action);
    let started = Instant::now();
    let result = tracing::Instrument::instrument(
        methods::call(target, call.method, call.args),
        span.clone(),
    )
    .await;
    let (line, outcome) = match result {
        Ok(result) => success_line(&call.id, result, &limits, &action),
        Err(error) => {
            let outcome = error.outcome_name();
            (method_error_line(&call.id, error, &limits), outcome)
        }
    };
    let duration_us = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
    span.in_scope(|| {
        if outcome == "ok" {
            tracing::debug!(duration_us, %outcome, "call done");
        } else {
            tracing::info!(endpoint = %endpoint, method = %method, action = %action, duration_us, %outcome, "call failed");
        }
    });
    line
}

/// The response to an over-long line (-32600, `data.reason: "too_large"`, id `null`).
pub fn too_long_response(limits: &Limits) -> Vec<u8> {
    let mut data = reason_data("too_large");
    data.insert("limit", limits.max_bytes as u64);
    error_line(
        &Value::Null,
        code::INVALID_REQUEST,
        &format!("The request line exceeds the limit of {} bytes.", limits.max_bytes),
        data,
        limits,
    )
}

/// A success line: the result with `protocolVersion` first. A result over the message bounds
/// becomes `internal/response_too_large` (never a truncated or multi-line reply).
fn success_line(
    id: &Value,
    result: Payload,
    limits: &Limits,
    action: &str,
) -> (Vec<u8>, &'static str) {
    match write_success(id, &result, limits) {
        Ok(line) => (line, "ok"),
        Err(e) => {
            tracing::warn!(action, "result over the message bounds: {e}");
            let error = ActionError::new(
                jfgui_proto::Reason::ResponseTooLarge {
                    action: (!action.is_empty()).then(|| action.to_string()),
                },
                "The result exceeds the message size bounds; page or chunk the request.",
            );
            (method_error_line(id, MethodError::Action(error), limits), "response_too_large")
        }
    }
}

/// `{"jsonrpc":"2.0","id":ID,"result":{"protocolVersion":"1",...}}` with `result`'s members
/// after `protocolVersion`, written around the values instead of built as a tree and encoded
/// (four maps, their names and the envelope's strings on every call). Every bound is checked on
/// the whole line, so it passes or fails exactly as encoding the tree would.
fn write_success(id: &Value, result: &Payload, limits: &Limits) -> Result<Vec<u8>, JsonError> {
    debug_assert!(!result.has("protocolVersion"), "the envelope writes it");
    let bound = |kind: JsonErrorKind, line: &Vec<u8>| Err(JsonError::new(kind, line.len()));
    // Room for the fragments spliced into the result (an action's output) up front, so a
    // large answer is written without growing the buffer step by step.
    let mut line = Vec::with_capacity(128 + spliced_len(result));
    // The envelope's own bounds, met by every success line: two objects deep (`result` in the
    // line's), the wider of them, the longest name (`protocolVersion`), and five values (the
    // two objects, `"2.0"`, the id, `"1"`; checked once the id is counted).
    let result_members = match result {
        Payload::Value(Value::Object(map)) => map.len(),
        Payload::Object(members) => members.len(),
        other => unreachable!("a method's result is an object, not {}", other.type_name()),
    };
    let members = result_members.max(2) + 1;
    if limits.max_depth < 2 {
        return bound(JsonErrorKind::TooDeep, &line);
    }
    if limits.max_members < members {
        return bound(JsonErrorKind::TooManyMembers, &line);
    }
    if limits.max_string_bytes < "protocolVersion".len() {
        return bound(JsonErrorKind::StringTooLong, &line);
    }
    line.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    let mut values = jfgui_proto::encode_placed(id, limits, 1, 2, &mut line)? + 2;
    if values > limits.max_values {
        return bound(JsonErrorKind::TooManyValues, &line);
    }
    line.extend_from_slice(br#","result":{"protocolVersion":"#);
    jfgui_proto::write_string(PROTOCOL_VERSION, &mut line);
    match result {
        Payload::Value(Value::Object(map)) => {
            for (name, value) in map.iter() {
                values = write_member(name, value, limits, values, &mut line)?;
            }
        }
        Payload::Object(members) => {
            for (name, value) in members {
                values = write_member(name, value, limits, values, &mut line)?;
            }
        }
        _ => {}
    }
    line.extend_from_slice(b"}}");
    if line.len() > limits.max_bytes {
        return Err(JsonError::new(JsonErrorKind::TooLarge, limits.max_bytes));
    }
    Ok(line)
}

/// `,"name":value` of the result object, two containers deep, after `values` values; the
/// document's value count after it.
fn write_member(
    name: &str,
    value: &(impl Encode + ?Sized),
    limits: &Limits,
    values: usize,
    line: &mut Vec<u8>,
) -> Result<usize, JsonError> {
    line.push(b',');
    write_name(name, limits, line)?;
    jfgui_proto::encode_placed(value, limits, 2, values, line)
}

/// Bytes of the fragments in `payload`.
fn spliced_len(payload: &Payload) -> usize {
    match payload {
        Payload::Value(_) => 0,
        Payload::Raw(raw) => raw.as_bytes().len(),
        Payload::Array(items) => items.iter().map(spliced_len).sum(),
        Payload::Object(members) => members.iter().map(|(_, m)| spliced_len(m)).sum(),
    }
}

/// A member's name and its `:`, the name checked as the encoder checks every string.
fn write_name(name: &str, limits: &Limits, line: &mut Vec<u8>) -> Result<(), JsonError> {
    if name.len() > limits.max_string_bytes {
        return Err(JsonError::new(JsonErrorKind::StringTooLong, line.len()));
    }
    jfgui_proto::write_string(name, line);
    line.push(b':');
    Ok(())
}

/// The error line for a method failure.
pub fn method_error_line(id: &Value, error: MethodError, limits: &Limits) -> Vec<u8> {
    match error {
        MethodError::InvalidParams { message, data } => {
            error_line(id, code::INVALID_PARAMS, &message, data, limits)
        }
        MethodError::Internal { message } => {
            error_line(id, code::INTERNAL_ERROR, &message, reason_data("internal"), limits)
        }
        MethodError::Action(e) => {
            let (code, message, data) = action_error_parts(&e);
            error_line(id, code, &message, data, limits)
        }
    }
}

/// `(code, message, data)` of an application error in JSON-1: `data` is
/// `{class, reason, ...reason data}`.
pub fn action_error_parts(error: &ActionError) -> (i64, String, Map) {
    let class = error.class();
    let mut data = Map::new();
    data.insert("class", class.as_str());
    data.insert("reason", error.reason.as_str());
    for (k, v) in error.reason.data() {
        data.insert(k, v);
    }
    (class.code(), error.message.clone(), data)
}

fn invalid_request(id: &Value, message: &str, reason: &str, limits: &Limits) -> Vec<u8> {
    error_line(id, code::INVALID_REQUEST, message, reason_data(reason), limits)
}

/// `{"reason": reason}`.
pub fn reason_data(reason: &str) -> Map {
    let mut data = Map::with_capacity(1);
    data.insert("reason", reason);
    data
}

/// Encodes an error response. Error data can hold app-supplied text; if it breaks the bounds
/// the error is reported without it.
pub fn error_line(id: &Value, code: i64, message: &str, data: Map, limits: &Limits) -> Vec<u8> {
    let build = |message: &str, data: Map| {
        let mut error = Map::with_capacity(3);
        error.insert("code", code);
        error.insert("message", message);
        error.insert("data", data);
        let mut response = Map::with_capacity(3);
        response.insert("jsonrpc", "2.0");
        response.insert("id", id.clone());
        response.insert("error", error);
        Value::Object(response)
    };
    match jfgui_proto::encode(&build(message, data), limits) {
        Ok(line) => line,
        Err(e) => {
            tracing::warn!("error response over the message bounds: {e}");
            let fallback = build(
                "The error details exceed the message bounds.",
                reason_data("response_too_large"),
            );
            // The fallback is a few dozen bytes plus the id, which arrived within the bounds;
            // only absurdly small configured bounds need the wider ones below.
            jfgui_proto::encode(&fallback, limits)
                .or_else(|_| jfgui_proto::encode(&fallback, &Limits { max_bytes: usize::MAX, ..Limits::DEFAULT }))
                .unwrap_or_else(|_| br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"Internal error.","data":{"reason":"internal"}}}"#.to_vec())
        }
    }
}

#[cfg(test)]
mod tests {
    use jfgui_proto::RawJson;

    use super::*;

    /// The line as encoding the envelope's tree makes it: what [`write_success`] must give.
    fn tree_line(id: &Value, result: &Payload, limits: &Limits) -> Option<Vec<u8>> {
        let mut full = vec![("protocolVersion".to_owned(), Payload::from(PROTOCOL_VERSION))];
        match result {
            Payload::Value(Value::Object(m)) => {
                full.extend(m.iter().map(|(k, v)| (k.to_owned(), Payload::from(v.clone()))));
            }
            Payload::Object(members) => full.extend(members.iter().cloned()),
            other => panic!("not an object: {other:?}"),
        }
        let response = Payload::object([
            ("jsonrpc", "2.0".into()),
            ("id", id.clone().into()),
            ("result", Payload::Object(full)),
        ]);
        jfgui_proto::encode(&response, limits).ok()
    }

    fn map(members: &[(&str, Value)]) -> Map {
        let mut m = Map::with_capacity(members.len());
        for (name, value) in members {
            m.insert(*name, value.clone());
        }
        m
    }

    #[test]
    fn success_lines_are_the_tree_encoding_at_every_bound() {
        let fragment = br#"{"text":"h\u00e9 \"x\"","items":[1,[2,{"a":null}]],"n":-1.5e3}"#;
        let raw = Payload::Raw(RawJson::parse(fragment, &Limits::DEFAULT).unwrap());
        let tree = jfgui_proto::parse(fragment, &Limits::DEFAULT).unwrap();
        let results = [
            Map::new().into(),
            Payload::object([("output", raw), ("revision", 7u64.into())]),
            map(&[("output", tree), ("revision", Value::from(1u64))]).into(),
            map(&[
                ("task", Value::Object(map(&[("id", Value::from("t\n1"))]))),
                ("n", 2u64.into()),
            ])
            .into(),
            map(&[("a name longer than protocolVersion", Value::from("x".repeat(40)))]).into(),
        ];
        let ids = [Value::Null, Value::from(42u64), Value::from("req-\u{2028}-1")];
        let mut compared = 0;
        for result in &results {
            for id in &ids {
                let len =
                    tree_line(id, result, &Limits::DEFAULT).expect("within the defaults").len();
                let mut limits = Vec::new();
                for n in 0..8 {
                    limits.push(Limits { max_depth: n, ..Limits::DEFAULT });
                    limits.push(Limits { max_members: n, ..Limits::DEFAULT });
                }
                for n in 0..24 {
                    limits.push(Limits { max_values: n, ..Limits::DEFAULT });
                }
                for n in 0..64 {
                    limits.push(Limits { max_string_bytes: n, ..Limits::DEFAULT });
                }
                for n in (0..16).chain(len - 3..len + 3) {
                    limits.push(Limits { max_bytes: n, ..Limits::DEFAULT });
                }
                for limits in &limits {
                    assert_eq!(
                        write_success(id, result, limits).ok(),
                        tree_line(id, result, limits),
                        "{id:?} {result:?} {limits:?}"
                    );
                    compared += 1;
                }
            }
        }
        assert!(compared > 1000);
    }
}
