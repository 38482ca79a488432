//! The fairness benchmark: a victim's trivial read while attacker connections
//! pipeline the costliest legal requests, and the daemon's memory after attack rounds.
//!
//! ```text
//! cargo bench -p jfgui-tests --features bench --bench fairness
//! ```
//!
//! (release build; the harness builds the daemon and apps in release first.)
//! `JFGUI_BENCH_SECONDS` sets the measured time per scenario (default 3);
//! `JFGUI_BENCH_WORKERS=N` runs the daemon with `--worker-threads N` (default 0, one thread).
//!
//! - **victim**: one connection to `jfgui-notepad`, one `actions/execute {action:
//!   "document.get"}` at a time; p50/p99 in the same run alone (the baseline) and under 1 and 8
//!   attackers of each kind.
//! - **attackers** (each one connection, writing requests as fast as the daemon reads them and
//!   reading the answers on another thread):
//!   - `list`: `actions/list {"query":"zzz"}` (matches nothing) against a `jfgui-testapp` with
//!     4092 extra actions of 800-byte descriptions (4096 in all, the cap);
//!   - `apps`: `apps/list` on the control socket with five apps whose display names are
//!     256 KiB long;
//!   - `describe`: `actions/describe` of an action whose input schema is about 800 KB;
//!   - `mcp describe`: `tools/call` of `jfgui_actions_describe` (2026-07-28 envelope on every
//!     request) of an action whose input schema is about 200 KB: the result carries the object
//!     and its text twin, one JSON string, which the 256 KiB string bound must admit (an 800 KB
//!     schema's describe is answered `response_too_large` through MCP).
//! - **memory**: daemon RSS (`VmRSS`) at the baseline (apps registered, victim warmed up),
//!   after every attack round, and after a round of 200 connections each holding a 1 MiB
//!   partial line; `VmHWM` over the run.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use jfgui_tests::serde_json::{self, json};
use jfgui_tests::{Daemon, TempDir, TestApp, json1, notepad, status_kib, wait_until};

const VICTIM: &str =
    r#"{"jsonrpc":"2.0","id":1,"method":"actions/execute","params":{"action":"document.get"}}"#;

/// MCP `tools/call` of `jfgui_actions_describe` for the large schema (of the 200 KB app), with
/// the 2026-07-28 envelope (no handshake needed).
const MCP_DESCRIBE: &str = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"fairness-bench","version":"1"}},"name":"jfgui_actions_describe","arguments":{"action":"huge.describe"}}}"#;

fn seconds() -> Duration {
    let s = std::env::var("JFGUI_BENCH_SECONDS").ok().and_then(|s| s.parse().ok()).unwrap_or(3);
    Duration::from_secs(s)
}

/// One attacker connection: a writer pipelining `line` until told to stop, a reader counting
/// the answers.
struct Attacker {
    stream: UnixStream,
    stop: Arc<AtomicBool>,
    writer: thread::JoinHandle<()>,
    reader: thread::JoinHandle<u64>,
}

impl Attacker {
    fn start(path: &Path, line: &str) -> Attacker {
        let stream = UnixStream::connect(path).unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let mut w = stream.try_clone().unwrap();
        let r = stream.try_clone().unwrap();
        let line = format!("{line}\n").repeat(16);
        let flag = Arc::clone(&stop);
        let writer = thread::spawn(move || {
            while !flag.load(Ordering::Relaxed) {
                if w.write_all(line.as_bytes()).is_err() {
                    return;
                }
            }
            let _ = w.shutdown(std::net::Shutdown::Write);
        });
        let reader = thread::spawn(move || {
            let mut r = BufReader::with_capacity(1 << 20, r);
            let mut buf = Vec::new();
            let mut n = 0;
            while r.read_until(b'\n', &mut buf).is_ok_and(|len| len > 0) {
                n += 1;
                buf.clear();
            }
            n
        });
        Attacker { stream, stop, writer, reader }
    }

    /// Stops the attack (the writer may be blocked by the daemon's backpressure: the socket is
    /// shut down under it). Returns the answers read until then.
    fn stop(self) -> u64 {
        self.stop.store(true, Ordering::Relaxed);
        let _ = self.stream.shutdown(std::net::Shutdown::Both);
        self.writer.join().unwrap();
        self.reader.join().unwrap()
    }
}

