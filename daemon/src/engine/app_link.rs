//! One host-channel connection (SPEC S8): the handshake with its deadline, the registration
//! cache, and the request/reply correlation that every client call to this app goes through.
//!
//! Requests carry ids chosen here, so a reply can only ever complete the call it belongs to:
//! replies to unknown, timed-out or never-sent ids are dropped and logged (FAULTS D5, D6).
//! Each app has one bounded queue of requests not yet written (`max_queued_per_app`), and at
//! most that many requests outstanding in all; beyond that calls fail fast with
//! `not_executed/busy` (FAULTS C3). A call's fate when the app goes away depends on whether it
//! was written: on disable, unwritten calls fail `not_executed/disabled` and written ones wait
//! for their real outcome; on disconnect every outstanding call fails
//! `outcome_unknown/app_disconnected` at once, not at its deadline. A call whose deadline
//! passes fails `outcome_unknown/timeout`, never "cancelled"; if it was still queued it is then
//! never written, so the conservative answer stays true.
//!
//! "Written" starts when the writer takes a request for its next write (requests already
//! queued are coalesced into one write), so a request inside a write the app has not fully
//! read yet counts as sent: its outcome is the app's to report.

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use jfgui_proto::channel::{
    ActionInfo, AppMessage, BatchOutcome, Bye, Call, CallResult, ChannelLimits, DaemonMessage,
    FrameDecoder, FrameError, MAX_ACTIONS_PER_PAGE, Outcome, Refused, Reply, Request, TaskSnapshot,
    Welcome, decode_message, encode_frame,
};
use jfgui_proto::{ActionError, Limits, MAX_REVISION, Reason, validate_action_infos};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::{mpsc, oneshot, watch};

use super::registry::{Registry, RegistryFull};
use super::tasks::TaskTable;
use super::{AppSummary, EngineConfig, PeerInfo, until};

/// Most actions one app may register (16 pages of [`MAX_ACTIONS_PER_PAGE`]); keeps the
/// registration cache of a hostile app bounded.
pub const MAX_ACTIONS: usize = 16 * MAX_ACTIONS_PER_PAGE;

/// Most bytes of `actions` frames one app may send: with [`MAX_ACTIONS`], this keeps the
/// registration cache of 256 apps within about 1 GiB even if every one is hostile, and real
/// apps (a few KiB of schemas per action at most) far below it.
pub const MAX_REGISTRATION_BYTES: usize = 4 << 20;

/// Bytes asked of the transport per read.
const READ_CHUNK: usize = 16 * 1024;

/// Requests already queued are coalesced into one write up to this size.
const COALESCE: usize = 64 * 1024;

/// Where an app connection stands, as seen by the client sessions bound to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkStatus {
    /// Connected and enabled: its endpoint exists.
    Enabled,
    /// Connected, dispatcher disabled: no endpoint, client connections closed.
    Disabled,
    /// Disconnected (or the daemon is shutting down).
    Gone,
}

/// A registered app as the rest of the engine sees it: its registration cache and the door to
/// its host channel. Cheap to clone.
#[derive(Clone)]
pub struct AppHandle(Arc<AppInner>);

struct AppInner {
    id: u64,
    slug: String,
    display_name: String,
    pid: u32,
    actions: Vec<ActionInfo>,
    enabled: AtomicBool,
    status: watch::Sender<LinkStatus>,
    calls: Mutex<Calls>,
    queue: mpsc::Sender<Outgoing>,
    tasks: Arc<Mutex<TaskTable>>,
    config: Arc<EngineConfig>,
}

impl fmt::Debug for AppHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AppHandle")
            .field("id", &self.0.id)
            .field("slug", &self.0.slug)
            .field("display_name", &self.0.display_name)
            .finish_non_exhaustive()
    }
}

/// Outstanding requests of one app.
struct Calls {
    next_id: u64,
    pending: HashMap<u64, Pending>,
    /// Set when the link is closing: new calls fail with this reason at once.
    closed: Option<Reason>,
}

struct Pending {
    reply: oneshot::Sender<Result<CallResult, ActionError>>,
    /// Whether the writer has started writing the request (then the app may have run it).
    sent: bool,
}

