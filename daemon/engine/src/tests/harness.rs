//! Test doubles for the engine: a fake app that speaks host-channel messages directly and a raw
//! JSON-1 client, both over `tokio::io::duplex`.

use std::time::Duration;

use jfgui_proto::channel::{
    ActionInfo, ActionsPage, AppMessage, CHANNEL_VERSION, Call, CallResult, DaemonMessage,
    EnabledState, FrameDecoder, Hello, Outcome, Ready, Reply, Request, decode_message,
    encode_frame,
};
use jfgui_proto::{ActionKind, Limits, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt, DuplexStream, ReadHalf, WriteHalf};

use crate::client::lines::{Line, LineReader};
use crate::partial::{Partial, PartialBudget};
use crate::{Engine, EngineConfig, PeerInfo};

/// Generous: these bound waits that should end in milliseconds, so a bug fails instead of
/// hanging.
pub const WAIT: Duration = Duration::from_secs(10);

pub fn config() -> EngineConfig {
    EngineConfig { request_deadline: Duration::from_secs(20), ..EngineConfig::default() }
}

pub fn action(name: &str, kind: ActionKind, description: &str) -> ActionInfo {
    ActionInfo {
        name: name.into(),
        description: description.into(),
        kind,
        input_schema: parse(r#"{"type":"object"}"#),
        output_schema: parse(r#"{"type":"object"}"#),
        capabilities: 0,
        undo: kind == ActionKind::Write,
        transaction: None,
        command_id: None,
        confirm: false,
        title: None,
    }
}

pub fn notepad_actions() -> Vec<ActionInfo> {
    vec![
        action("document.text.insert", ActionKind::Write, "Insert text at the selection"),
        action("document.get", ActionKind::Read, "Read the Document text"),
        action("ui.render", ActionKind::Read, "Render the view to PNG"),
    ]
}

pub fn parse(s: &str) -> Value {
    jfgui_proto::parse(s.as_bytes(), &Limits::DEFAULT).unwrap()
}

/// `v` at a dotted path (`error.data.reason`; array indices as numbers).
pub fn at<'a>(v: &'a Value, path: &str) -> &'a Value {
    let mut cur = v;
    for part in path.split('.') {
        cur = match cur {
            Value::Object(m) => m.get(part).unwrap_or_else(|| panic!("no {part} in {v:?}")),
            Value::Array(a) => &a[part.parse::<usize>().unwrap()],
            _ => panic!("cannot index {part} in {v:?}"),
        };
    }
    cur
}

pub fn has(v: &Value, path: &str) -> bool {
    let mut cur = v;
    for part in path.split('.') {
        match cur.get(part) {
            Some(next) => cur = next,
            None => return false,
        }
    }
    true
}

pub fn s<'a>(v: &'a Value, path: &str) -> &'a str {
    at(v, path).as_str().unwrap_or_else(|| panic!("{path} is not a string in {v:?}"))
}

pub fn n(v: &Value, path: &str) -> i64 {
    at(v, path).as_i64().unwrap_or_else(|| panic!("{path} is not an integer in {v:?}"))
}

/// A fake app on the host channel.
pub struct FakeApp {
    rd: ReadHalf<DuplexStream>,
    wr: WriteHalf<DuplexStream>,
    decoder: FrameDecoder,
    limits: Limits,
    max_frame: usize,
    pub slug: String,
}

impl FakeApp {
    /// Connects, registers `actions` and waits for `welcome`.
    pub async fn register(
        engine: &Engine,
        name: &str,
        enabled: bool,
        actions: Vec<ActionInfo>,
    ) -> FakeApp {
        Self::register_with_buffer(engine, name, enabled, actions, 1 << 20).await
    }

