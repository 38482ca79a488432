//! The attached browser: its host channel to the engine, the queue of requests waiting for a
//! `/poll`, the ids delivered and not yet answered, and its expiry.
//!
//! `/connect` writes the native handshake (`hello`, action pages, `ready`) into an in-memory
//! pipe served by [`Engine::serve_app`](jfgui_engine::Engine::serve_app) and waits for `welcome` or
//! `refused`. From then on every frame the engine writes is read here: a `request{id, call}`
//! becomes a queued item, anything else (a `bye`) a notice with id `null`. A request beyond
//! the queue bound (queued plus delivered-but-unanswered) is answered `not_executed/busy` at
//! once and never delivered.
//!
//! When the browser goes (`/disconnect`, `bye`, expiry, the bridge closing), requests never
//! delivered are answered `not_executed/unavailable{code: "browser_detached"}` (they never
//! reached the tab), then the pipe is closed, so the engine fails the delivered ones
//! `outcome_unknown/app_disconnected` exactly as for a native app that vanished: nothing ever
//! claims a delivered call was cancelled or rolled back.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use hyper::StatusCode;
use jfgui_engine::PeerInfo;
use jfgui_proto::channel::{
    ActionInfo, ActionsPage, AppMessage, Bye, CHANNEL_VERSION, DaemonMessage, FrameDecoder,
    FrameError, Hello, MAX_ACTIONS_PER_PAGE, Outcome, Ready, Reply as ReplyFrame, decode_message,
    encode_frame,
};
use jfgui_proto::{ActionError, Limits, Map, Reason, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt, DuplexStream, ReadHalf, WriteHalf};
use tokio::sync::watch;
use tokio::time::Instant;

use super::http::{Reply, bad_body, error, members, parse_object};
use super::rpc_clients::RpcClients;
use super::{BridgeLimits, BridgeState, ITEMS_PER_POLL};

/// Most actions a tab registers at once (the native bound: 16 pages of 256).
const MAX_ACTIONS: usize = 16 * MAX_ACTIONS_PER_PAGE;

/// Buffer of the in-memory host channel; the engine and the reader below drain it at once.
const PIPE_BUFFER: usize = 64 * 1024;

/// Bytes asked of the pipe per read.
const READ_CHUNK: usize = 16 * 1024;

/// Whether a browser is attached to a bridge (one at a time).
#[derive(Debug, Default)]
pub enum Attachment {
    /// Nobody.
    #[default]
    None,
    /// A `/connect` is in its handshake.
    Attaching,
    /// Attached.
    Attached(Arc<Browser>),
}

/// The attached browser. See the module docs.
#[derive(Debug)]
pub struct Browser {
    client: String,
    slug: String,
    limits: BridgeLimits,
    /// The engine's request deadline: a queued request older than this has already been
    /// answered `outcome_unknown/timeout` by the engine, so it is never delivered, and a
    /// delivered one older than this can no longer be answered.
    request_deadline: Duration,
    frame_limits: Limits,
    max_frame: usize,
    writer: tokio::sync::Mutex<Option<WriteHalf<DuplexStream>>>,
    queue: Mutex<Queue>,
    /// Bumped on every change a waiting poll or the expiry timer must see.
    changed: watch::Sender<u64>,
    rpc_clients: RpcClients,
}

#[derive(Debug)]
struct Queue {
    entries: VecDeque<Entry>,
    delivered: HashMap<u64, Instant>,
    last_seen: Instant,
    /// Polls waiting now: the browser is alive while one waits.
    polls: usize,
    /// The newest poll; an older one still waiting answers `[]` at once, so two polls never
    /// race for the same items.
    poll_generation: u64,
    ended: bool,
}

#[derive(Debug)]
enum Entry {
    /// A `request{id, call}`, `call` encoded.
    Request { id: u64, call: Vec<u8>, queued: Instant },
    /// Any other frame from the engine, encoded whole (delivered with id `null`).
    Notice { body: Vec<u8> },
}

