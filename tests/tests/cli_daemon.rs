//! Every `jfgui-agent` subcommand against the real daemon and the real example app: stdout
//! (text and JSON), stderr and exit codes, including one row per action-error class.

use std::path::PathBuf;

use jfgui_tests::cli::{Run, run_agent};
use jfgui_tests::{Daemon, PATIENCE, Proc, TempDir, Watchdog, notepad};
use serde_json::json;

/// A daemon with one enabled notepad (`--text hello`) on a fresh runtime dir.
struct World {
    _dir: TempDir,
    rt: PathBuf,
    daemon: Daemon,
    _apps: Vec<Proc>,
}

impl World {
    fn new(names: &[&str]) -> World {
        let dir = TempDir::new();
        let rt = dir.rt();
        let daemon = Daemon::start(&rt, &[]);
        let mut apps = Vec::new();
        for name in names {
            apps.push(notepad(&rt, &["--agent-enable", "--text", "hello", "--name", name]));
        }
        World { _dir: dir, rt, daemon, _apps: apps }
    }

    fn run(&self, args: &[&str]) -> Run {
        let r = run_agent(&self.rt, args, b"");
        r.assert_no_panic();
        r
    }

    fn revision(&self) -> u64 {
        self.run(&["inspect", "notepad"]).json()["revision"].as_u64().expect("revision")
    }
}

#[test]
fn list_status_actions_describe() {
    let _w = Watchdog::arm(PATIENCE * 3);
    let w = World::new(&["Notepad"]);
    w.daemon.wait_endpoint("notepad");

    let r = w.run(&["list"]);
    r.assert_code(0);
    assert!(r.stdout.starts_with("ENDPOINT"), "{}", r.stdout);
    assert!(r.stdout.contains("notepad") && r.stdout.contains("Notepad"), "{}", r.stdout);
    let apps = w.run(&["list", "--json"]).json();
    assert_eq!(apps["apps"][0]["slug"], "notepad");
    assert_eq!(apps["apps"][0]["enabled"], true);

    let r = w.run(&["status"]);
    r.assert_code(0);
    assert!(r.stdout.contains(&format!("pid {}", w.daemon.proc.pid())), "{}", r.stdout);
    let s = w.run(&["status", "--json"]).json();
    assert_eq!(s["pid"], w.daemon.proc.pid());
    assert_eq!(s["apps"], 1);

    let r = w.run(&["actions", "notepad"]);
    r.assert_code(0);
    assert!(
        r.stdout.contains("document.text.insert") && r.stdout.contains("ui.render"),
        "{}",
        r.stdout
    );
    let all = w.run(&["actions", "Notepad", "--json"]).json();
    assert_eq!(all["actions"].as_array().map(Vec::len), Some(10), "{all}");
    let found = w.run(&["actions", "note", "--query", "UNDO", "--json"]).json();
    let names: Vec<&str> =
        found["actions"].as_array().unwrap().iter().map(|a| a["name"].as_str().unwrap()).collect();
    assert!(names.contains(&"edit.undo"), "{names:?}");
    assert!(!names.contains(&"document.get"), "{names:?}");

    let r = w.run(&["describe", "notepad", "document.text.insert"]);
    r.assert_code(0);
    assert!(r.stdout.starts_with("document.text.insert (write)"), "{}", r.stdout);
    assert!(r.stdout.contains("input schema:"), "{}", r.stdout);
    let d = w.run(&["describe", "notepad", "document.text.insert", "--json"]).json();
    assert_eq!(d["action"]["inputSchema"]["required"], json!(["text"]));
    w.run(&["describe", "notepad", "no.such.action"]).assert_error(1, "action");
}

