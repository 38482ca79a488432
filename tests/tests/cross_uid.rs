//! FAULTS A1, A2 and the root decision (S11) with real users (FAULTS §0.7): the daemon runs as
//! a throw-away user `jfa…`, the attacker as `jfb…` (`setpriv --reuid`). Without root these
//! tests print SKIPPED with the reason; running them as root without switching user would
//! prove nothing (root bypasses file modes).

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::Duration;

use jfgui_tests::{CrossUid, Daemon, PATIENCE, Watchdog, fd_count, skipped, wait_until};

const STATUS: &str = r#"{"jsonrpc":"2.0","id":1,"method":"daemon/status"}"#;

fn daemon_as_a(cu: &CrossUid, rt: &Path) -> Daemon {
    let mut cmd = cu.command_as(&cu.a, &cu.bin("jfgui-agentd"));
    cmd.env("JFGUI_RUNTIME_DIR", rt).env_remove("XDG_RUNTIME_DIR").env("JFGUI_LOG", "info");
    Daemon::start_command(rt, cmd)
}

#[test]
fn a2_other_user_is_stopped_by_the_directory_mode() {
    let _wd = Watchdog::arm(Duration::from_secs(120));
    let cu = match CrossUid::setup() {
        Ok(cu) => cu,
        Err(reason) => return skipped("a2_other_user_is_stopped_by_the_directory_mode", &reason),
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
fn a1_other_user_is_stopped_by_the_peer_check() {
    let _wd = Watchdog::arm(Duration::from_secs(120));
    let cu = match CrossUid::setup() {
        Ok(cu) => cu,
        Err(reason) => return skipped("a1_other_user_is_stopped_by_the_peer_check", &reason),
    };
    let home = cu.home_for(&cu.a);
    let rt = home.path().join("rt");
    let d = daemon_as_a(&cu, &rt);
    let pid = d.proc.pid();
    d.assert_alive();
    assert!(wait_until(PATIENCE, || fd_count(pid) > 0));
    // Taken while the probe connection may still be open: "no leak" means at most this.
    let baseline = fd_count(pid);
    // Loosen the filesystem layer on purpose (ssh-agent's regress trick).
    fs::set_permissions(&rt, fs::Permissions::from_mode(0o711)).unwrap();
    for socket in ["agentd.sock", "host.sock"] {
        fs::set_permissions(rt.join(socket), fs::Permissions::from_mode(0o666)).unwrap();
    }
    for socket in ["agentd.sock", "host.sock"] {
        let got = cu.probe_as(&cu.b, &rt.join(socket), STATUS);
        assert_eq!(got, "EOF", "{socket}: closed before anything is read or answered");
    }
    let log = d.proc.stderr();
    let rejected =
        log.lines().filter(|l| l.contains("closed a connection from another user")).count();
    assert_eq!(rejected, 2, "{log}");
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
        Err(reason) => return skipped("root_is_admitted_by_design", &reason),
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
