//! The issue-16 benchmark: what recording a call in the audit log adds to the call.
//!
//! ```text
//! cargo bench -p jfgui-tests --bench audit
//! ```
//!
//! Writes are always recorded, so the cost is measured where the daemon has a switch: two
//! daemons in the same run, each with its own Notepad, one with `--audit-reads` and one
//! without, answer the same read (`document.get`); the difference of their p50 is what the
//! record costs a call (the observer, the clone of the input, the queue; hashing and the disk
//! are on the writer thread). It is reported as a share of the p50 of a write
//! (`selection.set`, recorded on both daemons). `JFGUI_BENCH_SECONDS` (default 3) is the
//! measured time per daemon and kind, split into three rounds that alternate the daemons, so
//! load from other processes hits both alike.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use jfgui_tests::serde_json::{self, Value};
use jfgui_tests::{Daemon, Proc, TempDir, notepad};

const ROUNDS: u32 = 3;

fn seconds() -> Duration {
    let s = std::env::var("JFGUI_BENCH_SECONDS").ok().and_then(|s| s.parse().ok()).unwrap_or(3);
    Duration::from_secs(s)
}

/// One daemon with a Notepad and one connected client.
struct Rig {
    r: BufReader<UnixStream>,
    w: UnixStream,
    revision: u64,
    next_id: u64,
    _app: Proc,
    d: Daemon,
    _tmp: TempDir,
}

impl Rig {
    fn start(args: &[&str]) -> Rig {
        let tmp = TempDir::new();
        let d = Daemon::start(&tmp.rt(), args);
        let app = notepad(&d.rt, &["--agent-enable"]);
        let ep = d.wait_endpoint("notepad");
        let w = UnixStream::connect(&ep).unwrap();
        let r = BufReader::new(w.try_clone().unwrap());
        let mut rig = Rig { r, w, revision: 0, next_id: 1, _app: app, d, _tmp: tmp };
        rig.revision = rig.call(r#""action":"document.get""#)["revision"].as_u64().unwrap();
        rig
    }

    fn call(&mut self, params: &str) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"actions/execute","params":{{{params}}}}}"#
        );
        self.w.write_all(line.as_bytes()).unwrap();
        self.w.write_all(b"\n").unwrap();
        let mut answer = String::new();
        self.r.read_line(&mut answer).unwrap();
        let v: Value = serde_json::from_str(&answer).unwrap();
        v.get("result").cloned().unwrap_or_else(|| panic!("{answer}"))
    }

    fn read(&mut self) {
        self.call(r#""action":"document.get""#);
    }

    fn write(&mut self) {
        let params = format!(
            r#""action":"selection.set","input":{{"start":0,"end":0}},"expectedRevision":{}"#,
            self.revision
        );
        self.revision = self.call(&params)["revision"].as_u64().unwrap();
    }
}

fn measure(rig: &mut Rig, hist: &mut Histogram<u64>, time: Duration, op: fn(&mut Rig)) {
    let until = Instant::now() + time;
    while Instant::now() < until {
        let t = Instant::now();
        op(rig);
        hist.record(t.elapsed().as_nanos() as u64).unwrap();
    }
}

fn us(ns: u64) -> f64 {
    ns as f64 / 1000.0
}

fn main() {
    let per_round = seconds() / ROUNDS;
    let mut plain = Rig::start(&[]);
    let mut audited = Rig::start(&["--audit-reads"]);
    let hist = || Histogram::<u64>::new(3).unwrap();
    let (mut read_plain, mut read_audited) = (hist(), hist());
    let (mut write_plain, mut write_audited) = (hist(), hist());
    // Warm-up: connections, caches, the writer thread's first open.
    for rig in [&mut plain, &mut audited] {
        for _ in 0..200 {
            rig.read();
            rig.write();
        }
    }
    for _ in 0..ROUNDS {
        measure(&mut plain, &mut read_plain, per_round, Rig::read);
        measure(&mut audited, &mut read_audited, per_round, Rig::read);
        measure(&mut audited, &mut write_audited, per_round, Rig::write);
        measure(&mut plain, &mut write_plain, per_round, Rig::write);
    }
    let p50 = |h: &Histogram<u64>| h.value_at_quantile(0.5);
    let p99 = |h: &Histogram<u64>| h.value_at_quantile(0.99);
    println!(
        "audit cost, one client, sequential calls ({} s per kind and daemon)",
        seconds().as_secs()
    );
    for (name, h) in [
        ("read, not recorded", &read_plain),
        ("read, recorded (--audit-reads)", &read_audited),
        ("write, recorded (daemon 1)", &write_plain),
        ("write, recorded (daemon 2)", &write_audited),
    ] {
        println!(
            "  {name:32} p50 {:8.1} µs  p99 {:8.1} µs  ({} calls)",
            us(p50(h)),
            us(p99(h)),
            h.len()
        );
    }
    let added = p50(&read_audited) as f64 - p50(&read_plain) as f64;
    let write = (p50(&write_plain) + p50(&write_audited)) as f64 / 2.0;
    println!("  added by recording a call (p50 difference): {:.1} µs", added / 1000.0);
    println!("  as a share of a write's p50: {:.2} % (goal < 3 %)", 100.0 * added / write);
    let status = |d: &Daemon| d.status()["auditDropped"].clone();
    println!("  records dropped: {} / {}", status(&plain.d), status(&audited.d));
    let dir = jfgui_tests::audit_dir(&audited.d.rt);
    let lines = std::fs::read_to_string(dir.join("audit.jsonl")).map_or(0, |t| t.lines().count());
    println!("  records in the recording daemon's live file: {lines}");
}
