//! The latency bench: the daemon's call path beside the paths it is held to, in one run,
//! interleaved, every reply checked exactly.
//!
//! ```text
//! cargo bench -p jfgui-tests --features bench --bench latency              # the full comparison
//! cargo test -p jfgui-tests --features bench --bench latency -- --quick    # CI: every path answers
//! ```
//!
//! Paths (client → middle → server → back unless said; `document.get` of a 64 B and of a
//! 4 KiB document, the relays and D-Bus answering the same bytes):
//!
//! - **raw relay** (`raw.rs`): a line-copying relay, the floor of any relay;
//! - **JSON relay** (`json_relay.rs`): tokio + serde_json, parsing and re-encoding every line
//!   and correlating ids, the baseline the daemon's middle hop is held to;
//! - **dbus-broker** (`dbus.rs`): zbus client and service on a private bus (dbus-daemon where
//!   dbus-broker is not installed; skipped with a message without either);
//! - **jfgui-agentd JSON-1** (`daemon.rs`): `actions/execute` through the daemon to Notepad,
//!   on one thread (the default) and, as a second daemon, on a 2-worker runtime
//!   (`--worker-threads 2`), for the multi-core comparison;
//! - **jfgui-agentd MCP** (`mcp.rs`): `tools/call` of `jfgui_actions_execute` through
//!   `jfgui-agent stdio SLUG --protocol mcp` (3 hops), beside **rmcp** (`rmcp_noop.rs`): an
//!   rmcp stdio server answering a no-op tool directly (1 hop), the MCP baseline.
//!
//! With 1, 4 and 16 clients (each one connection, one call at a time): p50/p99 latency, calls/s,
//! CPU per call of the middle processes (`/proc/PID/stat`), allocations per call of the
//! bench's own middles (`count_alloc.rs`), then the ratios of the goals, each taken within a
//! round and reported as the median over the rounds with every round's value; the 2-worker
//! daemon against the one-thread one at every client count; idle RSS and idle wake-ups of the
//! daemon (counted once it has settled, by thread); RSS with 64 apps × 16 clients.
//!
//! Two more pairs, with one client, where one "call" is a whole thing users feel (`felt.rs`, on
//! a third daemon so the probes above stay as they were): an MCP cold session (`jfgui-agent
//! mcp` started, `initialize`, `tools/list`, one call, EOF) beside an rmcp stdio server's same
//! session, and `jfgui-agent read` of a 16 MiB resource beside a raw Unix-socket copy of the
//! same bytes.
//!
//! `JFGUI_BENCH_SECONDS` (default 3) is the measured time per path and client count, split
//! into `JFGUI_BENCH_ROUNDS` (default 3) rounds; within a round the paths take turns (in a
//! rotated order), so load from other processes hits them alike. `JFGUI_BENCH_CLIENTS` (e.g.
//! `16` or `1,16`; default `1,4,16`) picks the client counts measured; a goal whose count was
//! left out shows no value. `--quick` (or
//! `JFGUI_BENCH_QUICK=1`) runs each path once with one client and a handful of calls and
//! asserts only that every reply was exactly right; nothing about time.

mod count_alloc;
mod daemon;
mod dbus;
mod felt;
mod json_relay;
mod line;
mod load;
mod mcp;
mod middle;
mod payload;
mod probe;
mod raw;
mod report;
mod rmcp_noop;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use jfgui_tests::serde_json;
use jfgui_tests::{Daemon, TempDir, TestApp, agent, blob, daemon_command, notepad};

use crate::felt::{READ_BYTES, Server};
use crate::load::{Budget, Target};
use crate::payload::{Size, execute_request};
use crate::report::{Kind, Probes, Results, Row};

#[global_allocator]
static ALLOCATOR: count_alloc::Counting = count_alloc::Counting;

/// How much to measure.
#[derive(Debug)]
struct Plan {
    quick: bool,
    clients: Vec<usize>,
    rounds: usize,
    warmup: u64,
    budget: Budget,
    /// Warm-up and budget of the rows measured whole (`felt.rs`).
    felt_warmup: u64,
    felt_budget: Budget,
    idle_seconds: u64,
}

