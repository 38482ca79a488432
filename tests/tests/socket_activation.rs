//! Socket activation and the idle exit: the real `jfgui-agentd` started with listening sockets
//! inherited exactly as systemd passes them (fds 3.., `LISTEN_FDS`, `LISTEN_FDNAMES`, and
//! `LISTEN_PID` equal to the daemon's own pid), a supervisor loop that re-activates it on the
//! next connection the way systemd does, and the shipped unit files.

use std::fs;
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, AsRawFd, OwnedFd, RawFd};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::net::{UnixDatagram, UnixListener, UnixStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::Duration;

use jfgui_tests::serde_json::{Value, json};
use jfgui_tests::{PATIENCE, Proc, TempDir, Watchdog, agentd, rpc, run_daemon, wait_until};

/// The documented status for refused inherited sockets (`jfgui-agentd --help`).
const ACTIVATION_REFUSED: i32 = 5;

/// A runtime dir with `host.sock` and `agentd.sock` bound by "systemd" (this test).
struct Sockets {
    rt: PathBuf,
    host: UnixListener,
    control: UnixListener,
}

impl Sockets {
    fn bind(tmp: &TempDir) -> Sockets {
        let rt = tmp.rt();
        fs::create_dir(&rt).unwrap();
        fs::set_permissions(&rt, fs::Permissions::from_mode(0o700)).unwrap();
        let host = UnixListener::bind(rt.join("host.sock")).unwrap();
        let control = UnixListener::bind(rt.join("agentd.sock")).unwrap();
        Sockets { rt, host, control }
    }

    /// Both sockets in systemd's order for the shipped units (host first).
    fn both(&self) -> Vec<(OwnedFd, &'static str)> {
        vec![(dup(&self.host), "host"), (dup(&self.control), "control")]
    }
}

fn dup(fd: &impl AsFd) -> OwnedFd {
    fd.as_fd().try_clone_to_owned().unwrap()
}

/// Whose pid `LISTEN_PID` names.
#[derive(Clone, Copy)]
enum ListenPid {
    /// The daemon itself (what systemd does).
    Child,
    /// Another process.
    Other(u32),
}

/// `jfgui-agentd ARGS` for runtime dir `rt`, receiving `fds` as 3, 4, ... with their names.
/// `sh` sets `LISTEN_PID=$$` and `exec`s the daemon, so the pid is the daemon's own.
fn activated(rt: &Path, fds: Vec<(OwnedFd, &str)>, pid: ListenPid, args: &[&str]) -> Command {
    let names: Vec<&str> = fds.iter().map(|(_, n)| *n).collect();
    let script = match pid {
        ListenPid::Child => r#"LISTEN_PID=$$ exec "$0" "$@""#.to_string(),
        ListenPid::Other(p) => format!(r#"LISTEN_PID={p} exec "$0" "$@""#),
    };
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(script)
        .arg(agentd())
        .args(args)
        .env("JFGUI_RUNTIME_DIR", rt)
        .env_remove("XDG_RUNTIME_DIR")
        .env_remove("NOTIFY_SOCKET")
        .env("JFGUI_LOG", "debug")
        .env("LISTEN_FDS", fds.len().to_string())
        .env("LISTEN_FDNAMES", names.join(":"));
    pass_fds(&mut cmd, fds.into_iter().map(|(fd, _)| fd).collect());
    cmd
}

/// Most descriptors a test passes.
const MAX_FDS: usize = 8;

/// Places `fds` at 3, 4, ... in the child. The command owns them (inside the closure) until
/// it is dropped, so their numbers stay valid up to the fork.
#[allow(unsafe_code)]
fn pass_fds(cmd: &mut Command, fds: Vec<OwnedFd>) {
    assert!(fds.len() <= MAX_FDS);
    // SAFETY: the closure runs in the forked child before exec and only calls fcntl and
    // dup2, which are async-signal-safe; it allocates nothing.
    unsafe {
        cmd.pre_exec(move || {
            // Move everything out of the way first, so placing fd i at 3+i never overwrites a
            // descriptor still to be placed. F_DUPFD_CLOEXEC: the high copies close on exec.
            let mut high = [0 as RawFd; MAX_FDS];
            for (i, fd) in fds.iter().enumerate() {
                let h = libc::fcntl(fd.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 64);
                if h < 0 {
                    return Err(io::Error::last_os_error());
                }
                high[i] = h;
            }
            for (i, h) in high.iter().take(fds.len()).enumerate() {
                // dup2 clears FD_CLOEXEC on the target: the daemon inherits 3+i.
                if libc::dup2(*h, 3 + i as RawFd) < 0 {
                    return Err(io::Error::last_os_error());
                }
            }
            Ok(())
        });
    }
}

fn spawn(cmd: Command, tmp: &TempDir, tag: &str) -> Proc {
    Proc::spawn(cmd, tmp.path().join(format!("agentd-{tag}.log")))
}

fn frame(stream: &mut UnixStream, message: &Value) -> io::Result<()> {
    let body = message.to_string();
    stream.write_all(&u32::try_from(body.len()).unwrap().to_be_bytes())?;
    stream.write_all(body.as_bytes())
}

fn read_frame(stream: &mut UnixStream) -> io::Result<Value> {
    let mut len = [0u8; 4];
    stream.read_exact(&mut len)?;
    let mut body = vec![0u8; u32::from_be_bytes(len) as usize];
    stream.read_exact(&mut body)?;
    jfgui_tests::serde_json::from_slice(&body)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
}

/// Registers a minimal app (no actions, enabled) on `host` and returns its connection after
/// the daemon's `welcome`.
fn register_app(host: &Path, name: &str) -> (UnixStream, Value) {
    let mut s = UnixStream::connect(host).unwrap();
    s.set_read_timeout(Some(PATIENCE)).unwrap();
    let hello = json!({"hello": {"channelVersion": 1, "displayName": name,
        "pid": std::process::id(), "enabled": true}});
    frame(&mut s, &hello).unwrap();
    frame(&mut s, &json!({"ready": {"actionCount": 0}})).unwrap();
    let welcome = read_frame(&mut s).unwrap();
    assert!(welcome.get("welcome").is_some(), "expected welcome, got {welcome}");
    (s, welcome)
}

fn status_pid(control: &Path) -> io::Result<u64> {
    let v = rpc(control, "daemon/status", json!({}))?;
    v["result"]["pid"]
        .as_u64()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, format!("no pid in {v}")))
}

