//! "Let agents start `<App>`" for C apps: the launch file written and removed (host-sdk's
//! `launch` helpers), and whether the daemon started this process for an agent. None of these
//! takes a handle: the setting belongs to the app, not to a connection. A failure has no
//! handle to keep its message, so the status says what kind it was.

use jfgui_host_sdk::launch;
use jfgui_proto::Limits;

use crate::ffi::{self, Error, JfguiStatus};

/// Lets agents start this app: writes its launch file, so the daemon starts `exec` (a JSON
/// array of strings: an absolute program path, then its arguments, passed literally) when an
/// agent calls `display_name` while it is not running. Replaces an earlier file of that name.
/// `JFGUI_STATUS_INVALID_ARGUMENT` when `exec` is not such an array or its program is not a
/// private file of the user or root; `JFGUI_STATUS_IO` when the file cannot be written (or
/// its directory is not the user's alone).
///
/// # Safety
///
/// `display_name` and `exec_json` point to `*_len` readable bytes (UTF-8).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn jfgui_let_agents_start(
    display_name: *const u8,
    display_name_len: usize,
    exec_json: *const u8,
    exec_json_len: usize,
) -> JfguiStatus {
    ffi::guard(|| {
        // SAFETY: readable by the contract.
        let name = unsafe { ffi::text(display_name, display_name_len, "display_name") }?;
        // SAFETY: readable by the contract.
        let json = unsafe { ffi::bytes(exec_json, exec_json_len, "exec_json") }?;
        let invalid = |m: &str| Error::new(JfguiStatus::InvalidArgument, m);
        let value = jfgui_proto::parse(json, &Limits::DEFAULT)
            .map_err(|_| invalid("exec_json is not strict JSON"))?;
        let exec = value
            .as_array()
            .and_then(|a| {
                a.iter().map(|v| v.as_str().map(str::to_owned)).collect::<Option<Vec<_>>>()
            })
            .filter(|a| !a.is_empty())
            .ok_or_else(|| invalid("exec_json is not a non-empty array of strings"))?;
        launch::let_agents_start(name, &exec).map(drop).map_err(|e| {
            let status = if e.why.starts_with("exec") {
                JfguiStatus::InvalidArgument
            } else {
                JfguiStatus::Io
            };
            Error::new(status, e.to_string())
        })
    })
}

/// Stops letting agents start this app: removes its launch file; `*removed` says whether there
/// was one.
///
/// # Safety
///
/// `display_name` points to `display_name_len` readable bytes; `removed` is valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn jfgui_stop_letting_agents_start(
    display_name: *const u8,
    display_name_len: usize,
    removed: *mut bool,
) -> JfguiStatus {
    ffi::guard(|| {
        // SAFETY: readable by the contract.
        let name = unsafe { ffi::text(display_name, display_name_len, "display_name") }?;
        let was = launch::stop_letting_agents_start(name)
            .map_err(|e| Error::new(JfguiStatus::Io, e.to_string()))?;
        // SAFETY: writable by the contract.
        unsafe { ffi::put(removed, was, "removed") }
    })
}

/// Whether agents may start this app now (a trusted launch file of `display_name` exists):
/// the state of the app's "Let agents start" setting.
///
/// # Safety
///
/// `display_name` points to `display_name_len` readable bytes; `out` is valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn jfgui_agents_may_start(
    display_name: *const u8,
    display_name_len: usize,
    out: *mut bool,
) -> JfguiStatus {
    ffi::guard(|| {
        // SAFETY: readable by the contract.
        let name = unsafe { ffi::text(display_name, display_name_len, "display_name") }?;
        // SAFETY: writable by the contract.
        unsafe { ffi::put(out, launch::agents_may_start(name), "out") }
    })
}

/// Whether the daemon started this process for an agent (`JFGUI_ACTIVATED=1`): the user's
/// launch file is their yes, so the app turns agent access on and shows that it did.
///
/// # Safety
///
/// `out` is valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn jfgui_started_by_agent(out: *mut bool) -> JfguiStatus {
    // SAFETY: writable by the contract.
    ffi::guard(|| unsafe { ffi::put(out, launch::started_by_agent(), "out") })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_exec_json_is_an_invalid_argument() {
        let name = "X";
        for bad in ["[]", "{}", "[1]", "[\"a\",]"] {
            // SAFETY: valid buffers.
            let status = unsafe {
                jfgui_let_agents_start(name.as_ptr(), name.len(), bad.as_ptr(), bad.len())
            };
            assert_eq!(status, JfguiStatus::InvalidArgument, "{bad}");
        }
        let relative = "[\"bin/app\"]";
        // SAFETY: valid buffers.
        let status = unsafe {
            jfgui_let_agents_start(name.as_ptr(), name.len(), relative.as_ptr(), relative.len())
        };
        assert_eq!(status, JfguiStatus::InvalidArgument);
        let mut out = true;
        // SAFETY: a writable bool.
        assert_eq!(unsafe { jfgui_started_by_agent(&mut out) }, JfguiStatus::Ok);
        assert!(!out, "the test process was not started by the daemon");
    }
}
