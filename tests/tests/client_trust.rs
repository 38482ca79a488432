//! The squatted fallback runtime dir: another user listens where the
//! victim's app and CLI look, and neither may send it a byte. Real users: the
//! victim `jfa…` runs with the environment the MCP SDKs give a server (no `XDG_RUNTIME_DIR`, no
//! `JFGUI_RUNTIME_DIR`, and as a fresh user it has no `/run/user/UID`), so its runtime dir is
//! the fallback `/tmp/jfgui-agent-UID`; the squatter `jfb…` is a Python listener that counts
//! the connections and bytes it receives. Three setups:
//!
//! - the squatter owns the dir (0777), the attack of the issue;
//! - the dir is the victim's but 0777, with the squatter's sockets in it;
//! - the dir is the victim's and 0700, but the sockets in it are the squatter's (root plants
//!   them), so only the peer check can tell.
//!
//! In each, `jfgui-agent list --json` exits 5 with one line naming the dir (or the peer uid),
//! and `jfgui-notepad --agent-enable` logs the refusal and keeps retrying: the squatter counts
//! 0 bytes. Then the squatter goes and the victim's real daemon starts in the same place: the
//! still-running app registers with it, so it was retrying all along. Needs root (users are
//! created); without root the tests fail unless `JFGUI_ALLOW_SKIP=1`.

use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use jfgui_tests::{
    Created, CrossUid, Daemon, PATIENCE, Proc, TempDir, User, Watchdog, cannot_run, wait_until,
};

/// Binds `agentd.sock` and `host.sock` in DIR (creating DIR with MODE first when it is
/// missing), makes them connectable by anyone, then accepts forever and keeps STATUS up to date
/// with "CONNECTIONS BYTES" received in total.
const SQUATTER: &str = r#"
import os, select, socket, sys
directory, mode, status = sys.argv[1], int(sys.argv[2], 8), sys.argv[3]
if not os.path.isdir(directory):
    os.mkdir(directory)
    os.chmod(directory, mode)
listeners = []
for name in ("agentd.sock", "host.sock"):
    path = os.path.join(directory, name)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(path)
    os.chmod(path, 0o777)
    s.listen(64)
    listeners.append(s)
connections, received, open_ = 0, 0, []
def report():
    with open(status + ".tmp", "w") as f:
        f.write(f"{connections} {received}")
    os.replace(status + ".tmp", status)
report()
while True:
    ready, _, _ = select.select(listeners + open_, [], [])
    for s in ready:
        if s in listeners:
            c, _ = s.accept()
            open_.append(c)
            connections += 1
        else:
            data = s.recv(65536)
            if data:
                received += len(data)
            else:
                open_.remove(s)
                s.close()
    report()
"#;

/// Where the victim's dir comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Setup {
    /// The squatter creates `/tmp/jfgui-agent-UID` itself, mode 0777.
    SquatterOwnsTheDir,
    /// The dir is the victim's, mode 0777; the squatter's sockets are in it.
    OurDirWritableByOthers,
    /// The dir is the victim's, mode 0700; the squatter's sockets are in it (root planted them
    /// while the dir was open, then closed it).
    OurDirForeignListener,
}

/// The squatter's listener and what it counted.
struct Squatter {
    proc: Proc,
    status: PathBuf,
}

impl Squatter {
    /// (connections accepted, bytes received) so far.
    fn counts(&self) -> (u64, u64) {
        let text = fs::read_to_string(&self.status).unwrap_or_default();
        let mut parts = text.split_whitespace().map(|n| n.parse::<u64>().unwrap_or(u64::MAX));
        (parts.next().unwrap_or(0), parts.next().unwrap_or(0))
    }
}

fn run_as(cmd: &mut Command) -> std::process::Output {
    cmd.stdin(Stdio::null()).output().expect("run a command as another user")
}

fn chown(path: &Path, user: &User) {
    let status = Command::new("chown").arg(format!("{0}:{0}", user.name)).arg(path).status();
    assert!(status.is_ok_and(|s| s.success()), "chown {}", path.display());
}

/// Stages `setup` for victim `cu.a` and squatter `cu.b`; returns the dir (removed on drop) and
/// the running squatter.
fn stage(cu: &CrossUid, setup: Setup, scratch: &TempDir) -> (Created, Squatter) {
    let rt = PathBuf::from(format!("/tmp/jfgui-agent-{}", cu.a.uid));
    let run_user = PathBuf::from(format!("/run/user/{}", cu.a.uid));
    assert!(!run_user.exists(), "a fresh user has no {}", run_user.display());
    let _ = fs::remove_dir_all(&rt);
    let created = Created(rt.clone());
    if setup != Setup::SquatterOwnsTheDir {
        fs::create_dir(&rt).unwrap();
        chown(&rt, &cu.a);
        fs::set_permissions(&rt, fs::Permissions::from_mode(0o777)).unwrap();
    }
    let status = scratch.path().join("squatter.status");
    let mut cmd = cu.command_as(&cu.b, Path::new("/usr/bin/python3"));
    cmd.args(["-c", SQUATTER]).arg(&rt).arg("777").arg(&status);
    let proc = Proc::spawn(cmd, scratch.path().join("squatter.log"));
    let squatter = Squatter { proc, status };
    let up = wait_until(PATIENCE, || squatter.status.exists());
    assert!(up, "the squatter never listened: {}", squatter.proc.stderr());
    if setup == Setup::OurDirForeignListener {
        fs::set_permissions(&rt, fs::Permissions::from_mode(0o700)).unwrap();
    }
    let meta = fs::symlink_metadata(&rt).unwrap();
    let (owner, mode) = (meta.uid(), meta.mode() & 0o7777);
    let expected = match setup {
        Setup::SquatterOwnsTheDir => (cu.b.uid, 0o777),
        Setup::OurDirWritableByOthers => (cu.a.uid, 0o777),
        Setup::OurDirForeignListener => (cu.a.uid, 0o700),
    };
    assert_eq!((owner, mode), expected, "{setup:?}");
    let socket_owner = fs::symlink_metadata(rt.join("host.sock")).unwrap().uid();
    assert_eq!(socket_owner, cu.b.uid, "the sockets are the squatter's");
    (created, squatter)
}

