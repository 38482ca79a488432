//! The `jfgui-agent` binary on its error paths: usage errors, bad
//! input, no daemon, a peer that refuses or answers garbage, apps that cannot be started. Each
//! case checks the documented exit code, one stderr line with the machine-readable reason, and
//! that stdout stays clean (or carries the JSON error under `--json`).

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::Path;
use std::thread;

use jfgui_tests::cli::{Run, run_agent, run_command, silent_endpoint};
use jfgui_tests::{CrossUid, Daemon, PATIENCE, TempDir, Watchdog, cannot_run};

fn run(rt: &Path, args: &[&str]) -> Run {
    let r = run_agent(rt, args, b"");
    r.assert_no_panic();
    r
}

#[test]
fn usage_errors_exit_2_with_one_line() {
    let _w = Watchdog::arm(PATIENCE * 3);
    let dir = TempDir::new();
    let rt = dir.rt();
    let cases: &[(&[&str], &str)] = &[
        (&["frobnicate"], "unknown_subcommand"),
        (&["list", "--bogus"], "unknown_argument"),
        (&["call", "notepad"], "missing_argument"),
        (
            &["call", "n", "a", "--input-json", "{}", "--input-file", "f.json"],
            "conflicting_arguments",
        ),
        (&["call", "n", "a", "--expected-revision", "-1"], "invalid_value"),
        (&["call", "n", "a", "--expected-revision", "9007199254740992"], "invalid_value"),
        (&["stdio", "n", "--protocol", "http"], "invalid_value"),
        (&["call", "n", "a", "--input-json", "{\"a\":1,\"a\":2}"], "invalid_input_json"),
        (&["call", "n", "a", "--input-json", "{"], "invalid_input_json"),
        (&["inspect", "n", "--input-json", "[1,]"], "invalid_input_json"),
        (&["call", "n", "a", "--input-file", "/nonexistent/request.json"], "input_file_unreadable"),
    ];
    for (args, reason) in cases {
        let r = run(&rt, args);
        r.assert_error(2, reason);
        assert!(
            r.stdout.is_empty() || r.json()["exitCode"] == 2,
            "{args:?}: stdout {:?}",
            r.stdout
        );
    }
    // Malformed input on stdin for `--input-file -` (invalid UTF-8 inside a string).
    let r = run_agent(&rt, &["call", "n", "a", "--input-file", "-"], b"{\"text\": \"\xff\"}");
    r.assert_no_panic().assert_error(2, "invalid_input_json");
}

#[test]
fn help_version_completions_and_man_succeed() {
    let _w = Watchdog::arm(PATIENCE * 3);
    let dir = TempDir::new();
    let rt = dir.rt();
    let help = run(&rt, &["--help"]);
    help.assert_code(0);
    for needle in [
        "list",
        "actions",
        "describe",
        "call",
        "inspect",
        "stdio",
        "headless",
        "status",
        "Exit codes",
        "7  protocol error",
    ] {
        assert!(help.stdout.contains(needle), "--help lacks {needle:?}:\n{}", help.stdout);
    }
    for sub in ["browser-bridge", "browser-call", "browser-stdio"] {
        assert!(help.stdout.contains(sub), "--help lacks {sub}:\n{}", help.stdout);
    }
    for sub in [
        "list",
        "actions",
        "describe",
        "call",
        "batch",
        "inspect",
        "tasks",
        "read",
        "render",
        "stdio",
        "headless",
        "status",
        "completions",
        "man",
    ] {
        let r = run(&rt, &[sub, "--help"]);
        r.assert_code(0);
        assert!(r.stdout.contains("Usage: jfgui-agent"), "{sub} --help:\n{}", r.stdout);
    }
    assert!(run(&rt, &["call", "--help"]).stdout.contains("racy"));
    run(&rt, &["--version"]).assert_code(0);
    for shell in ["bash", "zsh", "fish"] {
        let script = run(&rt, &["completions", shell]);
        script.assert_code(0);
        // The dynamic registration: the shell calls jfgui-agent back at every TAB.
        assert!(script.stdout.contains("COMPLETE"), "{shell}: {}", script.stdout);
        assert!(script.stdout.contains("jfgui-agent"), "{shell}: {}", script.stdout);
    }
    for page in [&["man"][..], &["man", "jfgui-agentd"]] {
        let man = run(&rt, page);
        man.assert_code(0);
        assert!(man.stdout.starts_with(".ie") || man.stdout.contains(".TH"), "not roff");
        assert!(man.stdout.contains(".SH ENVIRONMENT"), "{page:?}");
    }
    // No subcommand: clap's help on stderr, usage exit code.
    run(&rt, &[]).assert_code(2);
}

