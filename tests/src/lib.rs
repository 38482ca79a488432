//! Helpers for the cross-process suites: locate (and build) the real binaries,
//! isolated runtime dirs, a daemon/app process handle that never outlives its test, a
//! watchdog, raw JSON-RPC line clients, `/proc` resource probes, the cross-UID helper, and a
//! terminal that shows what a person running a command sees (`terminal`).
//!
//! **Binaries.** `CARGO_BIN_EXE_*` only covers a package's own bins, so [`bin`] runs
//! `cargo build -p jfgui-daemon -p jfgui-example-notepad -p jfgui-example-sketch -p jfgui-agent -p jfgui-tests -p jfgui-host-capi --bins --lib` once
//! per test process (a no-op when they are fresh; `--lib` gives `libjfgui_host.so` for the C
//! example) into the same target dir as the running test, then returns
//! `target/<profile>/NAME`. `cargo test --workspace` therefore always runs the suites against
//! binaries built from the current sources. Set `JFGUI_TEST_BIN_DIR` to test prebuilt binaries
//! instead (nothing is built then; the dir must hold the binaries the suites start, among them
//! `jfgui-agentd`, `jfgui-agent`, `jfgui-notepad`, `jfgui-testapp`, `jfgui-capi-shim` and
//! `libjfgui_host.so`).

use std::fs;
use std::io::{self, BufRead, BufReader, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock, mpsc};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

pub mod bridge;
pub mod cli;
pub mod consent;
pub mod imports;
pub mod terminal;

pub use serde_json;

/// Generous bound for anything that should take milliseconds (CI machines are shared).
pub const PATIENCE: Duration = Duration::from_secs(20);

// ---------------------------------------------------------------------------------------------
// Binaries

/// The directory holding the built binaries (building them first, once).
pub fn bin_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        if let Some(dir) = std::env::var_os("JFGUI_TEST_BIN_DIR") {
            return PathBuf::from(dir);
        }
        let exe = std::env::current_exe().expect("test executable path");
        // target/<profile>/deps/<suite>-<hash>
        let profile_dir =
            exe.parent().and_then(Path::parent).expect("target/<profile>/deps").to_path_buf();
        let target_dir = profile_dir.parent().expect("target dir").to_path_buf();
        let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("workspace root");
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let mut cmd = Command::new(cargo);
        cmd.current_dir(workspace)
            .args([
                "build",
                "--quiet",
                "--bins",
                "--lib",
                "-p",
                "jfgui-daemon",
                "-p",
                "jfgui-example-notepad",
                "-p",
                "jfgui-example-sketch",
                "-p",
                "jfgui-agent",
                "-p",
                "jfgui-tests",
                // libjfgui_host.so / .a for the C example (the `capi` suite builds it).
                "-p",
                "jfgui-host-capi",
                "--target-dir",
            ])
            .arg(&target_dir);
        if profile_dir.file_name().is_some_and(|n| n == "release") {
            cmd.arg("--release");
        }
        let status = cmd.status().expect("run cargo build for the suite's binaries");
        assert!(status.success(), "cargo build of the binaries failed: {status}");
        profile_dir
    })
}

/// The path of the built binary `name` (e.g. `jfgui-agentd`).
pub fn bin(name: &str) -> PathBuf {
    let path = bin_dir().join(name);
    assert!(path.is_file(), "{} is missing", path.display());
    path
}

/// The daemon binary.
pub fn agentd() -> PathBuf {
    bin("jfgui-agentd")
}

/// The CLI binary.
pub fn agent() -> PathBuf {
    bin("jfgui-agent")
}

/// `len` bytes that every byte value occurs in and no two runs differ in (a xorshift
/// sequence): the content of the test app's `--blob` resource, so a test can check a
/// download byte for byte.
pub fn blob(len: usize) -> Vec<u8> {
    let mut x: u32 = 0x9E37_79B9;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            (x >> 24) as u8
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Temporary directories and the watchdog

/// A fresh directory under the system temp dir (short path, so socket paths stay far from the
/// `sun_path` limit), removed on drop.
#[derive(Debug)]
pub struct TempDir(PathBuf);

impl TempDir {
    /// Creates `/tmp/jft-PID-N`, mode 0755.
    pub fn new() -> TempDir {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!("jft-{}-{n}", std::process::id()));
        let _ = fs::remove_dir_all(&path);
        fs::create_dir(&path).expect("create temp dir");
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).expect("chmod temp dir");
        TempDir(path)
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.0
    }

    /// `DIR/rt`, the usual (not yet existing) runtime dir.
    pub fn rt(&self) -> PathBuf {
        self.0.join("rt")
    }
}

