//! What a measured path is (a [`Target`] that hands out [`Client`]s), and one measured sample:
//! N clients, each one connection making one call at a time, warmed up, then timed between
//! two barriers; the middle's CPU time and allocations are read at those same barriers.

use std::io;
use std::sync::Barrier;
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

use crate::probe;

/// One client connection of a path.
pub trait Client: Send {
    /// Sends call `id` and reads its reply (the timed part).
    fn roundtrip(&mut self, id: u64) -> io::Result<()>;
    /// Checks the last reply, exactly, for call `id` (not timed).
    fn check(&self, id: u64) -> Result<(), String>;
    /// Processes this client alone uses on its way (a gateway, an rmcp server): their CPU
    /// time counts as the path's middle.
    fn pids(&self) -> Vec<u32> {
        Vec::new()
    }
    /// Allocations made so far by those processes, when they count them.
    fn allocations(&self) -> Option<u64> {
        None
    }
}

/// A path: what a client connects to, and the shared processes between client and server.
pub trait Target: Sync {
    /// A new client connection, handshake done.
    fn connect(&self) -> io::Result<Box<dyn Client>>;
    /// The shared middle processes (relay, broker, daemon).
    fn middle_pids(&self) -> Vec<u32>;
    /// Allocations made so far by the shared middle when it counts them (`Some(0)` when
    /// there is no shared middle and the clients' own processes count).
    fn allocations(&self) -> Option<u64> {
        None
    }
}

/// How long each client calls once timed.
#[derive(Debug, Clone, Copy)]
pub enum Budget {
    /// Exactly this many calls (the quick mode).
    Calls(u64),
    /// Calls until this much time passed.
    Time(Duration),
}

/// One measured sample of one path.
#[derive(Debug, Clone)]
pub struct Sample {
    /// Latency percentiles, ns.
    pub p50: u64,
    pub p99: u64,
    /// Calls made by all clients between the barriers.
    pub calls: u64,
    pub elapsed: Duration,
    /// CPU time of the middle processes between the barriers, clock ticks.
    pub cpu_ticks: u64,
    /// Allocations of the middle processes between the barriers, when counted.
    pub allocations: Option<u64>,
}

impl Sample {
    /// Calls per second.
    pub fn rate(&self) -> f64 {
        self.calls as f64 / self.elapsed.as_secs_f64()
    }

    /// Middle CPU per call, µs.
    pub fn cpu_per_call(&self) -> f64 {
        probe::ticks_to_us(self.cpu_ticks) / self.calls as f64
    }

    /// Middle allocations per call.
    pub fn allocations_per_call(&self) -> Option<f64> {
        Some(self.allocations? as f64 / self.calls as f64)
    }
}

/// What one client thread measured.
struct ClientRun {
    hist: Histogram<u64>,
    calls: u64,
    cpu_ticks: u64,
    allocations: Option<u64>,
}

fn sum(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    Some(a? + b?)
}

fn delta(before: Option<u64>, after: Option<u64>) -> Option<u64> {
    Some(after? - before?)
}

/// One sample of `target` with `clients` clients: `warmup` checked calls each, then the
/// timed `budget`. Errors name the path (`label`).
pub fn sample(
    label: &str,
    target: &dyn Target,
    clients: usize,
    warmup: u64,
    budget: Budget,
) -> Result<Sample, String> {
    let start = Barrier::new(clients + 1);
    let end = Barrier::new(clients + 1);
    let release = Barrier::new(clients + 1);
    let (ready_tx, ready_rx) = mpsc::channel::<()>();
    let middle = target.middle_pids();
    thread::scope(|s| {
        let workers: Vec<_> = (0..clients)
            .map(|_| {
                let (start, end, release, ready) = (&start, &end, &release, ready_tx.clone());
                s.spawn(move || {
                    client_thread(label, target, warmup, budget, [start, end, release], ready)
                })
            })
            .collect();
        drop(ready_tx);
        // Every client connected and warmed up (or failed) before the clock starts.
        for _ in 0..clients {
            let _ = ready_rx.recv();
        }
        let (cpu0, alloc0) = (probe::cpu_ticks(&middle), target.allocations());
        start.wait();
        let began = Instant::now();
        end.wait();
        let elapsed = began.elapsed();
        let (cpu1, alloc1) = (probe::cpu_ticks(&middle), target.allocations());
        release.wait();
        let mut hist = probe::histogram();
        let mut total = Sample {
            p50: 0,
            p99: 0,
            calls: 0,
            elapsed,
            cpu_ticks: cpu1.saturating_sub(cpu0),
            allocations: delta(alloc0, alloc1),
        };
        for w in workers {
            let run = w.join().expect("client thread")?;
            hist.add(&run.hist).expect("histogram bounds");
            total.calls += run.calls;
            total.cpu_ticks += run.cpu_ticks;
            total.allocations = sum(total.allocations, run.allocations);
        }
        total.p50 = hist.value_at_quantile(0.5);
        total.p99 = hist.value_at_quantile(0.99);
        Ok(total)
    })
}

/// One client: connect and warm up, then the timed calls between `start` and `end`, its own
/// processes' CPU and allocations read at those barriers; it disconnects after `release`. It
/// always takes part in the three barriers, also after a failure, so no thread waits forever.
fn client_thread(
    label: &str,
    target: &dyn Target,
    warmup: u64,
    budget: Budget,
    [start, end, release]: [&Barrier; 3],
    ready: mpsc::Sender<()>,
) -> Result<ClientRun, String> {
    let fail = |what: &str, e: &dyn std::fmt::Display| format!("{label}: {what}: {e}");
    let mut id = 0u64;
    let prepared = target.connect().map_err(|e| fail("connect", &e)).and_then(|mut client| {
        for _ in 0..warmup {
            id += 1;
            client.roundtrip(id).map_err(|e| fail("warm-up call", &e))?;
            client.check(id).map_err(|e| fail("warm-up reply", &e))?;
        }
        Ok(client)
    });
    let _ = ready.send(());
    let pids = prepared.as_ref().map(|c| c.pids()).unwrap_or_default();
    let (cpu0, alloc0) =
        (probe::cpu_ticks(&pids), prepared.as_ref().ok().and_then(|c| c.allocations()));
    start.wait();
    let mut hist = probe::histogram();
    let mut calls = 0;
    let timed = prepared.and_then(|mut client| {
        let until = match budget {
            Budget::Time(d) => Some(Instant::now() + d),
            Budget::Calls(_) => None,
        };
        loop {
            match (budget, until) {
                (Budget::Calls(n), _) if calls >= n => break,
                (_, Some(until)) if Instant::now() >= until => break,
                _ => {}
            }
            id += 1;
            let t = Instant::now();
            client.roundtrip(id).map_err(|e| fail("call", &e))?;
            hist.record(t.elapsed().as_nanos() as u64).expect("histogram bounds");
            client.check(id).map_err(|e| fail("reply", &e))?;
            calls += 1;
        }
        Ok(client)
    });
    end.wait();
    let (cpu1, alloc1) =
        (probe::cpu_ticks(&pids), timed.as_ref().ok().and_then(|c| c.allocations()));
    release.wait();
    let client = timed?;
    drop(client);
    Ok(ClientRun {
        hist,
        calls,
        cpu_ticks: cpu1.saturating_sub(cpu0),
        allocations: if pids.is_empty() { Some(0) } else { delta(alloc0, alloc1) },
    })
}
