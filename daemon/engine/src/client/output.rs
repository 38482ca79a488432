//! A client connection's writer: a response goes out at once from the task that has it when
//! nothing is buffered and the socket takes it (no hop to another task); otherwise it is queued
//! for the connection's writer task, which drains the queue with coalesced writes, in slices
//! that let other connections run. The queue is bounded in bytes.

use std::sync::{Arc, Mutex};

use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;

use crate::sink::{Sink, write_now};

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
pub(crate) struct Output {
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
    pub(crate) fn start<W: AsyncWrite + Send + Unpin + 'static>(wr: W, limit: usize) -> Output {
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
    pub(crate) fn hold(&self) {
        lock(&self.direct).holding = true;
    }

    /// Writes the lines held since [`Output::hold`].
    pub(crate) fn release(&self) {
        let mut direct = lock(&self.direct);
        direct.holding = false;
        let held = std::mem::take(&mut direct.held);
        if !held.is_empty() {
            self.write_direct(&mut direct, held);
        }
    }

    /// Waits until less than `limit` bytes are buffered.
    pub(crate) async fn wait_room(&self) {
        if *self.buffered.borrow() < self.limit {
            return;
        }
        let mut rx = self.buffered.subscribe();
        let _ = rx.wait_for(|b| *b < self.limit).await;
    }

    /// Sends one response line (`line` without its newline): written at once when nothing is
    /// buffered, else queued. Waits for room first, and takes the room atomically, so the
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
    pub(crate) fn abandon(&self) {
        if let Some(writer) = self.take_writer() {
            writer.abort();
        }
        lock(&self.direct).sink = None;
    }

    /// Writes what is queued, then shuts the write side down. True when every line was
    /// written.
    pub(crate) async fn close(&self) -> bool {
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
