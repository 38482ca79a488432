//! A connection flood (the listener side): 1 000 concurrent connections held open on `agentd.sock`,
//! `host.sock` and an endpoint, then 10 000 connect/close cycles. The daemon's descriptors
//! stay within the caps plus a constant, return to the baseline afterwards, and a fresh
//! client is served at once.

use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::Duration;

use jfgui_tests::serde_json::json;
use jfgui_tests::{Daemon, PATIENCE, TempDir, Watchdog, fd_count, json1, notepad, wait_until};

/// Descriptors the daemon has besides connections (listeners, epoll, lock, dir, ...), with
/// room to spare.
const OVERHEAD: usize = 64;

fn flood(d: &Daemon, socket: &Path, held: usize, cap: usize, baseline: usize) {
    let pid = d.proc.pid();
    let conns: Vec<UnixStream> =
        (0..held).filter_map(|_| UnixStream::connect(socket).ok()).collect();
    assert!(conns.len() >= held.min(cap), "{} of {held} connected", conns.len());
    // The daemon takes them in up to the cap, and not one more.
    let settled = wait_until(PATIENCE, || fd_count(pid) >= held.min(cap));
    assert!(settled, "{}: only {} fds", socket.display(), fd_count(pid));
    let peak = fd_count(pid);
    let rss = jfgui_tests::status_kib(pid, "VmRSS").unwrap_or(0);
    eprintln!("c1: {}: {peak} fds, VmRSS {rss} KiB with {held} held", socket.display());
    assert!(peak <= cap + OVERHEAD, "{}: {peak} fds, cap {cap}", socket.display());
    drop(conns);
    assert!(
        wait_until(PATIENCE, || fd_count(pid) <= baseline),
        "{}: fds back to the baseline {baseline}: {}",
        socket.display(),
        fd_count(pid)
    );
}

#[test]
fn thousand_connections_and_ten_thousand_cycles() {
    let _wd = Watchdog::arm(Duration::from_secs(300));
    let tmp = TempDir::new();
    let rt = tmp.rt();
    // Silent host connections must stay for the whole flood: a long handshake deadline.
    let d = Daemon::start(&rt, &["--handshake-deadline", "120s"]);
    let _app = notepad(&rt, &["--agent-enable"]);
    let endpoint = d.wait_endpoint("notepad");
    let pid = d.proc.pid();
    d.assert_alive();
    assert!(wait_until(PATIENCE, || fd_count(pid) > 0));
    let baseline = fd_count(pid);

    flood(&d, &d.control(), 1000, 1024, baseline);
    flood(&d, &d.host(), 1000, 256 + 64, baseline);
    flood(&d, &endpoint, 1000, 1024, baseline);
    for _ in 0..10_000 {
        drop(UnixStream::connect(d.control()).expect("connect during cycles"));
    }

    assert!(
        wait_until(PATIENCE, || fd_count(pid) <= baseline),
        "fds back to the baseline {baseline}: {}",
        fd_count(pid)
    );
    d.assert_alive();
    json1(&endpoint, "agent/info", json!({}));
}
