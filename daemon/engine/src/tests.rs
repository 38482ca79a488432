//! In-process tests of the engine: JSON-1 over `tokio::io::duplex` against a fake app speaking
//! host-channel messages over another duplex (`tests/harness.rs`); MCP the same way in
//! `tests/mcp_wire.rs`.

mod harness;
mod mcp_wire;

use std::time::Duration;

use jfgui_proto::channel::{
    ActionInfo, AppMessage, BatchEntry, BatchOutcome, Call, CallResult, DaemonMessage, Outcome,
    ResourceChunk, TaskSnapshot, TaskState,
};
use jfgui_proto::{ActionError, ActionKind, Reason, Value};
use tokio::io::AsyncWriteExt;

use super::{EndpointEvent, EndpointNaming, Engine, EngineConfig, PeerInfo};
use harness::*;

fn task(id: &str, state: TaskState) -> TaskSnapshot {
    TaskSnapshot::new(id, state)
}

fn assert_error(response: &Value, code: i64, reason: &str) {
    assert!(has(response, "error"), "expected an error, got {response:?}");
    assert_eq!(n(response, "error.code"), code, "{response:?}");
    assert_eq!(s(response, "error.data.reason"), reason, "{response:?}");
    assert!(!s(response, "error.message").is_empty());
}

// ---------------------------------------------------------------- the ten methods

