//! The daemon's task records: the last known state of every deferred task, fed by the apps'
//! replies and task updates, answering `tasks/get` without a round trip (an app's own table of
//! running tasks is host-sdk's `TaskTable`; these are the daemon's copies).
//!
//! Bounds that hold in total, whatever one app does:
//! - at most `max` tasks (4096) and [`MAX_TASK_BYTES`] of stored snapshots, running tasks'
//!   results and progress included; when either is exceeded, the task that reached a final
//!   state (`completed`, `failed`, `cancelled`) **earliest** is evicted first. Unfinished tasks
//!   are never evicted: a new one that finds no room is refused ([`Refused::Full`]), and
//!   callers turn that into a clear `busy` error before starting work;
//! - at most `per_app` (256) unfinished tasks per app ([`Refused::Quota`]), so one app cannot
//!   fill the records for the others;
//! - a task exists only once the app returned its id in a deferred reply ([`TaskRecords::start`]);
//!   a `task` update for any other id is refused ([`TaskRecords::update`]): an app cannot plant
//!   tasks nobody asked for;
//! - a running update that would exceed the byte budget is refused (the previous state stays);
//!   a final one that still does not fit once finished tasks are evicted is kept without its
//!   result, as `failed` with `internal/response_too_large`.
//!
//! Tasks outlive their app: when it leaves ([`TaskRecords::depart`]), its unfinished tasks become
//! `failed(app_disconnected)` and all its tasks are kept under its display name, still subject
//! to finished-task eviction, so `tasks/get` answers them on the endpoint of the next app with
//! that display name.

use std::collections::{BTreeMap, HashMap};

use jfgui_proto::channel::{TaskSnapshot, TaskState};
use jfgui_proto::{ActionError, Reason, Value};

/// Bytes of snapshots (mostly results) the records keep by default: 64 maximum-size messages. A
/// result is stored once; without this bound 4096 tasks of 1 MiB each would hold 4 GiB.
pub const MAX_TASK_BYTES: usize = 64 << 20;

/// Who a task belongs to: a connected app (by registry id; ids are unique within it only), or
/// a departed one, by display name.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Owner {
    App(u64),
    Departed(String),
}

type Key = (Owner, String);

/// Why a task or an update was not stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// The records hold `max` unfinished tasks and has no finished one to evict.
    Full,
    /// The app already has `per_app` unfinished tasks.
    Quota,
    /// A running update that does not fit the byte budget.
    Budget,
    /// An update for an id the app never returned in a deferred reply (or long evicted).
    Unknown,
}

impl Refused {
    /// For logs.
    pub fn as_str(self) -> &'static str {
        match self {
            Refused::Full => "task table full",
            Refused::Quota => "the app's task quota is used up",
            Refused::Budget => "the task byte budget is used up",
            Refused::Unknown => "no task with that id was returned by the app",
        }
    }
}

#[derive(Debug)]
struct Entry {
    snapshot: TaskSnapshot,
    /// Approximate memory of the snapshot ([`snapshot_size`]).
    size: usize,
    /// Order in which the task became final (for eviction); `None` while unfinished.
    finished_seq: Option<u64>,
}

/// See the module docs.
#[derive(Debug)]
pub struct TaskRecords {
    max: usize,
    per_app: usize,
    max_bytes: usize,
    bytes: usize,
    entries: HashMap<Key, Entry>,
    finished: BTreeMap<u64, Key>,
    /// Unfinished tasks per connected app.
    unfinished: HashMap<u64, usize>,
    next_seq: u64,
}

impl TaskRecords {
    /// Empty records of at most `max` tasks, `per_app` unfinished ones per app, and
    /// [`MAX_TASK_BYTES`].
    #[cfg(test)]
    pub fn new(max: usize, per_app: usize) -> Self {
        Self::with_budget(max, per_app, MAX_TASK_BYTES)
    }

    /// Empty records of at most `max` tasks, `per_app` unfinished per app and `max_bytes`.
    pub fn with_budget(max: usize, per_app: usize, max_bytes: usize) -> Self {
        TaskRecords {
            max,
            per_app,
            max_bytes,
            bytes: 0,
            entries: HashMap::new(),
            finished: BTreeMap::new(),
            unfinished: HashMap::new(),
            next_seq: 0,
        }
    }