    /// As [`FakeApp::register`] with a chosen transport buffer (small ones make the daemon's
    /// writes block when the app does not read).
    pub async fn register_with_buffer(
        engine: &Engine,
        name: &str,
        enabled: bool,
        actions: Vec<ActionInfo>,
        buffer: usize,
    ) -> FakeApp {
        let mut app = Self::connect(engine, buffer);
        app.send(&AppMessage::Hello(Hello {
            channel_version: CHANNEL_VERSION,
            display_name: name.into(),
            pid: 4242,
            enabled,
            activity: false,
        }))
        .await;
        let count = actions.len() as u32;
        for page in actions.chunks(256) {
            app.send(&AppMessage::Actions(ActionsPage { actions: page.to_vec() })).await;
        }
        app.send(&AppMessage::Ready(Ready { action_count: count })).await;
        match app.recv().await {
            Some(DaemonMessage::Welcome(w)) => app.slug = w.slug,
            other => panic!("expected welcome, got {other:?}"),
        }
        app
    }

    /// A raw connection with the daemon side served by `engine`.
    pub fn connect(engine: &Engine, buffer: usize) -> FakeApp {
        let (ours, theirs) = tokio::io::duplex(buffer);
        let engine2 = engine.clone();
        tokio::spawn(async move { engine2.serve_app(theirs, PeerInfo::default()).await });
        let (rd, wr) = tokio::io::split(ours);
        let config = engine.config();
        FakeApp {
            rd,
            wr,
            decoder: FrameDecoder::new(config.max_frame),
            limits: config.frame_limits(),
            max_frame: config.max_frame,
            slug: String::new(),
        }
    }

    pub async fn send(&mut self, message: &AppMessage) {
        let frame = encode_frame(message, &self.limits, self.max_frame).unwrap();
        self.wr.write_all(&frame).await.unwrap();
    }

    pub async fn send_raw(&mut self, bytes: &[u8]) {
        self.wr.write_all(bytes).await.unwrap();
    }

    /// Reads exactly `n` bytes into the decoder (to observe that the daemon started a write).
    pub async fn read_some(&mut self, n: usize) {
        let mut buf = vec![0u8; n];
        tokio::time::timeout(WAIT, self.rd.read_exact(&mut buf)).await.unwrap().unwrap();
        self.decoder.feed(&buf);
    }

    /// The next daemon message, `None` at EOF.
    pub async fn recv(&mut self) -> Option<DaemonMessage> {
        tokio::time::timeout(WAIT, async {
            loop {
                if let Some(body) = self.decoder.next_frame().unwrap() {
                    return Some(decode_message(&body, &self.limits).unwrap());
                }
                let mut buf = [0u8; 4096];
                match self.rd.read(&mut buf).await {
                    Ok(0) | Err(_) => return None,
                    Ok(n) => self.decoder.feed(&buf[..n]),
                }
            }
        })
        .await
        .expect("daemon message within the wait")
    }

    pub async fn request(&mut self) -> Request {
        match self.recv().await {
            Some(DaemonMessage::Request(r)) => r,
            other => panic!("expected a request, got {other:?}"),
        }
    }

    pub async fn reply(&mut self, id: u64, outcome: Outcome) {
        self.send(&AppMessage::Reply(Reply { id, outcome })).await;
    }

    pub async fn set_enabled(&mut self, enabled: bool) {
        self.send(&AppMessage::Enabled(EnabledState { enabled })).await;
    }

    /// Answers every request with `answer` until the connection ends.
    pub fn serve(mut self, answer: impl Fn(&Call) -> Outcome + Send + 'static) {
        tokio::spawn(async move {
            while let Some(message) = self.recv_quiet().await {
                if let DaemonMessage::Request(r) = message {
                    let outcome = answer(&r.call);
                    self.reply(r.id, outcome).await;
                }
            }
        });
    }

    async fn recv_quiet(&mut self) -> Option<DaemonMessage> {
        loop {
            if let Some(body) = self.decoder.next_frame().ok()? {
                return decode_message(&body, &self.limits).ok();
            }
            let mut buf = [0u8; 4096];
            match self.rd.read(&mut buf).await {
                Ok(0) | Err(_) => return None,
                Ok(n) => self.decoder.feed(&buf[..n]),
            }
        }
    }
}