impl Default for TempDir {
    fn default() -> Self {
        TempDir::new()
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

fn children() -> &'static Mutex<Vec<u32>> {
    static CHILDREN: OnceLock<Mutex<Vec<u32>>> = OnceLock::new();
    CHILDREN.get_or_init(|| Mutex::new(Vec::new()))
}

fn track(pid: u32) {
    children().lock().unwrap_or_else(|e| e.into_inner()).push(pid);
}

fn untrack(pid: u32) {
    children().lock().unwrap_or_else(|e| e.into_inner()).retain(|p| *p != pid);
}

/// Aborts the whole test process (after killing every child it started) if dropped later
/// than `limit` after arming, so no test can hang CI.
#[derive(Debug)]
pub struct Watchdog(Option<mpsc::Sender<()>>);

impl Watchdog {
    /// Arms the watchdog for the current test, once the binaries are built: the one-time
    /// `cargo build` of [`bin_dir`] (minutes on a cold cache: the GUI example's dependencies)
    /// is not the test's time, and counting it aborted whole suite runs.
    pub fn arm(limit: Duration) -> Watchdog {
        bin_dir();
        let name = thread::current().name().unwrap_or("test").to_string();
        let (tx, rx) = mpsc::channel::<()>();
        thread::spawn(move || {
            if let Err(mpsc::RecvTimeoutError::Timeout) = rx.recv_timeout(limit) {
                // Straight to the process's stderr: `eprintln!` in a thread spawned by a test
                // goes into the test's captured output, which the abort throws away.
                let _ = writeln!(
                    std::io::stderr(),
                    "WATCHDOG: {name} ran longer than {limit:?}; killing children and aborting"
                );
                for pid in children().lock().unwrap_or_else(|e| e.into_inner()).iter() {
                    let _ = Command::new("kill").args(["-KILL", &pid.to_string()]).status();
                }
                std::process::abort();
            }
        });
        Watchdog(Some(tx))
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        if let Some(tx) = self.0.take() {
            let _ = tx.send(());
        }
    }
}

/// Polls `cond` every 10 ms until it holds (true) or `limit` passes (false).
pub fn wait_until(limit: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let end = Instant::now() + limit;
    loop {
        if cond() {
            return true;
        }
        if Instant::now() >= end {
            return false;
        }
        thread::sleep(Duration::from_millis(10));
    }
}

// ---------------------------------------------------------------------------------------------
// Processes

/// A child process killed (SIGKILL) and reaped on drop; stderr goes to a file for assertions.
#[derive(Debug)]
pub struct Proc {
    child: Child,
    /// The stderr capture file; `None` when stderr went elsewhere ([`Proc::spawn_with_stderr`]).
    stderr: Option<PathBuf>,
    exited: Option<ExitStatus>,
}

impl Proc {
    /// Spawns `cmd` with stdin closed, stdout discarded and stderr captured in `stderr`.
    pub fn spawn(mut cmd: Command, stderr: PathBuf) -> Proc {
        cmd.stdout(Stdio::null());
        Proc::spawn_keep_stdout(cmd, stderr)
    }

    /// As [`Proc::spawn`], with the stdout `cmd` already has (e.g. a file to check later).
    pub fn spawn_keep_stdout(cmd: Command, stderr: PathBuf) -> Proc {
        Proc::spawn_with_stdin(cmd, stderr, Stdio::null())
    }

    /// As [`Proc::spawn`], with standard input piped: the caller writes commands to it.
    pub fn spawn_with_input(mut cmd: Command, stderr: PathBuf) -> (Proc, std::process::ChildStdin) {
        cmd.stdout(Stdio::null());
        let mut proc = Proc::spawn_with_stdin(cmd, stderr, Stdio::piped());
        let input = proc.child.stdin.take().expect("piped stdin");
        (proc, input)
    }

    /// As [`Proc::spawn`], with stderr going to `stderr` (e.g. a pipe the test holds);
    /// [`Proc::stderr`] is then empty.
    pub fn spawn_with_stderr(mut cmd: Command, stderr: Stdio) -> Proc {
        cmd.stdout(Stdio::null());
        Proc::start(cmd, Stdio::null(), stderr)
    }

    fn spawn_with_stdin(cmd: Command, stderr: PathBuf, stdin: Stdio) -> Proc {
        let log = fs::File::create(&stderr).expect("stderr capture file");
        let mut proc = Proc::start(cmd, stdin, log.into());
        proc.stderr = Some(stderr);
        proc
    }

    pub(crate) fn start(mut cmd: Command, stdin: Stdio, stderr: Stdio) -> Proc {
        cmd.stdin(stdin).stderr(stderr);
        // A binary a test just copied can be briefly busy: another test thread's fork may still
        // hold the copy's write descriptor until that child execs. The exec is retried then.
        let mut tries = 0;
        let child = loop {
            match cmd.spawn() {
                Err(e) if e.raw_os_error() == Some(libc::ETXTBSY) && tries < 50 => {
                    tries += 1;
                    std::thread::sleep(Duration::from_millis(20));
                }
                spawned => break spawned.unwrap_or_else(|e| panic!("spawn {cmd:?}: {e}")),
            }
        };
        track(child.id());
        Proc { child, stderr: None, exited: None }
    }

    /// The pid.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// What the process wrote to stderr so far.
    pub fn stderr(&self) -> String {
        self.stderr.as_ref().and_then(|path| fs::read_to_string(path).ok()).unwrap_or_default()
    }