    /// Whether `app` could start a task right now (its quota, and room in the records or a
    /// finished task to evict).
    pub fn has_room(&self, app: u64) -> Result<(), Refused> {
        if self.unfinished.get(&app).copied().unwrap_or(0) >= self.per_app {
            Err(Refused::Quota)
        } else if self.entries.len() >= self.max && self.finished.is_empty() {
            Err(Refused::Full)
        } else {
            Ok(())
        }
    }

    /// Records a task the app returned in a reply (a deferred result): new, or a new state of
    /// one it returned before.
    pub fn start(&mut self, app: u64, snapshot: TaskSnapshot) -> Result<(), Refused> {
        let key = (Owner::App(app), snapshot.id.clone());
        if self.entries.contains_key(&key) {
            return self.update(app, snapshot);
        }
        if !snapshot.state.is_final() {
            self.has_room(app)?;
        } else if self.entries.len() >= self.max && !self.evict_oldest_finished() {
            return Err(Refused::Full);
        }
        if self.entries.len() >= self.max {
            self.evict_oldest_finished();
        }
        // A new task is always kept, if need be without the progress or result it came with.
        let snapshot = self.fitting(snapshot, 0);
        let size = snapshot_size(&snapshot);
        let finished_seq = snapshot.state.is_final().then(|| self.finish_seq(key.clone()));
        if finished_seq.is_none() {
            *self.unfinished.entry(app).or_default() += 1;
        }
        self.bytes += size;
        self.entries.insert(key, Entry { snapshot, size, finished_seq });
        self.evict_over_budget();
        Ok(())
    }

    /// A task update from the app, for a task it returned before. A final state is sticky: a
    /// late update for a finished task is ignored.
    pub fn update(&mut self, app: u64, snapshot: TaskSnapshot) -> Result<(), Refused> {
        let key = (Owner::App(app), snapshot.id.clone());
        let Some(old) = self.entries.get(&key).map(|e| (e.size, e.snapshot.state.is_final()))
        else {
            return Err(Refused::Unknown);
        };
        let (old_size, was_final) = old;
        if was_final {
            return Ok(());
        }
        let snapshot = if snapshot.state.is_final() {
            self.fitting(snapshot, old_size)
        } else if self.bytes - old_size + snapshot_size(&snapshot) > self.max_bytes {
            // Finished tasks are evicted for it first; running ones never are.
            while self.bytes - old_size + snapshot_size(&snapshot) > self.max_bytes {
                if !self.evict_oldest_finished() {
                    return Err(Refused::Budget);
                }
            }
            snapshot
        } else {
            snapshot
        };
        let size = snapshot_size(&snapshot);
        let is_final = snapshot.state.is_final();
        let seq = is_final.then(|| self.finish_seq(key.clone()));
        if is_final && let Some(n) = self.unfinished.get_mut(&app) {
            *n = n.saturating_sub(1);
        }
        let Some(entry) = self.entries.get_mut(&key) else { return Err(Refused::Unknown) };
        self.bytes = self.bytes - entry.size + size;
        entry.size = size;
        entry.snapshot = snapshot;
        entry.finished_seq = seq;
        self.evict_over_budget();
        Ok(())
    }

    /// `snapshot`, or, when it does not fit the byte budget (replacing `replaced` bytes) even
    /// after evicting every finished task, a minimal form: a running task without progress or
    /// result, a final one as `failed` with `internal/response_too_large`.
    fn fitting(&mut self, mut snapshot: TaskSnapshot, replaced: usize) -> TaskSnapshot {
        let size = snapshot_size(&snapshot);
        while self.bytes - replaced + size > self.max_bytes {
            if !self.evict_oldest_finished() {
                let id = snapshot.id.clone();
                tracing::warn!(task = %id, size, "task state does not fit the task byte budget; kept without its result");
                snapshot.progress = None;
                snapshot.result = None;
                if snapshot.state.is_final() {
                    snapshot.state = TaskState::Failed;
                    snapshot.error = Some(ActionError::new(
                        Reason::ResponseTooLarge { action: None },
                        "The task finished, but its result does not fit what the daemon keeps for tasks; it was dropped.",
                    ));
                }
                break;
            }
        }
        snapshot
    }