impl Queue {
    fn requests_waiting(&self) -> usize {
        self.entries.iter().filter(|e| matches!(e, Entry::Request { .. })).count()
    }

    /// Forgets requests the engine has already timed out.
    fn prune(&mut self, deadline: Duration) {
        let now = Instant::now();
        self.entries.retain(|e| match e {
            Entry::Request { queued, .. } => now.duration_since(*queued) < deadline,
            Entry::Notice { .. } => true,
        });
        self.delivered.retain(|_, at| now.duration_since(*at) < deadline);
    }
}

impl Browser {
    /// The endpoint slug the engine gave the tab.
    pub fn slug(&self) -> &str {
        &self.slug
    }

    /// The `/rpc` clients of this browser.
    pub fn rpc_clients(&self) -> &RpcClients {
        &self.rpc_clients
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn bump(&self) {
        self.changed.send_modify(|n| *n = n.wrapping_add(1));
    }

    fn touch(&self) {
        self.lock().last_seen = Instant::now();
        self.bump();
    }

    /// Writes one frame to the engine; false once the channel is closed.
    async fn write(&self, frame: &[u8]) -> bool {
        let mut writer = self.writer.lock().await;
        match writer.as_mut() {
            Some(w) => w.write_all(frame).await.is_ok(),
            None => false,
        }
    }

    fn encode(&self, message: &AppMessage) -> Option<Vec<u8>> {
        encode_frame(message, &self.frame_limits, self.max_frame).ok()
    }

    /// Answers request `id` for the tab with `error` (never delivered).
    async fn refuse(&self, id: u64, error: ActionError) {
        let reply = AppMessage::Reply(ReplyFrame { id, outcome: Outcome::Error(error) });
        if let Some(frame) = self.encode(&reply) {
            self.write(&frame).await;
        }
    }

    /// One frame from the engine: queue it, or refuse a request there is no room for.
    async fn on_engine_frame(&self, body: &[u8]) {
        let value = match jfgui_proto::parse(body, &self.frame_limits) {
            Ok(v) => v,
            Err(e) => {
                tracing::error!("bridge: undecodable frame from the engine: {e}");
                return;
            }
        };
        let Some(request) = value.get("request") else {
            let mut q = self.lock();
            if q.entries.len() >= 2 * self.limits.queue {
                tracing::warn!(slug = %self.slug, "bridge: notice dropped, the queue is full");
            } else {
                q.entries.push_back(Entry::Notice { body: body.to_vec() });
            }
            drop(q);
            return self.bump();
        };
        let (Some(id), Some(call)) =
            (request.get("id").and_then(Value::as_u64), request.get("call"))
        else {
            tracing::error!("bridge: malformed request frame from the engine");
            return;
        };
        let call = jfgui_proto::encode(call, &self.frame_limits).unwrap_or_default();
        let refusal = {
            let mut q = self.lock();
            q.prune(self.request_deadline);
            if call.len() > self.limits.max_message_bytes {
                Some(ActionError::new(
                    Reason::Unavailable {
                        code: "request_too_large".into(),
                        explanation: format!(
                            "the request exceeds the bridge's {}-byte message bound",
                            self.limits.max_message_bytes
                        ),
                    },
                    "The request is too large for the browser bridge; nothing was executed.",
                ))
            } else if q.requests_waiting() + q.delivered.len() >= self.limits.queue {
                Some(ActionError::new(
                    Reason::Busy,
                    format!(
                        "The browser's request queue is full ({} requests); nothing was executed, retry later.",
                        self.limits.queue
                    ),
                ))
            } else {
                q.entries.push_back(Entry::Request { id, call, queued: Instant::now() });
                None
            }
        };
        match refusal {
            Some(e) => self.refuse(id, e).await,
            None => self.bump(),
        }
    }

    /// `/poll`: waits up to the poll wait for items and takes at most [`ITEMS_PER_POLL`].
    /// Returns the answer body `{"requests": [...]}`.
    pub async fn poll(&self) -> Vec<u8> {
        let generation = {
            let mut q = self.lock();
            q.poll_generation += 1;
            q.polls += 1;
            q.last_seen = Instant::now();
            q.poll_generation
        };
        let _waiting = Waiting(self);
        self.bump();
        let mut changed = self.changed.subscribe();
        let deadline = Instant::now() + self.limits.poll_wait;
        let items = loop {
            changed.borrow_and_update();
            let items = self.take(generation);
            if items.as_ref().is_none_or(|i| !i.is_empty()) {
                break items.unwrap_or_default();
            }
            tokio::select! {
                r = changed.changed() => if r.is_err() { break Vec::new() },
                () = tokio::time::sleep_until(deadline) => break Vec::new(),
            }
        };
        let mut body = b"{\"requests\":[".to_vec();
        for (n, (id, request)) in items.iter().enumerate() {
            if n > 0 {
                body.push(b',');
            }
            body.extend_from_slice(b"{\"id\":");
            match id {
                Some(id) => body.extend_from_slice(id.to_string().as_bytes()),
                None => body.extend_from_slice(b"null"),
            }
            body.extend_from_slice(b",\"request\":");
            body.extend_from_slice(request);
            body.push(b'}');
        }
        body.extend_from_slice(b"]}");
        body
    }

    /// Takes what this poll may deliver: `None` when the poll must end empty (superseded, or
    /// the browser is gone), else up to [`ITEMS_PER_POLL`] items (possibly none yet).
    fn take(&self, generation: u64) -> Option<Vec<(Option<u64>, Vec<u8>)>> {
        let mut q = self.lock();
        if q.ended || q.poll_generation != generation {
            return None;
        }
        q.prune(self.request_deadline);
        let mut items = Vec::new();
        while items.len() < ITEMS_PER_POLL {
            match q.entries.pop_front() {
                Some(Entry::Request { id, call, .. }) => {
                    q.delivered.insert(id, Instant::now());
                    items.push((Some(id), call));
                }
                Some(Entry::Notice { body }) => items.push((None, body)),
                None => break,
            }
        }
        Some(items)
    }

    /// `/result`: forwards the reply to a delivered, unanswered id; the first valid result
    /// wins, anything else is refused and never forwarded.
    pub async fn result(&self, id: Value, response: Value) -> Reply {
        let Some(id_number) = id.as_u64() else { return bad_body() };
        let mut reply = Map::with_capacity(2);
        reply.insert("id", id);
        reply.insert("outcome", response);
        let mut frame = Map::with_capacity(1);
        frame.insert("reply", reply);
        let message: AppMessage = match jfgui_proto::from_value(Value::Object(frame)) {
            Ok(m) => m,
            Err(e) => {
                let message = format!("The response is not a host-channel reply outcome: {e}.");
                return error(StatusCode::BAD_REQUEST, "invalid_response", &message);
            }
        };
        let Some(frame) = self.encode(&message) else {
            return error(
                StatusCode::PAYLOAD_TOO_LARGE,
                "too_large",
                "The response exceeds the host channel's bounds.",
            );
        };
        let delivered = {
            let mut q = self.lock();
            q.prune(self.request_deadline);
            q.last_seen = Instant::now();
            !q.ended && q.delivered.remove(&id_number).is_some()
        };
        self.bump();
        if !delivered {
            return not_accepted();
        }
        if !self.write(&frame).await {
            return not_accepted();
        }
        let mut body = Map::with_capacity(1);
        body.insert("accepted", true);
        super::http::json(StatusCode::OK, &body)
    }

    /// `/message`: the tab's own messages (task updates, enable/disable, bye).
    pub async fn message(&self, message: Value) -> Result<bool, Reply> {
        let message: AppMessage = jfgui_proto::from_value(message).map_err(|e| {
            let message = format!("The message is not a host-channel app message: {e}.");
            error(StatusCode::BAD_REQUEST, "invalid_message", &message)
        })?;
        let bye = match &message {
            AppMessage::Task(_) | AppMessage::Enabled(_) => false,
            AppMessage::Bye(_) => true,
            _ => {
                return Err(error(
                    StatusCode::BAD_REQUEST,
                    "message_not_allowed",
                    "Only task, enabled and bye go through /message (replies use /result, registration /connect).",
                ));
            }
        };
        let frame = self.encode(&message).ok_or_else(|| {
            error(StatusCode::PAYLOAD_TOO_LARGE, "too_large", "The message exceeds the bounds.")
        })?;
        self.touch();
        if self.write(&frame).await { Ok(bye) } else { Err(not_accepted()) }
    }
}

/// A `/poll` that is waiting. Counted down on drop, so a poll whose connection the browser
/// closed (hyper then drops the future mid-wait) stops counting as a live browser at once and
/// the expiry runs from there.
struct Waiting<'a>(&'a Browser);

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        {
            let mut q = self.0.lock();
            q.polls -= 1;
            q.last_seen = Instant::now();
        }
        self.0.bump();
    }
}

