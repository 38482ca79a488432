//! The audit log: every external call that reaches an app and can change it, recorded as one
//! strict-JSON line in a private per-user state directory (see `docs/ARCHITECTURE.md`,
//! "The audit log").
//!
//! | part | file |
//! |---|---|
//! | the record and its line (input size and SHA-256) | `audit/record.rs` |
//! | the directory per OS | `audit/location.rs` |
//! | the file: modes, `O_APPEND`, rotation | `audit/file.rs` |
//! | the writer thread, its bounded queue, drops, live followers | `audit/writer.rs` |
//! | time stamps (RFC 3339, UTC ms) | `audit/time.rs` |
//!
//! The engine decides *what* is recorded (`client/observer.rs`, one hook where the
//! ten methods are implemented); this module only keeps records. [`Audit`] is a cheap handle:
//! the engine's calls [`Audit::submit`] without blocking, `daemon/status` reads
//! [`Audit::dropped`], and `audit/follow` streams [`Audit::follow`].

mod file;
pub mod location;
mod queue;
pub mod record;
pub mod time;
mod writer;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

pub use file::{AuditFile, DEFAULT_MAX_BYTES, KEPT_FILES};
pub use record::{Action, AppRef, Client, ClientInfo, Outcome, Protocol, Record, Transport};
pub use writer::Line;

/// Records waiting for the writer; one more is dropped (and counted).
pub const DEFAULT_QUEUE: usize = 1024;

/// What to record and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditConfig {
    /// The directory (`None`: the environment names none; records are dropped and counted).
    pub dir: Option<PathBuf>,
    /// Rotate `audit.jsonl` before it grows beyond this.
    pub max_bytes: u64,
    /// Queue capacity.
    pub queue: usize,
    /// Also record calls that only read (`--audit-reads`).
    pub reads: bool,
    /// Keep the input itself, cut at 4 KiB (`--audit-inputs`).
    pub inputs: bool,
}

impl Default for AuditConfig {
    /// No directory and the default bounds, writes only. The engine reads no environment: the
    /// caller names the directory, usually [`location::default_dir`].
    fn default() -> Self {
        AuditConfig {
            dir: None,
            max_bytes: DEFAULT_MAX_BYTES,
            queue: DEFAULT_QUEUE,
            reads: false,
            inputs: false,
        }
    }
}

/// A running audit log (see the module docs). Cheap to clone.
#[derive(Debug, Clone)]
pub struct Audit(Arc<Inner>);

#[derive(Debug)]
struct Inner {
    writer: writer::Writer,
    dir: Option<PathBuf>,
    reads: bool,
    /// `activity` notices not queued for their app (its queue had no room).
    activity_dropped: AtomicU64,
}

impl Audit {
    /// Starts the writer thread for `config`. Nothing is created on disk before the first
    /// record.
    pub fn start(config: AuditConfig) -> Audit {
        if config.dir.is_none() {
            tracing::warn!(
                "audit: no directory for the log (set HOME, XDG_STATE_HOME or {}); records are dropped and counted",
                location::DIR_ENV
            );
        }
        let file = config.dir.clone().map(|dir| AuditFile::new(dir, config.max_bytes));
        Audit(Arc::new(Inner {
            writer: writer::Writer::start(file, config.queue, config.inputs),
            dir: config.dir,
            reads: config.reads,
            activity_dropped: AtomicU64::new(0),
        }))
    }

    /// Whether calls that only read are recorded too.
    pub fn records_reads(&self) -> bool {
        self.0.reads
    }

    /// Queues `record`; never blocks.
    pub fn submit(&self, record: Record) {
        self.0.writer.submit(record);
    }

    /// Counts an `activity` notice its app's queue had no room for.
    pub fn activity_dropped_one(&self) {
        self.0.activity_dropped.fetch_add(1, Ordering::Relaxed);
    }

    /// `activity` notices dropped since start.
    pub fn activity_dropped(&self) -> u64 {
        self.0.activity_dropped.load(Ordering::Relaxed)
    }

    /// Waits (at most `limit`, off the async threads) until every record queued so far is
    /// written: called at exit, so the last calls' records are not lost with the process.
    pub async fn flush(&self, limit: std::time::Duration) -> bool {
        let audit = self.clone();
        tokio::task::spawn_blocking(move || audit.0.writer.flush(limit)).await.unwrap_or(false)
    }

    /// Records dropped (full queue, write errors) since start.
    pub fn dropped(&self) -> u64 {
        self.0.writer.dropped()
    }

    /// Every line from now on, as written (records and drop notices).
    pub(crate) fn follow(&self) -> crate::backlog::Receiver<Line> {
        self.0.writer.follow()
    }

    /// The directory of the log.
    pub fn dir(&self) -> Option<&Path> {
        self.0.dir.as_deref()
    }
}
