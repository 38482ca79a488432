//! Client sessions: one client connection to one app, speaking JSON-1 or MCP; bounded lines
//! in, responses out, many requests in flight. ("Session" means only this in the engine; the
//! OS layer reaches the engine through `server::port::EnginePort`.)
//!
//! The session owns its framing and protocol state (SPEC S8). Work and memory are bounded:
//! at most `max_in_flight_per_client` requests run at once, and the reader stops while about
//! one maximum-size response is buffered for a client that does not read (ssh-agent's rule).
//! Calls already running when a client stops reading still deliver their responses, so the
//! running calls are also bounded by the response bytes they may bring back (see
//! [`Admission`]): a few maximum-size responses, not `max_in_flight_per_client` of them.
//! Responses are written as they complete, so they may be out of order; each carries its id.
//!
//! Fairness (SPEC S8): the connection yields to the others after every line, methods answered
//! from the daemon's own state run on the connection's task one at a time (see
//! [`ClientSession::handle_line`]), and only calls that wait for the app run concurrently.
//!
//! The protocol is decided per connection (SPEC S7, `mcp/select.rs`): until a JSON-1 method,
//! an MCP envelope or `initialize` decides, every line is routed by [`mcp::Protocol`]; a JSON-1
//! connection then takes the JSON-1 path directly.

pub mod json1;
mod mcp;
pub mod methods;
mod observer;
mod peer_warnings;
mod replies;

pub(crate) use mcp::{AllApps, EngineApps, serve_all_apps};
pub use mcp::{OfflineMcp, drop_non_mcp_error_id, is_mcp_request_id, mcp_error_line};

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, WriteHalf};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc, watch};
use tokio::task::{JoinHandle, JoinSet};

pub use observer::{Caller, ClientFate};
use peer_warnings::PeerWarnings;
pub use replies::App;

use super::lines::{Line, LineReader};
use super::link::LinkStatus;
use super::partial::Partial;
use super::{PeerInfo, until};

/// Runs the connection until EOF, the app leaving, or shutdown; then answers the calls already
/// running (bounded by the request deadline plus the drain time) and closes.
pub async fn serve<S>(
    stream: S,
    app: App,
    partial: Partial,
    mut shutdown: watch::Receiver<bool>,
    peer: PeerInfo,
) where
    S: AsyncRead + AsyncWrite + Send + Unpin + 'static,
{
    let link = app.link().clone();
    let config = link.config().clone();
    let (rd, wr) = tokio::io::split(stream);
    let mut lines = LineReader::new(rd, config.json.max_bytes, partial);
    let output = Output::start(wr, config.json.max_bytes);
    let backpressure = Backpressure::new(&config);
    let mut status = link.status();
    let mut session = ClientSession {
        app: app.clone(),
        output: output.clone(),
        calls: JoinSet::new(),
        protocol: mcp::Protocol::default(),
        warnings: PeerWarnings::new(peer),
    };
    tracing::debug!(slug = link.slug(), ?peer, "client connected");

    let ended = loop {
        // Backpressure first: a free in-flight slot and room in the output buffer.
        let permit = tokio::select! {
            p = backpressure.permit(&output) => match p { Ok(p) => p, Err(_) => break "closed" },
            _ = until(&mut status, |s| *s != LinkStatus::Enabled) => break "app left",
            _ = until(&mut shutdown, |s| *s) => break "shutdown",
        };
        let line = tokio::select! {
            l = lines.next_line() => l,
            _ = until(&mut status, |s| *s != LinkStatus::Enabled) => break "app left",
            _ = until(&mut shutdown, |s| *s) => break "shutdown",
        };
        match line {
            Ok(Some(Line::Complete(bytes))) => {
                session.handle_line(&bytes, permit).await;
                // Fairness (SPEC S8): lines already buffered are not worked through in one go;
                // every other runnable connection gets its turn between two lines (a line the
                // reader waited for came after such a turn already).
                if !lines.waited() {
                    tokio::task::yield_now().await;
                }
            }
            Ok(Some(Line::TooLong)) => {
                output.send(session.unreadable_id(json1::too_long_response(&config.json))).await;
            }
            Ok(None) => break "eof",
            Err(e) => {
                tracing::info!(slug = link.slug(), ?peer, "client connection ended: {e}");
                break "read error";
            }
        }
        // Reap finished calls so the set stays as small as the in-flight bound.
        while session.calls.try_join_next().is_some() {}
    };
    tracing::debug!(slug = link.slug(), ?peer, reason = ended, "client stops reading");
    let ClientSession { calls, .. } = session;
    let finish = finish(calls, output, &config, peer);
    match app.caller() {
        Some(caller) => caller.fate().close(ended, finish).await,
        None => _ = finish.await,
    }
}

