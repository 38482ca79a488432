//! The issue-4 benchmark: the daemon path against a raw two-hop Unix-socket relay, measured in
//! the same run, plus the daemon's memory and idle wake-ups.
//!
//! ```text
//! cargo bench -p jfgui-tests --bench latency
//! ```
//!
//! (release build; the daemon and example app are built in release by the harness first.)
//! `JFGUI_BENCH_SECONDS` sets the measured time per path and client count (default 3), split
//! into three rounds that alternate raw and daemon, so load from other processes on the
//! machine hits both paths alike.
//!
//! - **raw**: client → relay → echo server, all threads in this process, the same
//!   newline-framed lines (the request line out, a response line of the daemon path's size
//!   back), so the relay costs two socket hops each way like the daemon path.
//! - **daemon**: client → `jfgui-agentd` → `jfgui-notepad` → back, for
//!   `actions/execute {action: "document.get"}` (a trivial read).
//! - p50/p99 latency and calls/s with 1 and 16 clients (each client one connection, one call
//!   at a time), hdrhistogram in nanoseconds.
//! - Daemon RSS (`VmRSS`) idle with one app, and with 64 apps × 16 clients connected and
//!   having called; `VmHWM` as well.
//! - Idle wake-ups: context switches of every daemon thread (`/proc/PID/task/*/status`
//!   `voluntary_ctxt_switches` + `nonvoluntary_ctxt_switches`) over 5 s with one app
//!   registered and no client. Goal zero.

use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use jfgui_tests::serde_json::json;
use jfgui_tests::{Daemon, Proc, TempDir, json1, notepad, status_kib};

fn request(id: u64) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"actions/execute","params":{{"action":"document.get"}}}}"#
    )
}

fn seconds() -> Duration {
    let s = std::env::var("JFGUI_BENCH_SECONDS").ok().and_then(|s| s.parse().ok()).unwrap_or(3);
    Duration::from_secs(s)
}

// ---------------------------------------------------------------------------------------------
// The raw relay

/// An echo server answering every line with `reply` (one line of the daemon reply's size).
fn echo_server(path: &Path, reply: String) {
    let listener = UnixListener::bind(path).unwrap();
    let reply = Arc::new(reply);
    thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            let reply = Arc::clone(&reply);
            thread::spawn(move || {
                let mut w = stream.try_clone().unwrap();
                let mut r = BufReader::new(stream);
                let mut line = String::new();
                while r.read_line(&mut line).is_ok_and(|n| n > 0) {
                    if w.write_all(reply.as_bytes()).is_err() {
                        return;
                    }
                    line.clear();
                }
            });
        }
    });
}

/// Copies complete lines from `from` to `to` until EOF.
fn pump(from: UnixStream, mut to: UnixStream) {
    let mut r = BufReader::new(from);
    let mut line = Vec::new();
    while r.read_until(b'\n', &mut line).is_ok_and(|n| n > 0) {
        if to.write_all(&line).is_err() {
            return;
        }
        line.clear();
    }
    let _ = to.shutdown(std::net::Shutdown::Write);
}

/// A relay: every accepted connection gets its own upstream connection to `upstream`.
fn relay(path: &Path, upstream: PathBuf) {
    let listener = UnixListener::bind(path).unwrap();
    thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(client) = stream else { return };
            let up = UnixStream::connect(&upstream).unwrap();
            let (c2, u2) = (client.try_clone().unwrap(), up.try_clone().unwrap());
            thread::spawn(move || pump(client, up));
            thread::spawn(move || pump(u2, c2));
        }
    });
}

// ---------------------------------------------------------------------------------------------
// Load

struct Run {
    hist: Histogram<u64>,
    calls: u64,
    elapsed: Duration,
}

fn one_client(path: &Path, until: Instant, start: &Barrier) -> (Histogram<u64>, u64) {
    let mut hist = Histogram::<u64>::new_with_bounds(1, 60_000_000_000, 3).unwrap();
    let mut w = UnixStream::connect(path).unwrap();
    let mut r = BufReader::new(w.try_clone().unwrap());
    let mut line = String::new();
    let mut id = 0u64;
    // Warm-up: the first calls pay for connection set-up and cold caches.
    for _ in 0..200 {
        id += 1;
        w.write_all(format!("{}\n", request(id)).as_bytes()).unwrap();
        line.clear();
        r.read_line(&mut line).unwrap();
    }
    start.wait();
    let mut calls = 0;
    while Instant::now() < until {
        id += 1;
        let q = format!("{}\n", request(id));
        let t = Instant::now();
        w.write_all(q.as_bytes()).unwrap();
        line.clear();
        r.read_line(&mut line).unwrap();
        hist.record(t.elapsed().as_nanos() as u64).unwrap();
        assert!(line.contains("\"result\""), "{line}");
        calls += 1;
    }
    (hist, calls)
}

/// Measured rounds per path and client count, alternating the paths.
const ROUNDS: u32 = 3;

fn load(path: &Path, clients: usize, total: &mut Option<Run>) {
    let start = Arc::new(Barrier::new(clients + 1));
    // The warm-up happens inside this window too, before the barrier.
    let until = Instant::now() + seconds() / ROUNDS + Duration::from_millis(500);
    let workers: Vec<_> = (0..clients)
        .map(|_| {
            let (path, start) = (path.to_path_buf(), Arc::clone(&start));
            thread::spawn(move || one_client(&path, until, &start))
        })
        .collect();
    start.wait();
    let began = Instant::now();
    let mut hist = Histogram::<u64>::new_with_bounds(1, 60_000_000_000, 3).unwrap();
    let mut calls = 0;
    for w in workers {
        let (h, c) = w.join().unwrap();
        hist.add(&h).unwrap();
        calls += c;
    }
    let elapsed = began.elapsed();
    match total {
        Some(t) => {
            t.hist.add(&hist).unwrap();
            t.calls += calls;
            t.elapsed += elapsed;
        }
        None => *total = Some(Run { hist, calls, elapsed }),
    }
}

