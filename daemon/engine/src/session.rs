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
//! [`ClientSession::handle_line`]), and only calls that wait for the app run concurrently:
//! as futures this same task polls whatever else it waits for ([`Running`]), not a task each,
//! so a call costs no spawn and no wake-up of another task on the client's side; its
//! response goes out from here when nothing is buffered before it ([`Output`]).
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
mod running;

pub(crate) use mcp::{AllApps, EngineApps, serve_all_apps};
pub use mcp::{OfflineMcp, drop_non_mcp_error_id, is_mcp_request_id, mcp_error_line};

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc, watch};
use tokio::task::JoinHandle;

pub use observer::{Caller, ClientFate};
use peer_warnings::PeerWarnings;
pub use replies::App;
use running::{Call, Running};

use super::lines::{Line, LineReader};
use super::link::LinkStatus;
use super::partial::Partial;
use super::sink::{Sink, write_now};
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
        protocol: mcp::Protocol::default(),
        warnings: PeerWarnings::new(peer),
    };
    // The calls waiting for the app run here, polled by this task whatever it waits for.
    let mut calls = Running::new(output.clone());
    if let Some(caller) = app.caller() {
        calls = calls.settling(caller.fate().clone());
    }
    tracing::debug!(slug = link.slug(), ?peer, "client connected");

    // The app leaving or shutdown: one future for the connection's life, so its wake-up
    // registrations are made once, not twice per line. It is polled in every `select!` below,
    // several times per call, and polling the waits inside takes their `Notify` locks; so after
    // the first poll (which registers them) they are polled again only once one of the two
    // values changed (a version check: a change always comes with that version's bump).
    let mut seen = (status.clone(), shutdown.clone());
    let waits = async {
        tokio::select! {
            biased;
            _ = until(&mut status, |s| *s != LinkStatus::Enabled) => "app left",
            _ = until(&mut shutdown, |s| *s) => "shutdown",
        }
    };
    tokio::pin!(waits);
    let mut registered = false;
    let mut stop = std::future::poll_fn(move |cx| {
        let (status, shutdown) = &mut seen;
        // A closed channel counts as changed: the waits then complete.
        let changed =
            status.has_changed().unwrap_or(true) || shutdown.has_changed().unwrap_or(true);
        if registered && !changed {
            return std::task::Poll::Pending;
        }
        registered = true;
        // Marked before the poll, so a change during it is seen next time.
        status.mark_unchanged();
        shutdown.mark_unchanged();
        waits.as_mut().poll(cx)
    });
    // In the loop's `select!`s the calls are polled first (a call just added starts before
    // the next line is read), and the app leaving or shutdown win over reading more. `stop`
    // is never polled again once it completed: the loop ends there.
    let ended = loop {
        // Backpressure first: a free in-flight slot and room in the output buffer.
        let permit = tokio::select! {
            biased;
            () = calls.run() => unreachable!("Running::run never completes"),
            reason = &mut stop => break reason,
            p = backpressure.permit(&output) => match p { Ok(p) => p, Err(_) => break "closed" },
        };
        let line = tokio::select! {
            biased;
            () = calls.run() => unreachable!("Running::run never completes"),
            reason = &mut stop => break reason,
            l = lines.next_line() => l,
        };
        match line {
            Ok(Some(Line::Complete(bytes))) => {
                if let Some(call) = calls.beside(session.handle_line(&bytes, permit)).await {
                    calls.push(call);
                }
                // Fairness (SPEC S8): lines already buffered are not worked through in one go;
                // every other runnable connection gets its turn between two lines (a line the
                // reader waited for came after such a turn already).
                if !lines.waited() {
                    tokio::task::yield_now().await;
                }
            }
            Ok(Some(Line::TooLong)) => {
                let response = session.unreadable_id(json1::too_long_response(&config.json));
                calls.beside(output.send(response)).await;
            }
            Ok(None) => break "eof",
            Err(e) => {
                tracing::info!(slug = link.slug(), ?peer, "client connection ended: {e}");
                break "read error";
            }
        }
    };
    tracing::debug!(slug = link.slug(), ?peer, reason = ended, "client stops reading");
    let finish = finish(calls, output, &config, peer);
    match app.caller() {
        Some(caller) => caller.fate().close(ended, finish).await,
        None => _ = finish.await,
    }
}

