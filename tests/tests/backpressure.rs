//! Backpressure across processes: responses at and over the size bounds from a real
//! test app, a client that pipelines thousands of requests for ~1 MiB responses and never
//! reads, and an app that never reads its host channel. Memory is sampled from `/proc` while
//! it happens (peak under baseline + 64 MiB), every request gets exactly one response, and the
//! ledger shows nothing ran that the client was told did not.

use std::collections::BTreeSet;
use std::io::Write;
use std::os::unix::net::UnixStream;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use jfgui_tests::serde_json::{self, Value, json};
use jfgui_tests::{LineClient, PATIENCE, Rig, Watchdog, json1, status_kib};

const MIB: u64 = 1024 * 1024;

fn get(id: usize) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"actions/execute","params":{{"action":"state.get"}}}}"#
    )
}

/// Samples `VmRSS` of `pid` every 100 ms until dropped; `peak()` is the largest sample (KiB).
struct RssSampler {
    stop: Arc<AtomicBool>,
    peak: Arc<AtomicU64>,
}

impl RssSampler {
    fn start(pid: u32) -> RssSampler {
        let stop = Arc::new(AtomicBool::new(false));
        let peak = Arc::new(AtomicU64::new(0));
        let (s, p) = (Arc::clone(&stop), Arc::clone(&peak));
        thread::spawn(move || {
            while !s.load(Ordering::Relaxed) {
                if let Some(rss) = status_kib(pid, "VmRSS") {
                    p.fetch_max(rss, Ordering::Relaxed);
                }
                thread::sleep(Duration::from_millis(100));
            }
        });
        RssSampler { stop, peak }
    }

    fn peak(&self) -> u64 {
        self.peak.load(Ordering::Relaxed)
    }
}

