//! The sans-IO side of the host channel (docs/PROTOCOL.md, "The host channel"): bytes from the daemon go in with
//! [`HostChannel::feed`], bytes for the daemon come out of [`HostChannel::pending_output`], and
//! [`HostChannel::pump`] runs at most `budget` queued requests through the [`Dispatcher`]. The
//! same state machine serves a Unix socket, a named pipe, stdio pipes and the browser bridge.
//!
//! Lifecycle: [`HostChannel::new`] queues the handshake (`hello`, `actions` pages, `ready`); the
//! daemon answers `welcome` ([`Status::Registered`]) or `refused` ([`Status::Refused`]); then
//! `request`s are queued by `feed` and answered by `pump`, in order. A malformed,
//! unknown-field or over-limit frame, or a message out of order, is a fatal
//! [`ProtocolError`]: the transport must be dropped, and [`HostChannel::reset`] starts over on a
//! new connection (re-registering).

use alloc::collections::VecDeque;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::fmt;
use core::time::Duration;

use jfgui_proto::channel::{
    ActionsPage, AppMessage, Bye, CHANNEL_VERSION, Call, ChannelLimits, DEFAULT_MAX_FRAME,
    DaemonMessage, EnabledState, FrameDecoder, FrameError, Hello, MAX_ACTIONS_PER_PAGE, Outcome,
    Ready, Refused, Reply, Request, TaskSnapshot, TaskState, decode_activity,
    decode_daemon_message, encode_frame, encode_reply_frame_into, frame_limits, is_activity_frame,
};
use jfgui_proto::{ActionError, ActionSpec, Limits, Reason};

use crate::registration::RENDER_ACTION;
use crate::{Answer, Dispatcher, Host, StrayAnswer};

/// Requests held between `feed` and `pump`. One more is answered `not_executed/busy` at once
/// without running; the daemon itself queues at most 256 per app, so a well-behaved daemon
/// never hits this.
pub const MAX_QUEUED_REQUESTS: usize = 256;

/// Output bytes not yet taken by the transport above which `pump` stops running requests and
/// [`HostChannel::wants_read`] turns false: a daemon that does not read gets backpressure, not an
/// app that buffers without bound. Four maximal frames.
pub const OUTPUT_HIGH_WATER: usize = 4 * DEFAULT_MAX_FRAME;

/// `activity` notices held between `feed` and `pump`; beyond it the oldest is dropped (and
/// counted: [`HostChannel::activities_dropped`]): an app shows the latest, never a backlog.
///
/// A notice is held as its frame body, not decoded: it arrives in the same read as the
/// daemon's next requests, and decoding it ([`HostChannel::deliver_activities`]) waits until
/// their replies are written.
pub const MAX_QUEUED_ACTIVITIES: usize = 16;

/// Who the app is, sent in `hello`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// Shown to people; any Unicode. The daemon derives the endpoint slug from it.
    pub display_name: String,
    /// The process id (`std::process::id()` natively; any number in a browser).
    pub pid: u32,
}

/// Where the channel is in its lifecycle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    /// The handshake is queued or sent; no `welcome` yet.
    Registering,
    /// The daemon accepted the registration.
    Registered,
    /// The daemon refused the registration (it closes the connection).
    Refused(Refused),
    /// `bye` was sent or received; the connection is over.
    Closed {
        /// The reason from the `bye`.
        reason: String,
    },
    /// A fatal protocol error happened; drop the transport.
    Failed,
}

/// A fatal problem with the channel; the transport must be dropped.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProtocolError {
    /// The daemon sent a frame over the limit, malformed JSON, or a message with unknown
    /// fields or of the wrong shape.
    Frame(FrameError),
    /// A message that is not allowed now (e.g. a request before `welcome`).
    Unexpected(&'static str),
    /// Our own registration cannot be encoded within the frame limits (a single action spec
    /// is too large).
    Registration(FrameError),
}

impl fmt::Display for ProtocolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProtocolError::Frame(e) => write!(f, "bad frame from the daemon: {e}"),
            ProtocolError::Unexpected(what) => {
                write!(f, "unexpected message from the daemon: {what}")
            }
            ProtocolError::Registration(e) => write!(f, "cannot encode the registration: {e}"),
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for ProtocolError {}

