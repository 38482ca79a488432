//! Every error class through `jfgui-agent call`, one row per class, each with its
//! own documented exit code, the reason on stderr and the JSON error on stdout
//! (`--json`, and always when stdout is not a terminal).

use std::os::unix::net::UnixListener;
use std::path::Path;
use std::thread;
use std::time::Duration;

use jfgui_tests::cli::{Run, daemon_with_notepad, run_agent, silent_endpoint};
use jfgui_tests::{Daemon, PATIENCE, TempDir, Watchdog, notepad};

/// Runs `call` with `--json` and checks code, stderr reason and the JSON error on stdout.
fn row(rt: &Path, args: &[&str], code: i32, reason: &str) -> Run {
    let mut full = vec!["call"];
    full.extend_from_slice(args);
    full.push("--json");
    let r = run_agent(rt, &full, b"");
    r.assert_no_panic().assert_error(code, reason);
    let j = r.json();
    assert_eq!(j["exitCode"], code, "{j}");
    assert_eq!(j["error"]["data"]["reason"], reason, "{j}");
    r
}

#[test]
fn each_error_class_has_its_exit_code() {
    let _w = Watchdog::arm(PATIENCE * 4);
    let dir = TempDir::new();
    let rt = dir.rt();

    // 4: daemon down.
    row(&rt, &["notepad", "document.get"], 4, "daemon_not_running");

    let daemon = Daemon::start(&rt, &["--request-deadline", "1s", "--max-depth", "8"]);
    let app = notepad(&rt, &["--agent-enable", "--text", "hello"]);
    daemon.wait_endpoint("notepad");

    // 0: success, for contrast.
    let ok = run_agent(&rt, &["call", "notepad", "document.get", "--json"], b"");
    ok.assert_code(0);
    let revision = ok.json()["revision"].as_u64().unwrap();

    // 1: not_executed (stale revision, unknown action), not_found (describe).
    let stale = (revision + 7).to_string();
    let r = row(&rt, &["notepad", "edit.undo", "--expected-revision", &stale], 1, "stale_revision");
    assert_eq!(r.json()["error"]["data"]["currentRevision"], revision);
    row(&rt, &["notepad", "no.such.action"], 1, "unknown_action");

    // 3: endpoint not found.
    row(&rt, &["nothing-here", "document.get"], 3, "endpoint_not_found");

    // 6: the app does not answer within the daemon's request deadline (frozen app).
    app.signal("STOP");
    row(&rt, &["notepad", "document.get"], 6, "timeout");
    app.signal("CONT");
    // The app is unharmed afterwards.
    run_agent(&rt, &["call", "notepad", "document.get"], b"").assert_code(0);

    // 7: a JSON-RPC protocol error: input nested deeper than this daemon's --max-depth (the
    // CLI's own bound is the default 32, so the request is sent and the daemon refuses it).
    let deep = format!("{}1{}", "[".repeat(12), "]".repeat(12));
    let r =
        run_agent(&rt, &["call", "notepad", "document.get", "--json", "--input-json", &deep], b"");
    r.assert_no_panic().assert_code(7);
    assert!(r.stderr.starts_with("jfgui-agent: error["), "{}", r.stderr);
    let code = r.json()["error"]["code"].as_i64().unwrap();
    assert!((-32700..=-32600).contains(&code), "a JSON-RPC error code: {code}");

    // 5: refused before any answer (what the peer check does to a foreign uid).
    std::fs::create_dir_all(rt.join("apps")).unwrap();
    let listener = UnixListener::bind(rt.join("apps/refusing.sock")).unwrap();
    thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            drop(stream);
        }
    });
    row(&rt, &["refusing", "document.get"], 5, "refused");

    // 6 without a daemon deadline: the CLI's own --timeout.
    silent_endpoint(&rt.join("apps/silent.sock"));
    let r = run_agent(&rt, &["--timeout", "1", "call", "silent", "document.get", "--json"], b"");
    r.assert_no_panic().assert_error(6, "timeout");
    thread::sleep(Duration::from_millis(10));
}

#[test]
fn the_app_going_away_mid_call_is_outcome_unknown() {
    let _w = Watchdog::arm(PATIENCE * 3);
    let dir = TempDir::new();
    let rt = dir.rt();
    let (_daemon, mut app) = daemon_with_notepad(&rt, &[]);
    app.signal("STOP");
    let rt2 = rt.clone();
    let call =
        thread::spawn(move || run_agent(&rt2, &["call", "notepad", "document.get", "--json"], b""));
    thread::sleep(Duration::from_millis(300));
    app.signal("KILL");
    let _ = app.wait_exit(PATIENCE);
    let r = call.join().unwrap();
    r.assert_no_panic().assert_error(6, "app_disconnected");
    assert_eq!(r.json()["error"]["data"]["class"], "outcome_unknown");
}
