//! The ABI in-process: argument and state checks of the exported functions, and every kind of
//! callback behaviour (results, errors, panics, nothing, two replies, reentrant calls) turned
//! into the dispatcher's results, without a daemon. Cross-process tests are in the `capi`
//! suite of `tests/`.

use core::ffi::c_void;
use std::cell::Cell;
use std::string::String;
use std::vec::Vec;

use jfgui_proto::channel::{BatchCall, Call, CallResult, ExecuteCall};
use jfgui_proto::{ActionError, Map, Value};

use crate::*;

/// The test app behind `user_data`.
#[derive(Debug, Default)]
struct App {
    handle: Cell<*mut JfguiHost>,
    value: Cell<i64>,
    revision: Cell<u64>,
    saved: Cell<(i64, u64)>,
    panic_in_revision: Cell<bool>,
    statuses: std::cell::RefCell<Vec<JfguiStatus>>,
}

const ACTIONS: &str = r#"[
  {"name": "t.ok", "description": "Add one.", "kind": "write", "transaction": "t"},
  {"name": "t.err", "description": "Fail.", "kind": "write", "transaction": "t"},
  {"name": "t.panic", "description": "Panic.", "kind": "write"},
  {"name": "t.none", "description": "No result.", "kind": "read"},
  {"name": "t.badjson", "description": "A refused reply.", "kind": "read"},
  {"name": "t.twice", "description": "Two replies.", "kind": "read"},
  {"name": "t.defer", "description": "A task.", "kind": "write"},
  {"name": "t.reenter", "description": "Calls back in.", "kind": "read"}
]"#;

fn app(user_data: *mut c_void) -> &'static App {
    // SAFETY: every test passes a live `App` that outlives its handle.
    unsafe { &*user_data.cast::<App>() }
}

fn reply_json(reply: *mut JfguiReply, text: &str) -> JfguiStatus {
    // SAFETY: the running callback's reply; readable text.
    unsafe { jfgui_reply_json(reply, text.as_ptr(), text.len()) }
}