/// A request frame waiting for the writer.
struct Outgoing {
    id: u64,
    frame: Vec<u8>,
}

impl AppHandle {
    /// The registry id (unique for the daemon's lifetime; a reconnecting app gets a new one).
    pub fn id(&self) -> u64 {
        self.0.id
    }
    /// The endpoint slug.
    pub fn slug(&self) -> &str {
        &self.0.slug
    }
    /// The display name exactly as the app sent it.
    pub fn display_name(&self) -> &str {
        &self.0.display_name
    }
    /// The pid the app announced.
    pub fn pid(&self) -> u32 {
        self.0.pid
    }
    /// The registered actions, in registration order.
    pub fn actions(&self) -> &[ActionInfo] {
        &self.0.actions
    }
    /// Whether the app's dispatcher is enabled.
    pub fn is_enabled(&self) -> bool {
        self.0.enabled.load(Ordering::SeqCst)
    }
    /// The engine configuration (bounds the sessions need).
    pub fn config(&self) -> &EngineConfig {
        &self.0.config
    }
    /// Watches the link: client sessions close when it leaves [`LinkStatus::Enabled`].
    pub fn status(&self) -> watch::Receiver<LinkStatus> {
        self.0.status.subscribe()
    }
    /// The daemon's task table (tasks of this app are keyed by [`AppHandle::id`]).
    pub fn tasks(&self) -> &Mutex<TaskTable> {
        &self.0.tasks
    }
    /// A listing row.
    pub fn summary(&self) -> AppSummary {
        AppSummary {
            slug: self.0.slug.clone(),
            display_name: self.0.display_name.clone(),
            pid: self.0.pid,
            enabled: self.is_enabled(),
            action_count: self.0.actions.len(),
        }
    }

    /// Sends `call` to the app and waits for its reply, at most the request deadline.
    ///
    /// Errors: `not_executed/disabled` (disabled, or disabled before the request was written),
    /// `not_executed/busy` (queue full), `outcome_unknown/timeout` (no reply in time; a late
    /// reply is dropped), `outcome_unknown/app_disconnected`, `outcome_unknown/daemon_shutdown`,
    /// or the app's own error. Dropping the future forgets the call: its reply is dropped.
    pub async fn request(&self, call: Call) -> Result<CallResult, ActionError> {
        if !self.is_enabled() {
            return Err(disabled_error());
        }
        let id = {
            let mut calls = self.lock_calls();
            if let Some(reason) = &calls.closed {
                return Err(closed_error(reason.clone()));
            }
            calls.next_id += 1;
            calls.next_id
        };
        let config = &self.0.config;
        let frame = encode_frame(
            &DaemonMessage::Request(Request { id, call }),
            &config.frame_limits(),
            config.max_frame,
        )
        .map_err(|e| {
            ActionError::new(
                Reason::ResponseTooLarge { action: None },
                format!("The request does not fit the host channel: {e}."),
            )
        })?;
        let (tx, rx) = oneshot::channel();
        {
            let mut calls = self.lock_calls();
            if let Some(reason) = &calls.closed {
                return Err(closed_error(reason.clone()));
            }
            if calls.pending.len() >= config.max_queued_per_app {
                return Err(busy_error());
            }
            match self.0.queue.try_send(Outgoing { id, frame }) {
                Ok(()) => {}
                Err(mpsc::error::TrySendError::Full(_)) => return Err(busy_error()),
                Err(mpsc::error::TrySendError::Closed(_)) => {
                    return Err(closed_error(Reason::AppDisconnected));
                }
            }
            calls.pending.insert(id, Pending { reply: tx, sent: false });
        }
        let _forget = ForgetOnDrop { app: self, id };
        match tokio::time::timeout(config.request_deadline, rx).await {
            Ok(Ok(outcome)) => outcome,
            Ok(Err(_)) => Err(closed_error(Reason::AppDisconnected)),
            Err(_) => {
                // A reply arriving from now on finds no pending entry and is dropped.
                self.lock_calls().pending.remove(&id);
                tracing::warn!(app = %self.0.slug, id, "request deadline passed; outcome unknown");
                Err(ActionError::new(
                    Reason::Timeout,
                    "The app did not answer within the request deadline; the call may or may not have taken effect.",
                ))
            }
        }
    }