fn not_accepted() -> Reply {
    let mut e = Map::with_capacity(2);
    e.insert("reason", "not_delivered");
    e.insert(
        "message",
        "No request with this id was delivered to this client and left unanswered.",
    );
    let mut body = Map::with_capacity(2);
    body.insert("accepted", false);
    body.insert("error", e);
    super::http::json(StatusCode::CONFLICT, &body)
}

/// 409 for a `client` that is not the attached browser.
pub fn unknown_client() -> Reply {
    error(StatusCode::CONFLICT, "unknown_client", "No browser with this client id is attached.")
}

/// The attached browser whose id is `client`.
pub fn find(state: &BridgeState, client: &str) -> Option<Arc<Browser>> {
    match &*state.lock_attachment() {
        Attachment::Attached(b) if b.client == client => Some(b.clone()),
        _ => None,
    }
}

/// The attached browser, whatever its id (for `/rpc`).
pub fn attached(state: &BridgeState) -> Option<Arc<Browser>> {
    match &*state.lock_attachment() {
        Attachment::Attached(b) => Some(b.clone()),
        _ => None,
    }
}

/// Resets a reserved attachment slot if the handshake does not complete.
struct Reservation<'a>(&'a BridgeState);

impl Drop for Reservation<'_> {
    fn drop(&mut self) {
        let mut a = self.0.lock_attachment();
        if matches!(*a, Attachment::Attaching) {
            *a = Attachment::None;
        }
    }
}