    /// Whether `needle` shows up in stderr within [`PATIENCE`]. For a live daemon: it writes
    /// its log from a background thread, so a line may land a moment after the answer to
    /// the call that caused it.
    pub fn wait_stderr(&self, needle: &str) -> bool {
        wait_until(PATIENCE, || self.stderr().contains(needle))
    }

    /// Sends `signal` (e.g. "TERM", "KILL").
    pub fn signal(&self, signal: &str) {
        let status =
            Command::new("kill").arg(format!("-{signal}")).arg(self.pid().to_string()).status();
        assert!(status.is_ok_and(|s| s.success()), "kill -{signal} {}", self.pid());
    }

    /// The exit status if it exited by now.
    pub fn try_status(&mut self) -> Option<ExitStatus> {
        if self.exited.is_none() {
            self.exited = self.child.try_wait().expect("try_wait");
        }
        self.exited
    }

    /// Waits up to `limit` for the process to exit.
    pub fn wait_exit(&mut self, limit: Duration) -> Option<ExitStatus> {
        wait_until(limit, || self.try_status().is_some());
        self.exited
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        if self.try_status().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
        untrack(self.child.id());
    }
}

/// The audit log directory the daemon and CLI of runtime dir `rt` use in tests (`RT.audit`
/// beside it), so no test writes the user's own log.
pub fn audit_dir(rt: &Path) -> PathBuf {
    let mut name = rt.file_name().unwrap_or_default().to_os_string();
    name.push(".audit");
    rt.with_file_name(name)
}

/// The data dir (`XDG_DATA_HOME`) of the daemon, CLI and apps of runtime dir `rt`: `RT.data`
/// beside it, so the launch files a test writes (`jfgui-agent/apps/`) are its own and the
/// user's are never read.
pub fn data_dir(rt: &Path) -> PathBuf {
    let mut name = rt.file_name().unwrap_or_default().to_os_string();
    name.push(".data");
    rt.with_file_name(name)
}

/// A daemon command for runtime dir `rt` (through `JFGUI_RUNTIME_DIR`, with `XDG_RUNTIME_DIR`
/// removed so nothing leaks in from the environment; its audit log in [`audit_dir`], its
/// launch files under [`data_dir`]).
pub fn daemon_command(rt: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(agentd());
    cmd.env("JFGUI_RUNTIME_DIR", rt)
        .env_remove("XDG_RUNTIME_DIR")
        .env("XDG_DATA_HOME", data_dir(rt))
        .env("JFGUI_AUDIT_DIR", audit_dir(rt))
        .env("JFGUI_LOG", "debug")
        .args(args);
    cmd
}

/// A daemon that accepts on `agentd.sock`.
#[derive(Debug)]
pub struct Daemon {
    /// The process.
    pub proc: Proc,
    /// Its runtime dir.
    pub rt: PathBuf,
}

impl Daemon {
    /// Starts `jfgui-agentd` on `rt` (log in `rt`'s parent) and waits until it answers
    /// `daemon/status`. Panics with the daemon's log if it exits or never gets ready.
    pub fn start(rt: &Path, args: &[&str]) -> Daemon {
        Daemon::start_command(rt, daemon_command(rt, args))
    }

    /// As [`Daemon::start`], for a prepared command.
    pub fn start_command(rt: &Path, cmd: Command) -> Daemon {
        Daemon::start_logged(rt, cmd, rt.with_file_name(format!("agentd-{}.log", unique())))
    }

    /// As [`Daemon::start_command`], with the log in `log` (for a runtime dir whose parent is
    /// not the test's, like `/tmp/jfgui-agent-UID`).
    pub fn start_logged(rt: &Path, cmd: Command, log: PathBuf) -> Daemon {
        let mut proc = Proc::spawn(cmd, log);
        let control = rt.join("agentd.sock");
        // An answered `daemon/status`, not a mere connect: `agentd.sock` accepts connections
        // as soon as it is bound, before `host.sock` is, while the accept loops (and so the
        // answer) start only once both listeners exist.
        let ready = wait_until(PATIENCE, || {
            proc.try_status().is_some()
                || rpc(&control, "daemon/status", json!({}))
                    .is_ok_and(|v| v.get("result").is_some())
        });
        if !ready || proc.try_status().is_some() {
            panic!(
                "daemon did not get ready (status {:?}); its log:\n{}",
                proc.try_status(),
                proc.stderr()
            );
        }
        Daemon { proc, rt: rt.to_path_buf() }
    }

    /// `agentd.sock`.
    pub fn control(&self) -> PathBuf {
        self.rt.join("agentd.sock")
    }

    /// `host.sock`.
    pub fn host(&self) -> PathBuf {
        self.rt.join("host.sock")
    }

    /// `daemon/status` result (panics with the log if the daemon does not answer).
    pub fn status(&self) -> Value {
        match rpc(&self.control(), "daemon/status", json!({})) {
            Ok(v) if v.get("result").is_some() => v["result"].clone(),
            other => panic!("daemon/status failed: {other:?}; daemon log:\n{}", self.proc.stderr()),
        }
    }