fn inode(path: &Path) -> u64 {
    fs::metadata(path).unwrap().ino()
}

#[test]
fn serves_inherited_sockets_notifies_systemd_and_leaves_them_on_idle_exit() {
    let _wd = Watchdog::arm(Duration::from_secs(60));
    let tmp = TempDir::new();
    let sockets = Sockets::bind(&tmp);
    let (host, control) = (sockets.rt.join("host.sock"), sockets.rt.join("agentd.sock"));
    let inodes = (inode(&host), inode(&control));
    let notify_path = tmp.path().join("notify.sock");
    let notify = UnixDatagram::bind(&notify_path).unwrap();
    notify.set_read_timeout(Some(PATIENCE)).unwrap();

    let mut cmd = activated(&sockets.rt, sockets.both(), ListenPid::Child, &["--idle-exit", "1"]);
    cmd.env("NOTIFY_SOCKET", &notify_path);
    let mut d = spawn(cmd, &tmp, "main");

    let mut buf = [0u8; 256];
    let n = notify.recv(&mut buf).expect("READY=1 from the daemon");
    assert_eq!(buf[..n].trim_ascii(), b"READY=1", "{}", d.stderr());

    // An app registers through the inherited host socket and is listed on the inherited
    // control socket; its endpoint is the daemon's own socket.
    let (app, welcome) = register_app(&host, "Activated App");
    let slug = welcome["welcome"]["slug"].as_str().unwrap().to_string();
    let list = rpc(&control, "apps/list", json!({})).unwrap();
    let apps = list["result"]["apps"].as_array().unwrap_or_else(|| panic!("{list}"));
    assert!(apps.iter().any(|a| a["slug"] == json!(slug)), "{list}");
    let endpoint = sockets.rt.join("apps").join(format!("{slug}.sock"));
    assert!(wait_until(PATIENCE, || endpoint.exists()), "endpoint {}", endpoint.display());
    assert_eq!(status_pid(&control).unwrap(), u64::from(d.pid()));

    // The app alone keeps the daemon up past the idle period.
    thread::sleep(Duration::from_millis(1500));
    assert!(d.try_status().is_none(), "a connected app keeps the daemon up: {}", d.stderr());
    drop(app);

    let status = d.wait_exit(PATIENCE).expect("idle exit with no app and no client");
    assert_eq!(status.code(), Some(0), "{}", d.stderr());
    let n = notify.recv(&mut buf).expect("STOPPING=1 from the daemon");
    assert_eq!(buf[..n].trim_ascii(), b"STOPPING=1");
    // systemd's sockets are untouched (same inodes, still listening); the endpoint the
    // daemon made itself is gone.
    assert_eq!((inode(&host), inode(&control)), inodes, "inherited sockets must not be replaced");
    assert!(UnixStream::connect(&control).is_ok(), "systemd's socket still listens");
    assert!(!endpoint.exists());
    assert!(!d.stderr().contains("not where clients look"), "{}", d.stderr());
}

