//! The stdio gateway and headless mode through real pipes:
//! both protocols, stdout carrying only protocol lines, oversize and garbage input, EOF,
//! the daemon killed mid-request, stdout closed by the client.

use std::io::Read;
use std::process::Stdio;

use jfgui_tests::cli::{Session, agent_command, daemon_with_notepad, run_agent};
use jfgui_tests::{PATIENCE, TempDir, Watchdog, bin, status_kib, wait_until};
use serde_json::{Value, json};

const INFO: &str = r#"{"jsonrpc":"2.0","id":1,"method":"agent/info"}"#;
const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"cli-test","version":"1"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
const TOOLS_LIST: &str = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;

/// Asserts that stdout holds `n` lines, each strict JSON (serde_json is stricter than nothing
/// and independent of our codec); returns them by id.
fn answers_by_id(stdout: &str, n: usize) -> std::collections::HashMap<String, Value> {
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), n, "{lines:?}");
    lines
        .iter()
        .map(|l| {
            let v: Value =
                serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l:?}"));
            (v["id"].to_string(), v)
        })
        .collect()
}

#[test]
fn stdio_json_pipes_requests_and_exits_0_on_eof() {
    let _w = Watchdog::arm(PATIENCE * 3);
    let dir = TempDir::new();
    let rt = dir.rt();
    let (_daemon, _app) = daemon_with_notepad(&rt, &["--text", "hello"]);
    let input = format!("{INFO}\n\n{}\n", r#"{"jsonrpc":"2.0","id":"s","method":"state/inspect"}"#);
    let r = run_agent(&rt, &["stdio", "notepad", "--protocol", "json"], input.as_bytes());
    r.assert_no_panic().assert_code(0);
    assert!(r.stderr.is_empty(), "{}", r.stderr);
    let answers = answers_by_id(&r.stdout, 2);
    assert_eq!(answers["1"]["result"]["app"]["slug"], "notepad");
    assert_eq!(answers["\"s\""]["result"]["state"]["text"], "hello");
}

#[test]
fn stdio_mcp_legacy_session() {
    let _w = Watchdog::arm(PATIENCE * 3);
    let dir = TempDir::new();
    let rt = dir.rt();
    let (_daemon, _app) = daemon_with_notepad(&rt, &[]);
    let input = format!("{INITIALIZE}\n{INITIALIZED}\n{TOOLS_LIST}\n");
    let r = run_agent(&rt, &["stdio", "Notepad", "--protocol", "mcp"], input.as_bytes());
    r.assert_no_panic().assert_code(0);
    // Two answers: the notification gets none.
    let answers = answers_by_id(&r.stdout, 2);
    assert_eq!(answers["1"]["result"]["protocolVersion"], "2025-11-25");
    let tools = answers["2"]["result"]["tools"].as_array().expect("tools");
    assert!(tools.iter().any(|t| t["name"] == "jfgui_actions_execute"), "{tools:?}");
}

#[test]
fn garbage_oversize_and_invalid_utf8_keep_stdout_protocol_only() {
    let _w = Watchdog::arm(PATIENCE * 3);
    let dir = TempDir::new();
    let rt = dir.rt();
    let (_daemon, _app) = daemon_with_notepad(&rt, &[]);
    let mut s = Session::start(agent_command(&rt, &["stdio", "notepad", "--protocol", "json"]));
    s.send("this is not json");
    assert_eq!(s.recv()["error"]["code"], -32700);
    s.send_bytes(b"{\"jsonrpc\":\"2.0\",\"id\":\"\xff\",\"method\":\"agent/info\"}\n");
    assert_eq!(s.recv()["error"]["code"], -32700);
    // 10 MiB line: answered locally, skipped, never held whole.
    let baseline = status_kib(s.pid(), "VmHWM").expect("VmHWM");
    let mut huge = vec![b'x'; 10 * 1024 * 1024];
    huge.push(b'\n');
    s.send_bytes(&huge);
    let e = s.recv();
    assert_eq!(e["error"]["code"], -32600);
    assert_eq!(e["error"]["data"]["reason"], "too_large");
    assert!(e["id"].is_null());
    // The connection is intact afterwards.
    s.send(INFO);
    assert_eq!(s.recv()["result"]["app"]["slug"], "notepad");
    let peak = status_kib(s.pid(), "VmHWM").expect("VmHWM");
    eprintln!("gateway VmHWM: {baseline} KiB before the 10 MiB line, {peak} KiB after");
    assert!(
        peak < baseline + 8 * 1024,
        "gateway memory grew with the line: {baseline} -> {peak} KiB"
    );
    // EOF in the middle of a request line: what was sent is a (malformed) line, then exit 0.
    s.send_bytes(br#"{"jsonrpc":"2.0","id":9,"meth"#);
    s.close_stdin();
    let (status, rest, stderr) = s.finish();
    assert_eq!(status.code(), Some(0), "stderr: {stderr}");
    for line in &rest {
        let v: Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
        assert_eq!(v["jsonrpc"], "2.0");
    }
}

#[test]
fn daemon_killed_mid_request_answers_in_flight_and_exits_4() {
    let _w = Watchdog::arm(PATIENCE * 3);
    for (protocol, code) in [("json", 1001), ("mcp", -32603)] {
        let dir = TempDir::new();
        let rt = dir.rt();
        let (mut daemon, app) = daemon_with_notepad(&rt, &[]);
        let mut s =
            Session::start(agent_command(&rt, &["stdio", "notepad", "--protocol", protocol]));
        s.send(INFO);
        assert_eq!(s.recv()["result"]["app"]["slug"], "notepad");
        // Freeze the app so the next call stays in flight at the daemon, then kill the daemon.
        app.signal("STOP");
        s.send(r#"{"jsonrpc":"2.0","id":"w","method":"state/inspect"}"#);
        std::thread::sleep(std::time::Duration::from_millis(200));
        daemon.proc.signal("KILL");
        let lost = s.recv();
        assert_eq!(lost["id"], "w", "{lost}");
        assert_eq!(lost["error"]["code"], code, "{lost}");
        assert_eq!(lost["error"]["data"]["class"], "outcome_unknown");
        let (status, rest, stderr) = s.finish();
        assert_eq!(status.code(), Some(4), "stderr: {stderr}");
        assert!(rest.is_empty(), "{rest:?}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.starts_with("jfgui-agent: error[connection_lost]: "), "{stderr}");
        app.signal("CONT");
        let _ = daemon.proc.wait_exit(PATIENCE);
    }
}

#[test]
fn stdout_closed_by_the_client_is_a_quiet_exit() {
    let _w = Watchdog::arm(PATIENCE * 3);
    let dir = TempDir::new();
    let rt = dir.rt();
    let (_daemon, _app) = daemon_with_notepad(&rt, &[]);
    let mut child = agent_command(&rt, &["stdio", "notepad", "--protocol", "json"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let mut stdin = child.stdin.take().unwrap();
    // Keep writing until the gateway notices its stdout is gone and leaves.
    let writer = std::thread::spawn(move || {
        use std::io::Write;
        for _ in 0..10_000 {
            if stdin.write_all(format!("{INFO}\n").as_bytes()).is_err() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    });
    assert!(wait_until(PATIENCE, || child.try_wait().unwrap().is_some()), "gateway did not exit");
    let status = child.wait().unwrap();
    let mut stderr = String::new();
    child.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
    assert_eq!(status.code(), Some(0), "stderr: {stderr}");
    assert!(stderr.is_empty(), "quiet exit expected: {stderr}");
    writer.join().unwrap();
}

#[test]
fn headless_serves_both_protocols_without_a_daemon() {
    let _w = Watchdog::arm(PATIENCE * 3);
    let dir = TempDir::new();
    let rt = dir.rt(); // never created: no daemon anywhere
    let app = bin("jfgui-notepad");
    let app = app.to_str().unwrap();

    let input = format!("{INFO}\n{}\n", r#"{"jsonrpc":"2.0","id":2,"method":"state/inspect"}"#);
    let r = run_agent(
        &rt,
        &["headless", app, "--protocol", "json", "--", "--text", "two words"],
        input.as_bytes(),
    );
    r.assert_no_panic().assert_code(0);
    let answers = answers_by_id(&r.stdout, 2);
    assert_eq!(answers["1"]["result"]["app"]["displayName"], "Notepad");
    // APP_ARGS arrived unchanged (one argument with a space).
    assert_eq!(answers["2"]["result"]["state"]["text"], "two words");

    let call = json!({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"jfgui_state_inspect","arguments":{}}});
    let input = format!("{INITIALIZE}\n{INITIALIZED}\n{TOOLS_LIST}\n{call}\n");
    let r = run_agent(
        &rt,
        &["headless", app, "--protocol", "mcp", "--", "--text", "mcp"],
        input.as_bytes(),
    );
    r.assert_no_panic().assert_code(0);
    let answers = answers_by_id(&r.stdout, 3);
    assert_eq!(answers["1"]["result"]["protocolVersion"], "2025-11-25");
    assert!(
        answers["2"]["result"]["tools"].as_array().is_some_and(|t| t.len() == 9),
        "{}",
        answers["2"]
    );
    assert_eq!(
        answers["3"]["result"]["structuredContent"]["state"]["text"], "mcp",
        "{}",
        answers["3"]
    );
    assert!(!rt.exists(), "headless must not touch the runtime dir");
}

#[test]
fn headless_app_exiting_mid_session_exits_4_and_the_app_ends_with_us() {
    let _w = Watchdog::arm(PATIENCE * 3);
    let dir = TempDir::new();
    let rt = dir.rt();
    let app = bin("jfgui-notepad");
    let mut s = Session::start(agent_command(
        &rt,
        &["headless", app.to_str().unwrap(), "--protocol", "json"],
    ));
    s.send(INFO);
    let info = s.recv();
    let app_pid = info["result"]["app"]["pid"].as_u64().expect("app pid") as u32;
    assert!(std::path::Path::new(&format!("/proc/{app_pid}")).exists());
    // The app dies: the session ends with exit 4 and the reason.
    let status =
        std::process::Command::new("kill").args(["-KILL", &app_pid.to_string()]).status().unwrap();
    assert!(status.success());
    let (status, _rest, stderr) = s.finish();
    assert_eq!(status.code(), Some(4), "stderr: {stderr}");
    assert!(stderr.contains("error[connection_lost]"), "{stderr}");

    // Normal end: our stdin closes, the app is gone afterwards.
    let mut s = Session::start(agent_command(&rt, &["headless", app.to_str().unwrap()]));
    s.send(INFO);
    let app_pid = s.recv()["result"]["app"]["pid"].as_u64().unwrap();
    s.close_stdin();
    let (status, _, stderr) = s.finish();
    assert_eq!(status.code(), Some(0), "stderr: {stderr}");
    assert!(
        wait_until(PATIENCE, || !std::path::Path::new(&format!("/proc/{app_pid}")).exists()),
        "the app outlived jfgui-agent"
    );
}
