//! `TaskTable`: the app-side state of deferred work and the queue of state changes
//! the channel reports to the daemon as `task` messages.

use alloc::collections::VecDeque;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use jfgui_proto::channel::{
    Awaiting, ConsentAnswer, ConsentDecision, Progress, TaskSnapshot, TaskState,
};
use jfgui_proto::{ActionError, Reason, Value};

/// Most tasks that are `running` or `cancelling` at once. Starting another fails with
/// [`TaskError::Full`] (mapped to `not_executed/busy`), so a client cannot make an app hold
/// unbounded work; 256 matches the daemon's per-app request queue.
pub const MAX_ACTIVE_TASKS: usize = 256;

/// Finished tasks kept (oldest evicted first) so a late `tasks/cancel` still gets the final
/// state; the daemon's own table is the long-term record.
pub const MAX_FINISHED_TASKS: usize = 64;

/// Longest task id in bytes; ids travel in every task message.
pub const MAX_TASK_ID: usize = 128;

/// Why a task operation was refused.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TaskError {
    /// A task with this id is still known.
    Duplicate,
    /// [`MAX_ACTIVE_TASKS`] tasks are active.
    Full,
    /// The id is empty or longer than [`MAX_TASK_ID`].
    InvalidId,
    /// No such task.
    Unknown,
    /// The task already reached a final state.
    Finished,
}

impl fmt::Display for TaskError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TaskError::Duplicate => "a task with this id already exists",
            TaskError::Full => "too many tasks are running",
            TaskError::InvalidId => "task ids are 1 to 128 bytes",
            TaskError::Unknown => "no such task",
            TaskError::Finished => "the task has already finished",
        })
    }
}

impl From<TaskError> for ActionError {
    fn from(e: TaskError) -> Self {
        let reason = match e {
            TaskError::Full => Reason::Busy,
            TaskError::Duplicate => Reason::HostError { code: Some("task_id_in_use".into()) },
            TaskError::InvalidId => Reason::HostError { code: Some("invalid_task_id".into()) },
            TaskError::Unknown => Reason::HostError { code: Some("unknown_task".into()) },
            TaskError::Finished => Reason::HostError { code: Some("task_finished".into()) },
        };
        ActionError::new(reason, alloc::format!("{e}"))
    }
}

/// Deferred tasks with explicit, app-chosen ids.
///
/// States: `running → cancelling → cancelled`, `running | cancelling → completed | failed`.
/// [`request_cancel`](TaskTable::request_cancel) (from a client's `tasks/cancel`) only moves a
/// running task to `cancelling`; the host calls [`cancelled`](TaskTable::cancelled) at its next
/// safe checkpoint. Every change is queued for the daemon; several changes of one task before
/// the channel sends them collapse into the latest, so the queue is bounded by the number of
/// tasks.
#[derive(Debug, Default)]
pub struct TaskTable {
    active: Vec<TaskSnapshot>,
    finished: VecDeque<TaskSnapshot>,
    events: Vec<TaskSnapshot>,
}

impl TaskTable {
    /// An empty table.
    pub fn new() -> Self {
        TaskTable::default()
    }

    /// Starts a task in state `running`; the id is the caller's choice and must be unique
    /// among the tasks the table still holds.
    pub fn start(&mut self, id: impl Into<String>) -> Result<(), TaskError> {
        self.insert(TaskSnapshot::new(id, TaskState::Running))
    }

    /// Starts the task of a call that waits for the user: `running`, `awaiting:
    /// "confirmation"`, with `message` as its progress.
    pub(crate) fn start_awaiting(&mut self, id: String, message: String) -> Result<(), TaskError> {
        self.insert(TaskSnapshot {
            progress: Some(Progress { done: 0, total: None, message: Some(message) }),
            awaiting: Some(Awaiting::Confirmation),
            ..TaskSnapshot::new(id, TaskState::Running)
        })
    }

    fn insert(&mut self, task: TaskSnapshot) -> Result<(), TaskError> {
        if task.id.is_empty() || task.id.len() > MAX_TASK_ID {
            return Err(TaskError::InvalidId);
        }
        if self.get(&task.id).is_some() {
            return Err(TaskError::Duplicate);
        }
        if self.active.len() >= MAX_ACTIVE_TASKS {
            return Err(TaskError::Full);
        }
        self.queue(task.clone());
        self.active.push(task);
        Ok(())
    }