impl Plan {
    fn from_env(args: &[String]) -> Plan {
        let var = |name: &str| std::env::var(name).ok();
        let quick =
            args.iter().any(|a| a == "--quick") || var("JFGUI_BENCH_QUICK").as_deref() == Some("1");
        if quick {
            return Plan {
                quick,
                clients: vec![1],
                rounds: 1,
                warmup: 2,
                budget: Budget::Calls(20),
                felt_warmup: 1,
                felt_budget: Budget::Calls(2),
                idle_seconds: 1,
            };
        }
        let number =
            |name: &str, default: u64| var(name).and_then(|s| s.parse().ok()).unwrap_or(default);
        let rounds = number("JFGUI_BENCH_ROUNDS", 3).max(1) as usize;
        let seconds =
            Duration::from_secs_f64(number("JFGUI_BENCH_SECONDS", 3) as f64 / rounds as f64);
        let clients = var("JFGUI_BENCH_CLIENTS").map_or_else(
            || vec![1, 4, 16],
            |list| {
                list.split(',')
                    .map(|n| match n.trim().parse() {
                        Ok(n) if n > 0 => n,
                        _ => panic!("JFGUI_BENCH_CLIENTS={list}: a comma-separated list of counts"),
                    })
                    .collect()
            },
        );
        Plan {
            quick,
            clients,
            rounds,
            warmup: 200,
            budget: Budget::Time(seconds),
            felt_warmup: 3,
            felt_budget: Budget::Time(seconds),
            idle_seconds: 5,
        }
    }
}

