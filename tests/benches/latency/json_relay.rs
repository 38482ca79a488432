//! The JSON-RPC relay, the baseline the daemon's middle hop is held to: a plain tokio
//! (current-thread, like the daemon) + serde_json relay in a child process (`middle.rs`). It
//! does what a real relay must: parses every request line and every response line into a
//! `serde_json::Value`, rejects what is not a JSON-RPC request, gives each request an id of its
//! own on the one shared upstream connection (clients' ids may collide), correlates the
//! response by that id, puts the client's id back and re-encodes. Per client a reader task and
//! a writer task, one upstream writer task and one upstream reader task.
//!
//! The upstream server is a thread of the bench that answers like Notepad's `document.get`:
//! it parses the request, checks method and action, and answers the same result Notepad does.

use std::collections::HashMap;
use std::io::{self, BufRead, BufReader, Write};
use std::os::unix::net::UnixListener;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread;

use jfgui_tests::serde_json::{self, Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader as AsyncBufReader};
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};
use tokio::sync::mpsc;

use crate::line::{Template, UnixClient};
use crate::load::{Client, Target};
use crate::middle::Relay;

/// Lines queued per writer before a sender waits.
const QUEUE: usize = 64;

/// Requests forwarded and not yet answered: upstream id → (client's id, client's writer).
type Pending = Arc<Mutex<HashMap<u64, (Value, mpsc::Sender<Vec<u8>>)>>>;

/// Child side: the relay on `listen`, one connection to `upstream` for all clients.
pub fn relay(listen: &Path, upstream: &Path) {
    let rt = tokio::runtime::Builder::new_current_thread().enable_io().build().expect("runtime");
    rt.block_on(async {
        let up = tokio::net::UnixStream::connect(upstream).await.expect("connect upstream");
        let (up_read, up_write) = up.into_split();
        let (up_tx, up_rx) = mpsc::channel(QUEUE);
        tokio::spawn(writer(up_write, up_rx));
        let pending = Pending::default();
        tokio::spawn(responses(up_read, Arc::clone(&pending)));
        let listener = tokio::net::UnixListener::bind(listen).expect("bind the JSON relay");
        let next = Arc::new(AtomicU64::new(1));
        loop {
            let Ok((stream, _)) = listener.accept().await else { continue };
            let (read, write) = stream.into_split();
            let (tx, rx) = mpsc::channel(QUEUE);
            tokio::spawn(writer(write, rx));
            tokio::spawn(requests(
                read,
                tx,
                up_tx.clone(),
                Arc::clone(&pending),
                Arc::clone(&next),
            ));
        }
    });
}

/// Writes queued lines until the queue closes or the peer goes away.
async fn writer(mut w: OwnedWriteHalf, mut rx: mpsc::Receiver<Vec<u8>>) {
    while let Some(line) = rx.recv().await {
        if w.write_all(&line).await.is_err() {
            return;
        }
    }
}

/// One client's request lines: parsed, checked, re-addressed and forwarded upstream; what is
/// not a request is answered here.
async fn requests(
    read: OwnedReadHalf,
    tx: mpsc::Sender<Vec<u8>>,
    up_tx: mpsc::Sender<Vec<u8>>,
    pending: Pending,
    next: Arc<AtomicU64>,
) {
    let mut read = AsyncBufReader::new(read);
    let mut line = Vec::new();
    loop {
        line.clear();
        if read.read_until(b'\n', &mut line).await.map_or(true, |n| n == 0) {
            return;
        }
        let sent = match forward(&line, &tx, &pending, &next) {
            Ok(request) => up_tx.send(request).await,
            Err(error) => tx.send(error).await,
        };
        if sent.is_err() {
            return;
        }
    }
}

/// The upstream line for one client line, or the error line to answer it with.
fn forward(
    line: &[u8],
    tx: &mpsc::Sender<Vec<u8>>,
    pending: &Pending,
    next: &AtomicU64,
) -> Result<Vec<u8>, Vec<u8>> {
    let mut request: Value =
        serde_json::from_slice(line).map_err(|_| error(Value::Null, -32700, "parse error"))?;
    let id = match request.get("id") {
        Some(id @ (Value::Number(_) | Value::String(_))) => id.clone(),
        _ => return Err(error(Value::Null, -32600, "invalid request")),
    };
    if request.get("jsonrpc").and_then(Value::as_str) != Some("2.0")
        || !request.get("method").is_some_and(Value::is_string)
    {
        return Err(error(id, -32600, "invalid request"));
    }
    let up_id = next.fetch_add(1, Ordering::Relaxed);
    request["id"] = up_id.into();
    pending.lock().unwrap_or_else(PoisonError::into_inner).insert(up_id, (id, tx.clone()));
    Ok(encode(&request))
}