    /// Requests queued or awaiting their reply.
    #[cfg(test)]
    pub fn outstanding(&self) -> usize {
        self.lock_calls().pending.len()
    }

    fn lock_calls(&self) -> std::sync::MutexGuard<'_, Calls> {
        self.0.calls.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn lock_tasks(&self) -> std::sync::MutexGuard<'_, TaskTable> {
        self.0.tasks.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Completes a call with the app's reply; replies nobody waits for are dropped and logged.
    fn complete(&self, reply: Reply) {
        let mut calls = self.lock_calls();
        match calls.pending.get(&reply.id) {
            Some(p) if p.sent => {
                let Some(p) = calls.pending.remove(&reply.id) else { return };
                drop(calls);
                let outcome = match reply.outcome {
                    Outcome::Ok(r) => {
                        self.record_tasks(&r);
                        Ok(r)
                    }
                    Outcome::Error(e) => Err(e),
                };
                let outcome = match revision_beyond_bound(&outcome) {
                    Some(revision) => {
                        tracing::error!(app = %self.0.slug, revision, "the app reported a revision beyond 2^53-1");
                        Err(ActionError::new(
                            Reason::InvalidReply,
                            format!(
                                "The app reported revision {revision}, beyond the protocol's bound {MAX_REVISION} (2^53-1); this is a bug in the app."
                            ),
                        ))
                    }
                    None => outcome,
                };
                let _ = p.reply.send(outcome);
            }
            _ => tracing::warn!(
                app = %self.0.slug,
                id = reply.id,
                "dropping a reply to an unknown, unsent, answered or timed-out request"
            ),
        }
    }

    /// Stores the tasks a reply reports, here on the reading side, so a later task update on
    /// the same channel always lands after them.
    fn record_tasks(&self, result: &CallResult) {
        let tasks: Vec<&TaskSnapshot> = match result {
            CallResult::Deferred { task, .. } | CallResult::Task(task) => vec![task],
            CallResult::Batch { results, .. } => results
                .iter()
                .filter_map(|e| match &e.outcome {
                    BatchOutcome::Task(t) => Some(t),
                    _ => None,
                })
                .collect(),
            _ => return,
        };
        let mut table = self.lock_tasks();
        for task in tasks {
            if table.upsert(self.0.id, task.clone()).is_err() {
                tracing::error!(app = %self.0.slug, task = %task.id, "task table full; task not tracked");
            }
        }
    }

    /// Fails outstanding calls: all of them, or only those not yet written.
    fn fail_pending(&self, reason: &Reason, unsent_only: bool) {
        let failed: Vec<Pending> = {
            let mut calls = self.lock_calls();
            let ids: Vec<u64> = calls
                .pending
                .iter()
                .filter(|(_, p)| !unsent_only || !p.sent)
                .map(|(id, _)| *id)
                .collect();
            ids.iter().filter_map(|id| calls.pending.remove(id)).collect()
        };
        for p in failed {
            let _ = p.reply.send(Err(closed_error(reason.clone())));
        }
    }

    fn set_enabled(&self, registry: &Registry, enabled: bool) {
        if self.0.enabled.swap(enabled, Ordering::SeqCst) == enabled {
            return;
        }
        tracing::info!(app = %self.0.slug, enabled, "app dispatcher state changed");
        if !enabled {
            self.fail_pending(&Reason::Disabled, true);
        }
        self.0.status.send_replace(if enabled {
            LinkStatus::Enabled
        } else {
            LinkStatus::Disabled
        });
        registry.announce(self, enabled);
    }
}

/// Removes a call's pending entry when its caller stops waiting (e.g. a client connection
/// closed), so the late reply is recognised as unknown.
struct ForgetOnDrop<'a> {
    app: &'a AppHandle,
    id: u64,
}

impl Drop for ForgetOnDrop<'_> {
    fn drop(&mut self) {
        self.app.lock_calls().pending.remove(&self.id);
    }
}

