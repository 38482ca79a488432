//! Deferred tasks from the command line: `tasks ENDPOINT get|wait|cancel ID` and
//! `call --wait` against the real daemon and Notepad's `document.export` (`--export-ms` sets
//! how long it runs): waited to completion, to cancellation, past `--timeout`, through an app
//! that dies, and with a progress bar on a terminal only.

use std::path::{Path, PathBuf};

use jfgui_tests::cli::{
    Run, Session, agent_command, daemon_with_notepad, run_agent, run_agent_in_pty,
};
use jfgui_tests::{Daemon, PATIENCE, Proc, TempDir, Watchdog};

struct World {
    _dir: TempDir,
    rt: PathBuf,
    _daemon: Daemon,
    app: Proc,
}

/// A daemon and Notepad whose exports take `export_ms`.
fn world(export_ms: u64) -> World {
    let dir = TempDir::new();
    let rt = dir.rt();
    let ms = export_ms.to_string();
    let (daemon, app) = daemon_with_notepad(&rt, &["--text", "hello", "--export-ms", &ms]);
    World { _dir: dir, rt, _daemon: daemon, app }
}

fn run(rt: &Path, args: &[&str]) -> Run {
    let r = run_agent(rt, args, b"");
    r.assert_no_panic();
    r
}

/// Starts `document.export` and returns the task id.
fn start_export(rt: &Path) -> String {
    let r = run(rt, &["call", "notepad", "document.export", "--expected-revision", "auto"]);
    r.assert_code(0);
    let j = r.json();
    assert_eq!(j["task"]["state"], "running", "{j}");
    j["task"]["id"].as_str().expect("task id").to_string()
}

#[test]
fn wait_follows_an_export_to_completion_and_prints_its_result() {
    let _w = Watchdog::arm(PATIENCE * 3);
    let w = world(1500);
    let id = start_export(&w.rt);
    let r = run(&w.rt, &["tasks", "notepad", "wait", &id]);
    r.assert_code(0);
    let j = r.json();
    assert_eq!(j["task"]["id"], id.as_str());
    assert_eq!(j["task"]["state"], "completed", "{j}");
    assert_eq!(j["task"]["result"]["uri"], "export://document.txt", "{j}");
    assert_eq!(j["task"]["result"]["size"], 5, "{j}");
    // Piped: no progress bar anywhere.
    assert!(r.stderr.is_empty(), "stderr: {:?}", r.stderr);

    // get reports the final state and exits 0; --json on a listing of one task.
    let g = run(&w.rt, &["tasks", "notepad", "get", &id, "--json"]);
    g.assert_code(0);
    assert_eq!(g.json()["task"]["state"], "completed");
    // Cancelling a finished task changes nothing and says so.
    let c = run(&w.rt, &["tasks", "notepad", "cancel", &id]);
    c.assert_code(0);
    assert_eq!(c.json()["task"]["state"], "completed");
}

#[test]
fn call_wait_starts_and_follows_in_one_command() {
    let _w = Watchdog::arm(PATIENCE * 3);
    let w = world(800);
    let r = run(
        &w.rt,
        &["call", "notepad", "document.export", "--expected-revision", "auto", "--wait"],
    );
    r.assert_code(0);
    let j = r.json();
    assert_eq!(j["task"]["state"], "completed", "{j}");
    assert_eq!(j["task"]["progress"]["done"], j["task"]["progress"]["total"], "{j}");
    assert!(r.stderr.is_empty(), "stderr: {:?}", r.stderr);
    // --wait on an action that is not deferred prints its output as without it.
    let r = run(&w.rt, &["call", "notepad", "document.get", "--wait"]);
    r.assert_code(0);
    assert_eq!(r.json()["output"]["text"], "hello");
}

