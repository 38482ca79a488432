//! The write half of every connection, client or app, and the one writer they share.
//!
//! Bytes go out from the task that has them, in one non-blocking write, when nothing is ahead
//! of them (the write half idle, nothing queued, nothing left of an earlier write): a call or
//! an answer then costs no wake-up of another task. Otherwise they wait in the connection's
//! [`Outbox`] for its writer task ([`drain`]), which runs after the tasks woken with it (every
//! client answered by one read of an app's replies, each making its next call) and writes what
//! waits in coalesced writes of up to [`COALESCE`] bytes, in slices that let other connections
//! run: one write, and one wake-up of the peer, for the messages of a runtime tick instead of
//! one each.
//!
//! An app's link keeps its outbox under the lock of its pending calls (`app/link/calls.rs`):
//! its frames are tagged with their call's id, and a frame whose call failed before its turn
//! is not written. A client connection's [`Output`] bounds its outbox in bytes and can hold the
//! answers of calls polled together to write them at once.

use std::collections::VecDeque;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};

use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::{Notify, watch};
use tokio::task::JoinHandle;

/// The write half of a connection, whichever transport it is.
pub(crate) type Sink = Box<dyn AsyncWrite + Send + Unpin>;

/// Bytes already waiting are coalesced into one write up to this size, so pipelined messages
/// cost one syscall instead of one each.
const COALESCE: usize = 64 * 1024;

/// Most bytes written before the writer lets other tasks run: a peer that reads a large
/// message as fast as it comes would otherwise hold the thread for the whole message
/// (fairness: an 800 KB `actions/describe` answer is a dozen slices).
const WRITE_SLICE: usize = 64 * 1024;

/// Writes what the socket takes of `bytes` without waiting; 0 when it takes nothing now or
/// fails (the writer task then meets the same state, with the rest, and handles it as ever).
/// Polled with a no-op waker: the write half is idle, so no writer task waits on it; if the
/// socket is full, the waker it keeps is that no-op one until the writer task, which the rest
/// is queued for, polls it with its own.
fn write_now(sink: &mut Sink, bytes: &[u8]) -> usize {
    match Pin::new(sink).poll_write(&mut Context::from_waker(Waker::noop()), bytes) {
        Poll::Ready(Ok(n)) => n,
        Poll::Ready(Err(_)) | Poll::Pending => 0,
    }
}

/// What waits to be written on one connection, and its write half. Each message is queued
/// with a tag its owner recognises it by when the writer takes it ([`Outbox::take_write`]).
pub(crate) struct Outbox<T> {
    /// Messages not yet taken for a write, in order.
    queued: VecDeque<(T, Vec<u8>)>,
    /// What the socket did not take of a direct write: it goes out before anything else.
    rest: Vec<u8>,
    /// The write half while the writer task is not writing with it; `None` while it writes,
    /// before the connection started and after writing ended.
    sink: Option<Sink>,
    /// Set for good once writing ended (a write failed, or the connection ended): nothing
    /// sent from then on would ever be written.
    gone: bool,
}

impl<T> Default for Outbox<T> {
    fn default() -> Self {
        Outbox { queued: VecDeque::new(), rest: Vec::new(), sink: None, gone: false }
    }
}

impl<T> Outbox<T> {
    /// An outbox writing to `sink`.
    pub(crate) fn new(sink: Sink) -> Self {
        Outbox { sink: Some(sink), ..Outbox::default() }
    }

    /// Whether bytes sent now would be the next on the wire: nothing queued or left over, and
    /// the write half idle.
    pub(crate) fn is_clear(&self) -> bool {
        self.queued.is_empty() && self.rest.is_empty() && self.sink.is_some()
    }

    /// Whether writing ended for good ([`Outbox::detach`]).
    pub(crate) fn is_gone(&self) -> bool {
        self.gone
    }

    /// Messages waiting for the writer task.
    pub(crate) fn queued(&self) -> usize {
        self.queued.len()
    }

    /// Queues `bytes` behind what is there already.
    pub(crate) fn push(&mut self, tag: T, bytes: Vec<u8>) {
        self.queued.push_back((tag, bytes));
    }

    /// Writes what the socket takes of `bytes` now (at most one fairness slice), without
    /// waiting, and keeps the rest for the writer task. Only when [`Outbox::is_clear`].
    /// Returns the bytes kept: when not 0, the writer task has to be woken for them.
    pub(crate) fn write_direct(&mut self, mut bytes: Vec<u8>) -> usize {
        let slice = &bytes[..bytes.len().min(WRITE_SLICE)];
        let written = self.sink.as_mut().map_or(0, |sink| write_now(sink, slice));
        if written == bytes.len() {
            return 0;
        }
        bytes.drain(..written);
        self.rest = bytes;
        self.rest.len()
    }

