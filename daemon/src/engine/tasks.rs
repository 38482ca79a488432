//! The daemon's task table (SPEC S4): the last known state of every deferred task, fed by the
//! apps' task updates, answering `tasks/get` without a round trip.
//!
//! Bounded by `max_tasks` (SPEC S8: 4096) and by [`MAX_TASK_BYTES`] of stored snapshots
//! (results can be up to a message each). Eviction rule: when either bound is exceeded, the
//! task that reached a final state (`completed`, `failed`, `cancelled`) **earliest** is evicted
//! first; unfinished tasks are never evicted, so a table full of unfinished tasks refuses new
//! ones with [`TableFull`], and callers turn that into a clear `busy` error before starting
//! work.

use std::collections::{BTreeMap, HashMap};

use jfgui_proto::channel::{TaskSnapshot, TaskState};
use jfgui_proto::{ActionError, Reason, Value};

/// Bytes of snapshots (mostly final results) the table keeps: 64 maximum-size messages. A
/// result is stored once; without this bound 4096 tasks of 1 MiB each would hold 4 GiB.
pub const MAX_TASK_BYTES: usize = 64 << 20;

/// Tasks are owned by one app connection; ids are unique within it only.
type Key = (u64, String);

/// The table holds `max_tasks` unfinished tasks and has no finished one to evict.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TableFull;

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
pub struct TaskTable {
    max: usize,
    max_bytes: usize,
    bytes: usize,
    entries: HashMap<Key, Entry>,
    finished: BTreeMap<u64, Key>,
    next_seq: u64,
}

impl TaskTable {
    /// An empty table of at most `max` tasks and [`MAX_TASK_BYTES`].
    pub fn new(max: usize) -> Self {
        Self::with_budget(max, MAX_TASK_BYTES)
    }

    /// An empty table of at most `max` tasks and `max_bytes` of snapshots.
    pub fn with_budget(max: usize, max_bytes: usize) -> Self {
        TaskTable {
            max,
            max_bytes,
            bytes: 0,
            entries: HashMap::new(),
            finished: BTreeMap::new(),
            next_seq: 0,
        }
    }

    /// True when a new task could be stored right now (there is room or a finished task to
    /// evict).
    pub fn has_room(&self) -> bool {
        self.entries.len() < self.max || !self.finished.is_empty()
    }

    /// Records the state an app reported (a new task or an update). A final state is sticky:
    /// a late `running` update for a finished task is ignored.
    pub fn upsert(&mut self, app: u64, snapshot: TaskSnapshot) -> Result<(), TableFull> {
        let key = (app, snapshot.id.clone());
        let size = snapshot_size(&snapshot);
        if let Some(entry) = self.entries.get_mut(&key) {
            if entry.snapshot.state.is_final() {
                return Ok(());
            }
            self.bytes = self.bytes - entry.size + size;
            entry.size = size;
            entry.snapshot = snapshot;
            if entry.snapshot.state.is_final() {
                let seq = self.next_seq;
                self.next_seq += 1;
                entry.finished_seq = Some(seq);
                self.finished.insert(seq, key);
            }
        } else {
            if self.entries.len() >= self.max && !self.evict_oldest_finished() {
                return Err(TableFull);
            }
            let finished_seq = snapshot.state.is_final().then(|| {
                let seq = self.next_seq;
                self.next_seq += 1;
                self.finished.insert(seq, key.clone());
                seq
            });
            self.bytes += size;
            self.entries.insert(key, Entry { snapshot, size, finished_seq });
        }
        while self.bytes > self.max_bytes && self.evict_oldest_finished() {}
        Ok(())
    }

    fn evict_oldest_finished(&mut self) -> bool {
        let Some((_, oldest)) = self.finished.pop_first() else { return false };
        if let Some(entry) = self.entries.remove(&oldest) {
            self.bytes -= entry.size;
        }
        true
    }

    /// The last known state of task `id` of `app`.
    pub fn get(&self, app: u64, id: &str) -> Option<TaskSnapshot> {
        self.entries.get(&(app, id.to_string())).map(|e| e.snapshot.clone())
    }

    /// Marks an unfinished task `cancelling` (a cancel request is on its way to the app).
    pub fn mark_cancelling(&mut self, app: u64, id: &str) {
        if let Some(entry) = self.entries.get_mut(&(app, id.to_string()))
            && !entry.snapshot.state.is_final()
        {
            entry.snapshot.state = TaskState::Cancelling;
        }
    }