#[test]
fn a_task_cancelled_while_waited_for_ends_the_wait_with_exit_1() {
    let _w = Watchdog::arm(PATIENCE * 3);
    let w = world(60_000);
    let id = start_export(&w.rt);
    let waiting = Session::start(agent_command(&w.rt, &["tasks", "notepad", "wait", &id]));
    let c = run(&w.rt, &["tasks", "notepad", "cancel", &id]);
    c.assert_code(0);
    let state = c.json()["task"]["state"].as_str().unwrap().to_string();
    assert!(state == "cancelling" || state == "cancelled", "{state}");
    let (status, stdout, stderr) = waiting.finish();
    assert_eq!(status.code(), Some(1), "stdout {stdout:?} stderr {stderr:?}");
    let j: serde_json::Value = serde_json::from_str(&stdout.join("\n")).expect("one JSON value");
    assert_eq!(j["task"]["state"], "cancelled", "{j}");
    assert!(stderr.starts_with("jfgui-agent: error[cancelled]: "), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    // The export never produced its resource.
    run(&w.rt, &["read", "notepad", "export://document.txt"]).assert_error(1, "resource");
}

#[test]
fn a_wait_past_its_timeout_exits_6_and_the_task_goes_on() {
    let _w = Watchdog::arm(PATIENCE * 3);
    let w = world(60_000);
    let id = start_export(&w.rt);
    let r = run(&w.rt, &["--timeout", "1", "tasks", "notepad", "wait", &id]);
    r.assert_error(6, "timeout");
    assert!(r.stderr.contains(&format!("tasks notepad cancel {id}")), "{}", r.stderr);
    assert_eq!(r.json()["exitCode"], 6);
    let g = run(&w.rt, &["tasks", "notepad", "get", &id]);
    g.assert_code(0);
    assert_eq!(g.json()["task"]["state"], "running");
}

#[test]
fn an_app_that_dies_during_a_wait_makes_the_outcome_unknown_exit_6() {
    let _w = Watchdog::arm(PATIENCE * 3);
    let w = world(60_000);
    let id = start_export(&w.rt);
    let waiting = Session::start(agent_command(&w.rt, &["tasks", "notepad", "wait", &id]));
    // Let the wait poll at least once before the app goes.
    std::thread::sleep(std::time::Duration::from_millis(300));
    w.app.signal("KILL");
    let (status, _stdout, stderr) = waiting.finish();
    assert_eq!(status.code(), Some(6), "{stderr}");
    assert!(stderr.starts_with("jfgui-agent: error[app_disconnected]: "), "{stderr}");
    assert!(stderr.contains(&id) && stderr.contains("unknown"), "{stderr}");
}

#[test]
fn unknown_tasks_are_not_found_exit_1() {
    let _w = Watchdog::arm(PATIENCE * 2);
    let w = world(1000);
    for op in ["get", "wait", "cancel"] {
        let r = run(&w.rt, &["tasks", "notepad", op, "no-such-task", "--json"]);
        r.assert_error(1, "task");
        assert_eq!(r.json()["error"]["code"], 1004);
    }
}

#[test]
fn a_terminal_shows_progress_and_a_pipe_shows_none() {
    let _w = Watchdog::arm(PATIENCE * 3);
    let w = world(2500);
    let id = start_export(&w.rt);
    let r = run_agent_in_pty(&w.rt, &["tasks", "notepad", "wait", &id]);
    r.assert_no_panic().assert_code(0);
    let shown = &r.stdout;
    // The bar names the task and counts the app's steps; text output follows it.
    assert!(shown.contains(&format!("task {id} [")), "no progress bar: {shown:?}");
    assert!(shown.contains("/10 exporting"), "no step count: {shown:?}");
    assert!(shown.contains(&format!("task {id} completed")), "no result: {shown:?}");
    assert!(shown.contains("\"uri\": \"export://document.txt\""), "no result: {shown:?}");

    // The same through `call --wait`, piped: JSON only, nothing on stderr.
    let r = run(
        &w.rt,
        &["call", "notepad", "document.export", "--expected-revision", "auto", "--wait"],
    );
    r.assert_code(0);
    assert!(r.stderr.is_empty(), "{r:?}");
    assert_eq!(r.json()["task"]["state"], "completed");
}
