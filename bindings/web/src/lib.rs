//! The generic web host of the `jfgui-web-host` npm package (`jfgui_web_host.wasm`): a web app
//! written in JavaScript only declares its actions in JSON (the shape `actions/describe`
//! shows, as the C ABI takes them) and implements them in JavaScript; host-sdk's `Dispatcher`
//! runs every contract before and after the script is asked (enabled, action exists, input
//! schema, capabilities, availability, `expectedRevision`, output schema, batch preflight and
//! transactions, size bounds), and host-sdk's bridge endpoint builds and reads every bridge
//! body. The package's `index.js` (`ScriptHost`) does the rest in the page.
//!
//! | part | file |
//! |---|---|
//! | the declaration, task reports, the app's own calls | `app.rs` |
//! | host-sdk's `Host` answered by the script | `host.rs` |
//! | the JSON requests to the script, its two wasm imports | `script.rs` |
//! | the wasm exports (wasm32 only) | `abi.rs` |
//!
//! Exports beside host-sdk's `jfgui_*` buffer protocol (`jfgui_host_sdk::bridge::web`):
//!
//! | export | input | output | returns |
//! |---|---|---|---|
//! | `jfgui_declare()` | the declaration | error | 0, or -1 |
//! | `jfgui_report_tasks()` | task reports (a JSON array) | error | reports applied, or -1 |
//! | `jfgui_execute()` | `{"action", "input"}` | `{"ok": RESULT}` or `{"error": ERROR}` | its length, or -1 |
//!
//! Imports (module `jfgui`): `script_call(ptr, len) -> len` and `script_reply(ptr)`, see
//! `script.rs`.
#![no_std]

extern crate alloc;

mod app;
mod host;
mod script;

#[cfg(target_arch = "wasm32")]
mod abi;

pub use app::ScriptApp;
pub use host::{Hooks, ScriptHost};
pub use script::{SCRIPT_JSON_LIMITS, Script};