    /// `apps/list`, every page (following `nextCursor`) → the `apps` array.
    pub fn apps(&self) -> Vec<Value> {
        let mut apps = Vec::new();
        let mut params = json!({"limit": 100});
        loop {
            let v = match rpc(&self.control(), "apps/list", params.clone()) {
                Ok(v) => v,
                Err(e) => panic!("apps/list failed: {e}; daemon log:\n{}", self.proc.stderr()),
            };
            let page = v["result"]["apps"].as_array().unwrap_or_else(|| panic!("apps/list: {v}"));
            apps.extend(page.iter().cloned());
            match v["result"]["nextCursor"].as_str() {
                Some(next) => params["cursor"] = next.into(),
                None => return apps,
            }
        }
    }

    /// Waits until `apps/list` shows exactly `n` apps, and returns them.
    pub fn wait_apps(&self, n: usize) -> Vec<Value> {
        let mut last = Vec::new();
        let ok = wait_until(PATIENCE, || {
            last = self.apps();
            last.len() == n
        });
        assert!(ok, "expected {n} apps, have {last:?}; daemon log:\n{}", self.proc.stderr());
        last
    }

    /// Waits until the endpoint of `slug` is listed and accepts connections; returns its path.
    pub fn wait_endpoint(&self, slug: &str) -> PathBuf {
        let path = self.rt.join("apps").join(format!("{slug}.sock"));
        let ok = wait_until(PATIENCE, || {
            self.apps().iter().any(|a| a["slug"] == slug && a["enabled"] == true)
                && UnixStream::connect(&path).is_ok()
        });
        assert!(ok, "endpoint {slug} never came up; daemon log:\n{}", self.proc.stderr());
        path
    }

    /// The liveness probe: the control socket answers `daemon/status` with our
    /// pid.
    pub fn assert_alive(&self) {
        let status = self.status();
        assert_eq!(status["pid"], json!(self.proc.pid()), "status: {status}");
    }
}

fn unique() -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// Runs the daemon to completion (for refusals): exit status and stderr. Panics if it is
/// still running after [`PATIENCE`].
pub fn run_daemon(cmd: Command) -> (ExitStatus, String) {
    let log = std::env::temp_dir().join(format!("jft-{}-run-{}.log", std::process::id(), unique()));
    let mut proc = Proc::spawn(cmd, log.clone());
    let status = proc.wait_exit(PATIENCE);
    let stderr = proc.stderr();
    let _ = fs::remove_file(&log);
    match status {
        Some(status) => (status, stderr),
        None => panic!("daemon still running after {PATIENCE:?}; log:\n{stderr}"),
    }
}

/// Starts the example app with `JFGUI_RUNTIME_DIR=rt`.
pub fn notepad(rt: &Path, args: &[&str]) -> Proc {
    let mut cmd = Command::new(bin("jfgui-notepad"));
    cmd.env("JFGUI_RUNTIME_DIR", rt)
        .env_remove("XDG_RUNTIME_DIR")
        .env("XDG_DATA_HOME", data_dir(rt))
        .args(args);
    Proc::spawn(cmd, rt.with_file_name(format!("notepad-{}.log", unique())))
}

/// The fault-injecting test app (`src/bin/jfgui-testapp`), its state and ledger files kept
/// in `dir` (outside the runtime dir) so a restart with the same `dir` shows what was
/// committed.
#[derive(Debug)]
pub struct TestApp {
    /// The process.
    pub proc: Proc,
    /// `--state` file.
    pub state: PathBuf,
    /// `--ledger` file.
    pub ledger: PathBuf,
}

impl TestApp {
    /// Starts `jfgui-testapp --agent-enable --name NAME --state DIR/NAME.state --ledger
    /// DIR/NAME.ledger ARGS...` against the daemon on `rt`.
    pub fn start(rt: &Path, dir: &Path, name: &str, args: &[&str]) -> TestApp {
        let state = dir.join(format!("{name}.state"));
        let ledger = dir.join(format!("{name}.ledger"));
        let mut cmd = Command::new(bin("jfgui-testapp"));
        cmd.env("JFGUI_RUNTIME_DIR", rt)
            .env_remove("XDG_RUNTIME_DIR")
            .args(["--agent-enable", "--name", name, "--state"])
            .arg(&state)
            .arg("--ledger")
            .arg(&ledger)
            .args(args);
        let proc = Proc::spawn(cmd, dir.join(format!("{name}-{}.log", unique())));
        TestApp { proc, state, ledger }
    }

