//! Calls that need the user's yes, end to end with the real daemon, the CLI and Notepad's
//! `document.clear`: answered at once (`--confirm allow|deny`), by nobody (no terminal), and
//! by a person typing on Notepad's terminal while the call waits as a task. Today's daemon
//! forwards calls without saying who asks, which the app treats as an unknown agent without a
//! grant: it asks.

use std::path::Path;
use std::process::Command;

use jfgui_tests::cli::{Run, daemon_with_notepad, run_agent};
use jfgui_tests::terminal::spawn_in_terminal;
use jfgui_tests::{Daemon, PATIENCE, TempDir, Watchdog, bin};
use serde_json::Value;

fn run(rt: &Path, args: &[&str]) -> Run {
    let r = run_agent(rt, args, b"");
    r.assert_no_panic();
    r
}

fn clear_and_wait(rt: &Path) -> Run {
    run(rt, &["call", "notepad", "document.clear", "--expected-revision", "auto", "--wait"])
}

/// The document's text and undo depth, as `inspect` shows them.
fn text(rt: &Path) -> (String, u64) {
    let r = run(rt, &["inspect", "notepad", "--json"]);
    r.assert_code(0);
    let state = &r.json()["state"];
    (state["text"].as_str().unwrap().to_string(), state["undoDepth"].as_u64().unwrap())
}

#[test]
fn describe_shows_the_title_and_that_the_action_asks() {
    let _w = Watchdog::arm(PATIENCE * 2);
    let dir = TempDir::new();
    let rt = dir.rt();
    let (_daemon, _app) = daemon_with_notepad(&rt, &["--confirm", "deny"]);
    let r = run(&rt, &["describe", "notepad", "document.clear", "--json"]);
    r.assert_code(0);
    let action = &r.json()["action"];
    assert_eq!(
        (&action["title"], &action["confirm"]),
        (&Value::from("Clear the document"), &Value::from(true)),
        "{action}"
    );
    let r = run(&rt, &["describe", "notepad", "document.get", "--json"]);
    assert!(
        r.json()["action"].get("confirm").is_none(),
        "actions that do not ask keep their shape"
    );
}

#[test]
fn allowed_at_once_the_clear_runs_as_one_undo_step() {
    let _w = Watchdog::arm(PATIENCE * 2);
    let dir = TempDir::new();
    let rt = dir.rt();
    let (_daemon, _app) = daemon_with_notepad(&rt, &["--text", "hello", "--confirm", "allow"]);
    let r = clear_and_wait(&rt);
    r.assert_code(0);
    let task = &r.json()["task"];
    assert_eq!(task["state"], "completed", "{task}");
    assert_eq!(task["consent"]["answer"], "allow", "{task}");
    assert!(task.get("awaiting").is_none(), "{task}");
    assert_eq!(task["result"]["output"]["length"], 0, "{task}");
    let revision = task["result"]["revision"].as_u64().unwrap();
    assert_eq!(text(&rt), (String::new(), 1));
    let undo =
        run(&rt, &["call", "notepad", "edit.undo", "--expected-revision", &revision.to_string()]);
    undo.assert_code(0);
    assert_eq!(text(&rt).0, "hello", "one undo step brings the text back");
}

#[test]
fn denied_or_with_nobody_to_ask_the_clear_never_runs() {
    let _w = Watchdog::arm(PATIENCE * 3);
    for (flags, reason, answer) in [
        (&["--confirm", "deny"][..], "denied_by_user", "deny"),
        // `ask` without a terminal (the suite's apps have none): nobody can be asked.
        (&[][..], "no_confirmation_ui", "no_ui"),
    ] {
        let dir = TempDir::new();
        let rt = dir.rt();
        let args: Vec<&str> = ["--text", "hello"].iter().chain(flags).copied().collect();
        let (_daemon, _app) = daemon_with_notepad(&rt, &args);
        let r = clear_and_wait(&rt);
        assert_ne!(r.code(), 0, "{flags:?}: {}", r.stdout);
        let task = &r.json()["task"];
        assert_eq!(
            (task["state"].as_str(), task["error"]["reason"].as_str()),
            (Some("failed"), Some(reason)),
            "{task}"
        );
        assert_eq!(task["error"]["class"], "not_executed", "{task}");
        assert_eq!(task["consent"]["answer"], answer, "{task}");
        assert_eq!(text(&rt), ("hello".to_string(), 0), "{flags:?}: nothing ran");
    }
}

#[test]
fn asked_on_its_terminal_notepad_clears_only_once_the_user_types_yes() {
    let _w = Watchdog::arm(PATIENCE * 3);
    let dir = TempDir::new();
    let rt = dir.rt();
    let daemon = Daemon::start(&rt, &[]);
    let mut cmd = Command::new(bin("jfgui-notepad"));
    cmd.env("JFGUI_RUNTIME_DIR", &rt).env_remove("XDG_RUNTIME_DIR").args([
        "--agent-enable",
        "--text",
        "hello",
        "--confirm",
        "ask",
    ]);
    let (_app, mut terminal) = spawn_in_terminal(cmd);
    daemon.wait_endpoint("notepad");

    let r = run(&rt, &["call", "notepad", "document.clear", "--expected-revision", "auto"]);
    r.assert_code(0);
    let id = r.json()["task"]["id"].as_str().unwrap().to_string();
    assert!(
        terminal.wait_for("An unknown agent wants to: Clear the document"),
        "no prompt on the terminal: {:?}",
        terminal.text()
    );
    // While the prompt is open the call waits, as a task that says so, and nothing ran.
    let g = run(&rt, &["tasks", "notepad", "get", &id, "--json"]);
    let task = &g.json()["task"];
    assert_eq!(
        (task["state"].as_str(), task["awaiting"].as_str()),
        (Some("running"), Some("confirmation")),
        "{task}"
    );
    assert_eq!(
        task["progress"]["message"], "waiting for you to allow Clear the document",
        "{task}"
    );
    assert_eq!(text(&rt).0, "hello");

    terminal.type_line("maybe");
    assert!(terminal.wait_for("answer y or n"), "{:?}", terminal.text());
    terminal.type_line("y");
    let w = run(&rt, &["tasks", "notepad", "wait", &id, "--json"]);
    w.assert_code(0);
    let task = &w.json()["task"];
    assert_eq!(
        (task["state"].as_str(), task["consent"]["answer"].as_str()),
        (Some("completed"), Some("allow")),
        "{task}"
    );
    assert_eq!(text(&rt), (String::new(), 1));

    // A second call, then the user says no.
    let r = run(
        &rt,
        &[
            "call",
            "notepad",
            "document.text.insert",
            "--expected-revision",
            "auto",
            "--input-json",
            r#"{"text":"again"}"#,
        ],
    );
    r.assert_code(0);
    let r = run(&rt, &["call", "notepad", "document.clear", "--expected-revision", "auto"]);
    let id = r.json()["task"]["id"].as_str().unwrap().to_string();
    assert!(wait_for_second_prompt(&terminal), "{:?}", terminal.text());
    terminal.type_line("n");
    let w = run(&rt, &["tasks", "notepad", "wait", &id, "--json"]);
    assert_eq!(w.json()["task"]["error"]["reason"], "denied_by_user");
    assert_eq!(text(&rt).0, "again");
}

/// Whether the terminal shows the prompt a second time.
fn wait_for_second_prompt(terminal: &jfgui_tests::terminal::Terminal) -> bool {
    jfgui_tests::wait_until(PATIENCE, || {
        terminal.text().matches("wants to: Clear the document").count() >= 3
    })
}