/// JSON bounds of a `/connect` body: the frame bounds with room for a full registration's
/// values (every action has a dozen or so).
fn connect_limits(state: &BridgeState) -> Limits {
    let frame = state.engine.config().frame_limits();
    Limits {
        max_bytes: state.limits.max_message_bytes,
        max_values: frame.max_values.max(MAX_ACTIONS * 64),
        ..frame
    }
}

/// `/connect`: registers the tab through the engine's native handshake.
pub async fn attach(state: &Arc<BridgeState>, body: &[u8]) -> Result<Map, Reply> {
    let body = parse_object(body, &connect_limits(state))?;
    let [app] = members(body, ["app"])?;
    let Some(Value::Object(app)) = app else { return Err(bad_body()) };
    let [hello, actions] = members(app, ["hello", "actions"])?;
    let (Some(hello), Some(actions)) = (hello, actions) else { return Err(bad_body()) };
    let invalid = |what: &str, e: &dyn std::fmt::Display| {
        let message = format!("The {what} is not valid: {e}.");
        error(StatusCode::BAD_REQUEST, "invalid_registration", &message)
    };
    let hello: Hello = jfgui_proto::from_value(hello).map_err(|e| invalid("hello", &e))?;
    let actions: Vec<ActionInfo> =
        jfgui_proto::from_value(actions).map_err(|e| invalid("action list", &e))?;
    if actions.len() > MAX_ACTIONS {
        let e = format!("more than {MAX_ACTIONS} actions");
        return Err(invalid("action list", &e));
    }

    {
        let mut a = state.lock_attachment();
        if !matches!(*a, Attachment::None) {
            return Err(error(
                StatusCode::CONFLICT,
                "browser_attached",
                "A browser is already attached to this bridge; it takes one at a time.",
            ));
        }
        *a = Attachment::Attaching;
    }
    let reservation = Reservation(state);

    let config = state.engine.config();
    let frame_limits = config.frame_limits();
    let max_frame = config.max_frame;
    let (ours, theirs) = tokio::io::duplex(PIPE_BUFFER);
    let engine = state.engine.clone();
    tokio::spawn(async move { engine.serve_app(theirs, PeerInfo::default()).await });
    let (mut rd, mut wr) = tokio::io::split(ours);

    let enabled = hello.enabled;
    let count = actions.len() as u32;
    let mut frames = Vec::new();
    let encode = |m: &AppMessage| encode_frame(m, &frame_limits, max_frame);
    frames.push(encode(&AppMessage::Hello(hello)).map_err(|e| invalid("hello", &e))?);
    for page in actions.chunks(MAX_ACTIONS_PER_PAGE) {
        pages(page, &encode, &mut frames).map_err(|e| invalid("action list", &e))?;
    }
    frames.push(
        encode(&AppMessage::Ready(Ready { action_count: count }))
            .map_err(|e| invalid("ready", &e))?,
    );
    let mut decoder = FrameDecoder::new(max_frame);
    let handshake = async {
        for frame in &frames {
            wr.write_all(frame).await?;
        }
        read_frame(&mut rd, &mut decoder).await
    };
    let answer =
        tokio::time::timeout(config.handshake_deadline + Duration::from_secs(1), handshake)
            .await
            .ok()
            .and_then(Result::ok)
            .and_then(|body| decode_message::<DaemonMessage>(&body, &frame_limits).ok());
    let slug = match answer {
        Some(DaemonMessage::Welcome(w)) => w.slug,
        Some(DaemonMessage::Refused(r)) => {
            let status = match r.reason.as_str() {
                "too_many_apps" | "registration_too_large" | "shutdown" => {
                    StatusCode::SERVICE_UNAVAILABLE
                }
                _ => StatusCode::BAD_REQUEST,
            };
            return Err(error(status, &r.reason, &r.message));
        }
        _ => {
            return Err(error(
                StatusCode::SERVICE_UNAVAILABLE,
                "handshake_failed",
                "The daemon did not complete the registration.",
            ));
        }
    };

    let client = super::token::client_id().map_err(|_| {
        error(StatusCode::SERVICE_UNAVAILABLE, "no_randomness", "No random id is available.")
    })?;
    let browser = Arc::new(Browser {
        client: client.clone(),
        slug,
        limits: state.limits,
        request_deadline: config.request_deadline,
        frame_limits,
        max_frame,
        writer: tokio::sync::Mutex::new(Some(wr)),
        queue: Mutex::new(Queue {
            entries: VecDeque::new(),
            delivered: HashMap::new(),
            last_seen: Instant::now(),
            polls: 0,
            poll_generation: 0,
            ended: false,
        }),
        changed: watch::Sender::new(0),
        rpc_clients: RpcClients::new(state.limits.max_sessions),
    });
    *state.lock_attachment() = Attachment::Attached(browser.clone());
    drop(reservation);
    tracing::info!(slug = browser.slug(), enabled, "browser attached");
    let weak = Arc::downgrade(state);
    tokio::spawn(read_engine(browser.clone(), weak.clone(), rd, decoder));
    tokio::spawn(expire(browser.clone(), weak));

    let mut answer = Map::with_capacity(3);
    answer.insert("client", client);
    answer.insert("channelVersion", CHANNEL_VERSION);
    answer.insert("maxMessageBytes", state.limits.max_message_bytes as u64);
    Ok(answer)
}