fn disabled_error() -> ActionError {
    ActionError::new(Reason::Disabled, "The app's agent access is disabled; nothing was executed.")
}

fn busy_error() -> ActionError {
    ActionError::new(Reason::Busy, "The app has too many requests queued; retry later.")
}

/// A revision in `outcome` beyond 2^53−1 (SPEC S6: float-only clients must keep revisions
/// exactly and send them back as `expectedRevision`), if any.
fn revision_beyond_bound(outcome: &Result<CallResult, ActionError>) -> Option<u64> {
    let revision = match outcome {
        Ok(
            CallResult::Executed { revision, .. }
            | CallResult::Deferred { revision, .. }
            | CallResult::Batch { revision, .. }
            | CallResult::Revision { revision }
            | CallResult::Inspected { revision, .. }
            | CallResult::Rendered { revision, .. },
        ) => *revision,
        Err(ActionError { reason: Reason::StaleRevision { current_revision }, .. }) => {
            *current_revision
        }
        _ => return None,
    };
    (revision > MAX_REVISION).then_some(revision)
}

fn closed_error(reason: Reason) -> ActionError {
    let message = match reason {
        Reason::Disabled => {
            "The app disabled agent access before the request was sent; nothing was executed."
        }
        Reason::DaemonShutdown => {
            "The daemon is shutting down; the call may or may not have taken effect."
        }
        _ => "The app disconnected; the call may or may not have taken effect.",
    };
    ActionError::new(reason, message)
}

/// Why a host channel ended.
#[derive(Debug)]
enum LinkEnd {
    Eof,
    Bye(String),
    Io(std::io::Error),
    PartialIdle,
    Frame(FrameError),
    Protocol(&'static str),
    Shutdown,
}

impl fmt::Display for LinkEnd {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LinkEnd::Eof => f.write_str("end of stream"),
            LinkEnd::Bye(r) => write!(f, "app said bye ({r})"),
            LinkEnd::Io(e) => write!(f, "transport error: {e}"),
            LinkEnd::PartialIdle => f.write_str("a partial frame was idle past its deadline"),
            LinkEnd::Frame(e) => write!(f, "bad frame: {e}"),
            LinkEnd::Protocol(m) => write!(f, "protocol violation: {m}"),
            LinkEnd::Shutdown => f.write_str("daemon shutdown"),
        }
    }
}

/// Reads frames off the transport, enforcing the frame bound on the header and the partial
/// idle deadline.
struct FrameReader<R> {
    inner: R,
    /// Body length of the last frame returned (for the registration budget).
    last_len: usize,
    decoder: FrameDecoder,
    limits: Limits,
    partial_idle: std::time::Duration,
}

impl<R: AsyncRead + Unpin> FrameReader<R> {
    /// The next message. Cancel-safe: bytes are fed to the decoder right after each read.
    async fn next(&mut self) -> Result<AppMessage, LinkEnd> {
        loop {
            if let Some(body) = self.decoder.next_frame().map_err(LinkEnd::Frame)? {
                self.last_len = body.len();
                return decode_message(&body, &self.limits).map_err(LinkEnd::Frame);
            }
            let mut chunk = [0u8; READ_CHUNK];
            let partial = self.decoder.has_partial();
            let read = self.inner.read(&mut chunk);
            let n = if partial {
                tokio::time::timeout(self.partial_idle, read)
                    .await
                    .map_err(|_| LinkEnd::PartialIdle)?
                    .map_err(LinkEnd::Io)?
            } else {
                read.await.map_err(LinkEnd::Io)?
            };
            if n == 0 {
                return Err(LinkEnd::Eof);
            }
            self.decoder.feed(&chunk[..n]);
        }
    }
}

/// What the handshake collected.
struct Registration {
    display_name: String,
    pid: u32,
    enabled: bool,
    actions: Vec<ActionInfo>,
}

/// `refused{invalid_registration}` with `message`.
fn invalid_registration(message: impl Into<String>) -> Refused {
    Refused { reason: Refused::INVALID_REGISTRATION.to_string(), message: message.into() }
}