#[test]
fn no_daemon_exits_4_with_a_start_hint() {
    let _w = Watchdog::arm(PATIENCE * 3);
    let dir = TempDir::new();
    let rt = dir.rt();
    for args in [
        &["list"][..],
        &["status"],
        &["actions", "notepad"],
        &["describe", "notepad", "document.get"],
        &["call", "notepad", "document.get"],
        &["inspect", "notepad"],
        &["stdio", "notepad", "--protocol", "mcp"],
    ] {
        let r = run(&rt, args);
        r.assert_error(4, "daemon_not_running");
        assert!(r.stderr.contains("jfgui-agentd"), "hint missing: {}", r.stderr);
        if args[0] == "call" || args[0] == "inspect" {
            // Not a terminal: JSON on stdout, errors included.
            let j = r.json();
            assert_eq!(j["exitCode"], 4);
            assert_eq!(j["error"]["data"]["reason"], "daemon_not_running");
        } else {
            assert!(r.stdout.is_empty(), "{args:?}: {:?}", r.stdout);
        }
    }
    let r = run(&rt, &["list", "--json"]);
    r.assert_error(4, "daemon_not_running");
    assert_eq!(r.json()["exitCode"], 4);
}

#[test]
fn a_relative_runtime_dir_is_a_usage_error() {
    let _w = Watchdog::arm(PATIENCE);
    run(Path::new("relative/rt"), &["list"]).assert_error(2, "invalid_runtime_dir");
}

/// A fake daemon on `agentd.sock` that runs `answer` for each accepted connection.
fn fake_control(rt: &Path, answer: fn(UnixStream)) {
    std::fs::create_dir_all(rt).unwrap();
    let listener = UnixListener::bind(rt.join("agentd.sock")).unwrap();
    thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            answer(stream);
        }
    });
}

#[test]
fn a_peer_that_closes_before_answering_is_refused_exit_5() {
    let _w = Watchdog::arm(PATIENCE * 2);
    let dir = TempDir::new();
    let rt = dir.rt();
    // What the daemon's peer check does to a foreign uid: accept, then close unread.
    fake_control(&rt, drop);
    for args in [&["list"][..], &["status"], &["call", "Some App", "x"]] {
        run(&rt, args).assert_error(5, "refused");
    }
}

#[test]
fn a_peer_that_answers_garbage_is_a_protocol_error_exit_7() {
    let _w = Watchdog::arm(PATIENCE * 2);
    let dir = TempDir::new();
    let rt = dir.rt();
    fake_control(&rt, |stream| {
        let mut line = String::new();
        let _ = BufReader::new(&stream).read_line(&mut line);
        let _ =
            (&stream).write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"a\":1,\"a\":2}}\n");
    });
    run(&rt, &["list"]).assert_error(7, "malformed_response");
    let r = run(&rt, &["status", "--json"]);
    r.assert_error(7, "malformed_response");
    assert_eq!(r.json()["exitCode"], 7);
}

#[test]
fn a_call_that_is_never_answered_times_out_exit_6() {
    let _w = Watchdog::arm(PATIENCE * 2);
    let dir = TempDir::new();
    let rt = dir.rt();
    std::fs::create_dir_all(rt.join("apps")).unwrap();
    silent_endpoint(&rt.join("apps/hung.sock"));
    let r = run(&rt, &["--timeout", "1", "call", "hung", "document.get"]);
    r.assert_error(6, "timeout");
    assert_eq!(r.json()["error"]["data"]["reason"], "timeout");
}

#[test]
fn unknown_endpoint_with_a_running_daemon_exits_3() {
    let _w = Watchdog::arm(PATIENCE * 2);
    let dir = TempDir::new();
    let rt = dir.rt();
    let _daemon = Daemon::start(&rt, &[]);
    for args in
        [&["actions", "notepad"][..], &["stdio", "notepad"], &["call", "Notepad", "document.get"]]
    {
        run(&rt, args).assert_error(3, "endpoint_not_found");
    }
    let r = run(&rt, &["list"]);
    r.assert_code(0);
    assert_eq!(r.stdout.trim(), "no apps are registered");
    assert_eq!(run(&rt, &["list", "--json"]).json(), serde_json::json!({"apps": []}));
    let status = run(&rt, &["status", "--json"]).json();
    assert_eq!(status["apps"], 0);
    assert_eq!(status["runtimeDir"], rt.to_str().unwrap());
}