/// The victim's latencies over `seconds()`.
fn victim(endpoint: &Path) -> (Histogram<u64>, u64) {
    let mut hist = Histogram::<u64>::new_with_bounds(1, 120_000_000_000, 3).unwrap();
    let mut w = UnixStream::connect(endpoint).unwrap();
    w.set_read_timeout(Some(Duration::from_secs(120))).unwrap();
    let mut r = BufReader::new(w.try_clone().unwrap());
    let mut line = String::new();
    let request = format!("{VICTIM}\n");
    for _ in 0..50 {
        w.write_all(request.as_bytes()).unwrap();
        line.clear();
        r.read_line(&mut line).unwrap();
    }
    let until = Instant::now() + seconds();
    let mut calls = 0;
    while Instant::now() < until {
        let t = Instant::now();
        w.write_all(request.as_bytes()).unwrap();
        line.clear();
        r.read_line(&mut line).unwrap();
        hist.record(t.elapsed().as_nanos() as u64).unwrap();
        assert!(line.contains("\"result\""), "{line}");
        calls += 1;
    }
    (hist, calls)
}

/// One MCP request on a fresh connection to `endpoint`, its answer parsed.
fn mcp_call(endpoint: &Path, line: &str) -> serde_json::Value {
    let mut w = UnixStream::connect(endpoint).unwrap();
    w.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    w.write_all(format!("{line}\n").as_bytes()).unwrap();
    let mut answer = String::new();
    BufReader::new(w).read_line(&mut answer).unwrap();
    serde_json::from_str(&answer).expect("a JSON answer")
}

/// The endpoint socket of `slug`, once bound (not through `apps/list`, which the long names
/// break before the fix).
fn socket(d: &Daemon, slug: &str) -> PathBuf {
    let path = d.rt.join("apps").join(format!("{slug}.sock"));
    assert!(wait_until(Duration::from_secs(30), || path.exists()), "{slug} never came up");
    path
}

/// Prints one result row at once (a stalled scenario still leaves the earlier ones).
fn row(kind: &str, n: usize, hist: &Histogram<u64>, calls: u64, answered: u64, alone_p99: u64) {
    let p99 = hist.value_at_quantile(0.99);
    println!(
        "| {kind} | {n} | {} | {} | {:.1}× | {calls} | {answered} |",
        ms(hist.value_at_quantile(0.5)),
        ms(p99),
        p99 as f64 / alone_p99 as f64,
    );
    let _ = std::io::stdout().flush();
}

fn ms(ns: u64) -> String {
    format!("{:.2} ms", ns as f64 / 1e6)
}

