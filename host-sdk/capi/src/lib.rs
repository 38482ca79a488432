// The crate docs are README.md (also the crates.io page): what the C surface is, where the
// header is, the ownership and threading rules, and why `unsafe` is allowed per module below.
#![doc = include_str!("../README.md")]

mod answer;
#[allow(unsafe_code)] // calls the app's function pointers
mod callbacks;
#[allow(unsafe_code)] // the exported functions
mod consent_api;
#[allow(unsafe_code)] // raw pointers and lengths from C
mod ffi;
mod handle;
#[allow(unsafe_code)] // lends the registration's specs to the dispatcher (see handle.rs)
mod host;
#[allow(unsafe_code)] // the exported functions
mod host_api;
#[allow(unsafe_code)] // the exported functions
mod launch_api;
#[allow(unsafe_code)] // the exported functions
mod reply;
#[allow(unsafe_code)] // the task table lent to a running callback
mod shared;
#[allow(unsafe_code)] // the exported functions
mod task_api;
#[allow(unsafe_code)] // the exported functions
mod testing_api;
#[cfg(test)]
#[allow(unsafe_code)] // calls the exported functions as C does
mod tests;

pub use answer::{
    JFGUI_ANSWER_ALLOW, JFGUI_ANSWER_ALLOW_ALWAYS, JFGUI_ANSWER_DENY, JFGUI_ANSWER_LATER,
    JFGUI_ANSWER_NO_UI,
};
pub use callbacks::{
    JfguiAvailabilityFn, JfguiBeginTransactionFn, JfguiCallInfo, JfguiCallbacks, JfguiCancelTaskFn,
    JfguiCapabilitiesFn, JfguiConfirmFn, JfguiConfirmation, JfguiEndTransactionFn, JfguiExecuteFn,
    JfguiInspectFn, JfguiListResourcesFn, JfguiReadResourceFn, JfguiRevisionFn, JfguiStr,
    JfguiSupportsTransactionFn, JfguiTickFn, JfguiWithdrawConfirmationFn,
};
pub use consent_api::jfgui_host_answer;
pub use ffi::JfguiStatus;
pub use handle::{JfguiHost, JfguiInfo, JfguiWait};
pub use host_api::{
    JFGUI_HOST_ABI_VERSION, JFGUI_HOST_DEFAULT_BUDGET, jfgui_headless_requested, jfgui_host_close,
    jfgui_host_connect, jfgui_host_declare_actions, jfgui_host_fd, jfgui_host_info,
    jfgui_host_last_error, jfgui_host_new, jfgui_host_pump, jfgui_host_serve_stdio,
    jfgui_host_set_enabled,
};
pub use launch_api::{
    jfgui_agents_may_start, jfgui_let_agents_start, jfgui_started_by_agent,
    jfgui_stop_letting_agents_start,
};
pub use reply::{
    JfguiReply, jfgui_reply_deferred, jfgui_reply_error, jfgui_reply_json, jfgui_reply_resource,
    jfgui_reply_unavailable,
};
pub use task_api::{
    JfguiTaskState, jfgui_host_task_cancelled, jfgui_host_task_complete, jfgui_host_task_fail,
    jfgui_host_task_progress, jfgui_host_task_state,
};
pub use testing_api::{jfgui_host_check, jfgui_host_check_report};