#[test]
fn idle_exit_defaults_to_30_seconds_when_activated() {
    let _wd = Watchdog::arm(Duration::from_secs(60));
    let tmp = TempDir::new();
    let sockets = Sockets::bind(&tmp);
    let mut d = spawn(activated(&sockets.rt, sockets.both(), ListenPid::Child, &[]), &tmp, "d");
    let control = sockets.rt.join("agentd.sock");
    assert_eq!(status_pid(&control).unwrap(), u64::from(d.pid()), "{}", d.stderr());
    // Not timed here (30 s would slow every run): the log states the effective value, and
    // the daemon is still up well after a short idle period.
    thread::sleep(Duration::from_secs(2));
    assert!(d.try_status().is_none(), "{}", d.stderr());
    let listening = listening_line(&d);
    assert!(listening.contains("activated=true"), "{listening}");
    assert!(listening.contains("idle_exit=30s"), "{listening}");

    // Not activated and no flag: no idle exit at all; the flag wins over the default.
    let plain = TempDir::new();
    let d = jfgui_tests::Daemon::start(&plain.rt(), &[]);
    let listening = listening_line(&d.proc);
    assert!(listening.contains("activated=false"), "{listening}");
    assert!(listening.contains("idle_exit=off"), "{listening}");
    let other = TempDir::new();
    let sockets = Sockets::bind(&other);
    let args = ["--idle-exit", "45"];
    let d = spawn(activated(&sockets.rt, sockets.both(), ListenPid::Child, &args), &other, "d");
    let control = sockets.rt.join("agentd.sock");
    assert_eq!(status_pid(&control).unwrap(), u64::from(d.pid()), "{}", d.stderr());
    assert!(listening_line(&d).contains("idle_exit=45s"), "{}", d.stderr());
}

/// The daemon's "listening" log line, which states the effective settings.
fn listening_line(d: &Proc) -> String {
    const NEEDLE: &str = "jfgui-agentd listening";
    assert!(d.wait_stderr(NEEDLE), "no listening line in:\n{}", d.stderr());
    d.stderr().lines().find(|l| l.contains(NEEDLE)).unwrap_or_default().to_string()
}

/// What systemd does for an activated service: while it is not running, wait until a
/// listening socket has a pending connection, then start it (with the sockets) and wait for
/// it to exit. Returns the pids it started.
fn supervise(tmp: &TempDir, sockets: &Sockets, args: &[&str], stop: &AtomicBool) -> Vec<u32> {
    let mut pids = Vec::new();
    while !stop.load(Ordering::Acquire) {
        if !readable(&[&sockets.host, &sockets.control], Duration::from_millis(50)) {
            continue;
        }
        let cmd = activated(&sockets.rt, sockets.both(), ListenPid::Child, args);
        let mut d = spawn(cmd, tmp, &format!("run{}", pids.len()));
        pids.push(d.pid());
        let status = d.wait_exit(Duration::from_secs(30)).expect("the daemon idles out");
        assert_eq!(status.code(), Some(0), "{}", d.stderr());
    }
    pids
}

