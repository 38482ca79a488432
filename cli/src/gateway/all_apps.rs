//! The gateway of `jfgui-agent mcp`: MCP lines between our stdin/stdout and the daemon's all-apps
//! server (`mcp.sock`), kept up while the daemon is not.
//!
//! The daemon may not be started yet, may restart, or may go away mid-session; the MCP client
//! must never notice more than failed tool calls. So the gateway:
//!
//! - connects when it starts, and whenever it has no connection: at once when a line arrives,
//!   and otherwise on a backoff timer (100 ms doubling to 2 s);
//! - while there is no daemon, answers every line itself with [`OfflineMcp`], the daemon's own
//!   all-apps server with no apps behind it: the same `initialize`, `server/discover` and
//!   `tools/list` answers, and every tool call an `isError` result
//!   `not_executed/daemon_unavailable` in the revision of the request, whose message (said
//!   once on stderr too) names the runtime directory looked in and the setting that points
//!   elsewhere, in the words of the CLI's `list`;
//! - answers the requests still in flight when the connection drops with
//!   `outcome_unknown/daemon_unavailable` (they were sent);
//! - keeps the client's session: 2026-07-28 requests carry everything in their `_meta`; for
//!   2025-11-25 it remembers the client's `initialize` and replays it (and
//!   `notifications/initialized`) towards every new daemon connection, and to the offline
//!   server, under an id of its own whose answer it swallows.
//!
//! Lines pass through byte for byte otherwise, as in `stdio` (except the `"id": null` reshape
//! MCP needs). Memory is bounded: at most about one maximum-size message is queued towards the
//! daemon before stdin is no longer read, and stdout backpressures the daemon.

use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::io;
use std::sync::Arc;
use std::time::Duration;

use jfgui_engine::{OfflineMcp, is_mcp_request_id, mcp_error_line};
use jfgui_proto::{Limits, Map, Value};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;
use tokio::time::Instant;

use super::inflight::too_large_error;
use super::{Protocol, spawn_output};
use crate::exit::{Exit, Failure};
use crate::line::{Line, LineReader};
use crate::output::stdout_closed;
use crate::transport::{Reader, Writer};

/// First delay before reconnecting; doubled per failed attempt up to [`MAX_RETRY`].
const FIRST_RETRY: Duration = Duration::from_millis(100);
/// Longest delay between two connection attempts while the daemon is away.
const MAX_RETRY: Duration = Duration::from_secs(2);
/// One connection attempt may take this long (a daemon starting up accepts quickly).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);
/// Ids of the `initialize` requests the gateway replays carry this prefix and a counter.
const REPLAY_ID: &str = "jfgui-agent-mcp-replay-";
/// At most this many requests are remembered as in flight (the daemon allows 64 per
/// connection); beyond it a request lost with the connection gets no local answer.
const MAX_TRACKED: usize = 4096;

/// Runs the gateway between our stdin/stdout and the daemon `connect` opens, until stdin EOF
/// (then waits up to `drain` for the answers still due) or stdout closing. `unreachable` says
/// where the daemon was looked for (the message of every offline tool error).
pub async fn run<C, F>(connect: C, drain: Duration, unreachable: String) -> Result<(), Failure>
where
    C: FnMut() -> F,
    F: Future<Output = io::Result<(Reader, Writer)>>,
{
    pump((super::stdio::input(), super::stdio::output()), connect, drain, unreachable).await
}

