//! The JSON-RPC pieces the MCP layer shares: the view of one incoming message, the reply type,
//! protocol errors with their codes, and a compact object builder.

use std::fmt;

use jfgui_proto::{Limits, Map, Payload, RawJson, Value};

/// One incoming JSON-RPC message, already parsed and checked by the connection loop (an object
/// with `jsonrpc: "2.0"`, never an array).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Incoming<'a> {
    /// The id; `None` for a notification.
    pub id: Option<&'a Value>,
    /// The method; `None` for a response sent by the client (MCP clients answer pings).
    pub method: Option<&'a str>,
    /// The params, as sent (any JSON type; the handlers check them).
    pub params: Option<&'a Value>,
}

impl<'a> Incoming<'a> {
    /// Reads the members of a JSON-RPC message object.
    #[cfg(test)]
    pub fn from_message(message: &'a Map) -> Incoming<'a> {
        Incoming {
            id: message.get("id"),
            method: message.get("method").and_then(Value::as_str),
            params: message.get("params"),
        }
    }

    /// `params` as an object, if it is one.
    pub fn params_object(&self) -> Option<&'a Map> {
        self.params.and_then(Value::as_object)
    }
}

/// What a request gets: a result object (which may hold fragments: a tool's structured content)
/// or a protocol error.
pub(crate) type Reply = Result<Payload, RpcError>;

/// A JSON-RPC error object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RpcError {
    /// The code (-32700 … -32603, the MCP codes -32002/-32022).
    pub code: i64,
    /// One sentence.
    pub message: String,
    /// Machine-readable details.
    pub data: Option<Value>,
}

/// -32600: the message is not a valid request.
pub(crate) const INVALID_REQUEST: i64 = -32600;
/// -32601: no such method (for the selected protocol).
pub(crate) const METHOD_NOT_FOUND: i64 = -32601;
/// -32602: bad params, including a missing MCP envelope and unknown tools.
pub(crate) const INVALID_PARAMS: i64 = -32602;
/// -32603: our bug or the app's.
pub(crate) const INTERNAL_ERROR: i64 = -32603;
/// -32002: resource not found (2025-11-25 only; retired in 2026-07-28).
pub(crate) const RESOURCE_NOT_FOUND: i64 = -32002;
/// -32022: the modern envelope names a revision we do not serve.
pub(crate) const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;

impl RpcError {
    /// An error without data.
    pub fn new(code: i64, message: impl Into<String>) -> RpcError {
        RpcError { code, message: message.into(), data: None }
    }

    /// An error with a `data` object.
    pub fn with_data(code: i64, message: impl Into<String>, data: Map) -> RpcError {
        RpcError { code, message: message.into(), data: Some(Value::Object(data)) }
    }

    /// -32602 with `data.reason`.
    pub fn invalid_params(reason: &str, message: impl Into<String>) -> RpcError {
        RpcError::with_data(INVALID_PARAMS, message, object([("reason", reason.into())]))
    }

    /// The wire object `{code, message, data?}`.
    pub fn to_value(&self) -> Value {
        let mut m = object([("code", self.code.into()), ("message", self.message.as_str().into())]);
        if let Some(data) = &self.data {
            m.insert("data", data.clone());
        }
        Value::Object(m)
    }
}

impl fmt::Display for RpcError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.message, self.code)
    }
}

/// Encodes `{"jsonrpc":"2.0","id":…,"result":…}` (without its newline); `Err` gives the result
/// back when the line would exceed the message bounds.
pub(crate) fn result_line(
    id: &Value,
    result: Payload,
    limits: &Limits,
) -> Result<Vec<u8>, Payload> {
    let response =
        Payload::object([("jsonrpc", "2.0".into()), ("id", id.clone().into()), ("result", result)]);
    match jfgui_proto::encode(&response, limits) {
        Ok(line) => Ok(line),
        Err(e) => {
            tracing::warn!("MCP result over the message bounds: {e}");
            match response {
                Payload::Object(mut members) => {
                    Err(members.pop().map(|(_, r)| r).unwrap_or_default())
                }
                _ => Err(Payload::default()),
            }
        }
    }
}

/// Encodes an error response (without its newline); `id: None` (an id that cannot be read or
/// that MCP does not allow) omits the member, as both official MCP schemas type `id` as a
/// string or an integer, never `null`. Error data can hold app-supplied text; if it
/// breaks the bounds the error is sent without it.
pub(crate) fn error_line(id: Option<&Value>, error: &RpcError, limits: &Limits) -> Vec<u8> {
    match jfgui_proto::encode(&response(id, "error", error.to_value()), limits) {
        Ok(line) => line,
        Err(e) => {
            tracing::warn!("MCP error over the message bounds: {e}");
            let small = RpcError::new(error.code, "The error details exceed the message bounds.");
            // Small by construction; the id came in a line within the same bounds.
            jfgui_proto::encode(&response(id, "error", small.to_value()), limits)
                .unwrap_or_default()
        }
    }
}