#[allow(unsafe_code)]
fn readable(listeners: &[&UnixListener], timeout: Duration) -> bool {
    let mut polls: Vec<libc::pollfd> = listeners
        .iter()
        .map(|l| libc::pollfd { fd: l.as_raw_fd(), events: libc::POLLIN, revents: 0 })
        .collect();
    let ms = libc::c_int::try_from(timeout.as_millis()).unwrap();
    // SAFETY: `polls` is a valid array of `polls.len()` pollfd structs for the call's duration.
    let n = unsafe { libc::poll(polls.as_mut_ptr(), polls.len() as libc::nfds_t, ms) };
    n > 0
}

#[test]
fn restarted_on_connect_and_no_connection_is_lost_around_the_idle_boundary() {
    let _wd = Watchdog::arm(Duration::from_secs(120));
    let tmp = Arc::new(TempDir::new());
    let sockets = Arc::new(Sockets::bind(&tmp));
    let stop = Arc::new(AtomicBool::new(false));
    let supervisor = {
        let (tmp, sockets, stop) = (tmp.clone(), sockets.clone(), stop.clone());
        thread::spawn(move || supervise(&tmp, &sockets, &["--idle-exit", "1"], &stop))
    };
    let control = sockets.rt.join("agentd.sock");

    // Nothing runs until the first connection; that connection is served by the daemon it
    // started.
    let first = status_pid(&control).expect("the first connect is served");
    // After the idle exit, the next connection starts a new daemon and is served too.
    thread::sleep(Duration::from_millis(2500));
    let second = status_pid(&control).expect("the connect after the idle exit is served");
    assert_ne!(first, second, "a new daemon was activated");

    // Quiet gaps swept across the 1 s idle period, then 8 clients at once (104 in all): each is
    // served, by the daemon still running or by the next activation, and none hangs (every
    // call has PATIENCE timeouts).
    let mut served = vec![first, second];
    for step in 0..13u64 {
        thread::sleep(Duration::from_millis(850 + 25 * step));
        let clients: Vec<_> = (0..8)
            .map(|_| {
                let control = control.clone();
                thread::spawn(move || status_pid(&control))
            })
            .collect();
        for c in clients {
            match c.join().unwrap() {
                Ok(pid) => served.push(pid),
                Err(e) => panic!("a client after a {} ms gap was not served: {e}", 850 + 25 * step),
            }
        }
    }
    stop.store(true, Ordering::Release);
    let pids = supervisor.join().unwrap();
    served.sort_unstable();
    served.dedup();
    assert!(served.len() >= 2, "clients were served by several activations: {served:?}");
    assert!(pids.len() >= 3, "activations: {pids:?}");
    for pid in &served {
        assert!(pids.contains(&u32::try_from(*pid).unwrap()), "{pid} not one of {pids:?}");
    }
}

#[test]
fn listen_pid_of_another_process_is_ignored() {
    let _wd = Watchdog::arm(Duration::from_secs(60));
    let tmp = TempDir::new();
    let rt = tmp.rt();
    // The variables name pid 1 (not us): sd_listen_fds semantics, the daemon binds its own.
    let decoy = TempDir::new();
    let sockets = Sockets::bind(&decoy);
    let cmd = activated(&rt, sockets.both(), ListenPid::Other(1), &["--idle-exit", "1"]);
    let mut d = spawn(cmd, &tmp, "other");
    let control = rt.join("agentd.sock");
    assert!(wait_until(PATIENCE, || control.exists()), "{}", d.stderr());
    assert_eq!(status_pid(&control).unwrap(), u64::from(d.pid()));
    assert!(d.wait_stderr("LISTEN_PID names another process"), "{}", d.stderr());
    let status = d.wait_exit(PATIENCE).expect("idle exit");
    assert_eq!(status.code(), Some(0));
    // Its own sockets, so it removes them; the decoy's are untouched.
    assert!(!control.exists());
    assert!(UnixStream::connect(decoy.rt().join("agentd.sock")).is_ok());
}