/// What the refusal line must name for `setup`.
fn named(cu: &CrossUid, setup: Setup, rt: &Path) -> Vec<String> {
    match setup {
        Setup::SquatterOwnsTheDir => vec![
            format!("{} (owner uid {}, mode 0777)", rt.display(), cu.b.uid),
            format!("not by us (uid {})", cu.a.uid),
        ],
        Setup::OurDirWritableByOthers => {
            vec![format!("{} (owner uid {}, mode 0777)", rt.display(), cu.a.uid)]
        }
        Setup::OurDirForeignListener => vec![format!("runs as uid {}", cu.b.uid)],
    }
}

fn squatted(test: &str, setup: Setup) {
    let _wd = Watchdog::arm(Duration::from_secs(180));
    let cu = match CrossUid::setup() {
        Ok(cu) => cu,
        Err(reason) => return cannot_run(test, &reason),
    };
    let scratch = TempDir::new();
    chown(scratch.path(), &cu.b);
    let home = cu.home_for(&cu.a);
    let (rt, squatter) = stage(&cu, setup, &scratch);
    let must_name = named(&cu, setup, &rt.0);

    // The CLI: exit 5, one line naming the dir or the peer, nothing sent.
    let out = run_as(
        cu.command_as_bare(&cu.a, &cu.bin("jfgui-agent"), home.path()).args(["list", "--json"]),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(5), "{setup:?}: {stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    let reason = if setup == Setup::OurDirForeignListener {
        "untrusted_peer"
    } else {
        "untrusted_runtime_dir"
    };
    assert!(stderr.starts_with(&format!("jfgui-agent: error[{reason}]: ")), "{stderr}");
    for part in &must_name {
        assert!(stderr.contains(part.as_str()), "{setup:?}: {part:?} not in {stderr}");
    }
    let json: jfgui_tests::serde_json::Value =
        jfgui_tests::serde_json::from_slice(&out.stdout).expect("--json error on stdout");
    assert_eq!(json["error"]["data"]["reason"], reason, "{json}");
    assert_eq!(squatter.counts().1, 0, "the CLI sent bytes to the squatter");

    // The app: refuses, logs it, retries; never a byte to the squatter.
    let mut app = cu.command_as_bare(&cu.a, &cu.bin("jfgui-notepad"), home.path());
    app.arg("--agent-enable");
    let app = Proc::spawn(app, scratch.path().join("notepad.log"));
    let logged = wait_until(PATIENCE, || app.stderr().contains("refusing"));
    assert!(logged, "{setup:?}: no refusal logged: {}", app.stderr());
    // Long enough for several backoff steps (50 ms doubling up to 2 s).
    std::thread::sleep(Duration::from_secs(3));
    let log = app.stderr();
    for part in &must_name {
        assert!(log.contains(part.as_str()), "{setup:?}: {part:?} not in the app's log: {log}");
    }
    assert_eq!(log.matches("refusing").count(), 1, "one line while nothing changes: {log}");
    let (connections, bytes) = squatter.counts();
    assert_eq!(bytes, 0, "{setup:?}: the app sent {bytes} bytes to the squatter");
    if setup == Setup::OurDirForeignListener {
        // Only the peer check stops this one: the app connects, checks, and hangs up, again
        // at every backoff step.
        assert!(connections >= 3, "the app kept retrying: {connections} connections");
    } else {
        assert_eq!(connections, 0, "{setup:?}: a refused dir is never connected to");
    }

    // The squatter leaves; the victim's own daemon starts in the same place. The app, still
    // running, registers with it.
    drop(squatter);
    fs::remove_dir_all(&rt.0).unwrap();
    let mut daemon = cu.command_as_bare(&cu.a, &cu.bin("jfgui-agentd"), home.path());
    daemon.env("JFGUI_LOG", "info");
    let d = Daemon::start_logged(&rt.0, daemon, scratch.path().join("agentd.log"));
    let registered = wait_until(PATIENCE, || {
        d.apps().iter().any(|a| a["slug"] == "notepad" && a["enabled"] == true)
    });
    assert!(registered, "the app never registered with the real daemon: {}", app.stderr());
    let out = run_as(
        cu.command_as_bare(&cu.a, &cu.bin("jfgui-agent"), home.path()).args(["list", "--json"]),
    );
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("\"notepad\""));
}

#[test]
fn squatter_owns_the_fallback_dir() {
    squatted("squatter_owns_the_fallback_dir", Setup::SquatterOwnsTheDir);
}

#[test]
fn our_fallback_dir_writable_by_others() {
    squatted("our_fallback_dir_writable_by_others", Setup::OurDirWritableByOthers);
}

#[test]
fn our_private_dir_with_a_foreign_listener() {
    squatted("our_private_dir_with_a_foreign_listener", Setup::OurDirForeignListener);
}