/// [`run`] over any client side, so tests can drive it in memory.
async fn pump<I, O, C, F>(
    (input, output): (I, O),
    mut connect: C,
    drain: Duration,
    unreachable: String,
) -> Result<(), Failure>
where
    I: AsyncRead + Unpin + Send + 'static,
    O: AsyncWrite + Unpin + Send + 'static,
    C: FnMut() -> F,
    F: Future<Output = io::Result<(Reader, Writer)>>,
{
    let max = Limits::DEFAULT.max_bytes;
    let (out, mut writer) = spawn_output(output);
    let (stdin_tx, mut stdin) = mpsc::channel::<Line>(4);
    let reader = tokio::spawn(async move {
        let mut lines = LineReader::new(BufReader::new(input), max);
        // A read error ends the input like EOF does.
        while let Ok(Some(line)) = lines.next().await {
            if stdin_tx.send(line).await.is_err() {
                break;
            }
        }
    });
    let mut gateway = Gateway::new(out, unreachable);
    let mut conn = gateway.connect(&mut connect).await;
    if conn.is_none() {
        gateway.tell_unreachable();
    }
    let mut retry = FIRST_RETRY;
    let mut retry_at = Instant::now() + retry;
    let mut eof = false;
    let mut drain_until: Option<Instant> = None;

    let result = loop {
        if eof && gateway.pending.is_empty() {
            break Ok(());
        }
        let offline = conn.is_none();
        let room = conn.as_ref().map(|c| c.queued.subscribe());
        let client = async {
            if let Some(mut room) = room {
                let _ = room.wait_for(|queued| *queued < max).await;
            }
            stdin.recv().await
        };
        let daemon = async {
            match conn.as_mut() {
                Some(c) => tokio::select! {
                    line = c.reader.next() => Some(line),
                    _ = &mut c.writer => None,
                },
                None => std::future::pending().await,
            }
        };
        let drain_timer = tokio::time::sleep_until(drain_until.unwrap_or_else(Instant::now));
        let event = tokio::select! {
            biased;
            _ = &mut writer => Event::StdoutClosed,
            d = daemon => match d {
                Some(Ok(Some(Line::Complete(line)))) => Event::Daemon(line),
                Some(Ok(Some(Line::TooLong))) => {
                    eprintln!("jfgui-agent: dropped a line from jfgui-agentd longer than {max} bytes");
                    continue;
                }
                Some(Ok(None)) | Some(Err(_)) | None => Event::Lost,
            },
            line = client, if !eof => Event::Client(line),
            () = tokio::time::sleep_until(retry_at), if offline && !eof => Event::Retry,
            () = drain_timer, if eof && drain_until.is_some() => Event::Drained,
        };
        match event {
            Event::StdoutClosed => break Err(stdout_closed()),
            Event::Daemon(line) => {
                if let Some(line) = gateway.daemon_line(line) {
                    gateway.emit(line).await;
                }
            }
            Event::Lost => {
                eprintln!("jfgui-agent: lost the connection to jfgui-agentd; reconnecting");
                gateway.tell_unreachable();
                conn = None;
                gateway.offline_again().await;
                retry = FIRST_RETRY;
                retry_at = Instant::now() + retry;
            }
            Event::Retry => {
                conn = gateway.connect(&mut connect).await;
                if conn.is_none() {
                    retry = (retry * 2).min(MAX_RETRY);
                    retry_at = Instant::now() + retry;
                }
            }
            Event::Client(None) => {
                eof = true;
                drain_until = Some(Instant::now() + drain);
                if let Some(c) = &conn {
                    // Half-close: the daemon answers what it has, then closes.
                    c.send(Vec::new());
                }
            }
            Event::Client(Some(Line::TooLong)) => {
                // The stdio gateway's own answer, already newline-terminated.
                let _ = gateway.out.send(too_large_error(Protocol::Mcp)).await;
            }
            Event::Client(Some(Line::Complete(line))) => {
                // A blank line carries no message; forwarding it would only earn a -32700.
                if line.iter().all(u8::is_ascii_whitespace) {
                    continue;
                }
                if conn.is_none() {
                    conn = gateway.connect(&mut connect).await;
                }
                gateway.client_line(conn.as_ref(), line).await;
            }
            Event::Drained => {
                let missing = gateway.pending.len();
                drop(conn.take());
                gateway.offline_again().await;
                break Err(Failure::new(
                    Exit::OutcomeUnknown,
                    "timeout",
                    format!(
                        "stdin closed but {missing} request(s) to jfgui-agentd were still unanswered after {} s",
                        drain.as_secs()
                    ),
                ));
            }
        }
    };
    reader.abort();
    if let Some(c) = conn {
        c.writer.abort();
    }
    let Gateway { out, .. } = gateway;
    drop(out);
    // Flush what is queued; a stuck stdout must not keep us alive.
    match tokio::time::timeout(Duration::from_secs(5), writer).await {
        Ok(Ok(Ok(()))) => result,
        _ => result.and(Err(stdout_closed())),
    }
}

