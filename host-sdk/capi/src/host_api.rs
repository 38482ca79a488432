//! The exported `jfgui_host_*` functions of a handle's lifecycle (tasks are in
//! `task_api.rs`): argument checks, the reentrancy rule, the last-error message, and a panic
//! inside the library turned into `JFGUI_STATUS_INTERNAL` (the handle is then poisoned).

use core::ffi::c_void;
use std::any::Any;
use std::boxed::Box;
use std::format;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::string::{String, ToString};

use crate::callbacks::{Callbacks, JfguiCallbacks};
use crate::ffi::{self, Error, JfguiStatus};
use crate::handle::{JfguiHost, JfguiInfo, JfguiWait, State};

/// The version of this ABI (the header, the callback table and every signature). Pass it to
/// `jfgui_host_new`; a library of another version refuses the handle instead of misreading
/// the table.
pub const JFGUI_HOST_ABI_VERSION: u32 = 2;

/// A good `budget` for `jfgui_host_pump` (the std run loop's): enough requests to drain a
/// burst, few enough that a GUI stays responsive.
pub const JFGUI_HOST_DEFAULT_BUDGET: usize = 64;

/// The handle behind `h`, or an argument error.
///
/// # Safety
///
/// A non-NULL `h` must come from `jfgui_host_new` and not be closed.
pub(crate) unsafe fn handle<'a>(h: *const JfguiHost) -> Result<&'a JfguiHost, Error> {
    if h.is_null() {
        return Err(Error::new(JfguiStatus::InvalidArgument, "the handle is NULL"));
    }
    // SAFETY: a live handle by the contract; only shared references are made from it (the
    // mutable state is behind a RefCell), so a callback calling back in cannot alias.
    Ok(unsafe { &*h })
}

fn panic_message(payload: &(dyn Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| String::from("(no message)"))
}

/// Runs `body` on the state of `handle` (from [`handle`]) with the boundary rules (see the
/// module docs).
pub(crate) fn with_state(
    handle: Result<&JfguiHost, Error>,
    body: impl FnOnce(&mut State) -> Result<(), Error>,
) -> JfguiStatus {
    ffi::guard(|| {
        let handle = handle?;
        if handle.poisoned.get() {
            return Err(Error::new(
                JfguiStatus::Internal,
                "an earlier call hit a bug inside libjfgui_host; close this handle",
            ));
        }
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            let mut state = handle.state.try_borrow_mut().map_err(|_| {
                Error::new(
                    JfguiStatus::Reentrant,
                    "called from inside one of this handle's callbacks, where it is not allowed",
                )
            })?;
            body(&mut state)
        }));
        let result = outcome.unwrap_or_else(|payload| {
            handle.poisoned.set(true);
            Err(Error::new(
                JfguiStatus::Internal,
                format!("bug inside libjfgui_host: {}", panic_message(payload.as_ref())),
            ))
        });
        if let Err(e) = &result {
            handle.shared.set_last_error(&e.message);
        }
        result
    })
}

/// Creates a handle for an app called `display_name` (any UTF-8, shown to people; the
/// daemon derives the endpoint slug from it). The library copies `callbacks`; `user_data` is
/// passed unchanged to every callback and never dereferenced by the library. The handle
/// starts with no actions and disabled; see `jfgui_host_declare_actions`.
///
/// Errors: `INVALID_ARGUMENT` when `abi_version` is not `JFGUI_HOST_ABI_VERSION`, an argument
/// is NULL, the name is not UTF-8, `execute` or `revision` is missing, or
/// `supports_transaction` comes without begin, commit and rollback (no handle exists then, so
/// there is no message to read).
///
/// Ownership: `*out` belongs to the caller until `jfgui_host_close`.
///
/// # Safety
///
/// `display_name` points to `display_name_len` readable bytes; `callbacks` to a readable
/// table whose non-NULL members are functions of the declared signatures that accept
/// `user_data`; `out` is valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn jfgui_host_new(
    abi_version: u32,
    display_name: *const u8,
    display_name_len: usize,
    callbacks: *const JfguiCallbacks,
    user_data: *mut c_void,
    out: *mut *mut JfguiHost,
) -> JfguiStatus {
    ffi::guard(|| {
        if abi_version != JFGUI_HOST_ABI_VERSION {
            return Err(Error::new(JfguiStatus::InvalidArgument, "ABI version mismatch"));
        }
        if callbacks.is_null() {
            return Err(Error::new(JfguiStatus::InvalidArgument, "callbacks is NULL"));
        }
        // SAFETY: readable by the contract; the table is plain data, copied here.
        let (name, table) = unsafe {
            (ffi::text(display_name, display_name_len, "display_name")?, callbacks.read())
        };
        let callbacks = Callbacks::new(table, user_data)
            .map_err(|m| Error::new(JfguiStatus::InvalidArgument, m))?;
        let handle = Box::new(JfguiHost::new(name.to_string(), callbacks));
        let raw = Box::into_raw(handle);
        // SAFETY: `out` is writable by the contract; on failure the handle is freed again.
        unsafe { ffi::put(out, raw, "out") }.inspect_err(|_| {
            // SAFETY: `raw` came from `Box::into_raw` just above and was handed to nobody.
            drop(unsafe { Box::from_raw(raw) });
        })
    })
}