    fn finish_seq(&mut self, key: Key) -> u64 {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.finished.insert(seq, key);
        seq
    }

    fn evict_over_budget(&mut self) {
        while self.bytes > self.max_bytes && self.evict_oldest_finished() {}
    }

    fn evict_oldest_finished(&mut self) -> bool {
        let Some((_, oldest)) = self.finished.pop_first() else { return false };
        if let Some(entry) = self.entries.remove(&oldest) {
            self.bytes -= entry.size;
        }
        true
    }

    /// The last known state of task `id` of `app`, else of a departed app that had the same
    /// display name.
    pub fn get(&self, app: u64, display_name: &str, id: &str) -> Option<TaskSnapshot> {
        self.entries
            .get(&(Owner::App(app), id.to_string()))
            .or_else(|| {
                self.entries.get(&(Owner::Departed(display_name.to_string()), id.to_string()))
            })
            .map(|e| e.snapshot.clone())
    }

    /// Marks an unfinished task `cancelling` (a cancel request is on its way to the app).
    pub fn mark_cancelling(&mut self, app: u64, id: &str) {
        if let Some(entry) = self.entries.get_mut(&(Owner::App(app), id.to_string()))
            && !entry.snapshot.state.is_final()
        {
            entry.snapshot.state = TaskState::Cancelling;
        }
    }

    /// The app went away: each of its unfinished tasks becomes `failed` with a reason that says the
    /// outcome is unknown (`app_disconnected`, class `outcome_unknown`; `not_executed` for a
    /// task that still waited for the user), and all its tasks are kept
    /// under its display name (replacing a departed namesake's task of the same id). Returns the
    /// ids that failed.
    pub fn depart(&mut self, app: u64, display_name: &str) -> Vec<String> {
        let mut keys: Vec<Key> =
            self.entries.keys().filter(|k| k.0 == Owner::App(app)).cloned().collect();
        keys.sort_by(|a, b| a.1.cmp(&b.1));
        let mut failed = Vec::new();
        for key in &keys {
            let Some(entry) = self.entries.get(key) else { continue };
            if entry.snapshot.state.is_final() {
                continue;
            }
            let mut snapshot = entry.snapshot.clone();
            snapshot.state = TaskState::Failed;
            snapshot.progress = None;
            snapshot.result = None;
            // The app reports a yes before it runs anything, so a task whose last state still
            // waits for the user certainly did nothing.
            snapshot.error = Some(if snapshot.awaiting.take().is_some() {
                ActionError::new(
                    Reason::AppDisconnectedUnconfirmed,
                    "The app went away before the user allowed the call; nothing was done.",
                )
            } else {
                ActionError::new(
                    Reason::AppDisconnected,
                    "The app disconnected before the task finished; its outcome is unknown.",
                )
            });
            failed.push(key.1.clone());
            // Cannot be refused: the entry exists and a smaller final state always fits.
            let _ = self.update(app, snapshot);
        }
        self.unfinished.remove(&app);
        let owner = Owner::Departed(display_name.to_string());
        for key in keys {
            let Some(entry) = self.entries.remove(&key) else { continue };
            let new_key = (owner.clone(), key.1);
            if let Some(old) = self.entries.remove(&new_key) {
                self.bytes -= old.size;
                if let Some(seq) = old.finished_seq {
                    self.finished.remove(&seq);
                }
            }
            if let Some(seq) = entry.finished_seq {
                self.finished.insert(seq, new_key.clone());
            }
            self.entries.insert(new_key, entry);
        }
        failed
    }

    /// Number of stored tasks.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.entries.len()
    }
}

/// Approximate memory of a snapshot: its strings and number tokens plus a little per value.
fn snapshot_size(t: &TaskSnapshot) -> usize {
    let progress =
        t.progress.as_ref().map_or(0, |p| 16 + p.message.as_ref().map_or(0, String::len));
    let error = t
        .error
        .as_ref()
        .map_or(0, |e| e.message.len() + value_size(&Value::Object(e.reason.data())));
    64 + t.id.len() + progress + t.result.as_ref().map_or(0, value_size) + error
}

