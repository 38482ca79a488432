//! Which requests the gateway has forwarded and not yet seen answered, and the errors it writes
//! itself: for a line too long to forward, and for every unanswered request when the daemon
//! side goes away (so a client never waits forever for an answer that cannot come).

use std::collections::HashSet;

use clap::ValueEnum;
use jfgui_proto::{ErrorClass, Limits, Map, Value};

/// The protocol spoken on stdin/stdout. The daemon selects the protocol from the traffic itself;
/// this only decides the shape of the errors the gateway writes on its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Protocol {
    /// MCP (2026-07-28 or 2025-11-25): local errors are JSON-RPC `-32603` errors.
    Mcp,
    /// JSON control protocol 1: local errors are application errors `1001 outcome_unknown`.
    Json,
}

/// At most this many ids are remembered; a client that keeps more requests in flight than the
/// daemon allows (64 per connection) gets no local error for the excess, but the gateway's
/// memory stays bounded.
const MAX_TRACKED: usize = 4096;

/// The requests in flight, keyed by the exact encoding of their id (ids are echoed with their exact
/// token), plus a count of lines the daemon will answer without a usable id (unparsable lines,
/// invalid ids: `null` in JSON-1, no `id` member in MCP), so the gateway knows when everything sent
/// was answered.
#[derive(Debug)]
pub struct InFlight {
    protocol: Protocol,
    ids: HashSet<Vec<u8>>,
    null_answers: usize,
}

impl InFlight {
    /// Tracking for a gateway speaking `protocol` on its stdio.
    pub fn new(protocol: Protocol) -> InFlight {
        InFlight { protocol, ids: HashSet::new(), null_answers: 0 }
    }

    /// Notes a line sent from the client to the daemon.
    pub fn sent(&mut self, line: &[u8]) {
        let Ok(Value::Object(message)) = jfgui_proto::parse(line, &Limits::DEFAULT) else {
            self.null_answers += 1;
            return;
        };
        match (message.get("id"), message.get("method").and_then(Value::as_str)) {
            (None, Some("notifications/cancelled")) => {
                // The daemon suppresses the answer to a cancelled request.
                let id = message.get("params").and_then(|p| p.get("requestId"));
                if let Some(key) = id.and_then(|id| self.key(id)) {
                    self.ids.remove(&key);
                }
            }
            (None, Some(_)) => {} // A notification: never answered.
            (Some(id), _) => match self.key(id) {
                Some(key) if self.ids.len() < MAX_TRACKED => {
                    self.ids.insert(key);
                }
                Some(_) => {}
                None => self.null_answers += 1,
            },
            (None, None) => self.null_answers += 1,
        }
    }

    /// Notes a line received from the daemon and returns it as it goes to stdout; `None` when
    /// it is not strict JSON (it is then not forwarded: stdout carries protocol lines only).
    ///
    /// In MCP mode an error whose id MCP does not allow loses its `id` member: a connection the
    /// daemon has not yet seen select MCP answers an unreadable id JSON-1 style, with
    /// `"id": null`, which both MCP schemas reject. Every other line passes through
    /// byte for byte.
    ///
    /// The line is parsed once, here; the rewrite re-encodes the parsed message.
    pub fn received(&mut self, line: Vec<u8>) -> Option<Vec<u8>> {
        let mut message = jfgui_proto::parse(&line, &Limits::DEFAULT).ok()?;
        let answered = message.get("result").is_some() || message.get("error").is_some();
        if answered {
            match message.get("id").and_then(|id| self.key(id)) {
                Some(key) => {
                    self.ids.remove(&key);
                }
                None => self.null_answers = self.null_answers.saturating_sub(1),
            }
        }
        if self.protocol == Protocol::Mcp && jfgui_engine::drop_non_mcp_error_id(&mut message) {
            return jfgui_proto::encode(&message, &Limits::DEFAULT).ok();
        }
        Some(line)
    }

    /// The tracking key of a request id: its exact encoding, for the ids the protocol allows
    /// (JSON-1: strings and numbers; MCP: strings and integers). `None` for the rest, which
    /// are answered without a usable id.
    fn key(&self, id: &Value) -> Option<Vec<u8>> {
        let allowed = match self.protocol {
            Protocol::Json => matches!(id, Value::String(_) | Value::Number(_)),
            Protocol::Mcp => jfgui_engine::is_mcp_request_id(id),
        };
        if allowed { jfgui_proto::encode(id, &Limits::DEFAULT).ok() } else { None }
    }