/// What one [`HostChannel::pump`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pump {
    /// Requests answered.
    pub executed: usize,
    /// Requests and `activity` notices still queued (call `pump` again soon when non-zero).
    pub pending: usize,
    /// When the host wants [`Host::tick`] again (`None`: not until something arrives).
    pub next_tick: Option<Duration>,
}

/// The app's end of the host channel. See the module docs.
#[derive(Debug)]
pub struct HostChannel {
    dispatcher: Dispatcher,
    identity: Identity,
    max_frame: usize,
    decoder: FrameDecoder,
    status: Status,
    slug: Option<String>,
    limits: ChannelLimits,
    inbox: VecDeque<Request>,
    /// Whether `hello` asks for `activity` notices.
    activity: bool,
    /// Frame bodies of `activity` notices, decoded on delivery.
    activities: VecDeque<Vec<u8>>,
    activities_dropped: u64,
    out: Vec<u8>,
    out_pos: usize,
}

impl HostChannel {
    /// A channel for `dispatcher` with the handshake already queued. Frames from the daemon
    /// may be at most [`DEFAULT_MAX_FRAME`] bytes.
    pub fn new(dispatcher: Dispatcher, identity: Identity) -> Result<HostChannel, ProtocolError> {
        let mut e = HostChannel {
            dispatcher,
            identity,
            max_frame: DEFAULT_MAX_FRAME,
            decoder: FrameDecoder::new(DEFAULT_MAX_FRAME),
            status: Status::Registering,
            slug: None,
            limits: default_limits(),
            inbox: VecDeque::new(),
            activity: false,
            activities: VecDeque::new(),
            activities_dropped: 0,
            out: Vec::new(),
            out_pos: 0,
        };
        e.reset()?;
        Ok(e)
    }

    /// The same channel asking the daemon for an `activity` notice after each call it
    /// records for this app ([`Host::activity`] receives them). Call before any output is
    /// taken: the handshake is queued again with the request in `hello`.
    pub fn with_activity(mut self) -> Result<HostChannel, ProtocolError> {
        self.activity = true;
        self.reset()?;
        Ok(self)
    }

    /// `activity` notices dropped because [`MAX_QUEUED_ACTIVITIES`] were already waiting.
    pub fn activities_dropped(&self) -> u64 {
        self.activities_dropped
    }

    /// Starts over for a new connection: forgets buffered bytes, queued requests and task
    /// changes the old daemon never received, ends the calls that waited for the user's yes
    /// (their callers are gone with the old connection; nothing of them runs), and queues a
    /// fresh handshake (with the current enabled state).
    pub fn reset(&mut self) -> Result<(), ProtocolError> {
        self.decoder = FrameDecoder::new(self.max_frame);
        self.status = Status::Registering;
        self.slug = None;
        self.limits = default_limits();
        self.inbox.clear();
        self.activities.clear();
        self.out.clear();
        self.out_pos = 0;
        self.dispatcher.abandon_confirmations();
        self.dispatcher.tasks_mut().clear_events();
        let hello = Hello {
            channel_version: CHANNEL_VERSION,
            display_name: self.identity.display_name.clone(),
            pid: self.identity.pid,
            enabled: self.dispatcher.is_enabled(),
            activity: self.activity,
        };
        self.push_frame(&AppMessage::Hello(hello)).map_err(ProtocolError::Registration)?;
        let specs: Vec<ActionSpec> = self.dispatcher.actions().to_vec();
        for page in specs.chunks(MAX_ACTIONS_PER_PAGE) {
            self.push_page(page)?;
        }
        let ready = Ready { action_count: specs.len() as u32 };
        self.push_frame(&AppMessage::Ready(ready)).map_err(ProtocolError::Registration)
    }

    /// The dispatcher (for `execute_local`, enabled state, tasks).
    pub fn dispatcher(&self) -> &Dispatcher {
        &self.dispatcher
    }

    /// The dispatcher, mutably. Enable and disable through [`HostChannel::set_enabled`] so the
    /// daemon is told.
    pub fn dispatcher_mut(&mut self) -> &mut Dispatcher {
        &mut self.dispatcher
    }

    /// The lifecycle state.
    pub fn status(&self) -> &Status {
        &self.status
    }

    /// The endpoint slug from `welcome`.
    pub fn slug(&self) -> Option<&str> {
        self.slug.as_deref()
    }