    /// Records how the user decided on a waiting task: it waits no more (nor says so in its
    /// progress). The final state that follows ([`fail`](TaskTable::fail),
    /// [`cancelled`](TaskTable::cancelled)) is reported with the decision.
    pub(crate) fn record_consent(
        &mut self,
        id: &str,
        answer: ConsentAnswer,
    ) -> Result<(), TaskError> {
        let task = self.active_mut(id)?;
        task.awaiting = None;
        task.progress = None;
        task.consent = Some(ConsentDecision { answer });
        Ok(())
    }

    /// The user allowed a waiting task's call: reported at once (`running` without
    /// `awaiting`, the decision, `message` as progress), before anything of the call runs.
    pub(crate) fn allowed(
        &mut self,
        id: &str,
        answer: ConsentAnswer,
        message: String,
    ) -> Result<(), TaskError> {
        self.record_consent(id, answer)?;
        self.progress(id, Progress { done: 0, total: None, message: Some(message) })
    }

    /// Reports a task's current state again (a task started while a confirmed call ran: no
    /// reply carries its creation, so its first `task` message does).
    pub(crate) fn announce(&mut self, id: &str) {
        if let Some(task) = self.get(id).cloned() {
            self.queue(task);
        }
    }

    /// The task's current snapshot.
    pub fn get(&self, id: &str) -> Option<&TaskSnapshot> {
        self.active.iter().chain(self.finished.iter()).find(|t| t.id == id)
    }

    /// The task's state.
    pub fn state(&self, id: &str) -> Option<TaskState> {
        self.get(id).map(|t| t.state)
    }

    /// True when a cancel was requested and the host has not yet stopped the task.
    pub fn is_cancel_requested(&self, id: &str) -> bool {
        self.state(id) == Some(TaskState::Cancelling)
    }

    /// Ids of the tasks still `running` or `cancelling`, oldest first.
    pub fn active_ids(&self) -> impl Iterator<Item = &str> {
        self.active.iter().map(|t| t.id.as_str())
    }

    /// Number of active tasks.
    pub fn active_len(&self) -> usize {
        self.active.len()
    }

    /// Reports progress of an active task.
    pub fn progress(&mut self, id: &str, progress: Progress) -> Result<(), TaskError> {
        let task = self.active_mut(id)?;
        task.progress = Some(progress);
        let snapshot = task.clone();
        self.queue(snapshot);
        Ok(())
    }

    /// `running → cancelling` for a client's cancel request; a task in any other state is
    /// left alone. Returns the task's snapshot after the request.
    pub fn request_cancel(&mut self, id: &str) -> Option<TaskSnapshot> {
        if let Ok(task) = self.active_mut(id)
            && task.state == TaskState::Running
        {
            task.state = TaskState::Cancelling;
            let snapshot = task.clone();
            self.queue(snapshot.clone());
            return Some(snapshot);
        }
        self.get(id).cloned()
    }

    /// The host stopped the task at a checkpoint: `cancelling` (or `running`, when the host
    /// cancels on its own) → `cancelled`.
    pub fn cancelled(&mut self, id: &str) -> Result<(), TaskError> {
        self.finish(id, TaskState::Cancelled, None, None)
    }

    /// The task finished with `result`.
    pub fn complete(&mut self, id: &str, result: Value) -> Result<(), TaskError> {
        self.finish(id, TaskState::Completed, Some(result), None)
    }

    /// The task failed with `error`.
    pub fn fail(&mut self, id: &str, error: ActionError) -> Result<(), TaskError> {
        self.finish(id, TaskState::Failed, None, Some(error))
    }

    /// Removes a task without reporting it: used when the call that started it is rolled
    /// back (a deferred result inside an atomic batch), so the daemon never hears of it.
    pub(crate) fn discard(&mut self, id: &str) {
        self.active.retain(|t| t.id != id);
        self.events.retain(|t| t.id != id);
    }

    /// Drops the queued change of a task whose creation travels in a reply instead.
    pub(crate) fn unqueue_start(&mut self, id: &str) {
        self.events
            .retain(|t| !(t.id == id && t.state == TaskState::Running && t.progress.is_none()));
    }