#[tokio::test]
async fn agent_info_reads_the_revision_from_the_app() {
    let (engine, slug) = engine_with_echo_app(config()).await;
    let mut c = Client::connect(&engine, &slug);
    let r = c.call("agent/info", "{}").await;
    assert_eq!(s(&r, "jsonrpc"), "2.0");
    assert_eq!(n(&r, "id"), 1);
    assert_eq!(s(&r, "result.protocolVersion"), "1");
    assert_eq!(s(&r, "result.daemon.name"), "jfgui-agentd");
    assert_eq!(s(&r, "result.app.displayName"), "Notepad");
    assert_eq!(s(&r, "result.app.slug"), "notepad");
    assert_eq!(n(&r, "result.app.pid"), 4242);
    assert_eq!(n(&r, "result.revision"), 7);
    assert_eq!(n(&r, "result.actionCount"), 3);
    assert_eq!(n(&r, "result.limits.maxMessageBytes"), 1 << 20);
    assert_eq!(n(&r, "result.limits.maxBatchCalls"), 128);
    assert_eq!(n(&r, "result.limits.maxResourceChunk"), 65536);
    // Explicit protocol revision "1" is accepted; params are strict.
    let r = c.call("agent/info", r#"{"protocolVersion":"1"}"#).await;
    assert_eq!(n(&r, "result.revision"), 7);
    assert_error(&c.call("agent/info", r#"{"bogus":1}"#).await, -32602, "unknown_param");
}

#[tokio::test]
async fn actions_list_pages_filters_and_checks_cursors() {
    let engine = Engine::new(config());
    let actions: Vec<_> = (0..120)
        .map(|i| {
            let desc = if i % 10 == 0 { "Touches the DOCUMENT" } else { "Other" };
            action(&format!("a.{i:03}"), ActionKind::Read, desc)
        })
        .collect();
    let app = FakeApp::register(&engine, "Many", true, actions).await;
    let slug = app.slug.clone();
    app.serve(echo);
    let mut c = Client::connect(&engine, &slug);

    let r = c.call("actions/list", "{}").await;
    assert_eq!(s(&r, "result.protocolVersion"), "1");
    let page = at(&r, "result.actions").as_array().unwrap();
    assert_eq!(page.len(), 50);
    assert_eq!(s(&page[0], "name"), "a.000");
    assert_eq!(s(&page[0], "kind"), "read");
    assert_eq!(s(&page[0], "description"), "Touches the DOCUMENT");
    let cursor = s(&r, "result.nextCursor").to_string();
    let r = c.call("actions/list", &format!(r#"{{"cursor":"{cursor}","limit":100}}"#)).await;
    let page = at(&r, "result.actions").as_array().unwrap();
    assert_eq!(page.len(), 70);
    assert_eq!(s(&page[0], "name"), "a.050");
    assert!(!has(&r, "result.nextCursor"));

    // Case-insensitive substring of name or description, in registration order.
    let r = c.call("actions/list", r#"{"query":"document","limit":5}"#).await;
    let page = at(&r, "result.actions").as_array().unwrap();
    let names: Vec<&str> = page.iter().map(|a| s(a, "name")).collect();
    assert_eq!(names, ["a.000", "a.010", "a.020", "a.030", "a.040"]);
    let cursor = s(&r, "result.nextCursor").to_string();
    let r = c.call("actions/list", &format!(r#"{{"query":"document","cursor":"{cursor}"}}"#)).await;
    assert_eq!(at(&r, "result.actions").as_array().unwrap().len(), 7);
    let r = c.call("actions/list", r#"{"query":"A.11"}"#).await;
    assert_eq!(at(&r, "result.actions").as_array().unwrap().len(), 10);

    // A cursor is tied to its query; garbage is refused.
    let r = c.call("actions/list", &format!(r#"{{"cursor":"{cursor}"}}"#)).await;
    assert_error(&r, -32602, "invalid_cursor");
    assert_error(&c.call("actions/list", r#"{"cursor":"nope"}"#).await, -32602, "invalid_cursor");
    // Limits out of range or inexact.
    for bad in ["0", "101", "100.5", "-1", "1e999999999", "\"5\""] {
        let r = c.call("actions/list", &format!(r#"{{"limit":{bad}}}"#)).await;
        assert_eq!(n(&r, "error.code"), -32602, "limit {bad}: {r:?}");
        assert_eq!(s(&r, "error.data.param"), "limit");
    }
    // Integral spellings are exact integers.
    let r = c.call("actions/list", r#"{"limit":1e1}"#).await;
    assert_eq!(at(&r, "result.actions").as_array().unwrap().len(), 10);
    let r = c.call("actions/list", r#"{"limit":2.0}"#).await;
    assert_eq!(at(&r, "result.actions").as_array().unwrap().len(), 2);
}

#[tokio::test]
async fn actions_describe_answers_from_the_cache() {
    let (engine, slug) = engine_with_echo_app(config()).await;
    let mut c = Client::connect(&engine, &slug);
    let r = c.call("actions/describe", r#"{"action":"document.text.insert"}"#).await;
    assert_eq!(s(&r, "result.protocolVersion"), "1");
    assert_eq!(s(&r, "result.action.name"), "document.text.insert");
    assert_eq!(s(&r, "result.action.kind"), "write");
    assert_eq!(s(&r, "result.action.inputSchema.type"), "object");
    assert_eq!(at(&r, "result.action.undo"), &Value::Bool(true));
    assert_eq!(n(&r, "result.action.capabilities"), 0);
    let r = c.call("actions/describe", r#"{"action":"no.such"}"#).await;
    assert_error(&r, 1004, "action");
    assert_eq!(s(&r, "error.data.class"), "not_found");
    assert_eq!(s(&r, "error.data.action"), "no.such");
    assert_error(&c.call("actions/describe", "{}").await, -32602, "missing_param");
    assert_error(&c.call("actions/describe", r#"{"action":5}"#).await, -32602, "invalid_type");
}

#[tokio::test]
async fn actions_execute_forwards_and_converts_revisions_exactly() {
    let engine = Engine::new(config());
    let mut app = FakeApp::register(&engine, "Notepad", true, notepad_actions()).await;
    let mut c = Client::connect(&engine, &app.slug);

    c.send(r#"{"jsonrpc":"2.0","id":"x","method":"actions/execute","params":{"action":"document.text.insert","input":{"text":"hi"},"expectedRevision":1.0}}"#).await;
    let req = app.request().await;
    let Call::Execute(e) = &req.call else { panic!("{req:?}") };
    assert_eq!(e.action, "document.text.insert");
    assert_eq!(e.expected_revision, Some(1));
    assert_eq!(e.input, parse(r#"{"text":"hi"}"#));
    app.reply(
        req.id,
        Outcome::Ok(CallResult::Executed { output: parse(r#"{"ok":true}"#).into(), revision: 2 }),
    )
    .await;
    let r = c.recv().await;
    assert_eq!(s(&r, "id"), "x");
    assert_eq!(s(&r, "result.protocolVersion"), "1");
    assert_eq!(at(&r, "result.output.ok"), &Value::Bool(true));
    assert_eq!(n(&r, "result.revision"), 2);

    // Input defaults to {}; no expectedRevision is passed on as absent.
    c.call_nowait("actions/execute", r#"{"action":"document.get"}"#).await;
    let req = app.request().await;
    let Call::Execute(e) = &req.call else { panic!() };
    assert_eq!(e.input, parse("{}"));
    assert_eq!(e.expected_revision, None);
    app.reply(
        req.id,
        Outcome::Ok(CallResult::Executed { output: parse("{}").into(), revision: 2 }),
    )
    .await;
    assert_eq!(n(&c.recv().await, "result.revision"), 2);

    // Inexact or out-of-range revisions never reach the app .
    for bad in ["12E-1", "-1", "18446744073709551616", "9007199254740992", "1.5", "\"3\""] {
        let r = c
            .call(
                "actions/execute",
                &format!(r#"{{"action":"document.text.insert","expectedRevision":{bad}}}"#),
            )
            .await;
        assert_eq!(n(&r, "error.code"), -32602, "{bad}: {r:?}");
        assert_eq!(s(&r, "error.data.param"), "expectedRevision");
    }
    let r = c.call("actions/execute", r#"{"action":"x","expectedRevision":1e3,"extra":1}"#).await;
    assert_error(&r, -32602, "unknown_param");

    // Application errors keep their class, reason and data.
    c.call_nowait("actions/execute", r#"{"action":"document.text.insert","expectedRevision":1}"#)
        .await;
    let req = app.request().await;
    let Call::Execute(e) = &req.call else { panic!() };
    assert_eq!(e.expected_revision, Some(1));
    let stale = ActionError::new(Reason::StaleRevision { current_revision: 5 }, "Stale.");
    app.reply(req.id, Outcome::Error(stale)).await;
    let r = c.recv().await;
    assert_error(&r, 1000, "stale_revision");
    assert_eq!(s(&r, "error.data.class"), "not_executed");
    assert_eq!(n(&r, "error.data.currentRevision"), 5);
    assert_eq!(s(&r, "error.message"), "Stale.");
}

impl Client {
    async fn call_nowait(&mut self, method: &str, params: &str) {
        self.send(&format!(r#"{{"jsonrpc":"2.0","id":1,"method":"{method}","params":{params}}}"#))
            .await;
    }
}

#[tokio::test]
async fn deferred_tasks_are_tracked_got_and_cancelled() {
    let engine = Engine::new(config());
    let mut app = FakeApp::register(&engine, "Notepad", true, notepad_actions()).await;
    let mut c = Client::connect(&engine, &app.slug);

    c.call_nowait("actions/execute", r#"{"action":"document.text.insert","expectedRevision":3}"#)
        .await;
    let req = app.request().await;
    app.reply(
        req.id,
        Outcome::Ok(CallResult::Deferred { task: task("t1", TaskState::Running), revision: 3 }),
    )
    .await;
    let r = c.recv().await;
    assert_eq!(s(&r, "result.task.id"), "t1");
    assert_eq!(s(&r, "result.task.state"), "running");
    assert_eq!(n(&r, "result.revision"), 3);

    let r = c.call("tasks/get", r#"{"id":"t1"}"#).await;
    assert_eq!(s(&r, "result.protocolVersion"), "1");
    assert_eq!(s(&r, "result.task.state"), "running");

    // Progress and completion arrive as task updates.
    let mut done = task("t1", TaskState::Completed);
    done.result = Some(parse(r#"{"uri":"export://document.txt"}"#));
    app.send(&AppMessage::Task(done)).await;
    let r = wait_for_task_state(&mut c, "t1", "completed").await;
    assert_eq!(s(&r, "result.task.result.uri"), "export://document.txt");

    // Cancelling a finished task answers its final state without asking the app.
    let r = c.call("tasks/cancel", r#"{"id":"t1"}"#).await;
    assert_eq!(s(&r, "result.task.state"), "completed");

    // An update for a task the app never returned in a reply is dropped.
    app.send(&AppMessage::Task(task("ghost", TaskState::Running))).await;
    // A running task: forwarded, the app's answer is recorded.
    start_task(&mut app, &mut c, "t2").await;
    assert_error(&c.call("tasks/get", r#"{"id":"ghost"}"#).await, 1004, "task");
    c.call_nowait("tasks/cancel", r#"{"id":"t2"}"#).await;
    let req = app.request().await;
    assert_eq!(req.call, Call::CancelTask { id: "t2".into() });
    app.reply(req.id, Outcome::Ok(CallResult::Task(task("t2", TaskState::Cancelling)))).await;
    let r = c.recv().await;
    assert_eq!(s(&r, "result.task.state"), "cancelling");
    app.send(&AppMessage::Task(task("t2", TaskState::Cancelled))).await;
    wait_for_task_state(&mut c, "t2", "cancelled").await;

    let r = c.call("tasks/get", r#"{"id":"nope"}"#).await;
    assert_error(&r, 1004, "task");
    assert_eq!(s(&r, "error.data.task"), "nope");
    assert_error(&c.call("tasks/cancel", r#"{"id":"nope"}"#).await, 1004, "task");
    assert_error(&c.call("tasks/get", "{}").await, -32602, "missing_param");
}

/// A deferred `document.text.insert` the app answers with running task `id`.
async fn start_task(app: &mut FakeApp, c: &mut Client, id: &str) {
    c.call_nowait("actions/execute", r#"{"action":"document.text.insert","expectedRevision":1}"#)
        .await;
    let req = app.request().await;
    let task = task(id, TaskState::Running);
    app.reply(req.id, Outcome::Ok(CallResult::Deferred { task, revision: 1 })).await;
    assert_eq!(s(&c.recv().await, "result.task.id"), id);
}

async fn wait_for_task_state(c: &mut Client, id: &str, state: &str) -> Value {
    for _ in 0..1000 {
        let r = c.call("tasks/get", &format!(r#"{{"id":"{id}"}}"#)).await;
        if has(&r, "result") && s(&r, "result.task.state") == state {
            return r;
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    panic!("task {id} never reached {state}");
}

#[tokio::test]
async fn actions_batch_maps_results_and_atomic_failures() {
    let engine = Engine::new(config());
    let mut app = FakeApp::register(&engine, "Notepad", true, notepad_actions()).await;
    let mut c = Client::connect(&engine, &app.slug);

    c.call_nowait(
        "actions/batch",
        r#"{"calls":[{"action":"document.get"},{"action":"document.text.insert","input":{"text":"a"},"expectedRevision":4}],"stopOnError":false}"#,
    )
    .await;
    let req = app.request().await;
    let Call::Batch(b) = &req.call else { panic!("{req:?}") };
    assert_eq!(b.calls.len(), 2);
    assert!(!b.atomic);
    assert!(!b.stop_on_error);
    assert_eq!(b.calls[1].expected_revision, Some(4));
    let err = ActionError::new(Reason::RevisionRequired, "Needs a revision.");
    app.reply(
        req.id,
        Outcome::Ok(CallResult::Batch {
            results: vec![
                BatchEntry { index: 0, outcome: BatchOutcome::Output(parse(r#"{"text":""}"#)) },
                BatchEntry { index: 1, outcome: BatchOutcome::Error(err) },
            ],
            revision: 4,
        }),
    )
    .await;
    let r = c.recv().await;
    assert_eq!(n(&r, "result.revision"), 4);
    assert_eq!(n(&r, "result.results.0.index"), 0);
    assert_eq!(s(&r, "result.results.0.output.text"), "");
    assert_eq!(n(&r, "result.results.1.error.code"), 1000);
    assert_eq!(s(&r, "result.results.1.error.reason"), "revision_required");

    // Atomic failure: one error with data.index and data.cause.
    c.call_nowait("actions/batch", r#"{"calls":[{"action":"document.get"}],"atomic":true}"#).await;
    let req = app.request().await;
    let Call::Batch(b) = &req.call else { panic!() };
    assert!(b.atomic && b.stop_on_error);
    let cause = ActionError::new(Reason::HostError { code: Some("boom".into()) }, "Boom.");
    let rolled =
        ActionError::new(Reason::RolledBack { index: 0, cause: Box::new(cause) }, "Rolled back.");
    app.reply(req.id, Outcome::Error(rolled)).await;
    let r = c.recv().await;
    assert_error(&r, 1002, "rolled_back");
    assert_eq!(n(&r, "error.data.index"), 0);
    assert_eq!(s(&r, "error.data.cause.reason"), "host_error");
    assert_eq!(s(&r, "error.data.cause.data.code"), "boom");

    // Results out of order or beyond the calls are the app's bug.
    c.call_nowait("actions/batch", r#"{"calls":[{"action":"document.get"}]}"#).await;
    let req = app.request().await;
    let entry = |index| BatchEntry { index, outcome: BatchOutcome::Output(parse("{}")) };
    app.reply(
        req.id,
        Outcome::Ok(CallResult::Batch { results: vec![entry(0), entry(1)], revision: 4 }),
    )
    .await;
    assert_error(&c.recv().await, 1003, "invalid_reply");

    // Bounds: 1..=128 calls, strict call objects.
    assert_error(&c.call("actions/batch", r#"{"calls":[]}"#).await, -32602, "out_of_range");
    let many = vec![r#"{"action":"document.get"}"#; 129].join(",");
    assert_error(
        &c.call("actions/batch", &format!(r#"{{"calls":[{many}]}}"#)).await,
        -32602,
        "out_of_range",
    );
    let r = c.call("actions/batch", r#"{"calls":[{"action":"a","bad":1}]}"#).await;
    assert_error(&r, -32602, "unknown_param");
    assert_eq!(s(&r, "error.data.param"), "calls[0].bad");
    assert_error(&c.call("actions/batch", r#"{"calls":[1]}"#).await, -32602, "invalid_type");
    assert_error(
        &c.call("actions/batch", r#"{"calls":[{"action":"a"}],"atomic":1}"#).await,
        -32602,
        "invalid_type",
    );
}

#[tokio::test]
async fn inspect_render_and_resources_are_forwarded() {
    let engine = Engine::new(config());
    let mut app = FakeApp::register(&engine, "Notepad", true, notepad_actions()).await;
    let mut c = Client::connect(&engine, &app.slug);

    c.call_nowait("state/inspect", r#"{"input":{"sinceRevision":12}}"#).await;
    let req = app.request().await;
    assert_eq!(req.call, Call::Inspect { input: parse(r#"{"sinceRevision":12}"#) });
    app.reply(
        req.id,
        Outcome::Ok(CallResult::Inspected { revision: 12, state: parse(r#"{"unchanged":true}"#) }),
    )
    .await;
    let r = c.recv().await;
    assert_eq!(n(&r, "result.revision"), 12);
    assert_eq!(at(&r, "result.state.unchanged"), &Value::Bool(true));

    c.call_nowait("view/render", "{}").await;
    let req = app.request().await;
    assert_eq!(req.call, Call::Render { input: parse("{}") });
    app.reply(
        req.id,
        Outcome::Ok(CallResult::Rendered {
            output: parse(r#"{"uri":"render://view.png"}"#),
            revision: 12,
        }),
    )
    .await;
    let r = c.recv().await;
    assert_eq!(s(&r, "result.output.uri"), "render://view.png");
    assert_eq!(n(&r, "result.revision"), 12);

    c.call_nowait("resources/read", r#"{"uri":"render://view.png"}"#).await;
    let req = app.request().await;
    let Call::ReadResource(rr) = &req.call else { panic!() };
    assert_eq!((rr.uri.as_str(), rr.offset, rr.limit), ("render://view.png", 0, 65536));
    let chunk = ResourceChunk {
        uri: "render://view.png".into(),
        mime_type: "image/png".into(),
        offset: 0,
        total_size: 3,
        data: "AAEC".into(),
        eof: true,
    };
    app.reply(req.id, Outcome::Ok(CallResult::Chunk(chunk))).await;
    let r = c.recv().await;
    assert_eq!(s(&r, "result.protocolVersion"), "1");
    assert_eq!(s(&r, "result.mimeType"), "image/png");
    assert_eq!(n(&r, "result.totalSize"), 3);
    assert_eq!(s(&r, "result.data"), "AAEC");
    assert_eq!(at(&r, "result.eof"), &Value::Bool(true));

    c.call_nowait("resources/read", r#"{"uri":"u","offset":10,"limit":1}"#).await;
    let req = app.request().await;
    let Call::ReadResource(rr) = &req.call else { panic!() };
    assert_eq!((rr.offset, rr.limit), (10, 1));
    let missing = ActionError::new(Reason::Resource { resource: "u".into() }, "No such resource.");
    app.reply(req.id, Outcome::Error(missing)).await;
    assert_error(&c.recv().await, 1004, "resource");
    for bad in [r#""limit":0"#, r#""limit":65537"#, r#""offset":-1"#, r#""offset":0.5"#] {
        let r = c.call("resources/read", &format!(r#"{{"uri":"u",{bad}}}"#)).await;
        assert_eq!(n(&r, "error.code"), -32602, "{bad}");
    }
    assert_error(&c.call("resources/read", "{}").await, -32602, "missing_param");

    // A reply of the wrong kind is the app's bug, reported as internal.
    c.call_nowait("view/render", "{}").await;
    let req = app.request().await;
    app.reply(req.id, Outcome::Ok(CallResult::Revision { revision: 1 })).await;
    assert_error(&c.recv().await, 1003, "invalid_reply");
}

// ---------------------------------------------------------------- protocol errors

#[tokio::test]
async fn protocol_errors_are_exact() {
    let (engine, slug) = engine_with_echo_app(config()).await;
    let mut c = Client::connect(&engine, &slug);
    let cases: &[(&str, i64, &str, bool)] = &[
        ("{not json", -32700, "unexpected_byte", true),
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"agent/info","method":"actions/list"}"#,
            -32700,
            "duplicate_key",
            true,
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"\u006dethod":"agent/info","method":"x"}"#,
            -32700,
            "duplicate_key",
            true,
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"agent/info","params":{"a":"\ud800"}}"#,
            -32700,
            "lone_surrogate",
            true,
        ),
        (r#"[{"jsonrpc":"2.0","id":1,"method":"agent/info"}]"#, -32600, "batch_array", true),
        ("42", -32600, "not_an_object", true),
        (r#"{"id":1,"method":"agent/info"}"#, -32600, "jsonrpc_version", false),
        (r#"{"jsonrpc":"1.0","id":1,"method":"agent/info"}"#, -32600, "jsonrpc_version", false),
        (r#"{"jsonrpc":"2.0","id":1}"#, -32600, "invalid_method", false),
        (r#"{"jsonrpc":"2.0","id":1,"method":7}"#, -32600, "invalid_method", false),
        (r#"{"jsonrpc":"2.0","id":{},"method":"agent/info"}"#, -32600, "invalid_id", true),
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"agent/info","params":[]}"#,
            -32602,
            "params_not_object",
            false,
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"agent/info","params":3}"#,
            -32600,
            "invalid_params_type",
            false,
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"agent/info","extra":3}"#,
            -32600,
            "unknown_member",
            false,
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"agent/info","params":{"protocolVersion":"2"}}"#,
            -32602,
            "unsupported_protocol_version",
            false,
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"agent/info","params":{"protocolVersion":1}}"#,
            -32602,
            "unsupported_protocol_version",
            false,
        ), // After the agent/info lines above have selected JSON-1 (selection is sticky): on an undecided
        // connection `initialize` would select MCP instead.
        (r#"{"jsonrpc":"2.0","id":1,"method":"initialize"}"#, -32601, "unknown_method", false),
    ];
    for (line, code, reason, null_id) in cases {
        c.send(line).await;
        let r = c.recv().await;
        assert_error(&r, *code, reason);
        if *null_id {
            assert_eq!(at(&r, "id"), &Value::Null, "{line}");
        } else {
            assert_eq!(n(&r, "id"), 1, "{line}");
        }
        assert!(!has(&r, "result"));
    }
    let r = c.call("agent/info", r#"{"protocolVersion":"2"}"#).await;
    assert_eq!(at(&r, "error.data.supported"), &parse(r#"["1"]"#));

    // Invalid UTF-8 and a BOM: -32700, and the error is valid UTF-8 JSON (recv parses it).
    for bad in [
        &b"{\"a\":\"\xff\"}\n"[..],
        b"{\"a\":\"\xc0\xaf\"}\n",
        b"{\"a\":\"\xed\xa0\x80\"}\n",
        b"\xef\xbb\xbf{}\n",
    ] {
        c.send_raw(bad).await;
        let r = c.recv().await;
        assert_eq!(n(&r, "error.code"), -32700);
        assert_eq!(at(&r, "id"), &Value::Null);
    }

    // Depth: the request object (1) and params (2) plus 30 arrays make 32: parsed (the
    // params are then refused); 31 arrays make 33: a parse error.
    let nest = |depth: usize| format!("{}{}", "[".repeat(depth), "]".repeat(depth));
    let describe = |depth: usize| {
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"actions/describe","params":{{"action":{}}}}}"#,
            nest(depth)
        )
    };
    c.send(&describe(30)).await;
    assert_error(&c.recv().await, -32602, "invalid_type");
    c.send(&describe(31)).await;
    assert_error(&c.recv().await, -32700, "depth");
    c.send(&"[".repeat(100_000)).await;
    assert_eq!(n(&c.recv().await, "error.code"), -32700);

    // The connection survived all of it.
    assert_eq!(n(&c.call("agent/info", "{}").await, "result.revision"), 7);
}

#[tokio::test]
async fn ids_are_echoed_with_their_exact_token() {
    let (engine, slug) = engine_with_echo_app(config()).await;
    let mut c = Client::connect(&engine, &slug);
    for id in [
        "123456789012345678901234567890",
        "1e400",
        "-0",
        "1.0",
        "0.1e1",
        r#""abc""#,
        r#""\u00e9""#,
        "null",
    ] {
        c.send(&format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"agent/info"}}"#)).await;
        let raw = c.recv_raw().await.unwrap();
        let text = String::from_utf8(raw).unwrap();
        let expected_id = if id == r#""\u00e9""# { "\"é\"".to_string() } else { id.to_string() };
        assert!(text.contains(&format!(r#""id":{expected_id}"#)), "id {id}: {text}");
        assert!(text.contains(r#""protocolVersion":"1""#));
    }
}

#[tokio::test]
async fn notifications_are_never_answered_nor_forwarded() {
    let engine = Engine::new(config());
    let mut app = FakeApp::register(&engine, "Notepad", true, notepad_actions()).await;
    let mut c = Client::connect(&engine, &app.slug);
    c.send(r#"{"jsonrpc":"2.0","method":"actions/execute","params":{"action":"document.text.insert","expectedRevision":1}}"#).await;
    c.send(r#"{"jsonrpc":"2.0","method":"actions/batch","params":{"calls":[{"action":"x"}]}}"#)
        .await;
    c.send(r#"{"jsonrpc":"2.0","method":"agent/info"}"#).await;
    c.send(r#"{"jsonrpc":"2.0","method":"no/such/method"}"#).await;
    c.send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#)
        .await;
    c.send(r#"{"jsonrpc":"2.0","id":9,"method":"agent/info"}"#).await;
    // The first request the app sees is the one with an id.
    let req = app.request().await;
    assert_eq!(req.call, Call::Revision {});
    app.reply(req.id, Outcome::Ok(CallResult::Revision { revision: 1 })).await;
    let r = c.recv().await;
    assert_eq!(n(&r, "id"), 9);
}

#[tokio::test]
async fn oversize_line_gets_one_error_and_reading_resumes() {
    let mut cfg = config();
    cfg.json.max_bytes = 4096;
    let (engine, slug) = engine_with_echo_app(cfg).await;
    let mut c = Client::connect(&engine, &slug);
    // Exactly at the limit: accepted (a long query with a short answer).
    let base = r#"{"jsonrpc":"2.0","id":1,"method":"actions/list","params":{"query":""}}"#;
    let pad = "x".repeat(4096 - base.len());
    let at_limit = base.replace(r#""query":"""#, &format!(r#""query":"{pad}""#));
    assert_eq!(at_limit.len(), 4096);
    c.send(&at_limit).await;
    let r = c.recv().await;
    assert!(has(&r, "result"), "{r:?}");
    // One byte more: -32600 too_large with id null, then the next line is served.
    let over = at_limit.replace(&pad, &format!("{pad}x"));
    c.send(&over).await;
    let r = c.recv().await;
    assert_error(&r, -32600, "too_large");
    assert_eq!(at(&r, "id"), &Value::Null);
    // 10 MiB in one go, then a good request.
    let huge = vec![b'q'; 10 << 20];
    let mut w = c.take_writer();
    let writer = tokio::spawn(async move {
        w.write_all(&huge).await.unwrap();
        w.write_all(b"\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"agent/info\"}\n").await.unwrap();
        w
    });
    let r = c.recv().await;
    assert_error(&r, -32600, "too_large");
    let r = c.recv().await;
    assert_eq!(n(&r, "id"), 2);
    writer.await.unwrap();
}

// ---------------------------------------------------------------- chunking

#[tokio::test]
async fn byte_by_byte_split_utf8_and_pipelined_requests_match_the_one_shot_run() {
    let (engine, slug) = engine_with_echo_app(config()).await;
    let request = "{\"jsonrpc\":\"2.0\",\"id\":\"ü\\n\",\"method\":\"actions/execute\",\"params\":{\"action\":\"document.get\",\"input\":{\"t\":\"é😀\\u00e9\"}}}\n";

    let mut one_shot = Client::connect(&engine, &slug);
    one_shot.send_raw(request.as_bytes()).await;
    let expected = one_shot.recv_raw().await.unwrap();

    let mut slow = Client::connect(&engine, &slug);
    for b in request.as_bytes() {
        slow.send_raw(&[*b]).await;
        slow.flush().await;
        tokio::task::yield_now().await;
    }
    assert_eq!(slow.recv_raw().await.unwrap(), expected);

    // 50 requests in one write, plus half of the next; all answered with their own ids.
    let mut pipelined = Client::connect(&engine, &slug);
    let mut batch = String::new();
    for i in 0..50 {
        batch.push_str(&format!(r#"{{"jsonrpc":"2.0","id":{i},"method":"actions/execute","params":{{"action":"document.get","input":{{"i":{i}}}}}}}"#));
        batch.push('\n');
    }
    let next = r#"{"jsonrpc":"2.0","id":50,"method":"agent/info"}"#;
    batch.push_str(&next[..20]);
    pipelined.send_raw(batch.as_bytes()).await;
    let mut seen = Vec::new();
    for _ in 0..50 {
        let r = pipelined.recv().await;
        let id = n(&r, "id");
        assert_eq!(n(&r, "result.output.i"), id, "response matches its request");
        seen.push(id);
    }
    seen.sort();
    assert_eq!(seen, (0..50).collect::<Vec<_>>());
    pipelined.send_raw(format!("{}\n", &next[20..]).as_bytes()).await;
    assert_eq!(n(&pipelined.recv().await, "id"), 50);
}

// ---------------------------------------------------------------- backpressure

#[tokio::test]
async fn in_flight_requests_per_connection_are_bounded() {
    let mut cfg = config();
    cfg.max_in_flight_per_client = 4;
    let engine = Engine::new(cfg);
    let mut app = FakeApp::register(&engine, "Notepad", true, notepad_actions()).await;
    let mut c = Client::connect(&engine, &app.slug);
    for i in 0..10 {
        c.send(&format!(r#"{{"jsonrpc":"2.0","id":{i},"method":"agent/info"}}"#)).await;
    }
    let mut held = Vec::new();
    for _ in 0..4 {
        held.push(app.request().await);
    }
    // A fifth request is not read while four are in flight.
    assert!(tokio::time::timeout(Duration::from_millis(100), app.request()).await.is_err());
    // Answering them out of order frees slots; every request is answered exactly once.
    let mut answered = 0;
    let mut ids = Vec::new();
    while answered < 10 {
        let req = match held.pop() {
            Some(r) => r,
            None => app.request().await,
        };
        app.reply(req.id, Outcome::Ok(CallResult::Revision { revision: req.id })).await;
        answered += 1;
        ids.push(n(&c.recv().await, "id"));
    }
    ids.sort();
    assert_eq!(ids, (0..10).collect::<Vec<_>>());
}

#[tokio::test]
async fn a_client_that_never_reads_stops_being_read() {
    let mut cfg = config();
    cfg.json.max_bytes = 64 * 1024;
    let engine = Engine::new(cfg);
    let mut app = FakeApp::register(&engine, "Notepad", true, notepad_actions()).await;
    let slug = app.slug.clone();
    let big = "x".repeat(40 * 1024);
    let mut c = Client::connect_with_buffer(&engine, &slug, 4096);
    let total = 300;
    let mut w = c.take_writer();
    let writer = tokio::spawn(async move {
        for i in 0..total {
            let line = format!(
                "{{\"jsonrpc\":\"2.0\",\"id\":{i},\"method\":\"actions/execute\",\"params\":{{\"action\":\"document.get\"}}}}\n"
            );
            w.write_all(line.as_bytes()).await.unwrap();
        }
        w
    });
    // Answer requests with big outputs until the daemon stops forwarding.
    let mut forwarded = 0;
    while let Ok(req) = tokio::time::timeout(Duration::from_millis(300), app.request()).await {
        let output = parse(&format!(r#"{{"big":"{big}"}}"#));
        app.reply(req.id, Outcome::Ok(CallResult::Executed { output: output.into(), revision: 1 }))
            .await;
        forwarded += 1;
    }
    // About one maximum-size response buffered (+ one in the writer, + the transport buffer)
    // stops the reader, and running calls are bounded by the response bytes they may bring
    // back (four maximum-size responses): far below the in-flight bound of 64.
    assert!(forwarded <= 12, "forwarded {forwarded} while nobody read");
    assert!(forwarded < total);
    // Once the client reads, every request is answered exactly once.
    let reader = tokio::spawn(async move {
        let mut ids = Vec::new();
        for _ in 0..total {
            ids.push(n(&c.recv().await, "id"));
        }
        ids
    });
    let server = tokio::spawn(async move {
        while let Some(DaemonMessage::Request(req)) = app.recv().await {
            let answer = CallResult::Executed { output: parse("{}").into(), revision: 1 };
            app.reply(req.id, Outcome::Ok(answer)).await;
        }
    });
    let mut ids = tokio::time::timeout(WAIT, reader).await.unwrap().unwrap();
    ids.sort();
    assert_eq!(ids, (0..total as i64).collect::<Vec<_>>());
    writer.await.unwrap();
    server.abort();
}

#[tokio::test]
async fn an_app_that_never_reads_makes_calls_fail_fast_with_busy() {
    let mut cfg = config();
    cfg.max_queued_per_app = 4;
    let engine = Engine::new(cfg);
    // A tiny transport buffer: the daemon's writes to the app block almost at once.
    let app = FakeApp::register_with_buffer(&engine, "Stuck", true, notepad_actions(), 256).await;
    let mut clients = Vec::new();
    for _ in 0..10 {
        let mut c = Client::connect(&engine, &app.slug);
        c.send(r#"{"jsonrpc":"2.0","id":1,"method":"agent/info"}"#).await;
        clients.push(c);
    }
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    for mut c in clients {
        let tx = tx.clone();
        tokio::spawn(async move {
            let r = c.recv().await;
            let _ = tx.send(r);
            c
        });
    }
    for _ in 0..6 {
        let r = tokio::time::timeout(WAIT, rx.recv()).await.unwrap().unwrap();
        assert_error(&r, 1000, "busy");
        assert_eq!(s(&r, "error.data.class"), "not_executed");
    }
    // The other 4 are outstanding: no answer for them.
    assert!(tokio::time::timeout(Duration::from_millis(200), rx.recv()).await.is_err());
    assert_eq!(engine.app(&app.slug).unwrap().outstanding(), 4);
    drop(app);
}

// ---------------------------------------------------------------- app faults

#[tokio::test]
async fn an_app_that_never_answers_times_out_and_its_late_reply_is_dropped() {
    let mut cfg = config();
    cfg.request_deadline = Duration::from_millis(200);
    let engine = Engine::new(cfg);
    let mut app = FakeApp::register(&engine, "Notepad", true, notepad_actions()).await;
    let mut c = Client::connect(&engine, &app.slug);
    c.send(r#"{"jsonrpc":"2.0","id":"A","method":"actions/execute","params":{"action":"document.get"}}"#).await;
    let a = app.request().await;
    let r = c.recv().await;
    assert_eq!(s(&r, "id"), "A");
    assert_error(&r, 1001, "timeout");
    assert_eq!(s(&r, "error.data.class"), "outcome_unknown");
    let message = s(&r, "error.message").to_lowercase();
    assert!(!message.contains("cancel") && !message.contains("rolled back"), "{message}");

    c.send(r#"{"jsonrpc":"2.0","id":"B","method":"actions/execute","params":{"action":"document.get","input":{"who":"B"}}}"#).await;
    let b = app.request().await;
    // The app wakes and answers A, then B: A's answer goes nowhere.
    app.reply(
        a.id,
        Outcome::Ok(CallResult::Executed { output: parse(r#"{"who":"A"}"#).into(), revision: 1 }),
    )
    .await;
    app.reply(
        b.id,
        Outcome::Ok(CallResult::Executed { output: parse(r#"{"who":"B"}"#).into(), revision: 1 }),
    )
    .await;
    let r = c.recv().await;
    assert_eq!(s(&r, "id"), "B");
    assert_eq!(s(&r, "result.output.who"), "B");
    // Nothing else arrives.
    assert!(tokio::time::timeout(Duration::from_millis(100), c.recv_raw()).await.is_err());
}

#[tokio::test]
async fn duplicate_and_unknown_replies_are_dropped() {
    let engine = Engine::new(config());
    let mut app = FakeApp::register(&engine, "Notepad", true, notepad_actions()).await;
    let mut c = Client::connect(&engine, &app.slug);
    // A reply before any request.
    app.reply(1, Outcome::Ok(CallResult::Revision { revision: 99 })).await;
    c.send(r#"{"jsonrpc":"2.0","id":1,"method":"agent/info"}"#).await;
    let req = app.request().await;
    app.reply(req.id + 1000, Outcome::Ok(CallResult::Revision { revision: 98 })).await;
    app.reply(req.id, Outcome::Ok(CallResult::Revision { revision: 5 })).await;
    app.reply(req.id, Outcome::Ok(CallResult::Revision { revision: 6 })).await;
    assert_eq!(n(&c.recv().await, "result.revision"), 5);
    c.send(r#"{"jsonrpc":"2.0","id":2,"method":"agent/info"}"#).await;
    let req = app.request().await;
    app.reply(req.id, Outcome::Ok(CallResult::Revision { revision: 8 })).await;
    let r = c.recv().await;
    assert_eq!((n(&r, "id"), n(&r, "result.revision")), (2, 8));
}

#[tokio::test]
async fn disabling_fails_queued_calls_and_closes_clients_but_sent_calls_finish() {
    let mut cfg = config();
    cfg.max_queued_per_app = 64;
    let engine = Engine::new(cfg);
    let mut events = engine.subscribe();
    assert_eq!(events.next().await, Some(EndpointEvent::Resync { slugs: vec![] }));
    // Small buffer: the first (large) request blocks the daemon's writer, the rest stay queued.
    let mut app =
        FakeApp::register_with_buffer(&engine, "Notepad", true, notepad_actions(), 200).await;
    assert_eq!(events.next().await.unwrap(), EndpointEvent::Up { slug: "notepad".into() });
    let mut c = Client::connect(&engine, &app.slug);
    // A fresh connection starts a few calls at a time until small responses show it may run
    // more (`client/backpressure.rs`, `Admission`): warm it up.
    for i in 100..108 {
        c.send(&format!(r#"{{"jsonrpc":"2.0","id":{i},"method":"agent/info"}}"#)).await;
        let req = app.request().await;
        app.reply(req.id, Outcome::Ok(CallResult::Revision { revision: 1 })).await;
        assert_eq!(n(&c.recv().await, "id"), i);
    }
    let pad = "p".repeat(1000);
    c.send(&format!(r#"{{"jsonrpc":"2.0","id":0,"method":"actions/execute","params":{{"action":"document.get","input":{{"pad":"{pad}"}}}}}}"#)).await;
    // Its first bytes arriving means the writer is inside that write, blocked on the rest.
    app.read_some(4).await;
    for i in 1..10 {
        c.send(&format!(r#"{{"jsonrpc":"2.0","id":{i},"method":"actions/execute","params":{{"action":"document.get"}}}}"#)).await;
    }
    let handle = engine.app("notepad").unwrap();
    for _ in 0..1000 {
        if handle.outstanding() == 10 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert_eq!(handle.outstanding(), 10);
    app.set_enabled(false).await;
    assert_eq!(events.next().await.unwrap(), EndpointEvent::Down { slug: "notepad".into() });
    // Now read what had been sent and answer it for real.
    let mut sent = Vec::new();
    while let Ok(Some(DaemonMessage::Request(req))) =
        tokio::time::timeout(Duration::from_millis(200), app.recv()).await
    {
        sent.push(req.id);
        let out = CallResult::Executed { output: parse("{}").into(), revision: 1 };
        app.reply(req.id, Outcome::Ok(out)).await;
    }
    assert_eq!(sent.len(), 1, "only the blocked request was sent: {sent:?}");
    let (mut ok, mut disabled) = (0, 0);
    for _ in 0..10 {
        let r = c.recv().await;
        if has(&r, "result") {
            ok += 1;
        } else {
            assert_error(&r, 1000, "disabled");
            disabled += 1;
        }
    }
    assert_eq!(ok, sent.len());
    assert_eq!(disabled, 10 - sent.len());
    assert!(c.closed().await, "client connection closed after its calls were answered");
    // Listed as disabled, no new clients; re-enabling brings the endpoint back.
    assert!(!engine.apps()[0].enabled);
    let mut late = Client::connect(&engine, "notepad");
    assert!(late.closed().await);
    app.set_enabled(true).await;
    assert_eq!(events.next().await.unwrap(), EndpointEvent::Up { slug: "notepad".into() });
}

/// A connection between calls (its last call answered, the next line not come) closes when its
/// app is disabled, and on shutdown: what it watches for that is one wait for the connection's
/// life (`client/endpoint.rs`), so a change while it idles must still wake it.
#[tokio::test]
async fn idle_clients_close_when_their_app_is_disabled_and_on_shutdown() {
    let engine = Engine::new(config());
    let mut events = engine.subscribe();
    assert_eq!(events.next().await, Some(EndpointEvent::Resync { slugs: vec![] }));
    let mut app = FakeApp::register(&engine, "Notepad", true, notepad_actions()).await;
    assert_eq!(events.next().await.unwrap(), EndpointEvent::Up { slug: "notepad".into() });
    for (id, stop) in [(1, "disable"), (2, "shutdown")] {
        let mut c = Client::connect(&engine, &app.slug);
        for call in 0..3 {
            c.send(&format!(r#"{{"jsonrpc":"2.0","id":{call},"method":"agent/info"}}"#)).await;
            let req = app.request().await;
            app.reply(req.id, Outcome::Ok(CallResult::Revision { revision: id })).await;
            assert_eq!(n(&c.recv().await, "id"), call);
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
        if stop == "disable" {
            app.set_enabled(false).await;
            assert_eq!(
                events.next().await.unwrap(),
                EndpointEvent::Down { slug: "notepad".into() }
            );
        } else {
            tokio::spawn({
                let engine = engine.clone();
                async move { engine.shutdown().await }
            });
        }
        let closed = tokio::time::timeout(WAIT, c.closed()).await;
        assert!(closed.unwrap_or(false), "{stop}: the idle client was not closed");
        if stop == "disable" {
            app.set_enabled(true).await;
            assert_eq!(events.next().await.unwrap(), EndpointEvent::Up { slug: "notepad".into() });
        }
    }
}

/// A subscription starts with the endpoints already up, and a subscriber that falls behind
/// the event backlog gets the current set again instead of a gap.
#[tokio::test]
async fn endpoint_subscribers_start_from_a_snapshot_and_resync_after_lagging() {
    let engine = Engine::new(config());
    let mut app = FakeApp::register(&engine, "Notepad", true, notepad_actions()).await;
    let _other = FakeApp::register(&engine, "Other", false, notepad_actions()).await;
    let mut events = engine.subscribe();
    assert_eq!(events.next().await, Some(EndpointEvent::Resync { slugs: vec!["notepad".into()] }));
    // 2000 changes, far over the backlog, ending enabled; then a task update as a marker: the
    // engine reads the channel in order, so once the marker is in, every change is too. (The
    // marker task is one the app returned earlier: updates for other ids are dropped.)
    let id = engine.app("notepad").unwrap().registration().id();
    engine.0.tasks.lock().unwrap().start(id, task("marker", TaskState::Running)).unwrap();
    for i in 0..2000 {
        app.set_enabled(i % 2 == 1).await;
    }
    app.send(&AppMessage::Task(task("marker", TaskState::Completed))).await;
    let marked = || {
        let tasks = engine.0.tasks.lock().unwrap();
        tasks.get(id, "Notepad", "marker").is_some_and(|t| t.state == TaskState::Completed)
    };
    for _ in 0..2000 {
        if marked() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert!(marked());
    // Applied in order the way the OS layer applies them, the events end where the apps are.
    let mut seen = 0;
    let mut resyncs = 0;
    let mut up = std::collections::BTreeSet::new();
    while let Ok(Some(event)) =
        tokio::time::timeout(Duration::from_millis(200), events.next()).await
    {
        seen += 1;
        match event {
            EndpointEvent::Up { slug } => {
                up.insert(slug);
            }
            EndpointEvent::Down { slug } => {
                up.remove(&slug);
            }
            EndpointEvent::Resync { slugs } => {
                resyncs += 1;
                up = slugs.into_iter().collect();
            }
        }
    }
    assert!(resyncs >= 1 && seen < 2000, "{resyncs} resyncs in {seen} events");
    assert_eq!(up.into_iter().collect::<Vec<_>>(), ["notepad"]);
}

#[tokio::test]
async fn app_disconnect_fails_calls_and_tasks_promptly() {
    let engine = Engine::new(config()); // 20 s request deadline: "promptly" means long before
    let mut events = engine.subscribe();
    assert_eq!(events.next().await, Some(EndpointEvent::Resync { slugs: vec![] }));
    let mut app = FakeApp::register(&engine, "Notepad", true, notepad_actions()).await;
    events.next().await.unwrap();
    let mut c = Client::connect(&engine, &app.slug);
    c.call_nowait("actions/execute", r#"{"action":"document.text.insert","expectedRevision":1}"#)
        .await;
    let req = app.request().await;
    app.reply(
        req.id,
        Outcome::Ok(CallResult::Deferred { task: task("t", TaskState::Running), revision: 1 }),
    )
    .await;
    c.recv().await;
    let tasks_app_id = engine.app("notepad").unwrap().registration().id();
    c.call_nowait("actions/execute", r#"{"action":"document.text.insert","expectedRevision":1}"#)
        .await;
    app.request().await;
    let started = std::time::Instant::now();
    drop(app);
    let r = c.recv().await;
    assert_error(&r, 1001, "app_disconnected");
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(c.closed().await);
    assert_eq!(events.next().await.unwrap(), EndpointEvent::Down { slug: "notepad".into() });
    assert!(engine.apps().is_empty());
    let failed = engine.0.tasks.lock().unwrap().get(tasks_app_id, "Notepad", "t").unwrap();
    assert_eq!(failed.state, TaskState::Failed);
    assert_eq!(failed.error.unwrap().reason, Reason::AppDisconnected);
}

#[tokio::test]
async fn frame_header_over_the_limit_drops_the_app() {
    let engine = Engine::new(config());
    let mut app = FakeApp::register(&engine, "Notepad", true, notepad_actions()).await;
    let mut c = Client::connect(&engine, &app.slug);
    c.send(r#"{"jsonrpc":"2.0","id":1,"method":"agent/info"}"#).await;
    app.request().await;
    app.send_raw(&0xFFFF_FFFFu32.to_be_bytes()).await;
    assert_error(&c.recv().await, 1001, "app_disconnected");
    assert!(c.closed().await);
    // The daemon closed the host channel without waiting for a body.
    assert!(app.recv().await.is_none());
    assert!(engine.apps().is_empty());
}

#[tokio::test]
async fn garbage_on_the_host_channel_drops_only_that_app() {
    let engine = Engine::new(config());
    let mut bad = FakeApp::register(&engine, "Bad", true, notepad_actions()).await;
    let good = FakeApp::register(&engine, "Good", true, notepad_actions()).await;
    let good_slug = good.slug.clone();
    good.serve(echo);
    let mut frame = 16u32.to_be_bytes().to_vec();
    frame.extend_from_slice(&[0u8; 16]);
    bad.send_raw(&frame).await;
    assert!(bad.recv().await.is_none());
    let mut c = Client::connect(&engine, &good_slug);
    assert_eq!(n(&c.call("agent/info", "{}").await, "result.revision"), 7);
    assert_eq!(engine.apps().len(), 1);
}

// ---------------------------------------------------------------- handshake and registry

#[tokio::test(start_paused = true)]
async fn a_silent_app_is_dropped_at_the_handshake_deadline() {
    let mut cfg = config();
    cfg.handshake_deadline = Duration::from_secs(5);
    let engine = Engine::new(cfg);
    let mut app = FakeApp::connect(&engine, 1024);
    let started = tokio::time::Instant::now();
    assert!(app.recv().await.is_none());
    assert!(started.elapsed() >= Duration::from_secs(5));
    assert!(engine.apps().is_empty());
}

#[tokio::test]
async fn bad_registrations_are_refused_with_a_reason() {
    let engine = Engine::new(config());
    let hello = |version| {
        AppMessage::Hello(jfgui_proto::channel::Hello {
            channel_version: version,
            display_name: "X".into(),
            pid: 1,
            enabled: true,
            activity: false,
        })
    };
    let refused = |m: Option<DaemonMessage>| match m {
        Some(DaemonMessage::Refused(r)) => r,
        other => panic!("expected refused, got {other:?}"),
    };
    let mut app = FakeApp::connect(&engine, 1 << 16);
    app.send(&hello(99)).await;
    assert_eq!(refused(app.recv().await).reason, "channel_version");

    let mut app = FakeApp::connect(&engine, 1 << 16);
    app.send(&hello(1)).await;
    let dup = vec![action("a", ActionKind::Read, ""), action("a", ActionKind::Write, "")];
    app.send(&AppMessage::Actions(jfgui_proto::channel::ActionsPage { actions: dup })).await;
    app.send(&AppMessage::Ready(jfgui_proto::channel::Ready { action_count: 2 })).await;
    let r = refused(app.recv().await);
    assert_eq!(r.reason, "invalid_registration");
    assert!(r.message.contains('a'), "{}", r.message);

    let mut app = FakeApp::connect(&engine, 1 << 16);
    app.send(&hello(1)).await;
    app.send(&AppMessage::Ready(jfgui_proto::channel::Ready { action_count: 1 })).await;
    assert_eq!(refused(app.recv().await).reason, "invalid_registration");

    let mut app = FakeApp::connect(&engine, 1 << 16);
    app.send(&AppMessage::Ready(jfgui_proto::channel::Ready { action_count: 0 })).await;
    assert_eq!(refused(app.recv().await).reason, "invalid_registration");
    assert!(engine.apps().is_empty());
}

#[tokio::test]
async fn instances_get_distinct_slugs_and_keep_their_names() {
    let mut cfg = config();
    cfg.max_apps = 3;
    let engine = Engine::new(cfg);
    let a = FakeApp::register(&engine, "Notepad", true, notepad_actions()).await;
    let b = FakeApp::register(&engine, "Notepad", false, vec![]).await;
    let c = FakeApp::register(&engine, "Ünïcode  Window — Title", true, vec![]).await;
    assert_eq!(
        (a.slug.as_str(), b.slug.as_str(), c.slug.as_str()),
        ("notepad", "notepad-2", "n-code-window-title")
    );
    let apps = engine.apps();
    assert_eq!(apps[2].display_name, "Ünïcode  Window — Title");
    assert_eq!(apps[0].action_count, 3);
    assert!(!apps[1].enabled);
    // The cap refuses a fourth app clearly.
    let mut d = FakeApp::connect(&engine, 1 << 16);
    d.send(&AppMessage::Hello(jfgui_proto::channel::Hello {
        channel_version: 1,
        display_name: "D".into(),
        pid: 1,
        enabled: true,
        activity: false,
    }))
    .await;
    d.send(&AppMessage::Ready(jfgui_proto::channel::Ready { action_count: 0 })).await;
    match d.recv().await {
        Some(DaemonMessage::Refused(r)) => assert_eq!(r.reason, "too_many_apps"),
        other => panic!("{other:?}"),
    }
    // A client for a disabled app's slug or an unknown slug is closed at once.
    assert!(Client::connect(&engine, "notepad-2").closed().await);
    assert!(Client::connect(&engine, "nope").closed().await);
    drop((a, b, c));
}

/// Hello, the actions in pages of 256, ready; the app and the daemon's answer.
async fn try_register(
    engine: &Engine,
    name: &str,
    actions: Vec<ActionInfo>,
) -> (FakeApp, DaemonMessage) {
    let mut app = FakeApp::connect(engine, 1 << 20);
    app.send(&AppMessage::Hello(jfgui_proto::channel::Hello {
        channel_version: 1,
        display_name: name.into(),
        pid: 1,
        enabled: true,
        activity: false,
    }))
    .await;
    let count = actions.len() as u32;
    for page in actions.chunks(256) {
        let page = jfgui_proto::channel::ActionsPage { actions: page.to_vec() };
        app.send(&AppMessage::Actions(page)).await;
    }
    app.send(&AppMessage::Ready(jfgui_proto::channel::Ready { action_count: count })).await;
    let answer = app.recv().await.expect("an answer");
    (app, answer)
}

#[tokio::test]
async fn the_registration_budget_refuses_the_app_that_would_pass_it_and_gets_back_what_apps_held() {
    let mut cfg = config();
    cfg.max_registration_bytes = 64 * 1024;
    let engine = Engine::new(cfg);
    let description = "d".repeat(1000);
    let heavy = || -> Vec<ActionInfo> {
        (0..40).map(|i| action(&format!("a{i}"), ActionKind::Read, &description)).collect()
    };
    let a = FakeApp::register(&engine, "A", true, heavy()).await;
    let held = engine.registration_bytes();
    assert_eq!(held.budget, 64 * 1024);
    // Each description once: 40 of them and a little for the rest of each action.
    assert!(held.used > 40 * 1000 && held.used < 40 * 1300, "{held:?}");
    match try_register(&engine, "B", heavy()).await.1 {
        DaemonMessage::Refused(r) => {
            assert_eq!(r.reason, "registration_too_large");
            assert!(r.message.contains("65536"), "the budget is named: {}", r.message);
            assert!(r.message.contains(&held.used.to_string()), "{}", r.message);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(engine.apps().len(), 1);
    assert_eq!(engine.registration_bytes(), held, "a refused app holds nothing");
    // A small app still fits, and the heavy one is served all along.
    let small = FakeApp::register(&engine, "Small", true, notepad_actions()).await;
    let mut c = Client::connect(&engine, "a");
    let r = c.call("actions/describe", r#"{"action":"a39"}"#).await;
    assert_eq!(s(&r, "result.action.description"), description);
    // Once A leaves, what it held is free again: B registers.
    drop(c);
    drop(a);
    let gone = tokio::time::timeout(WAIT, async {
        while engine.apps().len() > 1 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    });
    gone.await.expect("A leaves");
    let with_small = engine.registration_bytes().used;
    assert!(with_small < held.used, "{with_small}");
    let (b, answer) = try_register(&engine, "B", heavy()).await;
    assert!(matches!(answer, DaemonMessage::Welcome(_)), "{answer:?}");
    // B declared what A did, under a name as long.
    assert_eq!(engine.registration_bytes().used, with_small + held.used);
    drop((b, small));
}

// ---------------------------------------------------------------- control socket

#[tokio::test]
async fn control_socket_reports_status_and_apps() {
    let mut cfg = config();
    cfg.runtime_dir = Some("/run/user/1000/jfgui-agent".into());
    // The engine reports whatever the OS layer names endpoints (here a Windows pipe).
    cfg.endpoint_naming =
        Some(EndpointNaming::new(|slug| format!(r"\\.\pipe\jfgui-agent-S-1-5-21-app-{slug}")));
    let engine = Engine::new(cfg);
    let a = FakeApp::register(&engine, "Notepad", true, notepad_actions()).await;
    let b = FakeApp::register(&engine, "Ünï", false, vec![]).await;
    let _client = Client::connect(&engine, "notepad");
    let (ours, theirs) = tokio::io::duplex(1 << 16);
    let e2 = engine.clone();
    tokio::spawn(async move { e2.serve_control(theirs, PeerInfo::default()).await });
    let mut c = Client::over(ours);

    let r = c.call("daemon/status", "{}").await;
    assert_eq!(s(&r, "result.version"), env!("CARGO_PKG_VERSION"));
    assert_eq!(n(&r, "result.pid"), i64::from(std::process::id()));
    assert!(n(&r, "result.uptimeMs") >= 0);
    assert_eq!(s(&r, "result.runtimeDir"), "/run/user/1000/jfgui-agent");
    assert_eq!(n(&r, "result.apps"), 2);
    // Nothing logs through the daemon's writer in this process: nothing was dropped.
    assert_eq!(n(&r, "result.logDropped"), 0);

    let r = c.call("apps/list", "{}").await;
    let apps = at(&r, "result.apps").as_array().unwrap();
    assert_eq!(s(&apps[0], "slug"), "notepad");
    assert_eq!(s(&apps[0], "displayName"), "Notepad");
    assert_eq!(n(&apps[0], "pid"), 4242);
    assert_eq!(at(&apps[0], "enabled"), &Value::Bool(true));
    assert_eq!(n(&apps[0], "actionCount"), 3);
    assert_eq!(s(&apps[0], "endpoint"), r"\\.\pipe\jfgui-agent-S-1-5-21-app-notepad");
    assert_eq!(s(&apps[1], "displayName"), "Ünï");
    assert_eq!(at(&apps[1], "enabled"), &Value::Bool(false));
    assert_eq!(at(&apps[1], "endpoint"), &Value::Null);

    assert_error(&c.call("agent/info", "{}").await, -32601, "unknown_method");
    assert_error(&c.call("apps/list", r#"{"x":1}"#).await, -32602, "unknown_param");
    c.send("[1]").await;
    assert_error(&c.recv().await, -32600, "batch_array");
    drop((a, b));
}

// ---------------------------------------------------------------- shutdown

#[tokio::test]
async fn shutdown_drains_then_fails_calls_and_says_bye() {
    let mut cfg = config();
    cfg.shutdown_drain = Duration::from_secs(1);
    let engine = Engine::new(cfg);
    let mut app = FakeApp::register(&engine, "Notepad", true, notepad_actions()).await;
    let mut c = Client::connect(&engine, &app.slug);
    c.send(r#"{"jsonrpc":"2.0","id":1,"method":"agent/info"}"#).await;
    c.send(r#"{"jsonrpc":"2.0","id":2,"method":"agent/info"}"#).await;
    let first = app.request().await;
    let _second = app.request().await;
    let counts = *engine.connections().borrow();
    assert_eq!((counts.apps, counts.clients), (1, 1));
    let e2 = engine.clone();
    let stopping = tokio::spawn(async move { e2.shutdown().await });
    // A reply during the drain is still delivered.
    tokio::time::sleep(Duration::from_millis(50)).await;
    app.reply(first.id, Outcome::Ok(CallResult::Revision { revision: 3 })).await;
    let mut got = [c.recv().await, c.recv().await];
    got.sort_by_key(|r| n(r, "id"));
    assert_eq!(n(&got[0], "result.revision"), 3);
    assert_error(&got[1], 1001, "daemon_shutdown");
    assert!(matches!(app.recv().await, Some(DaemonMessage::Bye(b)) if b.reason == "shutdown"));
    tokio::time::timeout(WAIT, stopping).await.unwrap().unwrap();
    assert!(c.closed().await);
    assert_eq!(engine.client_count(), 0);
    assert!(engine.connections().borrow().is_idle());
    // Nothing new is accepted after shutdown.
    let mut late = FakeApp::connect(&engine, 1 << 16);
    assert!(matches!(late.recv().await, Some(DaemonMessage::Refused(_)) | None));
}

#[tokio::test]
async fn big_results_over_the_message_bound_become_response_too_large() {
    let mut cfg = config();
    cfg.json.max_bytes = 2048;
    let engine = Engine::new(cfg);
    let mut app = FakeApp::register(&engine, "Notepad", true, notepad_actions()).await;
    let mut c = Client::connect(&engine, &app.slug);
    c.call_nowait("actions/execute", r#"{"action":"document.get"}"#).await;
    let req = app.request().await;
    let output = parse(&format!(r#"{{"t":"{}"}}"#, "y".repeat(4000)));
    app.reply(req.id, Outcome::Ok(CallResult::Executed { output: output.into(), revision: 1 }))
        .await;
    let r = c.recv().await;
    assert_error(&r, 1003, "response_too_large");
    assert_eq!(s(&r, "error.data.action"), "document.get");
    // The connection and the app are unharmed.
    let r = c.call("actions/describe", r#"{"action":"document.get"}"#).await;
    assert_eq!(s(&r, "result.action.name"), "document.get");
}

#[tokio::test]
async fn engine_config_defaults_are_the_spec_values() {
    let c = EngineConfig::default();
    assert_eq!(c.json.max_bytes, 1 << 20);
    assert_eq!(c.max_frame, (1 << 20) + (64 << 10));
    assert_eq!(c.handshake_deadline, Duration::from_secs(5));
    assert_eq!(c.request_deadline, Duration::from_secs(30));
    assert_eq!(c.partial_deadline, Duration::from_secs(30));
    assert_eq!(c.shutdown_drain, Duration::from_secs(5));
    assert_eq!(
        (c.max_apps, c.max_in_flight_per_client, c.max_queued_per_app, c.max_tasks),
        (256, 64, 256, 4096)
    );
    assert_eq!(c.max_slug_len, 48);
}

#[tokio::test]
async fn serve_futures_are_send() {
    fn is_send<T: Send>(_: &T) {}
    let engine = Engine::new(EngineConfig::default());
    let (a, b) = tokio::io::duplex(16);
    let (c, _d) = tokio::io::duplex(16);
    is_send(&engine.serve_app(a, PeerInfo::default()));
    is_send(&engine.serve_client(b, "x", PeerInfo::default()));
    is_send(&engine.serve_control(c, PeerInfo::default()));
    is_send(&engine.shutdown());
}

#[tokio::test]
async fn count_bounds_are_enforced_while_parsing() {
    let mut cfg = config();
    cfg.json.max_members = 8;
    cfg.json.max_values = 40;
    cfg.json.max_string_bytes = 256;
    let (engine, slug) = engine_with_echo_app(cfg).await;
    let mut c = Client::connect(&engine, &slug);
    let list = |k: usize| (0..k).map(|i| i.to_string()).collect::<Vec<_>>().join(",");
    let describe = |action: String| {
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"actions/describe","params":{{"action":{action}}}}}"#
        )
    };
    // At the bound: parsed (then refused as params); one over: a parse error naming the bound.
    c.send(&describe(format!("[{}]", list(8)))).await;
    assert_error(&c.recv().await, -32602, "invalid_type");
    c.send(&describe(format!("[{}]", list(9)))).await;
    assert_error(&c.recv().await, -32700, "too_many_members");
    let many = (0..5).map(|_| format!("[{}]", list(7))).collect::<Vec<_>>().join(",");
    c.send(&describe(format!("[{many}]"))).await;
    assert_error(&c.recv().await, -32700, "too_many_values");
    // Decoded length counts: 256 bytes pass, 258 do not, also when spelled with escapes.
    c.send(&describe(format!("\"{}\"", "a".repeat(256)))).await;
    assert_error(&c.recv().await, 1004, "action");
    c.send(&describe(format!("\"{}\"", "\\u00e9".repeat(129)))).await;
    assert_error(&c.recv().await, -32700, "string_too_long");
}

#[tokio::test]
async fn unknown_fields_on_the_host_channel_drop_the_app() {
    let engine = Engine::new(config());
    let mut app = FakeApp::register(&engine, "Notepad", true, notepad_actions()).await;
    let mut c = Client::connect(&engine, &app.slug);
    c.send(r#"{"jsonrpc":"2.0","id":1,"method":"agent/info"}"#).await;
    let req = app.request().await;
    let body = format!(
        r#"{{"reply":{{"id":{},"outcome":{{"ok":{{"revision":{{"revision":1}}}}}},"extra":1}}}}"#,
        req.id
    );
    let mut frame = (body.len() as u32).to_be_bytes().to_vec();
    frame.extend_from_slice(body.as_bytes());
    app.send_raw(&frame).await;
    assert_error(&c.recv().await, 1001, "app_disconnected");
    assert!(app.recv().await.is_none());
}

#[tokio::test(start_paused = true)]
async fn a_partial_frame_idle_past_the_deadline_drops_the_app() {
    let mut cfg = config();
    cfg.partial_deadline = Duration::from_secs(5);
    let engine = Engine::new(cfg);
    let mut app = FakeApp::register(&engine, "Notepad", true, notepad_actions()).await;
    let started = tokio::time::Instant::now();
    app.send_raw(&[0, 0, 0, 40, b'{']).await;
    assert!(app.recv().await.is_none());
    assert!(started.elapsed() >= Duration::from_secs(5));
    assert!(engine.apps().is_empty());
}

#[tokio::test(start_paused = true)]
async fn a_partial_client_line_idle_past_the_deadline_closes_the_client() {
    let mut cfg = config();
    cfg.partial_deadline = Duration::from_secs(5);
    let (engine, slug) = engine_with_echo_app(cfg).await;
    let mut c = Client::connect(&engine, &slug);
    c.send_raw(br#"{"jsonrpc":"2.0","#).await;
    let started = tokio::time::Instant::now();
    assert!(c.closed().await);
    assert!(started.elapsed() >= Duration::from_secs(5));
    assert_eq!(engine.client_count(), 0);
}

#[tokio::test]
async fn full_task_records_refuse_new_work_clearly() {
    let mut cfg = config();
    cfg.max_tasks = 2;
    let engine = Engine::new(cfg);
    let mut app = FakeApp::register(&engine, "Notepad", true, notepad_actions()).await;
    let mut c = Client::connect(&engine, &app.slug);
    start_task(&mut app, &mut c, "a").await;
    start_task(&mut app, &mut c, "b").await;
    let r = c
        .call("actions/execute", r#"{"action":"document.text.insert","expectedRevision":1}"#)
        .await;
    assert_error(&r, 1000, "busy");
    // Once one finishes, it can be evicted to make room.
    app.send(&AppMessage::Task(task("a", TaskState::Completed))).await;
    wait_for_task_state(&mut c, "a", "completed").await;
    c.call_nowait("actions/execute", r#"{"action":"document.text.insert","expectedRevision":1}"#)
        .await;
    let req = app.request().await;
    app.reply(
        req.id,
        Outcome::Ok(CallResult::Deferred { task: task("c", TaskState::Running), revision: 1 }),
    )
    .await;
    assert_eq!(s(&c.recv().await, "result.task.id"), "c");
    assert_error(&c.call("tasks/get", r#"{"id":"a"}"#).await, 1004, "task");
    assert_eq!(s(&c.call("tasks/get", r#"{"id":"c"}"#).await, "result.task.state"), "running");
}

#[tokio::test]
async fn registering_twice_on_one_channel_drops_the_app() {
    let engine = Engine::new(config());
    let mut events = engine.subscribe();
    assert_eq!(events.next().await, Some(EndpointEvent::Resync { slugs: vec![] }));
    let mut app = FakeApp::register(&engine, "Notepad", true, notepad_actions()).await;
    assert_eq!(events.next().await.unwrap(), EndpointEvent::Up { slug: "notepad".into() });
    app.send(&AppMessage::Hello(jfgui_proto::channel::Hello {
        channel_version: 1,
        display_name: "Again".into(),
        pid: 1,
        enabled: true,
        activity: false,
    }))
    .await;
    assert!(app.recv().await.is_none());
    assert_eq!(events.next().await.unwrap(), EndpointEvent::Down { slug: "notepad".into() });
    assert!(engine.apps().is_empty());
}

#[tokio::test]
async fn every_call_is_traced_with_endpoint_method_action_duration_and_outcome() {
    use std::cell::RefCell;
    // A scoped subscriber (`set_default`) races with the other tests' threads over tracing's
    // global callsite-interest cache, which made this test flaky; a global subscriber that
    // writes into a per-thread buffer cannot miss (the engine's tasks run on this test's
    // current-thread runtime, so on this thread).
    thread_local!(static LOG: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) });
    struct ThreadLog;
    impl std::io::Write for ThreadLog {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            LOG.with(|log| log.borrow_mut().extend_from_slice(b));
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    static INSTALL: std::sync::Once = std::sync::Once::new();
    INSTALL.call_once(|| {
        let subscriber = tracing_subscriber::fmt()
            .with_max_level(tracing::Level::DEBUG)
            .with_ansi(false)
            .with_writer(|| ThreadLog)
            .finish();
        tracing::subscriber::set_global_default(subscriber).expect("no other global subscriber");
    });
    tracing::callsite::rebuild_interest_cache();
    LOG.with(|log| log.borrow_mut().clear());
    let (engine, slug) = engine_with_echo_app(config()).await;
    let mut c = Client::connect(&engine, &slug);
    c.call("actions/execute", r#"{"action":"document.get"}"#).await;
    c.call("actions/describe", r#"{"action":"nope"}"#).await;
    let log = LOG.with(|log| String::from_utf8(log.borrow().clone())).unwrap();
    let done = log.lines().find(|l| l.contains("call done")).expect(&log);
    for field in [
        "endpoint=notepad",
        "method=actions/execute",
        "action=document.get",
        "duration_us=",
        "outcome=ok",
    ] {
        assert!(done.contains(field), "{field} missing in {done}");
    }
    let failed = log.lines().find(|l| l.contains("call failed")).expect(&log);
    for field in ["method=actions/describe", "action=nope", "outcome=action"] {
        assert!(failed.contains(field), "{field} missing in {failed}");
    }
}

#[tokio::test]
async fn surrogate_pairs_round_trip_and_huge_numbers_are_refused_exactly() {
    let (engine, slug) = engine_with_echo_app(config()).await;
    let mut c = Client::connect(&engine, &slug);
    // A valid surrogate pair decodes to one character and comes back as that character.
    let r = c
        .call("actions/execute", r#"{"action":"document.get","input":{"t":"\ud83d\ude00"}}"#)
        .await;
    assert_eq!(s(&r, "result.output.t"), "😀");
    // A 100 000-digit integer is a valid token but no valid limit or revision.
    let digits = "9".repeat(100_000);
    let r = c.call("actions/list", &format!(r#"{{"limit":{digits}}}"#)).await;
    assert_error(&r, -32602, "out_of_range");
    let r = c
        .call("actions/execute", &format!(r#"{{"action":"a","expectedRevision":{digits}}}"#))
        .await;
    assert_error(&r, -32602, "out_of_range");
    let r = c.call("actions/list", r#"{"limit":1e2}"#).await;
    assert!(has(&r, "result"), "{r:?}");
}

#[tokio::test]
async fn a_flooding_client_does_not_starve_another() {
    let (engine, slug) = engine_with_echo_app(config()).await;
    let mut flood = Client::connect(&engine, &slug);
    let total = 3000;
    let mut w = flood.take_writer();
    let writer = tokio::spawn(async move {
        let mut all = String::new();
        for i in 0..total {
            all.push_str(&format!(r#"{{"jsonrpc":"2.0","id":{i},"method":"agent/info"}}"#));
            all.push('\n');
        }
        w.write_all(all.as_bytes()).await.unwrap();
        w
    });
    let reader = tokio::spawn(async move {
        let mut ids = Vec::with_capacity(total);
        for _ in 0..total {
            ids.push(n(&flood.recv().await, "id"));
        }
        ids
    });
    let mut other = Client::connect(&engine, &slug);
    for _ in 0..20 {
        assert_eq!(n(&other.call("agent/info", "{}").await, "result.revision"), 7);
    }
    let mut ids = tokio::time::timeout(WAIT, reader).await.unwrap().unwrap();
    ids.sort();
    assert_eq!(ids, (0..total as i64).collect::<Vec<_>>(), "each answered exactly once");
    writer.await.unwrap();
}

#[tokio::test]
async fn an_oversized_registration_is_refused() {
    let engine = Engine::new(config());
    let mut app = FakeApp::connect(&engine, 1 << 20);
    app.send(&AppMessage::Hello(jfgui_proto::channel::Hello {
        channel_version: 1,
        display_name: "Huge".into(),
        pid: 1,
        enabled: true,
        activity: false,
    }))
    .await;
    let description = "d".repeat(250_000);
    for page in 0..5 {
        let actions = (0..4)
            .map(|i| action(&format!("a.{page}.{i}"), ActionKind::Read, &description))
            .collect();
        app.send(&AppMessage::Actions(jfgui_proto::channel::ActionsPage { actions })).await;
    }
    match app.recv().await {
        Some(DaemonMessage::Refused(r)) => {
            assert_eq!(r.reason, "invalid_registration");
            assert!(r.message.contains("bytes"), "{}", r.message);
        }
        other => panic!("expected refused, got {other:?}"),
    }
    assert!(engine.apps().is_empty());
}

/// The handshake ends in `welcome` or `refused{reason}`. A hello the strict decoder
/// rejects (here an unknown field, as from a newer app) is refused with the decoder's
/// message, so the app can say why instead of seeing a bare close.
#[tokio::test]
async fn an_undecodable_hello_is_refused_with_the_reason() {
    let engine = Engine::new(config());
    let mut app = FakeApp::connect(&engine, 1 << 16);
    let body =
        r#"{"hello":{"channelVersion":1,"displayName":"X","pid":1,"enabled":true,"extra":1}}"#;
    let mut frame = (body.len() as u32).to_be_bytes().to_vec();
    frame.extend_from_slice(body.as_bytes());
    app.send_raw(&frame).await;
    match app.recv().await {
        Some(DaemonMessage::Refused(r)) => {
            assert_eq!(r.reason, "invalid_registration");
            assert!(r.message.contains("extra"), "{}", r.message);
        }
        other => panic!("expected refused, got {other:?}"),
    }
    assert!(engine.apps().is_empty());
}

#[tokio::test]
async fn describe_and_list_splice_the_cached_encoding_within_the_bounds() {
    let mut cfg = config();
    cfg.json.max_bytes = 4096;
    let engine = Engine::new(cfg);
    let mut big = action("big.schema", ActionKind::Read, "Has a large \"schema\"\n");
    big.input_schema =
        parse(&format!(r#"{{"type":"object","description":"{}\u2028"}}"#, "x\\n".repeat(1500)));
    let mut actions = notepad_actions();
    actions.push(big.clone());
    let app = FakeApp::register(&engine, "Notepad", true, actions).await;
    let mut c = Client::connect(&engine, &app.slug);
    // Byte for byte what encoding the registration entry's tree gives.
    c.send(r#"{"jsonrpc":"2.0","id":7,"method":"actions/describe","params":{"action":"document.get"}}"#)
        .await;
    let line = c.recv_raw().await.unwrap();
    let mut expected =
        br#"{"jsonrpc":"2.0","id":7,"result":{"protocolVersion":"1","action":"#.to_vec();
    let info = jfgui_proto::to_value(&notepad_actions()[1]).unwrap();
    jfgui_proto::encode_into(&info, &jfgui_proto::Limits::DEFAULT, &mut expected).unwrap();
    expected.extend_from_slice(b"}}");
    assert_eq!(String::from_utf8(line).unwrap(), String::from_utf8(expected).unwrap());
    // A cached object over the answer's bound is still refused as a whole, never cut.
    let r = c.call("actions/describe", r#"{"action":"big.schema"}"#).await;
    assert_error(&r, 1003, "response_too_large");
    assert_eq!(s(&r, "error.data.action"), "big.schema");
    // The list rows are spliced too, escapes and all.
    let r = c.call("actions/list", r#"{"query":"large"}"#).await;
    assert_eq!(s(&r, "result.actions.0.description"), "Has a large \"schema\"\n");
    assert_eq!(s(&r, "result.actions.0.kind"), "read");
    let r = c.call("actions/list", "{}").await;
    assert_eq!(at(&r, "result.actions").as_array().unwrap().len(), 4);
}
