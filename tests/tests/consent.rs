//! Calls that need the user's yes, end to end with the real daemon, the CLI and Notepad's
//! `document.clear`: answered at once (`--confirm allow|deny`), by nobody (no terminal), by a
//! person typing on Notepad's terminal while the call waits as a task (the prompt naming the
//! calling program as the OS knows it), and through every door a client has.

use std::path::Path;
use std::process::Stdio;

use jfgui_tests::cli::{Run, Session, agent_command, daemon_with_notepad, run_agent};
use jfgui_tests::consent::{
    audit_record, clear, document, final_state, gateway_saying, notepad_asking, revision,
    session_final_state, waiting_task,
};
use jfgui_tests::{LineClient, PATIENCE, TempDir, Watchdog, bin};
use serde_json::{Value, json};

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
    let (_daemon, _app, mut terminal, endpoint) = notepad_asking(&rt, &[]);

    // The agent is the process that called, as the OS names it: this test program.
    let me = std::env::current_exe().unwrap();
    let (mut client, response) = clear(&endpoint);
    let id = waiting_task(&response);
    assert!(
        terminal.wait_for(&format!("who: {}", me.display())),
        "the prompt names the calling program: {:?}",
        terminal.text()
    );
    assert!(terminal.text().contains("wants to: Clear the document"), "{:?}", terminal.text());
    // While the prompt is open the call waits, as a task that says so, and nothing ran.
    let task = &client.call("tasks/get", json!({"protocolVersion": "1", "id": id})).unwrap()["result"]
        ["task"];
    assert_eq!(
        (task["state"].as_str(), task["awaiting"].as_str()),
        (Some("running"), Some("confirmation")),
        "{task}"
    );
    assert_eq!(
        task["progress"]["message"], "waiting for you to allow Clear the document",
        "{task}"
    );
    assert_eq!(document(&endpoint).0, "hello");

    terminal.type_line("maybe");
    assert!(terminal.wait_for("answer y"), "{:?}", terminal.text());
    terminal.type_line("y");
    let task = final_state(&mut client, &id);
    assert_eq!(
        (task["state"].as_str(), task["consent"]["answer"].as_str()),
        (Some("completed"), Some("allow")),
        "{task}"
    );
    assert_eq!(document(&endpoint), (String::new(), 1));
    let record = audit_record(&rt, |r| r["consent"]["answer"] == "allow");
    assert_eq!(record["client"]["agent"]["exe"], me.to_str().unwrap(), "{record}");
    assert_eq!(record["consent"]["by"], "user", "{record}");

    // The CLI waits, connected, while the user is asked; the user says no.
    insert(&rt, "again");
    let mut call = agent_command(
        &rt,
        &["call", "notepad", "document.clear", "--expected-revision", "auto", "--json"],
    )
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    assert!(wait_for_second_prompt(&terminal), "{:?}", terminal.text());
    assert_eq!(call.try_wait().unwrap(), None, "the CLI waits for the answer");
    terminal.type_line("n");
    let out = call.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let task: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(task["task"]["error"]["reason"], "denied_by_user", "{task}");
    assert_eq!(document(&endpoint).0, "again");
}

/// Inserts `text` through the CLI (a call that does not ask).
fn insert(rt: &Path, text: &str) {
    let input = json!({ "text": text }).to_string();
    run(
        rt,
        &[
            "call",
            "notepad",
            "document.text.insert",
            "--expected-revision",
            "auto",
            "--input-json",
            &input,
        ],
    )
    .assert_code(0);
}

/// Whether the terminal shows the second prompt (the first one was shown twice: once more
/// after the answer it did not understand).
fn wait_for_second_prompt(terminal: &jfgui_tests::terminal::Terminal) -> bool {
    jfgui_tests::wait_until(PATIENCE, || {
        terminal.text().matches("wants to: Clear the document").count() >= 3
    })
}

