//! Calls that wait for the user through the ABI: the `confirm` callback gets the call and who
//! asks, answers now or returns `JFGUI_ANSWER_LATER` and answers with `jfgui_host_answer`;
//! without the callback, with a value it does not know, or when it panics, nothing runs; a
//! withdrawn prompt reaches `withdraw_confirmation`.

use core::ffi::c_void;
use std::cell::{Cell, RefCell};
use std::string::String;
use std::vec::Vec;

use jfgui_proto::channel::{Agent, Call, CallResult, Consent, ExecuteCall, TaskState};
use jfgui_proto::{Map, Value};

use super::{App, close, declare, dispatch, new_handle, table};
use crate::*;

const ACTIONS: &str = r#"[
  {"name": "t.ok", "description": "Add one.", "kind": "write"},
  {"name": "t.reset", "description": "Set the value to 0.", "kind": "write",
   "title": "Reset the test", "confirm": true}
]"#;

thread_local! {
    /// What `confirm` returns, and what it saw (its strings copied: they live for the call).
    static ANSWER: Cell<i32> = const { Cell::new(0) };
    static PANIC: Cell<bool> = const { Cell::new(false) };
    static ASKED: RefCell<Vec<Asked>> = const { RefCell::new(Vec::new()) };
    static WITHDRAWN: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
}

#[derive(Debug, Clone)]
struct Asked {
    ticket: String,
    action: String,
    title: String,
    summary: String,
    agent_name: String,
    agent_label: String,
    may_always: bool,
    json: Value,
}

fn text(s: JfguiStr) -> String {
    // SAFETY: the library's strings, valid during the callback.
    String::from_utf8(unsafe { std::slice::from_raw_parts(s.ptr, s.len) }.to_vec()).unwrap()
}

unsafe extern "C-unwind" fn confirm(_: *mut c_void, c: *const JfguiConfirmation) -> i32 {
    assert!(!PANIC.get(), "a test confirm callback panics");
    // SAFETY: the library's confirmation, valid during the call.
    let c = unsafe { &*c };
    let json = jfgui_proto::parse(text(c.json).as_bytes(), &jfgui_proto::Limits::DEFAULT).unwrap();
    ASKED.with_borrow_mut(|a| {
        a.push(Asked {
            ticket: text(c.ticket),
            action: text(c.action),
            title: text(c.title),
            summary: text(c.summary),
            agent_name: text(c.agent_name),
            agent_label: text(c.agent_label),
            may_always: c.may_always,
            json,
        })
    });
    ANSWER.get()
}

unsafe extern "C-unwind" fn withdraw(_: *mut c_void, ticket: *const u8, len: usize) {
    // SAFETY: the library's ticket, valid during the call.
    let ticket = unsafe { std::slice::from_raw_parts(ticket, len) };
    WITHDRAWN.with_borrow_mut(|w| w.push(String::from_utf8(ticket.to_vec()).unwrap()));
}

/// A handle of `app` with the consent callbacks (or without), enabled, actions declared.
fn asking(app: &App, with_callbacks: bool) -> *mut JfguiHost {
    ASKED.with_borrow_mut(Vec::clear);
    WITHDRAWN.with_borrow_mut(Vec::clear);
    PANIC.set(false);
    let table = if with_callbacks {
        JfguiCallbacks { confirm: Some(confirm), withdraw_confirmation: Some(withdraw), ..table() }
    } else {
        table()
    };
    let (status, h) = new_handle(&table, app);
    assert_eq!(status, JfguiStatus::Ok);
    assert_eq!(declare(h, ACTIONS), JfguiStatus::Ok);
    // SAFETY: a live handle, outside any callback.
    assert_eq!(unsafe { jfgui_host_set_enabled(h, true) }, JfguiStatus::Ok);
    h
}

fn reset(consent: Option<Consent>) -> Call {
    Call::Execute(ExecuteCall {
        action: "t.reset".into(),
        input: Value::Object(Map::new()).into(),
        expected_revision: Some(0),
        consent: consent.map(Box::new),
    })
}

fn ticket_of(r: Result<CallResult, jfgui_proto::ActionError>) -> String {
    match r {
        Ok(CallResult::Deferred { task, .. }) => task.id,
        other => panic!("a waiting task, not {other:?}"),
    }
}

fn state(h: *mut JfguiHost, ticket: &str) -> JfguiTaskState {
    let mut out = JfguiTaskState::Unknown;
    // SAFETY: a live handle; readable id; writable out.
    assert_eq!(
        unsafe { jfgui_host_task_state(h, ticket.as_ptr(), ticket.len(), &mut out) },
        JfguiStatus::Ok
    );
    out
}

fn answer(h: *mut JfguiHost, ticket: &str, answer: i32) -> JfguiStatus {
    // SAFETY: a live handle; readable ticket; outside any callback.
    unsafe { jfgui_host_answer(h, ticket.as_ptr(), ticket.len(), answer) }
}