fn response(id: Option<&Value>, member: &str, body: Value) -> Value {
    let mut m = Map::with_capacity(3);
    m.insert("jsonrpc", "2.0");
    if let Some(id) = id {
        m.insert("id", id.clone());
    }
    m.insert(member, body);
    Value::Object(m)
}

/// The error for a request whose id MCP does not allow (null, a fraction, an object, ...): the
/// id is not echoed (MCP ids are strings or integers).
pub(crate) fn invalid_id(id: &Value) -> RpcError {
    RpcError::with_data(
        INVALID_REQUEST,
        format!(
            "Invalid request: an MCP request id must be a string or an integer, not {}.",
            match id {
                Value::Number(_) => "a number with a fraction",
                other => other.type_name(),
            }
        ),
        object([("reason", "invalid_id".into())]),
    )
}

/// An error line built by the JSON-1 envelope checks (which answer an unreadable id with
/// `"id": null`), reshaped for MCP: an `id` that is not an MCP request id is dropped. `None`
/// when `line` needs no change (it is not an error response, or its id is fine).
pub fn mcp_error_line(line: &[u8], limits: &Limits) -> Option<Vec<u8>> {
    let mut message = jfgui_proto::parse(line, limits).ok()?;
    if !drop_non_mcp_error_id(&mut message) {
        return None;
    }
    jfgui_proto::encode(&message, limits).ok()
}

/// [`mcp_error_line`]'s rule on a message already parsed: drops the `id` of an error response
/// when it is not an MCP request id; whether it did.
pub fn drop_non_mcp_error_id(message: &mut Value) -> bool {
    let Value::Object(response) = message else { return false };
    let disallowed = response.get("id").is_some_and(|id| !is_mcp_request_id(id));
    if !disallowed || !response.contains_key("error") {
        return false;
    }
    response.remove("id");
    true
}

/// MCP's rule for request ids: a string or an integer (both official schemas' `RequestId`;
/// `1.0` counts as an integer, as in JSON Schema, `1.5` does not).
pub fn is_mcp_request_id(id: &Value) -> bool {
    match id {
        Value::String(_) => true,
        Value::Number(n) => {
            let plain = !n.as_str().contains(['.', 'e', 'E']);
            plain || n.to_i64().is_some() || n.to_u64().is_some()
        }
        _ => false,
    }
}

/// Builds an object from literal members (keys must be distinct; a repeated key keeps the last).
pub(crate) fn object<const N: usize>(members: [(&str, Value); N]) -> Map {
    let mut m = Map::with_capacity(N);
    for (k, v) in members {
        m.insert(k, v);
    }
    m
}

/// The text twin of `structuredContent`: the value's compact encoding as a JSON string,
/// pre-encoded. A pre-encoded part of the value (an `actions/describe` object) is copied in the
/// escaped form it keeps after its first use instead of being encoded and escaped again on
/// every call. Only the nesting can fail here (reported as an internal error by the caller);
/// the other bounds are checked on the response line, where an over-long text makes the tool
/// result `response_too_large` like any result too large for one message.
pub(crate) fn to_text(value: &Payload) -> Result<Payload, RpcError> {
    RawJson::text_of(value, &Limits::DEFAULT).map(Payload::Raw).map_err(|e| {
        RpcError::new(INTERNAL_ERROR, format!("The result cannot be serialized: {e}."))
    })
}

/// Identity of a request id for the in-flight table: the string `"1"` and the number `1` are
/// different ids (JSON-RPC echoes the type), and numbers compare by their exact token.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum IdKey {
    /// A string id.
    String(String),
    /// A numeric id, by token.
    Number(String),
}

impl IdKey {
    /// The key of an MCP request id; `None` for ids MCP does not allow
    /// ([`is_mcp_request_id`]).
    pub fn of(id: &Value) -> Option<IdKey> {
        match id {
            _ if !is_mcp_request_id(id) => None,
            Value::String(s) => Some(IdKey::String(s.clone())),
            Value::Number(n) => Some(IdKey::Number(n.as_str().to_owned())),
            _ => None,
        }
    }
}

impl fmt::Display for IdKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IdKey::String(s) => write!(f, "{s:?}"),
            IdKey::Number(n) => f.write_str(n),
        }
    }
}
