//! Per-app endpoints with the real example app: an
//! endpoint exists exactly while its app is connected and enabled, several instances get
//! distinct slugs, modes are 0600 whatever the umask, apps come back after a daemon restart
//! with their state intact, and `--demo` runs daemon and app as one command.

use std::fs;
use std::os::unix::net::UnixStream;
use std::process::Command;
use std::time::Duration;

use jfgui_tests::serde_json::json;
use jfgui_tests::{Daemon, PATIENCE, Proc, TempDir, Watchdog, json1, mode, notepad, wait_until};

#[test]
fn endpoint_lives_exactly_while_the_app_is_connected_and_enabled() {
    let _wd = Watchdog::arm(Duration::from_secs(120));
    let tmp = TempDir::new();
    let rt = tmp.rt();
    let d = Daemon::start(&rt, &[]);
    let app = notepad(&rt, &["--agent-enable", "--text", "hello"]);
    let endpoint = d.wait_endpoint("notepad");
    assert_eq!(mode(&endpoint), 0o600);
    let apps = d.apps();
    assert_eq!(apps[0]["displayName"], "Notepad");
    assert_eq!(apps[0]["endpoint"], endpoint.display().to_string());
    assert_eq!(apps[0]["pid"], app.pid());
    let info = json1(&endpoint, "state/inspect", json!({}));
    assert_eq!(info["state"]["text"], "hello", "{info}");

    // A disabled instance is listed without an endpoint and gets no socket.
    let disabled = notepad(&rt, &["--name", "Quiet Pad"]);
    let apps = d.wait_apps(2);
    let quiet = apps.iter().find(|a| a["displayName"] == "Quiet Pad").expect("listed");
    assert_eq!(quiet["enabled"], false);
    assert!(quiet["endpoint"].is_null());
    assert!(!rt.join("apps").join(format!("{}.sock", quiet["slug"].as_str().unwrap())).exists());

    // The app goes away: its endpoint goes with it.
    drop(app);
    assert!(wait_until(PATIENCE, || !endpoint.exists()), "endpoint removed");
    d.wait_apps(1);
    drop(disabled);
    d.wait_apps(0);
    assert!(fs::read_dir(rt.join("apps")).unwrap().next().is_none());
}

#[test]
fn instances_get_distinct_slugs_and_private_sockets_under_any_umask() {
    let _wd = Watchdog::arm(Duration::from_secs(120));
    let tmp = TempDir::new();
    let rt = tmp.rt();
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg("umask 000; exec \"$0\"")
        .arg(jfgui_tests::agentd())
        .env("JFGUI_RUNTIME_DIR", &rt)
        .env_remove("XDG_RUNTIME_DIR");
    let d = Daemon::start_command(&rt, cmd);
    let _a = notepad(&rt, &["--agent-enable"]);
    d.wait_endpoint("notepad");
    let _b = notepad(&rt, &["--agent-enable"]);
    let _c = notepad(&rt, &["--agent-enable", "--name", "Ünïcode  Pad — draft 2"]);
    let apps = d.wait_apps(3);
    let mut slugs: Vec<String> =
        apps.iter().map(|a| a["slug"].as_str().unwrap().to_string()).collect();
    slugs.sort();
    slugs.dedup();
    assert_eq!(slugs.len(), 3, "distinct slugs: {apps:?}");
    assert!(
        apps.iter().any(|a| a["displayName"] == "Ünïcode  Pad — draft 2"),
        "display name intact"
    );
    for slug in &slugs {
        let endpoint = d.wait_endpoint(slug);
        assert_eq!(mode(&endpoint), 0o600, "{slug}");
        assert_eq!(
            json1(&endpoint, "agent/info", json!({}))["endpoint"]["slug"].as_str().unwrap_or(slug),
            slug
        );
    }
    assert_eq!(mode(&rt.join("apps")), 0o700);
}