/// Lets the calls already running deliver their responses and closes the connection, within
/// the request deadline plus the drain time; a client that never takes them is dropped, and
/// so are the calls still running then.
/// True when every response was written.
async fn finish(
    mut calls: Running,
    output: Output,
    config: &super::EngineConfig,
    peer: PeerInfo,
) -> bool {
    let finish = async {
        calls.finish().await;
        output.close().await
    };
    match tokio::time::timeout(config.request_deadline + config.shutdown_drain, finish).await {
        Ok(delivered) => delivered,
        Err(_) => {
            tracing::warn!(?peer, "client never took its responses; dropped");
            output.abandon();
            false
        }
    }
}

/// One client session's protocol state.
struct ClientSession {
    app: App,
    output: Output,
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
    /// method (answered from the daemon's own state) here, or returns a call to the app for
    /// the connection to run beside the others ([`Running`]); the call keeps `permit` (one
    /// in-flight slot) until its response is buffered or written.
    ///
    /// Local methods run here, one at a time, so a connection that pipelines costly ones (a
    /// search of thousands of actions) is one runnable task among the others, not one per
    /// request; their long loops yield inside (`methods.rs`).
    async fn handle_line(&mut self, line: &[u8], permit: CallPermit) -> Option<Call> {
        let link = self.app.link();
        let limits = link.config().json;
        let prepared = if matches!(self.protocol, mcp::Protocol::Json1) {
            json1::prepare(line, &limits, link.slug(), &mut self.warnings)
        } else {
            let envelope = match json1::parse_envelope(line, &limits, true) {
                Ok(envelope) => envelope,
                Err(Some(response)) => {
                    self.output.send(self.unreadable_id(response)).await;
                    return None;
                }
                Err(None) => return None,
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
                    let jfgui_proto::Value::Object(params) = params else { return None };
                    let envelope = json1::Envelope { params, ..envelope };
                    json1::prepare_envelope(envelope, &limits, link.slug(), &mut self.warnings)
                }
                mcp::Route::Silent => return None,
                mcp::Route::Answer(reply) => {
                    let line = mcp::response_line(envelope.id.as_ref(), reply, &limits);
                    self.output.send(line).await;
                    return None;
                }
                mcp::Route::Mcp(pending) if pending.is_local() => {
                    if let Some(reply) = pending.run(&self.app).await {
                        let response = mcp::response_line(envelope.id.as_ref(), reply, &limits);
                        self.output.send(response).await;
                    }
                    return None;
                }
                mcp::Route::Mcp(pending) => {
                    let app = self.app.clone().speaking(pending.protocol());
                    let output = self.output.clone();
                    let id = envelope.id;
                    return Some(Box::pin(async move {
                        if let Some(reply) = pending.run(&app).await {
                            let response = mcp::response_line(id.as_ref(), reply, &limits);
                            permit.bytes.observe(response.len());
                            output.send(response).await;
                        }
                        drop(permit);
                    }));
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
                return Some(Box::pin(async move {
                    let response = json1::execute(&app, call).await;
                    permit.bytes.observe(response.len());
                    output.send(response).await;
                    drop(permit);
                }));
            }
        }
        None
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

/// The connection's writer. A response goes out at once from the task that has it when
/// nothing is buffered and the socket takes it (no hop to another task); otherwise (bytes
/// queued, a slow reader, a large response's rest) it is queued for the writer task, which
/// drains the queue with coalesced writes. The queue is bounded in bytes: `buffered` counts
/// bytes queued or being written by the writer task.
///
/// Lines never interleave: a line is written directly (or held, see [`Output::hold`]) only
/// when `buffered` is 0 and the sink is idle (not taken by the writer task), and that check
/// with the write and every queuing happen under the `direct` lock. So lines go out in the
/// order they were sent.
#[derive(Clone)]
struct Output {
    queue: mpsc::UnboundedSender<Vec<u8>>,
    buffered: Arc<watch::Sender<usize>>,
    limit: usize,
    writer: Arc<Mutex<Option<JoinHandle<bool>>>>,
    direct: Arc<Mutex<Direct>>,
}

/// What the direct path shares with the writer task.
struct Direct {
    /// The write half while the writer task is not writing with it; `None` while it writes
    /// and once it ended.
    sink: Option<Sink>,
    /// Whether lines are being held to go out in one write ([`Output::hold`]).
    holding: bool,
    /// The lines held; only while nothing is buffered, at most `min(limit, COALESCE)` bytes.
    held: Vec<u8>,
}

impl Output {
    fn start<W: AsyncWrite + Send + Unpin + 'static>(wr: W, limit: usize) -> Output {
        let (queue, rx) = mpsc::unbounded_channel();
        let buffered = Arc::new(watch::Sender::new(0usize));
        let direct = Direct { sink: Some(Box::new(wr)), holding: false, held: Vec::new() };
        let direct = Arc::new(Mutex::new(direct));
        let writer = tokio::spawn(write_lines(direct.clone(), rx, buffered.clone()));
        Output {
            queue,
            buffered,
            limit: limit.max(1),
            writer: Arc::new(Mutex::new(Some(writer))),
            direct,
        }
    }

    /// Holds the lines sent from now until [`Output::release`] to write them together: the
    /// calls the connection polls in one go (answers that came from the app in one read) cost
    /// one write, as they did when the writer task coalesced them.
    fn hold(&self) {
        lock(&self.direct).holding = true;
    }

    /// Writes the lines held since [`Output::hold`].
    fn release(&self) {
        let mut direct = lock(&self.direct);
        direct.holding = false;
        let held = std::mem::take(&mut direct.held);
        if !held.is_empty() {
            self.write_direct(&mut direct, held);
        }
    }

    /// Waits until less than `limit` bytes are buffered.
    async fn wait_room(&self) {
        if *self.buffered.borrow() < self.limit {
            return;
        }
        let mut rx = self.buffered.subscribe();
        let _ = rx.wait_for(|b| *b < self.limit).await;
    }

    /// Sends one response line (`line` without its newline): written at once when nothing is
    /// buffered, else queued. Waits for room first, and takes the room atomically, so the
    /// buffer never holds more than `limit` plus one response.
    async fn send(&self, mut line: Vec<u8>) {
        line.push(b'\n');
        loop {
            self.wait_room().await;
            match self.write_or_queue(line) {
                Ok(()) => return,
                Err(unsent) => line = unsent,
            }
        }
    }

    /// Writes `line` now (or holds it) if nothing is buffered, else queues it; gives `line`
    /// back when there is no room (another sender took it first).
    fn write_or_queue(&self, line: Vec<u8>) -> Result<(), Vec<u8>> {
        let mut direct = lock(&self.direct);
        let hold_max = self.limit.min(COALESCE);
        if !direct.held.is_empty() && direct.held.len() + line.len() > hold_max {
            let held = std::mem::take(&mut direct.held);
            self.write_direct(&mut direct, held);
        }
        if *self.buffered.borrow() == 0 && direct.sink.is_some() {
            if direct.holding && line.len() <= hold_max {
                if direct.held.is_empty() {
                    direct.held = line;
                } else {
                    direct.held.extend_from_slice(&line);
                }
            } else {
                self.write_direct(&mut direct, line);
            }
            return Ok(());
        }
        let len = line.len();
        let limit = self.limit;
        let taken = self.buffered.send_if_modified(|b| {
            if *b < limit {
                *b += len;
                true
            } else {
                false
            }
        });
        if !taken {
            return Err(line);
        }
        self.enqueue(line, len);
        Ok(())
    }

    /// Writes what the socket takes of `bytes` now and queues the rest. Only while nothing is
    /// buffered and the sink is idle (so the rest is within `limit` plus one response).
    fn write_direct(&self, direct: &mut Direct, mut bytes: Vec<u8>) {
        // At most the writer's fairness slice, as the writer task would write.
        let slice = &bytes[..bytes.len().min(WRITE_SLICE)];
        let written = direct.sink.as_mut().map_or(0, |sink| write_now(sink, slice));
        if written == bytes.len() {
            return;
        }
        bytes.drain(..written);
        let len = bytes.len();
        self.buffered.send_modify(|b| *b += len);
        self.enqueue(bytes, len);
    }

    /// Hands `len` bytes already counted in `buffered` to the writer task.
    fn enqueue(&self, bytes: Vec<u8>, len: usize) {
        if self.queue.send(bytes).is_err() {
            // The writer ended (transport broken): nothing will ever drain this.
            self.buffered.send_modify(|b| *b -= len);
        }
    }

    fn take_writer(&self) -> Option<JoinHandle<bool>> {
        lock(&self.writer).take()
    }

    /// Stops writing for good: the writer task ends and the write half is dropped.
    fn abandon(&self) {
        if let Some(writer) = self.take_writer() {
            writer.abort();
        }
        lock(&self.direct).sink = None;
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

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
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

async fn write_sliced(wr: &mut Sink, bytes: &[u8]) -> std::io::Result<()> {
    let mut slices = bytes.chunks(WRITE_SLICE).peekable();
    while let Some(slice) = slices.next() {
        wr.write_all(slice).await?;
        if slices.peek().is_some() {
            tokio::task::yield_now().await;
        }
    }
    Ok(())
}

/// The writer task: takes the write half from `direct` for each batch of queued lines and
/// puts it back after, so a response with nothing before it can be written directly meanwhile.
async fn write_lines(
    direct: Arc<Mutex<Direct>>,
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
        // The sink is gone only once writing was given up (`Output::abandon`).
        let sink = lock(&direct).sink.take();
        let written = match sink {
            Some(mut wr) => {
                let written = write_sliced(&mut wr, &batch).await;
                if written.is_ok() {
                    lock(&direct).sink = Some(wr);
                }
                written
            }
            None => Err(std::io::ErrorKind::BrokenPipe.into()),
        };
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
    let sink = lock(&direct).sink.take();
    if let Some(mut wr) = sink {
        let _ = wr.shutdown().await;
    }
    true
}

#[cfg(test)]
mod output_tests {
    use std::task::{Context, Poll, Waker};

    use tokio::io::AsyncReadExt;

    use super::*;

    /// What `rd` holds now, read without waiting: only what this task wrote is there.
    fn read_now(rd: &mut tokio::io::DuplexStream) -> Vec<u8> {
        let mut buf = [0u8; 64];
        let mut read = std::pin::pin!(rd.read(&mut buf));
        match read.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
            Poll::Ready(Ok(n)) => buf[..n].to_vec(),
            _ => Vec::new(),
        }
    }

    #[tokio::test]
    async fn a_line_with_nothing_before_it_is_written_at_once() {
        let (wr, mut rd) = tokio::io::duplex(1024);
        let output = Output::start(wr, 1024);
        output.send(b"one".to_vec()).await;
        assert_eq!(read_now(&mut rd), b"one\n");
        assert!(output.close().await);
    }

    #[tokio::test]
    async fn held_lines_go_out_in_one_write_in_order() {
        let (wr, mut rd) = tokio::io::duplex(1024);
        let output = Output::start(wr, 1024);
        output.hold();
        output.send(b"a".to_vec()).await;
        output.send(b"b".to_vec()).await;
        assert!(read_now(&mut rd).is_empty(), "nothing written while held");
        output.release();
        assert_eq!(read_now(&mut rd), b"a\nb\n");
        assert!(output.close().await);
    }

    #[tokio::test]
    async fn what_the_socket_does_not_take_is_written_after_in_order() {
        // Room for 8 bytes in the pipe: the first line is written in part, its rest and the
        // lines after it go through the writer task, in order.
        let (wr, mut rd) = tokio::io::duplex(8);
        let output = Output::start(wr, 1 << 20);
        output.send(b"0123456789abcdef".to_vec()).await;
        output.send(b"x".to_vec()).await;
        output.hold();
        output.send(b"y".to_vec()).await;
        output.release();
        assert_eq!(read_now(&mut rd), b"01234567");
        let reader = tokio::spawn(async move {
            let mut all = Vec::new();
            rd.read_to_end(&mut all).await.map(|_| all)
        });
        assert!(output.close().await);
        assert_eq!(reader.await.unwrap().unwrap(), b"89abcdef\nx\ny\n");
    }
}
