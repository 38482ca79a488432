//! One audit record: who called which app with what, and how it ended; and its line.
//!
//! A [`Record`] is built on the call path from what the call already holds (cheap clones, no
//! hashing); [`Record::to_line`] runs on the writer thread and does the expensive part: the
//! input's encoding, size and SHA-256. Lines are strict JSON from the protocol's encoder, so
//! a record never holds a raw line break whatever the client sent.

use std::sync::Arc;

use jfgui_proto::channel::Activity;
use jfgui_proto::{Limits, Map, Value};
use sha2::{Digest, Sha256};

use super::time::format_ms;

/// With `--audit-inputs`, at most this many bytes of the input's JSON are kept.
pub const INPUT_KEPT: usize = 4096;

/// The reason of `unknown` when the client left before its answer was delivered.
pub const CLIENT_DISCONNECTED: &str = "client_disconnected";

/// Longest text of an `activity` notice, in bytes.
pub const ACTIVITY_TEXT: usize = 256;

/// `text` cut to [`ACTIVITY_TEXT`] bytes on a character boundary, `…` marking a cut.
fn cut(mut text: String) -> String {
    if text.len() > ACTIVITY_TEXT {
        let mut end = ACTIVITY_TEXT - '…'.len_utf8();
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push('…');
    }
    text
}

/// How the client reached the app.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Transport {
    /// An app's endpoint (`apps/SLUG.sock` or its pipe), JSON-1 or MCP.
    #[default]
    Endpoint,
    /// The all-apps MCP server (one session, every enabled app).
    AllAppsMcp,
    /// `jfgui-agent headless`: the CLI runs the app and serves it on its stdio.
    CliHeadless,
    /// The browser bridge (HTTP `/rpc` on 127.0.0.1).
    Bridge,
}

impl Transport {
    /// The name in records: `endpoint`, `all-apps-mcp`, `cli-headless`, `bridge`.
    pub fn as_str(self) -> &'static str {
        match self {
            Transport::Endpoint => "endpoint",
            Transport::AllAppsMcp => "all-apps-mcp",
            Transport::CliHeadless => "cli-headless",
            Transport::Bridge => "bridge",
        }
    }
}

/// The client process, as its connection tells (fixed for the connection).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Client {
    /// Peer uid, when the transport tells.
    pub uid: Option<u32>,
    /// Peer pid, when the transport tells.
    pub pid: Option<u32>,
    /// `/proc/PID/exe`, where readable (Linux).
    pub exe: Option<String>,
    /// How it reached the app.
    pub transport: Transport,
}

impl Client {
    /// The client with `pid`'s executable looked up now (while the peer is surely alive: at
    /// connect time).
    pub fn new(uid: Option<u32>, pid: Option<u32>, transport: Transport) -> Client {
        Client { uid, pid, exe: pid.and_then(exe_of), transport }
    }
}

#[cfg(target_os = "linux")]
fn exe_of(pid: u32) -> Option<String> {
    std::fs::read_link(format!("/proc/{pid}/exe")).ok().map(|p| p.to_string_lossy().into_owned())
}

#[cfg(not(target_os = "linux"))]
fn exe_of(_pid: u32) -> Option<String> {
    None
}

/// MCP `clientInfo`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientInfo {
    /// `clientInfo.name`.
    pub name: String,
    /// `clientInfo.version`.
    pub version: String,
}

/// The protocol of one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Protocol {
    /// JSON control protocol 1.
    Json1,
    /// MCP in `revision`, with the client's `clientInfo` when the session has one.
    Mcp {
        /// `2026-07-28` or `2025-11-25`.
        revision: &'static str,
        /// From `initialize` (2025-11-25) or the request's `_meta` (2026-07-28).
        client_info: Option<Arc<ClientInfo>>,
    },
}

/// The app a call went to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppRef {
    /// Endpoint slug.
    pub slug: String,
    /// Display name as registered.
    pub display_name: String,
    /// The app's pid as it announced it.
    pub pid: u32,
}

/// What was asked of the app.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// One action (`actions/execute`, `state/inspect` as `state/inspect`, ...).
    One(String),
    /// The actions of a batch, in order.
    Calls {
        /// The names.
        names: Vec<String>,
        /// All or nothing.
        atomic: bool,
    },
    /// `tasks/cancel` of this task.
    CancelTask(String),
}