/// What woke the gateway.
enum Event {
    StdoutClosed,
    Daemon(Vec<u8>),
    Lost,
    Retry,
    Client(Option<Line>),
    Drained,
}

/// One connection to `mcp.sock`: a writer task fed by an unbounded queue whose bytes are
/// counted (`queued`), so the gateway stops reading stdin instead of blocking on a daemon that
/// does not read, and keeps reading the daemon's answers meanwhile.
struct Conn {
    queue: mpsc::UnboundedSender<Vec<u8>>,
    queued: Arc<watch::Sender<usize>>,
    writer: JoinHandle<()>,
    reader: LineReader<BufReader<Reader>>,
}

impl Conn {
    fn start((read, write): (Reader, Writer)) -> Conn {
        let (queue, rx) = mpsc::unbounded_channel();
        let queued = Arc::new(watch::Sender::new(0usize));
        let writer = tokio::spawn(write_daemon(write, rx, queued.clone()));
        let reader = LineReader::new(BufReader::new(read), Limits::DEFAULT.max_bytes);
        Conn { queue, queued, writer, reader }
    }

    /// Queues one line (without its newline); an empty line half-closes the connection.
    fn send(&self, mut line: Vec<u8>) {
        if !line.is_empty() {
            line.push(b'\n');
        }
        let len = line.len();
        self.queued.send_modify(|q| *q += len);
        if self.queue.send(line).is_err() {
            self.queued.send_modify(|q| *q -= len);
        }
    }
}

/// Writes queued lines to the daemon until the queue closes or a write fails (the gateway
/// then sees the task end and treats the connection as lost).
async fn write_daemon(
    mut conn: Writer,
    mut rx: mpsc::UnboundedReceiver<Vec<u8>>,
    queued: Arc<watch::Sender<usize>>,
) {
    while let Some(line) = rx.recv().await {
        if line.is_empty() {
            let _ = conn.shutdown().await;
            // Nothing follows a half-close; stay alive so the gateway keeps reading answers.
            std::future::pending::<()>().await;
        }
        let written = conn.write_all(&line).await;
        queued.send_modify(|q| *q -= line.len());
        if written.is_err() {
            return;
        }
    }
}

/// The client's session as the gateway keeps it across daemon connections.
struct Gateway {
    out: mpsc::Sender<Vec<u8>>,
    /// Requests sent to the current daemon connection and not yet answered, by the exact
    /// encoding of their id, each with what is needed to answer it offline (the request
    /// without its tool arguments).
    pending: HashMap<Vec<u8>, Vec<u8>>,
    /// The params of the client's last legacy `initialize`, replayed to every new server.
    initialize: Option<Map>,
    /// Ids of replayed `initialize` requests whose answers are not the client's.
    replayed: HashSet<Vec<u8>>,
    replays: u64,
    /// The server answering while there is no daemon connection.
    offline: OfflineMcp,
    /// Where the daemon was looked for, the message of the offline tool errors.
    unreachable: String,
    /// Whether that was said on stderr (once per gateway, not per outage).
    told: bool,
}

impl Gateway {
    fn new(out: mpsc::Sender<Vec<u8>>, unreachable: String) -> Gateway {
        Gateway {
            out,
            pending: HashMap::new(),
            initialize: None,
            replayed: HashSet::new(),
            replays: 0,
            offline: OfflineMcp::new(&unreachable),
            unreachable,
            told: false,
        }
    }