unsafe extern "C-unwind" fn execute(
    user_data: *mut c_void,
    action: *const u8,
    action_len: usize,
    _input: *const u8,
    _input_len: usize,
    _info: *const JfguiCallInfo,
    reply: *mut JfguiReply,
) {
    let app = app(user_data);
    // SAFETY: the library's UTF-8 action name, valid during the call.
    let action = unsafe { std::str::from_utf8(std::slice::from_raw_parts(action, action_len)) };
    let h = app.handle.get();
    let note = |s| app.statuses.borrow_mut().push(s);
    match action.unwrap() {
        "t.ok" => {
            app.value.set(app.value.get() + 1);
            app.revision.set(app.revision.get() + 1);
            note(reply_json(reply, &format!(r#"{{"value":{}}}"#, app.value.get())));
        }
        "t.err" => {
            let (code, message) = ("nope", "the app says no");
            // SAFETY: the running callback's reply; readable strings.
            note(unsafe {
                jfgui_reply_error(reply, code.as_ptr(), code.len(), message.as_ptr(), message.len())
            });
        }
        "t.reset" => {
            app.value.set(0);
            app.revision.set(app.revision.get() + 1);
            note(reply_json(reply, r#"{"value":0}"#));
        }
        "t.panic" => panic!("a test callback panics"),
        "t.none" => {}
        "t.badjson" => note(reply_json(reply, r#"{"a":1,"a":2}"#)),
        "t.twice" => {
            note(reply_json(reply, r#"{"n":1}"#));
            note(reply_json(reply, r#"{"n":2}"#));
        }
        "t.defer" => {
            let id = "job-1";
            // SAFETY: the running callback's reply; readable id.
            note(unsafe { jfgui_reply_deferred(reply, id.as_ptr(), id.len()) });
        }
        _ => {
            // The handle's functions from inside its own callback: refused, except tasks.
            // SAFETY (all three): the live handle of this test.
            note(unsafe { jfgui_host_set_enabled(h, false) });
            note(unsafe { jfgui_host_close(h) });
            let (id, done) = ("job-1", 3);
            note(unsafe {
                jfgui_host_task_progress(
                    h,
                    id.as_ptr(),
                    id.len(),
                    done,
                    std::ptr::null(),
                    std::ptr::null(),
                    0,
                )
            });
            note(reply_json(reply, "{}"));
        }
    }
}

unsafe extern "C-unwind" fn revision(user_data: *mut c_void) -> u64 {
    let app = app(user_data);
    assert!(!app.panic_in_revision.get(), "a test revision callback panics");
    app.revision.get()
}

unsafe extern "C-unwind" fn supports(_: *mut c_void, domain: *const u8, len: usize) -> bool {
    // SAFETY: the library's domain string, valid during the call.
    unsafe { std::slice::from_raw_parts(domain, len) == b"t" }
}

unsafe extern "C-unwind" fn begin(
    user_data: *mut c_void,
    _: *const JfguiStr,
    _: usize,
    _: *mut JfguiReply,
) {
    let app = app(user_data);
    app.saved.set((app.value.get(), app.revision.get()));
}

unsafe extern "C-unwind" fn commit(_: *mut c_void) {}

unsafe extern "C-unwind" fn rollback(user_data: *mut c_void) {
    let app = app(user_data);
    let (value, revision) = app.saved.get();
    app.value.set(value);
    app.revision.set(revision);
}

unsafe extern "C-unwind" fn availability_with_wrong_reply(
    _: *mut c_void,
    _: *const u8,
    _: usize,
    reply: *mut JfguiReply,
) {
    // A JSON result does not fit an availability callback: refused, so "available".
    assert_eq!(reply_json(reply, "{}"), JfguiStatus::InvalidArgument);
}

fn table() -> JfguiCallbacks {
    JfguiCallbacks {
        execute: Some(execute),
        revision: Some(revision),
        capabilities: None,
        availability: Some(availability_with_wrong_reply),
        inspect: None,
        supports_transaction: Some(supports),
        begin_transaction: Some(begin),
        commit_transaction: Some(commit),
        rollback_transaction: Some(rollback),
        list_resources: None,
        read_resource: None,
        cancel_task: None,
        tick: None,
        confirm: None,
        withdraw_confirmation: None,
    }
}

fn new_handle(table: &JfguiCallbacks, app: &App) -> (JfguiStatus, *mut JfguiHost) {
    let name = "Test App";
    let mut h = std::ptr::null_mut();
    let user_data = std::ptr::from_ref(app).cast_mut().cast();
    // SAFETY: readable name and table; the app outlives the handle; `h` is writable.
    let status = unsafe {
        jfgui_host_new(JFGUI_HOST_ABI_VERSION, name.as_ptr(), name.len(), table, user_data, &mut h)
    };
    app.handle.set(h);
    (status, h)
}

fn declare(h: *mut JfguiHost, json: &str) -> JfguiStatus {
    // SAFETY: a live handle; readable JSON.
    unsafe { jfgui_host_declare_actions(h, json.as_ptr(), json.len()) }
}

fn last_error(h: *mut JfguiHost) -> String {
    let mut buf = [0u8; 512];
    let mut len = 0;
    // SAFETY: a live handle; writable buffer and length.
    assert_eq!(
        unsafe { jfgui_host_last_error(h, buf.as_mut_ptr(), buf.len(), &mut len) },
        JfguiStatus::Ok
    );
    String::from_utf8(buf[..len.min(buf.len())].to_vec()).unwrap()
}

fn close(h: *mut JfguiHost) {
    // SAFETY: a live handle, outside any callback.
    assert_eq!(unsafe { jfgui_host_close(h) }, JfguiStatus::Ok);
}

/// Runs one daemon call through the handle's dispatcher, as a request would.
fn dispatch(h: *mut JfguiHost, call: &Call) -> Result<CallResult, ActionError> {
    // SAFETY: a live handle; no callback is running.
    let handle = unsafe { &*h };
    handle.state.borrow_mut().dispatch(call)
}

fn execute_call(action: &str, expected: Option<u64>) -> Call {
    Call::Execute(ExecuteCall {
        action: action.into(),
        input: Value::Object(Map::new()).into(),
        expected_revision: expected,
        consent: None,
    })
}

#[test]
fn new_checks_its_arguments() {
    let app = App::default();
    let name = "x";
    let mut h = std::ptr::null_mut();
    let user = std::ptr::null_mut();
    // SAFETY (every call): readable arguments of the lengths given, or NULL where tested.
    unsafe {
        assert_eq!(
            jfgui_host_new(JFGUI_HOST_ABI_VERSION + 1, name.as_ptr(), 1, &table(), user, &mut h),
            JfguiStatus::InvalidArgument
        );
        assert_eq!(
            jfgui_host_new(
                JFGUI_HOST_ABI_VERSION,
                name.as_ptr(),
                1,
                std::ptr::null(),
                user,
                &mut h
            ),
            JfguiStatus::InvalidArgument
        );
        assert_eq!(
            jfgui_host_new(
                JFGUI_HOST_ABI_VERSION,
                name.as_ptr(),
                1,
                &table(),
                user,
                std::ptr::null_mut()
            ),
            JfguiStatus::InvalidArgument
        );
        // A table of the version without `confirm` is shorter: refused, not misread.
        assert_eq!(
            jfgui_host_new(1, name.as_ptr(), 1, &table(), user, &mut h),
            JfguiStatus::InvalidArgument
        );
        let bad = [0xffu8];
        assert_eq!(
            jfgui_host_new(JFGUI_HOST_ABI_VERSION, bad.as_ptr(), 1, &table(), user, &mut h),
            JfguiStatus::InvalidArgument
        );
        assert!(h.is_null(), "no handle on failure");
        assert_eq!(jfgui_host_close(std::ptr::null_mut()), JfguiStatus::Ok);
    }
    let no_execute = JfguiCallbacks { execute: None, ..table() };
    assert_eq!(new_handle(&no_execute, &app).0, JfguiStatus::InvalidArgument);
    let half_transactions = JfguiCallbacks { rollback_transaction: None, ..table() };
    assert_eq!(new_handle(&half_transactions, &app).0, JfguiStatus::InvalidArgument);
    let (status, h) = new_handle(&table(), &app);
    assert_eq!(status, JfguiStatus::Ok);
    close(h);
}

#[test]
fn the_lifecycle_is_enforced_with_a_message() {
    let app = App::default();
    let (_, h) = new_handle(&table(), &app);
    let mut wait = JfguiWait { fd: 0, read: false, write: false, timeout_ms: 0 };
    // SAFETY: a live handle; a writable wait.
    assert_eq!(unsafe { jfgui_host_pump(h, 1, &mut wait) }, JfguiStatus::WrongState);
    assert!(last_error(h).contains("no actions are declared yet"), "{}", last_error(h));
    assert_eq!(declare(h, "[{"), JfguiStatus::InvalidJson);
    assert_eq!(
        declare(
            h,
            r#"[{"name":"a","description":"","kind":"read"},{"name":"a","description":"","kind":"write"}]"#
        ),
        JfguiStatus::InvalidRegistration
    );
    assert_eq!(last_error(h), r#"duplicate action name "a""#);
    assert_eq!(declare(h, ACTIONS), JfguiStatus::Ok, "{}", last_error(h));
    assert_eq!(declare(h, ACTIONS), JfguiStatus::WrongState);
    // SAFETY: a live handle; a writable wait and info.
    unsafe {
        assert_eq!(jfgui_host_pump(h, 1, &mut wait), JfguiStatus::WrongState);
        assert!(last_error(h).contains("not connected"));
        assert_eq!(jfgui_host_set_enabled(h, true), JfguiStatus::Ok);
        let mut info = JfguiInfo { connected: true, registered: true, enabled: false };
        assert_eq!(jfgui_host_info(h, &mut info), JfguiStatus::Ok);
        assert_eq!(info, JfguiInfo { connected: false, registered: false, enabled: true });
    }
    // A short buffer gets a prefix cut at a character boundary and the full length.
    let mut buf = [0u8; 4];
    let mut len = 0;
    // SAFETY: a live handle; writable buffer and length.
    unsafe { jfgui_host_last_error(h, buf.as_mut_ptr(), buf.len(), &mut len) };
    assert_eq!((&buf[..], len), (&b"cann"[..], last_error(h).len()));
    close(h);
}

#[test]
fn callbacks_become_the_dispatchers_results() {
    let app = App { revision: Cell::new(1), ..App::default() };
    let (_, h) = new_handle(&table(), &app);
    assert_eq!(declare(h, ACTIONS), JfguiStatus::Ok);
    // SAFETY: a live handle outside callbacks.
    assert_eq!(unsafe { jfgui_host_set_enabled(h, true) }, JfguiStatus::Ok);

    let ok = dispatch(h, &execute_call("t.ok", Some(1))).unwrap();
    assert!(matches!(ok, CallResult::Executed { revision: 2, .. }), "{ok:?}");
    // Checked before the callback: a stale write never reaches it.
    let stale = dispatch(h, &execute_call("t.ok", Some(1))).unwrap_err();
    assert_eq!(stale.reason.as_str(), "stale_revision");
    assert_eq!(app.value.get(), 1);

    let err = dispatch(h, &execute_call("t.err", Some(2))).unwrap_err();
    assert_eq!((err.reason.as_str(), err.message.as_str()), ("host_error", "the app says no"));
    let panicked = dispatch(h, &execute_call("t.panic", Some(2))).unwrap_err();
    assert_eq!(panicked.reason.as_str(), "invalid_reply");
    assert!(panicked.message.contains("execute callback panicked"), "{panicked:?}");
    let none = dispatch(h, &execute_call("t.none", None)).unwrap_err();
    assert!(none.message.contains("returned without a result"), "{none:?}");
    let refused = dispatch(h, &execute_call("t.badjson", None)).unwrap_err();
    assert!(refused.message.contains("duplicate"), "the refused reply is named: {refused:?}");
    let first = dispatch(h, &execute_call("t.twice", None)).unwrap();
    assert!(
        matches!(first, CallResult::Executed { ref output, .. } if output.get("n").and_then(Value::as_u64) == Some(1))
    );

    let deferred = dispatch(h, &execute_call("t.defer", Some(2))).unwrap();
    assert!(
        matches!(deferred, CallResult::Deferred { ref task, .. } if task.id == "job-1"),
        "{deferred:?}"
    );
    let again = dispatch(h, &execute_call("t.defer", Some(2))).unwrap_err();
    assert_eq!(
        again.reason.as_str(),
        "host_error",
        "a duplicate task id fails the call: {again:?}"
    );
    dispatch(h, &execute_call("t.reenter", None)).unwrap();
    assert_eq!(
        app.statuses.borrow().as_slice(),
        [
            JfguiStatus::Ok,          // t.ok
            JfguiStatus::Ok,          // t.err
            JfguiStatus::InvalidJson, // t.badjson
            JfguiStatus::Ok,          // t.twice, first
            JfguiStatus::WrongState,  // t.twice, second
            JfguiStatus::Ok,          // t.defer
            JfguiStatus::Ok,          // t.defer again (the reply is fine; the start is not)
            JfguiStatus::Reentrant,   // t.reenter: set_enabled
            JfguiStatus::Reentrant,   // close: refused, nothing freed
            JfguiStatus::Ok,          // task progress: the table is lent to execute
            JfguiStatus::Ok,          // its reply
        ]
    );
    // The handle is healthy after all of it (a callback's panic does not poison it).
    let ok = dispatch(h, &execute_call("t.ok", Some(2))).unwrap();
    assert!(matches!(ok, CallResult::Executed { revision: 3, .. }), "{ok:?}");
    let id = "job-1";
    let mut state = JfguiTaskState::Unknown;
    // SAFETY: a live handle outside callbacks; readable id; writable state.
    unsafe {
        assert_eq!(jfgui_host_task_state(h, id.as_ptr(), id.len(), &mut state), JfguiStatus::Ok);
        assert_eq!(state, JfguiTaskState::Running);
        assert_eq!(jfgui_host_task_cancelled(h, id.as_ptr(), id.len()), JfguiStatus::Ok);
        assert_eq!(jfgui_host_task_cancelled(h, id.as_ptr(), id.len()), JfguiStatus::Task);
    }
    assert!(last_error(h).contains("already finished"));
    close(h);
}

#[test]
fn atomic_batches_run_the_transaction_callbacks() {
    let app = App { revision: Cell::new(1), ..App::default() };
    let (_, h) = new_handle(&table(), &app);
    assert_eq!(declare(h, ACTIONS), JfguiStatus::Ok);
    // SAFETY: a live handle outside callbacks.
    assert_eq!(unsafe { jfgui_host_set_enabled(h, true) }, JfguiStatus::Ok);
    let batch = |actions: &[&str]| {
        let calls = actions
            .iter()
            .map(|a| ExecuteCall {
                action: (*a).into(),
                input: Value::Object(Map::new()).into(),
                expected_revision: Some(1),
                consent: None,
            })
            .collect();
        Call::Batch(BatchCall { calls, atomic: true, stop_on_error: true, consent: None })
    };
    let failed = dispatch(h, &batch(&["t.ok", "t.ok", "t.err"])).unwrap_err();
    assert_eq!(failed.reason.as_str(), "rolled_back");
    assert_eq!((app.value.get(), app.revision.get()), (0, 1), "rolled back through the callbacks");
    let done = dispatch(h, &batch(&["t.ok", "t.ok"])).unwrap();
    assert!(matches!(done, CallResult::Batch { revision: 3, .. }), "{done:?}");
    // A panicking call in an atomic batch is refused in preflight (it has no domain).
    let refused = dispatch(h, &batch(&["t.ok", "t.panic"])).unwrap_err();
    assert_eq!(refused.reason.as_str(), "batch_preflight");
    close(h);
}

#[test]
fn an_unreadable_revision_lets_no_write_through() {
    let app = App { revision: Cell::new(1), ..App::default() };
    let (_, h) = new_handle(&table(), &app);
    assert_eq!(declare(h, ACTIONS), JfguiStatus::Ok);
    // SAFETY: a live handle outside callbacks.
    assert_eq!(unsafe { jfgui_host_set_enabled(h, true) }, JfguiStatus::Ok);
    app.panic_in_revision.set(true);
    let stale = dispatch(h, &execute_call("t.ok", Some(1))).unwrap_err();
    assert_eq!(stale.reason.as_str(), "stale_revision");
    assert_eq!(app.value.get(), 0, "the callback never ran");
    app.panic_in_revision.set(false);
    assert!(dispatch(h, &execute_call("t.ok", Some(1))).is_ok());
    close(h);
}

#[test]
fn several_handles_live_side_by_side() {
    let (a, b) = (
        App { revision: Cell::new(1), ..App::default() },
        App { revision: Cell::new(7), ..App::default() },
    );
    let ((_, ha), (_, hb)) = (new_handle(&table(), &a), new_handle(&table(), &b));
    assert_eq!(declare(ha, ACTIONS), JfguiStatus::Ok);
    assert_eq!(declare(hb, ACTIONS), JfguiStatus::Ok);
    // SAFETY: live handles outside callbacks.
    unsafe {
        assert_eq!(jfgui_host_set_enabled(ha, true), JfguiStatus::Ok);
        assert_eq!(jfgui_host_set_enabled(hb, true), JfguiStatus::Ok);
    }
    assert!(dispatch(ha, &execute_call("t.ok", Some(1))).is_ok());
    assert!(dispatch(hb, &execute_call("t.ok", Some(7))).is_ok());
    assert_eq!((a.value.get(), b.value.get()), (1, 1));
    close(ha);
    assert!(dispatch(hb, &execute_call("t.ok", Some(8))).is_ok());
    close(hb);
}

#[test]
fn the_checks_run_on_a_declared_handle_and_the_report_is_copied_out() {
    let app = App::default();
    let (status, h) = new_handle(&table(), &app);
    assert_eq!(status, JfguiStatus::Ok);
    let mut len = 0;
    let mut full = 0;
    // SAFETY (every call): the live handle of this test, writable lengths and buffers.
    unsafe {
        assert_eq!(jfgui_host_check(h, true, &mut len), JfguiStatus::WrongState);
        assert!(last_error(h).contains("no actions are declared yet"), "{}", last_error(h));
        assert_eq!(
            jfgui_host_check_report(h, std::ptr::null_mut(), 0, &mut len),
            JfguiStatus::WrongState
        );
    }
    let one = r#"[{"name": "t.ok", "description": "Add one to the value.", "kind": "write",
        "transaction": "t"}]"#;
    assert_eq!(declare(h, one), JfguiStatus::Ok);
    // SAFETY: as above.
    let report = unsafe {
        assert_eq!(jfgui_host_check(h, true, &mut len), JfguiStatus::Ok);
        let mut short = [0u8; 8];
        assert_eq!(
            jfgui_host_check_report(h, short.as_mut_ptr(), short.len(), &mut full),
            JfguiStatus::Ok
        );
        assert_eq!(full, len, "the full length, to retry with");
        let mut buf = std::vec![0u8; full];
        assert_eq!(
            jfgui_host_check_report(h, buf.as_mut_ptr(), buf.len(), &mut full),
            JfguiStatus::Ok
        );
        jfgui_proto::parse(&buf, &jfgui_proto::Limits::DEFAULT).unwrap()
    };
    assert_eq!(report.get("passed"), Some(&Value::Bool(true)), "{report:?}");
    let findings = report.get("findings").and_then(Value::as_array).unwrap();
    let valid = findings
        .iter()
        .find(|f| f.get("check").and_then(Value::as_str) == Some("valid_write"))
        .unwrap();
    assert_eq!(valid.get("level").and_then(Value::as_str), Some("PASS"), "{valid:?}");
    // Only the valid write applied; the stale, invalid and atomic probes were refused.
    assert_eq!((app.value.get(), app.revision.get()), (1, 1));
    let mut info = JfguiInfo { connected: true, registered: true, enabled: true };
    // SAFETY: as above.
    assert_eq!(unsafe { jfgui_host_info(h, &mut info) }, JfguiStatus::Ok);
    assert!(!info.enabled, "the handle is as disabled as before");
    close(h);
}

mod consent;
