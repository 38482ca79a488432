//! The notepad through the real dispatcher: edits, atomic batches with rollback, inspection,
//! the export task with cancellation, and the rendered PNG as a resource.

use std::time::Duration;

use jfgui_host_sdk::{ActionError, Dispatcher, ErrorClass, Map, Reason, TaskState, Value};
use jfgui_proto::channel::{BatchCall, BatchOutcome, Call, CallResult, ExecuteCall, ReadResource};

use super::{Notepad, RENDER_URI};
use crate::export::{Clock, EXPORT_URI};

/// Time that stands still: an export of zero duration completes at its first tick, a long one
/// never does.
#[derive(Debug)]
struct Still;

impl Clock for Still {
    fn now(&self) -> Duration {
        Duration::ZERO
    }
}

fn obj(members: &[(&str, Value)]) -> Value {
    let mut m = Map::new();
    for (k, v) in members {
        m.insert(*k, v.clone());
    }
    Value::Object(m)
}

fn call(action: &str, input: Value, expected: Option<u64>) -> ExecuteCall {
    ExecuteCall {
        action: action.into(),
        input: input.into(),
        expected_revision: expected,
        consent: None,
    }
}

fn setup(text: &str) -> (Dispatcher, Notepad) {
    let app = Notepad::new(text, Duration::ZERO, Box::new(Still)).unwrap();
    let mut d = Dispatcher::new(&app).unwrap();
    d.set_enabled(true);
    (d, app)
}

fn inspect(d: &mut Dispatcher, app: &mut Notepad, input: Value) -> (u64, Value) {
    match d.handle(app, 1, &Call::Inspect { input }).unwrap() {
        CallResult::Inspected { revision, state } => (revision, state),
        other => panic!("{other:?}"),
    }
}

#[test]
fn edits_and_inspection() {
    let (mut d, mut app) = setup("hello");
    let r = d
        .execute(
            &mut app,
            1,
            &call("document.text.insert", obj(&[("text", " world".into())]), Some(1)),
        )
        .unwrap();
    match r {
        CallResult::Executed { output, revision } => {
            assert_eq!(revision, 2);
            assert_eq!(output.get("length").and_then(Value::as_u64), Some(11));
        }
        other => panic!("{other:?}"),
    }
    let (rev, state) = inspect(&mut d, &mut app, obj(&[]));
    assert_eq!(rev, 2);
    assert_eq!(state.get("text").and_then(Value::as_str), Some("hello world"));
    assert_eq!(state.get("undoDepth").and_then(Value::as_u64), Some(1));
    assert_eq!(
        state.get("selection"),
        Some(&obj(&[("start", 11u64.into()), ("end", 11u64.into())]))
    );
    let (_, state) = inspect(&mut d, &mut app, obj(&[("sinceRevision", 2u64.into())]));
    assert_eq!(state, obj(&[("unchanged", true.into())]));
    let (_, state) = inspect(&mut d, &mut app, obj(&[("sinceRevision", 1u64.into())]));
    assert!(state.get("text").is_some());
    let e = d
        .handle(&mut app, 1, &Call::Inspect { input: obj(&[("since", 1u64.into())]) })
        .unwrap_err();
    assert_eq!(e.reason, Reason::SchemaViolation { pointer: "/since".into() });
}

#[test]
fn out_of_range_is_a_host_error_without_change() {
    let (mut d, mut app) = setup("abc");
    let e = d
        .execute(
            &mut app,
            1,
            &call(
                "document.text.delete",
                obj(&[("start", 1u64.into()), ("end", 9u64.into())]),
                Some(1),
            ),
        )
        .unwrap_err();
    assert_eq!(e.reason, Reason::HostError { code: Some("out_of_range".into()) });
    assert_eq!((app.document().text(), app.document().revision()), ("abc", 1));
    let e = d
        .execute(&mut app, 1, &call("selection.set", obj(&[("start", 1u64.into())]), Some(1)))
        .unwrap_err();
    assert!(matches!(e.reason, Reason::SchemaViolation { .. }), "missing member: {e:?}");
}

fn atomic(calls: Vec<ExecuteCall>) -> Call {
    Call::Batch(BatchCall { calls, atomic: true, stop_on_error: true, consent: None })
}