fn mib(kib: u64) -> String {
    format!("{:.1} MiB", kib as f64 / 1024.0)
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return; // `cargo test --benches` asks for a listing; there is nothing to list.
    }
    let tmp = TempDir::new();
    // `JFGUI_BENCH_WORKERS=N` runs the daemon with `--worker-threads N` (0: one thread).
    let workers = std::env::var("JFGUI_BENCH_WORKERS").unwrap_or_else(|_| "0".into());
    let d = Daemon::start(&tmp.rt(), &["--max-clients", "4096", "--worker-threads", &workers]);
    println!("\ndaemon --worker-threads {workers}");
    let pid = d.proc.pid();
    let dir = tmp.path().to_path_buf();
    let _pad = notepad(&d.rt, &["--agent-enable", "--text", "hello"]);
    let bulk = TestApp::start(
        &d.rt,
        &dir,
        "Bulk",
        &["--bulk-actions", "4092", "--description-bytes", "800"],
    );
    let huge = TestApp::start(&d.rt, &dir, "Huge", &["--huge-schema", "800000"]);
    let half = TestApp::start(&d.rt, &dir, "Half", &["--huge-schema", "200000"]);
    let long: Vec<TestApp> = (0..5)
        .map(|i| TestApp::start(&d.rt, &dir, &format!("Long{i}"), &["--name-bytes", "262144"]))
        .collect();
    // By count: before paging, `apps/list` with these names does not fit a response.
    assert!(wait_until(Duration::from_secs(30), || d.status()["apps"].as_u64() == Some(9)));
    let endpoint = socket(&d, "notepad");
    let bulk_ep = socket(&d, "bulk");
    let huge_ep = socket(&d, "huge");
    let half_ep = socket(&d, "half");
    let control = d.control();
    // Each attack is legal and answered.
    let listed = json1(&bulk_ep, "actions/list", json!({"query": "zzz"}));
    assert_eq!(listed["actions"].as_array().map(Vec::len), Some(0), "{listed}");
    let described = json1(&huge_ep, "actions/describe", json!({"action": "huge.describe"}));
    assert!(described["action"]["inputSchema"].is_object());
    let mcp_described = mcp_call(&half_ep, MCP_DESCRIBE);
    assert_eq!(mcp_described["result"]["isError"], false, "{mcp_described:.300}");
    let text = mcp_described["result"]["content"][0]["text"].as_str().unwrap_or_default();
    let twin: serde_json::Value = serde_json::from_str(text).expect("the text twin is JSON");
    assert_eq!(twin, mcp_described["result"]["structuredContent"], "{mcp_described:.200}");
    assert!(twin["action"]["inputSchema"].is_object(), "{mcp_described:.200}");

    let kinds: [(&str, PathBuf, String); 4] = [
        (
            "list",
            bulk_ep.clone(),
            r#"{"jsonrpc":"2.0","id":7,"method":"actions/list","params":{"query":"zzz"}}"#.into(),
        ),
        ("apps", control.clone(), r#"{"jsonrpc":"2.0","id":7,"method":"apps/list"}"#.into()),
        (
            "describe",
            huge_ep.clone(),
            r#"{"jsonrpc":"2.0","id":7,"method":"actions/describe","params":{"action":"huge.describe"}}"#
                .into(),
        ),
        ("mcp describe", half_ep.clone(), MCP_DESCRIBE.into()),
    ];

    victim(&endpoint); // warm-up round
    thread::sleep(Duration::from_millis(500));
    let baseline_rss = status_kib(pid, "VmRSS").unwrap();
    println!(
        "\n## Victim document.get under pipelining attackers ({}s each)\n",
        seconds().as_secs()
    );
    println!(
        "| attack | attackers | victim p50 | victim p99 | p99 / alone | victim calls | attacker answers |"
    );
    println!("|---|---|---|---|---|---|---|");
    let (alone, calls) = victim(&endpoint);
    let alone_p99 = alone.value_at_quantile(0.99);
    row("alone", 0, &alone, calls, 0, alone_p99);
    let mut rss_after = Vec::new();
    for (kind, path, line) in &kinds {
        for n in [1, 8] {
            let attackers: Vec<Attacker> = (0..n).map(|_| Attacker::start(path, line)).collect();
            thread::sleep(Duration::from_millis(200));
            let (hist, calls) = victim(&endpoint);
            let answered: u64 = attackers.into_iter().map(Attacker::stop).sum();
            row(kind, n, &hist, calls, answered, alone_p99);
            thread::sleep(Duration::from_millis(1500));
            rss_after.push((format!("{kind} × {n}"), status_kib(pid, "VmRSS").unwrap()));
        }
    }

    // 200 connections each holding a 1 MiB partial line, then gone.
    let partial = vec![b'x'; 1 << 20];
    let holders: Vec<UnixStream> = (0..200)
        .map(|_| {
            let mut s = UnixStream::connect(&endpoint).unwrap();
            let _ = s.set_write_timeout(Some(Duration::from_secs(5)));
            let _ = s.write_all(&partial);
            s
        })
        .collect();
    thread::sleep(Duration::from_millis(500));
    let holding_rss = status_kib(pid, "VmRSS").unwrap();
    drop(holders);
    wait_until(Duration::from_secs(30), || d.status()["clients"].as_u64() == Some(0));
    thread::sleep(Duration::from_millis(1500));
    rss_after.push(("200 × 1 MiB partial lines, closed".into(), status_kib(pid, "VmRSS").unwrap()));
    let hwm = status_kib(pid, "VmHWM").unwrap();
    drop((bulk, huge, half, long));

    println!("\n| daemon memory | RSS | vs baseline |");
    println!("|---|---|---|");
    println!("| baseline (9 apps, victim warmed up) | {} | 1.00× |", mib(baseline_rss));
    for (what, kib) in &rss_after {
        println!("| after {what} | {} | {:.2}× |", mib(*kib), *kib as f64 / baseline_rss as f64);
    }
    println!(
        "| while 200 × 1 MiB partial lines are held | {} | {:.2}× |",
        mib(holding_rss),
        holding_rss as f64 / baseline_rss as f64
    );
    println!(
        "| peak (VmHWM) over the run | {} | {:.2}× |",
        mib(hwm),
        hwm as f64 / baseline_rss as f64
    );
}