    /// The writer task's next write and the write half to write it with: the rest of a direct
    /// write, then the queued messages `taken` says are still to be written (in order, up to
    /// [`COALESCE`] bytes); `None` when the write half is gone or taken. The batch may be
    /// empty (the owner adds to it, or writes nothing and puts the write half back).
    pub(crate) fn take_write(
        &mut self,
        mut taken: impl FnMut(&T) -> bool,
    ) -> Option<(Vec<u8>, Sink)> {
        let sink = self.sink.take()?;
        let mut batch = std::mem::take(&mut self.rest);
        while batch.len() < COALESCE {
            let Some((tag, bytes)) = self.queued.pop_front() else { break };
            if taken(&tag) {
                if batch.is_empty() {
                    batch = bytes;
                } else {
                    batch.extend_from_slice(&bytes);
                }
            }
        }
        Some((batch, sink))
    }

    /// Gives the write half back after a write (or installs it when the connection starts).
    pub(crate) fn put_back(&mut self, sink: Sink) {
        self.sink = Some(sink);
    }

    /// Takes the write half and what is left of a begun write, for good (the connection
    /// ended, or a write failed): nothing is written any more and the queued messages are
    /// dropped.
    pub(crate) fn detach(&mut self) -> Option<(Vec<u8>, Sink)> {
        self.gone = true;
        self.queued.clear();
        let sink = self.sink.take()?;
        Some((std::mem::take(&mut self.rest), sink))
    }
}

/// A connection as its writer task sees it: where the next write comes from, and where the
/// write half goes back to.
pub(crate) trait Drain {
    /// The next write and the write half to write it with; `None` when nothing is to be
    /// written now.
    fn next_write(&self) -> Option<(Vec<u8>, Sink)>;

    /// The write of `len` bytes went through; `sink` comes back.
    fn written(&self, sink: Sink, len: usize);
}

/// The writer task's work each time it is woken: writes what `connection` gives until it
/// gives nothing. On an error the write half is dropped; the caller ends writing for good.
pub(crate) async fn drain(connection: &impl Drain) -> io::Result<()> {
    while let Some((batch, mut sink)) = connection.next_write() {
        let mut slices = batch.chunks(WRITE_SLICE).peekable();
        while let Some(slice) = slices.next() {
            sink.write_all(slice).await?;
            if slices.peek().is_some() {
                tokio::task::yield_now().await;
            }
        }
        connection.written(sink, batch.len());
    }
    Ok(())
}

/// A client connection's writer: an [`Outbox`] bounded in bytes (`buffered` counts bytes
/// queued, left of a direct write or being written by the writer task), and holding lines to
/// write together ([`Output::hold`]).
///
/// Lines never interleave: a line is written directly (or held) only when the outbox is clear,
/// and that check with the write and every queuing happen under one lock. So lines go out in
/// the order they were sent.
#[derive(Clone)]
pub(crate) struct Output {
    shared: Arc<Shared>,
    limit: usize,
    writer: Arc<Mutex<Option<JoinHandle<bool>>>>,
}

/// What the senders share with the writer task.
struct Shared {
    lines: Mutex<Lines>,
    buffered: watch::Sender<usize>,
    /// Wakes the writer task: something was queued, or the connection is closing.
    woken: Notify,
}

struct Lines {
    out: Outbox<()>,
    /// Whether lines are being held to go out in one write ([`Output::hold`]).
    holding: bool,
    /// The lines held; only while the outbox is clear, at most `min(limit, COALESCE)` bytes.
    held: Vec<u8>,
    /// Set by [`Output::close`]: the writer task shuts the write side down once everything
    /// was written.
    closing: bool,
}