// ---------------------------------------------------------------------------------------------
// Daemon probes

fn context_switches(pid: u32) -> u64 {
    let mut total = 0;
    for task in fs::read_dir(format!("/proc/{pid}/task")).unwrap().flatten() {
        let status = fs::read_to_string(task.path().join("status")).unwrap_or_default();
        for l in status.lines() {
            if let Some(v) = l
                .strip_prefix("voluntary_ctxt_switches:")
                .or_else(|| l.strip_prefix("nonvoluntary_ctxt_switches:"))
            {
                total += v.trim().parse::<u64>().unwrap_or(0);
            }
        }
    }
    total
}

fn mib(kib: u64) -> String {
    format!("{:.1} MiB", kib as f64 / 1024.0)
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return; // `cargo test --benches` asks for a listing; there is nothing to list.
    }
    let tmp = TempDir::new();
    let d = Daemon::start(&tmp.rt(), &["--max-clients", "4096"]);
    let pid = d.proc.pid();
    let _app = notepad(&d.rt, &["--agent-enable", "--text", "hello"]);
    let endpoint = d.wait_endpoint("notepad");
    json1(&endpoint, "agent/info", json!({}));

    // Idle: one app registered, no client.
    thread::sleep(Duration::from_millis(500));
    let idle_rss = status_kib(pid, "VmRSS").unwrap();
    let before = context_switches(pid);
    thread::sleep(Duration::from_secs(5));
    let idle_wakeups = context_switches(pid) - before;

    // The raw relay answers with a line as long as the daemon's reply.
    let reply = {
        let mut c = jfgui_tests::LineClient::connect(&endpoint).unwrap();
        c.send_raw(&request(1)).unwrap();
        c.read_line().unwrap().unwrap()
    };
    let echo = tmp.path().join("echo.sock");
    let relay_sock = tmp.path().join("relay.sock");
    echo_server(&echo, reply.clone());
    relay(&relay_sock, echo);

    let mut rows = Vec::new();
    for clients in [1, 16] {
        let (mut raw, mut daemon) = (None, None);
        for _ in 0..ROUNDS {
            load(&relay_sock, clients, &mut raw);
            load(&endpoint, clients, &mut daemon);
        }
        rows.push((clients, raw.unwrap(), daemon.unwrap()));
    }

    // 64 apps × 16 clients.
    let mut apps: Vec<Proc> = (1..64)
        .map(|i| notepad(&d.rt, &["--agent-enable", "--name", &format!("Pad {i}")]))
        .collect();
    d.wait_apps(64);
    let slugs: Vec<String> =
        d.apps().iter().map(|a| a["slug"].as_str().unwrap().to_string()).collect();
    let mut conns = Vec::new();
    for slug in &slugs {
        let ep = d.wait_endpoint(slug);
        for _ in 0..16 {
            let mut c = jfgui_tests::LineClient::connect(&ep).unwrap();
            c.send_raw(&request(1)).unwrap();
            conns.push(c);
        }
    }
    for c in &mut conns {
        assert!(c.read_line().unwrap().unwrap().contains("\"result\""));
    }
    let loaded_rss = status_kib(pid, "VmRSS").unwrap();
    let hwm = status_kib(pid, "VmHWM").unwrap();
    drop(conns);
    apps.clear();

    println!(
        "\n## jfgui-agentd vs raw two-hop relay (document.get, {reply_len} B reply)\n",
        reply_len = reply.len()
    );
    println!("| clients | path | p50 | p99 | calls/s | p50 ratio | calls/s ratio |");
    println!("|---|---|---|---|---|---|---|");
    for (clients, raw, daemon) in &rows {
        let rate = |r: &Run| r.calls as f64 / r.elapsed.as_secs_f64();
        let us = |ns: u64| format!("{:.1} µs", ns as f64 / 1000.0);
        let p50 = |r: &Run| r.hist.value_at_quantile(0.5);
        for (name, r) in [("raw relay", raw), ("daemon", daemon)] {
            let (ratio_p50, ratio_rate) = if name == "daemon" {
                (
                    format!("{:.2}×", p50(daemon) as f64 / p50(raw) as f64),
                    format!("{:.2}×", rate(daemon) / rate(raw)),
                )
            } else {
                (String::new(), String::new())
            };
            println!(
                "| {clients} | {name} | {} | {} | {:.0} | {ratio_p50} | {ratio_rate} |",
                us(p50(r)),
                us(r.hist.value_at_quantile(0.99)),
                rate(r),
            );
        }
    }
    println!();
    println!("| daemon measure | value | goal |");
    println!("|---|---|---|");
    println!("| RSS idle (1 app, no client) | {} | ≤ 8 MiB |", mib(idle_rss));
    println!("| RSS with 64 apps × 16 clients | {} | |", mib(loaded_rss));
    println!("| peak RSS (VmHWM) over the whole run | {} | |", mib(hwm));
    println!("| context switches idle over 5 s | {idle_wakeups} | 0 |");
}
