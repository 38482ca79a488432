//! Diagnostics never stop or flood the daemon: with its stderr a pipe nobody reads, the real
//! `jfgui-agentd` keeps answering (its log is written by a background thread through a
//! bounded queue that drops and counts: `logDropped` in `daemon/status`, and a warning once
//! writing resumes), and the warning a client can trigger at will (a write sent without an
//! `id`) is rate-limited per connection, with the suppressed ones counted.

use std::io::Read;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use jfgui_tests::serde_json::{Value, json};
use jfgui_tests::{
    Daemon, LineClient, PATIENCE, Proc, TempDir, Watchdog, daemon_command, notepad, rpc, wait_until,
};

/// Bytes waiting in the pipe (`FIONREAD`) and its capacity (`F_GETPIPE_SZ`).
#[allow(unsafe_code)]
fn pipe_fill(fd: BorrowedFd<'_>) -> (usize, usize) {
    let mut queued: libc::c_int = 0;
    // SAFETY: `fd` is open for the borrow; FIONREAD writes one c_int to the pointer given.
    let rc = unsafe { libc::ioctl(fd.as_raw_fd(), libc::FIONREAD, &raw mut queued) };
    assert_eq!(rc, 0, "FIONREAD: {}", std::io::Error::last_os_error());
    // SAFETY: F_GETPIPE_SZ takes no argument and only reads the descriptor's pipe.
    let capacity = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GETPIPE_SZ) };
    assert!(capacity > 0, "F_GETPIPE_SZ: {}", std::io::Error::last_os_error());
    (queued as usize, capacity as usize)
}

/// `logDropped` of `daemon/status`.
fn log_dropped(control: &Path) -> u64 {
    let v = rpc(control, "daemon/status", json!({})).expect("daemon/status answered");
    v["result"]["logDropped"].as_u64().unwrap_or_else(|| panic!("no logDropped in {v}"))
}

/// One `agent/info` on a fresh endpoint connection (the daemon logs the connection's start
/// and end at debug level).
fn agent_info(endpoint: &Path) -> Value {
    let v = rpc(endpoint, "agent/info", json!({"protocolVersion": "1"})).expect("agent/info");
    assert!(v.get("result").is_some(), "{v}");
    v
}

#[test]
fn a_stalled_stderr_does_not_stop_calls() {
    let _wd = Watchdog::arm(Duration::from_secs(120));
    let tmp = TempDir::new();
    let rt = tmp.rt();
    let (mut reader, writer) = std::io::pipe().expect("pipe");
    // A small queue, so a few lines past the full pipe are enough to make it drop.
    let d =
        Proc::spawn_with_stderr(daemon_command(&rt, &["--log-queue-lines", "16"]), writer.into());
    let control = rt.join("agentd.sock");
    assert!(wait_until(PATIENCE, || rpc(&control, "daemon/status", json!({})).is_ok()));
    let _app = notepad(&rt, &["--agent-enable"]);
    let endpoint = rt.join("apps/notepad.sock");
    assert!(wait_until(PATIENCE, || rpc(&endpoint, "agent/info", json!({})).is_ok()));

    // Fill the pipe (nobody reads it) and then the queue, until the daemon drops lines. A
    // daemon that wrote its log on the event loop would hang here, in the call that finds
    // the pipe full, and the watchdog would end the test.
    let full = |fd: BorrowedFd<'_>| {
        let (queued, capacity) = pipe_fill(fd);
        // The writer blocks on a line (at most PIPE_BUF bytes, written whole) that does not fit.
        queued + 4096 >= capacity
    };
    let mut connections = 0;
    while !(full(reader.as_fd()) && log_dropped(&control) > 0) {
        for _ in 0..16 {
            agent_info(&endpoint);
        }
        connections += 16;
        assert!(connections < 100_000, "the daemon never dropped a log line");
    }
    let dropped = log_dropped(&control);

    // Calls keep completing while the pipe stays full: control, endpoint, an app round trip.
    for _ in 0..50 {
        agent_info(&endpoint);
        let v = rpc(
            &endpoint,
            "actions/execute",
            json!({"protocolVersion": "1", "action": "document.get", "input": {}}),
        )
        .expect("document.get");
        assert!(v.get("result").is_some(), "{v}");
    }
    assert!(full(reader.as_fd()), "the pipe stayed full while the calls were answered");
    assert!(log_dropped(&control) > dropped, "lines are still dropped, not waited for");

    // Once stderr is read again, the log says how many lines were lost.
    let seen = Arc::new(Mutex::new(String::new()));
    let sink = seen.clone();
    let drain = thread::spawn(move || {
        let mut buf = [0u8; 8192];
        while let Ok(n @ 1..) = reader.read(&mut buf) {
            sink.lock().unwrap().push_str(&String::from_utf8_lossy(&buf[..n]));
        }
    });
    let reported = wait_until(PATIENCE, || {
        agent_info(&endpoint);
        seen.lock().unwrap().contains("log lines were dropped while stderr did not keep up")
    });
    let log = seen.lock().unwrap().clone();
    let notice = log.lines().find(|l| l.contains("log lines were dropped"));
    assert!(reported, "no drop notice after writing resumed; the log read:\n{log}");
    assert!(notice.is_some_and(|l| l.contains("lost=") && l.contains("total=")), "{notice:?}");
    drop(d);
    drain.join().unwrap();
}

#[test]
fn id_less_write_warnings_are_rate_limited_per_connection() {
    let _wd = Watchdog::arm(Duration::from_secs(60));
    let tmp = TempDir::new();
    let d = Daemon::start(&tmp.rt(), &[]);
    let _app = notepad(&d.rt, &["--agent-enable"]);
    let endpoint = d.wait_endpoint("notepad");
    const WARNING: &str = "write notification (no id) dropped, not executed";
    const SENT: usize = 40;
    let mut c = LineClient::connect(&endpoint).unwrap();
    // A JSON-1 call first, so the connection speaks JSON-1 when the notifications come.
    let v = c.call("agent/info", json!({"protocolVersion": "1"})).unwrap();
    assert!(v.get("result").is_some(), "{v}");
    let write = json!({"jsonrpc": "2.0", "method": "actions/execute",
        "params": {"protocolVersion": "1", "action": "document.text.insert",
                   "input": {"text": "x"}}});
    for _ in 0..SENT {
        c.send_raw(&write.to_string()).unwrap();
    }
    // A call after them: every notification has been handled once it is answered.
    let v = c.call("agent/info", json!({"protocolVersion": "1"})).unwrap();
    assert!(v.get("result").is_some(), "{v}");
    drop(c);
    // The summary is logged when the connection closes.
    assert!(
        d.proc.wait_stderr("further warnings it caused were suppressed"),
        "{}",
        d.proc.stderr()
    );
    let log = d.proc.stderr();
    let logged = log.lines().filter(|l| l.contains(WARNING)).count();
    assert_eq!(logged, 5, "at most 5 per minute per connection:\n{log}");
    let summary = log.lines().find(|l| l.contains("were suppressed")).unwrap_or_default();
    assert!(summary.contains(&format!("suppressed={}", SENT - 5)), "{summary}");
    // Nothing was executed: the document is still empty.
    let v = rpc(&endpoint, "state/inspect", json!({"protocolVersion": "1"})).unwrap();
    assert_eq!(v["result"]["state"]["text"], "", "{v}");
}