    /// The limits in force (the daemon's from `welcome`, else the defaults).
    pub fn limits(&self) -> &ChannelLimits {
        &self.limits
    }

    /// The user's answer to the prompt of `ticket` ([`Dispatcher::answer`]): pump afterwards,
    /// so the task's update reaches the daemon and, on a yes, the call runs (the pump after
    /// the update was written runs it).
    pub fn answer(&mut self, ticket: &str, answer: Answer) -> Result<(), StrayAnswer> {
        self.dispatcher.answer(ticket, answer)
    }

    /// Enables or disables external calls and tells the daemon (which then adds or removes
    /// the app's endpoint and closes its client connections).
    pub fn set_enabled(&mut self, enabled: bool) {
        if self.dispatcher.set_enabled(enabled) && self.is_open() {
            let msg = AppMessage::Enabled(EnabledState { enabled });
            // A two-member object always fits.
            let _ = self.push_frame(&msg);
        }
    }

    /// Queues `bye{reason}` and closes the channel; send the remaining output, then close
    /// the transport.
    pub fn bye(&mut self, reason: &str) {
        if self.is_open() {
            let _ = self.push_frame(&AppMessage::Bye(Bye { reason: reason.to_string() }));
            self.status = Status::Closed { reason: reason.to_string() };
        }
    }

    /// True while the handshake is in progress or the app is registered.
    pub fn is_open(&self) -> bool {
        matches!(self.status, Status::Registering | Status::Registered)
    }

    /// Whether the transport should read more bytes now: false while the request queue is
    /// full or too much output waits (backpressure on the daemon).
    pub fn wants_read(&self) -> bool {
        self.is_open()
            && self.inbox.len() < MAX_QUEUED_REQUESTS
            && self.pending_output().len() < OUTPUT_HIGH_WATER
    }

    /// Requests received but not yet answered.
    pub fn queued_requests(&self) -> usize {
        self.inbox.len()
    }

    /// Takes bytes read from the daemon. Whole frames are decoded at once; requests are
    /// queued for [`pump`](HostChannel::pump). An error is fatal for this connection.
    pub fn feed(&mut self, bytes: &[u8]) -> Result<(), ProtocolError> {
        if !self.is_open() {
            return match self.status {
                Status::Failed => Err(ProtocolError::Unexpected("data after a protocol error")),
                // After `bye` or `refused` the peer's remaining bytes do not matter.
                _ => Ok(()),
            };
        }
        self.decoder.feed(bytes);
        let result = self.decode_all();
        if result.is_err() {
            self.status = Status::Failed;
        }
        result
    }

    fn decode_all(&mut self) -> Result<(), ProtocolError> {
        let limits = frame_json_limits(self.max_frame);
        while self.is_open() {
            // Borrowed from the decoder: only a held notice is copied out.
            let Some(body) = self.decoder.next_body().map_err(ProtocolError::Frame)? else {
                break;
            };
            if self.activity && self.status == Status::Registered && is_activity_frame(body) {
                if self.activities.len() >= MAX_QUEUED_ACTIVITIES {
                    self.activities.pop_front();
                    self.activities_dropped += 1;
                }
                self.activities.push_back(body.to_vec());
                continue;
            }
            let msg = decode_daemon_message(body, &limits).map_err(ProtocolError::Frame)?;
            match (msg, &self.status) {
                (DaemonMessage::Welcome(w), Status::Registering) => {
                    self.slug = Some(w.slug);
                    self.limits = w.limits;
                    self.status = Status::Registered;
                }
                (DaemonMessage::Refused(r), Status::Registering) => {
                    self.status = Status::Refused(r)
                }
                (DaemonMessage::Request(r), Status::Registered) => {
                    if self.inbox.len() < MAX_QUEUED_REQUESTS {
                        self.inbox.push_back(r);
                    } else {
                        let busy = ActionError::new(
                            Reason::Busy,
                            "the app's request queue is full; retry later",
                        );
                        self.send_reply(r.id, Outcome::Error(busy), None);
                    }
                }
                (DaemonMessage::Activity(_), _) => {
                    return Err(ProtocolError::Unexpected("an activity notice not asked for"));
                }
                // A withdraw of a prompt that waits no more crossed the answer: ignored.
                (DaemonMessage::Withdraw(w), Status::Registered) => {
                    let _ = self.dispatcher.withdraw(&w.task, w.reason);
                }
                (DaemonMessage::Withdraw(_), _) => {
                    return Err(ProtocolError::Unexpected("a withdraw before welcome"));
                }
                (DaemonMessage::Bye(b), _) => self.status = Status::Closed { reason: b.reason },
                (DaemonMessage::Welcome(_), _) => {
                    return Err(ProtocolError::Unexpected("a second welcome"));
                }
                (DaemonMessage::Refused(_), _) => {
                    return Err(ProtocolError::Unexpected("refused after welcome"));
                }
                (DaemonMessage::Request(_), _) => {
                    return Err(ProtocolError::Unexpected("a request before welcome"));
                }
            }
        }
        Ok(())
    }

