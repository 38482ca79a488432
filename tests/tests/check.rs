//! `jfgui-agent check` across processes: the real daemon, real apps, the real CLI. Notepad and
//! the well-behaved test app pass `check --mutate` with no FAIL; each contract broken on
//! purpose in the fault-injecting test app is a FAIL of exactly the check that claims to catch
//! it, naming the action (or resource), and nothing else FAILs.

use std::path::Path;

use jfgui_tests::cli::{Run, daemon_with_notepad, run_agent, run_agent_in_pty};
use jfgui_tests::serde_json::{Value, json};
use jfgui_tests::{Daemon, PATIENCE, TempDir, TestApp, Watchdog, json1};

fn check(rt: &Path, args: &[&str]) -> Run {
    let r = run_agent(rt, args, b"");
    r.assert_no_panic();
    r
}

/// The FAIL findings as `(check, action or resource)`, `-` for the whole app.
fn failures(report: &Value) -> Vec<(String, String)> {
    report["findings"]
        .as_array()
        .unwrap_or_else(|| panic!("no findings: {report}"))
        .iter()
        .filter(|f| f["level"] == "FAIL")
        .map(|f| {
            let subject = f.get("action").or_else(|| f.get("resource"));
            let subject = subject.and_then(Value::as_str).unwrap_or("-");
            (f["check"].as_str().unwrap_or("?").to_string(), subject.to_string())
        })
        .collect()
}

fn checks_run(report: &Value) -> Vec<String> {
    let mut names: Vec<String> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["check"].as_str().unwrap().to_string())
        .collect();
    names.dedup();
    names
}

#[test]
fn notepad_passes_check_mutate() {
    let _w = Watchdog::arm(PATIENCE * 3);
    let dir = TempDir::new();
    let rt = dir.rt();
    let (_d, _app) = daemon_with_notepad(&rt, &["--text", "hello"]);
    let before = json1(&rt.join("apps/notepad.sock"), "state/inspect", json!({}));

    // Read-only: nothing changes.
    let r = check(&rt, &["check", "notepad", "--json"]);
    r.assert_code(0);
    let report = r.json();
    assert_eq!((report["mutate"].clone(), report["app"].clone()), (json!(false), json!("notepad")));
    assert_eq!(failures(&report), Vec::<(String, String)>::new(), "{report:#}");
    let after = json1(&rt.join("apps/notepad.sock"), "state/inspect", json!({}));
    assert_eq!(before, after, "the read-only checks changed nothing");

    let r = check(&rt, &["check", "notepad", "--mutate", "--json"]);
    r.assert_code(0);
    let report = r.json();
    assert_eq!(failures(&report), Vec::<(String, String)>::new(), "{report:#}");
    assert_eq!(report["passed"], true);
    for name in [
        "lint",
        "inspect",
        "read",
        "render",
        "resource",
        "stale_write",
        "invalid_write",
        "valid_write",
        "task_cancel",
        "atomic_batch",
    ] {
        assert!(checks_run(&report).contains(&name.to_string()), "{name} ran: {report:#}");
    }
    let pass = |check: &str, action: &str| {
        report["findings"].as_array().unwrap().iter().any(|f| {
            f["check"] == check && f["level"] == "PASS" && (f["action"] == action || action == "-")
        })
    };
    assert!(pass("render", "ui.render"), "a real PNG: {report:#}");
    assert!(pass("task_cancel", "document.export"), "the export was cancelled: {report:#}");
    assert!(pass("atomic_batch", "-"), "the rollback restored everything: {report:#}");
    let after = json1(&rt.join("apps/notepad.sock"), "state/inspect", json!({}));
    assert_ne!(before["revision"], after["revision"], "--mutate wrote");
}