    /// Says on stderr, the first time the daemon is missing, where it was looked for.
    fn tell_unreachable(&mut self) {
        if !self.told {
            self.told = true;
            eprintln!(
                "jfgui-agent: {}; tool calls answer daemon_unavailable until it runs (retrying)",
                self.unreachable
            );
        }
    }

    /// Writes one line (without its newline) to the client.
    async fn emit(&self, mut line: Vec<u8>) {
        line.push(b'\n');
        // A closed stdout ends the gateway through its writer task.
        let _ = self.out.send(line).await;
    }

    /// One connection attempt; on success the client's legacy session is replayed first.
    async fn connect<C, F>(&mut self, connect: &mut C) -> Option<Conn>
    where
        C: FnMut() -> F,
        F: Future<Output = io::Result<(Reader, Writer)>>,
    {
        let stream = match tokio::time::timeout(CONNECT_TIMEOUT, connect()).await {
            Ok(Ok(stream)) => stream,
            Ok(Err(e)) => {
                report_refusal(&e);
                return None;
            }
            Err(_) => return None,
        };
        let conn = Conn::start(stream);
        if let Some(line) = self.replay_initialize() {
            conn.send(line);
            conn.send(initialized());
        }
        eprintln!("jfgui-agent: connected to jfgui-agentd");
        Some(conn)
    }

    /// The client's `initialize` under a fresh id of ours, remembered so its answer is
    /// swallowed; `None` when the client has not initialized (legacy).
    fn replay_initialize(&mut self) -> Option<Vec<u8>> {
        let params = self.initialize.clone()?;
        self.replays += 1;
        let id = Value::from(format!("{REPLAY_ID}{}", self.replays));
        if let Some(key) = key(&id) {
            self.replayed.insert(key);
        }
        let mut request = Map::new();
        request.insert("jsonrpc", "2.0");
        request.insert("id", id);
        request.insert("method", "initialize");
        request.insert("params", params);
        jfgui_proto::encode(&Value::Object(request), &Limits::DEFAULT).ok()
    }

    /// Handles one client line: forwarded to the daemon, or answered offline.
    async fn client_line(&mut self, conn: Option<&Conn>, line: Vec<u8>) {
        let message = match jfgui_proto::parse(&line, &Limits::DEFAULT) {
            Ok(Value::Object(message)) => Some(message),
            _ => None,
        };
        let method = message.as_ref().and_then(|m| m.get("method")).and_then(Value::as_str);
        let id = message.as_ref().and_then(|m| m.get("id"));
        match (method, id) {
            (Some("initialize"), Some(_)) => {
                if let Some(Value::Object(params)) = message.as_ref().and_then(|m| m.get("params"))
                {
                    self.initialize = Some(params.clone());
                }
            }
            (Some("notifications/cancelled"), None) => {
                // The daemon suppresses the answer to a cancelled request.
                let request =
                    message.as_ref().and_then(|m| m.get("params")).and_then(|p| p.get("requestId"));
                if let Some(k) = request.and_then(key) {
                    self.pending.remove(&k);
                }
            }
            _ => {}
        }
        let Some(conn) = conn else {
            if let Some(answer) = self.offline.answer(&line).await {
                self.emit(answer).await;
            }
            return;
        };
        if let (Some(message), Some(k)) = (&message, id.and_then(key))
            && method.is_some()
            && self.pending.len() < MAX_TRACKED
        {
            self.pending.insert(k, skeleton(message));
        }
        conn.send(line);
    }

    /// A line from the daemon as it goes to the client; `None` for what is not the client's
    /// (answers to replayed `initialize` requests) or not JSON.
    fn daemon_line(&mut self, line: Vec<u8>) -> Option<Vec<u8>> {
        let Ok(message) = jfgui_proto::parse(&line, &Limits::DEFAULT) else {
            eprintln!("jfgui-agent: dropped a line from jfgui-agentd that is not strict JSON");
            return None;
        };
        let answered = message.get("result").is_some() || message.get("error").is_some();
        if let Some(k) = message.get("id").and_then(key).filter(|_| answered) {
            if self.replayed.remove(&k) {
                if message.get("error").is_some() {
                    eprintln!("jfgui-agent: the daemon refused the replayed initialize");
                }
                return None;
            }
            self.pending.remove(&k);
        }
        Some(mcp_error_line(&line, &Limits::DEFAULT).unwrap_or(line))
    }