/// Encodes `actions` as pages, halving a page whose frame would break the bounds.
fn pages(
    actions: &[ActionInfo],
    encode: &impl Fn(&AppMessage) -> Result<Vec<u8>, FrameError>,
    out: &mut Vec<Vec<u8>>,
) -> Result<(), FrameError> {
    match encode(&AppMessage::Actions(ActionsPage { actions: actions.to_vec() })) {
        Ok(frame) => {
            out.push(frame);
            Ok(())
        }
        Err(_) if actions.len() > 1 => {
            let (a, b) = actions.split_at(actions.len() / 2);
            pages(a, encode, out)?;
            pages(b, encode, out)
        }
        Err(e) => Err(e),
    }
}

/// Reads one frame body from the engine's side of the pipe.
async fn read_frame(
    rd: &mut ReadHalf<DuplexStream>,
    decoder: &mut FrameDecoder,
) -> std::io::Result<Vec<u8>> {
    loop {
        if let Some(body) = decoder.next_frame().map_err(std::io::Error::other)? {
            return Ok(body);
        }
        let mut chunk = [0u8; READ_CHUNK];
        let n = rd.read(&mut chunk).await?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        decoder.feed(&chunk[..n]);
    }
}

/// Everything the engine writes after `welcome`, until it closes the channel.
async fn read_engine(
    browser: Arc<Browser>,
    state: Weak<BridgeState>,
    mut rd: ReadHalf<DuplexStream>,
    mut decoder: FrameDecoder,
) {
    while let Ok(body) = read_frame(&mut rd, &mut decoder).await {
        browser.on_engine_frame(&body).await;
    }
    detach(&state, &browser, "app_left").await;
}

