//! The printed result: one table per client count (medians over the rounds), the rows measured
//! whole (`felt.rs`), then the goal table (each ratio taken within a round, so load from
//! elsewhere on the machine hits both sides alike; the median over the rounds and every round's value), the 2-worker
//! daemon against the one-thread one, then memory and wake-ups.

use std::collections::BTreeMap;

use crate::daemon::Idle;
use crate::load::Sample;
use crate::payload::Size;
use crate::probe::{median, mib};

/// What a row measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Raw,
    JsonRelay,
    /// `dbus-broker` or `dbus-daemon`.
    Bus(&'static str),
    Daemon,
    /// The daemon on a 2-worker runtime (`--worker-threads 2`).
    DaemonPool,
    /// The daemon through the stdio gateway.
    Mcp,
    Rmcp,
    /// A whole MCP session of `jfgui-agent mcp`, from spawn to exit.
    ColdMcp,
    /// The same session of the rmcp no-op server.
    ColdRmcp,
    /// `jfgui-agent read` of the 16 MiB resource.
    Read,
    /// A raw Unix-socket copy of the same bytes.
    RawCopy,
}

impl Kind {
    fn label(self) -> &'static str {
        match self {
            Kind::Raw => "raw relay (2 hops)",
            Kind::JsonRelay => "JSON relay (tokio + serde_json)",
            Kind::Bus(name) => name,
            Kind::Daemon => "jfgui-agentd JSON-1",
            Kind::DaemonPool => "jfgui-agentd JSON-1, 2 workers",
            Kind::Mcp => "jfgui-agentd MCP via gateway (3 hops)",
            Kind::Rmcp => "rmcp no-op tool (1 hop)",
            Kind::ColdMcp => "MCP cold session: jfgui-agent mcp",
            Kind::ColdRmcp => "MCP cold session: rmcp stdio server",
            Kind::Read => "16 MiB: jfgui-agent read",
            Kind::RawCopy => "16 MiB: raw Unix-socket copy",
        }
    }

    /// Whether one call of the row is a whole session or read (`felt.rs`), measured with one
    /// client only.
    pub fn felt(self) -> bool {
        matches!(self, Kind::ColdMcp | Kind::ColdRmcp | Kind::Read | Kind::RawCopy)
    }

    /// What its CPU column counts.
    fn middle(self) -> &'static str {
        match self {
            Kind::Raw | Kind::JsonRelay => "relay",
            Kind::Bus(_) => "bus",
            Kind::Daemon | Kind::DaemonPool => "daemon",
            Kind::Mcp => "gateway + daemon",
            Kind::Rmcp => "server",
            Kind::ColdMcp | Kind::Read => "daemon",
            Kind::ColdRmcp => "-",
            Kind::RawCopy => "copy server",
        }
    }
}

/// A measured row: a path at a size.
#[derive(Debug, Clone, Copy)]
pub struct Row {
    pub kind: Kind,
    pub size: Option<Size>,
}

/// Every sample, by client count and row, in round order.
#[derive(Debug, Default)]
pub struct Results {
    pub rows: Vec<Row>,
    pub samples: BTreeMap<(usize, usize), Vec<Sample>>,
}

/// Memory and wake-up probes.
#[derive(Debug)]
pub struct Probes {
    /// The one-thread daemon with one app and no client, once settled.
    pub idle: Idle,
    /// (name, RSS KiB) of the other middles when idle.
    pub others_idle_rss: Vec<(String, u64)>,
    /// RSS and peak RSS with 64 apps × 16 clients (full mode only).
    pub loaded_rss: Option<(u64, u64)>,
}

fn us(ns: f64) -> String {
    format!("{:.1} µs", ns / 1000.0)
}

fn list(values: &[f64]) -> String {
    values.iter().map(|v| format!("{v:.2}")).collect::<Vec<_>>().join(", ")
}

