//! Sketch through the real dispatcher: agent edits and the revision, local (GUI) calls, atomic
//! batches that roll back or commit as one undo step, inspection with the layout, the export
//! task with cancellation, the rendered PNG as a resource, and the agent activity feed.

use std::time::Duration;

use jfgui_host_sdk::{Dispatcher, Host, Reason, TaskState, Value};
use jfgui_proto::channel::{BatchCall, Call, CallResult, ExecuteCall, ReadResource};

use super::{Layout, PixelRect, RENDER_URI, Sketch};
use crate::export::EXPORT_URI;

fn json(text: &str) -> Value {
    jfgui_proto::parse(text.as_bytes(), &jfgui_proto::Limits::DEFAULT).unwrap()
}

fn call(action: &str, input: &str, expected: Option<u64>) -> ExecuteCall {
    ExecuteCall {
        action: action.into(),
        input: json(input).into(),
        expected_revision: expected,
        consent: None,
    }
}

fn setup(export: Duration) -> (Dispatcher, Sketch) {
    let app = Sketch::new(export);
    let mut d = Dispatcher::new(&app).unwrap();
    d.set_enabled(true);
    (d, app)
}

fn output(r: CallResult) -> (Value, u64) {
    match r {
        CallResult::Executed { output, revision } => (output.into_value(), revision),
        other => panic!("{other:?}"),
    }
}

const RED_RECT: &str =
    r##"{"kind":"rectangle","points":[[40,40],[200,160]],"color":"red","fill":"#ff0000"}"##;
const BLUE_ELLIPSE: &str = r#"{"kind":"ellipse","points":[[300,60],[500,220]],"fill":"blue"}"#;