/// How a call ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Done.
    Ok,
    /// Nothing happened: invalid params, stale revision, schema, unavailable, not found.
    Refused {
        /// The error class (`not_executed`, `not_found`, or `invalid_params`).
        class: &'static str,
        /// The machine-readable reason.
        reason: String,
    },
    /// The app (or we) reported a failure.
    Failed {
        /// `failed` or `internal`.
        class: &'static str,
        /// The machine-readable reason.
        reason: String,
    },
    /// It may or may not have happened (`outcome_unknown`).
    Unknown {
        /// The machine-readable reason.
        reason: String,
    },
}

impl Outcome {
    /// `ok`, `refused`, `failed` or `unknown`.
    pub fn word(&self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::Refused { .. } => "refused",
            Outcome::Failed { .. } => "failed",
            Outcome::Unknown { .. } => "unknown",
        }
    }

    fn to_value(&self) -> Value {
        let (class, reason) = match self {
            Outcome::Ok => return Value::from("ok"),
            Outcome::Refused { class, reason } | Outcome::Failed { class, reason } => {
                (*class, reason)
            }
            Outcome::Unknown { reason } => ("outcome_unknown", reason),
        };
        let mut detail = Map::with_capacity(2);
        detail.insert("class", class);
        detail.insert("reason", reason.as_str());
        let mut m = Map::with_capacity(1);
        m.insert(self.word(), detail);
        Value::Object(m)
    }
}

/// One recorded call.
#[derive(Debug, Clone)]
pub struct Record {
    /// When it started, UTC ms.
    pub time_ms: u64,
    /// Who.
    pub client: Arc<Client>,
    /// In which protocol.
    pub protocol: Protocol,
    /// Which app.
    pub app: Arc<AppRef>,
    /// The JSON-1 method (`actions/execute`, ...).
    pub method: &'static str,
    /// What.
    pub action: Action,
    /// The input as received (hashed, and kept only with `--audit-inputs`, on the writer).
    pub input: Option<Value>,
    /// `expectedRevision` (of the first call, for a batch), when given.
    pub expected_revision: Option<u64>,
    /// The app's revision after the call, when the answer tells.
    pub revision: Option<u64>,
    /// How it ended, for the client.
    pub outcome: Outcome,
    /// What the app reported, when the client never got it (`outcome` is then
    /// `unknown{client_disconnected}`).
    pub app_outcome: Option<Outcome>,
    /// How long it took.
    pub duration_us: u64,
}

/// The client in an `activity` notice, in a few words: the MCP `clientInfo` name and
/// version, else the executable's file name and the pid (else the transport's name); then
/// how it came (`via endpoint`, ...). Cut to [`ACTIVITY_TEXT`] bytes.
pub fn activity_client(client: &Client, info: Option<&ClientInfo>) -> String {
    let transport = client.transport.as_str();
    let name = || match &client.exe {
        Some(exe) => exe.rsplit(['/', '\\']).next().unwrap_or(exe),
        None => transport,
    };
    cut(match (info, client.pid) {
        (Some(info), _) => format!("{} {} via {transport}", info.name, info.version),
        (None, Some(pid)) => format!("{}[{pid}] via {transport}", name()),
        (None, None) => format!("{} via {transport}", name()),
    })
}

impl Record {
    /// The same call as recorded when the client's connection was gone before its answer
    /// was delivered: the client never learned the outcome (`unknown{client_disconnected}`),
    /// and what the app reported is kept beside it.
    pub fn undelivered(mut self) -> Record {
        let app = std::mem::replace(
            &mut self.outcome,
            Outcome::Unknown { reason: CLIENT_DISCONNECTED.to_owned() },
        );
        self.app_outcome = Some(app);
        self
    }

    /// The action as one short text: the name, `batch(a, b)` or `tasks/cancel ID`.
    pub fn action_text(&self) -> String {
        match &self.action {
            Action::One(name) => name.clone(),
            Action::Calls { names, .. } => format!("batch({})", names.join(", ")),
            Action::CancelTask(id) => format!("tasks/cancel {id}"),
        }
    }

    /// The `activity` notice for the app that served the call: the client as
    /// [`activity_client`] names it (`connection_client`: its text for the call's connection
    /// without `clientInfo`, which the caller keeps rather than making it for every call), the
    /// action as [`Record::action_text`] gives it, and the outcome. Texts are cut to
    /// [`ACTIVITY_TEXT`] bytes: the notice is for a status line, the record has it all.
    pub fn activity(&self, connection_client: &str) -> Activity {
        let client = match &self.protocol {
            Protocol::Mcp { client_info: Some(info), .. } => {
                activity_client(&self.client, Some(info))
            }
            _ => connection_client.to_owned(),
        };
        let reason = match &self.outcome {
            Outcome::Ok => None,
            Outcome::Refused { reason, .. }
            | Outcome::Failed { reason, .. }
            | Outcome::Unknown { reason } => Some(cut(reason.clone())),
        };
        Activity {
            client,
            action: cut(self.action_text()),
            outcome: self.outcome.word().to_owned(),
            reason,
        }
    }