async fn handshake<R: AsyncRead + Unpin>(
    reader: &mut FrameReader<R>,
) -> Result<Result<Registration, Refused>, LinkEnd> {
    let hello = match reader.next().await? {
        AppMessage::Hello(h) => h,
        AppMessage::Bye(b) => return Err(LinkEnd::Bye(b.reason)),
        _ => return Ok(Err(invalid_registration("the first message must be hello"))),
    };
    if let Err(refused) = hello.check_version() {
        return Ok(Err(refused));
    }
    let mut actions: Vec<ActionInfo> = Vec::new();
    let mut bytes = 0;
    loop {
        match reader.next().await? {
            AppMessage::Actions(page) => {
                bytes += reader.last_len;
                if bytes > MAX_REGISTRATION_BYTES {
                    return Ok(Err(invalid_registration(format!(
                        "a registration holds at most {MAX_REGISTRATION_BYTES} bytes of actions"
                    ))));
                }
                if page.actions.len() > MAX_ACTIONS_PER_PAGE {
                    return Ok(Err(invalid_registration(format!(
                        "an actions page holds at most {MAX_ACTIONS_PER_PAGE} actions"
                    ))));
                }
                if actions.len() + page.actions.len() > MAX_ACTIONS {
                    return Ok(Err(invalid_registration(format!(
                        "an app registers at most {MAX_ACTIONS} actions"
                    ))));
                }
                actions.extend(page.actions);
            }
            AppMessage::Ready(ready) => {
                if usize::try_from(ready.action_count).ok() != Some(actions.len()) {
                    return Ok(Err(invalid_registration(format!(
                        "ready announced {} actions but {} were sent",
                        ready.action_count,
                        actions.len()
                    ))));
                }
                if let Err(e) = validate_action_infos(&actions) {
                    return Ok(Err(Refused::from(e)));
                }
                return Ok(Ok(Registration {
                    display_name: hello.display_name,
                    pid: hello.pid,
                    enabled: hello.enabled,
                    actions,
                }));
            }
            AppMessage::Bye(b) => return Err(LinkEnd::Bye(b.reason)),
            _ => {
                return Ok(Err(invalid_registration(
                    "only actions pages and ready may follow hello",
                )));
            }
        }
    }
}

/// Everything an app connection needs from the engine.
pub struct LinkContext {
    pub config: Arc<EngineConfig>,
    pub registry: Arc<Registry>,
    pub tasks: Arc<Mutex<TaskTable>>,
    pub shutdown: watch::Receiver<bool>,
    pub next_app_id: u64,
}