/// This binary as a middle process (`--middle KIND CTL [LISTEN UPSTREAM]`, see `middle.rs`):
/// serves until killed (relays, the copy server) or until stdin closes (rmcp).
fn run_middle(args: &[String]) {
    let [kind, ctl, rest @ ..] = args else { panic!("usage: {} KIND CTL [ARGS]", middle::FLAG) };
    count_alloc::serve(Path::new(ctl));
    match (kind.as_str(), rest) {
        ("raw", [listen, upstream]) => raw::relay(Path::new(listen), Path::new(upstream)),
        ("json", [listen, upstream]) => json_relay::relay(Path::new(listen), Path::new(upstream)),
        ("rmcp", []) => rmcp_noop::serve(),
        ("copy", [listen, len]) => felt::copy_server(Path::new(listen), len),
        _ => panic!("unknown middle {kind} {rest:?}"),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().is_some_and(|a| a == middle::FLAG) {
        run_middle(&args[1..]);
        return;
    }
    if args.iter().any(|a| a == "--list") {
        return; // `cargo test --benches` asks for a listing; there is nothing to list.
    }
    let plan = Plan::from_env(&args);
    let load_before = probe::load_average();
    let tmp = TempDir::new();
    let dir = tmp.path();
    let setup = daemon::Setup::start(&tmp.rt(), &[], plan.idle_seconds);
    let pool_tmp = TempDir::new();
    let pool = daemon::Setup::start(&pool_tmp.rt(), &["--worker-threads", "2"], 1);
    let request = execute_request();

    let mut rows: Vec<(Row, Box<dyn Target>)> = Vec::new();
    let mut probes = Probes {
        idle: setup.idle.clone(),
        others_idle_rss: vec![("jfgui-agentd --worker-threads 2".into(), pool.idle.rss_kib)],
        loaded_rss: None,
    };
    let results: Vec<(Size, String)> = Size::ALL
        .iter()
        .map(|&s| (s, serde_json::to_string(&s.json1_result()).expect("encode")))
        .collect();
    let bus = dbus::Bus::start(dir, &results);
    for size in Size::ALL {
        let reply = setup.reply(size).line(1);
        let tag = size.tag();
        let raw = raw::Raw::start(dir, tag, request.clone(), reply);
        rows.push((Row { kind: Kind::Raw, size: Some(size) }, Box::new(raw)));
        let relay = json_relay::JsonRelay::start(dir, tag, request.clone(), size.json1_result());
        if size == Size::B64 {
            probes.others_idle_rss.push(("JSON relay".into(), probe::rss_kib(relay.pid())));
        }
        rows.push((Row { kind: Kind::JsonRelay, size: Some(size) }, Box::new(relay)));
        if let Some(bus) = &bus {
            let (_, result) = results.iter().find(|(s, _)| *s == size).expect("every size");
            let path = bus.path(size, result.clone());
            rows.push((Row { kind: Kind::Bus(bus.name), size: Some(size) }, Box::new(path)));
        }
        rows.push((Row { kind: Kind::Daemon, size: Some(size) }, Box::new(setup.json1(size))));
        rows.push((Row { kind: Kind::DaemonPool, size: Some(size) }, Box::new(pool.json1(size))));
    }
    if let Some(bus) = &bus {
        probes
            .others_idle_rss
            .push((format!("{} (2 services connected)", bus.name), probe::rss_kib(bus.router())));
    }
    let (_, slug) = setup.endpoint(Size::B64);
    let gateway = mcp::Gateway {
        agent: agent(),
        rt: setup.daemon.rt.clone(),
        slug: slug.to_string(),
        size: Size::B64,
        daemon_pid: setup.daemon.proc.pid(),
        logs: dir.to_path_buf(),
    };
    rows.push((Row { kind: Kind::Mcp, size: Some(Size::B64) }, Box::new(gateway)));
    rows.push((
        Row { kind: Kind::Rmcp, size: None },
        Box::new(rmcp_noop::Rmcp { dir: dir.to_path_buf() }),
    ));

    let felt_tmp = TempDir::new();
    let felt_rt = felt_tmp.rt();
    let mut felt_cmd = daemon_command(&felt_rt, &[]);
    felt_cmd.env_remove("JFGUI_LOG");
    let felt_daemon = Daemon::start_command(&felt_rt, felt_cmd);
    let pad_name = "Notepad cold";
    let _pad =
        notepad(&felt_rt, &["--agent-enable", "--name", pad_name, "--text", &Size::B64.text()]);
    let _blob_app =
        TestApp::start(&felt_rt, felt_tmp.path(), "Blob", &["--blob", &READ_BYTES.to_string()]);
    let felt_apps = felt_daemon.wait_apps(2);
    let slug_of = |name: &str| {
        let slug = felt_apps
            .iter()
            .find(|a| a["displayName"] == name)
            .and_then(|a| a["slug"].as_str())
            .unwrap_or_else(|| panic!("{name} not in {felt_apps:?}"))
            .to_string();
        felt_daemon.wait_endpoint(&slug);
        slug
    };
    let (pad_slug, blob_slug) = (slug_of(pad_name), slug_of("Blob"));
    let felt_pid = felt_daemon.proc.pid();
    let gateway = Server::Gateway { agent: agent(), rt: felt_rt.clone(), app: pad_slug };
    let cold = |server, middle| felt::ColdMcp { server, dir: dir.to_path_buf(), middle };
    rows.push((Row { kind: Kind::ColdMcp, size: None }, Box::new(cold(gateway, vec![felt_pid]))));
    rows.push((Row { kind: Kind::ColdRmcp, size: None }, Box::new(cold(Server::Rmcp, vec![]))));
    let expected = Arc::new(blob(READ_BYTES));
    let read = felt::AgentRead {
        agent: agent(),
        rt: felt_rt.clone(),
        app: blob_slug,
        expected: Arc::clone(&expected),
        dir: dir.to_path_buf(),
        daemon_pid: felt_pid,
    };
    rows.push((Row { kind: Kind::Read, size: None }, Box::new(read)));
    rows.push((
        Row { kind: Kind::RawCopy, size: None },
        Box::new(felt::RawCopy::start(dir, expected)),
    ));

    let mut out = Results { rows: rows.iter().map(|(r, _)| *r).collect(), ..Results::default() };
    for &clients in &plan.clients {
        for round in 0..plan.rounds {
            for turn in 0..rows.len() {
                let i = (turn + round) % rows.len();
                let (row, target) = &rows[i];
                let (warmup, budget) = match row.kind.felt() {
                    false => (plan.warmup, plan.budget),
                    true if clients == 1 => (plan.felt_warmup, plan.felt_budget),
                    true => continue,
                };
                let label = format!("{} {}", row_label(row), clients);
                let sample = load::sample(&label, target.as_ref(), clients, warmup, budget)
                    .unwrap_or_else(|e| panic!("{e}"));
                out.samples.entry((clients, i)).or_default().push(sample);
            }
        }
    }
    if !plan.quick {
        probes.loaded_rss = Some(setup.loaded_rss());
    }

    println!(
        "\n## jfgui-agentd latency bench{}\n",
        if plan.quick { " (--quick: correctness only)" } else { "" }
    );
    println!(
        "{} CPU(s) ({}), load average {load_before} before and {} after; {} round(s); {}",
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        cpu_model(),
        probe::load_average(),
        plan.rounds,
        match plan.budget {
            Budget::Calls(n) => format!("{n} calls per client"),
            Budget::Time(d) => format!("{:.1} s per round", d.as_secs_f64()),
        },
    );
    out.print_tables();
    out.print_felt();
    if !plan.quick {
        out.print_goals(&probes);
        out.print_pool();
    }
    probes.print();
    let paths = out.rows.len();
    let checked: u64 = out.samples.values().flatten().map(|s| s.calls).sum();
    println!("\n{paths} paths, {checked} timed calls, every reply checked: all correct");
}

fn row_label(row: &Row) -> String {
    format!("{:?} {}", row.kind, row.size.map_or("", Size::label))
}

/// The CPU model, for the header.
fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .unwrap_or_default()
        .lines()
        .find_map(|l| {
            l.strip_prefix("model name")?.split_once(':').map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into())
}