fn value_size(v: &Value) -> usize {
    // Iterative, so a deep value cannot overflow the stack.
    let mut total = 0;
    let mut stack = vec![v];
    while let Some(v) = stack.pop() {
        total += 16;
        match v {
            Value::String(s) => total += s.len(),
            Value::Number(n) => total += n.as_str().len(),
            Value::Array(a) => stack.extend(a.iter()),
            Value::Object(m) => {
                for (k, v) in m.iter() {
                    total += k.len();
                    stack.push(v);
                }
            }
            Value::Null | Value::Bool(_) => {}
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(id: &str, state: TaskState) -> TaskSnapshot {
        TaskSnapshot::new(id, state)
    }

    fn with_result(id: &str, state: TaskState, bytes: usize) -> TaskSnapshot {
        TaskSnapshot { result: Some(Value::from("r".repeat(bytes))), ..task(id, state) }
    }

    #[test]
    fn evicts_the_task_that_finished_first() {
        let mut t = TaskRecords::new(3, 10);
        t.start(1, task("a", TaskState::Running)).unwrap();
        t.start(1, task("b", TaskState::Running)).unwrap();
        t.start(1, task("c", TaskState::Running)).unwrap();
        assert_eq!(t.start(1, task("d", TaskState::Running)), Err(Refused::Full));
        assert_eq!(t.has_room(2), Err(Refused::Full));
        // b finishes before a: b is the older finished task.
        t.update(1, task("b", TaskState::Completed)).unwrap();
        t.update(1, task("a", TaskState::Failed)).unwrap();
        t.start(1, task("d", TaskState::Running)).unwrap();
        assert!(t.get(1, "N", "b").is_none());
        assert_eq!(t.get(1, "N", "a").unwrap().state, TaskState::Failed);
        t.start(1, task("e", TaskState::Running)).unwrap();
        assert!(t.get(1, "N", "a").is_none());
        assert_eq!(t.len(), 3);
        assert_eq!(t.start(1, task("f", TaskState::Running)), Err(Refused::Full));
    }

    #[test]
    fn unfinished_tasks_per_app_are_bounded() {
        let mut t = TaskRecords::new(100, 2);
        t.start(1, task("a", TaskState::Running)).unwrap();
        t.start(1, task("b", TaskState::Running)).unwrap();
        assert_eq!(t.has_room(1), Err(Refused::Quota));
        assert_eq!(t.start(1, task("c", TaskState::Running)), Err(Refused::Quota));
        assert_eq!(t.has_room(2), Ok(()), "another app is not affected");
        t.start(2, task("c", TaskState::Running)).unwrap();
        t.update(1, task("a", TaskState::Completed)).unwrap();
        t.start(1, task("c", TaskState::Running)).unwrap();
    }

    #[test]
    fn updates_only_for_tasks_the_app_returned() {
        let mut t = TaskRecords::new(100, 10);
        assert_eq!(t.update(1, task("ghost", TaskState::Running)), Err(Refused::Unknown));
        assert!(t.get(1, "N", "ghost").is_none());
        t.start(1, task("real", TaskState::Running)).unwrap();
        assert_eq!(t.update(2, task("real", TaskState::Completed)), Err(Refused::Unknown));
        t.update(1, task("real", TaskState::Completed)).unwrap();
        assert_eq!(t.get(1, "N", "real").unwrap().state, TaskState::Completed);
    }

    #[test]
    fn big_results_are_bounded_by_bytes_oldest_finished_first() {
        let mut t = TaskRecords::with_budget(100, 100, 10_000);
        t.start(1, task("running", TaskState::Running)).unwrap();
        t.start(1, with_result("a", TaskState::Completed, 4000)).unwrap();
        t.start(1, with_result("b", TaskState::Completed, 4000)).unwrap();
        assert!(t.get(1, "N", "a").is_some());
        t.start(1, with_result("c", TaskState::Completed, 4000)).unwrap();
        assert!(t.get(1, "N", "a").is_none(), "oldest finished evicted for bytes");
        assert!(t.get(1, "N", "b").is_some() && t.get(1, "N", "c").is_some());
        assert!(t.get(1, "N", "running").is_some(), "unfinished tasks are never evicted");
        assert!(t.bytes <= 10_000);
        t.update(1, task("running", TaskState::Completed)).unwrap();
        assert!(t.bytes <= 10_000);
    }

    #[test]
    fn running_results_count_and_never_exceed_the_budget() {
        let mut t = TaskRecords::with_budget(100, 100, 10_000);
        t.start(1, task("r1", TaskState::Running)).unwrap();
        t.start(1, task("r2", TaskState::Running)).unwrap();
        t.start(1, with_result("done", TaskState::Completed, 3000)).unwrap();
        t.update(1, with_result("r1", TaskState::Running, 6000)).unwrap();
        assert!(t.get(1, "N", "done").is_some());
        // Does not fit even after evicting the finished task: refused, old state kept.
        assert_eq!(t.update(1, with_result("r2", TaskState::Running, 6000)), Err(Refused::Budget));
        assert!(t.get(1, "N", "r2").unwrap().result.is_none());
        assert!(t.bytes <= 10_000);
        // A final state that cannot fit is kept without its result, as a failure.
        t.update(1, with_result("r2", TaskState::Completed, 9000)).unwrap();
        let r2 = t.get(1, "N", "r2").unwrap();
        assert_eq!(r2.state, TaskState::Failed);
        assert!(matches!(r2.error.unwrap().reason, Reason::ResponseTooLarge { .. }));
        assert!(t.bytes <= 10_000);
        // A new task always gets in, without what does not fit.
        t.start(1, with_result("r3", TaskState::Running, 9000)).unwrap();
        assert!(t.get(1, "N", "r3").unwrap().result.is_none());
    }

    #[test]
    fn final_states_are_sticky_and_apps_are_separate() {
        let mut t = TaskRecords::new(10, 10);
        t.start(1, task("x", TaskState::Cancelled)).unwrap();
        t.update(1, task("x", TaskState::Running)).unwrap();
        assert_eq!(t.get(1, "N", "x").unwrap().state, TaskState::Cancelled);
        assert!(t.get(2, "M", "x").is_none());
    }

    #[test]
    fn departed_apps_tasks_fail_and_stay_under_their_name() {
        let mut t = TaskRecords::new(10, 10);
        t.start(1, task("run", TaskState::Running)).unwrap();
        t.start(1, task("done", TaskState::Completed)).unwrap();
        t.start(2, task("other", TaskState::Running)).unwrap();
        t.mark_cancelling(1, "run");
        assert_eq!(t.get(1, "Pad", "run").unwrap().state, TaskState::Cancelling);
        assert_eq!(t.depart(1, "Pad"), ["run"]);
        // The same name returns as app 3: it sees the departed states.
        let failed = t.get(3, "Pad", "run").unwrap();
        assert_eq!(failed.state, TaskState::Failed);
        assert_eq!(failed.error.unwrap().reason, Reason::AppDisconnected);
        assert_eq!(t.get(3, "Pad", "done").unwrap().state, TaskState::Completed);
        assert!(t.get(3, "Other name", "run").is_none());
        assert_eq!(t.get(2, "Else", "other").unwrap().state, TaskState::Running);
        assert_eq!(t.has_room(1), Ok(()), "the quota went with the app");
        // Its own task of the same id wins over the departed one.
        t.start(3, task("run", TaskState::Running)).unwrap();
        assert_eq!(t.get(3, "Pad", "run").unwrap().state, TaskState::Running);
        // Departed states are finished, so evictable.
        let mut small = TaskRecords::new(2, 10);
        small.start(1, task("a", TaskState::Running)).unwrap();
        small.start(1, task("b", TaskState::Running)).unwrap();
        small.depart(1, "Pad");
        small.start(2, task("c", TaskState::Running)).unwrap();
        small.start(2, task("d", TaskState::Running)).unwrap();
        assert_eq!(small.len(), 2);
    }
}
