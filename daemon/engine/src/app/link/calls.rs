//! The link's calls: a call gets an id chosen here and waits in the pending table; the reading
//! side hands the matching raw reply back through [`Link::complete`], and the app side gives it
//! its meaning (`app/replies.rs`). Nothing else lives here: who the app is and whether it is
//! enabled belong to its registration and the registry.
//!
//! Requests carry ids chosen here, so a reply can only ever complete the call it belongs to:
//! replies to unknown, timed-out or never-sent ids are dropped and logged. Each app has one
//! bounded queue of requests not yet written (`max_queued_per_app`), and at most that many
//! requests outstanding in all; beyond that calls fail fast with `not_executed/busy`, so a
//! slow app costs its clients an error, never the daemon's memory. A call's fate when the app
//! goes away depends on whether it
//! was written: on disable, unwritten calls fail `not_executed/disabled` and written ones wait
//! for their real outcome; on disconnect every outstanding call fails
//! `outcome_unknown/app_disconnected` at once, not at its deadline. A call whose deadline
//! passes fails `outcome_unknown/timeout`, never "cancelled"; if it was still queued it is then
//! never written, so the conservative answer stays true.
//!
//! "Written" starts when a request is taken for a write: by the calling task itself when no
//! other call is outstanding and nothing is ahead of it, else by the link's writer task for its
//! next write (the requests queued meanwhile are coalesced into one write; `output.rs`). So a
//! request inside a write the app has not fully read yet counts as sent: its outcome is the
//! app's to report.
//!
//! The only errors made here are the link's own: disabled, busy, closed (disconnected or
//! shut down), timeout, and a request too large for a frame.
//!
//! Deadlines are kept in the pending table and enforced by the link's reading side
//! ([`Link::expire`], driven by one timer per link), not by a timer per call: arming a
//! timer while the runtime sleeps without one costs a wake-up of the driver (a write to its
//! eventfd), which a timer per call paid on every call.
//!
//! `activity` notices ([`Link::notify`]) are held here (`app/notices.rs` has the rule) and ride
//! in the next write, direct or the writer task's, after that write's requests; the same link
//! timer that watches the deadlines flushes them.

use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard};

use jfgui_proto::channel::{
    Activity, Call, CallResult, DaemonMessage, Request, Withdraw, encode_activity_frame,
    encode_frame, encode_request_frame,
};
use jfgui_proto::{ActionError, Reason};
use rustc_hash::FxHashMap;
use tokio::io::AsyncWriteExt;
use tokio::sync::{Notify, oneshot};
use tokio::time::Instant;

use crate::EngineConfig;
use crate::app::notices::Notices;
use crate::consent::Asking;
use crate::output::{self, Drain, Outbox, Sink};

/// What a call's caller receives: the app's result or error, unread, or the link's own error.
pub type CallOutcome = Result<CallResult, ActionError>;

/// The door to one app's host channel: calls out, their replies matched back. Cheap to clone.
#[derive(Clone)]
pub struct Link(Arc<LinkInner>);

struct LinkInner {
    /// The app's endpoint slug, for logs.
    slug: String,
    calls: Mutex<Calls>,
    /// Tells the link to look at the deadlines again: a call arrived while none was watched.
    deadlines: Notify,
    /// Wakes the link's writer task: something was queued for it, or notices are due.
    writer: Notify,
    config: Arc<EngineConfig>,
}

impl fmt::Debug for Link {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Link").field("slug", &self.0.slug).finish_non_exhaustive()
    }
}

/// Outstanding requests of one app.
struct Calls {
    next_id: u64,
    /// Keyed by ids chosen here (sequential), so no chosen-key flooding: a plain fast hash.
    pending: FxHashMap<u64, Pending>,
    /// Set when the link is closing: new calls fail with this reason at once.
    closed: Option<Reason>,
    /// Whether the link's deadline timer is set for the earliest pending deadline. Every call
    /// of an app has the same deadline length, so a call arriving while it is set is due no
    /// earlier than the timer; only a call arriving while it is unset needs to tell the link.
    watched: bool,
    /// `activity` notices waiting for the next write.
    notices: Notices,
    /// The frames on their way to the app, tagged with their call's id, and the write half
    /// (`output.rs`).
    out: Outbox<u64>,
}

