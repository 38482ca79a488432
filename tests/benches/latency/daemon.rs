//! The measured product: `jfgui-agentd` with one Notepad per document size, at its default
//! log level (as users run it). Its JSON-1 path (client → daemon → Notepad → back, for
//! `actions/execute` of `document.get`), the checked replies the other paths copy, and the
//! daemon's own probes: idle RSS, idle wake-ups, and RSS with 64 apps × 16 clients. The
//! bench runs it twice: on one thread (the default) and with `--worker-threads 2`.

use std::io;
use std::path::{Path, PathBuf};
use std::thread;
use std::time::{Duration, Instant};

use jfgui_tests::serde_json::{self, Value};
use jfgui_tests::{Daemon, Proc, daemon_command, notepad};

use crate::line::{LineConn, Template, UnixClient};
use crate::load::{Client, Target};
use crate::payload::{Size, execute_request};
use crate::probe;

/// What the daemon looks like with one app registered and no client.
#[derive(Debug, Clone)]
pub struct Idle {
    pub rss_kib: u64,
    /// Its anonymous memory (`probe::anon_kib`), the idle goal.
    pub anon_kib: u64,
    /// Context switches of all its threads over `seconds`, counted once it had settled.
    pub wakeups: u64,
    pub seconds: u64,
    /// How long after the app registered the daemon went quiet ([`QUIET`] without a context
    /// switch); `None` when it never did within [`SETTLE_LIMIT`] (the window then starts
    /// there).
    pub settled_after: Option<Duration>,
    /// The threads that woke in the window: (name, context switches).
    pub woken: Vec<(String, u64)>,
}

/// How long the daemon must go without a context switch to count as settled: start-up work
/// (the app's registration, the first log lines, the audit file's first record) is done.
const QUIET: Duration = Duration::from_secs(2);
/// How long to wait for that at most.
const SETTLE_LIMIT: Duration = Duration::from_secs(15);

/// Idle probes of `pid`: waits until it settled (no context switch for [`QUIET`]), then RSS
/// and context switches over `seconds`. No client and no app traffic meanwhile: the bench's
/// other processes start only after this.
fn measure_idle(pid: u32, seconds: u64) -> Idle {
    let start = Instant::now();
    let mut last = probe::thread_switches(pid);
    let mut quiet_since = Instant::now();
    let settled_after = loop {
        thread::sleep(Duration::from_millis(100));
        let now = probe::thread_switches(pid);
        if now != last {
            last = now;
            quiet_since = Instant::now();
        } else if quiet_since.elapsed() >= QUIET {
            break Some(quiet_since.duration_since(start));
        }
        if start.elapsed() >= SETTLE_LIMIT {
            break None;
        }
    };
    let (rss_kib, anon_kib) = (probe::rss_kib(pid), probe::anon_kib(pid));
    let before = probe::thread_switches(pid);
    thread::sleep(Duration::from_secs(seconds));
    let after = probe::thread_switches(pid);
    let woken: Vec<(String, u64)> = after
        .iter()
        .filter_map(|(tid, (name, n))| {
            let was = before.get(tid).map_or(0, |(_, n)| *n);
            (*n > was).then(|| (format!("{name} ({tid})"), n - was))
        })
        .collect();
    let wakeups = woken.iter().map(|(_, n)| n).sum();
    Idle { rss_kib, anon_kib, wakeups, seconds, settled_after, woken }
}

/// The daemon, its Notepads (64 B and 4 KiB documents) and their endpoints.
pub struct Setup {
    pub daemon: Daemon,
    _pads: Vec<Proc>,
    endpoints: Vec<(Size, PathBuf, String)>,
    pub idle: Idle,
}

