//! One audit record: who called which app with what, and how it ended; and its line.
//!
//! A [`Record`] is built on the call path from what the call already holds (cheap clones, no
//! hashing); [`Record::to_line`] runs on the writer thread and does the expensive part: the
//! input's size and SHA-256, and the line. The line is written directly, without a value
//! tree, in exactly the bytes the protocol's encoder would give the record's tree (its string
//! escapes included, U+2028/U+2029 too): strict JSON that never holds a raw line break,
//! whatever the client sent.

use std::io::Write as _;
use std::sync::Arc;

use jfgui_proto::channel::Activity;
use jfgui_proto::{Limits, Payload, write_string};
use sha2::{Digest, Sha256};

use super::time;

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
    /// The all-apps MCP server (one connection, every enabled app).
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
    /// The agent acting through the peer (the first process from it up that is not one of
    /// ours), as the OS names it: its executable, its pid.
    pub agent: Option<(String, Option<u32>)>,
}

impl Client {
    /// The client with `pid`'s executable looked up now (while the peer is surely alive: at
    /// connect time), acting for `agent`.
    pub fn new(
        uid: Option<u32>,
        pid: Option<u32>,
        transport: Transport,
        agent: Option<(String, Option<u32>)>,
    ) -> Client {
        Client { uid, pid, exe: pid.and_then(exe_of), transport, agent }
    }
}

/// How a call of a `confirm` action was decided, as its record says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConsentNote {
    /// Whether the user was asked (false: a grant covered it).
    pub asked: bool,
    /// The answer (`allow`, `allow_always`, `deny`, `timeout`, `cancelled`, `no_ui`), once
    /// known: the record of the call itself, made when the waiting task was answered, has
    /// none; the record of the decision has it.
    pub answer: Option<&'static str>,
    /// The grant that covered the call, or that the answer made.
    pub grant: Option<u64>,
}

