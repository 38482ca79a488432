//! Daemon life without apps: restart after SIGKILL, graceful stop, the runtime dir removed,
//! `--idle-exit`, the connection cap and descriptor exhaustion on the accept loop.

use std::fs;
use std::os::unix::net::UnixStream;
use std::process::Command;
use std::thread;
use std::time::Duration;

use jfgui_tests::{
    Daemon, LineClient, PATIENCE, TempDir, Watchdog, cpu_ticks, fd_count, inode, wait_until,
};

fn entries(dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .map(|d| d.map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect())
        .unwrap_or_default();
    names.sort();
    names
}

#[test]
fn restart_after_sigkill_takes_over_cleanly() {
    let _wd = Watchdog::arm(Duration::from_secs(120));
    let tmp = TempDir::new();
    let rt = tmp.rt();
    let first = Daemon::start(&rt, &[]);
    let held = LineClient::connect(&first.control()).unwrap();
    // Hard links keep the old nodes' inode numbers from being reused by the new sockets.
    fs::hard_link(first.control(), tmp.path().join("old-control")).unwrap();
    fs::hard_link(first.host(), tmp.path().join("old-host")).unwrap();
    let old_control = inode(&first.control());
    let old_host = inode(&first.host());
    first.proc.signal("KILL");
    drop(first);
    // The dead daemon's nodes are still there.
    assert!(rt.join("agentd.sock").exists() && rt.join("agentd.lock").exists());
    let second = Daemon::start(&rt, &[]);
    second.assert_alive();
    assert_ne!(inode(&second.control()), old_control, "agentd.sock re-bound");
    assert_ne!(inode(&second.host()), old_host, "host.sock re-bound");
    assert!(second.apps().is_empty(), "no dead endpoints listed");
    assert!(!second.proc.stderr().contains("in use"), "{}", second.proc.stderr());
    drop(held);
}

fn graceful_stop(signal: &str) {
    let tmp = TempDir::new();
    let rt = tmp.rt();
    let mut d = Daemon::start(&rt, &[]);
    // A connected client does not keep the daemon from stopping.
    let mut held = LineClient::connect(&d.control()).unwrap();
    held.call("daemon/status", serde_json::json!({})).unwrap();
    d.proc.signal(signal);
    let status = d.proc.wait_exit(PATIENCE).expect("daemon stops on the signal");
    assert_eq!(status.code(), Some(0), "{signal}: {}", d.proc.stderr());
    assert!(held.read_line().map(|l| l.is_none()).unwrap_or(true), "client connection closed");
    assert_eq!(entries(&rt), vec!["apps".to_string()], "{signal}: sockets and lock removed");
    assert!(entries(&rt.join("apps")).is_empty());
    // And it starts again at once.
    Daemon::start(&rt, &[]).assert_alive();
}

#[test]
fn sigterm_is_a_clean_stop() {
    let _wd = Watchdog::arm(Duration::from_secs(60));
    graceful_stop("TERM");
}

#[test]
fn sigint_is_a_clean_stop() {
    let _wd = Watchdog::arm(Duration::from_secs(60));
    graceful_stop("INT");
}

#[test]
fn runtime_dir_removed_makes_the_daemon_exit() {
    let _wd = Watchdog::arm(Duration::from_secs(60));
    let tmp = TempDir::new();
    let rt = tmp.rt();
    // The periodic check is off (`--dir-check 0`): only inotify can tell the daemon, so this
    // fails if the watch is missing or broken instead of passing on the fallback timer.
    let mut d = Daemon::start(&rt, &["--dir-check", "0"]);
    fs::remove_dir_all(&rt).unwrap();
    let status = d.proc.wait_exit(PATIENCE).expect("daemon exits once its dir is gone");
    assert_eq!(status.code(), Some(1), "{}", d.proc.stderr());
    assert!(d.proc.stderr().contains("runtime dir was removed"), "{}", d.proc.stderr());
    assert!(!rt.exists(), "the daemon does not recreate the dir behind our back");
}

#[test]
fn runtime_dir_replaced_makes_the_daemon_exit() {
    let _wd = Watchdog::arm(Duration::from_secs(60));
    let tmp = TempDir::new();
    let rt = tmp.rt();
    // inotify only, as above.
    let mut d = Daemon::start(&rt, &["--dir-check", "0"]);
    // Moved away and a new dir put in its place: the old sockets are no longer where
    // clients look.
    fs::rename(&rt, tmp.path().join("moved")).unwrap();
    fs::create_dir(&rt).unwrap();
    let status = d.proc.wait_exit(PATIENCE).expect("daemon exits once its dir is replaced");
    assert_eq!(status.code(), Some(1), "{}", d.proc.stderr());
}

#[test]
fn idle_exit_waits_for_the_last_connection() {
    let _wd = Watchdog::arm(Duration::from_secs(60));
    let tmp = TempDir::new();
    let rt = tmp.rt();
    // Off by default: a daemon without the flag is still there after the idle period.
    let plain = Daemon::start(&rt, &[]);
    let other = TempDir::new();
    let mut d = Daemon::start(&other.rt(), &["--idle-exit", "1"]);
    let held = UnixStream::connect(d.control()).unwrap();
    thread::sleep(Duration::from_millis(2500));
    assert!(d.proc.try_status().is_none(), "a connected client keeps the daemon up");
    drop(held);
    let status = d.proc.wait_exit(PATIENCE).expect("idle exit once nobody is connected");
    assert_eq!(status.code(), Some(0), "{}", d.proc.stderr());
    assert!(!other.rt().join("agentd.sock").exists());
    plain.assert_alive();
}

