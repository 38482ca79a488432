//! Through the real binaries: what a client can observe of deferred tasks when their
//! app goes away (the endpoint goes with the app, so the daemon's log is the record).

use std::time::Duration;

use jfgui_tests::serde_json::json;
use jfgui_tests::{Daemon, LineClient, PATIENCE, TempDir, Watchdog, notepad, wait_until};

#[test]
fn app_disconnect_fails_its_running_tasks_and_says_so() {
    let _wd = Watchdog::arm(Duration::from_secs(120));
    let tmp = TempDir::new();
    let rt = tmp.rt();
    let d = Daemon::start(&rt, &[]);
    let app = notepad(&rt, &["--agent-enable", "--export-ms", "60000"]);
    let endpoint = d.wait_endpoint("notepad");
    let mut c = LineClient::connect(&endpoint).expect("connect");
    let started = c
        .call("actions/execute", json!({"action": "document.export", "expectedRevision": 1}))
        .expect("execute");
    let task = started["result"]["task"].clone();
    assert_eq!(task["state"], "running", "{started}");
    let id = task["id"].as_str().expect("task id").to_string();

    app.signal("KILL");
    // The endpoint closes with the app: the client sees the end of its connection.
    assert!(matches!(c.read_line(), Ok(None) | Err(_)), "connection closed");
    assert!(wait_until(PATIENCE, || !endpoint.exists()), "endpoint removed");
    // The daemon records the task as failed with the reason, naming app and task.
    let logged = wait_until(PATIENCE, || {
        d.proc
            .stderr()
            .lines()
            .any(|l| l.contains("task failed") && l.contains(&id) && l.contains("app_disconnected"))
    });
    assert!(logged, "no task-failed line for {id}; daemon log:\n{}", d.proc.stderr());
    d.assert_alive();
}