    /// The ledger's lines (`request-id action revision-before revision-after verdict`).
    pub fn ledger(&self) -> Vec<String> {
        ledger_lines(&self.ledger)
    }
}

/// The lines of a mutation ledger (none when the file does not exist).
pub fn ledger_lines(path: &Path) -> Vec<String> {
    fs::read_to_string(path).map(|s| s.lines().map(str::to_string).collect()).unwrap_or_default()
}

/// A write on a test app endpoint: `counter.add {by, tag}` at the revision read just before.
/// Returns the whole response.
pub fn testapp_add(endpoint: &Path, by: i64, tag: &str) -> Value {
    let revision = json1(endpoint, "agent/info", json!({}))["revision"].clone();
    rpc(
        endpoint,
        "actions/execute",
        json!({"action": "counter.add", "input": {"by": by, "tag": tag}, "expectedRevision": revision}),
    )
    .unwrap_or_else(|e| panic!("counter.add on {}: {e}", endpoint.display()))
}

/// The liveness probe on a *second* app (a test app's endpoint): a fresh client gets
/// `agent/info`, then a write succeeds and lands exactly once in that app's ledger; the
/// control socket still answers with the daemon's pid.
pub fn assert_live(d: &Daemon, probe: &TestApp, endpoint: &Path) {
    d.assert_alive();
    let info = json1(endpoint, "agent/info", json!({}));
    assert!(info["revision"].is_u64(), "agent/info: {info}");
    let tag = format!("probe{}", unique());
    let response = testapp_add(endpoint, 1, &tag);
    assert!(response.get("result").is_some(), "probe write: {response}");
    let lines = probe.ledger().into_iter().filter(|l| l.starts_with(&format!("{tag} "))).count();
    assert_eq!(lines, 1, "probe write journalled once; ledger {:?}", probe.ledger());
}

/// The usual fault rig: a daemon with `daemon_args`, the test app under attack ("Target",
/// slug `target`, with `target_args`) and a second, well-behaved test app ("Probe", slug
/// `probe`) for the liveness probe. Fields drop in order: apps, daemon, then the files.
#[derive(Debug)]
pub struct Rig {
    /// The attacked app.
    pub target: TestApp,
    /// Its endpoint.
    pub target_ep: PathBuf,
    /// The liveness probe's app.
    pub probe: TestApp,
    /// Its endpoint.
    pub probe_ep: PathBuf,
    /// The daemon.
    pub d: Daemon,
    /// Holds the runtime dir, logs, states and ledgers.
    pub tmp: TempDir,
}

impl Rig {
    /// Starts everything and waits for both endpoints.
    pub fn start(daemon_args: &[&str], target_args: &[&str]) -> Rig {
        let tmp = TempDir::new();
        let d = Daemon::start(&tmp.rt(), daemon_args);
        let probe = TestApp::start(&d.rt, tmp.path(), "Probe", &[]);
        let probe_ep = d.wait_endpoint("probe");
        let target = TestApp::start(&d.rt, tmp.path(), "Target", target_args);
        let target_ep = d.wait_endpoint("target");
        Rig { target, target_ep, probe, probe_ep, d, tmp }
    }

    /// Restarts the target app (same state and ledger files) with `args`, waiting for its
    /// endpoint (which keeps the slug `target` once the old instance is gone).
    pub fn restart_target(&mut self, args: &[&str]) {
        let gone = wait_until(PATIENCE, || !self.d.apps().iter().any(|a| a["slug"] == "target"));
        assert!(gone, "the old target is still listed: {:?}", self.d.apps());
        self.target = TestApp::start(&self.d.rt, self.tmp.path(), "Target", args);
        self.target_ep = self.d.wait_endpoint("target");
    }

    /// The liveness probe through the probe app, and the listing shows only live
    /// apps: each listed pid exists, and each enabled app's endpoint accepts a connection.
    pub fn assert_live(&self) {
        assert_live(&self.d, &self.probe, &self.probe_ep);
        for app in self.d.apps() {
            let pid = app["pid"].as_u64().unwrap_or_else(|| panic!("pid in {app}"));
            assert!(Path::new(&format!("/proc/{pid}")).exists(), "listed but dead: {app}");
            if app["enabled"] == true {
                let endpoint = app["endpoint"].as_str().unwrap_or_else(|| panic!("{app}"));
                assert!(UnixStream::connect(endpoint).is_ok(), "listed endpoint dead: {app}");
            }
        }
    }

    /// The daemon's open descriptors now, after a liveness probe (whose connections are
    /// closed by the time it returns): the baseline for [`Rig::assert_fds_back`].
    pub fn fd_baseline(&self) -> usize {
        self.assert_live();
        fd_count(self.d.proc.pid())
    }

    /// Waits until the daemon's descriptors are back to `baseline` (no leak).
    pub fn assert_fds_back(&self, baseline: usize) {
        let pid = self.d.proc.pid();
        let ok = wait_until(PATIENCE, || fd_count(pid) <= baseline);
        assert!(ok, "daemon fds {} > baseline {baseline}: {:?}", fd_count(pid), fd_targets(pid));
        assert!(audit_log_fds(pid) <= 1, "audit log opened twice: {:?}", fd_targets(pid));
    }