impl Results {
    fn find(&self, kind: Kind, size: Option<Size>) -> Option<usize> {
        self.rows.iter().position(|r| r.kind == kind && r.size == size)
    }

    fn bus(&self) -> Option<Kind> {
        self.rows.iter().map(|r| r.kind).find(|k| matches!(k, Kind::Bus(_)))
    }

    /// Per round: `metric` of row `row` at `clients`; empty when it is missing.
    fn per_round(
        &self,
        clients: usize,
        row: Option<usize>,
        metric: impl Fn(&Sample) -> f64,
    ) -> Vec<f64> {
        row.and_then(|r| self.samples.get(&(clients, r)))
            .map(|s| s.iter().map(metric).collect())
            .unwrap_or_default()
    }

    /// Per round: `metric(a) / metric(b)` at `clients`; empty when either row is missing.
    fn ratios(
        &self,
        clients: usize,
        a: Option<usize>,
        b: Option<usize>,
        metric: impl Fn(&Sample) -> f64,
    ) -> Vec<f64> {
        let (Some(a), Some(b)) = (a, b) else { return Vec::new() };
        let (Some(sa), Some(sb)) =
            (self.samples.get(&(clients, a)), self.samples.get(&(clients, b)))
        else {
            return Vec::new();
        };
        // A zero denominator (no CPU tick in a short sample) gives no ratio.
        sa.iter()
            .zip(sb)
            .map(|(x, y)| if metric(y) > 0.0 { metric(x) / metric(y) } else { f64::NAN })
            .collect()
    }

    /// The per-client-count tables.
    pub fn print_tables(&self) {
        let counts: Vec<usize> = {
            let mut c: Vec<usize> = self.samples.keys().map(|k| k.0).collect();
            c.dedup();
            c
        };
        for clients in counts {
            println!(
                "\n### {clients} client(s), each one call at a time (medians over the rounds)\n"
            );
            println!(
                "| path | document | p50 | p99 | calls/s | middle CPU/call | middle allocs/call |"
            );
            println!("|---|---|---|---|---|---|---|");
            for (i, row) in self.rows.iter().enumerate() {
                let Some(s) = self.samples.get(&(clients, i)) else { continue };
                if row.kind.felt() {
                    continue;
                }
                let m = |f: &dyn Fn(&Sample) -> f64| median(&s.iter().map(f).collect::<Vec<_>>());
                let allocs = m(&|x| x.allocations_per_call().unwrap_or(f64::NAN));
                println!(
                    "| {} | {} | {} | {} | {:.0} | {:.1} µs ({}) | {} |",
                    row.kind.label(),
                    row.size.map_or("-", Size::label),
                    us(m(&|x| x.p50 as f64)),
                    us(m(&|x| x.p99 as f64)),
                    m(&|x| x.rate()),
                    m(&|x| x.cpu_per_call()),
                    row.kind.middle(),
                    if allocs.is_nan() {
                        "see profile.sh".to_string()
                    } else {
                        format!("{allocs:.1}")
                    },
                );
            }
        }
    }

    /// The rows measured whole: one session or one read per call, one client.
    pub fn print_felt(&self) {
        println!("\n### Measured whole: sessions and reads (1 client, medians over the rounds)\n");
        println!("| path | p50 | p99 | per second | middle CPU each |");
        println!("|---|---|---|---|---|");
        for (i, row) in self.rows.iter().enumerate() {
            let Some(s) = self.samples.get(&(1, i)).filter(|_| row.kind.felt()) else { continue };
            let m = |f: &dyn Fn(&Sample) -> f64| median(&s.iter().map(f).collect::<Vec<_>>());
            let per_second = m(&|x| x.rate());
            let rate = match row.kind {
                Kind::Read | Kind::RawCopy => format!(
                    "{per_second:.1} ({:.0} MiB/s)",
                    per_second * (crate::felt::READ_BYTES >> 20) as f64
                ),
                _ => format!("{per_second:.1}"),
            };
            let cpu = match row.kind.middle() {
                "-" => "-".to_string(),
                middle => format!("{:.0} µs ({middle})", m(&|x| x.cpu_per_call())),
            };
            println!(
                "| {} | {} | {} | {rate} | {cpu} |",
                row.kind.label(),
                us(m(&|x| x.p50 as f64)),
                us(m(&|x| x.p99 as f64)),
            );
        }
    }

