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
//! measured time per daemon and kind, split into 30 short rounds that alternate the daemons'
//! order; each round gives its own ratio and the figure is their median (a comparison of two
//! whole runs was dominated by load from other processes: 3.3 % once, 32.9 % the next).

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use jfgui_tests::serde_json::{self, Value};
use jfgui_tests::{Daemon, Proc, TempDir, notepad};

/// Short rounds, many of them: the figure is a median over rounds.
const ROUNDS: u32 = 30;

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

fn measure(rig: &mut Rig, time: Duration, op: fn(&mut Rig)) -> Histogram<u64> {
    let mut hist = Histogram::<u64>::new(3).unwrap();
    let until = Instant::now() + time;
    while Instant::now() < until {
        let t = Instant::now();
        op(rig);
        hist.record(t.elapsed().as_nanos() as u64).unwrap();
    }
    hist
}

fn us(ns: f64) -> f64 {
    ns / 1000.0
}

fn p50(h: &Histogram<u64>) -> f64 {
    h.value_at_quantile(0.5) as f64
}

/// The median of `values` (sorted in place).
fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    if n % 2 == 1 { values[n / 2] } else { (values[n / 2 - 1] + values[n / 2]) / 2.0 }
}

fn main() {
    let per_round = seconds() / ROUNDS;
    let mut plain = Rig::start(&[]);
    let mut audited = Rig::start(&["--audit-reads"]);
    // Warm-up: connections, caches, the writer thread's first open.
    for rig in [&mut plain, &mut audited] {
        for _ in 0..200 {
            rig.read();
            rig.write();
        }
    }
    // Per round: the read's p50 on each daemon (in alternating order, so drift and load from
    // other processes hit both alike) and a write's p50; the round's figure is the difference
    // of the reads as a share of the write. The median over rounds discards the rounds that a
    // burst of load hit unevenly.
    let (mut added, mut shares, mut writes) = (Vec::new(), Vec::new(), Vec::new());
    let mut all_plain = Histogram::<u64>::new(3).unwrap();
    let mut all_audited = all_plain.clone();
    for round in 0..ROUNDS {
        let (a, b) = if round % 2 == 0 {
            let a = measure(&mut plain, per_round, Rig::read);
            (a, measure(&mut audited, per_round, Rig::read))
        } else {
            let b = measure(&mut audited, per_round, Rig::read);
            (measure(&mut plain, per_round, Rig::read), b)
        };
        let write =
            measure(if round % 2 == 0 { &mut plain } else { &mut audited }, per_round, Rig::write);
        let diff = p50(&b) - p50(&a);
        added.push(diff);
        shares.push(100.0 * diff / p50(&write));
        writes.push(p50(&write));
        all_plain.add(&a).unwrap();
        all_audited.add(&b).unwrap();
    }
    println!(
        "audit cost, one client, sequential calls ({ROUNDS} interleaved rounds, {} ms per kind and daemon each)",
        per_round.as_millis()
    );
    println!(
        "  read, not recorded              p50 {:8.1} µs  ({} calls)",
        us(p50(&all_plain)),
        all_plain.len()
    );
    println!(
        "  read, recorded (--audit-reads)  p50 {:8.1} µs  ({} calls)",
        us(p50(&all_audited)),
        all_audited.len()
    );
    println!(
        "  write (recorded)                p50 {:8.1} µs  (median of rounds)",
        us(median(&mut writes))
    );
    let mut sorted = shares.clone();
    sorted.sort_by(f64::total_cmp);
    let quartile = |q: usize| sorted[(sorted.len() - 1) * q / 4];
    println!(
        "  added by recording a call: {:.1} µs (median of per-round p50 differences)",
        us(median(&mut added))
    );
    println!(
        "  as a share of a write's p50: {:.2} % (goal < 3 %); per-round quartiles {:.2} / {:.2} / {:.2} %",
        median(&mut shares),
        quartile(1),
        quartile(2),
        quartile(3)
    );
    let status = |d: &Daemon| d.status()["auditDropped"].clone();
    println!("  records dropped: {} / {}", status(&plain.d), status(&audited.d));
    let dir = jfgui_tests::audit_dir(&audited.d.rt);
    let lines = std::fs::read_to_string(dir.join("audit.jsonl")).map_or(0, |t| t.lines().count());
    println!("  records in the recording daemon's live file: {lines}");
}