/// Lets the calls already running deliver their responses and closes the connection, within
/// the request deadline plus the drain time; a client that never takes them is dropped.
/// True when every response was written.
async fn finish(
    mut calls: JoinSet<()>,
    output: Output,
    config: &super::EngineConfig,
    peer: PeerInfo,
) -> bool {
    let finish = async {
        while calls.join_next().await.is_some() {}
        output.close().await
    };
    match tokio::time::timeout(config.request_deadline + config.shutdown_drain, finish).await {
        Ok(delivered) => delivered,
        Err(_) => {
            tracing::warn!(?peer, "client never took its responses; dropped");
            if let Some(writer) = output.take_writer() {
                writer.abort();
            }
            false
        }
    }
}

/// One client session's protocol state.
struct ClientSession {
    app: App,
    output: Output,
    calls: JoinSet<()>,
    /// JSON-1, MCP or not yet decided.
    protocol: mcp::Protocol,
    /// The rate limit of the warnings this client can cause.
    warnings: PeerWarnings,
}

impl ClientSession {
    /// An error line the JSON-1 envelope checks built for a line whose id could not be read
    /// (`"id": null`), as this connection must send it: unchanged on JSON-1 and undecided
    /// connections (JSON-RPC 2.0), without the `id` member once MCP is selected (SPEC S6).
    fn unreadable_id(&self, line: Vec<u8>) -> Vec<u8> {
        if self.protocol.is_mcp() {
            mcp::mcp_error_line(&line, &self.app.link().config().json).unwrap_or(line)
        } else {
            line
        }
    }

    /// Handles one complete line: answers at once, stays silent (notifications), runs a local
    /// method (answered from the daemon's own state) here, or spawns a call to the app, which
    /// keeps `permit` (one in-flight slot) until its response is buffered.
    ///
    /// Local methods run on the connection's own task, one at a time, so a connection that
    /// pipelines costly ones (a search of thousands of actions) is one runnable task among the
    /// others, not one per request; their long loops yield inside (`methods.rs`).
    async fn handle_line(&mut self, line: &[u8], permit: CallPermit) {
        let link = self.app.link();
        let limits = link.config().json;
        let prepared = if matches!(self.protocol, mcp::Protocol::Json1) {
            json1::prepare(line, &limits, link.slug(), &mut self.warnings)
        } else {
            let envelope = match json1::parse_envelope(line, &limits, true) {
                Ok(envelope) => envelope,
                Err(Some(response)) => return self.output.send(self.unreadable_id(response)).await,
                Err(None) => return,
            };
            let params = jfgui_proto::Value::Object(envelope.params);
            let incoming = mcp::Incoming {
                id: envelope.id.as_ref(),
                method: Some(&envelope.method),
                params: Some(&params),
            };
            match self.protocol.route(&incoming, &mut self.warnings) {
                mcp::Route::Json1 => {
                    // Built as an object just above; handed back to the JSON-1 checks.
                    let jfgui_proto::Value::Object(params) = params else { return };
                    let envelope = json1::Envelope { params, ..envelope };
                    json1::prepare_envelope(envelope, &limits, link.slug(), &mut self.warnings)
                }
                mcp::Route::Silent => return,
                mcp::Route::Answer(reply) => {
                    let line = mcp::response_line(envelope.id.as_ref(), reply, &limits);
                    return self.output.send(line).await;
                }
                mcp::Route::Mcp(pending) if pending.is_local() => {
                    if let Some(reply) = pending.run(&self.app).await {
                        let response = mcp::response_line(envelope.id.as_ref(), reply, &limits);
                        self.output.send(response).await;
                    }
                    return;
                }
                mcp::Route::Mcp(pending) => {
                    let app = self.app.clone().speaking(pending.protocol());
                    let output = self.output.clone();
                    let id = envelope.id;
                    self.calls.spawn(async move {
                        if let Some(reply) = pending.run(&app).await {
                            let response = mcp::response_line(id.as_ref(), reply, &limits);
                            permit.bytes.observe(response.len());
                            output.send(response).await;
                        }
                        drop(permit);
                    });
                    return;
                }
            }
        };
        match prepared {
            json1::Prepared::Respond(bytes) => self.output.send(bytes).await,
            json1::Prepared::Silent => {}
            json1::Prepared::Call(call) if call.method.is_local() => {
                let response = json1::execute(&self.app, call).await;
                self.output.send(response).await;
            }
            json1::Prepared::Call(call) => {
                let app = self.app.clone();
                let output = self.output.clone();
                self.calls.spawn(async move {
                    let response = json1::execute(&app, call).await;
                    permit.bytes.observe(response.len());
                    output.send(response).await;
                    drop(permit);
                });
            }
        }
    }
}