impl Drop for RssSampler {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

#[test]
fn responses_at_and_over_the_bounds() {
    let _wd = Watchdog::arm(Duration::from_secs(120));
    let cases: [(u64, bool); 5] = [
        (1_040_000, true),              // the JSON-1 line stays under 1 MiB
        (MIB, false),                   // output alone at the client bound: the line is over
        (MIB + 64 * 1024 - 200, false), // under the host frame limit, over the client bound
        (MIB + 64 * 1024, false),       // output at the frame limit: the frame is over
        (MIB + 64 * 1024 + 1, false),
    ];
    let knobs: Vec<String> = cases
        .iter()
        .enumerate()
        .map(|(i, (bytes, _))| {
            format!(
                "{}:huge-output={bytes}",
                ["state.get", "counter.add", "text.append", "job.run", "state.get"][i]
            )
        })
        .collect();
    // One knob per action; the last case runs on a restarted app.
    let mut r = Rig::start(
        &[],
        &["--fault", &knobs[0], "--fault", &knobs[1], "--fault", &knobs[2], "--fault", &knobs[3]],
    );
    let mut revision = 0u64;
    for (i, (bytes, fits)) in cases.iter().enumerate() {
        if i == 4 {
            r.target.proc.signal("KILL");
            r.restart_target(&["--fault", &knobs[4]]);
        }
        let (action, input) = match i {
            1 => ("counter.add", json!({"by": 1, "tag": format!("w{i}")})),
            2 => ("text.append", json!({"text": "t", "tag": format!("w{i}")})),
            3 => ("job.run", json!({"ms": 0})),
            _ => ("state.get", json!({})),
        };
        let mut params = json!({"action": action, "input": input});
        if action != "state.get" {
            params["expectedRevision"] = json!(revision);
        }
        let mut c = LineClient::connect(&r.target_ep).unwrap();
        c.send_raw(
            &json!({"jsonrpc": "2.0", "id": i, "method": "actions/execute", "params": params})
                .to_string(),
        )
        .unwrap();
        let line = c.read_line().unwrap().unwrap();
        assert!(line.len() as u64 <= MIB + 1, "case {bytes}: a {}-byte line", line.len());
        let v: Value = serde_json::from_str(&line).unwrap();
        if *fits {
            assert_eq!(v["result"]["output"]["data"].as_array().map(Vec::len), Some(16), "{bytes}");
        } else {
            assert_eq!(v["error"]["code"], 1003, "{bytes}: {}", &line[..line.len().min(400)]);
            assert_eq!(v["error"]["data"]["reason"], "response_too_large", "{v}");
            assert_eq!(v["error"]["data"]["action"], action, "names the action: {v}");
        }
        // The app stays registered and the stream stays in step.
        assert_eq!(c.call("agent/info", json!({})).unwrap()["result"]["app"]["slug"], "target");
        if action == "counter.add" || action == "text.append" {
            // A write whose reply was too large did run: the ledger says so, once.
            let tag = format!("w{i} ");
            assert_eq!(r.target.ledger().iter().filter(|l| l.starts_with(&tag)).count(), 1);
            revision += 1;
        }
    }
    assert_eq!(r.d.apps().len(), 2);
    r.assert_live();
}

#[test]
fn a_client_that_never_reads_is_bounded() {
    let _wd = Watchdog::arm(Duration::from_secs(240));
    let r = Rig::start(&[], &["--fault", "state.get:huge-output=1040000"]);
    let pid = r.d.proc.pid();
    let fds = r.fd_baseline();
    let baseline = status_kib(pid, "VmRSS").unwrap();
    let sampler = RssSampler::start(pid);
    // 400 ~1 MiB responses (400 MiB to read back) keep CI fast and are
    // far beyond what the daemon may buffer.
    const TOTAL: usize = 400;

    // The attacker writes its requests from a thread (its writes block once the daemon
    // stops reading) and reads nothing for a while.
    let stream = UnixStream::connect(&r.target_ep).unwrap();
    let mut w = stream.try_clone().unwrap();
    let writer = thread::spawn(move || {
        let all: String = (0..TOTAL).map(|i| format!("{}\n", get(i))).collect();
        w.write_all(all.as_bytes()).unwrap();
    });
    // Meanwhile a normal client on the same app is served.
    let mut worst = Duration::ZERO;
    let mut normal = LineClient::connect(&r.target_ep).unwrap();
    for _ in 0..30 {
        let t = Instant::now();
        assert!(normal.call("agent/info", json!({})).unwrap().get("result").is_some());
        worst = worst.max(t.elapsed());
        thread::sleep(Duration::from_millis(100));
    }
    let peak = sampler.peak();
    println!(
        "baseline RSS {baseline} KiB, peak while not reading {peak} KiB (+{} MiB); \
         normal client's worst agent/info {worst:?}",
        peak.saturating_sub(baseline) / 1024
    );
    assert!(peak < baseline + 64 * 1024, "peak RSS {peak} KiB > baseline {baseline} + 64 MiB");

    // Now read: every request answered exactly once, each complete.
    stream.set_read_timeout(Some(PATIENCE)).unwrap();
    let mut reader = std::io::BufReader::new(stream);
    let mut ids = BTreeSet::new();
    let mut line = String::new();
    for _ in 0..TOTAL {
        line.clear();
        std::io::BufRead::read_line(&mut reader, &mut line).unwrap();
        let v: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(v["result"]["output"]["data"].as_array().map(Vec::len), Some(16));
        assert!(ids.insert(v["id"].as_u64().unwrap()), "answered twice: {}", v["id"]);
    }
    writer.join().unwrap();
    assert_eq!(ids.len(), TOTAL);
    let peak = sampler.peak();
    println!(
        "peak RSS over the whole run {peak} KiB (+{} MiB)",
        peak.saturating_sub(baseline) / 1024
    );
    assert!(peak < baseline + 64 * 1024, "peak RSS {peak} KiB > baseline {baseline} + 64 MiB");
    drop(reader);
    drop(normal);
    r.assert_live();
    r.assert_fds_back(fds);
}

#[test]
fn an_app_that_never_reads_gets_a_bounded_queue() {
    let _wd = Watchdog::arm(Duration::from_secs(240));
    let r = Rig::start(&["--request-deadline", "1s"], &["--no-read"]);
    let pid = r.d.proc.pid();
    let fds = r.fd_baseline();
    let baseline = status_kib(pid, "VmRSS").unwrap();
    let sampler = RssSampler::start(pid);
    const CONNS: usize = 20;
    const PER: usize = 500;
    let workers: Vec<_> = (0..CONNS)
        .map(|k| {
            let ep = r.target_ep.clone();
            thread::spawn(move || {
                let stream = UnixStream::connect(&ep).unwrap();
                stream.set_read_timeout(Some(PATIENCE)).unwrap();
                let mut w = stream.try_clone().unwrap();
                let all: String = (0..PER)
                    .map(|i| {
                        let tag = format!("c{k}-{i}");
                        json!({"jsonrpc": "2.0", "id": k * PER + i, "method": "actions/execute",
                            "params": {"action": "counter.add", "input": {"by": 1, "tag": tag},
                                "expectedRevision": 0}})
                        .to_string()
                            + "\n"
                    })
                    .collect();
                let writer = thread::spawn(move || w.write_all(all.as_bytes()).unwrap());
                let mut reader = std::io::BufReader::new(stream);
                let mut reasons = Vec::new();
                let mut line = String::new();
                for _ in 0..PER {
                    line.clear();
                    std::io::BufRead::read_line(&mut reader, &mut line).unwrap();
                    let v: Value = serde_json::from_str(&line).unwrap();
                    reasons.push(v["error"]["data"]["reason"].as_str().unwrap_or("?").to_string());
                }
                writer.join().unwrap();
                reasons
            })
        })
        .collect();
    let mut busy = 0;
    let mut timeout = 0;
    for w in workers {
        for reason in w.join().unwrap() {
            match reason.as_str() {
                "busy" => busy += 1,
                "timeout" => timeout += 1,
                other => panic!("unexpected verdict {other}"),
            }
        }
    }
    let peak = sampler.peak();
    println!(
        "{busy} busy (not executed), {timeout} timeout (outcome unknown); RSS baseline \
         {baseline} KiB, peak {peak} KiB"
    );
    assert_eq!(busy + timeout, CONNS * PER, "one response each");
    assert!(busy > 0, "the queue filled");
    assert!(peak < baseline + 64 * 1024);
    r.assert_target_ledger_empty();
    assert!(json1(&r.probe_ep, "agent/info", json!({}))["revision"].is_u64());
    r.assert_live();
    r.assert_fds_back(fds);
}