#[test]
fn connection_cap_turns_away_with_an_error_line_and_no_null_id_on_mcp_sock() {
    let _wd = Watchdog::arm(Duration::from_secs(60));
    let tmp = TempDir::new();
    let d = Daemon::start(&tmp.rt(), &["--max-clients", "3"]);
    // The readiness probe's connection may still hold a slot for a moment: retry until three
    // connections are served.
    let mut held = Vec::new();
    while held.len() < 3 {
        let served = wait_until(PATIENCE, || {
            let Ok(mut c) = LineClient::connect(&d.control()) else { return false };
            let ok = c
                .call("daemon/status", serde_json::json!({}))
                .is_ok_and(|v| v.get("result").is_some());
            if ok {
                held.push(c);
            }
            ok
        });
        assert!(served, "connection {} served", held.len() + 1);
    }
    let mut extra = LineClient::connect(&d.control()).unwrap();
    let line = extra.read_line().unwrap().expect("an error line");
    let v: serde_json::Value = serde_json::from_str(&line).unwrap();
    assert_eq!(v["error"]["data"]["reason"], "too_many_connections", "{line}");
    assert_eq!(v["error"]["data"]["limit"], 3);
    // agentd.sock has not chosen a protocol yet: JSON-RPC 2.0's null id.
    assert_eq!(v.get("id"), Some(&serde_json::Value::Null), "{line}");
    assert!(extra.read_line().unwrap().is_none(), "then closed");
    // mcp.sock speaks only MCP, whose schemas allow no null id: the line has no id member.
    let mut mcp = LineClient::connect(&d.rt.join("mcp.sock")).unwrap();
    let line = mcp.read_line().unwrap().expect("an error line on mcp.sock");
    let v: serde_json::Value = serde_json::from_str(&line).unwrap();
    assert_eq!(v["error"]["data"]["reason"], "too_many_connections", "{line}");
    assert!(v.get("id").is_none(), "{line}");
    assert!(mcp.read_line().unwrap().is_none(), "then closed");
    held.pop();
    assert!(wait_until(PATIENCE, || {
        LineClient::connect(&d.control())
            .and_then(|mut c| c.call("daemon/status", serde_json::json!({})))
            .is_ok_and(|v| v.get("result").is_some())
    }));
}

#[test]
fn descriptor_exhaustion_does_not_spin_and_recovers() {
    let _wd = Watchdog::arm(Duration::from_secs(120));
    let tmp = TempDir::new();
    let d = Daemon::start(&tmp.rt(), &[]);
    let pid = d.proc.pid();
    d.assert_alive();
    // Taken while the probe connection may still be open: "no leak" means at most this.
    let baseline = fd_count(pid);
    let ok = Command::new("prlimit")
        .args(["--pid", &pid.to_string(), "--nofile=32:"])
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "prlimit");
    let flood: Vec<UnixStream> =
        (0..80).filter_map(|_| UnixStream::connect(d.control()).ok()).collect();
    assert!(flood.len() > 40, "connections reach the backlog");
    assert!(wait_until(PATIENCE, || fd_count(pid) >= 30), "the daemon ran out of descriptors");
    let before = cpu_ticks(pid).unwrap();
    thread::sleep(Duration::from_secs(3));
    let spent = cpu_ticks(pid).unwrap() - before;
    eprintln!("c1: {spent} clock ticks of daemon CPU in 3 s of EMFILE pressure");
    // Clock ticks are 1/100 s: a spinning accept loop would burn ~300 here.
    assert!(spent < 100, "accept loop spun on EMFILE: {spent} ticks in 3 s");
    drop(flood);
    let _ = Command::new("prlimit").args(["--pid", &pid.to_string(), "--nofile=1024:"]).status();
    assert!(
        wait_until(PATIENCE, || LineClient::connect(&d.control())
            .and_then(|mut c| c.call("daemon/status", serde_json::json!({})))
            .is_ok_and(|v| v.get("result").is_some())),
        "liveness after the flood; log:\n{}",
        d.proc.stderr()
    );
    assert!(
        wait_until(PATIENCE, || fd_count(pid) <= baseline),
        "fds back to baseline {baseline}: {}",
        fd_count(pid)
    );
    assert!(d.proc.wait_stderr("out of descriptors"), "{}", d.proc.stderr());
}

#[test]
fn logs_go_to_stderr_only_and_json_lines_parse() {
    let _wd = Watchdog::arm(Duration::from_secs(60));
    let tmp = TempDir::new();
    let rt = tmp.rt();
    let mut cmd = jfgui_tests::daemon_command(&rt, &["--log-format", "json"]);
    let stdout = tmp.path().join("stdout");
    cmd.stdout(fs::File::create(&stdout).unwrap());
    let log = tmp.path().join("stderr");
    let child = cmd.stderr(fs::File::create(&log).unwrap()).stdin(std::process::Stdio::null());
    let mut child = child.spawn().unwrap();
    assert!(wait_until(PATIENCE, || UnixStream::connect(rt.join("agentd.sock")).is_ok()));
    let _ = Command::new("kill").args(["-TERM", &child.id().to_string()]).status();
    assert!(child.wait().unwrap().success());
    assert_eq!(fs::read_to_string(&stdout).unwrap(), "", "nothing on stdout");
    let text = fs::read_to_string(&log).unwrap();
    assert!(text.lines().count() >= 2, "{text}");
    for line in text.lines() {
        let v: serde_json::Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
        assert!(v.get("level").is_some() && v.get("fields").is_some(), "{line}");
    }
}