#[test]
fn planted_directory_at_an_endpoint_path_is_left_alone() {
    let _wd = Watchdog::arm(Duration::from_secs(120));
    let tmp = TempDir::new();
    let rt = tmp.rt();
    fs::create_dir(&rt).unwrap();
    fs::set_permissions(&rt, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
    fs::create_dir(rt.join("apps")).unwrap();
    fs::set_permissions(rt.join("apps"), std::os::unix::fs::PermissionsExt::from_mode(0o700))
        .unwrap();
    fs::create_dir(rt.join("apps/notepad.sock")).unwrap();
    fs::write(rt.join("apps/notepad.sock/keep"), "x").unwrap();
    let d = Daemon::start(&rt, &[]);
    let _app = notepad(&rt, &["--agent-enable"]);
    d.wait_apps(1);
    let planted = rt.join("apps/notepad.sock").display().to_string();
    assert!(
        wait_until(PATIENCE, || d.proc.stderr().contains(&planted)
            && d.proc.stderr().contains("directory")),
        "refusal names the path: {}",
        d.proc.stderr()
    );
    assert_eq!(fs::read_to_string(rt.join("apps/notepad.sock/keep")).unwrap(), "x", "untouched");
    // A second instance gets its own slug and a working endpoint; the daemon is unharmed.
    let _b = notepad(&rt, &["--agent-enable"]);
    d.wait_endpoint("notepad-2");
    d.assert_alive();
}

fn insert(endpoint: &std::path::Path, text: &str) -> serde_json::Value {
    let revision = json1(endpoint, "state/inspect", json!({}))["revision"].clone();
    json1(
        endpoint,
        "actions/execute",
        json!({"action": "document.text.insert", "input": {"text": text}, "expectedRevision": revision}),
    )
}

#[test]
fn apps_come_back_after_sigkill_with_state_intact() {
    let _wd = Watchdog::arm(Duration::from_secs(180));
    let tmp = TempDir::new();
    let rt = tmp.rt();
    let first = Daemon::start(&rt, &[]);
    let names = ["Alpha", "Beta", "Gamma", "Delta", "Epsilon"];
    let apps: Vec<Proc> =
        names.iter().map(|n| notepad(&rt, &["--agent-enable", "--name", n])).collect();
    let off = notepad(&rt, &["--name", "Off"]);
    first.wait_apps(names.len() + 1);
    let alpha = first.wait_endpoint("alpha");
    insert(&alpha, "kept across the restart");
    let before = json1(&alpha, "state/inspect", json!({}));

    first.proc.signal("KILL");
    drop(first);
    let second = Daemon::start(&rt, &[]);
    let listed = second.wait_apps(names.len() + 1);
    let mut slugs: Vec<&str> = listed.iter().map(|a| a["slug"].as_str().unwrap()).collect();
    slugs.sort();
    assert_eq!(
        slugs,
        ["alpha", "beta", "delta", "epsilon", "gamma", "off"],
        "each app exactly once"
    );
    for a in &listed {
        let enabled = a["displayName"] != "Off";
        assert_eq!(a["enabled"], enabled, "{a}");
    }
    for n in names {
        second.wait_endpoint(&n.to_lowercase());
    }
    assert!(!rt.join("apps/off.sock").exists(), "a disabled app stays without an endpoint");
    let after = json1(&second.wait_endpoint("alpha"), "state/inspect", json!({}));
    assert_eq!(after["revision"], before["revision"], "revision untouched by the restart");
    assert_eq!(after["state"]["text"], before["state"]["text"]);
    for app in &apps {
        assert!(
            fs::metadata(format!("/proc/{}", app.pid())).is_ok(),
            "apps survive the daemon's death"
        );
    }
    drop(off);
}

#[test]
fn sigterm_with_an_app_cleans_up_and_the_app_returns() {
    let _wd = Watchdog::arm(Duration::from_secs(120));
    let tmp = TempDir::new();
    let rt = tmp.rt();
    let mut d = Daemon::start(&rt, &[]);
    let _app = notepad(&rt, &["--agent-enable"]);
    let endpoint = d.wait_endpoint("notepad");
    let mut held = jfgui_tests::LineClient::connect(&endpoint).unwrap();
    d.proc.signal("TERM");
    assert_eq!(d.proc.wait_exit(PATIENCE).and_then(|s| s.code()), Some(0), "{}", d.proc.stderr());
    assert!(held.read_line().map(|l| l.is_none()).unwrap_or(true), "client connection closed");
    for gone in ["agentd.sock", "host.sock", "agentd.lock", "apps/notepad.sock"] {
        assert!(!rt.join(gone).exists(), "{gone} removed");
    }
    let again = Daemon::start(&rt, &[]);
    again.wait_endpoint("notepad");
}

#[test]
fn demo_runs_daemon_and_example_app_as_one_command() {
    let _wd = Watchdog::arm(Duration::from_secs(120));
    let tmp = TempDir::new();
    let rt = tmp.rt();
    let mut d = Daemon::start(&rt, &["--demo"]);
    let endpoint = d.wait_endpoint("notepad");
    let app_pid = d.apps()[0]["pid"].as_u64().unwrap();
    assert!(UnixStream::connect(&endpoint).is_ok());
    assert_eq!(
        json1(&endpoint, "actions/list", json!({}))["actions"].as_array().map(Vec::len),
        Some(10)
    );
    d.proc.signal("TERM");
    assert_eq!(d.proc.wait_exit(PATIENCE).and_then(|s| s.code()), Some(0), "{}", d.proc.stderr());
    assert!(
        wait_until(PATIENCE, || !std::path::Path::new(&format!("/proc/{app_pid}")).exists()
            || fs::read_to_string(format!("/proc/{app_pid}/stat"))
                .is_ok_and(|s| s.contains(") Z "))),
        "the demo app stops with the daemon"
    );
}

#[test]
fn idle_exit_counts_connected_apps() {
    let _wd = Watchdog::arm(Duration::from_secs(120));
    let tmp = TempDir::new();
    let rt = tmp.rt();
    let mut d = Daemon::start(&rt, &["--idle-exit", "1"]);
    let app = notepad(&rt, &["--name", "Idle Pad"]);
    d.wait_apps(1);
    std::thread::sleep(Duration::from_millis(2500));
    assert!(d.proc.try_status().is_none(), "a connected (even disabled) app keeps the daemon up");
    drop(app);
    assert_eq!(d.proc.wait_exit(PATIENCE).and_then(|s| s.code()), Some(0), "{}", d.proc.stderr());
}

#[test]
fn demo_without_the_example_app_says_how_to_build_it() {
    let _wd = Watchdog::arm(Duration::from_secs(60));
    let tmp = TempDir::new();
    let lonely = tmp.path().join("jfgui-agentd");
    fs::copy(jfgui_tests::agentd(), &lonely).unwrap();
    let mut cmd = Command::new(&lonely);
    cmd.arg("--demo").env("JFGUI_RUNTIME_DIR", tmp.rt()).env_remove("XDG_RUNTIME_DIR");
    let (status, stderr) = jfgui_tests::run_daemon(cmd);
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("cargo build -p jfgui-example-notepad"), "{stderr}");
    assert!(!tmp.rt().exists(), "nothing created before the check");
}