impl Setup {
    /// Starts the daemon on `rt` with `extra` arguments and the two Notepads; measures the
    /// idle daemon (one app, no client) over `idle_seconds` before the second app starts.
    pub fn start(rt: &Path, extra: &[&str], idle_seconds: u64) -> Setup {
        let args: Vec<&str> = ["--max-clients", "4096"].iter().chain(extra).copied().collect();
        let mut cmd = daemon_command(rt, &args);
        cmd.env_remove("JFGUI_LOG");
        let daemon = Daemon::start_command(rt, cmd);
        let pid = daemon.proc.pid();
        let mut pads = Vec::new();
        let mut endpoints = Vec::new();
        let mut idle = None;
        for size in Size::ALL {
            let name = format!("Notepad {}", size.tag());
            let text = size.text();
            pads.push(notepad(rt, &["--agent-enable", "--name", &name, "--text", &text]));
            let apps = daemon.wait_apps(pads.len());
            let slug = apps
                .iter()
                .find(|a| a["displayName"] == name.as_str())
                .and_then(|a| a["slug"].as_str())
                .unwrap_or_else(|| panic!("{name} not in {apps:?}"))
                .to_string();
            endpoints.push((size, daemon.wait_endpoint(&slug), slug));
            idle.get_or_insert_with(|| measure_idle(pid, idle_seconds));
        }
        let idle = idle.expect("measured with the first app");
        Setup { daemon, _pads: pads, endpoints, idle }
    }

    /// The endpoint socket and slug of the Notepad holding a document of `size`.
    pub fn endpoint(&self, size: Size) -> (&Path, &str) {
        let (_, path, slug) =
            self.endpoints.iter().find(|(s, _, _)| *s == size).expect("one Notepad per size");
        (path, slug)
    }

    /// The daemon's reply line to the JSON-1 call, checked against the result built
    /// independently ([`Size::result`]); the template of every later reply.
    pub fn reply(&self, size: Size) -> Template {
        let (endpoint, _) = self.endpoint(size);
        let request = execute_request();
        let mut conn = LineConn::unix(endpoint).expect("connect to the endpoint");
        conn.exchange(&request, 1).expect("first call");
        let reply: Value = serde_json::from_str(&conn.reply).expect("a JSON reply");
        assert_eq!(
            reply["result"],
            size.json1_result(),
            "document.get of {}: {reply}",
            size.label()
        );
        let line = conn.reply.clone();
        let template =
            Template::new(|id| line.replacen(r#""id":1,"#, &format!(r#""id":{id},"#), 1));
        conn.exchange(&request, 2).expect("second call");
        conn.check(&template, 2).expect("the reply differs only in its id");
        template
    }

    /// The JSON-1 path to the Notepad of `size`.
    pub fn json1(&self, size: Size) -> Json1 {
        Json1 {
            endpoint: self.endpoint(size).0.to_path_buf(),
            request: execute_request(),
            reply: self.reply(size),
            pid: self.daemon.proc.pid(),
        }
    }

    /// RSS (and peak RSS) of the daemon with 64 apps × 16 clients connected, each client
    /// having called once.
    pub fn loaded_rss(&self) -> (u64, u64) {
        let rt = &self.daemon.rt;
        let apps: Vec<Proc> = (0..62)
            .map(|i| notepad(rt, &["--agent-enable", "--name", &format!("Pad {i}")]))
            .collect();
        let listed = self.daemon.wait_apps(64);
        let request = execute_request();
        let mut conns = Vec::new();
        for app in &listed {
            let endpoint = self.daemon.wait_endpoint(app["slug"].as_str().expect("slug"));
            for _ in 0..16 {
                let mut c = LineConn::unix(&endpoint).expect("connect");
                c.send(&request.line(1)).expect("send");
                conns.push(c);
            }
        }
        for c in &mut conns {
            c.read_reply().expect("reply");
            assert!(c.reply.contains(r#""result""#), "{}", c.reply);
        }
        let pid = self.daemon.proc.pid();
        let rss = (probe::rss_kib(pid), jfgui_tests::status_kib(pid, "VmHWM").unwrap_or(0));
        drop(conns);
        drop(apps);
        rss
    }
}

/// Client → daemon → Notepad → back over JSON-1.
pub struct Json1 {
    endpoint: PathBuf,
    request: Template,
    reply: Template,
    pid: u32,
}

impl Target for Json1 {
    fn connect(&self) -> io::Result<Box<dyn Client>> {
        Ok(Box::new(UnixClient::connect(&self.endpoint, &self.request, &self.reply)?))
    }

    fn middle_pids(&self) -> Vec<u32> {
        vec![self.pid]
    }
}