impl Output {
    pub(crate) fn start<W: AsyncWrite + Send + Unpin + 'static>(wr: W, limit: usize) -> Output {
        let lines = Lines {
            out: Outbox::new(Box::new(wr)),
            holding: false,
            held: Vec::new(),
            closing: false,
        };
        let shared = Arc::new(Shared {
            lines: Mutex::new(lines),
            buffered: watch::Sender::new(0),
            woken: Notify::new(),
        });
        let writer = tokio::spawn(write_lines(shared.clone()));
        Output { shared, limit: limit.max(1), writer: Arc::new(Mutex::new(Some(writer))) }
    }

    /// Holds the lines sent from now until [`Output::release`] to write them together: the
    /// calls the connection polls in one go (answers that came from the app in one read) cost
    /// one write, as they would when the writer task coalesced them.
    pub(crate) fn hold(&self) {
        self.shared.lines().holding = true;
    }

    /// Writes the lines held since [`Output::hold`].
    pub(crate) fn release(&self) {
        let mut lines = self.shared.lines();
        lines.holding = false;
        let held = std::mem::take(&mut lines.held);
        if !held.is_empty() {
            self.shared.write_direct(&mut lines, held);
        }
    }

    /// Waits until less than `limit` bytes are buffered.
    pub(crate) async fn wait_room(&self) {
        if *self.shared.buffered.borrow() < self.limit {
            return;
        }
        let mut rx = self.shared.buffered.subscribe();
        let _ = rx.wait_for(|b| *b < self.limit).await;
    }

    /// Sends one response line (`line` without its newline): written at once when nothing is
    /// ahead of it, else queued. Waits for room first, and takes the room atomically, so the
    /// buffer never holds more than `limit` plus one response.
    pub(crate) async fn send(&self, mut line: Vec<u8>) {
        line.push(b'\n');
        loop {
            self.wait_room().await;
            match self.write_or_queue(line) {
                Ok(()) => return,
                Err(unsent) => line = unsent,
            }
        }
    }

    /// Writes `line` now (or holds it) if the outbox is clear, else queues it; gives `line`
    /// back when there is no room (another sender took it first).
    fn write_or_queue(&self, line: Vec<u8>) -> Result<(), Vec<u8>> {
        let shared = &*self.shared;
        let mut lines = shared.lines();
        let hold_max = self.limit.min(COALESCE);
        if !lines.held.is_empty() && lines.held.len() + line.len() > hold_max {
            let held = std::mem::take(&mut lines.held);
            shared.write_direct(&mut lines, held);
        }
        if lines.out.is_clear() {
            if lines.holding && line.len() <= hold_max {
                if lines.held.is_empty() {
                    lines.held = line;
                } else {
                    lines.held.extend_from_slice(&line);
                }
            } else {
                shared.write_direct(&mut lines, line);
            }
            return Ok(());
        }
        let len = line.len();
        let limit = self.limit;
        let taken = shared.buffered.send_if_modified(|b| {
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
        if lines.out.is_gone() {
            // Writing ended (transport broken): nothing will ever drain this.
            shared.buffered.send_modify(|b| *b -= len);
        } else {
            lines.out.push((), line);
            shared.woken.notify_one();
        }
        Ok(())
    }

    fn take_writer(&self) -> Option<JoinHandle<bool>> {
        lock(&self.writer).take()
    }

    /// Stops writing for good: the writer task ends and the write half is dropped.
    pub(crate) fn abandon(&self) {
        if let Some(writer) = self.take_writer() {
            writer.abort();
        }
        drop(self.shared.lines().out.detach());
    }

    /// Writes what is queued, then shuts the write side down. True when every line was
    /// written.
    pub(crate) async fn close(&self) -> bool {
        self.shared.lines().closing = true;
        self.shared.woken.notify_one();
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

impl Shared {
    fn lines(&self) -> MutexGuard<'_, Lines> {
        lock(&self.lines)
    }

    /// Writes what the socket takes of `bytes` now and leaves the rest to the writer task.
    /// Only while the outbox is clear (so the rest is within `limit` plus one response).
    fn write_direct(&self, lines: &mut Lines, bytes: Vec<u8>) {
        let kept = lines.out.write_direct(bytes);
        if kept > 0 {
            self.buffered.send_modify(|b| *b += kept);
            self.woken.notify_one();
        }
    }
}

impl Drain for Shared {
    fn next_write(&self) -> Option<(Vec<u8>, Sink)> {
        let mut lines = self.lines();
        let (batch, sink) = lines.out.take_write(|()| true)?;
        if batch.is_empty() {
            lines.out.put_back(sink);
            return None;
        }
        Some((batch, sink))
    }

    fn written(&self, sink: Sink, len: usize) {
        self.lines().out.put_back(sink);
        self.buffered.send_modify(|b| *b -= len);
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// Stops the writer if closing is abandoned (a client that never reads).
struct AbortOnDrop(tokio::task::AbortHandle);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// A client connection's writer task: drains the outbox whenever woken; once closing and
/// everything is written, shuts the write side down. False when a write failed.
async fn write_lines(shared: Arc<Shared>) -> bool {
    loop {
        shared.woken.notified().await;
        if let Err(e) = drain(&*shared).await {
            tracing::debug!("client write failed: {e}");
            let mut lines = shared.lines();
            drop(lines.out.detach());
            // Under the lock every sender takes room in: nothing queued is left to count.
            shared.buffered.send_replace(0);
            return false;
        }
        let sink = {
            let mut lines = shared.lines();
            if !(lines.closing && lines.out.is_clear()) {
                continue;
            }
            lines.out.detach().map(|(_, sink)| sink)
        };
        if let Some(mut wr) = sink {
            let _ = wr.shutdown().await;
        }
        return true;
    }
}

#[cfg(test)]
mod tests {
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
