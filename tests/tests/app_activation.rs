//! Activation through real processes: a real daemon starts a real Notepad (or a failing or
//! silent program) from a launch file written by the app itself, when a CLI command, an
//! all-apps MCP tool or `apps/activate` names it while it is not running. Concurrent calls
//! share one start, untrusted files are ignored, arguments pass literally, failures carry the
//! exit status and the stderr tail and back off, and the app outlives a daemon killed after
//! or during its start. One that registers with agent access off keeps running and the calls
//! are told it is disabled.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::thread;

use jfgui_tests::cli::run_agent;
use jfgui_tests::{
    Daemon, LineClient, PATIENCE, TempDir, Watchdog, bin, daemon_command, data_dir, notepad, rpc,
    wait_until,
};
use serde_json::{Value, json};

const MODERN: &str = "2026-07-28";

/// The processes the daemon of `rt` started for agents (`JFGUI_ACTIVATED` and this runtime dir
/// in their environment; a test's program may change the former's value), killed on drop:
/// they are not the test's children.
struct Activated(PathBuf);

impl Activated {
    fn pids(&self) -> Vec<u32> {
        let rt = format!("JFGUI_RUNTIME_DIR={}", self.0.display());
        let Ok(entries) = fs::read_dir("/proc") else { return Vec::new() };
        entries
            .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
            .filter(|pid| {
                let Ok(environ) = fs::read(format!("/proc/{pid}/environ")) else { return false };
                let vars: Vec<&[u8]> = environ.split(|b| *b == 0).collect();
                vars.contains(&rt.as_bytes())
                    && vars.iter().any(|v| v.starts_with(b"JFGUI_ACTIVATED="))
            })
            .collect()
    }

    /// Whether `pid` is a zombie (ended, not reaped).
    fn zombies(&self) -> Vec<u32> {
        self.pids()
            .into_iter()
            .filter(|pid| {
                fs::read_to_string(format!("/proc/{pid}/stat"))
                    .ok()
                    .and_then(|s| s.rsplit(") ").next().map(|rest| rest.starts_with('Z')))
                    .unwrap_or(false)
            })
            .collect()
    }
}

impl Drop for Activated {
    fn drop(&mut self) {
        for pid in self.pids() {
            let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
        }
    }
}

/// Writes Notepad's launch file the way the app does (`--let-agents-start on`), with `args`.
fn install_notepad(rt: &Path, args: &[&str]) -> PathBuf {
    let mut all = vec!["--let-agents-start", "on"];
    all.extend_from_slice(args);
    let mut setting = notepad(rt, &all);
    let status = setting.wait_exit(PATIENCE).expect("notepad --let-agents-start exits");
    assert!(status.success(), "{}", setting.stderr());
    launch_dir(rt).join("notepad.json")
}

fn launch_dir(rt: &Path) -> PathBuf {
    data_dir(rt).join("jfgui-agent/apps")
}

/// A launch file for `program` written by hand (the test's own programs).
fn install(rt: &Path, slug: &str, name: &str, exec: &[&str]) -> PathBuf {
    let dir = launch_dir(rt);
    fs::create_dir_all(&dir).unwrap();
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o700)).unwrap();
    let path = dir.join(format!("{slug}.json"));
    let text = json!({"displayName": name, "exec": exec, "activatable": true}).to_string();
    fs::write(&path, text).unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o600)).unwrap();
    path
}

/// A private shell script in `dir`.
fn script(dir: &Path, name: &str, body: &str) -> String {
    let path = dir.join(name);
    fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o700)).unwrap();
    path.to_str().unwrap().to_string()
}

fn activate(d: &Daemon, app: &str) -> Value {
    rpc(&d.control(), "apps/activate", json!({"app": app})).expect("apps/activate")
}

fn mcp_call(client: &mut LineClient, tool: &str, arguments: Value) -> Value {
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    let response = client
        .call("tools/call", json!({"_meta": meta, "name": tool, "arguments": arguments}))
        .expect("tools/call");
    response["result"].clone()
}