/// Runs one app connection to its end (see [`super::Engine::serve_app`]).
pub async fn serve<S>(stream: S, peer: PeerInfo, mut cx: LinkContext)
where
    S: AsyncRead + AsyncWrite + Send + Unpin + 'static,
{
    let config = cx.config.clone();
    let (rd, mut wr) = tokio::io::split(stream);
    let mut reader = FrameReader {
        inner: rd,
        last_len: 0,
        decoder: FrameDecoder::new(config.max_frame),
        limits: config.frame_limits(),
        partial_idle: config.partial_idle,
    };
    let outcome = tokio::select! {
        r = tokio::time::timeout(config.handshake_deadline, handshake(&mut reader)) => r,
        _ = until(&mut cx.shutdown, |s| *s) => {
            refuse(&mut wr, &config, Refused::SHUTDOWN, "the daemon is shutting down").await;
            return;
        }
    };
    let registration = match outcome {
        Err(_) => {
            tracing::warn!(?peer, "app dropped: handshake not completed within the deadline");
            return;
        }
        Ok(Err(end)) => {
            tracing::warn!(?peer, "app dropped during the handshake: {end}");
            // A peer that speaks the channel but sent a message we cannot take (an unknown
            // field from a newer app, a wrong sequence) learns why (S8: `welcome` or
            // `refused{reason}`). A peer whose bytes are not frames at all (a header over the
            // limit, a body that is not JSON) is only dropped: it is not listening for frames.
            if matches!(end, LinkEnd::Frame(FrameError::Message(_)) | LinkEnd::Protocol(_)) {
                refuse(&mut wr, &config, Refused::INVALID_REGISTRATION, &end.to_string()).await;
            }
            return;
        }
        Ok(Ok(Err(refusal))) => {
            tracing::warn!(?peer, reason = %refusal.reason, "app refused: {}", refusal.message);
            refuse(&mut wr, &config, &refusal.reason, &refusal.message).await;
            return;
        }
        Ok(Ok(Ok(registration))) => registration,
    };

    let (queue_tx, queue_rx) = mpsc::channel(config.max_queued_per_app.max(1));
    let status = if registration.enabled { LinkStatus::Enabled } else { LinkStatus::Disabled };
    let display_name = registration.display_name.clone();
    let inserted = cx.registry.insert(&display_name, |slug| {
        AppHandle(Arc::new(AppInner {
            id: cx.next_app_id,
            slug,
            display_name: registration.display_name,
            pid: registration.pid,
            actions: registration.actions,
            enabled: AtomicBool::new(registration.enabled),
            status: watch::Sender::new(status),
            calls: Mutex::new(Calls { next_id: 0, pending: HashMap::new(), closed: None }),
            queue: queue_tx,
            tasks: cx.tasks.clone(),
            config: config.clone(),
        }))
    });
    let app = match inserted {
        Ok(app) => app,
        Err(RegistryFull) => {
            tracing::warn!(?peer, max = config.max_apps, "app refused: too many apps");
            let msg = format!("the daemon already serves its maximum of {} apps", config.max_apps);
            refuse(&mut wr, &config, Refused::TOO_MANY_APPS, &msg).await;
            return;
        }
    };
    let welcome = DaemonMessage::Welcome(Welcome {
        slug: app.slug().to_string(),
        limits: ChannelLimits {
            max_frame_bytes: u32::try_from(config.max_frame).unwrap_or(u32::MAX),
            max_message_bytes: u32::try_from(config.json.max_bytes).unwrap_or(u32::MAX),
        },
    });
    let welcomed = match encode_frame(&welcome, &config.frame_limits(), config.max_frame) {
        Ok(frame) => wr.write_all(&frame).await.map_err(LinkEnd::Io),
        Err(e) => Err(LinkEnd::Frame(e)),
    };
    tracing::info!(
        ?peer,
        slug = app.slug(),
        display_name = app.display_name(),
        pid = app.pid(),
        actions = app.actions().len(),
        enabled = app.is_enabled(),
        "app registered"
    );

    let (bye_tx, bye_rx) = oneshot::channel();
    let writer = tokio::spawn(write_requests(app.clone(), wr, queue_rx, bye_rx));
    let end = match welcomed {
        Ok(()) => run(&app, &mut reader, &cx.registry, &mut cx.shutdown).await,
        Err(e) => e,
    };

    // Order matters: the endpoint goes first, so no new client arrives while calls are failed.
    cx.registry.remove(&app);
    let reason = if matches!(end, LinkEnd::Shutdown) {
        Reason::DaemonShutdown
    } else {
        Reason::AppDisconnected
    };
    app.lock_calls().closed = Some(reason.clone());
    app.0.status.send_replace(LinkStatus::Gone);
    app.fail_pending(&reason, false);
    let failed_tasks = app.lock_tasks().fail_app(app.id());
    for task in &failed_tasks {
        tracing::warn!(slug = app.slug(), task = %task, reason = reason.as_str(), "task failed");
    }
    match end {
        LinkEnd::Shutdown | LinkEnd::Eof | LinkEnd::Bye(_) => {
            tracing::info!(slug = app.slug(), "app disconnected: {end}");
        }
        _ => tracing::warn!(slug = app.slug(), "app dropped: {end}"),
    }
    if matches!(end, LinkEnd::Shutdown) {
        let bye = encode_frame(
            &DaemonMessage::Bye(Bye { reason: Bye::SHUTDOWN.into() }),
            &config.frame_limits(),
            config.max_frame,
        );
        if let Ok(frame) = bye {
            let _ = bye_tx.send(frame);
            // The app may not read at all; its bye is a courtesy with a short deadline.
            let abort = writer.abort_handle();
            if tokio::time::timeout(std::time::Duration::from_secs(1), writer).await.is_err() {
                abort.abort();
            }
            return;
        }
    }
    writer.abort();
}

