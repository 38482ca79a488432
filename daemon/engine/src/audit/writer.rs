//! The writer thread: takes records from a bounded queue, encodes them (input hash included),
//! appends them to the file and hands each line to the live followers (`audit/follow`).
//!
//! A call only ever does a non-blocking `try_send`: a full queue drops the record and counts
//! it, so a slow or stuck disk never delays a call. A write error drops the records it lost
//! the same way. Drops not yet reported are written as `{"time":…,"dropped":N}` before the
//! next records that can be written, and the running total is `daemon/status.auditDropped`.
//!
//! The writer is woken once per batch, not per record: after the first record wakes it, it
//! stays awake for [`BATCH_WINDOW`] and then takes everything queued, so the calls of that
//! window find no sleeping receiver and their `try_send` wakes nobody (the queue, `queue.rs`,
//! only wakes a receiver that sleeps). The batch goes to the file in as few writes as
//! rotation allows (`file.rs`), each record whole. Idle, the thread sleeps in `wait`.
//!
//! At exit [`Writer::flush`] waits (bounded) until what was queued before it is written, so a
//! call answered just before SIGTERM is still in the file.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::TrySendError;
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

use super::file::{AppendError, AuditFile};
use super::queue::{self, Receiver, Sender};
use super::record::{Record, dropped_line};
use super::time::now_ms;
use crate::backlog;

/// Lines for followers, shared by all of them.
pub type Line = Arc<[u8]>;

/// Records dropped: in all (for status) and not yet reported in the file.
#[derive(Debug, Default)]
struct Drops {
    total: AtomicU64,
    unreported: AtomicU64,
}

impl Drops {
    fn add(&self, n: u64) {
        self.total.fetch_add(n, Ordering::Relaxed);
        self.unreported.fetch_add(n, Ordering::Relaxed);
    }
}

/// What the writer thread takes off its queue.
#[derive(Debug)]
enum Item {
    Record(Box<Record>),
    /// Everything queued before is written (or dropped): say so.
    Flush(mpsc::Sender<()>),
}

/// The sending side, held by the [`Audit`](super::Audit) handle.
#[derive(Debug)]
pub struct Writer {
    queue: Sender<Item>,
    drops: Arc<Drops>,
    follow: backlog::Sender<Line>,
}

/// Live followers may fall this many lines behind before they are told they missed some (only
/// the lines not yet taken by every follower are held).
const FOLLOW_BACKLOG: usize = 1024;

/// How long the writer, once woken, lets records gather before it takes them: a record
/// reaches the file and the followers at most this much later.
const BATCH_WINDOW: Duration = Duration::from_millis(5);

impl Writer {
    /// Starts the thread writing to `file` (`None`: no place for the log, so every record is
    /// dropped and counted) with a queue of `capacity` records.
    pub fn start(file: Option<AuditFile>, capacity: usize, keep_input: bool) -> Writer {
        let (queue, rx) = queue::bounded(capacity);
        let drops = Arc::new(Drops::default());
        let follow = backlog::Sender::new(FOLLOW_BACKLOG);
        let thread_drops = drops.clone();
        let thread_follow = follow.clone();
        let spawned = std::thread::Builder::new()
            .name("audit-writer".into())
            .spawn(move || run(&rx, file, keep_input, &thread_drops, &thread_follow));
        if let Err(e) = spawned {
            // The receiver went with the closure: every submit now counts as dropped.
            tracing::error!("audit: cannot start the writer thread: {e}");
        }
        Writer { queue, drops, follow }
    }

    /// Queues `record` without ever blocking; a full queue (or a dead writer) drops it.
    pub fn submit(&self, record: Record) {
        match self.queue.try_send(Item::Record(Box::new(record))) {
            Ok(()) => {}
            Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => self.drops.add(1),
        }
    }

    /// Blocks until every record queued before this call is written, for at most `limit`
    /// (the queue may be full for part of it). False if that did not happen in time.
    pub fn flush(&self, limit: Duration) -> bool {
        let deadline = Instant::now() + limit;
        let (done, written) = mpsc::channel();
        let mut item = Item::Flush(done);
        loop {
            match self.queue.try_send(item) {
                Ok(()) => break,
                Err(TrySendError::Disconnected(_)) => return false,
                Err(TrySendError::Full(back)) if Instant::now() < deadline => {
                    item = back;
                    std::thread::sleep(Duration::from_millis(2));
                }
                Err(TrySendError::Full(_)) => return false,
            }
        }
        written.recv_timeout(deadline.saturating_duration_since(Instant::now())).is_ok()
    }