#[test]
fn a_cli_call_starts_an_installed_notepad_with_its_arguments_literally() {
    let _w = Watchdog::arm(PATIENCE * 3);
    let dir = TempDir::new();
    let rt = dir.rt();
    let activated = Activated(rt.clone());
    let marker = dir.path().join("injected");
    let text = format!("a; touch {} $(touch {})", marker.display(), marker.display());
    let file = install_notepad(&rt, &["--confirm", "allow", "--text", &text]);
    assert!(file.is_file());
    let d = Daemon::start(&rt, &[]);
    // Installed, not running: listed so, and `--no-activate` does not start it.
    let rows = d.apps();
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(
        (rows[0]["slug"].as_str(), rows[0]["running"].as_bool()),
        (Some("notepad"), Some(false))
    );
    let refused =
        run_agent(&rt, &["--no-activate", "call", "notepad", "document.get", "--json"], b"");
    refused.assert_code(3);
    assert!(refused.stdout.contains("app_not_running"), "{refused:?}");
    assert!(activated.pids().is_empty());

    let got = run_agent(&rt, &["call", "notepad", "document.get", "--json"], b"");
    got.assert_code(0);
    assert_eq!(got.json()["output"]["text"], text, "{got:?}");
    assert!(!marker.exists(), "an argument ran through a shell");
    assert_eq!(activated.pids().len(), 1);
    // It registered enabled and says why on its stderr (the activation log).
    let rows = d.apps();
    assert_eq!((rows.len(), rows[0]["enabled"].as_bool()), (1, Some(true)), "{rows:?}");
    let log = fs::read_to_string(rt.join("activated/notepad.log")).unwrap();
    assert!(log.contains("started by an agent: agent access enabled"), "{log}");
    let apps = run_agent(&rt, &["apps", "--json"], b"");
    apps.assert_code(0);
    assert_eq!(apps.json()["apps"][0]["running"], true, "{apps:?}");

    // Forgotten: no longer listed once it is gone.
    run_agent(&rt, &["apps", "forget", "Notepad"], b"").assert_code(0);
    assert!(!file.exists());
    run_agent(&rt, &["apps", "forget", "notepad"], b"").assert_code(3);
}

#[test]
fn a_hundred_concurrent_mcp_calls_start_one_process() {
    let _w = Watchdog::arm(PATIENCE * 3);
    let dir = TempDir::new();
    let rt = dir.rt();
    let activated = Activated(rt.clone());
    install_notepad(&rt, &["--text", "shared"]);
    let d = Daemon::start(&rt, &[]);
    let mut lister = LineClient::connect(&rt.join("mcp.sock")).unwrap();
    let listed = mcp_call(&mut lister, "jfgui_apps_list", json!({}));
    assert_eq!(
        listed["structuredContent"]["apps"],
        json!([{"app": "notepad", "displayName": "Notepad", "running": false}]),
        "{listed}"
    );
    let calls: Vec<_> = (0..100)
        .map(|_| {
            let mcp = rt.join("mcp.sock");
            thread::spawn(move || {
                let mut client = LineClient::connect(&mcp).expect("connect mcp.sock");
                mcp_call(&mut client, "jfgui_state_inspect", json!({"app": "notepad"}))
            })
        })
        .collect();
    for call in calls {
        let result = call.join().expect("caller thread");
        assert_eq!(result["isError"], false, "{result}");
        assert_eq!(result["structuredContent"]["state"]["text"], "shared", "{result}");
    }
    assert_eq!(activated.pids().len(), 1, "one start for all the calls");
    let log = d.proc.stderr();
    assert_eq!(log.matches("started an installed app").count(), 1, "{log}");
}