    /// The record's JSON line (without the newline). `keep_input`: `--audit-inputs`.
    pub fn to_line(&self, keep_input: bool) -> Vec<u8> {
        let mut m = Map::with_capacity(12);
        m.insert("time", format_ms(self.time_ms));
        m.insert("client", self.client_value());
        let mut app = Map::with_capacity(3);
        app.insert("slug", self.app.slug.as_str());
        app.insert("displayName", self.app.display_name.as_str());
        app.insert("pid", self.app.pid);
        m.insert("app", app);
        m.insert("method", self.method);
        match &self.action {
            Action::One(name) => {
                m.insert("action", name.as_str());
            }
            Action::Calls { names, atomic } => {
                let names: Vec<Value> = names.iter().map(|n| Value::from(n.as_str())).collect();
                m.insert("calls", names);
                m.insert("atomic", *atomic);
            }
            Action::CancelTask(id) => {
                m.insert("task", id.as_str());
            }
        }
        if let Some(input) = &self.input {
            m.insert("input", input_value(input, keep_input));
        }
        if let Some(expected) = self.expected_revision {
            m.insert("expectedRevision", expected);
        }
        m.insert("revision", self.revision.map_or(Value::Null, Value::from));
        m.insert("outcome", self.outcome.to_value());
        if let Some(app_outcome) = &self.app_outcome {
            m.insert("appOutcome", app_outcome.to_value());
        }
        m.insert("durationUs", self.duration_us);
        encode(Value::Object(m))
    }

    fn client_value(&self) -> Map {
        let c = &self.client;
        let mut m = Map::with_capacity(7);
        m.insert("uid", c.uid.map_or(Value::Null, Value::from));
        m.insert("pid", c.pid.map_or(Value::Null, Value::from));
        if let Some(exe) = &c.exe {
            m.insert("exe", exe.as_str());
        }
        m.insert("transport", c.transport.as_str());
        match &self.protocol {
            Protocol::Json1 => {
                m.insert("protocol", "json-1");
                m.insert("protocolRevision", "1");
            }
            Protocol::Mcp { revision, client_info } => {
                m.insert("protocol", "mcp");
                m.insert("protocolRevision", *revision);
                if let Some(info) = client_info {
                    let mut i = Map::with_capacity(2);
                    i.insert("name", info.name.as_str());
                    i.insert("version", info.version.as_str());
                    m.insert("clientInfo", i);
                }
            }
        }
        m
    }
}

/// The line `{"time":…,"dropped":N}`: N records were lost before this point.
pub fn dropped_line(time_ms: u64, dropped: u64) -> Vec<u8> {
    let mut m = Map::with_capacity(2);
    m.insert("time", format_ms(time_ms));
    m.insert("dropped", dropped);
    encode(Value::Object(m))
}

/// `{size, sha256}` of the input's compact JSON, plus (`keep`) the JSON itself cut at
/// [`INPUT_KEPT`] bytes (on a character boundary) and whether it was cut.
fn input_value(input: &Value, keep: bool) -> Map {
    let bytes = jfgui_proto::encode(input, &unbounded()).unwrap_or_default();
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let hex: String = Sha256::digest(&bytes)
        .iter()
        .flat_map(|b| [HEX[usize::from(b >> 4)], HEX[usize::from(b & 0xF)]])
        .map(char::from)
        .collect();
    let mut m = Map::with_capacity(4);
    m.insert("size", bytes.len() as u64);
    m.insert("sha256", hex);
    if keep {
        let text = String::from_utf8_lossy(&bytes);
        let mut cut = text.len().min(INPUT_KEPT);
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        m.insert("json", &text[..cut]);
        m.insert("truncated", cut < text.len());
    }
    m
}

/// Records hold what a call held, which already passed the client bounds; the writer never
/// refuses one for size.
fn unbounded() -> Limits {
    Limits {
        max_bytes: usize::MAX,
        max_depth: usize::MAX,
        max_values: usize::MAX,
        max_members: usize::MAX,
        max_string_bytes: usize::MAX,
    }
}

