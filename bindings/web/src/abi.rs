//! The wasm exports of the generic web host (the table in `lib.rs`), beside host-sdk's
//! `jfgui_*` buffer protocol: plain `extern "C"` functions over the module's linear memory.

// `#[unsafe(no_mangle)]` is the whole FFI surface here: no raw pointer is dereferenced.
#![allow(unsafe_code)]

use alloc::boxed::Box;

use jfgui_host_sdk::bridge::web;

use crate::app::ScriptApp;
use crate::script::Imports;

jfgui_host_sdk::web_exports!(ScriptApp);

/// Declares the app (the input is the declaration) and installs it.
#[unsafe(no_mangle)]
pub extern "C" fn jfgui_declare() -> i32 {
    web::init(|input| ScriptApp::declare(input, Box::new(Imports)))
}

/// Applies the task reports in the input; how many.
#[unsafe(no_mangle)]
pub extern "C" fn jfgui_report_tasks() -> i32 {
    web::call::<ScriptApp>(|app, input, _| {
        app.report_tasks(input).map(|n| i32::try_from(n).unwrap_or(i32::MAX))
    })
}

/// Runs the app's own call in the input; the answer goes to the output.
#[unsafe(no_mangle)]
pub extern "C" fn jfgui_execute() -> i32 {
    web::call::<ScriptApp>(|app, input, out| {
        *out = app.execute_local(input)?;
        Ok(i32::try_from(out.len()).unwrap_or(i32::MAX))
    })
}