#[test]
fn untrusted_launch_files_are_ignored_with_a_log_line() {
    let _w = Watchdog::arm(PATIENCE * 3);
    let dir = TempDir::new();
    let rt = dir.rt();
    let activated = Activated(rt.clone());
    let ok = script(dir.path(), "ok.sh", "sleep 100");
    let loose = script(dir.path(), "loose.sh", "sleep 100");
    fs::set_permissions(&loose, fs::Permissions::from_mode(0o777)).unwrap();
    let link = dir.path().join("link.sh");
    std::os::unix::fs::symlink(&loose, &link).unwrap();
    let grouped = install(&rt, "grouped", "Grouped", &[&ok]);
    fs::set_permissions(&grouped, fs::Permissions::from_mode(0o660)).unwrap();
    install(&rt, "relative", "Relative", &["ok.sh"]);
    install(&rt, "loose", "Loose", &[&loose]);
    install(&rt, "linked", "Linked", &[link.to_str().unwrap()]);
    install(&rt, "missing", "Missing", &["/nonexistent/app"]);
    let d = Daemon::start(&rt, &[]);
    assert_eq!(d.apps(), Vec::<Value>::new());
    for slug in ["grouped", "relative", "loose", "linked", "missing"] {
        let answer = activate(&d, slug);
        assert_eq!(answer["error"]["data"]["reason"], "app", "{slug}: {answer}");
        assert!(d.proc.wait_stderr(&format!("{slug}.json ignored")), "{}", d.proc.stderr());
    }
    // A dir others may write in: nothing in it counts.
    install(&rt, "fine", "Fine", &[&ok]);
    fs::set_permissions(launch_dir(&rt), fs::Permissions::from_mode(0o777)).unwrap();
    assert_eq!(activate(&d, "fine")["error"]["data"]["reason"], "app");
    assert!(d.proc.wait_stderr("writable by group or others"));
    assert!(activated.pids().is_empty());
}

#[test]
fn a_failing_start_answers_its_status_and_stderr_tail_then_backs_off() {
    let _w = Watchdog::arm(PATIENCE * 3);
    let dir = TempDir::new();
    let rt = dir.rt();
    let activated = Activated(rt.clone());
    // 10 MiB on stderr, then exit 3.
    let noisy = script(
        dir.path(),
        "noisy.sh",
        "head -c 10485760 /dev/zero | tr '\\0' x >&2; echo ' the end' >&2; exit 3",
    );
    install(&rt, "noisy", "Noisy", &[&noisy]);
    // Long enough that the second call surely falls within it, even on a loaded machine.
    let d = Daemon::start(&rt, &["--activation-backoff", "2s"]);
    let first = activate(&d, "noisy");
    let data = &first["error"]["data"];
    assert_eq!(data["reason"], "activation_failed", "{first}");
    assert_eq!(first["error"]["code"], 1000, "not executed");
    assert_eq!(data["exitStatus"], "exit status 3");
    let stderr = data["stderr"].as_str().unwrap();
    assert!(stderr.len() <= 1024 && stderr.ends_with(" the end\n"), "{}", stderr.len());
    assert_eq!(data["retryAfterMs"], 2000);
    // Within the backoff: the same failure at once, no new start.
    let again = activate(&d, "noisy");
    assert_eq!(again["error"]["data"]["reason"], "activation_failed", "{again}");
    assert!(again["error"]["data"]["retryAfterMs"].as_u64().unwrap() <= 2000);
    assert_eq!(d.proc.stderr().matches("started an installed app").count(), 1);
    // After it: a new start, and the next wait doubles.
    assert!(wait_until(PATIENCE, || {
        let answer = activate(&d, "noisy");
        answer["error"]["data"]["retryAfterMs"] == 4000
    }));
    assert_eq!(d.proc.stderr().matches("started an installed app").count(), 2);
    assert!(activated.zombies().is_empty());
}

#[test]
fn an_app_that_never_registers_is_stopped_at_the_deadline() {
    let _w = Watchdog::arm(PATIENCE * 3);
    let dir = TempDir::new();
    let rt = dir.rt();
    let activated = Activated(rt.clone());
    let silent = script(dir.path(), "silent.sh", "echo waiting >&2; exec sleep 1000");
    install(&rt, "silent", "Silent", &[&silent]);
    let d = Daemon::start(&rt, &["--activation-deadline", "1s"]);
    let answer = activate(&d, "silent");
    let data = &answer["error"]["data"];
    assert_eq!(data["reason"], "activation_failed", "{answer}");
    assert!(answer["error"]["message"].as_str().unwrap().contains("did not register"));
    assert_eq!(data["stderr"], "waiting\n");
    assert!(wait_until(PATIENCE, || activated.pids().is_empty()), "stopped and reaped");
}