/// Declares the app's actions: a JSON array of `{"name", "description", "kind": "read" |
/// "write", "inputSchema"?, "outputSchema"?, "capabilities"?, "undo"?, "transaction"?,
/// "commandId"?}` (the shape `actions/describe` shows; schemas in the JSON Schema subset the
/// daemon renders). They are checked exactly like a Rust app's registration. Allowed once,
/// before `connect` or `serve_stdio`; after an error it may be called again.
///
/// Errors: `INVALID_JSON`, `INVALID_REGISTRATION` (the message names the action and the JSON
/// pointer), `WRONG_STATE`.
///
/// # Safety
///
/// `h` is a live handle; `json` points to `json_len` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn jfgui_host_declare_actions(
    h: *mut JfguiHost,
    json: *const u8,
    json_len: usize,
) -> JfguiStatus {
    // SAFETY: a live handle, and a readable buffer, by the contract.
    let (handle, json) = unsafe { (handle(h), ffi::bytes(json, json_len, "json")) };
    with_state(handle, |state| state.declare(json?))
}

/// Connects to the user's daemon: `host.sock` in the runtime dir (`$JFGUI_RUNTIME_DIR`, else
/// `$XDG_RUNTIME_DIR/jfgui-agent`, else `/run/user/UID/jfgui-agent`, else
/// `/tmp/jfgui-agent-UID`; on Windows the user's pipe), with the same checks, backoff and
/// re-registration as a Rust app. The first attempt is made now; if the daemon is not
/// running, `jfgui_host_pump` keeps retrying. Then watch `jfgui_host_fd` and pump.
///
/// Errors: `WRONG_STATE`; `IO` when the location cannot be resolved (e.g. a relative
/// `JFGUI_RUNTIME_DIR`), after which the handle can only be closed.
///
/// # Safety
///
/// `h` is a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn jfgui_host_connect(h: *mut JfguiHost) -> JfguiStatus {
    // SAFETY: a live handle by the contract.
    with_state(unsafe { handle(h) }, State::connect)
}

/// Does what is possible now without blocking: connects when a retry is due, reads what the
/// daemon sent, answers at most `budget` requests through the callbacks, lets the app's tick
/// run, writes what the socket takes. `*wait` (if not NULL) says what to wait for before the
/// next pump: call it when `fd` is readable (`read`), writable (`write`), or after
/// `timeout_ms`. An idle, connected app gets `timeout_ms` -1: it wakes up only for requests.
///
/// # Safety
///
/// `h` is a live handle; `wait` is NULL or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn jfgui_host_pump(
    h: *mut JfguiHost,
    budget: usize,
    wait: *mut JfguiWait,
) -> JfguiStatus {
    // SAFETY: a live handle by the contract.
    with_state(unsafe { handle(h) }, |state| {
        let w = state.pump(budget)?;
        if wait.is_null() {
            return Ok(());
        }
        // SAFETY: writable by the contract.
        unsafe { ffi::put(wait, w, "wait") }
    })
}

/// The connection's file descriptor for the app's event loop (`poll`, `select`, GLib, Qt's
/// `QSocketNotifier`, Tk's `createfilehandler`, asyncio), or -1 while disconnected. It may
/// change after a reconnect; `jfgui_host_pump` reports the current one every time.
///
/// # Safety
///
/// `h` is a live handle; `fd` is valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn jfgui_host_fd(h: *const JfguiHost, fd: *mut i32) -> JfguiStatus {
    // SAFETY: a live handle by the contract.
    with_state(unsafe { handle(h) }, |state| {
        let value = state.fd()?;
        // SAFETY: writable by the contract.
        unsafe { ffi::put(fd, value, "fd") }
    })
}

