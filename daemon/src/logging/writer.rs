//! The log's background writer: lines formatted on the event loop are queued here and written
//! to stderr by a thread of their own, so a stalled stderr never stops the daemon.
//!
//! At most `limit` lines wait or are being written; further lines are dropped and counted. The
//! queue holds only the lines that are waiting: it grows as lines arrive and an idle daemon's
//! is empty. A channel allocated at its bound up front (what `tracing-appender` uses) kept
//! 8192 slots resident for the daemon's whole life to absorb a burst that may never come.

use std::collections::VecDeque;
use std::io::{self, Write};
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use jfgui_engine::Counter;
use tracing_subscriber::fmt::MakeWriter;

/// How long the final flush at exit may take: a stalled stderr must not keep the daemon from
/// exiting.
const FLUSH_AT_EXIT: Duration = Duration::from_secs(1);

/// The lines between the event loop and the writer thread.
#[derive(Debug)]
pub struct Queue {
    state: Mutex<State>,
    /// Signalled when a line is queued or the writer is asked to finish.
    ready: Condvar,
    limit: usize,
    /// The lines dropped; the engine reports it (`daemon/status` `logDropped`).
    dropped: Counter,
}

#[derive(Debug, Default)]
struct State {
    waiting: VecDeque<Vec<u8>>,
    /// Lines the writer took and is writing: they still count against the limit.
    writing: usize,
    closing: bool,
}

impl Queue {
    /// Lines dropped so far because `limit` lines were already waiting.
    pub fn dropped_lines(&self) -> u64 {
        self.dropped.get()
    }

    fn push(&self, line: &[u8]) {
        let mut state = self.lock();
        if state.waiting.len() + state.writing >= self.limit {
            drop(state);
            self.dropped.add(1);
            return;
        }
        state.waiting.push_back(line.to_vec());
        drop(state);
        self.ready.notify_one();
    }

    /// The lines to write next, all that are waiting; `None` once closing with nothing left.
    fn take(&self) -> Option<VecDeque<Vec<u8>>> {
        let mut state = self.lock();
        state.writing = 0;
        loop {
            if !state.waiting.is_empty() {
                let lines = std::mem::take(&mut state.waiting);
                state.writing = lines.len();
                return Some(lines);
            }
            if state.closing {
                return None;
            }
            state = self.ready.wait(state).unwrap_or_else(PoisonError::into_inner);
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock cannot leave the state half-changed: every change is
        // one assignment or one push.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// What the formatting layer writes each event's line to (one `write` per line).
#[derive(Debug)]
pub struct LineWriter<'a>(&'a Queue);

impl Write for LineWriter<'_> {
    fn write(&mut self, line: &[u8]) -> io::Result<usize> {
        self.0.push(line);
        Ok(line.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// The formatting layer's writer: a handle on the queue.
#[derive(Debug, Clone)]
pub struct Lines(Arc<Queue>);

impl Lines {
    pub fn queue(&self) -> &Arc<Queue> {
        &self.0
    }
}

impl<'a> MakeWriter<'a> for Lines {
    type Writer = LineWriter<'a>;

    fn make_writer(&'a self) -> LineWriter<'a> {
        LineWriter(&self.0)
    }
}

/// Keeps the writer thread; dropping it writes out what is queued, waiting
/// [`FLUSH_AT_EXIT`] at most.
#[derive(Debug)]
#[must_use = "dropping the guard stops the log writer"]
pub struct WriterGuard {
    queue: Arc<Queue>,
    finished: mpsc::Receiver<()>,
}

impl Drop for WriterGuard {
    fn drop(&mut self) {
        self.queue.lock().closing = true;
        self.queue.ready.notify_one();
        let _ = self.finished.recv_timeout(FLUSH_AT_EXIT);
    }
}

/// Starts the thread writing queued lines to `out`, with at most `limit` lines waiting; the
/// lines dropped are counted in `dropped`.
pub fn spawn(
    limit: usize,
    mut out: impl Write + Send + 'static,
    dropped: Counter,
) -> io::Result<(Lines, WriterGuard)> {
    let queue = Arc::new(Queue {
        state: Mutex::default(),
        ready: Condvar::new(),
        limit: limit.max(1),
        dropped,
    });
    let (finished_tx, finished) = mpsc::channel();
    let worker = Arc::clone(&queue);
    std::thread::Builder::new().name("jfgui-agentd-log".into()).spawn(move || {
        while let Some(lines) = worker.take() {
            for line in lines {
                // Nowhere left to report a failed write of the log itself.
                let _ = out.write_all(&line);
            }
            let _ = out.flush();
        }
        let _ = finished_tx.send(());
    })?;
    Ok((Lines(Arc::clone(&queue)), WriterGuard { queue, finished }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An output that blocks until released, recording what was written.
    #[derive(Clone, Default)]
    struct Gate {
        open: Arc<(Mutex<bool>, Condvar)>,
        written: Arc<Mutex<Vec<u8>>>,
    }

    impl Gate {
        fn open(&self) {
            *self.open.0.lock().unwrap() = true;
            self.open.1.notify_all();
        }

        fn text(&self) -> String {
            String::from_utf8(self.written.lock().unwrap().clone()).unwrap()
        }
    }

    impl Write for Gate {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            let (open, changed) = &*self.open;
            let mut open = open.lock().unwrap();
            while !*open {
                open = changed.wait(open).unwrap();
            }
            self.written.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    fn write(lines: &Lines, text: &str) {
        lines.make_writer().write_all(text.as_bytes()).unwrap();
    }

    #[test]
    fn lines_reach_the_output_in_order_and_the_guard_flushes_them() {
        let gate = Gate::default();
        gate.open();
        let (lines, guard) = spawn(8, gate.clone(), Counter::default()).unwrap();
        for i in 0..5 {
            write(&lines, &format!("line {i}\n"));
        }
        drop(guard);
        assert_eq!(gate.text(), "line 0\nline 1\nline 2\nline 3\nline 4\n");
        assert_eq!(lines.queue().dropped_lines(), 0);
    }

    #[test]
    fn a_stalled_output_drops_and_counts_lines_beyond_the_limit() {
        let gate = Gate::default();
        let (lines, guard) = spawn(3, gate.clone(), Counter::default()).unwrap();
        for i in 0..10 {
            write(&lines, &format!("{i}\n"));
        }
        // Whether the writer already took some, at most 3 lines are held: 7 are dropped.
        assert_eq!(lines.queue().dropped_lines(), 7);
        gate.open();
        drop(guard);
        assert_eq!(gate.text(), "0\n1\n2\n");
    }

    #[test]
    fn an_idle_queue_holds_nothing() {
        let gate = Gate::default();
        gate.open();
        let (lines, guard) = spawn(8192, gate, Counter::default()).unwrap();
        assert_eq!(lines.queue().lock().waiting.capacity(), 0);
        drop(guard);
    }

    #[test]
    fn a_stalled_output_does_not_keep_the_guard_from_dropping() {
        let gate = Gate::default();
        let (lines, guard) = spawn(4, gate.clone(), Counter::default()).unwrap();
        write(&lines, "stuck\n");
        drop(guard);
        gate.open();
    }
}
