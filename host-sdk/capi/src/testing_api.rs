//! The exported `jfgui_host_check*` functions: the contract checks of `jfgui-agent check`,
//! run in-process on a handle (its declarations, dispatcher and callbacks, no daemon), for an
//! app's own tests; Python's `jfgui_host.testing` wraps them.

use crate::ffi::{self, JfguiStatus};
use crate::handle::JfguiHost;
use crate::host_api::{handle, with_state};

/// Runs the contract checks against this handle, in-process: the same checks as
/// `jfgui-agent check` (declaration lint, inspection, read actions, `ui.render`, resources;
/// with `mutate` also stale, invalid and valid writes, task cancellation and an atomic batch),
/// calling the handle's own callbacks as a daemon request would. `mutate` changes the app's
/// state as an agent would: use it on a scratch document. Allowed after
/// `jfgui_host_declare_actions` and before `jfgui_host_connect`; the handle's enabled state
/// is the same afterwards.
///
/// The report is JSON, `{"mutate", "passed", "counts": {"pass", "warn", "fail"},
/// "findings": [{"level": "PASS" | "WARN" | "FAIL", "check", "action"?, "resource"?, "why",
/// "fix"?}]}`; its length in bytes goes to `*report_len`, and `jfgui_host_check_report`
/// copies it out. A report with FAILs is still `JFGUI_STATUS_OK`: `passed` says whether
/// anything FAILed.
///
/// Errors: `WRONG_STATE` (no actions declared, or connected), `INTERNAL`.
///
/// # Safety
///
/// `h` is a live handle; `report_len` is valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn jfgui_host_check(
    h: *mut JfguiHost,
    mutate: bool,
    report_len: *mut usize,
) -> JfguiStatus {
    // SAFETY: a live handle by the contract.
    with_state(unsafe { handle(h) }, |state| {
        let len = state.check(mutate)?;
        // SAFETY: writable by the contract.
        unsafe { ffi::put(report_len, len, "report_len") }
    })
}

/// Copies the JSON report of the handle's last `jfgui_host_check` (UTF-8, not
/// NUL-terminated) into `buf` (`capacity` bytes, owned by the caller; cut short when it does
/// not fit) and stores its full length in `*len`, so a caller can retry with a larger
/// buffer without running the checks again.
///
/// Errors: `WRONG_STATE` (no checks have run).
///
/// # Safety
///
/// `h` is a live handle; `buf` is NULL (with `capacity` 0) or writable for `capacity` bytes;
/// `len` is valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn jfgui_host_check_report(
    h: *const JfguiHost,
    buf: *mut u8,
    capacity: usize,
    len: *mut usize,
) -> JfguiStatus {
    // SAFETY: a live handle by the contract.
    with_state(unsafe { handle(h) }, |state| {
        let report = state.report()?;
        // SAFETY: `buf` and `len` are writable by the contract.
        unsafe { ffi::copy_out(report, buf, capacity, len) }
    })
}