/// Enables or disables calls from clients (a handle starts disabled: enabling is the app's
/// explicit decision, e.g. a checkbox the user ticks). Disabling rejects calls at once and
/// tells the daemon, which removes the app's endpoint and closes its clients' connections.
///
/// # Safety
///
/// `h` is a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn jfgui_host_set_enabled(h: *mut JfguiHost, enabled: bool) -> JfguiStatus {
    // SAFETY: a live handle by the contract.
    with_state(unsafe { handle(h) }, |state| state.set_enabled(enabled))
}

/// Reports whether the handle is connected, registered and enabled.
///
/// # Safety
///
/// `h` is a live handle; `info` is valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn jfgui_host_info(h: *const JfguiHost, info: *mut JfguiInfo) -> JfguiStatus {
    // SAFETY: a live handle by the contract.
    with_state(unsafe { handle(h) }, |state| {
        // SAFETY: writable by the contract.
        unsafe { ffi::put(info, state.info(), "info") }
    })
}

/// Serves the host channel on stdin/stdout, blocking, for `jfgui-agent headless` (when
/// `jfgui_headless_requested` says so). Running headless is the user's explicit enable: the
/// handle is enabled first. Returns when stdin ends (after `bye`) or the peer says `bye`;
/// stdout must carry nothing else meanwhile. The handle can only be closed afterwards.
///
/// Errors: `WRONG_STATE` (connected, or no actions), `IO` (stdio failed, the registration was
/// refused, or a protocol error).
///
/// # Safety
///
/// `h` is a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn jfgui_host_serve_stdio(h: *mut JfguiHost) -> JfguiStatus {
    // SAFETY: a live handle by the contract.
    with_state(unsafe { handle(h) }, State::serve_stdio)
}

/// Whether this process was started to speak the host channel on stdio
/// (`JFGUI_HOST_CHANNEL=stdio`, set by `jfgui-agent headless`).
///
/// # Safety
///
/// `out` is valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn jfgui_headless_requested(out: *mut bool) -> JfguiStatus {
    ffi::guard(|| {
        let requested = jfgui_host_sdk::connector::headless_requested();
        // SAFETY: writable by the contract.
        unsafe { ffi::put(out, requested, "out") }
    })
}

/// Copies the message of the handle's last failed call (UTF-8, not NUL-terminated) into
/// `buf` (`capacity` bytes, owned by the caller; cut at a character boundary when short) and
/// stores its full length in `*len`. Allowed anywhere, also inside callbacks.
///
/// # Safety
///
/// `h` is a live handle; `buf` is NULL (with `capacity` 0) or writable for `capacity` bytes;
/// `len` is valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn jfgui_host_last_error(
    h: *const JfguiHost,
    buf: *mut u8,
    capacity: usize,
    len: *mut usize,
) -> JfguiStatus {
    // SAFETY: a live handle by the contract.
    let handle = unsafe { handle(h) };
    ffi::guard(|| {
        let message = handle?.shared.last_error();
        // SAFETY: `buf` and `len` are writable by the contract.
        unsafe { ffi::copy_out(&message, buf, capacity, len) }
    })
}

/// Says `bye` to the daemon (waiting up to half a second to send it), then frees the handle
/// and everything it owns. NULL is ignored. Not allowed inside the handle's own callbacks
/// (`REENTRANT`; nothing is freed then). The pointer is invalid afterwards.
///
/// # Safety
///
/// `h` is NULL or a live handle that no other thread is using.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn jfgui_host_close(h: *mut JfguiHost) -> JfguiStatus {
    if h.is_null() {
        return JfguiStatus::Ok;
    }
    // SAFETY: a live handle by the contract. A poisoned handle skips `bye` (its state may be
    // broken) but is still freed below.
    let status = with_state(unsafe { handle(h) }, |state| {
        state.close();
        Ok(())
    });
    if matches!(status, JfguiStatus::Reentrant | JfguiStatus::InvalidArgument) {
        return status;
    }
    ffi::guard(|| {
        // SAFETY: `h` came from `Box::into_raw` in `jfgui_host_new`; no callback is running
        // (checked above) and the caller gives it up now.
        drop(unsafe { Box::from_raw(h) });
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_default_budget_is_the_run_loops() {
        // A literal above because cbindgen cannot evaluate paths into other crates.
        assert_eq!(super::JFGUI_HOST_DEFAULT_BUDGET, jfgui_host_sdk::connector::DEFAULT_BUDGET);
    }
}