    /// Runs the calls the user allowed once their update is written (the output is empty:
    /// [`Dispatcher::run_allowed`]), answers at most `budget` queued requests, hands queued
    /// `activity` notices to the host unless replies wait for the transport
    /// ([`HostChannel::deliver_activities`]), lets the host advance its tasks ([`Host::tick`])
    /// and queues their state changes for the daemon. Call it after `feed`, or from a UI
    /// tick; while output is backed up past [`OUTPUT_HIGH_WATER`] no request runs.
    pub fn pump<H: Host + ?Sized>(&mut self, host: &mut H, budget: usize) -> Pump {
        if self.status == Status::Registered && self.pending_output().is_empty() {
            self.dispatcher.run_allowed(host);
        }
        let mut executed = 0;
        while executed < budget && self.pending_output().len() < OUTPUT_HIGH_WATER {
            let Some(request) = self.inbox.pop_front() else { break };
            let outcome = match self.dispatcher.handle(host, request.id, &request.call) {
                Ok(result) => Outcome::Ok(result),
                Err(e) => Outcome::Error(e),
            };
            self.send_reply(request.id, outcome, action_of(&request.call));
            executed += 1;
        }
        if self.pending_output().is_empty() {
            // An error is the channel's status now, which the transport checks.
            let _ = self.deliver_activities(host);
        }
        let next_tick = self.tick(host);
        Pump { executed, pending: self.inbox.len() + self.activities.len(), next_tick }
    }

    /// Lets the host advance its deferred work ([`Host::tick`]) and queues the tasks' state
    /// changes for the daemon; answers when the host wants this again. [`HostChannel::pump`]
    /// does it every time; a loop calls it itself after [`HostChannel::deliver_activities`]
    /// handed over notices, since a notice may give the host something to show later.
    pub fn tick<H: Host + ?Sized>(&mut self, host: &mut H) -> Option<Duration> {
        let next_tick = self.dispatcher.tick(host);
        if self.status == Status::Registered {
            for task in self.dispatcher.take_task_events() {
                self.send_task(task);
            }
        }
        next_tick
    }

    /// Decodes the queued `activity` notices and hands them to [`Host::activity`], in order.
    /// [`HostChannel::pump`] does it only once the output is taken, so neither decoding nor
    /// showing a notice delays a reply (the daemon sends notices along with its next
    /// requests); a loop that writes the output after `pump` calls this after writing it.
    ///
    /// Answers how many were handed over: when any was, the loop lets the host tick
    /// ([`HostChannel::tick`]) so that what the notices left it to do later has its deadline.
    ///
    /// A malformed notice is the fatal [`ProtocolError`] a malformed frame is in
    /// [`HostChannel::feed`] (the status turns [`Status::Failed`]); the requests that came in
    /// the same read have run by then.
    pub fn deliver_activities<H: Host + ?Sized>(
        &mut self,
        host: &mut H,
    ) -> Result<usize, ProtocolError> {
        let limits = frame_json_limits(self.max_frame);
        let mut delivered = 0;
        while let Some(body) = self.activities.pop_front() {
            let activity = decode_activity(&body, &limits).map_err(|e| {
                self.activities.clear();
                self.status = Status::Failed;
                ProtocolError::Frame(e)
            })?;
            host.activity(&activity);
            delivered += 1;
        }
        Ok(delivered)
    }

    /// Encoded bytes waiting for the transport.
    pub fn pending_output(&self) -> &[u8] {
        &self.out[self.out_pos..]
    }