#[test]
fn a_misspelled_endpoint_gets_the_nearest_names() {
    let _w = Watchdog::arm(PATIENCE * 2);
    let dir = TempDir::new();
    let rt = dir.rt();
    let (_daemon, _app) = jfgui_tests::cli::daemon_with_notepad(&rt, &[]);
    let r = run(&rt, &["call", "notepd", "document.get"]);
    r.assert_error(3, "endpoint_not_found");
    assert!(r.stderr.contains("did you mean notepad?"), "{}", r.stderr);
    let r = run(&rt, &["call", "notepd", "document.get", "--json"]);
    r.assert_code(3);
    assert_eq!(r.json()["error"]["data"]["suggestions"], serde_json::json!(["notepad"]));
}

#[test]
fn a_misspelled_action_gets_the_nearest_names_from_the_app_and_the_daemon() {
    let _w = Watchdog::arm(PATIENCE * 2);
    let dir = TempDir::new();
    let rt = dir.rt();
    let (_daemon, _app) = jfgui_tests::cli::daemon_with_notepad(&rt, &[]);
    // execute: the app's dispatcher answers unknown_action with data.suggestions (JSON-1) ...
    let r = run(&rt, &["call", "notepad", "document.gt", "--json"]);
    r.assert_code(1);
    let error = &r.json()["error"];
    assert_eq!(error["data"]["reason"], "unknown_action", "{error}");
    assert_eq!(error["data"]["suggestions"][0], "document.get", "{error}");
    // ... and describe: the daemon answers not_found/action with the same.
    let r = run(&rt, &["describe", "notepad", "document.gt", "--json"]);
    let error = &r.json()["error"];
    assert_eq!(error["data"]["reason"], "action", "{error}");
    assert_eq!(error["data"]["suggestions"][0], "document.get", "{error}");
    let r = run(&rt, &["describe", "notepad", "document.gt"]);
    assert!(r.stderr.contains("did you mean document.get"), "{}", r.stderr);
}

#[test]
fn headless_apps_that_cannot_serve_get_one_line_and_their_exit_code() {
    let _w = Watchdog::arm(PATIENCE * 3);
    let dir = TempDir::new();
    let rt = dir.rt();
    run(&rt, &["headless", "/nonexistent/app"]).assert_error(3, "app_not_found");
    run(&rt, &["headless", "no-such-command-jfgui"]).assert_error(3, "app_not_found");
    let not_exec = dir.path().join("not-executable");
    std::fs::write(&not_exec, b"#!/bin/sh\n").unwrap();
    run(&rt, &["headless", not_exec.to_str().unwrap()]).assert_error(5, "permission_denied");
    let r = run(&rt, &["headless", "/bin/sh", "--", "-c", "exit 3"]);
    r.assert_error(4, "app_exited");
    assert!(r.stderr.contains("exit status: 3"), "{}", r.stderr);
    // Alive but speaking garbage on the host channel.
    run(&rt, &["headless", "/bin/sh", "--", "-c", "echo garbage; exec sleep 60"])
        .assert_error(7, "handshake_failed");
}

#[test]
fn another_users_runtime_dir_is_refused_exit_5() {
    let _w = Watchdog::arm(PATIENCE * 3);
    let cross = match CrossUid::setup() {
        Ok(c) => c,
        Err(reason) => return cannot_run("another_users_runtime_dir_is_refused_exit_5", &reason),
    };
    let home = cross.home_for(&cross.a);
    let rt = home.path().join("rt");
    let mut cmd = cross.command_as(&cross.a, &cross.bin("jfgui-agentd"));
    cmd.env("JFGUI_RUNTIME_DIR", &rt).env_remove("XDG_RUNTIME_DIR");
    let _daemon = Daemon::start_command(&rt, cmd);
    let mut cmd = cross.command_as(&cross.b, &cross.bin("jfgui-agent"));
    cmd.env("JFGUI_RUNTIME_DIR", &rt).env_remove("XDG_RUNTIME_DIR").arg("list");
    // The CLI refuses the directory of another user before connecting (client-side trust).
    run_command(cmd, b"").assert_no_panic().assert_error(5, "untrusted_runtime_dir");
    // The owner itself is served.
    let mut cmd = cross.command_as(&cross.a, &cross.bin("jfgui-agent"));
    cmd.env("JFGUI_RUNTIME_DIR", &rt).env_remove("XDG_RUNTIME_DIR").args(["status", "--json"]);
    run_command(cmd, b"").assert_code(0);
}

