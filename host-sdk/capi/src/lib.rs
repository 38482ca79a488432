//! `libjfgui_host`: the C ABI over `host-sdk`, so apps written in C, C++ or Python (through
//! `ctypes`) register with jfgui-agentd and get exactly the contracts a Rust app gets. The
//! app's callback table is wrapped as a `Host` and run behind host-sdk's own `Dispatcher`,
//! `HostChannel` and `Connector`: no check is reimplemented here, and a registration declared in
//! JSON goes through the same validation as a static Rust one.
//!
//! The header `include/jfgui_host.h` is generated from this crate by cbindgen
//! (`cbindgen.toml`) and committed; CI regenerates it and fails on any difference.
//!
//! | concept | C surface | here |
//! |---|---|---|
//! | status codes, no unwinding out, string and buffer rules | `JfguiStatus` | `ffi.rs` |
//! | the app's callbacks | `JfguiCallbacks`, `JfguiCallInfo`, `JfguiStr` | `callbacks.rs` |
//! | callback results | `JfguiReply`, `jfgui_reply_*` | `reply.rs` |
//! | the handle's lifecycle | `JfguiHost`, `jfgui_host_*`, `JfguiWait`, `JfguiInfo` | `handle.rs`, `host_api.rs` |
//! | deferred work | `jfgui_host_task_*`, `JfguiTaskState` | `task_api.rs` |
//! | actions declared as JSON | (a JSON document) | `declaration.rs`, `schema_json.rs`, `store.rs` |
//! | the callbacks as a `Host` | | `host.rs`, `shared.rs` |
//!
//! # Ownership
//!
//! Strings are UTF-8 as pointer and length, never NUL-terminated, and always borrowed: the
//! library copies what it keeps before the function returns, and strings it passes to a
//! callback are valid only during that callback. Results go *into* library-owned
//! [`JfguiReply`] objects through the `jfgui_reply_*` functions, and text comes *out* only
//! into caller-owned buffers (`jfgui_host_last_error`), so no memory ever changes owner
//! across the boundary except the handle itself (`jfgui_host_new` → `jfgui_host_close`).
//!
//! # Threads and state
//!
//! No global state: each handle is independent and a process may hold several. A handle is
//! used by one thread at a time (it may move between threads); callbacks run on the thread
//! that called into the library. Calling a `jfgui_host_*` function of a handle from inside
//! one of its own callbacks returns `JFGUI_STATUS_REENTRANT`, except the documented few.
//!
//! # Why `unsafe` is allowed in this crate
//!
//! The workspace denies `unsafe_code`; a C ABI cannot exist without it (raw pointers from C,
//! `extern` functions, calling the app's function pointers). It is allowed per module, only
//! in the modules that touch the boundary, and every block carries its `SAFETY` reasoning.

#[allow(unsafe_code)] // calls the app's function pointers
mod callbacks;
#[allow(unsafe_code)] // builds specs on its own storage (see store.rs)
mod declaration;
#[allow(unsafe_code)] // raw pointers and lengths from C
mod ffi;
mod handle;
mod host;
#[allow(unsafe_code)] // the exported functions
mod host_api;
#[allow(unsafe_code)] // the exported functions
mod reply;
#[allow(unsafe_code)] // schemas built on the registration's own storage
mod schema_json;
#[allow(unsafe_code)] // the task table lent to a running callback
mod shared;
#[allow(unsafe_code)] // the storage behind run-time action specs
mod store;
#[allow(unsafe_code)] // the exported functions
mod task_api;
#[cfg(test)]
#[allow(unsafe_code)] // calls the exported functions as C does
mod tests;

pub use callbacks::{
    JfguiAvailabilityFn, JfguiBeginTransactionFn, JfguiCallInfo, JfguiCallbacks, JfguiCancelTaskFn,
    JfguiCapabilitiesFn, JfguiEndTransactionFn, JfguiExecuteFn, JfguiInspectFn,
    JfguiListResourcesFn, JfguiReadResourceFn, JfguiRevisionFn, JfguiStr,
    JfguiSupportsTransactionFn, JfguiTickFn,
};
pub use ffi::JfguiStatus;
pub use handle::{JfguiHost, JfguiInfo, JfguiWait};
pub use host_api::{
    JFGUI_HOST_ABI_VERSION, JFGUI_HOST_DEFAULT_BUDGET, jfgui_headless_requested, jfgui_host_close,
    jfgui_host_connect, jfgui_host_declare_actions, jfgui_host_fd, jfgui_host_info,
    jfgui_host_last_error, jfgui_host_new, jfgui_host_pump, jfgui_host_serve_stdio,
    jfgui_host_set_enabled,
};
pub use reply::{
    JfguiReply, jfgui_reply_deferred, jfgui_reply_error, jfgui_reply_json, jfgui_reply_resource,
    jfgui_reply_unavailable,
};
pub use task_api::{
    JfguiTaskState, jfgui_host_task_cancelled, jfgui_host_task_complete, jfgui_host_task_fail,
    jfgui_host_task_progress, jfgui_host_task_state,
};