/// A standard answer: revision 7 for everything, echoing execute input as output.
pub fn echo(call: &Call) -> Outcome {
    Outcome::Ok(match call {
        Call::Execute(e) => CallResult::Executed { output: e.input.clone(), revision: 7 },
        Call::Revision {} => CallResult::Revision { revision: 7 },
        Call::Inspect { input } => CallResult::Inspected { revision: 7, state: input.clone() },
        Call::Render { input } => CallResult::Rendered { output: input.clone(), revision: 7 },
        _ => CallResult::Revision { revision: 7 },
    })
}

/// A raw JSON-1 client.
pub struct Client {
    lines: LineReader<ReadHalf<DuplexStream>>,
    wr: Option<WriteHalf<DuplexStream>>,
}

impl Client {
    pub fn connect(engine: &Engine, slug: &str) -> Client {
        Self::connect_with_buffer(engine, slug, 1 << 20)
    }

    pub fn connect_with_buffer(engine: &Engine, slug: &str, buffer: usize) -> Client {
        let (ours, theirs) = tokio::io::duplex(buffer);
        let engine2 = engine.clone();
        let slug = slug.to_string();
        tokio::spawn(async move {
            engine2.serve_client(theirs, &slug, PeerInfo::default()).await;
        });
        Client::over(ours)
    }

    /// A client on our end of a stream whose other end someone serves.
    pub fn over(ours: DuplexStream) -> Client {
        let (rd, wr) = tokio::io::split(ours);
        let partial = Partial::new(PartialBudget::new(usize::MAX), WAIT * 10);
        Client { lines: LineReader::new(rd, 64 << 20, partial), wr: Some(wr) }
    }

    fn writer(&mut self) -> &mut WriteHalf<DuplexStream> {
        self.wr.as_mut().expect("writer not taken")
    }

    /// Hands the write half to another task (for writers that block).
    pub fn take_writer(&mut self) -> WriteHalf<DuplexStream> {
        self.wr.take().expect("writer not taken")
    }

    pub async fn send(&mut self, line: &str) {
        let w = self.writer();
        w.write_all(line.as_bytes()).await.unwrap();
        w.write_all(b"\n").await.unwrap();
    }

    pub async fn send_raw(&mut self, bytes: &[u8]) {
        self.writer().write_all(bytes).await.unwrap();
    }

    pub async fn flush(&mut self) {
        self.writer().flush().await.unwrap();
    }

    /// The next response line as raw bytes, `None` at EOF.
    pub async fn recv_raw(&mut self) -> Option<Vec<u8>> {
        match tokio::time::timeout(WAIT, self.lines.next_line()).await.expect("response in time") {
            Ok(Some(Line::Complete(bytes))) => Some(bytes),
            Ok(None) => None,
            other => panic!("bad response line: {other:?}"),
        }
    }

    /// The next response, parsed strictly (so every response is itself valid strict JSON).
    pub async fn recv(&mut self) -> Value {
        let bytes = self.recv_raw().await.expect("a response, not EOF");
        jfgui_proto::parse(&bytes, &Limits::DEFAULT).unwrap_or_else(|e| {
            panic!("response is not strict JSON ({e}): {}", String::from_utf8_lossy(&bytes))
        })
    }

    /// Sends a request with `id` 1 and returns the response.
    pub async fn call(&mut self, method: &str, params: &str) -> Value {
        self.send(&format!(r#"{{"jsonrpc":"2.0","id":1,"method":"{method}","params":{params}}}"#))
            .await;
        self.recv().await
    }

    /// True when the daemon closed the connection (EOF) within the wait.
    pub async fn closed(&mut self) -> bool {
        self.recv_raw().await.is_none()
    }
}

/// An engine with one enabled fake app answering with [`echo`]; returns the slug.
pub async fn engine_with_echo_app(config: EngineConfig) -> (Engine, String) {
    let engine = Engine::new(config);
    let app = FakeApp::register(&engine, "Notepad", true, notepad_actions()).await;
    let slug = app.slug.clone();
    app.serve(echo);
    (engine, slug)
}