/// Upstream response lines: parsed, matched to their request, given back the client's id and
/// sent to that client. A line that matches nothing is dropped.
async fn responses(read: OwnedReadHalf, pending: Pending) {
    let mut read = AsyncBufReader::new(read);
    let mut line = Vec::new();
    loop {
        line.clear();
        if read.read_until(b'\n', &mut line).await.map_or(true, |n| n == 0) {
            return;
        }
        let Ok(mut response) = serde_json::from_slice::<Value>(&line) else { continue };
        let Some(up_id) = response.get("id").and_then(Value::as_u64) else { continue };
        let entry = pending.lock().unwrap_or_else(PoisonError::into_inner).remove(&up_id);
        let Some((id, tx)) = entry else { continue };
        response["id"] = id;
        let _ = tx.send(encode(&response)).await;
    }
}

fn error(id: Value, code: i64, message: &str) -> Vec<u8> {
    encode(&json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}))
}

fn encode(message: &Value) -> Vec<u8> {
    let mut out = serde_json::to_vec(message).expect("a Value always encodes");
    out.push(b'\n');
    out
}

/// The upstream server: every request line parsed; `actions/execute` of `document.get` gets
/// `result`, anything else an error, each re-encoded like an app's answer.
fn server(path: &Path, result: Value) {
    let listener = UnixListener::bind(path).expect("bind the JSON-RPC server");
    let result = Arc::new(result);
    thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            let result = Arc::clone(&result);
            thread::spawn(move || {
                let Ok(mut w) = stream.try_clone() else { return };
                let mut r = BufReader::new(stream);
                let mut line = Vec::new();
                while r.read_until(b'\n', &mut line).is_ok_and(|n| n > 0) {
                    let answer = answer(&line, &result);
                    line.clear();
                    if w.write_all(&answer).is_err() {
                        return;
                    }
                }
            });
        }
    });
}

fn answer(line: &[u8], result: &Value) -> Vec<u8> {
    let Ok(request) = serde_json::from_slice::<Value>(line) else {
        return error(Value::Null, -32700, "parse error");
    };
    let id = request.get("id").cloned().unwrap_or(Value::Null);
    let method = request.get("method").and_then(Value::as_str);
    let action = request.pointer("/params/action").and_then(Value::as_str);
    if method == Some("actions/execute") && action == Some("document.get") {
        encode(&json!({"jsonrpc": "2.0", "id": id, "result": result}))
    } else {
        error(id, -32601, "unknown method or action")
    }
}

/// The JSON relay path in front of a server answering `result`.
pub struct JsonRelay {
    relay: Relay,
    request: Template,
    reply: Template,
}

impl JsonRelay {
    /// Starts the server and the relay child in `dir`; `tag` names their sockets.
    pub fn start(dir: &Path, tag: &str, request: Template, result: Value) -> JsonRelay {
        let upstream = dir.join(format!("jsonrpc-{tag}.sock"));
        // The relay re-encodes the server's reply with the client's id: what serde_json makes
        // of the same message.
        let reply = Template::new(|id| {
            let line = encode(&json!({"jsonrpc": "2.0", "id": id, "result": result}));
            String::from_utf8(line).expect("JSON is UTF-8").trim_end().to_string()
        });
        server(&upstream, result);
        let relay = Relay::start("json", dir, &format!("json-{tag}"), &upstream);
        JsonRelay { relay, request, reply }
    }

    /// The relay's pid.
    pub fn pid(&self) -> u32 {
        self.relay.pid()
    }
}

impl Target for JsonRelay {
    fn connect(&self) -> io::Result<Box<dyn Client>> {
        Ok(Box::new(UnixClient::connect(&self.relay.listen, &self.request, &self.reply)?))
    }

    fn middle_pids(&self) -> Vec<u32> {
        vec![self.relay.pid()]
    }

    fn allocations(&self) -> Option<u64> {
        self.relay.allocations()
    }
}