#[test]
fn on_a_terminal_check_prints_a_table() {
    let _w = Watchdog::arm(PATIENCE * 2);
    let dir = TempDir::new();
    let rt = dir.rt();
    let (_d, _app) = daemon_with_notepad(&rt, &[]);
    let r = run_agent_in_pty(&rt, &["check", "notepad"]);
    r.assert_no_panic().assert_code(0);
    let lines: Vec<&str> = r.stdout.lines().map(str::trim_end).collect();
    assert!(lines[0].starts_with("RESULT  CHECK"), "{}", r.stdout);
    assert!(lines.iter().any(|l| l.starts_with("PASS    render")), "{}", r.stdout);
    let last = lines.last().unwrap();
    assert!(last.contains(" FAIL (read-only; --mutate adds the write checks)"), "{last}");
}

/// The test app named "Target" with `args`, checked with `--mutate`: the report.
fn check_testapp(args: &[&str], exit: i32) -> Value {
    let tmp = TempDir::new();
    let d = Daemon::start(&tmp.rt(), &[]);
    let _app = TestApp::start(&d.rt, tmp.path(), "Target", args);
    d.wait_endpoint("target");
    let r = check(&d.rt, &["check", "target", "--mutate", "--json"]);
    r.assert_code(exit);
    if exit == 1 {
        let lines: Vec<&str> = r.stderr.lines().collect();
        assert_eq!(lines.len(), 1, "{}", r.stderr);
        assert!(lines[0].starts_with("jfgui-agent: error[check_failed]: "), "{}", r.stderr);
    }
    r.json()
}

fn assert_fails(args: &[&str], expected: &[(&str, &str)]) {
    let _w = Watchdog::arm(PATIENCE * 3);
    let report = check_testapp(args, 1);
    let expected: Vec<(String, String)> =
        expected.iter().map(|(c, s)| (c.to_string(), s.to_string())).collect();
    assert_eq!(failures(&report), expected, "{args:?}: {report:#}");
    for f in report["findings"].as_array().unwrap().iter().filter(|f| f["level"] == "FAIL") {
        assert!(!f["fix"].as_str().unwrap_or("").is_empty(), "a FAIL says how to fix it: {f}");
    }
}

#[test]
fn the_well_behaved_test_app_passes() {
    let _w = Watchdog::arm(PATIENCE * 3);
    let report = check_testapp(&["--render", "--blob", "20000"], 0);
    assert_eq!(failures(&report), Vec::<(String, String)>::new(), "{report:#}");
    // job.run's own rollback path ran: it is a deferred write in the `state` domain.
    let batch =
        report["findings"].as_array().unwrap().iter().find(|f| f["check"] == "atomic_batch");
    let why = batch.and_then(|f| f["why"].as_str()).unwrap_or("");
    assert!(why.contains("job.run (deferred"), "{report:#}");
}

#[test]
fn a_read_that_moves_the_revision_fails_read() {
    assert_fails(&["--fault", "state.get:moves-revision"], &[("read", "state.get")]);
}

#[test]
fn a_stale_write_that_applies_fails_stale_write() {
    assert_fails(&["--fault", "counter.add:ignores-revision"], &[("stale_write", "counter.add")]);
}

#[test]
fn a_rollback_that_keeps_the_revision_fails_atomic_batch() {
    assert_fails(&["--broken-rollback"], &[("atomic_batch", "-")]);
}

#[test]
fn an_output_that_violates_its_schema_fails_read() {
    assert_fails(&["--fault", "state.get:bad-output-schema"], &[("read", "state.get")]);
}

#[test]
fn a_render_that_is_not_a_png_fails_render() {
    assert_fails(&["--render", "--fault", "ui.render:not-png"], &[("render", "ui.render")]);
}

#[test]
fn chunks_that_do_not_add_up_fail_resource() {
    assert_fails(&["--blob", "20000", "--blob-total-lies"], &[("resource", "blob://data.bin")]);
}

#[test]
fn a_task_that_ignores_cancel_fails_task_cancel() {
    assert_fails(&["--fault", "job.run:ignores-cancel"], &[("task_cancel", "job.run")]);
}
