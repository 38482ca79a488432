//! The issue-16 benchmark: what recording a call in the audit log adds to the call, with and
//! without the `activity` notice the app gets about it.
//!
//! ```text
//! cargo bench -p jfgui-tests --features bench --bench audit
//! ```
//!
//! Writes are always recorded, so the cost is measured where the daemon has a switch: three
//! daemons in the same run, each with its own Notepad, answer the same read (`document.get`):
//!
//! - *plain*: without `--audit-reads`, so the read is not recorded (the baseline);
//! - *recorded*: `--audit-reads`, with the shipped Notepad, which asks for `activity` notices:
//!   the record and the notice (the goal is judged on this one);
//! - *record only*: `--audit-reads`, with a Notepad started `--no-activity`: the record alone.
//!
//! The difference of a p50 to the plain one is what recording (and notifying) costs a call (the
//! observer, the clone of the input, the queue, the notice's frame and the app's handling of
//! it; hashing and the disk are on the writer thread). It is reported as a share of the p50 of
//! a write (`selection.set`, recorded on every daemon). `JFGUI_BENCH_SECONDS` (default 3) is
//! the measured time per daemon and kind, split into 30 short rounds that rotate the daemons'
//! order; each round gives its own ratios and the figures are their medians with quartiles (a
//! comparison of two whole runs was dominated by load from other processes: 3.3 % once,
//! 32.9 % the next).

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
    /// A daemon started with `args` and a Notepad with `--agent-enable` and `app_args`.
    fn start(args: &[&str], app_args: &[&str]) -> Rig {
        let tmp = TempDir::new();
        let d = Daemon::start(&tmp.rt(), args);
        let app = notepad(&d.rt, &[&["--agent-enable"], app_args].concat());
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

/// The per-round ratios of one recording daemon against the plain one.
#[derive(Default)]
struct Cost {
    /// Per round: the difference of the read p50s, in ns.
    added: Vec<f64>,
    /// Per round: that as a share of the round's write p50, in %.
    shares: Vec<f64>,
    /// Every read.
    reads: Option<Histogram<u64>>,
}

impl Cost {
    fn add(&mut self, read: &Histogram<u64>, plain: &Histogram<u64>, write: f64) {
        let diff = p50(read) - p50(plain);
        self.added.push(diff);
        self.shares.push(100.0 * diff / write);
        match &mut self.reads {
            Some(all) => all.add(read).unwrap(),
            None => self.reads = Some(read.clone()),
        }
    }

    fn report(&mut self, label: &str) {
        let reads = self.reads.as_ref().unwrap();
        println!("  read, {label:<28} p50 {:8.1} µs  ({} calls)", us(p50(reads)), reads.len());
        let mut sorted = self.shares.clone();
        sorted.sort_by(f64::total_cmp);
        let quartile = |q: usize| sorted[(sorted.len() - 1) * q / 4];
        println!(
            "    added: {:.1} µs = {:.2} % of a write's p50 (medians of rounds; goal < 3 %); per-round quartiles {:.2} / {:.2} / {:.2} %",
            us(median(&mut self.added)),
            median(&mut self.shares),
            quartile(1),
            quartile(2),
            quartile(3)
        );
    }
}

fn main() {
    let per_round = seconds() / ROUNDS;
    // The plain daemon, the recording one with the shipped Notepad, the recording one with a
    // Notepad that asks for no notices.
    let mut rigs = [
        Rig::start(&[], &[]),
        Rig::start(&["--audit-reads"], &[]),
        Rig::start(&["--audit-reads"], &["--no-activity"]),
    ];
    // Warm-up: connections, caches, the writer thread's first open.
    for rig in &mut rigs {
        for _ in 0..200 {
            rig.read();
            rig.write();
        }
    }
    // Per round: the read's p50 on each daemon (in rotating order, so drift and load from
    // other processes hit all alike) and a write's p50; the round's figures are the
    // differences of the reads as a share of the write. The median over rounds discards the
    // rounds that a burst of load hit unevenly.
    let mut writes = Vec::new();
    let mut all_plain = Histogram::<u64>::new(3).unwrap();
    let (mut with_notice, mut without_notice) = (Cost::default(), Cost::default());
    for round in 0..ROUNDS as usize {
        let mut reads = std::array::from_fn(|_| Histogram::<u64>::new(3).unwrap());
        for k in 0..3 {
            let i = (round + k) % 3;
            reads[i] = measure(&mut rigs[i], per_round, Rig::read);
        }
        let [plain, recorded, record_only] = &reads;
        let write = p50(&measure(&mut rigs[round % 3], per_round, Rig::write));
        writes.push(write);
        with_notice.add(recorded, plain, write);
        without_notice.add(record_only, plain, write);
        all_plain.add(plain).unwrap();
    }
    println!(
        "audit cost, one client, sequential calls ({ROUNDS} rotated rounds, {} ms per kind and daemon each)",
        per_round.as_millis()
    );
    println!(
        "  read, {:<28} p50 {:8.1} µs  ({} calls)",
        "not recorded",
        us(p50(&all_plain)),
        all_plain.len()
    );
    with_notice.report("recorded + notice (shipped)");
    without_notice.report("recorded, no notice");
    println!(
        "  write (recorded)                    p50 {:8.1} µs  (median of rounds)",
        us(median(&mut writes))
    );
    let status = |d: &Daemon| d.status()["auditDropped"].clone();
    let notices = |d: &Daemon| d.status()["activityDropped"].clone();
    let [plain, recorded, record_only] = &rigs;
    println!(
        "  records dropped: {} / {} / {}; notices dropped: {}",
        status(&plain.d),
        status(&recorded.d),
        status(&record_only.d),
        notices(&recorded.d)
    );
    let dir = jfgui_tests::audit_dir(&recorded.d.rt);
    let lines = std::fs::read_to_string(dir.join("audit.jsonl")).map_or(0, |t| t.lines().count());
    println!("  records in the recording daemon's live file: {lines}");
}