impl ConsentNote {
    /// `{"asked","answer"?,"by"}`, `by` being `user` or `grant(ID)`.
    fn write(&self, line: &mut Vec<u8>) {
        line.extend_from_slice(br#"{"asked":"#);
        write_bool(self.asked, line);
        if let Some(answer) = self.answer {
            line.extend_from_slice(br#","answer":"#);
            write_string(answer, line);
        }
        line.extend_from_slice(br#","by":"#);
        match (self.asked, self.grant) {
            (false, Some(id)) => write_string(&format!("grant({id})"), line),
            _ => write_string("user", line),
        }
        line.push(b'}');
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
    /// MCP in `revision`, with the `clientInfo` the client gave, if any.
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
    pub input: Option<Payload>,
    /// `expectedRevision` (of the first call, for a batch), when given.
    pub expected_revision: Option<u64>,
    /// The app's revision after the call, when the answer tells.
    pub revision: Option<u64>,
    /// How it ended, for the client.
    pub outcome: Outcome,
    /// What the app reported, when the client never got it (`outcome` is then
    /// `unknown{client_disconnected}`).
    pub app_outcome: Option<Outcome>,
    /// How a call of a `confirm` action was decided.
    pub consent: Option<ConsentNote>,
    /// How long it took.
    pub duration_us: u64,
}

/// The client in an `activity` notice, in a few words: the agent's executable name and pid
/// as the OS named them, with what the MCP `clientInfo` says beside it (`claude[42] via
/// all-apps-mcp, says claude-code 2.1`); without an agent, the `clientInfo` name and version,
/// else the peer's executable name and pid (else the transport's name); then how it came.
/// Cut to [`ACTIVITY_TEXT`] bytes.
pub fn activity_client(client: &Client, info: Option<&ClientInfo>) -> String {
    let transport = client.transport.as_str();
    let (exe, pid) = match &client.agent {
        Some((exe, pid)) => (Some(exe), *pid),
        None => (client.exe.as_ref(), client.pid),
    };
    let name = || match exe {
        Some(exe) => exe.rsplit(['/', '\\']).next().unwrap_or(exe),
        None => transport,
    };
    cut(match (info, pid) {
        (Some(info), Some(pid)) if client.agent.is_some() => {
            format!("{}[{pid}] via {transport}, says {} {}", name(), info.name, info.version)
        }
        (Some(info), _) => format!("{} {} via {transport}", info.name, info.version),
        (None, Some(pid)) => format!("{}[{pid}] via {transport}", name()),
        (None, None) => format!("{} via {transport}", name()),
    })
}

impl Record {
    /// A successful JSON-1 call of `action` by an anonymous endpoint client, for unit tests
    /// to vary with struct update syntax.
    #[cfg(test)]
    pub(crate) fn sample(action: String) -> Record {
        Record {
            time_ms: 0,
            client: Arc::new(Client {
                uid: None,
                pid: None,
                exe: None,
                transport: Transport::Endpoint,
                agent: None,
            }),
            protocol: Protocol::Json1,
            app: Arc::new(AppRef { slug: "a".into(), display_name: "A".into(), pid: 1 }),
            method: "actions/execute",
            action: Action::One(action),
            input: None,
            expected_revision: None,
            revision: Some(1),
            outcome: Outcome::Ok,
            app_outcome: None,
            consent: None,
            duration_us: 1,
        }
    }

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
    ///
    /// Written straight into the line, member by member, in the order and with the escapes
    /// the protocol's encoder uses (its own [`write_string`]): the bytes are what encoding the
    /// record as a value tree gives (the tests hold that tree as the reference), without the
    /// tree's allocations on every record.
    pub fn to_line(&self, keep_input: bool) -> Vec<u8> {
        let mut line = Vec::with_capacity(LINE_CAPACITY);
        line.extend_from_slice(br#"{"time":"#);
        time::write_ms(self.time_ms, &mut line);
        line.extend_from_slice(br#","client":"#);
        self.write_client(&mut line);
        let app = &self.app;
        line.extend_from_slice(br#","app":{"slug":"#);
        write_string(&app.slug, &mut line);
        line.extend_from_slice(br#","displayName":"#);
        write_string(&app.display_name, &mut line);
        line.extend_from_slice(br#","pid":"#);
        write_u64(app.pid.into(), &mut line);
        line.extend_from_slice(br#"},"method":"#);
        write_string(self.method, &mut line);
        match &self.action {
            Action::One(name) => {
                line.extend_from_slice(br#","action":"#);
                write_string(name, &mut line);
            }
            Action::Calls { names, atomic } => {
                line.extend_from_slice(br#","calls":["#);
                for (i, name) in names.iter().enumerate() {
                    if i > 0 {
                        line.push(b',');
                    }
                    write_string(name, &mut line);
                }
                line.extend_from_slice(br#"],"atomic":"#);
                write_bool(*atomic, &mut line);
            }
            Action::CancelTask(id) => {
                line.extend_from_slice(br#","task":"#);
                write_string(id, &mut line);
            }
        }
        if let Some(input) = &self.input {
            line.extend_from_slice(br#","input":"#);
            write_input(input, keep_input, &mut line);
        }
        if let Some(expected) = self.expected_revision {
            line.extend_from_slice(br#","expectedRevision":"#);
            write_u64(expected, &mut line);
        }
        line.extend_from_slice(br#","revision":"#);
        write_optional_u64(self.revision, &mut line);
        line.extend_from_slice(br#","outcome":"#);
        self.outcome.write(&mut line);
        if let Some(app_outcome) = &self.app_outcome {
            line.extend_from_slice(br#","appOutcome":"#);
            app_outcome.write(&mut line);
        }
        if let Some(consent) = &self.consent {
            line.extend_from_slice(br#","consent":"#);
            consent.write(&mut line);
        }
        line.extend_from_slice(br#","durationUs":"#);
        write_u64(self.duration_us, &mut line);
        line.push(b'}');
        line
    }

    /// `{"uid","pid","exe"?,"transport","agent"?,"protocol","protocolRevision","clientInfo"?}`.
    fn write_client(&self, line: &mut Vec<u8>) {
        let c = &self.client;
        line.extend_from_slice(br#"{"uid":"#);
        write_optional_u64(c.uid.map(u64::from), line);
        line.extend_from_slice(br#","pid":"#);
        write_optional_u64(c.pid.map(u64::from), line);
        if let Some(exe) = &c.exe {
            line.extend_from_slice(br#","exe":"#);
            write_string(exe, line);
        }
        line.extend_from_slice(br#","transport":"#);
        write_string(c.transport.as_str(), line);
        if let Some((exe, pid)) = &c.agent {
            line.extend_from_slice(br#","agent":{"exe":"#);
            write_string(exe, line);
            if let Some(pid) = pid {
                line.extend_from_slice(br#","pid":"#);
                write_u64((*pid).into(), line);
            }
            line.push(b'}');
        }
        match &self.protocol {
            Protocol::Json1 => {
                line.extend_from_slice(br#","protocol":"json-1","protocolRevision":"1""#);
            }
            Protocol::Mcp { revision, client_info } => {
                line.extend_from_slice(br#","protocol":"mcp","protocolRevision":"#);
                write_string(revision, line);
                if let Some(info) = client_info {
                    line.extend_from_slice(br#","clientInfo":{"name":"#);
                    write_string(&info.name, line);
                    line.extend_from_slice(br#","version":"#);
                    write_string(&info.version, line);
                    line.push(b'}');
                }
            }
        }
        line.push(b'}');
    }
}

/// Room for a usual record line (client, app, action and hash: about 350 bytes), so it is
/// written without growing.
const LINE_CAPACITY: usize = 512;

/// The line `{"time":…,"dropped":N}`: N records were lost before this point.
pub fn dropped_line(time_ms: u64, dropped: u64) -> Vec<u8> {
    let mut line = Vec::with_capacity(64);
    line.extend_from_slice(br#"{"time":"#);
    time::write_ms(time_ms, &mut line);
    line.extend_from_slice(br#","dropped":"#);
    write_u64(dropped, &mut line);
    line.push(b'}');
    line
}

/// `{"size","sha256"}` of the input's compact JSON, plus (`keep`) `"json"`, the JSON itself
/// cut at [`INPUT_KEPT`] bytes (on a character boundary), and `"truncated"`, whether it was
/// cut. An input the client's line held as a fragment (JSON-1) is hashed as it is, in the
/// encoder's form already; any other is encoded first.
fn write_input(input: &Payload, keep: bool, line: &mut Vec<u8>) {
    let encoded;
    let bytes: &[u8] = match input {
        Payload::Raw(raw) => raw.as_bytes(),
        tree => {
            // Only a non-finite number could fail, and inputs hold none (they were parsed).
            encoded = jfgui_proto::encode(tree, &unbounded()).unwrap_or_default();
            &encoded
        }
    };
    line.extend_from_slice(br#"{"size":"#);
    write_u64(bytes.len() as u64, line);
    line.extend_from_slice(br#","sha256":""#);
    const HEX: &[u8; 16] = b"0123456789abcdef";
    for b in Sha256::digest(bytes) {
        line.extend_from_slice(&[HEX[usize::from(b >> 4)], HEX[usize::from(b & 0xF)]]);
    }
    line.push(b'"');
    if keep {
        let text = String::from_utf8_lossy(bytes);
        let mut cut = text.len().min(INPUT_KEPT);
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        line.extend_from_slice(br#","json":"#);
        write_string(&text[..cut], line);
        line.extend_from_slice(br#","truncated":"#);
        write_bool(cut < text.len(), line);
    }
    line.push(b'}');
}

impl Outcome {
    /// `"ok"`, or `{"refused"|"failed"|"unknown":{"class","reason"}}`.
    fn write(&self, line: &mut Vec<u8>) {
        let (class, reason) = match self {
            Outcome::Ok => return line.extend_from_slice(br#""ok""#),
            Outcome::Refused { class, reason } | Outcome::Failed { class, reason } => {
                (*class, reason)
            }
            Outcome::Unknown { reason } => ("outcome_unknown", reason),
        };
        line.push(b'{');
        write_string(self.word(), line);
        line.extend_from_slice(br#":{"class":"#);
        write_string(class, line);
        line.extend_from_slice(br#","reason":"#);
        write_string(reason, line);
        line.extend_from_slice(b"}}");
    }
}

/// `n` in decimal, as the encoder writes an integer.
fn write_u64(n: u64, line: &mut Vec<u8>) {
    // Writing to a Vec cannot fail.
    let _ = write!(line, "{n}");
}

/// `n`, or `null`.
fn write_optional_u64(n: Option<u64>, line: &mut Vec<u8>) {
    match n {
        Some(n) => write_u64(n, line),
        None => line.extend_from_slice(b"null"),
    }
}

fn write_bool(b: bool, line: &mut Vec<u8>) {
    line.extend_from_slice(if b { b"true" } else { b"false" });
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

#[cfg(test)]
mod tests {
    use jfgui_proto::{Map, RawJson, Value};

    use super::*;

    /// The reference: the record as a value tree, encoded by the protocol's encoder (how lines
    /// were made before they were written directly). [`Record::to_line`] must give its bytes.
    fn tree_line(r: &Record, keep_input: bool) -> Vec<u8> {
        fn outcome(o: &Outcome) -> Value {
            let (class, reason) = match o {
                Outcome::Ok => return Value::from("ok"),
                Outcome::Refused { class, reason } | Outcome::Failed { class, reason } => {
                    (*class, reason)
                }
                Outcome::Unknown { reason } => ("outcome_unknown", reason),
            };
            let mut detail = Map::new();
            detail.insert("class", class);
            detail.insert("reason", reason.as_str());
            let mut m = Map::new();
            m.insert(o.word(), detail);
            Value::Object(m)
        }
        let opt = |n: Option<u64>| n.map_or(Value::Null, Value::from);
        let mut client = Map::new();
        client.insert("uid", opt(r.client.uid.map(u64::from)));
        client.insert("pid", opt(r.client.pid.map(u64::from)));
        if let Some(exe) = &r.client.exe {
            client.insert("exe", exe.as_str());
        }
        client.insert("transport", r.client.transport.as_str());
        if let Some((exe, pid)) = &r.client.agent {
            let mut a = Map::new();
            a.insert("exe", exe.as_str());
            if let Some(pid) = pid {
                a.insert("pid", u64::from(*pid));
            }
            client.insert("agent", a);
        }
        match &r.protocol {
            Protocol::Json1 => {
                client.insert("protocol", "json-1");
                client.insert("protocolRevision", "1");
            }
            Protocol::Mcp { revision, client_info } => {
                client.insert("protocol", "mcp");
                client.insert("protocolRevision", *revision);
                if let Some(info) = client_info {
                    let mut i = Map::new();
                    i.insert("name", info.name.as_str());
                    i.insert("version", info.version.as_str());
                    client.insert("clientInfo", i);
                }
            }
        }
        let mut m = Map::new();
        m.insert("time", time::format_ms(r.time_ms));
        m.insert("client", client);
        let mut app = Map::new();
        app.insert("slug", r.app.slug.as_str());
        app.insert("displayName", r.app.display_name.as_str());
        app.insert("pid", r.app.pid);
        m.insert("app", app);
        m.insert("method", r.method);
        match &r.action {
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
        if let Some(input) = &r.input {
            let bytes = jfgui_proto::encode(input, &unbounded()).unwrap();
            let hex: String = Sha256::digest(&bytes).iter().map(|b| format!("{b:02x}")).collect();
            let mut i = Map::new();
            i.insert("size", bytes.len() as u64);
            i.insert("sha256", hex);
            if keep_input {
                let text = String::from_utf8(bytes).unwrap();
                let mut cut = text.len().min(INPUT_KEPT);
                while !text.is_char_boundary(cut) {
                    cut -= 1;
                }
                i.insert("json", &text[..cut]);
                i.insert("truncated", cut < text.len());
            }
            m.insert("input", i);
        }
        if let Some(expected) = r.expected_revision {
            m.insert("expectedRevision", expected);
        }
        m.insert("revision", opt(r.revision));
        m.insert("outcome", outcome(&r.outcome));
        if let Some(app_outcome) = &r.app_outcome {
            m.insert("appOutcome", outcome(app_outcome));
        }
        if let Some(c) = &r.consent {
            let mut n = Map::new();
            n.insert("asked", c.asked);
            if let Some(answer) = c.answer {
                n.insert("answer", answer);
            }
            let by = match (c.asked, c.grant) {
                (false, Some(id)) => format!("grant({id})"),
                _ => "user".to_owned(),
            };
            n.insert("by", by);
            m.insert("consent", n);
        }
        m.insert("durationUs", r.duration_us);
        jfgui_proto::encode(&Value::Object(m), &unbounded()).unwrap()
    }

    /// Texts that need every kind of care in JSON.
    fn awkward() -> Vec<String> {
        let controls: String = (0u8..0x20).map(char::from).collect();
        vec![
            String::new(),
            "plain".into(),
            r#"quote " backslash \ slash /"#.into(),
            controls,
            "\u{7f} del, \u{2028} line sep, \u{2029} para sep, \u{2027}\u{202a}".into(),
            "non-ASCII: é ü 中文 🦀 \u{fffd}".into(),
            "a\r\nb\tc\u{8}\u{c}".into(),
            "é\"".repeat(3000),
        ]
    }

    #[test]
    fn the_line_is_the_encoded_tree_byte_for_byte_over_awkward_records() {
        let texts = awkward();
        let mut checked = 0;
        for (i, text) in texts.iter().enumerate() {
            let other = &texts[(i + 3) % texts.len()];
            let tree_input = {
                let mut m = Map::new();
                m.insert(text.as_str(), other.as_str());
                m.insert("n", u64::MAX);
                m.insert("list", vec![Value::Null, Value::Bool(true), Value::from(text.as_str())]);
                Value::Object(m)
            };
            let raw_input = Payload::Raw(RawJson::encode(&tree_input, &unbounded()).unwrap());
            let client_info =
                Some(Arc::new(ClientInfo { name: text.clone(), version: other.clone() }));
            let protocols = [
                Protocol::Json1,
                Protocol::Mcp { revision: "2025-11-25", client_info: None },
                Protocol::Mcp { revision: "2026-07-28", client_info },
            ];
            let actions = [
                Action::One(text.clone()),
                Action::Calls { names: vec![], atomic: false },
                Action::Calls { names: vec![text.clone(), other.clone()], atomic: true },
                Action::CancelTask(other.clone()),
            ];
            let outcomes = [
                Outcome::Ok,
                Outcome::Refused { class: "not_executed", reason: text.clone() },
                Outcome::Failed { class: "failed", reason: other.clone() },
                Outcome::Unknown { reason: text.clone() },
            ];
            for (j, protocol) in protocols.into_iter().enumerate() {
                for (k, action) in actions.iter().enumerate() {
                    for (l, outcome) in outcomes.iter().enumerate() {
                        let input = match (j + k + l) % 4 {
                            0 => None,
                            1 => Some(tree_input.clone().into()),
                            2 => Some(raw_input.clone()),
                            _ => Some(Value::from(text.as_str()).into()),
                        };
                        let r = Record {
                            time_ms: [0, 1_764_633_600_123, 253_402_300_799_999][l % 3],
                            client: Arc::new(Client {
                                uid: (k % 2 == 0).then_some(u32::MAX),
                                pid: (l % 2 == 0).then_some(42),
                                exe: (j != 1).then(|| other.clone()),
                                transport: [
                                    Transport::Endpoint,
                                    Transport::AllAppsMcp,
                                    Transport::CliHeadless,
                                    Transport::Bridge,
                                ][(i + k) % 4],
                                agent: (k % 2 == 1)
                                    .then(|| (text.clone(), (l % 2 == 0).then_some(7))),
                            }),
                            protocol: protocol.clone(),
                            app: Arc::new(AppRef {
                                slug: other.clone(),
                                display_name: text.clone(),
                                pid: u32::MAX,
                            }),
                            method: "actions/batch",
                            action: action.clone(),
                            input,
                            expected_revision: (k % 2 == 1).then_some(u64::MAX),
                            revision: (l % 2 == 1).then_some(0),
                            outcome: outcome.clone(),
                            app_outcome: (k == l).then(|| outcomes[(l + 1) % 4].clone()),
                            consent: [
                                None,
                                Some(ConsentNote { asked: true, answer: None, grant: None }),
                                Some(ConsentNote {
                                    asked: true,
                                    answer: Some("allow_always"),
                                    grant: Some(3),
                                }),
                                Some(ConsentNote {
                                    asked: false,
                                    answer: None,
                                    grant: Some(u64::MAX),
                                }),
                            ][(j + l) % 4],
                            duration_us: u64::MAX,
                        };
                        for keep in [false, true] {
                            let line = r.to_line(keep);
                            assert_eq!(
                                String::from_utf8(line.clone()).unwrap(),
                                String::from_utf8(tree_line(&r, keep)).unwrap()
                            );
                            assert!(!line.contains(&b'\n') && !line.contains(&b'\r'));
                            jfgui_proto::parse(&line, &unbounded()).unwrap();
                            checked += 1;
                        }
                    }
                }
            }
        }
        assert_eq!(checked, texts.len() * 3 * 4 * 4 * 2);
    }

    #[test]
    fn the_drop_notice_is_the_encoded_tree() {
        for (ms, n) in [(0, 1), (1_764_633_600_123, u64::MAX)] {
            let mut m = Map::new();
            m.insert("time", time::format_ms(ms));
            m.insert("dropped", n);
            let tree = jfgui_proto::encode(&Value::Object(m), &unbounded()).unwrap();
            assert_eq!(dropped_line(ms, n), tree);
        }
    }

    fn record(input: Value) -> Record {
        Record {
            time_ms: 0,
            client: Arc::new(Client {
                uid: Some(1000),
                pid: Some(42),
                exe: Some("/usr/bin/python3".into()),
                transport: Transport::Endpoint,
                agent: None,
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
            input: Some(input.into()),
            expected_revision: Some(3),
            revision: Some(4),
            outcome: Outcome::Refused { class: "not_executed", reason: "stale_revision".into() },
            app_outcome: None,
            consent: None,
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
        let anonymous =
            Client { uid: None, pid: None, exe: None, transport: Transport::Bridge, agent: None };
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