/// What a connection's next request must wait for: a free in-flight slot, room in the output
/// buffer, and its share of the response-byte budget ([`Admission`]).
struct Backpressure {
    in_flight: Arc<Semaphore>,
    admission: Admission,
}

impl Backpressure {
    fn new(config: &super::EngineConfig) -> Backpressure {
        Backpressure {
            in_flight: Arc::new(Semaphore::new(config.max_in_flight_per_client.max(1))),
            admission: Admission::new(config.json.max_bytes, config.max_in_flight_per_client),
        }
    }

    /// Waits until the next request may be read; an error means the connection is closing.
    async fn permit(&self, output: &Output) -> Result<CallPermit, tokio::sync::AcquireError> {
        let count = self.in_flight.clone().acquire_owned().await?;
        output.wait_room().await;
        let bytes = self.admission.acquire().await?;
        Ok(CallPermit { _count: count, bytes })
    }
}

/// What a running call holds: an in-flight slot and its share of the response-byte budget.
struct CallPermit {
    _count: OwnedSemaphorePermit,
    bytes: BytesPermit,
}

/// Maximum-size responses a connection's running calls may bring back at once (beyond the
/// one buffered for writing). With 1 MiB lines this bounds a client that stops reading to
/// about 4 MiB of waiting responses plus the buffered one, instead of 64 MiB.
const RESPONSES_IN_FLIGHT: usize = 4;

/// Admission of calls by the response bytes they are expected to bring back.
///
/// A response's size is unknown until the app answers, so each call reserves the connection's
/// current estimate from a budget of [`RESPONSES_IN_FLIGHT`] maximum-size responses. The
/// estimate starts at the maximum (a new connection gets a few calls at once, like TCP slow
/// start), follows every response up at once, and halves per smaller response, so after a
/// handful of small responses pipelined calls run `max_in_flight_per_client` at a time. A client that first
/// drives the estimate down with small responses and then pipelines large ones can still have
/// up to `max_in_flight_per_client` large responses running: the count bound stays the backstop.
#[derive(Clone)]
struct Admission {
    budget: Arc<Semaphore>,
    estimate: Arc<AtomicUsize>,
    floor: usize,
    ceiling: usize,
}

impl Admission {
    fn new(max_line: usize, max_in_flight: usize) -> Admission {
        let ceiling = max_line.clamp(1, u32::MAX as usize / RESPONSES_IN_FLIGHT);
        let total = ceiling * RESPONSES_IN_FLIGHT;
        Admission {
            budget: Arc::new(Semaphore::new(total)),
            estimate: Arc::new(AtomicUsize::new(ceiling)),
            // Small responses: the in-flight count, not the bytes, is the bound.
            floor: (total / max_in_flight.max(1)).max(1),
            ceiling,
        }
    }

    async fn acquire(&self) -> Result<BytesPermit, tokio::sync::AcquireError> {
        let want = self.estimate.load(Ordering::Relaxed).clamp(self.floor, self.ceiling);
        let permit = self.budget.clone().acquire_many_owned(want as u32).await?;
        Ok(BytesPermit { _permit: permit, admission: self.clone() })
    }
}

/// A call's reservation from the [`Admission`] budget, released when its response is queued.
struct BytesPermit {
    _permit: OwnedSemaphorePermit,
    admission: Admission,
}

impl BytesPermit {
    /// Feeds a response's size into the estimate.
    fn observe(&self, len: usize) {
        let _ = self
            .admission
            .estimate
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |e| Some(len.max(e / 2)));
    }
}