/// Marks request `id` as taken for a write; false if it was failed or forgotten before its turn
/// (then it is not written at all).
fn mark_sent(pending: &mut FxHashMap<u64, Pending>, id: u64) -> bool {
    pending.get_mut(&id).map(|p| p.sent = true).is_some()
}

struct Pending {
    reply: oneshot::Sender<CallOutcome>,
    /// What a call that may wait for the user carries to its reply (`app/prompts.rs`).
    asking: Option<Arc<Asking>>,
    /// Whether the writer has started writing the request (then the app may have run it).
    sent: bool,
    /// When the call fails `outcome_unknown/timeout` if no reply came.
    deadline: Instant,
}

/// The caller of one call, waiting for its outcome; see [`Link::complete`].
#[must_use = "the caller waits until the outcome is sent or the waiter dropped"]
pub struct Waiter(oneshot::Sender<CallOutcome>, Option<Arc<Asking>>);

impl fmt::Debug for Waiter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Waiter")
    }
}

impl Waiter {
    /// Hands the outcome to the caller (a no-op if it stopped waiting meanwhile).
    pub fn send(self, outcome: CallOutcome) {
        let _ = self.0.send(outcome);
    }

    /// What the call carried for a prompt, when it named a `confirm` action.
    pub fn asking(&self) -> Option<&Arc<Asking>> {
        self.1.as_ref()
    }
}

impl Link {
    /// The link of the app at endpoint `slug`; its requests are queued until the write half is
    /// attached ([`Link::attach_writer`]).
    pub(crate) fn new(slug: String, config: Arc<EngineConfig>) -> Link {
        Link(Arc::new(LinkInner {
            slug,
            calls: Mutex::new(Calls {
                next_id: 0,
                pending: FxHashMap::default(),
                closed: None,
                watched: false,
                notices: Notices::default(),
                out: Outbox::default(),
            }),
            deadlines: Notify::new(),
            writer: Notify::new(),
            config,
        }))
    }

    /// Holds `activity` for the app's next write (or the flush soon after; `app/notices.rs`)
    /// without waiting. False when it was not held: the link is closing, or the notice slots
    /// are full. A notice never takes a call's place in the queue, so it never makes a call
    /// `busy`.
    pub fn notify(&self, activity: &Activity) -> bool {
        let config = &self.0.config;
        let Ok(frame) = encode_activity_frame(activity, &config.frame_limits(), config.max_frame)
        else {
            return false;
        };
        let arm = {
            let mut calls = self.lock_calls();
            if calls.closed.is_some() {
                return false;
            }
            match calls.notices.hold(&frame, Instant::now()) {
                Some(arm) => arm,
                None => return false,
            }
        };
        if arm {
            // The link's timer may be set later (a call's deadline) or not at all.
            self.0.deadlines.notify_one();
        }
        true
    }

    /// Holds a `withdraw` for the next write, as a notice is held; it takes no notice slot (an
    /// app has at most 16 prompts to withdraw). False when the link is closing.
    pub fn withdraw(&self, withdraw: Withdraw) -> bool {
        let config = &self.0.config;
        let message = DaemonMessage::Withdraw(withdraw);
        let Ok(frame) = encode_frame(&message, &config.frame_limits(), config.max_frame) else {
            return false;
        };
        let arm = {
            let mut calls = self.lock_calls();
            if calls.closed.is_some() {
                return false;
            }
            calls.notices.hold_always(&frame, Instant::now())
        };
        if arm {
            self.0.deadlines.notify_one();
        }
        true
    }

    /// Installs the write half of the connection once the app was welcomed: from now on a
    /// request with nothing ahead of it is written by its caller.
    pub(super) fn attach_writer(&self, sink: Sink) {
        self.lock_calls().out.put_back(sink);
    }

    /// Takes the write half for good (the link ended, or a write failed) with the rest of a
    /// begun write; new calls fail `app_disconnected`, the queued requests are dropped (their
    /// calls fail with the link's end).
    pub(super) fn detach_writer(&self) -> Option<(Vec<u8>, Sink)> {
        self.lock_calls().out.detach()
    }

    /// Completes when the writer task has something to look at ([`Drain::next_write`]).
    pub(super) async fn writer_woken(&self) {
        self.0.writer.notified().await;
    }

    /// The engine configuration.
    pub fn config(&self) -> &EngineConfig {
        &self.0.config
    }