#[test]
fn the_activated_app_outlives_a_killed_daemon_and_registers_again() {
    let _w = Watchdog::arm(PATIENCE * 3);
    let dir = TempDir::new();
    let rt = dir.rt();
    let activated = Activated(rt.clone());
    install_notepad(&rt, &["--text", "kept"]);
    let mut d = Daemon::start(&rt, &[]);
    let answer = activate(&d, "Notepad");
    assert_eq!(answer["result"]["app"], "notepad", "{answer}");
    assert_eq!(answer["result"]["started"], true);
    let pids = activated.pids();
    assert_eq!(pids.len(), 1);
    // Already running: answered without a start.
    assert_eq!(activate(&d, "notepad")["result"]["started"], false);
    d.proc.signal("KILL");
    let _ = d.proc.wait_exit(PATIENCE);
    assert_eq!(activated.pids(), pids, "the app is not the daemon's to take along");
    let d = Daemon::start_command(&rt, daemon_command(&rt, &[]));
    let endpoint = d.wait_endpoint("notepad");
    let state = jfgui_tests::json1(&endpoint, "state/inspect", json!({}));
    assert_eq!(state["state"]["text"], "kept", "{state}");
    assert_eq!(activated.pids(), pids);
}

#[test]
fn an_app_registering_with_access_off_keeps_running_and_the_call_says_disabled() {
    let _w = Watchdog::arm(PATIENCE * 3);
    let dir = TempDir::new();
    let rt = dir.rt();
    let activated = Activated(rt.clone());
    // Without the activation mark Notepad registers with agent access off, as one whose user
    // turned access off before it registered.
    let notepad = bin("jfgui-notepad");
    let off = script(
        dir.path(),
        "off.sh",
        &format!("JFGUI_ACTIVATED=off exec {} --text kept", notepad.display()),
    );
    install(&rt, "notepad", "Notepad", &[&off]);
    // A start that waited for access on would hang here until the watchdog fires.
    let d = Daemon::start(&rt, &["--activation-deadline", "60m"]);
    let answer = activate(&d, "Notepad");
    assert_eq!(answer["error"]["code"], 1000, "not executed: {answer}");
    assert_eq!(answer["error"]["data"]["reason"], "app_disabled", "{answer}");
    assert_eq!(answer["error"]["data"]["app"], "notepad");
    assert!(answer["error"]["message"].as_str().unwrap().contains("turn it on"), "{answer}");
    let pids = activated.pids();
    assert_eq!(pids.len(), 1, "the user's app keeps running");
    let list = rpc(&d.control(), "apps/list", json!({})).unwrap();
    let apps = list["result"]["apps"].as_array().unwrap();
    assert_eq!(apps.len(), 1, "{list}");
    assert_eq!(apps[0]["enabled"], false, "{list}");
    assert_eq!(apps[0]["pid"], pids[0]);
    assert!(!d.proc.stderr().contains("starting an installed app failed"), "{}", d.proc.stderr());
}

#[test]
fn an_app_starting_when_the_daemon_is_killed_registers_with_the_next_one() {
    let _w = Watchdog::arm(PATIENCE * 3);
    let dir = TempDir::new();
    let rt = dir.rt();
    let activated = Activated(rt.clone());
    // The app holds off registering until the test says go (a line through a FIFO, so it
    // runs no other process meanwhile): the kill falls inside its start.
    let go = dir.path().join("go");
    assert!(Command::new("mkfifo").arg(&go).status().unwrap().success());
    let slow = script(
        dir.path(),
        "slow.sh",
        &format!("read go < {}\nexec {} --text kept", go.display(), bin("jfgui-notepad").display()),
    );
    install(&rt, "notepad", "Notepad", &[&slow]);
    let mut d = Daemon::start(&rt, &[]);
    let control = d.control();
    let call = thread::spawn(move || rpc(&control, "apps/activate", json!({"app": "Notepad"})));
    assert!(wait_until(PATIENCE, || activated.pids().len() == 1), "the start began");
    let pids = activated.pids();
    d.proc.signal("KILL");
    let _ = d.proc.wait_exit(PATIENCE);
    assert!(call.join().unwrap().is_err(), "the waiting call ends with its connection");
    assert_eq!(activated.pids(), pids, "the starting app is not the daemon's to take along");
    let d = Daemon::start_command(&rt, daemon_command(&rt, &[]));
    fs::write(&go, "go\n").unwrap();
    let endpoint = d.wait_endpoint("notepad");
    let state = jfgui_tests::json1(&endpoint, "state/inspect", json!({}));
    assert_eq!(state["state"]["text"], "kept", "{state}");
    assert_eq!(activate(&d, "notepad")["result"]["started"], false, "no second start");
    assert_eq!(activated.pids(), pids);
    assert!(activated.zombies().is_empty());
}
