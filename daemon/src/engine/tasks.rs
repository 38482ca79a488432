//! The daemon's task table (SPEC S4): the last known state of every deferred task, fed by the
//! apps' task updates, answering `tasks/get` without a round trip.
//!
//! Bounded by `max_tasks` (SPEC S8: 4096). Eviction rule: when the table is full, the task that
//! reached a final state (`completed`, `failed`, `cancelled`) **earliest** is evicted first;
//! unfinished tasks are never evicted, so a table full of unfinished tasks refuses new ones
//! with [`TableFull`], and callers turn that into a clear `busy` error before starting work.

use std::collections::{BTreeMap, HashMap};

use jfgui_proto::channel::{TaskSnapshot, TaskState};
use jfgui_proto::{ActionError, Reason};

/// Tasks are owned by one app connection; ids are unique within it only.
type Key = (u64, String);

/// The table holds `max_tasks` unfinished tasks and has no finished one to evict.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TableFull;

#[derive(Debug)]
struct Entry {
    snapshot: TaskSnapshot,
    /// Order in which the task became final (for eviction); `None` while unfinished.
    finished_seq: Option<u64>,
}

/// See the module docs.
#[derive(Debug)]
pub struct TaskTable {
    max: usize,
    entries: HashMap<Key, Entry>,
    finished: BTreeMap<u64, Key>,
    next_seq: u64,
}

impl TaskTable {
    /// An empty table of at most `max` tasks.
    pub fn new(max: usize) -> Self {
        TaskTable { max, entries: HashMap::new(), finished: BTreeMap::new(), next_seq: 0 }
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
        if let Some(entry) = self.entries.get_mut(&key) {
            if entry.snapshot.state.is_final() {
                return Ok(());
            }
            entry.snapshot = snapshot;
            if entry.snapshot.state.is_final() {
                let seq = self.next_seq;
                self.next_seq += 1;
                entry.finished_seq = Some(seq);
                self.finished.insert(seq, key);
            }
            return Ok(());
        }
        if self.entries.len() >= self.max {
            let Some((_, oldest)) = self.finished.pop_first() else {
                return Err(TableFull);
            };
            self.entries.remove(&oldest);
        }
        let finished_seq = snapshot.state.is_final().then(|| {
            let seq = self.next_seq;
            self.next_seq += 1;
            self.finished.insert(seq, key.clone());
            seq
        });
        self.entries.insert(key, Entry { snapshot, finished_seq });
        Ok(())
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
    /// says the outcome is unknown (SPEC S4).
    pub fn fail_app(&mut self, app: u64) {
        let keys: Vec<Key> = self
            .entries
            .iter()
            .filter(|(k, e)| k.0 == app && !e.snapshot.state.is_final())
            .map(|(k, _)| k.clone())
            .collect();
        for key in keys {
            let mut snapshot = self.entries[&key].snapshot.clone();
            snapshot.state = TaskState::Failed;
            snapshot.progress = None;
            snapshot.error = Some(ActionError::new(
                Reason::AppDisconnected,
                "The app disconnected before the task finished; its outcome is unknown.",
            ));
            // Cannot fail: the entry exists, so no room is needed.
            let _ = self.upsert(app, snapshot);
        }
    }

    /// Number of stored tasks.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.entries.len()
    }
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
        t.fail_app(1);
        let failed = t.get(1, "run").unwrap();
        assert_eq!(failed.state, TaskState::Failed);
        assert_eq!(failed.error.unwrap().reason, Reason::AppDisconnected);
        assert_eq!(t.get(1, "done").unwrap().state, TaskState::Completed);
        assert_eq!(t.get(2, "other").unwrap().state, TaskState::Running);
    }
}
