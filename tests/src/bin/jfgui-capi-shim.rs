//! `jfgui-capi-shim`: a test app that reaches the daemon only through libjfgui_host's C ABI
//! (the `jfgui_*` functions, exactly as a C app calls them), with its callbacks written in
//! Rust so that one of them can do what C cannot: panic and unwind into the library.
//!
//! ```text
//! jfgui-capi-shim [--agent-enable]
//! ```
//!
//! Actions (display name `CAPI Shim`, slug `capi-shim`): `shim.get` (read: `{calls, bumps}`),
//! `shim.bump` (write: the revision moves), `shim.fail` (write: the callback reports
//! `failed/host_error{code: "shim_failure"}`, nothing changes), `shim.panic` (write: the
//! callback panics before changing anything), `shim.silent` (read: the callback writes no
//! result), `shim.big {bytes}` (read: `{data: "x" × bytes}`). Standard input takes
//! commands, one per line: `enable`, `disable`, `quit`. Exit 0 after `quit` or stdin EOF.
#![allow(unsafe_code)] // the point of this program is to call the C ABI

use std::ffi::c_void;
use std::process::ExitCode;

use jfgui_host::{
    JFGUI_HOST_ABI_VERSION, JfguiCallInfo, JfguiCallbacks, JfguiHost, JfguiReply, JfguiStatus,
    JfguiWait, jfgui_host_close, jfgui_host_connect, jfgui_host_declare_actions,
    jfgui_host_last_error, jfgui_host_new, jfgui_host_pump, jfgui_host_set_enabled,
    jfgui_reply_error, jfgui_reply_json,
};

const ACTIONS: &str = r#"[
  {"name": "shim.get", "description": "Read the call counts.", "kind": "read"},
  {"name": "shim.bump", "description": "Move the revision.", "kind": "write"},
  {"name": "shim.fail", "description": "Report a failure.", "kind": "write"},
  {"name": "shim.panic", "description": "Panic inside the callback.", "kind": "write"},
  {"name": "shim.silent", "description": "Return without a result.", "kind": "read"},
  {"name": "shim.big", "description": "Answer with bytes x's.", "kind": "read",
   "inputSchema": {"type": "object", "properties": {"bytes": {"type": "integer", "minimum": 0, "maximum": 8388608}},
                   "required": ["bytes"], "additionalProperties": false}}
]"#;

/// The app's state, behind the callbacks' `user_data`.
#[derive(Debug, Default)]
struct Shim {
    calls: u64,
    bumps: u64,
}

/// Borrows the callback arguments the library passes (valid during the callback).
///
/// # Safety
///
/// `ptr`/`len` must be what the library passed to the running callback.
unsafe fn arg<'a>(ptr: *const u8, len: usize) -> &'a str {
    // SAFETY: the library passes valid UTF-8 of `len` bytes, alive during the callback.
    unsafe { std::str::from_utf8_unchecked(std::slice::from_raw_parts(ptr, len)) }
}

fn json(reply: *mut JfguiReply, text: &str) {
    // SAFETY: `reply` is the running callback's reply; `text` is readable.
    let status = unsafe { jfgui_reply_json(reply, text.as_ptr(), text.len()) };
    assert_eq!(status, JfguiStatus::Ok, "jfgui_reply_json");
}