#[test]
fn sigterm_answers_in_flight_calls_outcome_unknown() {
    let _wd = Watchdog::arm(Duration::from_secs(120));
    let tmp = TempDir::new();
    let rt = tmp.rt();
    let mut d = Daemon::start(&rt, &["--shutdown-drain", "300ms"]);
    let ledger = tmp.path().join("slow.ledger");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_jfgui-testapp"));
    cmd.args(["--agent-enable", "--name", "Slow", "--fault", "counter.add:sleep=3000", "--ledger"])
        .arg(&ledger)
        .env("JFGUI_RUNTIME_DIR", &rt)
        .env_remove("XDG_RUNTIME_DIR");
    let _app = Proc::spawn(cmd, tmp.path().join("slow.log"));
    let endpoint = d.wait_endpoint("slow");
    let revision = json1(&endpoint, "state/inspect", json!({}))["revision"].clone();
    let mut client = jfgui_tests::LineClient::connect(&endpoint).unwrap();
    let request = json!({"jsonrpc": "2.0", "id": "in-flight", "method": "actions/execute", "params": {
        "protocolVersion": "1", "action": "counter.add", "input": {"by": 1}, "expectedRevision": revision}});
    client.send_raw(&request.to_string()).unwrap();
    // Give the call time to reach the app (it sleeps 3 s before applying), then stop.
    std::thread::sleep(Duration::from_millis(500));
    d.proc.signal("TERM");
    let line = client.read_line().unwrap().expect("the in-flight call is answered");
    let v: serde_json::Value = serde_json::from_str(&line).unwrap();
    assert_eq!(v["id"], "in-flight", "{line}");
    assert_eq!(v["error"]["data"]["class"], "outcome_unknown", "{line}");
    assert_eq!(v["error"]["data"]["reason"], "daemon_shutdown", "{line}");
    let text = line.to_lowercase();
    assert!(
        !text.contains("cancelled") && !text.contains("rolled back"),
        "never claims undo: {line}"
    );
    assert_eq!(d.proc.wait_exit(PATIENCE).and_then(|s| s.code()), Some(0), "{}", d.proc.stderr());
    // Outcome unknown: the ledger decides, and shows the call applied at most once.
    std::thread::sleep(Duration::from_millis(3500));
    let applied = fs::read_to_string(&ledger).unwrap_or_default().lines().count();
    assert!(applied <= 1, "applied {applied} times");
}