    /// Drops the queued change of a task, whose creation travels in a reply instead.
    pub(crate) fn forget_queued(&mut self, id: &str) {
        self.events.retain(|t| t.id != id);
    }

    /// Takes the queued state changes, oldest first.
    pub(crate) fn take_events(&mut self) -> Vec<TaskSnapshot> {
        core::mem::take(&mut self.events)
    }

    /// Forgets queued changes (after a reconnect the new daemon never knew these tasks).
    pub(crate) fn clear_events(&mut self) {
        self.events.clear();
    }

    fn active_mut(&mut self, id: &str) -> Result<&mut TaskSnapshot, TaskError> {
        match self.active.iter_mut().find(|t| t.id == id) {
            Some(t) => Ok(t),
            None if self.finished.iter().any(|t| t.id == id) => Err(TaskError::Finished),
            None => Err(TaskError::Unknown),
        }
    }

    fn finish(
        &mut self,
        id: &str,
        state: TaskState,
        result: Option<Value>,
        error: Option<ActionError>,
    ) -> Result<(), TaskError> {
        self.active_mut(id)?;
        let pos = self.active.iter().position(|t| t.id == id).ok_or(TaskError::Unknown)?;
        let mut task = self.active.remove(pos);
        task.state = state;
        task.result = result;
        task.error = error;
        // A task that ended waits for nothing.
        task.awaiting = None;
        if self.finished.len() >= MAX_FINISHED_TASKS {
            self.finished.pop_front();
        }
        self.queue(task.clone());
        self.finished.push_back(task);
        Ok(())
    }

    fn queue(&mut self, snapshot: TaskSnapshot) {
        match self.events.iter_mut().find(|t| t.id == snapshot.id) {
            Some(slot) => *slot = snapshot,
            None => self.events.push(snapshot),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lifecycle_and_events() {
        let mut t = TaskTable::new();
        t.start("a").unwrap();
        assert_eq!(t.start("a"), Err(TaskError::Duplicate));
        assert_eq!(t.start(""), Err(TaskError::InvalidId));
        t.progress("a", Progress { done: 1, total: Some(4), message: None }).unwrap();
        let ev = t.take_events();
        assert_eq!(ev.len(), 1, "start and progress collapse into one change");
        assert_eq!(ev[0].progress.as_ref().unwrap().done, 1);

        let s = t.request_cancel("a").unwrap();
        assert_eq!(s.state, TaskState::Cancelling);
        assert!(t.is_cancel_requested("a"));
        t.cancelled("a").unwrap();
        assert_eq!(t.state("a"), Some(TaskState::Cancelled));
        assert_eq!(t.take_events()[0].state, TaskState::Cancelled);
        // A late cancel of a finished task answers its final state, unchanged.
        assert_eq!(t.request_cancel("a").unwrap().state, TaskState::Cancelled);
        assert!(t.take_events().is_empty());
        assert_eq!(t.complete("a", Value::Null), Err(TaskError::Finished));
        assert_eq!(t.complete("zz", Value::Null), Err(TaskError::Unknown));
        assert!(t.request_cancel("zz").is_none());
    }

    #[test]
    fn bounded() {
        let mut t = TaskTable::new();
        for i in 0..MAX_ACTIVE_TASKS {
            t.start(alloc::format!("t{i}")).unwrap();
        }
        assert_eq!(t.start("one-more"), Err(TaskError::Full));
        for i in 0..MAX_ACTIVE_TASKS {
            t.complete(&alloc::format!("t{i}"), Value::Null).unwrap();
        }
        assert_eq!(t.active_len(), 0);
        assert_eq!(t.finished.len(), MAX_FINISHED_TASKS);
        assert!(t.get("t0").is_none(), "oldest finished tasks are evicted");
        assert!(t.get(&alloc::format!("t{}", MAX_ACTIVE_TASKS - 1)).is_some());
        let e: ActionError = TaskError::Full.into();
        assert_eq!(e.reason, Reason::Busy);
    }

    #[test]
    fn discard_forgets_silently() {
        let mut t = TaskTable::new();
        t.start("x").unwrap();
        t.discard("x");
        assert!(t.get("x").is_none());
        assert!(t.take_events().is_empty());
    }
}