/// The connection's writer: a task draining a queue of encoded lines, with the queue bounded
/// in bytes. `buffered` counts bytes queued or being written.
#[derive(Clone)]
struct Output {
    queue: mpsc::UnboundedSender<Vec<u8>>,
    buffered: Arc<watch::Sender<usize>>,
    limit: usize,
    writer: Arc<std::sync::Mutex<Option<JoinHandle<bool>>>>,
}

impl Output {
    fn start<W: AsyncWrite + Send + 'static>(wr: WriteHalf<W>, limit: usize) -> Output {
        let (queue, rx) = mpsc::unbounded_channel();
        let buffered = Arc::new(watch::Sender::new(0usize));
        let writer = tokio::spawn(write_lines(wr, rx, buffered.clone()));
        Output {
            queue,
            buffered,
            limit: limit.max(1),
            writer: Arc::new(std::sync::Mutex::new(Some(writer))),
        }
    }

    /// Waits until less than `limit` bytes are buffered.
    async fn wait_room(&self) {
        let mut rx = self.buffered.subscribe();
        let _ = rx.wait_for(|b| *b < self.limit).await;
    }

    /// Queues one response line (`line` without its newline). Waits for room first, and takes
    /// the room atomically, so the buffer never holds more than `limit` plus one response.
    async fn send(&self, mut line: Vec<u8>) {
        line.push(b'\n');
        let len = line.len();
        loop {
            self.wait_room().await;
            let limit = self.limit;
            let taken = self.buffered.send_if_modified(|b| {
                if *b < limit {
                    *b += len;
                    true
                } else {
                    false
                }
            });
            if taken {
                break;
            }
        }
        if self.queue.send(line).is_err() {
            // The writer ended (transport broken): nothing will ever drain this.
            self.buffered.send_modify(|b| *b -= len);
        }
    }

    fn take_writer(&self) -> Option<JoinHandle<bool>> {
        self.writer.lock().unwrap_or_else(|e| e.into_inner()).take()
    }

    /// Writes what is queued, then shuts the write side down. True when every line was
    /// written.
    async fn close(&self) -> bool {
        // An empty line is never a response; it tells the writer to finish.
        let _ = self.queue.send(Vec::new());
        match self.take_writer() {
            Some(writer) => {
                let abort = writer.abort_handle();
                let _stop = AbortOnDrop(abort);
                writer.await.unwrap_or(false)
            }
            None => false,
        }
    }
}

/// Stops the writer if closing is abandoned (a client that never reads).
struct AbortOnDrop(tokio::task::AbortHandle);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Lines already queued are coalesced into one write up to this size, so pipelined responses
/// cost one syscall instead of one each.
const COALESCE: usize = 64 * 1024;

/// Most bytes written before the writer lets other tasks run: a client that reads a large
/// answer as fast as it comes would otherwise hold the thread for the whole answer (fairness:
/// an 800 KB `actions/describe` answer is a dozen slices).
const WRITE_SLICE: usize = 64 * 1024;

async fn write_sliced<W: AsyncWrite>(wr: &mut WriteHalf<W>, bytes: &[u8]) -> std::io::Result<()> {
    let mut slices = bytes.chunks(WRITE_SLICE).peekable();
    while let Some(slice) = slices.next() {
        wr.write_all(slice).await?;
        if slices.peek().is_some() {
            tokio::task::yield_now().await;
        }
    }
    Ok(())
}

async fn write_lines<W: AsyncWrite>(
    mut wr: WriteHalf<W>,
    mut rx: mpsc::UnboundedReceiver<Vec<u8>>,
    buffered: Arc<watch::Sender<usize>>,
) -> bool {
    let mut finished = false;
    while !finished {
        let Some(mut batch) = rx.recv().await else { break };
        if batch.is_empty() {
            break;
        }
        while batch.len() < COALESCE {
            match rx.try_recv() {
                Ok(line) if line.is_empty() => {
                    finished = true;
                    break;
                }
                Ok(line) => batch.extend_from_slice(&line),
                Err(_) => break,
            }
        }
        let len = batch.len();
        let written = write_sliced(&mut wr, &batch).await;
        buffered.send_modify(|b| *b -= len);
        if let Err(e) = written {
            tracing::debug!("client write failed: {e}");
            // Keep accounting right for senders still queuing; their lines go nowhere.
            rx.close();
            while let Some(line) = rx.recv().await {
                buffered.send_modify(|b| *b -= line.len());
            }
            return false;
        }
    }
    let _ = wr.shutdown().await;
    true
}