    /// Records dropped since start.
    pub fn dropped(&self) -> u64 {
        self.drops.total.load(Ordering::Relaxed)
    }

    /// A receiver of every line written from now on.
    pub fn follow(&self) -> backlog::Receiver<Line> {
        self.follow.subscribe()
    }
}

fn run(
    rx: &Receiver<Item>,
    mut file: Option<AuditFile>,
    keep_input: bool,
    drops: &Drops,
    follow: &backlog::Sender<Line>,
) {
    let mut failing = false;
    let mut lines = Vec::new();
    let mut flushed = Vec::new();
    while rx.wait() {
        // Awake: submits in the window wake nobody.
        std::thread::sleep(BATCH_WINDOW);
        for item in rx.take_all() {
            match item {
                Item::Record(record) => lines.push(record.to_line(keep_input)),
                Item::Flush(done) => flushed.push(done),
            }
        }
        if !lines.is_empty() {
            write(&mut file, &mut lines, drops, follow, &mut failing);
        }
        for done in flushed.drain(..) {
            // The caller may have given up waiting.
            let _ = done.send(());
        }
    }
}

/// Writes `lines` (taking them) after the report of the drops not reported yet, and hands
/// them to the followers; counts what could not be written.
fn write(
    file: &mut Option<AuditFile>,
    lines: &mut Vec<Vec<u8>>,
    drops: &Drops,
    follow: &backlog::Sender<Line>,
    failing: &mut bool,
) {
    let records = lines.len();
    let unreported = drops.unreported.swap(0, Ordering::Relaxed);
    if unreported > 0 {
        lines.insert(0, dropped_line(now_ms(), unreported));
    }
    // No copy of the lines while nobody follows (the usual case).
    if follow.receiver_count() > 0 {
        for l in lines.iter() {
            // The last follower may just have left: the line is dropped then.
            follow.send(Arc::from(l.as_slice()));
        }
    }
    let all: Vec<&[u8]> = lines.iter().map(Vec::as_slice).collect();
    let written = match file.as_mut() {
        None => Err(AppendError {
            error: std::io::Error::other("no audit directory (no HOME or state dir)"),
            written: 0,
        }),
        Some(file) => file.append(&all),
    };
    lines.clear();
    match written {
        Ok(()) => {
            if *failing {
                tracing::info!("audit: the log is writable again");
            }
            *failing = false;
        }
        Err(AppendError { error, written }) => {
            // The drop report is lost with the records unless it made it.
            let notice = usize::from(unreported > 0);
            if written < notice {
                drops.unreported.fetch_add(unreported, Ordering::Relaxed);
            }
            drops.add((records + notice - written.max(notice)) as u64);
            if !*failing {
                tracing::warn!(
                    "audit: cannot write the log, records are dropped and counted: {error}"
                );
            }
            *failing = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use jfgui_proto::{Map, Value};

    fn record(n: u64) -> Record {
        let mut input = Map::new();
        // Large enough that hashing makes the writer lag behind the submits.
        input.insert("text", "x".repeat(64 * 1024));
        Record {
            time_ms: n,
            input: Some(Value::Object(input).into()),
            revision: Some(n),
            ..Record::sample(format!("n{n}"))
        }
    }

    #[test]
    fn flush_returns_once_everything_queued_before_it_is_in_the_file() {
        let dir = std::env::temp_dir().join(format!("jfgui-audit-flush-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let writer = Writer::start(Some(AuditFile::new(dir.clone(), u64::MAX)), 256, false);
        for n in 0..200 {
            writer.submit(record(n));
        }
        assert!(writer.flush(Duration::from_secs(60)));
        let text = std::fs::read_to_string(AuditFile::path(&dir, 0)).unwrap();
        assert_eq!(text.lines().count(), 200);
        assert_eq!(writer.dropped(), 0);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_flush_completes_without_a_file_and_the_record_is_counted_dropped() {
        let writer = Writer::start(None, 1, false);
        writer.submit(record(0));
        // The thread keeps running without a file; a flush still completes.
        assert!(writer.flush(Duration::from_secs(60)));
        assert_eq!(writer.dropped(), 1);
    }
}