#[test]
fn call_and_inspect_with_every_revision_mode() {
    let _w = Watchdog::arm(PATIENCE * 3);
    let w = World::new(&["Notepad"]);
    w.daemon.wait_endpoint("notepad");

    let state = w.run(&["inspect", "notepad"]).json();
    assert_eq!(state["state"]["text"], "hello");
    let rev = state["revision"].as_u64().unwrap();
    let same = w
        .run(&["inspect", "notepad", "--input-json", &format!("{{\"sinceRevision\":{rev}}}")])
        .json();
    assert_eq!(same["state"], json!({"unchanged": true}));

    // Read: no revision needed.
    let got = w.run(&["call", "notepad", "document.get"]).json();
    assert_eq!(got["output"]["text"], "hello");

    // Write with the exact revision, from a file.
    let req = w.rt.with_file_name("insert.json");
    std::fs::write(&req, br#"{"text":" world"}"#).unwrap();
    let r = w.run(&[
        "call",
        "notepad",
        "document.text.insert",
        "--input-file",
        req.to_str().unwrap(),
        "--expected-revision",
        &rev.to_string(),
    ]);
    r.assert_code(0);
    assert!(r.stderr.is_empty(), "{}", r.stderr);
    assert_eq!(r.json()["revision"], rev + 1);

    // Stale revision: exit 1, reason on stderr, JSON error on stdout, nothing changed.
    let r = w.run(&[
        "call",
        "notepad",
        "document.text.insert",
        "--input-json",
        r#"{"text":"!"}"#,
        "--expected-revision",
        &rev.to_string(),
    ]);
    r.assert_error(1, "stale_revision");
    assert_eq!(r.json()["error"]["data"]["currentRevision"], rev + 1);
    assert_eq!(r.json()["exitCode"], 1);
    assert_eq!(w.revision(), rev + 1);

    // A write without a revision is refused; `auto` reads it first.
    w.run(&["call", "notepad", "edit.undo"]).assert_error(1, "revision_required");
    let r = w.run(&["call", "notepad", "edit.undo", "--expected-revision", "auto"]);
    r.assert_code(0);
    assert_eq!(w.run(&["inspect", "notepad"]).json()["state"]["text"], "hello");

    // Input from stdin.
    let rev = w.revision();
    let r = run_agent(
        &w.rt,
        &[
            "call",
            "notepad",
            "document.text.replace",
            "--input-file",
            "-",
            "--expected-revision",
            &rev.to_string(),
        ],
        br#"{"start":0,"end":5,"text":"bye"}"#,
    );
    r.assert_no_panic().assert_code(0);
    assert_eq!(w.run(&["call", "notepad", "document.get"]).json()["output"]["text"], "bye");

    // Schema violation and unknown action: not_executed, exit 1.
    w.run(&[
        "call",
        "notepad",
        "document.text.insert",
        "--input-json",
        r#"{"txt":1}"#,
        "--expected-revision",
        "auto",
    ])
    .assert_error(1, "schema_violation");
    w.run(&["call", "notepad", "no.such.action"]).assert_error(1, "unknown_action");

    // Deferred work prints the task.
    let t = w.run(&["call", "notepad", "document.export", "--expected-revision", "auto"]).json();
    assert!(t["task"]["id"].is_string(), "{t}");
}

#[test]
fn endpoint_names_resolve_by_slug_display_name_and_prefix() {
    let _w = Watchdog::arm(PATIENCE * 3);
    let w = World::new(&["Notepad", "Notepad", "Sketch Book ✏"]);
    w.daemon.wait_endpoint("notepad");
    w.daemon.wait_endpoint("notepad-2");
    w.daemon.wait_endpoint("sketch-book");
    // Exact slug, exact (Unicode) display name, unique prefix.
    assert_eq!(w.run(&["call", "notepad-2", "document.get"]).json()["output"]["text"], "hello");
    assert_eq!(w.run(&["call", "Sketch Book ✏", "document.get"]).json()["output"]["text"], "hello");
    assert_eq!(w.run(&["call", "sk", "document.get"]).json()["output"]["text"], "hello");
    // Two apps share the display name and the prefix: exit 3 with both candidates.
    for name in ["Notepad", "note"] {
        let r = w.run(&["actions", name]);
        r.assert_error(3, "endpoint_ambiguous");
        assert!(
            r.stderr.contains("notepad (Notepad)") && r.stderr.contains("notepad-2 (Notepad)"),
            "{}",
            r.stderr
        );
    }
    let r = w.run(&["stdio", "zzz"]);
    r.assert_error(3, "endpoint_not_found");
    assert!(r.stderr.contains("sketch-book"), "{}", r.stderr);
}

#[test]
fn a_disabled_app_is_listed_but_has_no_endpoint() {
    let _w = Watchdog::arm(PATIENCE * 3);
    let dir = TempDir::new();
    let rt = dir.rt();
    let daemon = Daemon::start(&rt, &[]);
    let _app = notepad(&rt, &["--name", "Quiet"]);
    assert!(
        jfgui_tests::wait_until(PATIENCE, || !daemon.apps().is_empty()),
        "app never registered"
    );
    let r = run_agent(&rt, &["list"], b"");
    assert!(r.stdout.contains("quiet") && r.stdout.contains(" no "), "{}", r.stdout);
    run_agent(&rt, &["call", "quiet", "document.get"], b"").assert_error(3, "endpoint_disabled");
}

#[test]
fn call_and_inspect_print_text_on_a_terminal() {
    let _w = Watchdog::arm(PATIENCE * 3);
    if !std::path::Path::new("/usr/bin/script").exists() {
        return jfgui_tests::cannot_run(
            "call_and_inspect_print_text_on_a_terminal",
            "util-linux `script` (a pty) is not installed",
        );
    }
    let w = World::new(&["Notepad"]);
    w.daemon.wait_endpoint("notepad");
    let agent = jfgui_tests::agent();
    // `script` gives the command a pseudo-terminal as stdout.
    let on_tty = |args: &str| {
        let mut cmd = std::process::Command::new("/usr/bin/script");
        cmd.args(["-qec", &format!("{} {args}", agent.display()), "/dev/null"])
            .env("JFGUI_RUNTIME_DIR", &w.rt)
            .env_remove("XDG_RUNTIME_DIR");
        let r = jfgui_tests::cli::run_command(cmd, b"");
        r.assert_code(0);
        r.stdout.replace("\r\n", "\n")
    };
    let text = on_tty("call notepad document.get");
    assert!(text.starts_with("{\n  \"text\": \"hello\","), "{text}");
    assert!(text.trim_end().ends_with("revision: 1"), "{text}");
    let text = on_tty("inspect notepad");
    assert!(text.contains("\"undoDepth\": 0") && text.contains("revision: 1"), "{text}");
    // --json wins on a terminal too.
    let text = on_tty("inspect notepad --json");
    assert!(text.starts_with("{\"protocolVersion\":\"1\""), "{text}");
}