/// Detaches the browser once it has neither polled nor answered for the expiry time.
async fn expire(browser: Arc<Browser>, state: Weak<BridgeState>) {
    let mut changed = browser.changed.subscribe();
    loop {
        let wait = {
            let q = browser.lock();
            if q.ended {
                return;
            }
            if q.polls > 0 {
                browser.limits.expiry
            } else {
                (q.last_seen + browser.limits.expiry).saturating_duration_since(Instant::now())
            }
        };
        if wait.is_zero() {
            tracing::warn!(slug = browser.slug(), "browser expired: no poll or result in time");
            return detach(&state, &browser, "expired").await;
        }
        tokio::select! {
            () = tokio::time::sleep(wait) => {}
            r = changed.changed() => if r.is_err() { return },
        }
    }
}

/// Ends the attachment (see the module docs). Idempotent.
pub async fn detach(state: &Weak<BridgeState>, browser: &Arc<Browser>, reason: &str) {
    if let Some(state) = state.upgrade() {
        let mut a = state.lock_attachment();
        if matches!(&*a, Attachment::Attached(b) if Arc::ptr_eq(b, browser)) {
            *a = Attachment::None;
        }
    }
    let never_delivered: Vec<u64> = {
        let mut q = browser.lock();
        if q.ended {
            return;
        }
        q.ended = true;
        q.entries
            .drain(..)
            .filter_map(|e| match e {
                Entry::Request { id, .. } => Some(id),
                Entry::Notice { .. } => None,
            })
            .collect()
    };
    browser.bump();
    browser.rpc_clients.clear();
    for id in never_delivered {
        let e = ActionError::new(
            Reason::Unavailable {
                code: "browser_detached".into(),
                explanation: "the browser tab went away before the request was delivered".into(),
            },
            "The browser tab went away before the request reached it; nothing was executed.",
        );
        browser.refuse(id, e).await;
    }
    if let Some(frame) = browser.encode(&AppMessage::Bye(Bye { reason: reason.into() })) {
        browser.write(&frame).await;
    }
    if let Some(mut w) = browser.writer.lock().await.take() {
        let _ = w.shutdown().await;
    }
    tracing::info!(slug = browser.slug(), reason, "browser detached");
}

/// The bridge is closing: detach whoever is attached (in a task: this runs from `Drop`).
pub fn close_all(state: &Arc<BridgeState>) {
    let taken = std::mem::take(&mut *state.lock_attachment());
    if let (Attachment::Attached(browser), Ok(runtime)) =
        (taken, tokio::runtime::Handle::try_current())
    {
        let weak = Arc::downgrade(state);
        runtime.spawn(async move { detach(&weak, &browser, "bridge_closed").await });
    }
}