    /// The goal table: every ratio, met or not.
    pub fn print_goals(&self, probes: &Probes) {
        println!("\n### Goals (ratios within a round; median, then each round)\n");
        println!("| goal | target | median | per round | met |");
        println!("|---|---|---|---|---|");
        let line =
            |goal: String, target: &str, values: Vec<f64>, ok: &dyn Fn(f64) -> Option<bool>| {
                let med = median(&values);
                if med.is_nan() {
                    println!("| {goal} | {target} | n/a | not measured | |");
                    return;
                }
                let met = ok(med).map_or("", yes);
                println!("| {goal} | {target} | {med:.2} | {} | {met} |", list(&values));
            };
        let p50 = |s: &Sample| s.p50 as f64;
        let bus = self.bus();
        let bus_name = match bus {
            Some(Kind::Bus(name)) => name,
            _ => "dbus-broker",
        };
        for size in Size::ALL {
            let daemon = self.find(Kind::Daemon, Some(size));
            let relay = self.find(Kind::JsonRelay, Some(size));
            let bus_row = bus.and_then(|k| self.find(k, Some(size)));
            let raw = self.find(Kind::Raw, Some(size));
            let l = size.label();
            line(
                format!("{l}: p50 daemon ÷ JSON relay"),
                "≤ 1.2",
                self.ratios(1, daemon, relay, p50),
                &|v| Some(v <= 1.2),
            );
            line(
                format!("{l}: p50 daemon ÷ {bus_name}"),
                "≤ 0.8",
                self.ratios(1, daemon, bus_row, p50),
                &|v| Some(v <= 0.8),
            );
            line(
                format!("{l}: p50 daemon ÷ raw relay (floor)"),
                "-",
                self.ratios(1, daemon, raw, p50),
                &|_| None,
            );
            line(
                format!("{l}: daemon p99 ÷ own p50"),
                "≤ 3",
                self.per_round(1, daemon, |s| s.p99 as f64 / s.p50 as f64),
                &|v| Some(v <= 3.0),
            );
            line(
                format!("{l}: CPU/call daemon ÷ {bus_name}"),
                "-",
                self.ratios(1, daemon, bus_row, Sample::cpu_per_call),
                &|_| None,
            );
            line(
                format!("{l}: CPU/call daemon ÷ JSON relay's middle"),
                "≤ 1.2",
                self.ratios(1, daemon, relay, Sample::cpu_per_call),
                &|v| Some(v <= 1.2),
            );
        }
        let (daemon, relay) =
            (self.find(Kind::Daemon, Some(Size::B64)), self.find(Kind::JsonRelay, Some(Size::B64)));
        let bus_row = bus.and_then(|k| self.find(k, Some(Size::B64)));
        line(
            "16 clients, 64 B: calls/s daemon ÷ JSON relay".into(),
            "≥ 1.0",
            self.ratios(16, daemon, relay, Sample::rate),
            &|v| Some(v >= 1.0),
        );
        line(
            format!("16 clients, 64 B: calls/s daemon ÷ {bus_name}"),
            "≥ 1.1",
            self.ratios(16, daemon, bus_row, Sample::rate),
            &|v| Some(v >= 1.1),
        );
        line(
            "MCP p50: gateway (3 hops) ÷ rmcp (1 hop)".into(),
            "≤ 3",
            self.ratios(1, self.find(Kind::Mcp, Some(Size::B64)), self.find(Kind::Rmcp, None), p50),
            &|v| Some(v <= 3.0),
        );
        line(
            "MCP cold session p50: jfgui-agent mcp ÷ rmcp stdio server".into(),
            "≤ 1.5",
            self.ratios(1, self.find(Kind::ColdMcp, None), self.find(Kind::ColdRmcp, None), p50),
            &|v| Some(v <= 1.5),
        );
        line(
            "16 MiB read, bytes/s: jfgui-agent read ÷ raw Unix-socket copy".into(),
            "≥ 0.5",
            self.ratios(
                1,
                self.find(Kind::Read, None),
                self.find(Kind::RawCopy, None),
                Sample::rate,
            ),
            &|v| Some(v >= 0.5),
        );
        let anon = probes.idle.anon_kib;
        println!(
            "| daemon idle anonymous memory (1 app, no client; smaps_rollup) | ≤ 1 MiB | {anon} kB | | {} |",
            yes(anon <= 1024)
        );
        println!(
            "| daemon idle wake-ups (context switches over {} s, once settled) | 0 | {} | | {} |",
            probes.idle.seconds,
            probes.idle.wakeups,
            yes(probes.idle.wakeups == 0)
        );
    }
}

