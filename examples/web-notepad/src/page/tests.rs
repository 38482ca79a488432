//! The page's Notepad on the bridge's JSON bodies, as the script drives it: registration,
//! the enable switch, agent writes with and without a current revision, the user's edits in
//! between, and the export task on the page's clock.

use std::time::Duration;

use jfgui_example_notepad::Selection;
use jfgui_host_sdk::bridge::PostRoute;
use jfgui_host_sdk::bridge::web::WebApp;
use jfgui_proto::channel::{AppMessage, TaskState};
use jfgui_proto::{Limits, Value};

use super::{DISPLAY_NAME, Page, difference};

fn parse(bytes: &[u8]) -> Value {
    jfgui_proto::parse(bytes, &Limits::DEFAULT).unwrap()
}

fn connected(text: &str) -> Page {
    let mut page = Page::new(text).unwrap();
    let _ = page.endpoint().connect_body();
    page.endpoint()
        .connected(br#"{"client":"c","channelVersion":1,"maxMessageBytes":1048576}"#)
        .unwrap();
    page
}

/// One `/poll` answer carrying `request` as id `id`; returns the posted response.
fn ask(page: &mut Page, id: u64, request: &str, now_ms: u64) -> Value {
    let answer = format!(r#"{{"requests":[{{"id":{id},"request":{request}}}]}}"#);
    assert_eq!(page.poll(answer.as_bytes(), Duration::from_millis(now_ms)).unwrap(), 1);
    let post = page.endpoint().next_post().unwrap();
    assert_eq!(post.route, PostRoute::Result);
    let body = parse(&post.body);
    assert_eq!(body.get("id").and_then(Value::as_u64), Some(id));
    body.get("response").unwrap().clone()
}

fn reason(response: &Value) -> Option<&str> {
    response.get("error")?.get("reason")?.as_str()
}

fn revision(page: &Page) -> u64 {
    parse(&page.view()).get("revision").and_then(Value::as_u64).unwrap()
}

fn insert(text: &str, expected: u64) -> String {
    format!(
        r#"{{"execute":{{"action":"document.text.insert","input":{{"text":"{text}"}},"expectedRevision":{expected}}}}}"#
    )
}

fn message(page: &mut Page) -> AppMessage {
    let post = page.endpoint().next_post().expect("a message");
    assert_eq!(post.route, PostRoute::Message);
    jfgui_proto::from_value(parse(&post.body).get("message").unwrap().clone()).unwrap()
}

#[test]
fn registers_disabled_with_every_notepad_action() {
    let mut page = Page::new("").unwrap();
    let body = parse(&page.endpoint().connect_body());
    let app = body.get("app").unwrap();
    let hello = app.get("hello").unwrap();
    assert_eq!(hello.get("displayName").and_then(Value::as_str), Some(DISPLAY_NAME));
    assert_eq!(hello.get("enabled"), Some(&Value::Bool(false)));
    let names: Vec<&str> = app
        .get("actions")
        .and_then(Value::as_array)
        .unwrap()
        .iter()
        .map(|a| a.get("name").and_then(Value::as_str).unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "document.text.insert",
            "document.text.replace",
            "document.text.delete",
            "selection.set",
            "edit.undo",
            "edit.redo",
            "document.clear",
            "document.get",
            "document.export",
            "ui.render"
        ]
    );
}

#[test]
fn agents_write_only_when_enabled_and_current() {
    let mut page = connected("Hi");
    let refused = ask(&mut page, 1, &insert("!", 1), 0);
    assert_eq!(reason(&refused), Some("disabled"));
    page.endpoint().set_enabled(true);
    assert!(matches!(message(&mut page), AppMessage::Enabled(e) if e.enabled));
    let stale = ask(&mut page, 2, &insert("!", 7), 0);
    assert_eq!(reason(&stale), Some("stale_revision"));
    assert_eq!(revision(&page), 1, "a stale write changes nothing");
    let ok = ask(&mut page, 3, &insert("!", 1), 0);
    assert_eq!(
        ok.get("ok").unwrap().get("executed").unwrap().get("revision").unwrap().as_u64(),
        Some(2)
    );
    let view = parse(&page.view());
    assert_eq!(view.get("text").and_then(Value::as_str), Some("Hi!"));
    assert_eq!(view.get("enabled"), Some(&Value::Bool(true)));
}

#[test]
fn the_users_typing_moves_the_revision_an_agent_must_name() {
    let mut page = connected("");
    page.endpoint().set_enabled(true);
    let _ = page.endpoint().next_post();
    // The user types "ab", one key at a time: the caret follows the text.
    assert!(page.user_edit("a", Selection { start: 1, end: 1 }).unwrap());
    assert!(page.user_edit("ab", Selection { start: 2, end: 2 }).unwrap());
    assert_eq!(revision(&page), 3);
    // Moving the caret is a change too; the same state again is none.
    assert!(page.user_edit("ab", Selection { start: 0, end: 0 }).unwrap());
    assert!(!page.user_edit("ab", Selection { start: 0, end: 0 }).unwrap());
    // An agent that read revision 3 is now stale.
    assert_eq!(reason(&ask(&mut page, 1, &insert("x", 3), 0)), Some("stale_revision"));
    let ok = ask(&mut page, 2, &insert("x", 4), 0);
    assert!(ok.get("ok").is_some(), "{ok:?}");
    let view = parse(&page.view());
    assert_eq!(view.get("text").and_then(Value::as_str), Some("xab"));
    // The user's edit is one undo step an agent can undo.
    assert!(page.user_edit("xaYb", Selection { start: 3, end: 3 }).unwrap());
    let undo = r#"{"execute":{"action":"edit.undo","input":{},"expectedRevision":6}}"#;
    assert!(ask(&mut page, 3, undo, 0).get("ok").is_some());
    assert_eq!(parse(&page.view()).get("text").and_then(Value::as_str), Some("xab"));
}

#[test]
fn a_rejected_user_edit_leaves_the_document_as_it_was() {
    let mut page = connected("keep");
    let huge = "x".repeat(70_000);
    assert!(page.user_edit(&huge, Selection { start: 0, end: 0 }).is_err());
    let out_of_range = page.user_edit("keep", Selection { start: 9, end: 9 });
    assert!(out_of_range.is_err());
    let view = parse(&page.view());
    assert_eq!(view.get("text").and_then(Value::as_str), Some("keep"));
    assert_eq!(revision(&page), 1);
}

#[test]
fn the_export_task_runs_on_the_pages_clock() {
    let mut page = connected("export me");
    page.endpoint().set_enabled(true);
    let _ = page.endpoint().next_post();
    let started = ask(
        &mut page,
        1,
        r#"{"execute":{"action":"document.export","input":{},"expectedRevision":1}}"#,
        10_000,
    );
    let deferred = started.get("ok").unwrap().get("deferred").unwrap();
    let task = deferred.get("task").unwrap().get("id").and_then(Value::as_str).unwrap().to_owned();
    assert_eq!(page.tick(Duration::from_millis(10_000)), Some(Duration::from_millis(200)));
    assert!(page.endpoint().next_post().is_none(), "no step is due yet");
    page.tick(Duration::from_millis(11_000));
    match message(&mut page) {
        AppMessage::Task(t) => {
            assert_eq!((t.id.as_str(), t.state), (task.as_str(), TaskState::Running));
            assert_eq!(t.progress.unwrap().done, 5);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(page.tick(Duration::from_millis(12_000)), None);
    match message(&mut page) {
        AppMessage::Task(t) => assert_eq!(t.state, TaskState::Completed),
        other => panic!("{other:?}"),
    }
    let read = r#"{"readResource":{"uri":"export://document.txt","offset":0,"limit":100}}"#;
    let chunk = ask(&mut page, 2, read, 12_000);
    let chunk = chunk.get("ok").unwrap().get("chunk").unwrap();
    assert_eq!(chunk.get("data").and_then(Value::as_str), Some("ZXhwb3J0IG1l"));
}

#[test]
fn differences_are_the_smallest_replacement_in_characters() {
    assert_eq!(difference("abc", "abc"), None);
    assert_eq!(difference("ac", "abc"), Some((1, 1, "b")));
    assert_eq!(difference("aa", "aaa"), Some((2, 2, "a")), "after the common prefix");
    assert_eq!(difference("abc", "ac"), Some((1, 2, "")));
    assert_eq!(difference("héllo", "hallo"), Some((1, 2, "a")));
    assert_eq!(difference("x😀y", "x😀😀y"), Some((2, 2, "😀")));
    assert_eq!(difference("abc", ""), Some((0, 3, "")));
    assert_eq!(difference("", "new"), Some((0, 0, "new")));
    assert_eq!(difference("one two", "one 2"), Some((4, 7, "2")));
}