async fn refuse<W: AsyncWrite + Unpin>(
    wr: &mut W,
    config: &EngineConfig,
    reason: &str,
    message: &str,
) {
    let refused = DaemonMessage::Refused(Refused {
        reason: reason.to_string(),
        message: message.to_string(),
    });
    if let Ok(frame) = encode_frame(&refused, &config.frame_limits(), config.max_frame) {
        let _ = tokio::time::timeout(config.handshake_deadline, async {
            let _ = wr.write_all(&frame).await;
            let _ = wr.shutdown().await;
        })
        .await;
    }
}

/// The reading side after registration: replies, task updates, enable/disable, bye.
async fn run<R: AsyncRead + Unpin>(
    app: &AppHandle,
    reader: &mut FrameReader<R>,
    registry: &Registry,
    shutdown: &mut watch::Receiver<bool>,
) -> LinkEnd {
    let mut drain_until: Option<tokio::time::Instant> = None;
    loop {
        if drain_until.is_some() && app.lock_calls().pending.is_empty() {
            return LinkEnd::Shutdown;
        }
        let message = tokio::select! {
            m = reader.next() => m,
            _ = until(shutdown, |s| *s), if drain_until.is_none() => {
                // Stop taking calls; wait for the outstanding ones up to the drain time.
                app.lock_calls().closed = Some(Reason::DaemonShutdown);
                drain_until = Some(tokio::time::Instant::now() + app.config().shutdown_drain);
                continue;
            }
            _ = sleep_until_opt(drain_until) => return LinkEnd::Shutdown,
        };
        match message {
            Err(end) => return end,
            Ok(AppMessage::Reply(reply)) => app.complete(reply),
            Ok(AppMessage::Task(snapshot)) => {
                let id = snapshot.id.clone();
                if app.lock_tasks().upsert(app.id(), snapshot).is_err() {
                    tracing::warn!(app = app.slug(), task = %id, "task table full; update dropped");
                }
            }
            Ok(AppMessage::Enabled(state)) => app.set_enabled(registry, state.enabled),
            Ok(AppMessage::Bye(bye)) => return LinkEnd::Bye(bye.reason),
            Ok(AppMessage::Hello(_) | AppMessage::Actions(_) | AppMessage::Ready(_)) => {
                return LinkEnd::Protocol("registration message after ready");
            }
        }
    }
}

async fn sleep_until_opt(deadline: Option<tokio::time::Instant>) {
    match deadline {
        Some(d) => tokio::time::sleep_until(d).await,
        None => std::future::pending().await,
    }
}

/// The writing side: request frames in queue order (skipping calls that were failed or timed
/// out before their turn), then an optional `bye`.
async fn write_requests<W: AsyncWrite + Unpin>(
    app: AppHandle,
    mut wr: W,
    mut queue: mpsc::Receiver<Outgoing>,
    mut bye: oneshot::Receiver<Vec<u8>>,
) {
    loop {
        tokio::select! {
            biased;
            frame = &mut bye => {
                if let Ok(frame) = frame {
                    let _ = wr.write_all(&frame).await;
                    let _ = wr.shutdown().await;
                }
                return;
            }
            next = queue.recv() => {
                let Some(first) = next else { return };
                // Coalesce what is already queued into one write; each request counts as
                // sent from here on (the app may see it), unless it was failed meanwhile.
                let mut batch = Vec::new();
                let mut out = Some(first);
                while let Some(o) = out.take() {
                    let live = app.lock_calls().pending.get_mut(&o.id).map(|p| p.sent = true);
                    if live.is_some() {
                        if batch.is_empty() {
                            batch = o.frame;
                        } else {
                            batch.extend_from_slice(&o.frame);
                        }
                    }
                    if batch.len() < COALESCE {
                        out = queue.try_recv().ok();
                    }
                }
                if batch.is_empty() {
                    continue;
                }
                if let Err(e) = wr.write_all(&batch).await {
                    // The reader sees the same broken transport and ends the link.
                    tracing::debug!(app = app.slug(), "write to app failed: {e}");
                    return;
                }
            }
        }
    }
}