fn encode(value: Value) -> Vec<u8> {
    jfgui_proto::encode(&value, &unbounded()).unwrap_or_else(|e| {
        // Only a non-finite number could fail, and records hold none.
        tracing::error!("audit record not encodable: {e}");
        br#"{"error":"unencodable record"}"#.to_vec()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(input: Value) -> Record {
        Record {
            time_ms: 0,
            client: Arc::new(Client {
                uid: Some(1000),
                pid: Some(42),
                exe: Some("/usr/bin/python3".into()),
                transport: Transport::Endpoint,
            }),
            protocol: Protocol::Mcp {
                revision: "2025-11-25",
                client_info: Some(Arc::new(ClientInfo {
                    name: "claude".into(),
                    version: "1".into(),
                })),
            },
            app: Arc::new(AppRef {
                slug: "notepad".into(),
                display_name: "Note\npad".into(),
                pid: 7,
            }),
            method: "actions/execute",
            action: Action::One("document.text.insert".into()),
            input: Some(input),
            expected_revision: Some(3),
            revision: Some(4),
            outcome: Outcome::Refused { class: "not_executed", reason: "stale_revision".into() },
            app_outcome: None,
            duration_us: 12,
        }
    }

    #[test]
    fn a_record_is_one_strict_line_with_the_input_hashed_not_kept() {
        let input = Value::Object({
            let mut m = Map::new();
            m.insert("text", "a\nb\u{2028}");
            m
        });
        let line = record(input).to_line(false);
        assert!(!line.contains(&b'\n') && !line.contains(&b'\r'));
        let text = String::from_utf8(line).unwrap();
        assert!(!text.contains("a\\nb"), "input not stored by default: {text}");
        let v = jfgui_proto::parse(text.as_bytes(), &unbounded()).unwrap();
        // The encoder escapes U+2028 too (JavaScript-safe lines).
        let encoded = r#"{"text":"a\nb\u2028"}"#;
        assert_eq!(
            v.get("input").unwrap().get("size").unwrap().as_u64(),
            Some(encoded.len() as u64)
        );
        let sha: String =
            Sha256::digest(encoded.as_bytes()).iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(v.get("input").unwrap().get("sha256").unwrap().as_str(), Some(sha.as_str()));
        assert_eq!(
            v.get("client").unwrap().get("clientInfo").unwrap().get("name").unwrap().as_str(),
            Some("claude")
        );
        let outcome = v.get("outcome").unwrap().get("refused").unwrap();
        assert_eq!(outcome.get("reason").unwrap().as_str(), Some("stale_revision"));
        assert_eq!(v.get("expectedRevision").unwrap().as_u64(), Some(3));
    }

    #[test]
    fn the_activity_names_the_client_briefly_and_is_bounded() {
        let mut r = record(Value::Null);
        let connection = activity_client(&r.client, None);
        assert_eq!(connection, "python3[42] via endpoint");
        let a = r.activity(&connection);
        assert_eq!(a.client, "claude 1 via endpoint");
        assert_eq!(a.action, "document.text.insert");
        assert_eq!((a.outcome.as_str(), a.reason.as_deref()), ("refused", Some("stale_revision")));
        r.protocol = Protocol::Json1;
        r.outcome = Outcome::Ok;
        r.action = Action::Calls { names: vec!["é".repeat(400)], atomic: true };
        let a = r.activity(&connection);
        assert_eq!(a.client, "python3[42] via endpoint");
        assert_eq!((a.outcome.as_str(), a.reason), ("ok", None));
        assert!(a.action.len() <= ACTIVITY_TEXT && a.action.ends_with('…'), "{}", a.action);
        let anonymous = Client { uid: None, pid: None, exe: None, transport: Transport::Bridge };
        assert_eq!(activity_client(&anonymous, None), "bridge via bridge");
        let long = ClientInfo { name: "n".repeat(300), version: "1".into() };
        assert!(activity_client(&anonymous, Some(&long)).ends_with('…'));
    }

    #[test]
    fn kept_input_is_cut_on_a_character_boundary() {
        let long: String = "é".repeat(INPUT_KEPT);
        let line = record(Value::from(long.as_str())).to_line(true);
        let v = jfgui_proto::parse(&line, &unbounded()).unwrap();
        let input = v.get("input").unwrap();
        let kept = input.get("json").unwrap().as_str().unwrap();
        assert!(kept.len() <= INPUT_KEPT && kept.len() > INPUT_KEPT - 4);
        assert_eq!(input.get("truncated").unwrap().as_bool(), Some(true));
    }
}
