//! The exported `jfgui_host_task_*` functions: deferred work started with
//! `jfgui_reply_deferred` is reported through them (task states: `running` with progress,
//! `cancelling` when a client asked, then `cancelled`, `completed` or `failed`).
//!
//! They work outside callbacks (e.g. from the app's timer; the change is sent at once when
//! connected) and inside the `execute` and `tick` callbacks (the change is sent when the
//! current pump ends). Anywhere else they return `JFGUI_STATUS_REENTRANT`.

use std::format;
use std::string::String;

use jfgui_host_sdk::{Progress, TaskError, TaskState, TaskTable};
use jfgui_proto::parse;

use crate::ffi::{self, Error, JfguiStatus};
use crate::handle::JfguiHost;
use crate::host_api::{handle, with_state};
use crate::reply::{APP_JSON_LIMITS, failure};

/// A task's state as `jfgui_host_task_state` reports it.
#[repr(i32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JfguiTaskState {
    /// The library knows no such task (never started, or finished long ago and evicted).
    Unknown = 0,
    /// Working.
    Running = 1,
    /// A client asked to cancel it; stop at a safe point and call `jfgui_host_task_cancelled`.
    Cancelling = 2,
    /// Stopped after a cancel request.
    Cancelled = 3,
    /// Finished with a result.
    Completed = 4,
    /// Finished with an error.
    Failed = 5,
}

fn task_error(e: TaskError) -> Error {
    Error::new(JfguiStatus::Task, format!("task operation refused: {e}"))
}

/// Runs `op` on the task table of `handle` (from `host_api::handle`), wherever it is
/// reachable now (see the module docs).
fn with_tasks(
    handle: Result<&JfguiHost, Error>,
    op: impl FnOnce(&mut TaskTable) -> Result<(), Error>,
) -> JfguiStatus {
    let Ok(handle) = handle else {
        return JfguiStatus::InvalidArgument;
    };
    if handle.state.try_borrow_mut().is_err() {
        // A callback is running: use the table lent to it, if any.
        return ffi::guard(|| {
            let lent = handle.shared.with_lent_tasks(op).unwrap_or_else(|| {
                Err(Error::new(
                    JfguiStatus::Reentrant,
                    "task functions work outside callbacks and inside execute and tick only",
                ))
            });
            if let Err(e) = &lent {
                handle.shared.set_last_error(&e.message);
            }
            lent
        });
    }
    with_state(Ok(handle), |state| {
        op(state.tasks_mut()?)?;
        state.flush();
        Ok(())
    })
}

/// Reports progress of a running task: `done` units, of `*total` when `total` is not NULL,
/// with an optional short status line (`message` NULL: none).
///
/// # Safety
///
/// `h` is a live handle; `id` and a non-NULL `message` point to readable UTF-8 of the given
/// lengths; `total` is NULL or readable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn jfgui_host_task_progress(
    h: *mut JfguiHost,
    id: *const u8,
    id_len: usize,
    done: u64,
    total: *const u64,
    message: *const u8,
    message_len: usize,
) -> JfguiStatus {
    // SAFETY: a live handle by the contract.
    with_tasks(unsafe { handle(h) }, |tasks| {
        // SAFETY: readable by the contract.
        let (id, total, message) = unsafe {
            let message = if message.is_null() {
                None
            } else {
                Some(String::from(ffi::text(message, message_len, "message")?))
            };
            (ffi::text(id, id_len, "id")?, total.as_ref().copied(), message)
        };
        tasks.progress(id, Progress { done, total, message }).map_err(task_error)
    })
}

/// Finishes a task with `result` (JSON, any value).
///
/// # Safety
///
/// `h` is a live handle; `id` and `result` point to readable bytes of the given lengths.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn jfgui_host_task_complete(
    h: *mut JfguiHost,
    id: *const u8,
    id_len: usize,
    result: *const u8,
    result_len: usize,
) -> JfguiStatus {
    // SAFETY: a live handle by the contract.
    with_tasks(unsafe { handle(h) }, |tasks| {
        // SAFETY: readable by the contract.
        let (id, result) =
            unsafe { (ffi::text(id, id_len, "id")?, ffi::bytes(result, result_len, "result")?) };
        let result = parse(result, &APP_JSON_LIMITS).map_err(|e| {
            Error::new(JfguiStatus::InvalidJson, format!("the task result is not valid JSON: {e}"))
        })?;
        tasks.complete(id, result).map_err(task_error)
    })
}

/// Finishes a task with an error: `failed/host_error{code}` (`code` NULL: none) and a
/// one-sentence `message`.
///
/// # Safety
///
/// `h` is a live handle; `id`, a non-NULL `code` and `message` point to readable UTF-8 of the
/// given lengths.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn jfgui_host_task_fail(
    h: *mut JfguiHost,
    id: *const u8,
    id_len: usize,
    code: *const u8,
    code_len: usize,
    message: *const u8,
    message_len: usize,
) -> JfguiStatus {
    // SAFETY: a live handle by the contract.
    with_tasks(unsafe { handle(h) }, |tasks| {
        // SAFETY: readable by the contract.
        let (id, code, message) = unsafe {
            let code = if code.is_null() { None } else { Some(ffi::text(code, code_len, "code")?) };
            (ffi::text(id, id_len, "id")?, code, ffi::text(message, message_len, "message")?)
        };
        tasks.fail(id, failure(code, message)).map_err(task_error)
    })
}

/// Marks a task `cancelled` (after a cancel request, or on the app's own decision).
///
/// # Safety
///
/// `h` is a live handle; `id` points to `id_len` readable bytes of UTF-8.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn jfgui_host_task_cancelled(
    h: *mut JfguiHost,
    id: *const u8,
    id_len: usize,
) -> JfguiStatus {
    // SAFETY: a live handle by the contract.
    with_tasks(unsafe { handle(h) }, |tasks| {
        // SAFETY: readable by the contract.
        let id = unsafe { ffi::text(id, id_len, "id") }?;
        tasks.cancelled(id).map_err(task_error)
    })
}

/// The state of task `id` (`JFGUI_TASK_STATE_UNKNOWN` for an id the library does not hold).
///
/// # Safety
///
/// `h` is a live handle; `id` points to `id_len` readable bytes of UTF-8; `state` is valid
/// for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn jfgui_host_task_state(
    h: *mut JfguiHost,
    id: *const u8,
    id_len: usize,
    state: *mut JfguiTaskState,
) -> JfguiStatus {
    // SAFETY: a live handle by the contract.
    with_tasks(unsafe { handle(h) }, |tasks| {
        // SAFETY: readable by the contract.
        let id = unsafe { ffi::text(id, id_len, "id") }?;
        let value = match tasks.state(id) {
            None => JfguiTaskState::Unknown,
            Some(TaskState::Running) => JfguiTaskState::Running,
            Some(TaskState::Cancelling) => JfguiTaskState::Cancelling,
            Some(TaskState::Cancelled) => JfguiTaskState::Cancelled,
            Some(TaskState::Completed) => JfguiTaskState::Completed,
            Some(TaskState::Failed) => JfguiTaskState::Failed,
        };
        // SAFETY: writable by the contract.
        unsafe { ffi::put(state, value, "state") }
    })
}
