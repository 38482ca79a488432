//! The reading side of one app connection: frames in (bounded, with the partial-frame deadline),
//! correlated replies and the app's other messages out to the engine; the calls' deadlines (one
//! timer per link); the writer task's start (`calls.rs`, over `output.rs`) and the drain on
//! shutdown.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use jfgui_proto::channel::{
    AppMessage, Bye, DaemonMessage, FrameDecoder, FrameError, Outcome, TaskSnapshot,
    decode_app_message, encode_frame,
};
use jfgui_proto::{Limits, Reason};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite};
use tokio::sync::{oneshot, watch};
use tokio::task::JoinHandle;

use super::calls::{CallOutcome, Link, Waiter, write_requests};
use crate::partial::{Partial, PartialError};
use crate::{EngineConfig, until};

/// Bytes asked of the transport per read.
const READ_CHUNK: usize = 16 * 1024;

/// What the app said, for the engine to act on, in channel order.
#[derive(Debug)]
pub enum Incoming {
    /// A reply to a call still waiting: its caller and the app's outcome, as it came.
    Reply(Waiter, CallOutcome),
    /// A task state change.
    Task(TaskSnapshot),
    /// The app's dispatcher was enabled or disabled.
    Enabled(bool),
}

/// Why a host channel ended.
#[derive(Debug)]
pub enum LinkEnd {
    /// The app closed the connection.
    Eof,
    /// The app said `bye` with this reason.
    Bye(String),
    /// The transport failed.
    Io(std::io::Error),
    /// A partial frame missed its deadline or the daemon-wide budget (`partial.rs`).
    Partial(PartialError),
    /// A frame broke the channel's rules.
    Frame(FrameError),
    /// A message out of sequence.
    Violation(&'static str),
    /// The daemon is shutting down (after the drain).
    Shutdown,
}

impl LinkEnd {
    /// What the calls and tasks still outstanding fail with.
    pub fn reason(&self) -> Reason {
        if matches!(self, LinkEnd::Shutdown) {
            Reason::DaemonShutdown
        } else {
            Reason::AppDisconnected
        }
    }

    /// An orderly end (not worth a warning).
    pub fn is_orderly(&self) -> bool {
        matches!(self, LinkEnd::Shutdown | LinkEnd::Eof | LinkEnd::Bye(_))
    }
}

impl fmt::Display for LinkEnd {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LinkEnd::Eof => f.write_str("end of stream"),
            LinkEnd::Bye(reason) => write!(f, "the app said bye ({reason})"),
            LinkEnd::Io(e) => write!(f, "transport error: {e}"),
            LinkEnd::Partial(e) => write!(f, "{e} (frame)"),
            LinkEnd::Frame(e) => write!(f, "bad frame: {e}"),
            LinkEnd::Violation(m) => write!(f, "protocol violation: {m}"),
            LinkEnd::Shutdown => f.write_str("daemon shutdown"),
        }
    }
}

/// Reads frames off the transport, enforcing the frame bound on the header, and the partial
/// deadline and the daemon-wide budget of buffered input (`partial.rs`), from the first byte
/// of `hello` on.
pub(super) struct FrameReader<R> {
    inner: R,
    /// What one read returned, before it is fed to the decoder. Kept (with its capacity) across
    /// reads: a fresh zeroed buffer per read showed up as a memset in the profile.
    chunk: Vec<u8>,
    /// Body length of the last frame returned (for the registration budget).
    last_len: usize,
    decoder: FrameDecoder,
    limits: Limits,
    partial: Partial,
}

impl<R: AsyncRead + Unpin> FrameReader<R> {
    pub(super) fn new(inner: R, config: &EngineConfig, partial: Partial) -> Self {
        FrameReader {
            inner,
            chunk: Vec::with_capacity(READ_CHUNK),
            last_len: 0,
            decoder: FrameDecoder::new(config.max_frame),
            limits: config.frame_limits(),
            partial,
        }
    }

    /// Body length of the last frame returned.
    pub(super) fn last_len(&self) -> usize {
        self.last_len
    }

    /// The next message. Cancel-safe: bytes are fed to the decoder right after each read.
    pub(super) async fn next(&mut self) -> Result<AppMessage, LinkEnd> {
        loop {
            if let Some(body) = self.decoder.next_body().map_err(LinkEnd::Frame)? {
                self.last_len = body.len();
                // Decoded straight from the decoder's buffer, before it is told of the take.
                let message = decode_app_message(body, &self.limits).map_err(LinkEnd::Frame);
                let decoder = &self.decoder;
                self.partial.message_taken(decoder.buffered_len(), decoder.has_partial());
                return message;
            }
            self.chunk.clear();
            // `read_buf` fills the spare capacity without zeroing it first.
            let read = self.inner.read_buf(&mut self.chunk);
            let n = match self.partial.due() {
                Some(due) => tokio::time::timeout_at(due, read)
                    .await
                    .map_err(|_| LinkEnd::Partial(PartialError::Deadline))?
                    .map_err(LinkEnd::Io)?,
                None => read.await.map_err(LinkEnd::Io)?,
            };
            if n == 0 {
                return Err(LinkEnd::Eof);
            }
            self.decoder.feed(&self.chunk[..n]);
            let decoder = &self.decoder;
            self.partial
                .track(decoder.buffered_len(), decoder.has_partial())
                .map_err(LinkEnd::Partial)?;
        }
    }
}