/// Every way in asks (here: Notepad says no for the user) and nothing is applied: JSON-1,
/// the all-apps MCP server through the gateway, `stdio`, `headless`, batches atomic or not with
/// the confirm call last of 128, a retried id, and a `clientInfo` naming an agent that holds a
/// grant.
#[test]
fn no_door_runs_a_confirm_action_without_the_users_yes() {
    let _w = Watchdog::arm(PATIENCE * 4);
    let dir = TempDir::new();
    let rt = dir.rt();
    let (_daemon, _app) = daemon_with_notepad(&rt, &["--text", "hello", "--confirm", "deny"]);
    let endpoint = rt.join("apps/notepad.sock");
    // A grant for another program: a client that names it is still asked.
    let granted = "/usr/bin/granted-agent";
    run(&rt, &["grants", "allow", "Notepad", "document.clear", "--agent", granted]).assert_code(0);
    let denied = |task: &Value, door: &str| {
        assert_eq!(task["error"]["reason"], "denied_by_user", "{door}: {task}");
        assert_eq!(document(&endpoint).0, "hello", "{door}: nothing applied");
    };

    // JSON-1, twice with the same request id.
    let at = revision(&endpoint);
    let mut client = LineClient::connect(&endpoint).unwrap();
    for _ in 0..2 {
        let request = json!({"jsonrpc": "2.0", "id": 7, "method": "actions/execute", "params":
            {"protocolVersion": "1", "action": "document.clear", "expectedRevision": at}});
        client.send_raw(&request.to_string()).unwrap();
        let response: Value = serde_json::from_str(&client.read_line().unwrap().unwrap()).unwrap();
        let id = waiting_task(&response);
        denied(&final_state(&mut client, &id), "json-1");
    }

    // Batches: the confirm call hidden at index 127, atomic and not.
    for atomic in [false, true] {
        let mut calls: Vec<Value> = (0..127)
            .map(|_| json!({"action": "selection.set", "input": {"start": 0, "end": 0}, "expectedRevision": at}))
            .collect();
        calls.push(json!({"action": "document.clear", "expectedRevision": at}));
        let response = client
            .call(
                "actions/batch",
                json!({"protocolVersion": "1", "calls": calls, "atomic": atomic}),
            )
            .unwrap();
        let id = waiting_task(&response);
        denied(&final_state(&mut client, &id), &format!("batch atomic={atomic}"));
    }

    // MCP through `jfgui-agent mcp`, the client naming the granted agent.
    let mut s = gateway_saying(&rt, granted);
    s.send(
        &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "jfgui_actions_execute", "arguments": {"app": "notepad",
        "action": "document.clear", "expectedRevision": at}}})
        .to_string(),
    );
    let answer = s.recv();
    let task = &answer["result"]["structuredContent"]["task"];
    assert_eq!(task["awaiting"], "confirmation", "{answer}");
    let id = task["id"].as_str().unwrap().to_owned();
    let mut last = Value::Null;
    let mut round = 10;
    assert!(jfgui_tests::wait_until(PATIENCE, || {
        round += 1;
        s.send(
            &json!({"jsonrpc": "2.0", "id": round, "method": "tools/call", "params": {
            "name": "jfgui_tasks_get", "arguments": {"app": "notepad", "id": id}}})
            .to_string(),
        );
        last = s.recv()["result"]["structuredContent"]["task"].clone();
        last["state"] == "failed"
    }));
    denied(&last, "all-apps mcp");
    drop(s);

    // `stdio`: JSON-1 lines through the gateway.
    let request = json!({"jsonrpc": "2.0", "id": 1, "method": "actions/execute", "params":
        {"protocolVersion": "1", "action": "document.clear", "expectedRevision": at}});
    let mut s = Session::start(agent_command(&rt, &["stdio", "notepad"]));
    s.send(&request.to_string());
    let id = waiting_task(&s.recv());
    denied(&session_final_state(&mut s, &id), "stdio");

    // `headless`: the CLI runs its own Notepad and serves it; it asks the same way.
    let mut s = Session::start(agent_command(
        &rt,
        &[
            "headless",
            bin("jfgui-notepad").to_str().unwrap(),
            "--",
            "--text",
            "hi",
            "--confirm",
            "deny",
        ],
    ));
    s.send(r#"{"jsonrpc":"2.0","id":0,"method":"state/inspect","params":{"protocolVersion":"1"}}"#);
    let at = s.recv()["result"]["revision"].clone();
    s.send(
        &json!({"jsonrpc": "2.0", "id": 1, "method": "actions/execute", "params":
        {"protocolVersion": "1", "action": "document.clear", "expectedRevision": at}})
        .to_string(),
    );
    let id = waiting_task(&s.recv());
    let task = session_final_state(&mut s, &id);
    assert_eq!(task["error"]["reason"], "denied_by_user", "headless: {task}");

    // The audit log says each was asked.
    let asked = jfgui_tests::consent::audit_records(&rt)
        .into_iter()
        .filter(|r| r["consent"]["asked"] == true && r["consent"].get("answer").is_none())
        .count();
    assert!(asked >= 5, "{asked} calls recorded as asked");
}