    /// The app went away: each of its unfinished tasks becomes `failed` with a reason that
    /// says the outcome is unknown (SPEC S4). Returns their ids: the endpoint goes with the
    /// app, so the caller's log is the only place a client can later learn of them.
    pub fn fail_app(&mut self, app: u64) -> Vec<String> {
        let mut keys: Vec<Key> = self
            .entries
            .iter()
            .filter(|(k, e)| k.0 == app && !e.snapshot.state.is_final())
            .map(|(k, _)| k.clone())
            .collect();
        keys.sort();
        for key in &keys {
            let mut snapshot = self.entries[key].snapshot.clone();
            snapshot.state = TaskState::Failed;
            snapshot.progress = None;
            snapshot.error = Some(ActionError::new(
                Reason::AppDisconnected,
                "The app disconnected before the task finished; its outcome is unknown.",
            ));
            // Cannot fail: the entry exists, so no room is needed.
            let _ = self.upsert(app, snapshot);
        }
        keys.into_iter().map(|(_, id)| id).collect()
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
        TaskSnapshot { id: id.into(), state, progress: None, result: None, error: None }
    }

    #[test]
    fn evicts_the_task_that_finished_first() {
        let mut t = TaskTable::new(3);
        t.upsert(1, task("a", TaskState::Running)).unwrap();
        t.upsert(1, task("b", TaskState::Running)).unwrap();
        t.upsert(1, task("c", TaskState::Running)).unwrap();
        assert_eq!(t.upsert(1, task("d", TaskState::Running)), Err(TableFull));
        assert!(!t.has_room());
        // b finishes before a: b is the older finished task.
        t.upsert(1, task("b", TaskState::Completed)).unwrap();
        t.upsert(1, task("a", TaskState::Failed)).unwrap();
        t.upsert(1, task("d", TaskState::Running)).unwrap();
        assert!(t.get(1, "b").is_none());
        assert_eq!(t.get(1, "a").unwrap().state, TaskState::Failed);
        t.upsert(1, task("e", TaskState::Running)).unwrap();
        assert!(t.get(1, "a").is_none());
        assert_eq!(t.len(), 3);
        assert_eq!(t.upsert(1, task("f", TaskState::Running)), Err(TableFull));
    }

    #[test]
    fn big_results_are_bounded_by_bytes_oldest_finished_first() {
        let mut t = TaskTable::with_budget(100, 10_000);
        let done = |id: &str, bytes: usize| TaskSnapshot {
            result: Some(Value::from("r".repeat(bytes))),
            ..task(id, TaskState::Completed)
        };
        t.upsert(1, task("running", TaskState::Running)).unwrap();
        t.upsert(1, done("a", 4000)).unwrap();
        t.upsert(1, done("b", 4000)).unwrap();
        assert!(t.get(1, "a").is_some());
        t.upsert(1, done("c", 4000)).unwrap();
        assert!(t.get(1, "a").is_none(), "oldest finished evicted for bytes");
        assert!(t.get(1, "b").is_some() && t.get(1, "c").is_some());
        assert!(t.get(1, "running").is_some(), "unfinished tasks are never evicted");
        assert!(t.bytes <= 10_000);
        // An update replaces the old size.
        t.upsert(1, TaskSnapshot { result: None, ..task("running", TaskState::Completed) })
            .unwrap();
        assert!(t.bytes <= 10_000);
    }

    #[test]
    fn final_states_are_sticky_and_apps_are_separate() {
        let mut t = TaskTable::new(10);
        t.upsert(1, task("x", TaskState::Cancelled)).unwrap();
        t.upsert(1, task("x", TaskState::Running)).unwrap();
        assert_eq!(t.get(1, "x").unwrap().state, TaskState::Cancelled);
        assert!(t.get(2, "x").is_none());
    }

    #[test]
    fn disconnect_fails_unfinished_tasks_of_that_app_only() {
        let mut t = TaskTable::new(10);
        t.upsert(1, task("run", TaskState::Running)).unwrap();
        t.upsert(1, task("done", TaskState::Completed)).unwrap();
        t.upsert(2, task("other", TaskState::Running)).unwrap();
        t.mark_cancelling(1, "run");
        assert_eq!(t.get(1, "run").unwrap().state, TaskState::Cancelling);
        assert_eq!(t.fail_app(1), ["run"]);
        let failed = t.get(1, "run").unwrap();
        assert_eq!(failed.state, TaskState::Failed);
        assert_eq!(failed.error.unwrap().reason, Reason::AppDisconnected);
        assert_eq!(t.get(1, "done").unwrap().state, TaskState::Completed);
        assert_eq!(t.get(2, "other").unwrap().state, TaskState::Running);
    }
}
