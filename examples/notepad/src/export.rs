//! `document.export`: a deferred task that "writes" a snapshot of the text in steps, reports
//! progress, stops at the next step when cancelled, and on completion yields the bytes of the
//! in-memory resource `export://document.txt`; and the [`Clock`] its steps are timed by.

use std::fmt;
use std::time::Duration;

use jfgui_host_sdk::{ActionError, Map, Progress, TaskTable, Value};

/// Monotonic time since some fixed start, read when an export starts and on every tick.
///
/// Injected because no one clock reaches every target: the native binary reads
/// `std::time::Instant`, which panics on `wasm32-unknown-unknown`, where the web build reads
/// the page's `performance.now()` instead.
pub trait Clock: fmt::Debug {
    /// The time now; never less than an earlier answer.
    fn now(&self) -> Duration;
}

/// The resource a completed export produces (never a client-supplied path).
pub const EXPORT_URI: &str = "export://document.txt";
/// Its MIME type.
pub const EXPORT_MIME: &str = "text/plain; charset=utf-8";
/// Progress steps per export; each is a cancellation checkpoint.
pub const STEPS: u64 = 10;

#[derive(Debug)]
struct Job {
    id: String,
    data: Vec<u8>,
    revision: u64,
    started: Duration,
    done: u64,
}

/// The running exports.
#[derive(Debug)]
pub struct Exports {
    duration: Duration,
    jobs: Vec<Job>,
    next_id: u64,
}

impl Exports {
    /// Exports that each take `duration` (`--export-ms`).
    pub fn new(duration: Duration) -> Exports {
        Exports { duration, jobs: Vec::new(), next_id: 1 }
    }

    /// Starts exporting `text` (a snapshot: later edits do not change this export).
    pub fn start(
        &mut self,
        tasks: &mut TaskTable,
        text: &str,
        revision: u64,
        now: Duration,
    ) -> Result<String, ActionError> {
        let id = format!("export-{}", self.next_id);
        tasks.start(id.clone())?;
        self.next_id += 1;
        self.jobs.push(Job {
            id: id.clone(),
            data: text.as_bytes().to_vec(),
            revision,
            started: now,
            done: 0,
        });
        Ok(id)
    }

    /// Advances every export to `now`: cancelled ones stop (checkpoint), due steps report
    /// progress, finished ones complete and hand their bytes to `produced`. Returns when the
    /// next step is due.
    pub fn tick(
        &mut self,
        tasks: &mut TaskTable,
        now: Duration,
        mut produced: impl FnMut(Vec<u8>),
    ) -> Option<Duration> {
        let mut next: Option<Duration> = None;
        let duration = self.duration;
        self.jobs.retain_mut(|job| {
            if tasks.is_cancel_requested(&job.id) {
                let _ = tasks.cancelled(&job.id);
                return false;
            }
            let elapsed = now.saturating_sub(job.started);
            let due = if duration.is_zero() {
                STEPS
            } else {
                ((elapsed.as_nanos() * u128::from(STEPS)) / duration.as_nanos())
                    .min(u128::from(STEPS)) as u64
            };
            if due >= STEPS {
                let done =
                    Progress { done: STEPS, total: Some(STEPS), message: Some("exported".into()) };
                let _ = tasks.progress(&job.id, done);
                let size = job.data.len() as u64;
                produced(std::mem::take(&mut job.data));
                let mut result = Map::new();
                result.insert("uri", EXPORT_URI);
                result.insert("mimeType", EXPORT_MIME);
                result.insert("size", size);
                result.insert("revision", job.revision);
                let _ = tasks.complete(&job.id, Value::Object(result));
                return false;
            }
            if due > job.done {
                job.done = due;
                let progress =
                    Progress { done: due, total: Some(STEPS), message: Some("exporting".into()) };
                let _ = tasks.progress(&job.id, progress);
            }
            let at = job.started + duration * (job.done as u32 + 1) / STEPS as u32;
            let wait = at.saturating_sub(now);
            next = Some(next.map_or(wait, |n| n.min(wait)));
            true
        });
        next
    }
}

#[cfg(test)]
mod tests {
    use jfgui_host_sdk::TaskState;

    use super::*;

    #[test]
    fn progress_then_completion() {
        let mut tasks = TaskTable::new();
        let mut ex = Exports::new(Duration::from_millis(1000));
        let t0 = Duration::from_secs(7);
        let id = ex.start(&mut tasks, "hello", 3, t0).unwrap();
        let mut out = None;
        let next = ex.tick(&mut tasks, t0 + Duration::from_millis(350), |b| out = Some(b));
        assert_eq!(tasks.get(&id).unwrap().progress.as_ref().unwrap().done, 3);
        assert_eq!(next, Some(Duration::from_millis(50)), "the next step is due at 400 ms");
        assert!(out.is_none());
        let next = ex.tick(&mut tasks, t0 + Duration::from_millis(1000), |b| out = Some(b));
        assert_eq!(next, None, "nothing left to wake up for");
        assert_eq!(out.as_deref(), Some(&b"hello"[..]));
        let t = tasks.get(&id).unwrap();
        assert_eq!(t.state, TaskState::Completed);
        assert_eq!(t.result.as_ref().unwrap().get("uri").and_then(Value::as_str), Some(EXPORT_URI));
        // A completed export says it got all the way, not 9 of 10 steps.
        let progress = t.progress.as_ref().unwrap();
        assert_eq!((progress.done, progress.total), (STEPS, Some(STEPS)));
    }

    #[test]
    fn cancellation_is_honoured_at_the_next_checkpoint() {
        let mut tasks = TaskTable::new();
        let mut ex = Exports::new(Duration::from_millis(1000));
        let t0 = Duration::from_secs(7);
        let id = ex.start(&mut tasks, "hello", 1, t0).unwrap();
        ex.tick(&mut tasks, t0 + Duration::from_millis(200), |_| unreachable!());
        tasks.request_cancel(&id).unwrap();
        assert_eq!(tasks.state(&id), Some(TaskState::Cancelling));
        let mut produced = false;
        // Even when the export would have finished by now, the cancel wins.
        let next = ex.tick(&mut tasks, t0 + Duration::from_millis(5000), |_| produced = true);
        assert_eq!(tasks.state(&id), Some(TaskState::Cancelled));
        assert!(!produced && next.is_none());
    }
}
