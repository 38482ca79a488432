//! `/proc` probes (CPU time, RSS, context switches, a process's children) and the small
//! numeric helpers the report needs.

use std::collections::BTreeMap;
use std::fs;

use hdrhistogram::Histogram;

/// Clock ticks per second of `/proc/PID/stat` times: `USER_HZ`, fixed at 100 on Linux.
const USER_HZ: f64 = 100.0;

/// User + system CPU time of all `pids` so far (exited threads included), clock ticks. A pid
/// that is gone counts nothing.
pub fn cpu_ticks(pids: &[u32]) -> u64 {
    pids.iter().filter_map(|&pid| jfgui_tests::cpu_ticks(pid)).sum()
}

/// Clock ticks in µs.
pub fn ticks_to_us(ticks: u64) -> f64 {
    ticks as f64 * 1e6 / USER_HZ
}

/// `VmRSS` of `pid`, KiB.
pub fn rss_kib(pid: u32) -> u64 {
    jfgui_tests::status_kib(pid, "VmRSS").unwrap_or(0)
}

/// Anonymous memory of `pid` (`Anonymous` in `/proc/PID/smaps_rollup`: the process's own
/// heap, stacks and data, without the code and files the kernel can reclaim), KiB.
pub fn anon_kib(pid: u32) -> u64 {
    fs::read_to_string(format!("/proc/{pid}/smaps_rollup"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("Anonymous:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// Voluntary + involuntary context switches of every thread of `pid` so far, by thread id,
/// with the thread's name.
pub fn thread_switches(pid: u32) -> BTreeMap<u32, (String, u64)> {
    let mut threads = BTreeMap::new();
    let Ok(tasks) = fs::read_dir(format!("/proc/{pid}/task")) else { return threads };
    for task in tasks.flatten() {
        let Some(tid) = task.file_name().to_str().and_then(|t| t.parse().ok()) else { continue };
        let status = fs::read_to_string(task.path().join("status")).unwrap_or_default();
        let mut name = String::new();
        let mut total = 0;
        for l in status.lines() {
            if let Some(v) = l.strip_prefix("Name:") {
                name = v.trim().to_string();
            } else if let Some(v) = l
                .strip_prefix("voluntary_ctxt_switches:")
                .or_else(|| l.strip_prefix("nonvoluntary_ctxt_switches:"))
            {
                total += v.trim().parse::<u64>().unwrap_or(0);
            }
        }
        threads.insert(tid, (name, total));
    }
    threads
}

/// The child processes of `pid` (of its main thread).
pub fn children(pid: u32) -> Vec<u32> {
    fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|p| p.parse().ok())
        .collect()
}

/// The 1-minute load average, for the report's header.
pub fn load_average() -> String {
    fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

/// An empty latency histogram, ns, 1 ns to 60 s at 3 significant digits.
pub fn histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 60_000_000_000, 3).expect("histogram bounds")
}

/// The median of `values` (the mean of the middle two for an even count); NaN when empty.
pub fn median(values: &[f64]) -> f64 {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| !x.is_nan()).collect();
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 { v[n / 2] } else { (v[n / 2 - 1] + v[n / 2]) / 2.0 }
}

/// KiB as MiB with one decimal.
pub fn mib(kib: u64) -> String {
    format!("{:.1} MiB", kib as f64 / 1024.0)
}