impl Results {
    /// The multi-core comparison: the 2-worker daemon ÷ the one-thread daemon at every client
    /// count and size (the default is chosen with these figures, docs/PERFORMANCE.md).
    pub fn print_pool(&self) {
        println!("\n### 2 workers ÷ 1 thread (ratios within a round; median, then each round)\n");
        println!("| clients | document | calls/s | p50 | p99 | CPU/call |");
        println!("|---|---|---|---|---|---|");
        let counts: Vec<usize> = {
            let mut c: Vec<usize> = self.samples.keys().map(|k| k.0).collect();
            c.dedup();
            c
        };
        for clients in counts {
            for size in Size::ALL {
                let pool = self.find(Kind::DaemonPool, Some(size));
                let one = self.find(Kind::Daemon, Some(size));
                let cell = |metric: &dyn Fn(&Sample) -> f64| {
                    let values = self.ratios(clients, pool, one, metric);
                    format!("{:.2} ({})", median(&values), list(&values))
                };
                println!(
                    "| {clients} | {} | {} | {} | {} | {} |",
                    size.label(),
                    cell(&Sample::rate),
                    cell(&|s| s.p50 as f64),
                    cell(&|s| s.p99 as f64),
                    cell(&Sample::cpu_per_call),
                );
            }
        }
    }
}

fn yes(ok: bool) -> &'static str {
    if ok { "yes" } else { "no" }
}

impl Probes {
    /// Memory of every middle.
    pub fn print(&self) {
        println!("\n### Memory\n");
        println!("| process | RSS |");
        println!("|---|---|");
        println!(
            "| jfgui-agentd idle (1 app, no client) | {} ({} kB anonymous) |",
            mib(self.idle.rss_kib),
            self.idle.anon_kib
        );
        for (name, kib) in &self.others_idle_rss {
            println!("| {name} idle | {} |", mib(*kib));
        }
        if let Some((rss, hwm)) = self.loaded_rss {
            println!("| jfgui-agentd with 64 apps × 16 clients | {} |", mib(rss));
            println!("| jfgui-agentd peak (VmHWM) over the whole run | {} |", mib(hwm));
        }
        let idle = &self.idle;
        println!("\n### Idle wake-ups\n");
        match idle.settled_after {
            Some(after) => println!(
                "The daemon (1 app, no client) settled {:.1} s after the app registered (no context switch for 2 s); counted over the next {} s:",
                after.as_secs_f64(),
                idle.seconds
            ),
            None => println!(
                "The daemon (1 app, no client) never went 2 s without a context switch within 15 s of the app registering; counted over the next {} s:",
                idle.seconds
            ),
        }
        println!("{} context switches", idle.wakeups);
        for (thread, n) in &idle.woken {
            println!("- thread {thread}: {n}");
        }
    }
}