    /// Marks `n` bytes of [`pending_output`](HostChannel::pending_output) as written.
    pub fn consume_output(&mut self, n: usize) {
        self.out_pos = (self.out_pos + n).min(self.out.len());
        if self.out_pos == self.out.len() {
            self.out.clear();
            self.out_pos = 0;
        } else if self.out_pos > self.out.len() / 2 {
            self.out.drain(..self.out_pos);
            self.out_pos = 0;
        }
    }

    /// Encodes a reply; one over the daemon's message bound (or the JSON bounds) becomes
    /// `internal/response_too_large` naming the action, so the daemon never sees a frame it
    /// must refuse.
    fn send_reply(&mut self, id: u64, outcome: Outcome, action: Option<&str>) {
        let reply = Reply { id, outcome };
        let max_body =
            (self.limits.max_message_bytes as usize).min(self.limits.max_frame_bytes as usize);
        let limits = frame_json_limits(max_body);
        if encode_reply_frame_into(reply, &limits, max_body, &mut self.out).is_err() {
            let error = ActionError::new(
                Reason::ResponseTooLarge { action: action.map(String::from) },
                match action {
                    Some(a) => {
                        alloc::format!("the reply of {a} exceeds the {max_body}-byte message limit")
                    }
                    None => alloc::format!("the reply exceeds the {max_body}-byte message limit"),
                },
            );
            let small = AppMessage::Reply(Reply { id, outcome: Outcome::Error(error) });
            let _ = self.push_frame(&small);
        }
    }

    /// Encodes a task change; a result too large to carry fails the task instead.
    fn send_task(&mut self, task: TaskSnapshot) {
        let max_body =
            (self.limits.max_message_bytes as usize).min(self.limits.max_frame_bytes as usize);
        let id = task.id.clone();
        if self.push_frame_within(&AppMessage::Task(task), max_body).is_err() {
            let error = ActionError::new(
                Reason::ResponseTooLarge { action: None },
                alloc::format!("the result of task {id} exceeds the {max_body}-byte message limit"),
            );
            let failed =
                TaskSnapshot { error: Some(error), ..TaskSnapshot::new(id, TaskState::Failed) };
            let _ = self.push_frame(&AppMessage::Task(failed));
        }
    }

    fn push_page(&mut self, page: &[ActionSpec]) -> Result<(), ProtocolError> {
        // Names were validated when the dispatcher was built, so `info` cannot fail here.
        let actions = page.iter().filter_map(|s| s.info().ok()).collect();
        let msg = AppMessage::Actions(ActionsPage { actions });
        match self.push_frame(&msg) {
            Ok(()) => Ok(()),
            // Large schemas: split the page until each half fits.
            Err(_) if page.len() > 1 => {
                let (a, b) = page.split_at(page.len() / 2);
                self.push_page(a)?;
                self.push_page(b)
            }
            Err(e) => Err(ProtocolError::Registration(e)),
        }
    }

    fn push_frame(&mut self, msg: &AppMessage) -> Result<(), FrameError> {
        self.push_frame_within(msg, self.limits.max_frame_bytes as usize)
    }

    fn push_frame_within(&mut self, msg: &AppMessage, max_body: usize) -> Result<(), FrameError> {
        let frame = encode_frame(msg, &frame_json_limits(max_body), max_body)?;
        self.out.extend_from_slice(&frame);
        Ok(())
    }
}

/// The action a reply belongs to, for `response_too_large`.
fn action_of(call: &Call) -> Option<&str> {
    match call {
        Call::Execute(c) => Some(&c.action),
        Call::Render { .. } => Some(RENDER_ACTION),
        _ => None,
    }
}

fn default_limits() -> ChannelLimits {
    ChannelLimits {
        max_frame_bytes: DEFAULT_MAX_FRAME as u32,
        max_message_bytes: Limits::DEFAULT.max_bytes as u32,
    }
}

/// JSON bounds for a frame body of at most `max_bytes` (the strict-JSON bounds of a client line widened
/// by the channel envelope, exactly as the daemon computes them).
fn frame_json_limits(max_bytes: usize) -> Limits {
    frame_limits(&Limits::DEFAULT, max_bytes)
}

#[cfg(test)]
mod tests;