/// A registered app's connection: the reading side here, the writing side shared by the
/// callers and a task of its own (`output.rs`; so a slow app reader never stalls the replies).
pub struct LinkReader<R> {
    app: Link,
    reader: FrameReader<R>,
    writer: JoinHandle<()>,
    bye: oneshot::Sender<Vec<u8>>,
    /// Completes when shutdown starts. Made once: a wait made per message would register
    /// for its wake-up when first polled and unregister again when dropped, every time.
    shutdown: Wait,
    /// Completes when a call arrived while no deadline was watched (or a notice was held while
    /// no flush was armed); made again each time it completed.
    deadline_added: Wait,
    /// Set on shutdown: outstanding calls may still be answered until then.
    drain_until: Option<tokio::time::Instant>,
    /// Fires at the earliest pending call's deadline while `watching`; kept registered across
    /// calls, so a steady stream of calls arms no new timer (see `calls.rs`).
    deadline: Pin<Box<tokio::time::Sleep>>,
    watching: bool,
}

impl<R: AsyncRead + Unpin> LinkReader<R> {
    /// Hands `wr` to `app`'s calls and starts the writer task of its requests.
    pub(super) fn start<W: AsyncWrite + Send + Unpin + 'static>(
        app: Link,
        reader: FrameReader<R>,
        wr: W,
        mut shutdown: watch::Receiver<bool>,
    ) -> Self {
        let (bye, bye_rx) = oneshot::channel();
        app.attach_writer(Box::new(wr));
        let writer = tokio::spawn(write_requests(app.clone(), bye_rx));
        let deadline = Box::pin(tokio::time::sleep(Duration::ZERO));
        let shutdown = Box::pin(async move { until(&mut shutdown, |s| *s).await });
        let deadline_added = deadline_added(&app);
        LinkReader {
            app,
            reader,
            writer,
            bye,
            shutdown,
            deadline_added,
            drain_until: None,
            deadline,
            watching: false,
        }
    }

    /// The next thing the app said, in channel order; replies already matched to their call
    /// (unknown ones are dropped and logged). On shutdown, calls stop being taken and the
    /// outstanding ones are waited for up to `shutdown_drain`; then the link ends with
    /// [`LinkEnd::Shutdown`].
    pub async fn next(&mut self) -> Result<Incoming, LinkEnd> {
        loop {
            if self.drain_until.is_some() && self.app.drained() {
                return Err(LinkEnd::Shutdown);
            }
            let message = tokio::select! {
                m = self.reader.next() => m?,
                // Never polled again once it completed: `drain_until` is set then.
                _ = self.shutdown.as_mut(), if self.drain_until.is_none() => {
                    self.app.stop_calls(Reason::DaemonShutdown);
                    let drain = self.app.config().shutdown_drain;
                    self.drain_until = Some(tokio::time::Instant::now() + drain);
                    continue;
                }
                _ = sleep_until_opt(self.drain_until) => return Err(LinkEnd::Shutdown),
                _ = self.deadline_added.as_mut() => {
                    self.deadline_added = deadline_added(&self.app);
                    self.watch_deadlines();
                    continue;
                }
                _ = self.deadline.as_mut(), if self.watching => {
                    self.watch_deadlines();
                    continue;
                }
            };
            match message {
                AppMessage::Reply(reply) => {
                    if let Some(waiter) = self.app.complete(reply.id) {
                        let outcome = match reply.outcome {
                            Outcome::Ok(result) => Ok(result),
                            Outcome::Error(error) => Err(error),
                        };
                        return Ok(Incoming::Reply(waiter, outcome));
                    }
                }
                AppMessage::Task(snapshot) => return Ok(Incoming::Task(snapshot)),
                AppMessage::Enabled(state) => return Ok(Incoming::Enabled(state.enabled)),
                AppMessage::Bye(bye) => return Err(LinkEnd::Bye(bye.reason)),
                AppMessage::Hello(_) | AppMessage::Actions(_) | AppMessage::Ready(_) => {
                    return Err(LinkEnd::Violation("registration message after ready"));
                }
            }
        }
    }

    /// Times out the calls past their deadline and sets the timer for the next one.
    fn watch_deadlines(&mut self) {
        let next = self.app.expire(tokio::time::Instant::now());
        self.watching = next.is_some();
        if let Some(at) = next
            && at != self.deadline.deadline()
        {
            self.deadline.as_mut().reset(at);
        }
    }

    /// Stops writing once the link has `ended`: on shutdown after telling the app `bye` (a
    /// courtesy with a short deadline: the app may not read at all), otherwise at once. Either
    /// way the write half is dropped, so the app sees the connection end.
    pub async fn finish(self, ended: &LinkEnd) {
        let config = self.app.config();
        if matches!(ended, LinkEnd::Shutdown) {
            let bye = encode_frame(
                &DaemonMessage::Bye(Bye { reason: Bye::SHUTDOWN.into() }),
                &config.frame_limits(),
                config.max_frame,
            );
            if let Ok(frame) = bye {
                let _ = self.bye.send(frame);
                let abort = self.writer.abort_handle();
                if tokio::time::timeout(Duration::from_secs(1), self.writer).await.is_err() {
                    abort.abort();
                }
                // Gone already unless the writer task ended before it got the bye.
                drop(self.app.detach_writer());
                return;
            }
        }
        self.writer.abort();
        drop(self.app.detach_writer());
    }
}

/// A wait of the link's that outlives one message.
type Wait = Pin<Box<dyn Future<Output = ()> + Send>>;

fn deadline_added(app: &Link) -> Wait {
    let app = app.clone();
    Box::pin(async move { app.deadline_added().await })
}

async fn sleep_until_opt(deadline: Option<tokio::time::Instant>) {
    match deadline {
        Some(d) => tokio::time::sleep_until(d).await,
        None => std::future::pending().await,
    }
}