    /// True when every line sent has been answered (as far as the bounded tracking knows).
    pub fn idle(&self) -> bool {
        self.ids.is_empty() && self.null_answers == 0
    }

    /// How many requests are waiting for an answer.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// One local error line per unanswered request, in the shape the protocol expects;
    /// empties the set.
    pub fn fail_all(&mut self, why: Unanswered, message: &str) -> Vec<Vec<u8>> {
        self.null_answers = 0;
        let mut ids: Vec<Vec<u8>> = self.ids.drain().collect();
        ids.sort();
        ids.into_iter()
            .filter_map(|raw| {
                let id = jfgui_proto::parse(&raw, &Limits::DEFAULT).ok()?;
                Some(lost_error(self.protocol, why, id, message))
            })
            .collect()
    }
}

/// An error response; `id: None` omits the member (MCP, for an id that cannot be known).
fn response(id: Option<Value>, error: Map) -> Vec<u8> {
    let mut m = Map::new();
    m.insert("jsonrpc", "2.0");
    if let Some(id) = id {
        m.insert("id", id);
    }
    m.insert("error", error);
    let mut line = jfgui_proto::encode(&Value::Object(m), &Limits::DEFAULT).unwrap_or_else(|_| {
        br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"internal error"}}"#
            .to_vec()
    });
    line.push(b'\n');
    line
}

/// Why a request is answered by the gateway instead of the daemon.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unanswered {
    /// The endpoint connection closed first.
    ConnectionLost,
    /// Stdin ended and the answer did not come within the drain time.
    Timeout,
}

/// The answer to a request left unanswered. JSON-1 gets the application error
/// `1001 outcome_unknown` with one of its reasons (`daemon_shutdown` for a lost daemon,
/// `timeout`); MCP gets a JSON-RPC error, which every MCP request may receive.
fn lost_error(protocol: Protocol, why: Unanswered, id: Value, message: &str) -> Vec<u8> {
    let mut data = Map::new();
    let mut error = Map::new();
    let code = match protocol {
        Protocol::Json => ErrorClass::OutcomeUnknown.code(),
        Protocol::Mcp => -32603,
    };
    error.insert("code", code);
    data.insert("class", ErrorClass::OutcomeUnknown.as_str());
    let reason = match (protocol, why) {
        (Protocol::Json, Unanswered::ConnectionLost) => "daemon_shutdown",
        (Protocol::Mcp, Unanswered::ConnectionLost) => "connection_lost",
        (_, Unanswered::Timeout) => "timeout",
    };
    data.insert("reason", reason);
    error.insert("message", message);
    error.insert("data", data);
    response(Some(id), error)
}

