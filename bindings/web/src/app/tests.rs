//! The generic host on the bridge's JSON bodies, with a counter app written as the page's
//! script would be (a [`Script`] that answers JSON requests): the Dispatcher's contracts hold
//! before the script is asked, the script's answers become results, errors and tasks.

use alloc::rc::Rc;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::cell::RefCell;
use core::time::Duration;

use jfgui_host_sdk::bridge::PostRoute;
use jfgui_host_sdk::bridge::web::WebApp;
use jfgui_proto::{Limits, Value};

use super::ScriptApp;
use crate::script::Script;

/// The counter's state and every method the script was asked, in order.
#[derive(Debug, Default)]
struct Counter {
    value: i64,
    revision: u64,
    asked: Vec<String>,
}

/// The script: a counter with `counter.get`, `counter.add` (by -100..100, domain
/// `counter`, with transactions) and `counter.export` (deferred).
#[derive(Debug, Clone, Default)]
struct CounterScript(Rc<RefCell<Counter>>);

fn text(v: &Value) -> String {
    String::from_utf8(jfgui_proto::encode(v, &Limits::DEFAULT).unwrap()).unwrap()
}

impl Script for CounterScript {
    fn call(&self, request: &[u8]) -> Vec<u8> {
        let request = jfgui_proto::parse(request, &Limits::DEFAULT).unwrap();
        let method = request.get("method").and_then(Value::as_str).unwrap().to_string();
        let params = request.get("params").unwrap();
        let mut c = self.0.borrow_mut();
        c.asked.push(method.clone());
        let reply = match method.as_str() {
            "revision" => alloc::format!(r#"{{"ok":{}}}"#, c.revision),
            "execute" => match params.get("action").and_then(Value::as_str).unwrap() {
                "counter.get" => alloc::format!(r#"{{"ok":{{"output":{{"value":{}}}}}}}"#, c.value),
                "counter.add" => {
                    let by = params.get("input").unwrap().get("by").unwrap().as_i64().unwrap();
                    if c.value + by > 1000 {
                        String::from(
                            r#"{"error":{"code":"out_of_range","message":"the counter stays below 1000"}}"#,
                        )
                    } else {
                        c.value += by;
                        c.revision += 1;
                        alloc::format!(r#"{{"ok":{{"output":{{"value":{}}}}}}}"#, c.value)
                    }
                }
                "counter.export" => String::from(r#"{"ok":{"deferred":"export-1"}}"#),
                "counter.broken" => {
                    String::from(r#"{"bug":"TypeError: undefined is not a function"}"#)
                }
                other => panic!("asked for {other}"),
            },
            "supportsTransaction" => String::from(r#"{"ok":true}"#),
            "beginTransaction" | "commitTransaction" | "cancel" => String::from(r#"{"ok":null}"#),
            "rollbackTransaction" => {
                c.value = 0;
                c.revision = 0;
                String::from(r#"{"ok":null}"#)
            }
            other => panic!("asked for {other}"),
        };
        reply.into_bytes()
    }
}

const DECLARATION: &str = r#"{"name":"Script Counter","hooks":["transactions","cancel"],"actions":[
  {"name":"counter.get","description":"Read the counter","kind":"read",
   "outputSchema":{"type":"object","properties":{"value":{"type":"integer"}},"required":["value"]}},
  {"name":"counter.add","description":"Add to the counter","kind":"write","transaction":"counter",
   "inputSchema":{"type":"object","properties":{"by":{"type":"integer","minimum":-100,"maximum":100}},
                  "required":["by"],"additionalProperties":false}},
  {"name":"counter.export","description":"Export","kind":"write"},
  {"name":"counter.broken","description":"A bug","kind":"read"}]}"#;

fn app(declaration: &str) -> (ScriptApp, CounterScript) {
    let script = CounterScript::default();
    let mut app =
        ScriptApp::declare(declaration.as_bytes(), alloc::boxed::Box::new(script.clone()))
            .unwrap_or_else(|e| panic!("{e}"));
    let _ = app.endpoint().connect_body();
    app.endpoint()
        .connected(br#"{"client":"c","channelVersion":1,"maxMessageBytes":1048576}"#)
        .unwrap();
    app.endpoint().set_enabled(true);
    let _ = app.endpoint().next_post();
    (app, script)
}

/// One `/poll` answer carrying `request` as id 1; returns the posted response.
fn ask(app: &mut ScriptApp, request: &str) -> Value {
    let answer = alloc::format!(r#"{{"requests":[{{"id":1,"request":{request}}}]}}"#);
    assert_eq!(app.poll(answer.as_bytes(), Duration::ZERO).unwrap(), 1);
    let post = app.endpoint().next_post().unwrap();
    assert_eq!(post.route, PostRoute::Result, "{}", String::from_utf8_lossy(&post.body));
    jfgui_proto::parse(&post.body, &Limits::DEFAULT).unwrap().get("response").unwrap().clone()
}

fn reason(response: &Value) -> &str {
    response.get("error").and_then(|e| e.get("reason")).and_then(Value::as_str).unwrap_or("")
}

fn executes(script: &CounterScript) -> usize {
    script.0.borrow().asked.iter().filter(|m| *m == "execute").count()
}

#[test]
fn declarations_are_checked_and_say_where() {
    let declare = |text: &str| {
        ScriptApp::declare(text.as_bytes(), alloc::boxed::Box::new(CounterScript::default()))
    };
    let err = |text: &str| declare(text).unwrap_err();
    assert!(err("[").contains("not strict JSON"));
    assert!(err(r#"{"actions":[]}"#).contains("name"));
    assert!(err(r#"{"name":"x"}"#).contains("actions"));
    assert!(err(r#"{"name":"x","actions":[],"colour":1}"#).contains("colour"));
    assert!(err(r#"{"name":"x","actions":[],"hooks":["undo"]}"#).contains("undo"));
    let e = err(r#"{"name":"x","actions":[{"name":"a.b","description":"","kind":"maybe"}]}"#);
    assert!(e.starts_with("actions: /0/kind"), "{e}");
    let e = err(
        r#"{"name":"x","actions":[{"name":"a.b","description":"","kind":"read","inputSchema":{"type":"string","pattern":"x"}}]}"#,
    );
    assert!(e.contains("/0/inputSchema/pattern"), "{e}");
    // The registration rules of every app: a duplicate name is refused.
    let e = err(
        r#"{"name":"x","actions":[{"name":"a.b","description":"","kind":"read"},{"name":"a.b","description":"","kind":"read"}]}"#,
    );
    assert!(e.contains("a.b"), "{e}");
}

#[test]
fn the_connect_body_carries_the_declared_actions() {
    let script = CounterScript::default();
    let mut app =
        ScriptApp::declare(DECLARATION.as_bytes(), alloc::boxed::Box::new(script)).unwrap();
    let body = jfgui_proto::parse(&app.endpoint().connect_body(), &Limits::DEFAULT).unwrap();
    let app_body = body.get("app").unwrap();
    assert_eq!(
        app_body.get("hello").unwrap().get("displayName").unwrap().as_str(),
        Some("Script Counter")
    );
    assert_eq!(app_body.get("hello").unwrap().get("enabled"), Some(&Value::Bool(false)));
    let actions = app_body.get("actions").unwrap().as_array().unwrap();
    assert_eq!(actions.len(), 4);
    assert!(text(&actions[1]).contains(r#""maximum":100"#), "{}", text(&actions[1]));
}

#[test]
fn contracts_hold_before_the_script_is_asked() {
    let (mut app, script) = app(DECLARATION);
    // Schema: out of range, a missing member, an unknown one.
    for input in [r#"{"by":101}"#, "{}", r#"{"by":1,"extra":true}"#, r#"{"by":"one"}"#] {
        let r = ask(
            &mut app,
            &alloc::format!(
                r#"{{"execute":{{"action":"counter.add","input":{input},"expectedRevision":0}}}}"#
            ),
        );
        assert_eq!(reason(&r), "schema_violation", "{input}: {}", text(&r));
    }
    // Revision: a write needs one, and the current one.
    let r = ask(&mut app, r#"{"execute":{"action":"counter.add","input":{"by":1}}}"#);
    assert_eq!(reason(&r), "revision_required", "{}", text(&r));
    let r = ask(
        &mut app,
        r#"{"execute":{"action":"counter.add","input":{"by":1},"expectedRevision":7}}"#,
    );
    assert_eq!(reason(&r), "stale_revision", "{}", text(&r));
    let r = ask(&mut app, r#"{"execute":{"action":"counter.nope","input":{}}}"#);
    assert_eq!(reason(&r), "unknown_action", "{}", text(&r));
    assert_eq!(executes(&script), 0, "the script ran nothing refused");
    // A good write runs once and moves the revision.
    let r = ask(
        &mut app,
        r#"{"execute":{"action":"counter.add","input":{"by":5},"expectedRevision":0}}"#,
    );
    assert_eq!(text(&r), r#"{"ok":{"executed":{"output":{"value":5},"revision":1}}}"#);
    // The app's own refusal is failed/host_error with its code.
    let r = ask(
        &mut app,
        r#"{"execute":{"action":"counter.add","input":{"by":100},"expectedRevision":1}}"#,
    );
    assert_eq!(reason(&r), "", "{}", text(&r));
    script.0.borrow_mut().value = 990;
    let r = ask(
        &mut app,
        r#"{"execute":{"action":"counter.add","input":{"by":20},"expectedRevision":2}}"#,
    );
    assert_eq!(reason(&r), "host_error", "{}", text(&r));
    assert!(text(&r).contains(r#""code":"out_of_range""#), "{}", text(&r));
    // A script that throws is an internal error naming the method.
    let r = ask(&mut app, r#"{"execute":{"action":"counter.broken","input":{}}}"#);
    assert_eq!(reason(&r), "invalid_reply", "{}", text(&r));
    assert!(text(&r).contains("TypeError"), "{}", text(&r));
    // Disabled: nothing reaches the script.
    app.endpoint().set_enabled(false);
    let _ = app.endpoint().next_post();
    let before = executes(&script);
    let r = ask(&mut app, r#"{"execute":{"action":"counter.get","input":{}}}"#);
    assert_eq!(reason(&r), "disabled", "{}", text(&r));
    assert_eq!(executes(&script), before);
}

#[test]
fn an_atomic_batch_rolls_back_through_the_script() {
    let (mut app, script) = app(DECLARATION);
    let r = ask(
        &mut app,
        r#"{"batch":{"atomic":true,"stopOnError":true,"calls":[{"action":"counter.add","input":{"by":5},"expectedRevision":0},{"action":"counter.add","input":{"by":999},"expectedRevision":0}]}}"#,
    );
    // The preflight checks every call's input first: nothing runs.
    assert_eq!(reason(&r), "batch_preflight", "{}", text(&r));
    assert_eq!(executes(&script), 0);
    script.0.borrow_mut().value = 900;
    let r = ask(
        &mut app,
        r#"{"batch":{"atomic":true,"stopOnError":true,"calls":[{"action":"counter.add","input":{"by":50},"expectedRevision":0},{"action":"counter.add","input":{"by":60},"expectedRevision":0}]}}"#,
    );
    assert_eq!(reason(&r), "rolled_back", "{}", text(&r));
    let asked = script.0.borrow().asked.clone();
    assert!(
        asked.iter().any(|m| m == "beginTransaction")
            && asked.iter().any(|m| m == "rollbackTransaction"),
        "{asked:?}"
    );
    let without = DECLARATION.replace(r#""hooks":["transactions","cancel"],"#, "");
    let (mut app, script) = self::app(&without);
    let r = ask(
        &mut app,
        r#"{"batch":{"atomic":true,"stopOnError":true,"calls":[{"action":"counter.add","input":{"by":5},"expectedRevision":0}]}}"#,
    );
    assert_eq!(reason(&r), "batch_preflight", "{}", text(&r));
    assert!(text(&r).contains("transaction_unsupported"), "{}", text(&r));
    assert_eq!(executes(&script), 0);
}

#[test]
fn deferred_work_is_reported_and_cancelled() {
    let (mut app, script) = app(DECLARATION);
    let r =
        ask(&mut app, r#"{"execute":{"action":"counter.export","input":{},"expectedRevision":0}}"#);
    assert!(text(&r).contains(r#""deferred":{"task":{"id":"export-1""#), "{}", text(&r));
    assert_eq!(
        app.report_tasks(br#"[{"task":"export-1","progress":{"done":1,"total":2}}]"#),
        Ok(1)
    );
    let post = app.endpoint().next_post().unwrap();
    assert_eq!(post.route, PostRoute::Message);
    assert!(String::from_utf8(post.body).unwrap().contains(r#""done":1"#));
    let e = app
        .report_tasks(
            br#"[{"task":"export-1","progress":{"done":2}},{"task":"nope","complete":{}}]"#,
        )
        .unwrap_err();
    assert!(e.contains("report 1") && e.contains("nope"), "{e}");
    let post = app.endpoint().next_post().unwrap();
    assert!(
        String::from_utf8(post.body).unwrap().contains(r#""done":2"#),
        "report 0 stays applied"
    );
    assert!(app.report_tasks(br#"[{"task":"export-1","explode":true}]"#).is_err());
    // A client cancels: the script is told once; it reports the end.
    let r = ask(&mut app, r#"{"cancelTask":{"id":"export-1"}}"#);
    assert!(text(&r).contains("cancelling"), "{}", text(&r));
    assert_eq!(script.0.borrow().asked.iter().filter(|m| *m == "cancel").count(), 1);
    let _ = app.tick(Duration::from_millis(5));
    assert_eq!(script.0.borrow().asked.iter().filter(|m| *m == "cancel").count(), 1, "told once");
    assert_eq!(app.report_tasks(br#"[{"task":"export-1","cancelled":true}]"#), Ok(1));
    // Without the hook, a cancel request stops the task at once.
    let without = DECLARATION.replace(r#""hooks":["transactions","cancel"],"#, "");
    let (mut app, _) = self::app(&without);
    let _ =
        ask(&mut app, r#"{"execute":{"action":"counter.export","input":{},"expectedRevision":0}}"#);
    let _ = ask(&mut app, r#"{"cancelTask":{"id":"export-1"}}"#);
    let mut states = Vec::new();
    while let Some(post) = app.endpoint().next_post() {
        states.push(String::from_utf8(post.body).unwrap());
    }
    assert!(states.iter().any(|s| s.contains(r#""state":"cancelled""#)), "{states:?}");
}

#[test]
fn the_apps_own_calls_go_through_the_dispatcher() {
    let (mut app, _) = app(DECLARATION);
    let ok = app.execute_local(br#"{"action":"counter.add","input":{"by":3}}"#).unwrap();
    assert_eq!(
        String::from_utf8(ok).unwrap(),
        r#"{"ok":{"executed":{"output":{"value":3},"revision":1}}}"#
    );
    let refused = String::from_utf8(
        app.execute_local(br#"{"action":"counter.add","input":{"by":300}}"#).unwrap(),
    )
    .unwrap();
    assert!(
        refused.starts_with(
            r#"{"error":{"code":1000,"class":"not_executed","reason":"schema_violation""#
        ),
        "{refused}"
    );
    assert!(app.execute_local(b"[]").is_err());
}
