//! What the consent suites share: Notepad asking on a terminal of its own (so its prompts stay
//! open until the test types an answer), calls of `document.clear` over JSON-1 that keep their
//! connection (a client that leaves withdraws its prompt), the document as `state/inspect`
//! shows it, and the audit records of a runtime dir.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

use crate::cli::{Session, agent_command};
use crate::terminal::{Terminal, spawn_in_terminal};
use crate::{Daemon, LineClient, PATIENCE, Proc, audit_dir, bin, json1, wait_until};

/// A daemon started with `daemon_args` and Notepad (`--confirm ask`, text "hello") on a
/// terminal of its own: every prompt stays open until the test types into `Terminal`.
pub fn notepad_asking(rt: &Path, daemon_args: &[&str]) -> (Daemon, Proc, Terminal, PathBuf) {
    let daemon = Daemon::start(rt, daemon_args);
    let (app, terminal) = notepad_in_terminal(rt, "Notepad");
    let endpoint = daemon.wait_endpoint("notepad");
    (daemon, app, terminal, endpoint)
}

/// Notepad named `name`, asking on a terminal of its own.
pub fn notepad_in_terminal(rt: &Path, name: &str) -> (Proc, Terminal) {
    let mut cmd = Command::new(bin("jfgui-notepad"));
    cmd.env("JFGUI_RUNTIME_DIR", rt).env_remove("XDG_RUNTIME_DIR").args([
        "--agent-enable",
        "--name",
        name,
        "--text",
        "hello",
        "--confirm",
        "ask",
    ]);
    spawn_in_terminal(cmd)
}

/// The document's text and undo depth.
pub fn document(endpoint: &Path) -> (String, u64) {
    let state = &json1(endpoint, "state/inspect", json!({}))["state"];
    (state["text"].as_str().expect("text").to_owned(), state["undoDepth"].as_u64().expect("undo"))
}

/// The current revision.
pub fn revision(endpoint: &Path) -> u64 {
    json1(endpoint, "state/inspect", json!({}))["revision"].as_u64().expect("revision")
}

/// A JSON-1 connection to `endpoint` that calls `document.clear` (at the current revision) and
/// returns the whole response; the connection stays open for `tasks/get`.
pub fn clear(endpoint: &Path) -> (LineClient, Value) {
    let at = revision(endpoint);
    let mut client = LineClient::connect(endpoint).expect("connect the endpoint");
    let response = client
        .call(
            "actions/execute",
            json!({"protocolVersion": "1", "action": "document.clear", "expectedRevision": at}),
        )
        .expect("actions/execute");
    (client, response)
}

/// The id of the waiting task a response answered with (panics on anything else).
pub fn waiting_task(response: &Value) -> String {
    let task = &response["result"]["task"];
    assert_eq!(
        (task["state"].as_str(), task["awaiting"].as_str()),
        (Some("running"), Some("confirmation")),
        "{response}"
    );
    task["id"].as_str().expect("task id").to_owned()
}

/// `tasks/get` of `id` on `client` until the task is final; its last state.
pub fn final_state(client: &mut LineClient, id: &str) -> Value {
    let mut last = Value::Null;
    let ended = wait_until(PATIENCE, || {
        let r =
            client.call("tasks/get", json!({"protocolVersion": "1", "id": id})).expect("tasks/get");
        last = r["result"]["task"].clone();
        matches!(last["state"].as_str(), Some("completed" | "failed" | "cancelled"))
    });
    assert!(ended, "task {id} did not end: {last}");
    last
}

/// The audit records of runtime dir `rt` written so far.
pub fn audit_records(rt: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(audit_dir(rt).join("audit.jsonl")).unwrap_or_default();
    text.lines().filter_map(|l| serde_json::from_str(l).ok()).collect()
}

/// Waits until an audit record of `rt` satisfies `wanted`; returns it.
pub fn audit_record(rt: &Path, wanted: impl Fn(&Value) -> bool) -> Value {
    let mut found = None;
    let ok = wait_until(PATIENCE, || {
        found = audit_records(rt).into_iter().find(|r| wanted(r));
        found.is_some()
    });
    assert!(ok, "no such audit record among {:#?}", audit_records(rt));
    found.expect("found")
}

/// `jfgui-agent mcp` for `rt`, initialized (legacy revision) by a client that says it is
/// `name`.
pub fn gateway_saying(rt: &Path, name: &str) -> Session {
    let mut s = Session::start(agent_command(rt, &["mcp"]));
    s.send(
        &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": name, "version": "1"}}})
        .to_string(),
    );
    s.recv();
    s.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    s
}

/// JSON-1 `tasks/get` of `id` through a gateway session until the task is final; its last state.
pub fn session_final_state(s: &mut Session, id: &str) -> Value {
    for round in 100.. {
        s.send(
            &json!({"jsonrpc": "2.0", "id": round, "method": "tasks/get", "params":
                {"protocolVersion": "1", "id": id}})
            .to_string(),
        );
        let task = s.recv()["result"]["task"].clone();
        if matches!(task["state"].as_str(), Some("completed" | "failed" | "cancelled")) {
            return task;
        }
    }
    unreachable!("the rounds never end")
}