#[test]
fn agent_edits_move_the_revision_and_show_in_the_feed() {
    let (mut d, mut app) = setup(Duration::ZERO);
    let (out, rev) = output(d.execute(&mut app, 1, &call("shape.add", RED_RECT, Some(1))).unwrap());
    assert_eq!((out.get("id").and_then(Value::as_u64), rev), (Some(1), 2));
    let e = d.execute(&mut app, 2, &call("shape.add", BLUE_ELLIPSE, Some(1))).unwrap_err();
    assert_eq!(e.reason, Reason::StaleRevision { current_revision: 2 });
    assert_eq!(app.canvas().items().len(), 1, "a stale write changes nothing");
    let (out, _) = output(d.execute(&mut app, 3, &call("canvas.get", "{}", None)).unwrap());
    let shapes = out.get("shapes").and_then(Value::as_array).unwrap();
    assert_eq!(shapes[0].get("fill").and_then(Value::as_str), Some("#ff0000"));
    let e = d.execute(&mut app, 4, &call("shape.update", r#"{"id":9}"#, Some(2))).unwrap_err();
    assert_eq!(e.reason, Reason::HostError { code: Some("no_such_shape".into()) });
    assert!(app.activity().last().is_none(), "the feed is the daemon's notices only");
}

#[test]
fn the_daemons_activity_notices_feed_the_window_and_inspect() {
    let (_, mut app) = setup(Duration::ZERO);
    Host::activity(
        &mut app,
        &jfgui_host_sdk::Activity {
            client: "claude-code 1.2 via endpoint".into(),
            action: "shape.delete".into(),
            outcome: "failed".into(),
            reason: Some("no_such_shape".into()),
        },
    );
    let last = app.activity().last().unwrap();
    assert_eq!(
        (last.client.as_str(), last.outcome.as_str()),
        ("claude-code 1.2 via endpoint", "failed")
    );
    let seen = app.inspect(&json("{}")).unwrap();
    let seen = seen.get("lastAgentAction").unwrap();
    assert_eq!(seen.get("action").and_then(Value::as_str), Some("shape.delete"));
    assert_eq!(seen.get("count").and_then(Value::as_u64), Some(1));
}

#[test]
fn local_calls_are_not_agent_activity() {
    let (mut d, mut app) = setup(Duration::ZERO);
    let (_, rev) = output(d.execute_local(&mut app, "shape.add", &json(RED_RECT)).unwrap());
    assert_eq!(rev, 2);
    d.execute_local(&mut app, "edit.undo", &json("{}")).unwrap();
    assert!(app.canvas().items().is_empty());
    assert!(app.activity().last().is_none());
}

#[test]
fn atomic_batches_roll_back_or_commit_as_one_undo_step() {
    let (mut d, mut app) = setup(Duration::ZERO);
    d.execute(&mut app, 1, &call("shape.add", RED_RECT, Some(1))).unwrap();
    let before = app.canvas().clone();
    let failing = BatchCall {
        calls: vec![
            call("shape.add", BLUE_ELLIPSE, Some(2)),
            call("shape.update", r#"{"id":42}"#, Some(2)),
        ],
        atomic: true,
        stop_on_error: true,
        consent: None,
    };
    let e = d.handle(&mut app, 2, &Call::Batch(failing)).unwrap_err();
    assert_eq!(e.reason.as_str(), "rolled_back");
    assert_eq!(app.canvas(), &before, "shapes, history and revision as before");

    let ok = BatchCall {
        calls: vec![
            call("shape.add", BLUE_ELLIPSE, Some(2)),
            call("shape.update", r#"{"id":1,"color":"green"}"#, Some(2)),
        ],
        atomic: true,
        stop_on_error: true,
        consent: None,
    };
    d.handle(&mut app, 3, &Call::Batch(ok)).unwrap();
    assert_eq!(app.canvas().items().len(), 2);
    assert_eq!(app.canvas().undo_depth(), 2);
    d.execute_local(&mut app, "edit.undo", &json("{}")).unwrap();
    assert_eq!(app.canvas().items(), before.items(), "one undo takes back the whole batch");
}

#[test]
fn inspection_reports_the_canvas_and_the_layout() {
    let (mut d, mut app) = setup(Duration::ZERO);
    let inspect = |d: &mut Dispatcher, app: &mut Sketch, input: &str| match d
        .handle(app, 1, &Call::Inspect { input: json(input) })
        .unwrap()
    {
        CallResult::Inspected { revision, state } => (revision, state),
        other => panic!("{other:?}"),
    };
    let (rev, state) = inspect(&mut d, &mut app, "{}");
    assert_eq!(rev, 1);
    assert_eq!(state.get("canvas").and_then(|c| c.get("width")).and_then(Value::as_u64), Some(640));
    assert!(state.get("view").is_none(), "no window has drawn yet");
    app.set_layout(Layout {
        zoom: 1.0,
        pixels_per_point: 1.0,
        canvas: PixelRect { x: 8.0, y: 40.5, width: 640.0, height: 400.0 },
        agent_toggle: PixelRect::default(),
        prompt: None,
    });
    let (_, state) = inspect(&mut d, &mut app, r#"{"sinceRevision":1}"#);
    assert_eq!(state.get("unchanged").and_then(Value::as_bool), Some(true));
    let y = state.get("view").and_then(|v| v.get("canvas")).and_then(|c| c.get("y"));
    assert_eq!(y.and_then(Value::as_number).map(|n| n.to_f64()), Some(40.5));
    let e = d.handle(&mut app, 1, &Call::Inspect { input: json(r#"{"since":1}"#) }).unwrap_err();
    assert_eq!(e.reason, Reason::SchemaViolation { pointer: "/since".into() });
}

#[test]
fn export_completes_into_an_svg_resource_and_honours_cancellation() {
    let (mut d, mut app) = setup(Duration::from_secs(3600));
    d.execute(&mut app, 1, &call("shape.add", RED_RECT, Some(1))).unwrap();
    let task = match d.execute(&mut app, 2, &call("document.export", "{}", Some(2))).unwrap() {
        CallResult::Deferred { task, .. } => task,
        other => panic!("{other:?}"),
    };
    d.handle(&mut app, 3, &Call::CancelTask { id: task.id.clone() }).unwrap();
    d.tick(&mut app);
    assert_eq!(d.tasks().state(&task.id), Some(TaskState::Cancelled));
    assert!(app.resources().iter().all(|r| r.uri != EXPORT_URI), "nothing exported");

    let (mut d, mut app) = setup(Duration::ZERO);
    d.execute(&mut app, 1, &call("shape.add", BLUE_ELLIPSE, Some(1))).unwrap();
    let task = match d.execute(&mut app, 2, &call("document.export", "{}", Some(2))).unwrap() {
        CallResult::Deferred { task, .. } => task,
        other => panic!("{other:?}"),
    };
    d.tick(&mut app);
    assert_eq!(d.tasks().state(&task.id), Some(TaskState::Completed));
    let read = ReadResource { uri: EXPORT_URI.into(), offset: 0, limit: 65536 };
    match d.handle(&mut app, 3, &Call::ReadResource(read)).unwrap() {
        CallResult::Chunk(c) => {
            assert!(c.eof);
            assert_eq!(c.mime_type, "image/svg+xml");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn render_produces_a_png_resource() {
    let (mut d, mut app) = setup(Duration::ZERO);
    let (out, _) =
        output(d.execute(&mut app, 1, &call("ui.render", r#"{"scale":2}"#, None)).unwrap());
    assert_eq!(out.get("uri").and_then(Value::as_str), Some(RENDER_URI));
    assert_eq!(
        (out.get("width").and_then(Value::as_u64), out.get("height").and_then(Value::as_u64)),
        (Some(1280), Some(800))
    );
    let read = ReadResource { uri: RENDER_URI.into(), offset: 0, limit: 16 };
    match d.handle(&mut app, 2, &Call::ReadResource(read)).unwrap() {
        CallResult::Chunk(c) => assert!(!c.eof && c.data.starts_with("iVBORw0KGgo"), "{c:?}"),
        other => panic!("{other:?}"),
    }
}

/// Runs what an endpoint runs between pumps: the task updates go out, allowed calls run.
fn deliver(d: &mut Dispatcher, app: &mut Sketch) {
    d.tick(app);
    d.take_task_events();
    d.run_allowed(app);
}

#[test]
fn clear_and_delete_wait_for_the_user_in_the_window_and_nothing_runs_before() {
    let (_, app) = setup(Duration::ZERO);
    let mut app = app.asking();
    let mut d = Dispatcher::new(&app).unwrap();
    d.set_enabled(true);
    d.execute(&mut app, 1, &call("shape.add", RED_RECT, Some(1))).unwrap();
    let waiting = |r: CallResult| match r {
        CallResult::Deferred { task, .. } => task,
        other => panic!("{other:?}"),
    };
    let clear = waiting(d.execute(&mut app, 2, &call("canvas.clear", "{}", Some(2))).unwrap());
    let delete =
        waiting(d.execute(&mut app, 3, &call("shape.delete", r#"{"id":1}"#, Some(2))).unwrap());
    let shown = app.prompt().unwrap();
    assert_eq!((shown.ticket.as_str(), shown.title()), (clear.id.as_str(), "Clear the canvas"));
    assert_eq!(shown.agent_name(), "An unknown agent");
    // The user denies the first; the second is shown next and allowed.
    app.answered(&clear.id);
    d.answer(&clear.id, jfgui_host_sdk::Answer::Deny).unwrap();
    assert_eq!(app.prompt().map(|c| c.title()), Some("Delete a shape"));
    deliver(&mut d, &mut app);
    assert_eq!(app.canvas().items().len(), 1, "denied: nothing ran");
    app.answered(&delete.id);
    d.answer(&delete.id, jfgui_host_sdk::Answer::Allow).unwrap();
    deliver(&mut d, &mut app);
    assert!(app.canvas().items().is_empty());
    assert_eq!(d.tasks().state(&delete.id), Some(TaskState::Completed));
    assert!(app.prompt().is_none());
    // A withdrawn call's prompt closes.
    d.execute_local(&mut app, "edit.undo", &json("{}")).unwrap();
    let again = waiting(d.execute(&mut app, 4, &call("canvas.clear", "{}", Some(4))).unwrap());
    d.handle(&mut app, 5, &Call::CancelTask { id: again.id.clone() }).unwrap();
    d.tick(&mut app);
    assert!(app.prompt().is_none());
    assert_eq!(app.canvas().items().len(), 1);
}

#[test]
fn without_a_window_nobody_is_asked_and_nothing_runs() {
    let (mut d, mut app) = setup(Duration::ZERO);
    d.execute(&mut app, 1, &call("shape.add", RED_RECT, Some(1))).unwrap();
    let task = match d.execute(&mut app, 2, &call("canvas.clear", "{}", Some(2))).unwrap() {
        CallResult::Deferred { task, .. } => task,
        other => panic!("{other:?}"),
    };
    let ended = d.tasks().get(&task.id).unwrap();
    assert_eq!(ended.error.as_ref().map(|e| e.reason.clone()), Some(Reason::NoConfirmationUi));
    assert!(app.prompt().is_none());
    assert_eq!(app.canvas().items().len(), 1);
}