fn deliver(h: *mut JfguiHost) -> Vec<jfgui_host_sdk::TaskSnapshot> {
    // SAFETY: a live handle; no callback is running.
    unsafe { &*h }.state.borrow_mut().deliver()
}

#[test]
fn the_confirm_callback_gets_the_call_and_who_asks_and_an_answer_later_decides() {
    let app = App::default();
    let h = asking(&app, true);
    ANSWER.set(JFGUI_ANSWER_LATER);
    let agent = Agent {
        exe: "/usr/bin/claude".into(),
        pid: Some(5),
        says: Some("claude-code 1.2".into()),
        transport: "endpoint".into(),
    };
    let consent = Consent { agent, granted: None, may_grant: true };
    let ticket = ticket_of(dispatch(h, &reset(Some(consent))));
    let asked = ASKED.with_borrow(|a| a[0].clone());
    assert_eq!(
        (
            asked.ticket.as_str(),
            asked.action.as_str(),
            asked.title.as_str(),
            asked.summary.as_str()
        ),
        (ticket.as_str(), "t.reset", "Reset the test", "Reset the test")
    );
    assert_eq!(asked.agent_name, "claude");
    assert_eq!(asked.agent_label, "/usr/bin/claude (says it is \"claude-code 1.2\")");
    assert!(asked.may_always);
    let call = &asked.json.get("calls").and_then(Value::as_array).unwrap()[0];
    assert_eq!(call.get("description").and_then(Value::as_str), Some("Set the value to 0."));
    assert_eq!(asked.json.get("agent").and_then(|a| a.get("pid")).and_then(Value::as_u64), Some(5));
    assert_eq!(state(h, &ticket), JfguiTaskState::Running);

    assert_eq!(answer(h, &ticket, JFGUI_ANSWER_LATER), JfguiStatus::InvalidArgument);
    assert_eq!(answer(h, &ticket, 77), JfguiStatus::InvalidArgument);
    assert_eq!(answer(h, &ticket, JFGUI_ANSWER_DENY), JfguiStatus::Ok);
    assert_eq!(state(h, &ticket), JfguiTaskState::Failed);
    assert_eq!(answer(h, &ticket, JFGUI_ANSWER_ALLOW), JfguiStatus::Task, "stray");
    assert_eq!(answer(h, "confirm-99", JFGUI_ANSWER_ALLOW), JfguiStatus::Task);
    assert_eq!(app.revision.get(), 0, "nothing ran");
    close(h);
}

#[test]
fn an_allowed_call_runs_once_its_update_is_out() {
    let app = App::default();
    let h = asking(&app, true);
    ANSWER.set(JFGUI_ANSWER_ALLOW);
    let ticket = ticket_of(dispatch(h, &reset(None)));
    assert_eq!(ASKED.with_borrow(|a| a[0].agent_name.clone()), "An unknown agent");
    assert_eq!(app.revision.get(), 0, "not before its update is written");
    let events = deliver(h);
    let states: Vec<TaskState> = events.iter().map(|t| t.state).collect();
    assert_eq!(states, [TaskState::Running, TaskState::Completed]);
    assert_eq!(app.revision.get(), 1);
    assert_eq!(state(h, &ticket), JfguiTaskState::Completed);
    close(h);
}

#[test]
fn without_a_way_to_ask_nothing_runs() {
    let app = App::default();
    let h = asking(&app, false);
    let ticket = ticket_of(dispatch(h, &reset(None)));
    assert_eq!(state(h, &ticket), JfguiTaskState::Failed, "no confirm callback: no_ui");
    close(h);
    for (value, panics) in [(42, false), (JFGUI_ANSWER_ALLOW, true)] {
        let h = asking(&app, true);
        ANSWER.set(value);
        PANIC.set(panics);
        let ticket = ticket_of(dispatch(h, &reset(None)));
        let events = deliver(h);
        let reason = events[0].error.as_ref().map(|e| e.reason.as_str());
        assert_eq!((events.len(), reason), (1, Some("no_confirmation_ui")), "{value} {panics}");
        assert_eq!(state(h, &ticket), JfguiTaskState::Failed);
        close(h);
    }
    assert_eq!(app.revision.get(), 0);
}

#[test]
fn a_cancelled_call_withdraws_its_prompt() {
    let app = App::default();
    let h = asking(&app, true);
    ANSWER.set(JFGUI_ANSWER_LATER);
    let ticket = ticket_of(dispatch(h, &reset(None)));
    let cancelled = dispatch(h, &Call::CancelTask { id: ticket.clone() });
    assert!(matches!(cancelled, Ok(CallResult::Task(t)) if t.state == TaskState::Cancelled));
    deliver(h);
    assert_eq!(WITHDRAWN.with_borrow(Clone::clone), std::slice::from_ref(&ticket));
    assert_eq!(answer(h, &ticket, JFGUI_ANSWER_ALLOW), JfguiStatus::Task);
    assert_eq!(app.revision.get(), 0);
    close(h);
}