    /// The target's ledger is empty ("not executed" verdicts).
    pub fn assert_target_ledger_empty(&self) {
        assert_eq!(self.target.ledger(), Vec::<String>::new(), "target ledger");
    }
}

/// A hand-driven app on `host.sock` speaking raw frames (a 4-byte big-endian length, then the
/// JSON body), for faults a host-sdk app cannot produce: forged headers, garbage, deep or
/// duplicate-key replies. It registers one read action `raw.get`.
#[derive(Debug)]
pub struct RawHost {
    stream: UnixStream,
    /// The slug the daemon gave it.
    pub slug: String,
}

impl RawHost {
    /// Connects, sends `hello`, one `actions` page and `ready`, and reads the `welcome`.
    pub fn register(d: &Daemon, name: &str) -> RawHost {
        let stream = UnixStream::connect(d.host()).expect("connect host.sock");
        stream.set_read_timeout(Some(PATIENCE)).unwrap();
        let mut host = RawHost { stream, slug: String::new() };
        let object = json!({"type": "object"});
        host.send(&json!({"hello": {"channelVersion": 1, "displayName": name,
            "pid": std::process::id(), "enabled": true}}));
        host.send(&json!({"actions": {"actions": [{"name": "raw.get",
            "description": "Answered by hand", "kind": "read", "inputSchema": object,
            "outputSchema": object, "capabilities": 0, "undo": false}]}}));
        host.send(&json!({"ready": {"actionCount": 1}}));
        let welcome = host.recv().expect("welcome");
        host.slug = welcome["welcome"]["slug"]
            .as_str()
            .unwrap_or_else(|| panic!("expected welcome: {welcome}"))
            .to_string();
        host
    }

    /// Sends one message as a frame.
    pub fn send(&mut self, message: &Value) {
        self.send_frame(message.to_string().as_bytes());
    }

    /// Sends `body` as one frame (header computed from its length).
    pub fn send_frame(&mut self, body: &[u8]) {
        let mut frame = (body.len() as u32).to_be_bytes().to_vec();
        frame.extend_from_slice(body);
        self.send_bytes(&frame);
    }

    /// Sends raw bytes; a daemon that already hung up is not an error here.
    pub fn send_bytes(&mut self, bytes: &[u8]) {
        let _ = self.stream.write_all(bytes);
    }

    /// Reads one frame and parses it; `None` at EOF or on a read error.
    pub fn recv(&mut self) -> Option<Value> {
        use std::io::Read;
        let mut header = [0u8; 4];
        self.stream.read_exact(&mut header).ok()?;
        let mut body = vec![0u8; u32::from_be_bytes(header) as usize];
        self.stream.read_exact(&mut body).ok()?;
        serde_json::from_slice(&body).ok()
    }

    /// Reads the next `request` and returns its id (panics on anything else).
    pub fn next_request(&mut self) -> u64 {
        let message = self.recv().expect("a request");
        message["request"]["id"].as_u64().unwrap_or_else(|| panic!("expected request: {message}"))
    }