    /// The connection is gone: a fresh offline server takes over (with the client's legacy
    /// session replayed) and answers the requests that were in flight.
    async fn offline_again(&mut self) {
        self.replayed.clear();
        self.offline = OfflineMcp::new(&self.unreachable);
        if let Some(line) = self.replay_initialize() {
            let _ = self.offline.answer(&line).await;
            let _ = self.offline.answer(&initialized()).await;
        }
        self.replayed.clear();
        let mut lost: Vec<(Vec<u8>, Vec<u8>)> = self.pending.drain().collect();
        lost.sort();
        for (_, request) in lost {
            if let Some(answer) = self.offline.answer_lost(&request).await {
                self.emit(answer).await;
            }
        }
    }
}

/// `notifications/initialized`.
fn initialized() -> Vec<u8> {
    br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_vec()
}

/// The tracking key of an MCP request id: its exact encoding (ids are echoed with their exact
/// token); `None` for ids MCP does not allow (the daemon answers those without an id).
fn key(id: &Value) -> Option<Vec<u8>> {
    is_mcp_request_id(id).then(|| jfgui_proto::encode(id, &Limits::DEFAULT).ok()).flatten()
}

/// A request without its tool arguments (the only member that can be large): all the offline
/// server needs to answer it as the daemon would without apps.
fn skeleton(request: &Map) -> Vec<u8> {
    let mut request = request.clone();
    if let Some(Value::Object(params)) = request.get_mut("params") {
        params.remove("arguments");
    }
    jfgui_proto::encode(&Value::Object(request), &Limits::DEFAULT).unwrap_or_default()
}