#[test]
fn atomic_batch_rolls_back_or_commits_as_one_undo_step() {
    let (mut d, mut app) = setup("abc");
    let before = app.document().clone();
    let failing = atomic(vec![
        call("document.text.insert", obj(&[("text", "X".into())]), Some(1)),
        call("selection.set", obj(&[("start", 0u64.into()), ("end", 1u64.into())]), Some(1)),
        call(
            "document.text.delete",
            obj(&[("start", 0u64.into()), ("end", 99u64.into())]),
            Some(1),
        ),
    ]);
    let e = d.handle(&mut app, 1, &failing).unwrap_err();
    assert!(matches!(e.reason, Reason::RolledBack { index: 2, .. }), "{e:?}");
    assert_eq!(app.document(), &before, "text, selection, history and revision restored");

    let ok = atomic(vec![
        call("document.text.insert", obj(&[("text", "X".into())]), Some(1)),
        call(
            "document.text.replace",
            obj(&[("start", 0u64.into()), ("end", 1u64.into()), ("text", "Z".into())]),
            Some(1),
        ),
        call("document.get", obj(&[]), None),
    ]);
    match d.handle(&mut app, 2, &ok).unwrap() {
        CallResult::Batch { results, revision } => {
            assert_eq!(revision, 3);
            match &results[2].outcome {
                BatchOutcome::Output(v) => {
                    assert_eq!(v.get("text").and_then(Value::as_str), Some("ZbcX"))
                }
                other => panic!("{other:?}"),
            }
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(app.document().undo_depth(), 1);
    d.execute(&mut app, 3, &call("edit.undo", obj(&[]), Some(3))).unwrap();
    assert_eq!(app.document().text(), "abc", "one undo reverts the whole batch");

    // A deferred export inside an atomic batch rolls back.
    let rev = app.document().revision();
    let deferred = atomic(vec![
        call("document.text.insert", obj(&[("text", "Q".into())]), Some(rev)),
        call("document.export", obj(&[]), Some(rev)),
    ]);
    let e = d.handle(&mut app, 4, &deferred).unwrap_err();
    match e.reason {
        Reason::RolledBack { index: 1, cause } => {
            assert_eq!(cause.reason, Reason::DeferredInAtomic)
        }
        other => panic!("{other:?}"),
    }
    assert_eq!((app.document().text(), app.document().revision()), ("abc", rev));
}

fn read(d: &mut Dispatcher, app: &mut Notepad, uri: &str) -> Result<Vec<u8>, ActionError> {
    use base64::Engine;
    let mut out = Vec::new();
    loop {
        let call = Call::ReadResource(ReadResource {
            uri: uri.into(),
            offset: out.len() as u64,
            limit: 100,
        });
        match d.handle(app, 9, &call)? {
            CallResult::Chunk(c) => {
                out.extend(base64::engine::general_purpose::STANDARD.decode(c.data).unwrap());
                if c.eof {
                    assert_eq!(c.total_size, out.len() as u64);
                    return Ok(out);
                }
            }
            other => panic!("{other:?}"),
        }
    }
}

#[test]
fn export_completes_into_a_resource_and_honours_cancellation() {
    let (mut d, mut app) = setup("exported text");
    assert_eq!(read(&mut d, &mut app, EXPORT_URI).unwrap_err().class(), ErrorClass::NotFound);
    let task = match d.execute(&mut app, 1, &call("document.export", obj(&[]), Some(1))).unwrap() {
        CallResult::Deferred { task, revision } => {
            assert_eq!(revision, 1, "exporting changes no state");
            task
        }
        other => panic!("{other:?}"),
    };
    d.tick(&mut app);
    let done = d.tasks().get(&task.id).unwrap();
    assert_eq!(done.state, TaskState::Completed);
    assert_eq!(done.result.as_ref().unwrap().get("uri").and_then(Value::as_str), Some(EXPORT_URI));
    assert_eq!(read(&mut d, &mut app, EXPORT_URI).unwrap(), b"exported text");
    match d.handle(&mut app, 2, &Call::ListResources {}).unwrap() {
        CallResult::Resources { resources } => {
            let uris: Vec<&str> = resources.iter().map(|r| r.uri.as_str()).collect();
            assert_eq!(uris, [RENDER_URI, EXPORT_URI]);
        }
        other => panic!("{other:?}"),
    }

    // A slow export, cancelled before it finishes.
    let mut app = Notepad::new("slow", Duration::from_secs(3600), Box::new(Still)).unwrap();
    let mut d = Dispatcher::new(&app).unwrap();
    d.set_enabled(true);
    let task = match d.execute(&mut app, 1, &call("document.export", obj(&[]), Some(1))).unwrap() {
        CallResult::Deferred { task, .. } => task,
        other => panic!("{other:?}"),
    };
    assert!(d.tick(&mut app).is_some(), "a running export wants a tick later");
    match d.handle(&mut app, 2, &Call::CancelTask { id: task.id.clone() }).unwrap() {
        CallResult::Task(t) => assert_eq!(t.state, TaskState::Cancelling),
        other => panic!("{other:?}"),
    }
    assert_eq!(d.tick(&mut app), None);
    assert_eq!(d.tasks().state(&task.id), Some(TaskState::Cancelled));
    assert!(read(&mut d, &mut app, EXPORT_URI).is_err(), "a cancelled export produces nothing");
}

#[test]
fn render_produces_a_png_resource() {
    let (mut d, mut app) = setup("Hi\nthere");
    let (w, h, size) = match d
        .handle(&mut app, 1, &Call::Render { input: obj(&[("scale", 2u64.into())]) })
        .unwrap()
    {
        CallResult::Rendered { output, revision } => {
            assert_eq!(revision, 1);
            assert_eq!(output.get("uri").and_then(Value::as_str), Some(RENDER_URI));
            let n = |k| output.get(k).and_then(Value::as_u64).unwrap();
            (n("width"), n("height"), n("size"))
        }
        other => panic!("{other:?}"),
    };
    assert_eq!((w, h), ((5 * 8 + 8) * 2, (2 * 8 + 8) * 2));
    let png = read(&mut d, &mut app, RENDER_URI).unwrap();
    assert_eq!(png.len() as u64, size);
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    assert_eq!(u32::from_be_bytes(png[16..20].try_into().unwrap()) as u64, w);
    assert_eq!(u32::from_be_bytes(png[20..24].try_into().unwrap()) as u64, h);
    let e =
        d.handle(&mut app, 2, &Call::Render { input: obj(&[("scale", 9u64.into())]) }).unwrap_err();
    assert_eq!(e.reason, Reason::SchemaViolation { pointer: "/scale".into() });
}

/// Answers every prompt with the same answer.
#[derive(Debug)]
struct Answers(jfgui_host_sdk::Answer);

impl super::Prompter for Answers {
    fn ask(&mut self, _: &jfgui_host_sdk::Confirmation) -> Option<jfgui_host_sdk::Answer> {
        Some(self.0)
    }
    fn withdraw(&mut self, _: &str) {}
}

/// `document.clear` through the dispatcher, answered `answer` (`None`: no prompter); the
/// task as it ended, and the notepad.
fn clear(
    answer: Option<jfgui_host_sdk::Answer>,
) -> (jfgui_host_sdk::TaskSnapshot, Dispatcher, Notepad) {
    let (_, app) = setup("keep me");
    let mut app = match answer {
        Some(a) => app.with_prompter(Box::new(Answers(a))),
        None => app,
    };
    let mut d = Dispatcher::new(&app).unwrap();
    d.set_enabled(true);
    let task = match d.execute(&mut app, 1, &call("document.clear", obj(&[]), Some(1))).unwrap() {
        CallResult::Deferred { task, .. } => task,
        other => panic!("{other:?}"),
    };
    assert!(task.awaiting.is_some(), "the call waits for the user");
    d.take_task_events();
    d.run_allowed(&mut app);
    let ended = d.tasks().get(&task.id).cloned().unwrap();
    (ended, d, app)
}

#[test]
fn clearing_asks_first_and_is_one_undo_step() {
    let (task, mut d, mut app) = clear(Some(jfgui_host_sdk::Answer::Allow));
    assert_eq!(task.state, TaskState::Completed);
    assert_eq!((app.text(), app.document().revision()), ("", 2));
    d.execute_local(&mut app, "edit.undo", &obj(&[])).unwrap();
    assert_eq!(app.text(), "keep me", "one undo step brings it back");
    let (task, _, app) = clear(Some(jfgui_host_sdk::Answer::Deny));
    assert_eq!(task.error.map(|e| e.reason), Some(Reason::DeniedByUser));
    assert_eq!(app.text(), "keep me");
    let (task, _, app) = clear(None);
    assert_eq!(
        task.error.map(|e| e.reason),
        Some(Reason::NoConfirmationUi),
        "no prompter: nobody to ask"
    );
    assert_eq!(app.text(), "keep me");
}