    /// Sends `call` to the app and waits for its reply, at most the request deadline. The
    /// outcome is the app's reply as it came, or the link's own error.
    ///
    /// Link errors: `not_executed/disabled` (disabled before the request was written; the app's
    /// gate refuses calls while it is disabled), `not_executed/busy` (queue full),
    /// `outcome_unknown/timeout` (no reply in time; a late reply is dropped),
    /// `outcome_unknown/app_disconnected`, `outcome_unknown/daemon_shutdown`,
    /// `internal/response_too_large` (the request does not fit a frame). Dropping the future
    /// forgets the call: its reply is dropped.
    ///
    /// `asking` (a call of a `confirm` action) comes back with its reply ([`Waiter::asking`]).
    pub async fn request(&self, call: Call, asking: Option<Arc<Asking>>) -> CallOutcome {
        let id = {
            let mut calls = self.lock_calls();
            if let Some(reason) = &calls.closed {
                return Err(closed_error(reason.clone()));
            }
            calls.next_id += 1;
            calls.next_id
        };
        let config = &self.0.config;
        let frame =
            encode_request_frame(Request { id, call }, &config.frame_limits(), config.max_frame)
                .map_err(|e| {
                    ActionError::new(
                        Reason::ResponseTooLarge { action: None },
                        format!("The request does not fit the host channel: {e}."),
                    )
                })?;
        let (tx, rx) = oneshot::channel();
        let deadline = Instant::now() + config.request_deadline;
        let (wake_writer, watch_deadline) = {
            let mut calls = self.lock_calls();
            if let Some(reason) = &calls.closed {
                return Err(closed_error(reason.clone()));
            }
            if calls.out.is_gone() {
                return Err(closed_error(Reason::AppDisconnected));
            }
            if calls.pending.len() >= config.max_queued_per_app
                || calls.out.queued() >= config.max_queued_per_app
            {
                return Err(busy_error());
            }
            // Alone on the link: written here, with the held notices riding along, so a lone
            // client's call costs no wake-up of the writer task. With other calls outstanding,
            // more are likely to arrive in this runtime tick (their clients are being
            // answered): queued, the writer task, which runs after the tasks already woken,
            // writes them all at once instead of one write (and one wake-up of the app) each.
            let alone = calls.pending.is_empty() && calls.out.is_clear();
            calls.pending.insert(id, Pending { reply: tx, asking, sent: false, deadline });
            let wake_writer = if alone {
                mark_sent(&mut calls.pending, id);
                let mut batch = frame;
                calls.notices.take(&mut batch);
                calls.out.write_direct(batch) > 0
            } else {
                calls.out.push(id, frame);
                true
            };
            (wake_writer, !std::mem::replace(&mut calls.watched, true))
        };
        if wake_writer {
            self.0.writer.notify_one();
        }
        if watch_deadline {
            self.0.deadlines.notify_one();
        }
        let _forget = ForgetOnDrop { app: self, id };
        // The outcome comes from the reply, the link's end, or the deadline ([`Link::expire`]).
        rx.await.unwrap_or_else(|_| Err(closed_error(Reason::AppDisconnected)))
    }

    /// Completes once a call arrived while no deadline was watched, or a notice was held
    /// while no flush was armed; then the link calls [`Link::expire`] and sets its timer.
    pub(super) async fn deadline_added(&self) {
        self.0.deadlines.notified().await;
    }

    /// Fails the calls whose deadline has passed with `outcome_unknown/timeout` (a reply
    /// arriving later finds no pending entry and is dropped), has the writer write the held
    /// notices when their flush is due, and returns the earliest deadline or flush still
    /// pending, for the link's timer; `None` when nothing is left to watch.
    pub(super) fn expire(&self, now: Instant) -> Option<Instant> {
        let (expired, flush, next) = {
            let mut calls = self.lock_calls();
            let ids: Vec<u64> = calls
                .pending
                .iter()
                .filter(|(_, p)| p.deadline <= now)
                .map(|(id, _)| *id)
                .collect();
            let expired: Vec<(u64, Pending)> = ids
                .into_iter()
                .filter_map(|id| calls.pending.remove(&id).map(|p| (id, p)))
                .collect();
            let next = calls.pending.values().map(|p| p.deadline).min();
            calls.watched = next.is_some();
            let (flush, flush_at) = calls.notices.due(now);
            let next = match (next, flush_at) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            (expired, flush, next)
        };
        // The writer task takes the held notices with whatever it writes next (or alone).
        if flush {
            self.0.writer.notify_one();
        }
        for (id, pending) in expired {
            tracing::warn!(app = %self.0.slug, id, "request deadline passed; outcome unknown");
            let _ = pending.reply.send(Err(ActionError::new(
                Reason::Timeout,
                "The app did not answer within the request deadline; the call may or may not have taken effect.",
            )));
        }
        next
    }