    /// Whether the daemon closes the connection within [`PATIENCE`] (skipping what it sends).
    pub fn closed(&mut self) -> bool {
        use std::io::Read;
        let mut buf = [0u8; 4096];
        loop {
            match self.stream.read(&mut buf) {
                Ok(0) => return true,
                Ok(_) => continue,
                Err(e)
                    if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut) =>
                {
                    return false;
                }
                Err(_) => return true,
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Raw JSON-RPC line clients

/// A line-delimited JSON-RPC connection with read/write timeouts.
#[derive(Debug)]
pub struct LineClient {
    reader: BufReader<UnixStream>,
    writer: UnixStream,
    next_id: u64,
}

impl LineClient {
    /// Connects to `path`.
    pub fn connect(path: &Path) -> io::Result<LineClient> {
        let stream = UnixStream::connect(path)?;
        stream.set_read_timeout(Some(PATIENCE))?;
        stream.set_write_timeout(Some(PATIENCE))?;
        Ok(LineClient { reader: BufReader::new(stream.try_clone()?), writer: stream, next_id: 1 })
    }

    /// Sends one raw line (a newline is appended).
    pub fn send_raw(&mut self, line: &str) -> io::Result<()> {
        self.writer.write_all(line.as_bytes())?;
        self.writer.write_all(b"\n")
    }

    /// Sends raw bytes as they are (no newline added).
    pub fn send_bytes(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.writer.write_all(bytes)
    }

    /// Reads one line; `Ok(None)` at EOF.
    pub fn read_line(&mut self) -> io::Result<Option<String>> {
        let mut line = String::new();
        match self.reader.read_line(&mut line)? {
            0 => Ok(None),
            _ => Ok(Some(line)),
        }
    }

    /// Sends a request with a fresh numeric id and returns the parsed response line.
    pub fn call(&mut self, method: &str, params: Value) -> io::Result<Value> {
        let id = self.next_id;
        self.next_id += 1;
        let request = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.send_raw(&request.to_string())?;
        let line = self.read_line()?.ok_or_else(|| {
            io::Error::new(io::ErrorKind::UnexpectedEof, "connection closed before a response")
        })?;
        serde_json::from_str(&line)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, format!("{e}: {line:?}")))
    }
}

/// One JSON control protocol 1 request (`protocolVersion` "1" added) on a fresh connection
/// to the endpoint `path`; returns the `result`, or panics with the error.
pub fn json1(path: &Path, method: &str, mut params: Value) -> Value {
    params["protocolVersion"] = json!("1");
    let response =
        rpc(path, method, params).unwrap_or_else(|e| panic!("{method} on {}: {e}", path.display()));
    match response.get("result") {
        Some(result) => result.clone(),
        None => panic!("{method} on {}: {response}", path.display()),
    }
}

/// One request on a fresh connection to `path`.
pub fn rpc(path: &Path, method: &str, params: Value) -> io::Result<Value> {
    LineClient::connect(path)?.call(method, params)
}

// ---------------------------------------------------------------------------------------------
// Resource probes

/// Open descriptors of `pid`.
///
/// The audit log's descriptor is not counted: the daemon opens it when it writes its first
/// record (up to its writer's batch window after the call) and keeps it, so whether a baseline
/// includes it is a race; [`audit_log_fds`] checks it apart.
pub fn fd_count(pid: u32) -> usize {
    fd_targets(pid).iter().filter(|t| !t.ends_with(AUDIT_LOG_SUFFIX)).count()
}

/// The daemon's audit log, as a descriptor's target ends.
const AUDIT_LOG_SUFFIX: &str = "/audit.jsonl";

/// How many descriptors of `pid` point at an audit log (at most one when nothing leaks).
pub fn audit_log_fds(pid: u32) -> usize {
    fd_targets(pid).iter().filter(|t| t.ends_with(AUDIT_LOG_SUFFIX)).count()
}

/// What each open descriptor of `pid` points at (`socket:[INODE]`, paths, `anon_inode:...`),
/// so a leak report says what leaked.
pub fn fd_targets(pid: u32) -> Vec<String> {
    let Ok(dir) = fs::read_dir(format!("/proc/{pid}/fd")) else { return Vec::new() };
    let mut targets: Vec<String> = dir
        .flatten()
        .map(|e| {
            let target = fs::read_link(e.path()).map(|t| t.display().to_string());
            format!("{}->{}", e.file_name().to_string_lossy(), target.unwrap_or_default())
        })
        .collect();
    targets.sort();
    targets
}

/// A `kB` field of `/proc/PID/status` (`VmRSS`, `VmHWM`, ...), in KiB.
pub fn status_kib(pid: u32, field: &str) -> Option<u64> {
    let status = fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// CPU time (user + system) of `pid` so far, in clock ticks (`/proc/PID/stat` fields 14+15).
pub fn cpu_ticks(pid: u32) -> Option<u64> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may contain spaces: fields after the closing parenthesis.
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split(' ').collect();
    Some(fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?)
}

/// The mode bits (`st_mode & 0o7777`) of `path`, without following a final symlink.
pub fn mode(path: &Path) -> u32 {
    fs::symlink_metadata(path)
        .map(|m| m.permissions().mode() & 0o7777)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The inode of `path`.
pub fn inode(path: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    fs::symlink_metadata(path)
        .map(|m| m.ino())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Our real uid (from `/proc/self/status`).
pub fn my_uid() -> u32 {
    let status = fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .expect("Uid line")
}

// ---------------------------------------------------------------------------------------------
// Cross-UID

/// A throw-away local user, deleted on drop.
#[derive(Debug)]
pub struct User {
    /// Login name.
    pub name: String,
    /// Its uid.
    pub uid: u32,
}

impl Drop for User {
    fn drop(&mut self) {
        let _ = Command::new("userdel").arg(&self.name).stderr(Stdio::null()).status();
        let _ = Command::new("groupdel").arg(&self.name).stderr(Stdio::null()).status();
    }
}

/// Two throw-away users and a 0755 copy of the binaries they can execute (`/root` is 0700).
#[derive(Debug)]
pub struct CrossUid {
    /// The daemon's user.
    pub a: User,
    /// The attacker.
    pub b: User,
    bins: TempDir,
}

impl CrossUid {
    /// Creates the users, or says why the cross-UID tests cannot run here (the caller hands the
    /// reason to [`cannot_run`]: a failure unless skipping is allowed, never a silent pass).
    pub fn setup() -> Result<CrossUid, String> {
        if my_uid() != 0 {
            return Err("cross-UID tests need root to create users (run the suite as root)".into());
        }
        for tool in ["useradd", "userdel", "setpriv"] {
            let found = Command::new("sh")
                .args(["-c", &format!("command -v {tool}")])
                .stdout(Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
            if !found {
                return Err(format!("`{tool}` is not installed"));
            }
        }
        let tag = format!("{}{}", std::process::id() % 100_000, unique());
        let a = create_user(&format!("jfa{tag}"))?;
        let b = create_user(&format!("jfb{tag}"))?;
        let bins = TempDir::new();
        for name in ["jfgui-agentd", "jfgui-notepad", "jfgui-agent"] {
            let from = bin_dir().join(name);
            if from.is_file() {
                let to = bins.path().join(name);
                fs::copy(&from, &to).map_err(|e| format!("copy {}: {e}", from.display()))?;
                fs::set_permissions(&to, fs::Permissions::from_mode(0o755))
                    .map_err(|e| e.to_string())?;
            }
        }
        Ok(CrossUid { a, b, bins })
    }

    /// The 0755 copy of binary `name`.
    pub fn bin(&self, name: &str) -> PathBuf {
        self.bins.path().join(name)
    }

    /// `program` run as `user` with only the environment the official MCP SDKs give a stdio
    /// server by default (`HOME LOGNAME PATH SHELL TERM USER`): no `XDG_RUNTIME_DIR`, no
    /// `JFGUI_RUNTIME_DIR`, so the runtime dir comes from the `/run/user` and `/tmp` steps.
    pub fn command_as_bare(&self, user: &User, program: &Path, home: &Path) -> Command {
        let mut cmd = self.command_as(user, program);
        cmd.env_clear()
            .env("HOME", home)
            .env("LOGNAME", &user.name)
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("SHELL", "/bin/sh")
            .env("TERM", "dumb")
            .env("USER", &user.name);
        cmd
    }

    /// `program args...` run as `user` (real and effective uid and gid, its groups only).
    pub fn command_as(&self, user: &User, program: &Path) -> Command {
        let mut cmd = Command::new("setpriv");
        cmd.args(["--reuid", &user.name, "--regid", &user.name, "--init-groups", "--"])
            .arg(program);
        cmd
    }

    /// A directory `user` owns (0700), to hold its runtime dir.
    pub fn home_for(&self, user: &User) -> TempDir {
        let dir = TempDir::new();
        let status =
            Command::new("chown").arg(format!("{0}:{0}", user.name)).arg(dir.path()).status();
        assert!(status.is_ok_and(|s| s.success()), "chown {}", dir.path().display());
        dir
    }

    /// From `/usr/bin/python3` as `user`: connect to `socket`, send `line`, and report what
    /// happened: `EOF` (closed without a byte), `DATA:<text>`, `ERR:<errno name>`, or `TIMEOUT`.
    pub fn probe_as(&self, user: &User, socket: &Path, line: &str) -> String {
        const SCRIPT: &str = r#"
import errno, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(10)
try:
    s.connect(sys.argv[1])
except OSError as e:
    print("ERR:" + errno.errorcode.get(e.errno, str(e.errno))); sys.exit(0)
try:
    s.sendall(sys.argv[2].encode() + b"\n")
except OSError as e:
    pass
try:
    data = s.recv(65536)
    print("DATA:" + data.decode(errors="replace") if data else "EOF")
except socket.timeout:
    print("TIMEOUT")
except OSError as e:
    print("EOF" if e.errno == errno.ECONNRESET else "ERR:" + errno.errorcode.get(e.errno, str(e.errno)))
"#;
        let out = self
            .command_as(user, Path::new("/usr/bin/python3"))
            .args(["-c", SCRIPT])
            .arg(socket)
            .arg(line)
            .stdin(Stdio::null())
            .output()
            .expect("run python3 as the other user");
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }
}

fn create_user(name: &str) -> Result<User, String> {
    let out = Command::new("useradd")
        .args(["-M", "-U", "-s", "/usr/sbin/nologin", name])
        .output()
        .map_err(|e| format!("useradd: {e}"))?;
    if !out.status.success() {
        return Err(format!("useradd {name}: {}", String::from_utf8_lossy(&out.stderr).trim()));
    }
    let id = Command::new("id").args(["-u", name]).output().map_err(|e| format!("id: {e}"))?;
    let uid = String::from_utf8_lossy(&id.stdout)
        .trim()
        .parse()
        .map_err(|e| format!("id -u {name}: {e}"))?;
    Ok(User { name: name.into(), uid })
}

/// The one way a test gives up because its prerequisite is missing here (no root, no second
/// user, a tool not installed): it fails naming `reason`, unless `JFGUI_ALLOW_SKIP=1` is set,
/// which turns the failure into a `SKIPPED: <test>: <reason>` line on stdout and stderr and
/// returns (the caller then returns too). A test that proves nothing must never pass silently.
pub fn cannot_run(test: &str, reason: &str) {
    if skips_allowed() {
        eprintln!("SKIPPED: {test}: {reason}");
        println!("SKIPPED: {test}: {reason}");
    } else {
        panic!(
            "{test} cannot run here: missing prerequisite: {reason} (set {ALLOW_SKIP}=1 to skip \
             it instead)"
        );
    }
}

/// The opt-out variable: only with `JFGUI_ALLOW_SKIP=1` may a test that cannot run pass.
pub const ALLOW_SKIP: &str = "JFGUI_ALLOW_SKIP";

fn skips_allowed() -> bool {
    std::env::var_os(ALLOW_SKIP).is_some_and(|v| v == "1")
}

/// A path the test created outside its temp dirs (`/tmp/jfgui-agent-UID`, `/run/user/UID`),
/// removed with everything in it on drop.
#[derive(Debug)]
pub struct Created(pub PathBuf);

impl Drop for Created {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// The README's complete app compiles against the current host-sdk (rustdoc builds it as a
/// doc test of this crate).
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeApp;
