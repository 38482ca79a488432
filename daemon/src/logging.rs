//! Log output: `tracing` events to stderr only (stdout stays free for nothing: the daemon
//! prints no data), filtered by `JFGUI_LOG`, else `RUST_LOG`, else `info`; text or JSON lines.
//!
//! Logging never blocks the event loop. The daemon serves everything on one thread, and
//! stderr is whatever started it: a terminal that can be paused (Ctrl-S, a stopped `less`),
//! a pipe a supervisor stopped reading, journald's stream socket while journald is busy. A
//! plain `write(2)` to a full pipe blocks, and every connection would stop with it. So events
//! are formatted on the event loop but written by a background thread ([`writer`]) through a
//! queue of at most `--log-queue-lines` lines; when it is full, further lines are dropped and
//! counted rather than waited for. The count goes to the engine as a handle ([`init`]'s
//! `dropped`), which reports it as `logDropped` of `daemon/status`, and once the queue takes
//! lines again the log itself says how many were lost ([`DropNotice`]).
//!
//! Why not journald's socket instead: it covers only a daemon started by systemd (the plain
//! service, `--demo`, launchd and a terminal still write to stderr), and a datagram send to a
//! busy journald blocks too unless it is made non-blocking, which again means dropping and
//! counting. The background writer handles every stderr the same way; under systemd,
//! journald still reads it through the unit's standard error stream.

mod writer;

use std::cell::Cell;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use jfgui_engine::Counter;
use tracing::{Event, Subscriber};
use tracing_subscriber::EnvFilter;
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};
use tracing_subscriber::util::SubscriberInitExt;

use self::writer::{Queue, WriterGuard};
use crate::config::LogFormat;

/// The filter used when neither variable is set.
pub const DEFAULT_FILTER: &str = "info";

/// Keeps the background writer alive; dropping it (at the end of `main`) writes out what is
/// queued. That final flush waits about a second at most, so even a stalled stderr cannot
/// keep the daemon from exiting.
#[derive(Debug)]
#[must_use = "dropping the guard stops the log writer"]
pub struct LogGuard {
    _writer: WriterGuard,
}

/// Installs the global subscriber writing through a queue of `queue_lines` lines, counting the
/// lines it drops in `dropped`. A bad filter is reported on stderr and replaced by the default,
/// so a typo in `RUST_LOG` never keeps the daemon from starting. Fails only when the writer
/// thread cannot be started.
pub fn init(format: LogFormat, queue_lines: usize, dropped: Counter) -> std::io::Result<LogGuard> {
    let (filter, problem) = filter_from(|name| std::env::var(name).ok());
    // Colours only for a person at a terminal, never in journald or a captured log file.
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let (writer, guard) = writer::spawn(queue_lines, std::io::stderr(), dropped)?;
    let notice = DropNotice { queue: Arc::clone(writer.queue()), reported: AtomicU64::new(0) };
    let fmt = tracing_subscriber::fmt::layer().with_writer(writer).with_ansi(ansi);
    let fmt = match format {
        LogFormat::Text => fmt.boxed(),
        LogFormat::Json => fmt.json().boxed(),
    };
    tracing_subscriber::registry().with(filter).with(fmt).with(notice).init();
    if let Some(problem) = problem {
        tracing::warn!("{problem}; using the default filter {DEFAULT_FILTER:?}");
    }
    Ok(LogGuard { _writer: guard })
}

thread_local! {
    /// Set while [`DropNotice`] logs its own line, which passes through the layers again.
    static NOTIFYING: Cell<bool> = const { Cell::new(false) };
}

/// After each event, says in the log how many lines were lost since the last such notice,
/// once the queue accepts lines again. A notice that is itself dropped (stderr still stalled)
/// changes nothing: the next event tries again with the larger count, so none goes unreported
/// while the daemon keeps logging.
struct DropNotice {
    queue: Arc<Queue>,
    /// The dropped-line count the log has already reported.
    reported: AtomicU64,
}

impl<S: Subscriber> Layer<S> for DropNotice {
    fn on_event(&self, _event: &Event<'_>, _ctx: Context<'_, S>) {
        let dropped = self.queue.dropped_lines();
        let reported = self.reported.load(Ordering::Relaxed);
        if dropped == reported || NOTIFYING.get() {
            return;
        }
        NOTIFYING.set(true);
        tracing::warn!(
            lost = dropped - reported,
            total = dropped,
            "log lines were dropped while stderr did not keep up (see logDropped in daemon/status)"
        );
        NOTIFYING.set(false);
        if self.queue.dropped_lines() == dropped {
            self.reported.store(dropped, Ordering::Relaxed);
        }
    }
}

/// The filter from `JFGUI_LOG`, else `RUST_LOG`, else the default, and what was wrong if a
/// set variable did not parse.
fn filter_from(env: impl Fn(&str) -> Option<String>) -> (EnvFilter, Option<String>) {
    for name in ["JFGUI_LOG", "RUST_LOG"] {
        if let Some(spec) = env(name).filter(|s| !s.trim().is_empty()) {
            return match EnvFilter::try_new(&spec) {
                Ok(filter) => (filter, None),
                Err(e) => (
                    EnvFilter::new(DEFAULT_FILTER),
                    Some(format!("{name}={spec:?} is not a valid filter: {e}")),
                ),
            };
        }
    }
    (EnvFilter::new(DEFAULT_FILTER), None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| vars.iter().find(|(k, _)| *k == name).map(|(_, v)| (*v).to_string())
    }

    #[test]
    fn jfgui_log_wins_then_rust_log_then_info() {
        let (f, p) = filter_from(env(&[("JFGUI_LOG", "debug"), ("RUST_LOG", "trace")]));
        assert_eq!(f.to_string(), "debug");
        assert!(p.is_none());
        let (f, _) = filter_from(env(&[("RUST_LOG", "trace")]));
        assert_eq!(f.to_string(), "trace");
        let (f, _) = filter_from(env(&[]));
        assert_eq!(f.to_string(), "info");
    }

    #[test]
    fn bad_filter_falls_back_with_a_message() {
        let (f, p) = filter_from(env(&[("JFGUI_LOG", "=[")]));
        assert_eq!(f.to_string(), "info");
        assert!(p.unwrap().contains("JFGUI_LOG"));
    }
}
