//! The write side of a host channel: request frames go out in call order, with the held
//! `activity` notices after a write's requests. A call alone on the link (no other call
//! outstanding, nothing queued, nothing left of an earlier write, the writer task not writing)
//! is written by the calling task itself, one non-blocking write, so the call costs no wake-up
//! of another task; what the socket does not take of it, and every frame of a call made while
//! others are outstanding, goes to the link's writer task. That task runs after the tasks
//! woken with it (e.g. every client connection answered by one read of replies, each making its
//! next call) and drains the queue with coalesced writes: one write, and one wake-up of the
//! app, for the calls of a runtime tick instead of one each.
//!
//! [`Outbox`] is the state both share; it lives in the link's call table (`calls.rs`, which
//! also runs the writer task), under the same lock as the pending calls, so taking a request for a write and marking it sent
//! (the "written" rule, see `calls.rs`) are one step, and a direct write never overtakes a
//! queued frame.

use std::collections::VecDeque;

pub(super) use crate::sink::Sink;
use crate::sink::write_now;

/// Requests already queued are coalesced into one write up to this size.
const COALESCE: usize = 64 * 1024;

/// The frames on their way to the app and the write half they go out through.
#[derive(Default)]
pub(super) struct Outbox {
    /// Requests not yet taken for a write, in call order: (id, frame).
    queued: VecDeque<(u64, Vec<u8>)>,
    /// What the socket did not take of a direct write: already counted as written (its
    /// requests are sent), so it goes out before anything else.
    rest: Vec<u8>,
    /// The write half while the writer task is not writing with it; `None` while it writes,
    /// before the link started and after it ended.
    sink: Option<Sink>,
    /// Set for good once writing ended (a write failed, or the link ended): nothing sent from
    /// then on would ever be written.
    gone: bool,
}

impl Outbox {
    /// Whether a frame sent now would be the next bytes on the wire: nothing queued or left
    /// over, and the write half idle.
    pub(super) fn is_clear(&self) -> bool {
        self.queued.is_empty() && self.rest.is_empty() && self.sink.is_some()
    }

    /// Whether writing ended for good ([`Outbox::detach`]).
    pub(super) fn is_gone(&self) -> bool {
        self.gone
    }

    /// Requests waiting for the writer task.
    pub(super) fn queued(&self) -> usize {
        self.queued.len()
    }

    /// Queues request `id` behind what is there already.
    pub(super) fn push(&mut self, id: u64, frame: Vec<u8>) {
        self.queued.push_back((id, frame));
    }

    /// Writes what the socket takes of `bytes` now, without waiting, and keeps the rest for the
    /// writer task. Only when [`Outbox::is_clear`]. True when a rest was kept: the writer task
    /// has to be woken for it.
    pub(super) fn write_direct(&mut self, mut bytes: Vec<u8>) -> bool {
        let written = self.sink.as_mut().map_or(0, |sink| write_now(sink, &bytes));
        if written == bytes.len() {
            return false;
        }
        bytes.drain(..written);
        self.rest = bytes;
        true
    }

    /// The writer task's next write and the write half to write it with: the rest of a direct
    /// write, then the queued requests `taken` says are still to be written (in order, up to
    /// [`COALESCE`] bytes); `None` when the write half is gone. The batch may be empty (the
    /// caller adds the held notices, or writes nothing).
    pub(super) fn take_write(
        &mut self,
        mut taken: impl FnMut(u64) -> bool,
    ) -> Option<(Vec<u8>, Sink)> {
        let sink = self.sink.take()?;
        let mut batch = std::mem::take(&mut self.rest);
        while batch.len() < COALESCE {
            let Some((id, frame)) = self.queued.pop_front() else { break };
            if taken(id) {
                if batch.is_empty() {
                    batch = frame;
                } else {
                    batch.extend_from_slice(&frame);
                }
            }
        }
        Some((batch, sink))
    }

    /// Gives the write half back after a write.
    pub(super) fn put_back(&mut self, sink: Sink) {
        self.sink = Some(sink);
    }

    /// Installs the write half when the link starts.
    pub(super) fn attach(&mut self, sink: Sink) {
        self.sink = Some(sink);
    }

    /// Takes the write half and what is left of a begun write, for good (the link ended, or a
    /// write failed): nothing is written any more, new calls are refused, and the queued
    /// requests are dropped (their calls are failed by the link's end).
    pub(super) fn detach(&mut self) -> Option<(Vec<u8>, Sink)> {
        self.gone = true;
        self.queued.clear();
        let sink = self.sink.take()?;
        Some((std::mem::take(&mut self.rest), sink))
    }
}
