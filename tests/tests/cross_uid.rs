//! Other users against the peer check and the directory mode, and root admitted, with real
//! users: the daemon runs as
//! a throw-away user `jfa…`, the attacker as `jfb…` (`setpriv --reuid`). Without root these
//! tests fail naming the reason (unless `JFGUI_ALLOW_SKIP=1`); running them as root without
//! switching user would prove nothing (root bypasses file modes).

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::Duration;

use jfgui_tests::{CrossUid, Daemon, PATIENCE, Proc, Watchdog, cannot_run, fd_count, wait_until};

const STATUS: &str = r#"{"jsonrpc":"2.0","id":1,"method":"daemon/status"}"#;

fn daemon_as_a(cu: &CrossUid, rt: &Path) -> Daemon {
    let mut cmd = cu.command_as(&cu.a, &cu.bin("jfgui-agentd"));
    cmd.env("JFGUI_RUNTIME_DIR", rt).env_remove("XDG_RUNTIME_DIR").env("JFGUI_LOG", "info");
    Daemon::start_command(rt, cmd)
}

#[test]
fn other_user_is_stopped_by_the_directory_mode() {
    let _wd = Watchdog::arm(Duration::from_secs(120));
    let cu = match CrossUid::setup() {
        Ok(cu) => cu,
        Err(reason) => {
            return cannot_run("other_user_is_stopped_by_the_directory_mode", &reason);
        }
    };
    let home = cu.home_for(&cu.a);
    let rt = home.path().join("rt");
    let d = daemon_as_a(&cu, &rt);
    for socket in ["agentd.sock", "host.sock"] {
        let got = cu.probe_as(&cu.b, &rt.join(socket), STATUS);
        assert_eq!(got, "ERR:EACCES", "{socket}");
    }
    // The daemon's own user is served.
    let got = cu.probe_as(&cu.a, &d.control(), STATUS);
    assert!(got.starts_with("DATA:") && got.contains("\"result\""), "{got}");
}

#[test]
fn other_user_is_stopped_by_the_peer_check() {
    let _wd = Watchdog::arm(Duration::from_secs(120));
    let cu = match CrossUid::setup() {
        Ok(cu) => cu,
        Err(reason) => return cannot_run("other_user_is_stopped_by_the_peer_check", &reason),
    };
    let home = cu.home_for(&cu.a);
    let rt = home.path().join("rt");
    let d = daemon_as_a(&cu, &rt);
    let mut app = cu.command_as(&cu.a, &cu.bin("jfgui-notepad"));
    app.arg("--agent-enable").env("JFGUI_RUNTIME_DIR", &rt).env_remove("XDG_RUNTIME_DIR");
    let _app = Proc::spawn(app, home.path().join("notepad.log"));
    let endpoint = d.wait_endpoint("notepad");
    let pid = d.proc.pid();
    d.assert_alive();
    assert!(wait_until(PATIENCE, || fd_count(pid) > 0));
    // Taken while the probe connection may still be open: "no leak" means at most this.
    let baseline = fd_count(pid);
    // Loosen the filesystem layer on purpose (ssh-agent's regress trick).
    fs::set_permissions(&rt, fs::Permissions::from_mode(0o711)).unwrap();
    fs::set_permissions(rt.join("apps"), fs::Permissions::from_mode(0o711)).unwrap();
    let sockets = [rt.join("agentd.sock"), rt.join("host.sock"), endpoint.clone()];
    for socket in &sockets {
        fs::set_permissions(socket, fs::Permissions::from_mode(0o666)).unwrap();
    }
    let info = r#"{"jsonrpc":"2.0","id":1,"method":"agent/info","params":{"protocolVersion":"1"}}"#;
    for socket in &sockets {
        let line = if *socket == endpoint { info } else { STATUS };
        let got = cu.probe_as(&cu.b, socket, line);
        assert_eq!(got, "EOF", "{}: closed before anything is read", socket.display());
    }
    let rejected = |log: &str| {
        log.lines().filter(|l| l.contains("closed a connection from another user")).count()
    };
    // The log is written from a background thread: wait for the third line.
    wait_until(PATIENCE, || rejected(&d.proc.stderr()) >= 3);
    let log = d.proc.stderr();
    assert_eq!(rejected(&log), 3, "{log}");
    assert!(
        log.contains(&format!("peer_uid={}", cu.b.uid))
            && log.contains(&format!("daemon_uid={}", cu.a.uid)),
        "{log}"
    );
    let got = cu.probe_as(&cu.a, &d.control(), STATUS);
    assert!(got.contains("\"result\""), "the daemon's user is still served: {got}");
    assert!(
        wait_until(PATIENCE, || fd_count(pid) <= baseline),
        "fds back to {baseline}: {}",
        fd_count(pid)
    );
}

#[test]
fn root_is_admitted_by_design() {
    let _wd = Watchdog::arm(Duration::from_secs(120));
    let cu = match CrossUid::setup() {
        Ok(cu) => cu,
        Err(reason) => return cannot_run("root_is_admitted_by_design", &reason),
    };
    let home = cu.home_for(&cu.a);
    let rt = home.path().join("rt");
    let d = daemon_as_a(&cu, &rt);
    // This test process is root (setup checked it); the daemon runs as jfa and answers it.
    let status = d.status();
    assert_eq!(status["pid"], d.proc.pid());
    assert!(
        !d.proc.stderr().contains("closed a connection from another user"),
        "{}",
        d.proc.stderr()
    );
}

#[test]
fn xdg_runtime_dir_of_another_user_is_refused() {
    let _wd = Watchdog::arm(Duration::from_secs(120));
    let cu = match CrossUid::setup() {
        Ok(cu) => cu,
        Err(reason) => {
            return cannot_run("xdg_runtime_dir_of_another_user_is_refused", &reason);
        }
    };
    // jfb's private XDG dir: jfa cannot create its runtime dir inside; a pre-created one owned
    // by jfb is refused by owner.
    let xdg = cu.home_for(&cu.b);
    fs::set_permissions(xdg.path(), fs::Permissions::from_mode(0o700)).unwrap();
    let mut cmd = cu.command_as(&cu.a, &cu.bin("jfgui-agentd"));
    cmd.env_remove("JFGUI_RUNTIME_DIR").env("XDG_RUNTIME_DIR", xdg.path());
    let (status, stderr) = jfgui_tests::run_daemon(cmd);
    assert_eq!(status.code(), Some(3), "{stderr}");
    assert!(stderr.contains(&xdg.path().join("jfgui-agent").display().to_string()), "{stderr}");

    fs::set_permissions(xdg.path(), fs::Permissions::from_mode(0o755)).unwrap();
    let squatted = xdg.path().join("jfgui-agent");
    fs::create_dir(&squatted).unwrap();
    fs::set_permissions(&squatted, fs::Permissions::from_mode(0o700)).unwrap();
    let ok = std::process::Command::new("chown").arg(&cu.b.name).arg(&squatted).status();
    assert!(ok.is_ok_and(|s| s.success()));
    let mut cmd = cu.command_as(&cu.a, &cu.bin("jfgui-agentd"));
    cmd.env_remove("JFGUI_RUNTIME_DIR").env("XDG_RUNTIME_DIR", xdg.path());
    let (status, stderr) = jfgui_tests::run_daemon(cmd);
    assert_eq!(status.code(), Some(3), "{stderr}");
    assert!(stderr.contains(&format!("owned by uid {}", cu.b.uid)), "{stderr}");
    assert!(fs::read_dir(&squatted).unwrap().next().is_none(), "nothing created inside");
}