/// The answer to a line longer than the message bound (the same as the daemon's: the id cannot be
/// known, so it is `null` in JSON-1 and omitted in MCP).
pub fn too_large_error(protocol: Protocol) -> Vec<u8> {
    let mut data = Map::new();
    data.insert("reason", "too_large");
    data.insert("maxBytes", Limits::DEFAULT.max_bytes as u64);
    let mut error = Map::new();
    error.insert("code", -32600i64);
    error.insert("message", "the line exceeds the message size limit and was skipped");
    error.insert("data", data);
    let id = match protocol {
        Protocol::Json => Some(Value::Null),
        Protocol::Mcp => None,
    };
    response(id, error)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(line: &[u8]) -> Value {
        jfgui_proto::parse(line.strip_suffix(b"\n").unwrap_or(line), &Limits::DEFAULT).unwrap()
    }

    #[test]
    fn requests_are_tracked_until_answered_and_notifications_never() {
        let mut f = InFlight::new(Protocol::Json);
        f.sent(br#"{"jsonrpc":"2.0","id":1,"method":"agent/info"}"#);
        f.sent(br#"{"jsonrpc":"2.0","id":"a","method":"tools/list"}"#);
        f.sent(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        assert_eq!(f.len(), 2);
        assert!(f.received(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#.to_vec()).is_some());
        assert_eq!(f.len(), 1);
        assert!(f.received(b"not json".to_vec()).is_none());
        f.sent(
            br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"a"}}"#,
        );
        assert_eq!(f.len(), 0);
        assert!(f.idle());
    }

    #[test]
    fn lines_answered_with_a_null_id_are_counted() {
        let mut f = InFlight::new(Protocol::Json);
        f.sent(b"garbage");
        f.sent(br#"[1,2]"#);
        f.sent(br#"{"jsonrpc":"2.0","id":{},"method":"agent/info"}"#);
        assert_eq!(f.len(), 0);
        assert!(!f.idle());
        for _ in 0..3 {
            f.received(
                br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse"}}"#
                    .to_vec(),
            );
        }
        assert!(f.idle());
    }

    #[test]
    fn ids_keep_their_exact_token() {
        let mut f = InFlight::new(Protocol::Json);
        f.sent(br#"{"jsonrpc":"2.0","id":1.0,"method":"agent/info"}"#);
        f.received(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#.to_vec());
        assert_eq!(f.len(), 1, "1 and 1.0 are different ids");
        let lines = f.fail_all(Unanswered::ConnectionLost, "lost");
        assert_eq!(lines.len(), 1);
        assert!(lines[0].starts_with(br#"{"jsonrpc":"2.0","id":1.0,"#));
    }

    #[test]
    fn local_errors_follow_the_protocol() {
        let mut f = InFlight::new(Protocol::Json);
        f.sent(br#"{"jsonrpc":"2.0","id":7,"method":"actions/execute"}"#);
        let json = parse(&f.fail_all(Unanswered::ConnectionLost, "lost")[0]);
        let e = json.get("error").unwrap();
        assert_eq!(e.get("code").and_then(Value::as_i64), Some(1001));
        assert_eq!(
            e.get("data").and_then(|d| d.get("class")).and_then(Value::as_str),
            Some("outcome_unknown")
        );
        let mut f = InFlight::new(Protocol::Mcp);
        f.sent(br#"{"jsonrpc":"2.0","id":7,"method":"tools/call"}"#);
        let mcp = parse(&f.fail_all(Unanswered::Timeout, "lost")[0]);
        assert_eq!(
            mcp.get("error").and_then(|e| e.get("code")).and_then(Value::as_i64),
            Some(-32603)
        );
        assert_eq!(mcp.get("id").and_then(Value::as_u64), Some(7));
    }

    #[test]
    fn too_large_answer_is_an_invalid_request_without_a_usable_id() {
        let v = parse(&too_large_error(Protocol::Json));
        assert!(v.get("id").unwrap().is_null());
        let e = v.get("error").unwrap();
        assert_eq!(e.get("code").and_then(Value::as_i64), Some(-32600));
        assert_eq!(
            e.get("data").and_then(|d| d.get("reason")).and_then(Value::as_str),
            Some("too_large")
        );
        let v = parse(&too_large_error(Protocol::Mcp));
        assert!(v.get("id").is_none(), "MCP omits an id it cannot know");
    }

    /// MCP ids are strings or integers: a request with any other id is answered without one
    /// (never echoed), so it is counted, not tracked; a daemon answer with `"id": null` reaches
    /// stdout without the member; other lines pass unchanged.
    #[test]
    fn mcp_ids_and_null_id_answers() {
        let mut f = InFlight::new(Protocol::Mcp);
        f.sent(br#"{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}"#);
        f.sent(br#"{"jsonrpc":"2.0","id":null,"method":"tools/list"}"#);
        f.sent(br#"{"jsonrpc":"2.0","id":"a","method":"tools/list"}"#);
        assert_eq!(f.len(), 1);
        let null = br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse"}}"#;
        let out = parse(&f.received(null.to_vec()).unwrap());
        assert!(out.get("id").is_none(), "{out:?}");
        assert_eq!(
            out.get("error").and_then(|e| e.get("code")).and_then(Value::as_i64),
            Some(-32700)
        );
        let omitted = br#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"bad id"}}"#;
        assert_eq!(f.received(omitted.to_vec()).unwrap(), omitted.to_vec());
        let ok = br#"{"jsonrpc":"2.0","id":"a","result":{}}"#;
        assert_eq!(f.received(ok.to_vec()).unwrap(), ok.to_vec());
        assert!(f.idle());
        assert!(f.fail_all(Unanswered::Timeout, "lost").is_empty());
    }

    #[test]
    fn tracking_is_bounded() {
        let mut f = InFlight::new(Protocol::Json);
        for i in 0..MAX_TRACKED + 10 {
            f.sent(format!(r#"{{"jsonrpc":"2.0","id":{i},"method":"agent/info"}}"#).as_bytes());
        }
        assert_eq!(f.len(), MAX_TRACKED);
    }
}