#[test]
fn wrong_count_or_type_is_a_clear_refusal() {
    let _wd = Watchdog::arm(Duration::from_secs(60));
    let tmp = TempDir::new();
    let sockets = Sockets::bind(&tmp);
    let tcp = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let (pair, _peer) = UnixStream::pair().unwrap();
    let file = fs::File::create(tmp.path().join("plain")).unwrap();

    let cases: Vec<(Vec<(OwnedFd, &str)>, &str)> = vec![
        (vec![(dup(&sockets.host), "host")], "no descriptor named \"control\""),
        (
            vec![
                (dup(&sockets.host), "host"),
                (dup(&sockets.control), "control"),
                (dup(&sockets.control), "extra"),
            ],
            "3 descriptors passed",
        ),
        (vec![(dup(&tcp), "host"), (dup(&sockets.control), "control")], "not a Unix socket"),
        (vec![(dup(&sockets.host), "host"), (dup(&pair), "control")], "not listening"),
        (vec![(dup(&file), "host"), (dup(&sockets.control), "control")], "not a socket"),
    ];
    for (fds, needle) in cases {
        let (status, stderr) =
            run_daemon(activated(&sockets.rt, fds, ListenPid::Child, &["--idle-exit", "1"]));
        assert_eq!(status.code(), Some(ACTIVATION_REFUSED), "{needle}: {stderr}");
        assert!(stderr.contains(needle), "expected {needle:?} in:\n{stderr}");
    }
    // Nothing of systemd's was touched by the refusals.
    assert!(UnixStream::connect(sockets.rt.join("host.sock")).is_ok());
}

fn unit(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../packaging/systemd").join(name);
    fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn shipped_socket_units_are_private_and_named_as_the_daemon_expects() {
    for (name, socket, fd_name) in [
        ("jfgui-agentd.socket", "host.sock", "host"),
        ("jfgui-agentd-control.socket", "agentd.sock", "control"),
    ] {
        let text = unit(name);
        let lines: Vec<&str> = text.lines().map(str::trim).collect();
        let has = |l: &str| lines.contains(&l);
        assert!(has("SocketMode=0600"), "{name}: systemd's default is 0666");
        assert!(has("DirectoryMode=0700"), "{name}");
        assert!(has(&format!("ListenStream=%t/jfgui-agent/{socket}")), "{name}");
        assert!(has(&format!("FileDescriptorName={fd_name}")), "{name}");
        assert!(has("Service=jfgui-agentd.service"), "{name}");
    }
    let service = unit("jfgui-agentd.service");
    assert!(service.contains("Type=notify"));
    assert!(service.contains("Sockets=jfgui-agentd.socket jfgui-agentd-control.socket"));
}

#[test]
fn systemd_socket_activate_hands_over_and_the_first_connection_is_served() {
    let _wd = Watchdog::arm(Duration::from_secs(60));
    let test = "systemd_socket_activate_hands_over_and_the_first_connection_is_served";
    if Command::new("systemd-socket-activate").arg("--version").output().is_err() {
        jfgui_tests::cannot_run(
            test,
            "systemd-socket-activate (Debian package systemd) is not installed",
        );
        return;
    }
    let tmp = TempDir::new();
    let rt = tmp.rt();
    fs::create_dir(&rt).unwrap();
    fs::set_permissions(&rt, fs::Permissions::from_mode(0o700)).unwrap();
    let (host, control) = (rt.join("host.sock"), rt.join("agentd.sock"));
    // systemd's own tool binds both sockets, waits for the first connection and execs the
    // daemon in its place (same pid), passing fds 3 and 4 with these names.
    let mut cmd = Command::new("systemd-socket-activate");
    cmd.arg("-l").arg(&host).arg("-l").arg(&control).arg("--fdname=host:control");
    cmd.arg(agentd()).arg("--runtime-dir").arg(&rt).args(["--idle-exit", "1"]);
    cmd.env_remove("XDG_RUNTIME_DIR").env("JFGUI_LOG", "debug");
    let mut d = spawn(cmd, &tmp, "ssa");
    assert!(wait_until(PATIENCE, || control.exists()), "{}", d.stderr());
    let pid = status_pid(&control).expect("the connection that triggered the start is served");
    assert_eq!(pid, u64::from(d.pid()), "{}", d.stderr());
    let status = d.wait_exit(PATIENCE).expect("idle exit");
    assert_eq!(status.code(), Some(0), "{}", d.stderr());
    assert!(host.exists() && control.exists(), "the inherited sockets are left in place");
}