    /// Requests queued or awaiting their reply.
    #[cfg(test)]
    pub(crate) fn outstanding(&self) -> usize {
        self.lock_calls().pending.len()
    }

    fn lock_calls(&self) -> MutexGuard<'_, Calls> {
        self.0.calls.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The caller waiting for the reply `id`, taking it out of the pending table; `None` (and a
    /// log line) for a reply to an unknown, unsent, answered or timed-out request.
    pub fn complete(&self, id: u64) -> Option<Waiter> {
        let mut calls = self.lock_calls();
        match calls.pending.get(&id) {
            Some(p) if p.sent => calls.pending.remove(&id).map(|p| Waiter(p.reply, p.asking)),
            _ => {
                tracing::warn!(
                    app = %self.0.slug,
                    id,
                    "dropping a reply to an unknown, unsent, answered or timed-out request"
                );
                None
            }
        }
    }

    /// True once a closing link has no call left to wait for.
    pub(super) fn drained(&self) -> bool {
        self.lock_calls().pending.is_empty()
    }

    /// Stops taking calls: new ones fail with `reason` at once; outstanding ones keep waiting.
    pub(crate) fn stop_calls(&self, reason: Reason) {
        self.lock_calls().closed = Some(reason);
    }

    /// The link ended: no new calls, every outstanding call failed with `reason` now rather
    /// than at its deadline.
    pub fn close(&self, reason: &Reason) {
        self.stop_calls(reason.clone());
        self.fail_pending(reason, false);
    }

    /// Fails the calls not yet written with `not_executed/disabled` (the app disabled agent
    /// access); the written ones wait for their real outcome.
    pub fn fail_unsent(&self) {
        self.fail_pending(&Reason::Disabled, true);
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
}

impl Drain for Link {
    /// The writer task's next write with the write half to write it with: the rest of a direct
    /// write, the queued requests still pending (marked sent; coalesced), then the held
    /// notices. `None` when there is nothing to write (or no write half).
    fn next_write(&self) -> Option<(Vec<u8>, Sink)> {
        let mut calls = self.lock_calls();
        let calls = &mut *calls;
        let pending = &mut calls.pending;
        let (mut batch, sink) = calls.out.take_write(|id| mark_sent(pending, *id))?;
        calls.notices.take(&mut batch);
        if batch.is_empty() {
            calls.out.put_back(sink);
            return None;
        }
        Some((batch, sink))
    }

    fn written(&self, sink: Sink, _len: usize) {
        self.lock_calls().out.put_back(sink);
    }
}

/// Removes a call's pending entry when its caller stops waiting (e.g. a client connection
/// closed), so the late reply is recognised as unknown.
struct ForgetOnDrop<'a> {
    app: &'a Link,
    id: u64,
}

impl Drop for ForgetOnDrop<'_> {
    fn drop(&mut self) {
        self.app.lock_calls().pending.remove(&self.id);
    }
}

fn busy_error() -> ActionError {
    ActionError::new(Reason::Busy, "The app has too many requests queued; retry later.")
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

/// The writer task: whenever woken, writes what [`Drain::next_write`] gives it until nothing is
/// left; on `bye`, writes the rest of a begun write, then `bye`, and shuts the write side down.
/// Calls failed or timed out before their turn are not written at all.
pub(super) async fn write_requests(link: Link, mut bye: oneshot::Receiver<Vec<u8>>) {
    loop {
        tokio::select! {
            biased;
            frame = &mut bye => {
                if let (Ok(frame), Some((rest, mut wr))) = (frame, link.detach_writer()) {
                    let _ = wr.write_all(&rest).await;
                    let _ = wr.write_all(&frame).await;
                    let _ = wr.shutdown().await;
                }
                return;
            }
            () = link.writer_woken() => {}
        }
        if let Err(e) = output::drain(&link).await {
            // The reader sees the same broken transport and ends the link; new calls fail at
            // once meanwhile.
            tracing::debug!(app = %link.0.slug, "write to app failed: {e}");
            drop(link.detach_writer());
            return;
        }
    }
}

#[cfg(test)]
mod tests;