/// A failed attempt is routine while the daemon is away; only a refusal (untrusted dir or
/// peer) is worth a line on stderr every time.
fn report_refusal(e: &io::Error) {
    if e.kind() == io::ErrorKind::PermissionDenied {
        eprintln!("jfgui-agent: refused to connect to jfgui-agentd: {e}");
    }
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;
    use std::sync::Mutex;

    use tokio::io::{AsyncBufReadExt, AsyncReadExt, DuplexStream, duplex};

    use super::*;

    const WAIT: Duration = Duration::from_secs(10);
    const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;

    /// Daemon connections handed out in order; none left means "not running".
    type Daemons = Arc<Mutex<VecDeque<DuplexStream>>>;

    fn connector(
        daemons: &Daemons,
    ) -> impl FnMut() -> std::future::Ready<io::Result<(Reader, Writer)>> {
        let daemons = daemons.clone();
        move || {
            let next = daemons.lock().unwrap().pop_front();
            std::future::ready(match next {
                Some(stream) => {
                    let (read, write) = tokio::io::split(stream);
                    Ok((Box::new(read) as Reader, Box::new(write) as Writer))
                }
                None => Err(io::Error::from(io::ErrorKind::ConnectionRefused)),
            })
        }
    }

    async fn next_line<R: tokio::io::AsyncBufRead + Unpin>(
        lines: &mut tokio::io::Lines<R>,
    ) -> Value {
        let line = tokio::time::timeout(WAIT, lines.next_line()).await.unwrap().unwrap().unwrap();
        jfgui_proto::parse(line.as_bytes(), &Limits::DEFAULT).unwrap()
    }

    #[tokio::test]
    async fn offline_then_connected_with_replay_then_a_lost_call_answered_offline() {
        let daemons: Daemons = Arc::default();
        let (client_in, gateway_in) = duplex(1 << 16);
        let (gateway_out, client_out) = duplex(1 << 16);
        let gateway =
            pump((gateway_in, gateway_out), connector(&daemons), WAIT, "not here".to_owned());
        let (ended, ()) = tokio::join!(gateway, drive(client_in, client_out, daemons.clone()));
        assert_eq!(ended, Ok(()));
    }

    /// The client and daemon side of the test above.
    async fn drive(mut client_in: DuplexStream, client_out: DuplexStream, daemons: Daemons) {
        let mut out = tokio::io::BufReader::new(client_out).lines();

        // No daemon: the legacy handshake is answered by the offline server.
        client_in.write_all(format!("{INITIALIZE}\n").as_bytes()).await.unwrap();
        let init = next_line(&mut out).await;
        assert_eq!(init.get("id").and_then(Value::as_u64), Some(1));
        let result = init.get("result").unwrap();
        assert_eq!(result.get("protocolVersion").and_then(Value::as_str), Some("2025-11-25"));
        // A call that never leaves the gateway: not_executed, in the words it was given.
        let offline = r#"{"jsonrpc":"2.0","id":"o","method":"tools/call","params":{"name":"jfgui_apps_list","arguments":{}}}"#;
        client_in.write_all(format!("{offline}\n").as_bytes()).await.unwrap();
        let answer = next_line(&mut out).await;
        let result = answer.get("result").unwrap();
        let error = result.get("structuredContent").and_then(|s| s.get("error")).unwrap();
        assert_eq!(error.get("class").and_then(Value::as_str), Some("not_executed"), "{answer:?}");
        assert_eq!(error.get("reason").and_then(Value::as_str), Some("daemon_unavailable"));
        assert_eq!(error.get("message").and_then(Value::as_str), Some("not here"));

        // A daemon appears; the next line connects at once and the handshake is replayed first.
        let (ours, theirs) = duplex(1 << 16);
        daemons.lock().unwrap().push_back(ours);
        let call = r#"{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"name":"jfgui_state_inspect","arguments":{"app":"x"}}}"#;
        client_in.write_all(format!("{call}\n").as_bytes()).await.unwrap();
        let (daemon_read, mut daemon_write) = tokio::io::split(theirs);
        let mut daemon = tokio::io::BufReader::new(daemon_read).lines();
        let replay = next_line(&mut daemon).await;
        assert_eq!(replay.get("method").and_then(Value::as_str), Some("initialize"));
        let replay_id = replay.get("id").and_then(Value::as_str).unwrap().to_owned();
        assert!(replay_id.starts_with(REPLAY_ID), "{replay_id}");
        let initialized = next_line(&mut daemon).await;
        assert_eq!(
            initialized.get("method").and_then(Value::as_str),
            Some("notifications/initialized")
        );
        let forwarded = next_line(&mut daemon).await;
        assert_eq!(forwarded.get("id").and_then(Value::as_str), Some("c"));
        // The replay's answer is not the client's; then the daemon dies with "c" unanswered.
        let answer = format!("{{\"jsonrpc\":\"2.0\",\"id\":\"{replay_id}\",\"result\":{{}}}}\n");
        daemon_write.write_all(answer.as_bytes()).await.unwrap();
        drop(daemon_write);
        drop(daemon);

        let lost = next_line(&mut out).await;
        assert_eq!(lost.get("id").and_then(Value::as_str), Some("c"), "{lost:?}");
        let result = lost.get("result").unwrap();
        assert_eq!(result.get("isError").and_then(Value::as_bool), Some(true));
        let error = result.get("structuredContent").and_then(|s| s.get("error")).unwrap();
        assert_eq!(error.get("reason").and_then(Value::as_str), Some("daemon_unavailable"));
        assert_eq!(error.get("class").and_then(Value::as_str), Some("outcome_unknown"));

        // stdin EOF with nothing in flight: exit 0 (checked above), nothing more on stdout.
        drop(client_in);
        let mut rest = String::new();
        out.into_inner().read_to_string(&mut rest).await.unwrap();
        assert_eq!(rest, "");
    }
}