unsafe extern "C-unwind" fn execute(
    user_data: *mut c_void,
    action: *const u8,
    action_len: usize,
    input: *const u8,
    input_len: usize,
    _info: *const JfguiCallInfo,
    reply: *mut JfguiReply,
) {
    // SAFETY: `user_data` is the `Shim` given to `jfgui_host_new`, used by one thread.
    let shim = unsafe { &mut *user_data.cast::<Shim>() };
    // SAFETY: the library's arguments for this callback.
    let (action, input) = unsafe { (arg(action, action_len), arg(input, input_len)) };
    shim.calls += 1;
    match action {
        "shim.bump" => {
            shim.bumps += 1;
            json(reply, &format!(r#"{{"bumps":{}}}"#, shim.bumps));
        }
        "shim.fail" => {
            let (code, message) = ("shim_failure", "the shim reports a failure on purpose");
            // SAFETY: the running callback's reply; readable strings.
            let status = unsafe {
                jfgui_reply_error(reply, code.as_ptr(), code.len(), message.as_ptr(), message.len())
            };
            assert_eq!(status, JfguiStatus::Ok, "jfgui_reply_error");
        }
        "shim.panic" => panic!("the shim panics inside its execute callback on purpose"),
        "shim.silent" => {}
        "shim.big" => {
            let bytes: usize = input
                .trim_start_matches("{\"bytes\":")
                .trim_end_matches('}')
                .parse()
                .expect("{\"bytes\":N} (the schema was checked)");
            json(reply, &format!(r#"{{"data":"{}"}}"#, "x".repeat(bytes)));
        }
        _ => json(reply, &format!(r#"{{"calls":{},"bumps":{}}}"#, shim.calls, shim.bumps)),
    }
}

unsafe extern "C-unwind" fn revision(user_data: *mut c_void) -> u64 {
    // SAFETY: as in `execute`.
    1 + unsafe { &*user_data.cast::<Shim>() }.bumps
}

fn last_error(h: *mut JfguiHost) -> String {
    let mut buf = [0u8; 1024];
    let mut len = 0usize;
    // SAFETY: a live handle; `buf` and `len` are writable.
    unsafe { jfgui_host_last_error(h, buf.as_mut_ptr(), buf.len(), &mut len) };
    String::from_utf8_lossy(&buf[..len.min(buf.len())]).into_owned()
}

fn check(h: *mut JfguiHost, status: JfguiStatus, what: &str) -> Result<(), String> {
    match status {
        JfguiStatus::Ok => Ok(()),
        other => Err(format!("{what}: {other:?}: {}", last_error(h))),
    }
}

/// Polls the connection and stdin; returns stdin's readiness.
fn wait(w: &JfguiWait) -> bool {
    let mut fds = [
        libc::pollfd {
            fd: w.fd,
            events: if w.read { libc::POLLIN } else { 0 } | if w.write { libc::POLLOUT } else { 0 },
            revents: 0,
        },
        libc::pollfd { fd: 0, events: libc::POLLIN, revents: 0 },
    ];
    let timeout = i32::try_from(w.timeout_ms).unwrap_or(i32::MAX);
    // SAFETY: two valid pollfds, count 2.
    let n = unsafe { libc::poll(fds.as_mut_ptr(), 2, timeout) };
    n > 0 && fds[1].revents != 0
}

fn run(h: *mut JfguiHost, enable: bool) -> Result<(), String> {
    // SAFETY (every call below): `h` is the live handle from `main`; strings are readable.
    check(h, unsafe { jfgui_host_declare_actions(h, ACTIONS.as_ptr(), ACTIONS.len()) }, "declare")?;
    check(h, unsafe { jfgui_host_set_enabled(h, enable) }, "set_enabled")?;
    check(h, unsafe { jfgui_host_connect(h) }, "connect")?;
    let mut line = Vec::new();
    loop {
        let mut w = JfguiWait { fd: -1, read: false, write: false, timeout_ms: 0 };
        check(h, unsafe { jfgui_host_pump(h, 64, &mut w) }, "pump")?;
        if !wait(&w) {
            continue;
        }
        // Unbuffered: std's `Stdin` would keep bytes that `poll` no longer sees.
        let mut chunk = [0u8; 256];
        // SAFETY: fd 0 is our stdin; `chunk` is writable for its length.
        let n = unsafe { libc::read(0, chunk.as_mut_ptr().cast(), chunk.len()) };
        if n <= 0 {
            return Ok(());
        }
        line.extend_from_slice(&chunk[..n as usize]);
        while let Some(end) = line.iter().position(|b| *b == b'\n') {
            let command: Vec<u8> = line.drain(..=end).take(end).collect();
            match command.as_slice() {
                b"enable" => check(h, unsafe { jfgui_host_set_enabled(h, true) }, "enable")?,
                b"disable" => check(h, unsafe { jfgui_host_set_enabled(h, false) }, "disable")?,
                b"quit" => return Ok(()),
                other => eprintln!(
                    "jfgui-capi-shim: unknown command {:?}",
                    String::from_utf8_lossy(other)
                ),
            }
        }
    }
}

fn main() -> ExitCode {
    let enable = std::env::args().skip(1).any(|a| a == "--agent-enable");
    let mut shim = Shim::default();
    let callbacks = JfguiCallbacks {
        execute: Some(execute),
        revision: Some(revision),
        capabilities: None,
        availability: None,
        inspect: None,
        supports_transaction: None,
        begin_transaction: None,
        commit_transaction: None,
        rollback_transaction: None,
        list_resources: None,
        read_resource: None,
        cancel_task: None,
        tick: None,
        confirm: None,
        withdraw_confirmation: None,
    };
    let name = "CAPI Shim";
    let mut h: *mut JfguiHost = std::ptr::null_mut();
    // SAFETY: readable name and table; `shim` outlives the handle (closed below); `h` writable.
    let status = unsafe {
        jfgui_host_new(
            JFGUI_HOST_ABI_VERSION,
            name.as_ptr(),
            name.len(),
            &callbacks,
            (&raw mut shim).cast(),
            &mut h,
        )
    };
    if status != JfguiStatus::Ok {
        eprintln!("jfgui-capi-shim: jfgui_host_new: {status:?}");
        return ExitCode::FAILURE;
    }
    let result = run(h, enable);
    // SAFETY: the live handle, closed once, outside any callback.
    unsafe { jfgui_host_close(h) };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("jfgui-capi-shim: {e}");
            ExitCode::FAILURE
        }
    }
}