/// Each error a user can act on says what to do.
#[test]
fn usage_errors_keep_clap_tips_and_honour_json() {
    let _w = Watchdog::arm(PATIENCE * 2);
    let dir = TempDir::new();
    let rt = dir.rt();
    let r = run(&rt, &["cal"]);
    r.assert_error(2, "unknown_subcommand");
    assert!(r.stderr.contains("a similar subcommand exists: 'call'"), "{}", r.stderr);
    assert!(r.stderr.contains("(see `jfgui-agent --help`)"), "{}", r.stderr);
    let r = run(&rt, &["headless", "jfgui-notepad", "--text", "hi"]);
    r.assert_error(2, "unknown_argument");
    assert!(r.stderr.contains("use '-- --text'"), "{}", r.stderr);
    assert!(r.stderr.contains("(see `jfgui-agent headless --help`)"), "{}", r.stderr);
    let r = run(&rt, &["tasks", "notepad", "frob", "x", "--json"]);
    r.assert_error(2, "invalid_value");
    let j = r.json();
    assert_eq!(j["exitCode"], 2);
    assert_eq!(j["error"]["data"]["reason"], "invalid_value");
    let message = j["error"]["message"].as_str().unwrap();
    assert!(message.contains("[possible values: get, wait, cancel]"), "{message}");
    assert!(message.ends_with("(see `jfgui-agent tasks --help`)"), "{message}");
    // After `--`, `--json` belongs to the app, not to us.
    let r = run(&rt, &["headless", "--bogus", "app", "--", "--json"]);
    r.assert_error(2, "unknown_argument");
    assert!(r.stdout.is_empty(), "{:?}", r.stdout);
}

#[test]
fn action_errors_name_what_to_fix() {
    let _w = Watchdog::arm(PATIENCE * 3);
    let dir = TempDir::new();
    let rt = dir.rt();
    let (_daemon, _app) = jfgui_tests::cli::daemon_with_notepad(&rt, &[]);

    let r = run(&rt, &["describe", "notepad", "no.such.action"]);
    r.assert_error(1, "action");
    assert!(r.stderr.contains("\"no.such.action\""), "{}", r.stderr);
    assert!(r.stderr.contains("jfgui-agent actions notepad"), "{}", r.stderr);

    // A revision from the future does not match; it is not "stale".
    let r = run(&rt, &["call", "notepad", "edit.undo", "--expected-revision", "999"]);
    r.assert_error(1, "stale_revision");
    assert!(r.stderr.contains("does not match") && !r.stderr.contains(" stale"), "{}", r.stderr);

    // A string over the bound states the bound.
    let long = format!("{{\"text\":\"{}\"}}", "a".repeat(300_000));
    let file = dir.path().join("long.json");
    std::fs::write(&file, long).unwrap();
    let r = run(
        &rt,
        &["call", "notepad", "document.text.insert", "--input-file", file.to_str().unwrap()],
    );
    r.assert_error(2, "invalid_input_json");
    assert!(r.stderr.contains("262144 bytes per string"), "{}", r.stderr);

    // The example in `inspect --help` works as printed.
    let help = run(&rt, &["inspect", "--help"]);
    let example = help
        .stdout
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with("jfgui-agent inspect"))
        .expect("an example in inspect --help");
    let bin_dir = jfgui_tests::agent().parent().unwrap().to_path_buf();
    let mut cmd = std::process::Command::new("sh");
    cmd.args(["-c", example])
        .env("PATH", format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap_or_default()))
        .env("JFGUI_RUNTIME_DIR", &rt)
        .env_remove("XDG_RUNTIME_DIR");
    let r = run_command(cmd, b"");
    r.assert_code(0);
    assert!(r.json()["revision"].is_u64(), "{example}: {}", r.stdout);
}

#[test]
fn a_shared_runtime_dir_gets_advice_not_chmod() {
    let _w = Watchdog::arm(PATIENCE);
    let mut cmd = std::process::Command::new(jfgui_tests::agentd());
    cmd.args(["--runtime-dir", "/tmp"]).env_remove("JFGUI_RUNTIME_DIR");
    let (status, stderr) = jfgui_tests::run_daemon(cmd);
    assert_eq!(status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("dedicated directory"), "{stderr}");
    assert!(!stderr.contains("chmod"), "{stderr}");
}
