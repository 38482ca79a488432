//! The runtime dir and the files in it, against the real
//! `jfgui-agentd` binary. Foreign owners are made with `chown` to an unused uid (the suite
//! runs as root in CI; as another user the chown cases fail unless `JFGUI_ALLOW_SKIP=1`).

use std::fs;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::Path;
use std::process::Command;
use std::thread;
use std::time::Duration;

use jfgui_tests::{
    Daemon, PATIENCE, TempDir, Watchdog, cannot_run, daemon_command, mode, my_uid, run_daemon,
};

/// The documented status for a refused runtime dir or path (`jfgui-agentd --help`).
const REFUSED: i32 = 3;
/// An unused uid to own "foreign" directories.
const STRANGER: u32 = 4242;

fn chown(path: &Path, uid: u32) {
    let ok = Command::new("chown")
        .arg("-h")
        .arg(uid.to_string())
        .arg(path)
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "chown {uid} {}", path.display());
}

fn chmod(path: &Path, mode: u32) {
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
}

fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn assert_refused(rt: &Path, args: &[&str], needles: &[&str]) -> String {
    let (status, stderr) = run_daemon(daemon_command(rt, args));
    assert_eq!(status.code(), Some(REFUSED), "status {status}; stderr:\n{stderr}");
    for needle in needles {
        assert!(stderr.contains(needle), "stderr lacks {needle:?}:\n{stderr}");
    }
    stderr
}

#[test]
fn dir_owned_by_someone_else_is_refused_untouched() {
    let _wd = Watchdog::arm(Duration::from_secs(120));
    if my_uid() != 0 {
        return cannot_run(
            "dir_owned_by_someone_else_is_refused_untouched",
            "chown to another uid needs root (run the suite as root)",
        );
    }
    for m in [0o777, 0o700] {
        let tmp = TempDir::new();
        let rt = tmp.rt();
        fs::create_dir(&rt).unwrap();
        chmod(&rt, m);
        chown(&rt, STRANGER);
        let rt_s = rt.display().to_string();
        assert_refused(&rt, &[], &[&rt_s, &format!("uid {STRANGER}"), &format!("{m:04o}")]);
        assert_eq!(mode(&rt), m, "no chmod on a foreign dir");
        assert!(entries(&rt).is_empty(), "nothing created inside: {:?}", entries(&rt));
    }
}

#[test]
fn own_dir_modes() {
    let _wd = Watchdog::arm(Duration::from_secs(120));
    for m in [0o777, 0o770, 0o757, 0o1777, 0o722] {
        let tmp = TempDir::new();
        let rt = tmp.rt();
        fs::create_dir(&rt).unwrap();
        chmod(&rt, m);
        let rt_s = rt.display().to_string();
        assert_refused(&rt, &[], &[&rt_s, "writable by group or others", &format!("{m:04o}")]);
        assert_eq!(mode(&rt), m, "a refused dir keeps its mode");
        assert!(entries(&rt).is_empty(), "nothing created inside {m:o}: {:?}", entries(&rt));
    }
    // Ours with only read/search bits for others: tightened to 0700 with a warning.
    for m in [0o755, 0o750, 0o705] {
        let tmp = TempDir::new();
        let rt = tmp.rt();
        fs::create_dir(&rt).unwrap();
        chmod(&rt, m);
        let d = Daemon::start(&rt, &[]);
        assert_eq!(mode(&rt), 0o700);
        assert!(d.proc.wait_stderr("tightened it to 0700"), "{}", d.proc.stderr());
        d.assert_alive();
    }
    let tmp = TempDir::new();
    let rt = tmp.rt();
    fs::create_dir(&rt).unwrap();
    chmod(&rt, 0o700);
    let d = Daemon::start(&rt, &[]);
    assert_eq!(mode(&rt), 0o700);
    d.assert_alive();
}

#[test]
fn symlinked_runtime_dir_is_refused_parent_symlink_is_fine() {
    let _wd = Watchdog::arm(Duration::from_secs(120));
    let root = my_uid() == 0;
    for foreign in [false, true] {
        if foreign && !root {
            cannot_run(
                "symlinked_runtime_dir_is_refused_parent_symlink_is_fine (foreign target)",
                "chown to another uid needs root (run the suite as root)",
            );
            continue;
        }
        let tmp = TempDir::new();
        let target = tmp.path().join("target");
        fs::create_dir(&target).unwrap();
        chmod(&target, 0o700);
        if foreign {
            chown(&target, STRANGER);
        }
        let link = tmp.path().join("link");
        symlink(&target, &link).unwrap();
        let link_s = link.display().to_string();
        assert_refused(&link, &[], &[&link_s, "symlink"]);
        assert!(entries(&target).is_empty(), "nothing created in the target");
        assert!(fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
    }
    // A symlink in a parent component is accepted (macOS /var is one).
    let tmp = TempDir::new();
    let real = tmp.path().join("real");
    fs::create_dir(&real).unwrap();
    symlink(&real, tmp.path().join("p")).unwrap();
    let rt = tmp.path().join("p").join("rt");
    let d = Daemon::start(&rt, &[]);
    assert_eq!(d.status()["runtimeDir"], rt.display().to_string());
    assert!(real.join("rt").join("agentd.sock").exists());
}

#[test]
fn planted_entries_are_never_followed_or_removed() {
    let _wd = Watchdog::arm(Duration::from_secs(120));
    let tmp = TempDir::new();
    let important = tmp.path().join("important.txt");
    fs::write(&important, "keep me\n").unwrap();

    type Plant = fn(&Path, &Path);
    let cases: [(&str, Plant, &str); 5] = [
        ("agentd.sock", |rt, imp| symlink(imp, rt.join("agentd.sock")).unwrap(), "symlink"),
        ("agentd.lock", |rt, imp| symlink(imp, rt.join("agentd.lock")).unwrap(), "symlink"),
        ("host.sock", |rt, _| fs::write(rt.join("host.sock"), "planted").unwrap(), "regular file"),
        (
            "agentd.lock",
            |rt, _| {
                let ok = Command::new("mkfifo")
                    .arg(rt.join("agentd.lock"))
                    .status()
                    .is_ok_and(|s| s.success());
                assert!(ok, "mkfifo");
            },
            "FIFO",
        ),
        ("apps", |rt, _| fs::write(rt.join("apps"), "planted").unwrap(), "regular file"),
    ];
    for (name, plant, kind) in cases {
        let rt = tmp.path().join(format!("rt-{}", name.replace('.', "-")));
        let _ = fs::remove_dir_all(&rt);
        fs::create_dir(&rt).unwrap();
        chmod(&rt, 0o700);
        plant(&rt, &important);
        let before = fs::symlink_metadata(rt.join(name)).unwrap();
        let planted = rt.join(name).display().to_string();
        // run_daemon's PATIENCE bound also proves a FIFO lock cannot block start-up.
        assert_refused(&rt, &[], &[&planted, kind]);
        let after = fs::symlink_metadata(rt.join(name)).expect("the planted entry is still there");
        assert_eq!(before.file_type(), after.file_type(), "{name} untouched");
        assert_eq!(
            fs::read_to_string(&important).unwrap(),
            "keep me\n",
            "{name}: target unchanged"
        );
        assert!(
            !rt.join("agentd.sock").exists() || name == "agentd.sock",
            "no socket bound after refusing {name}"
        );
        let _ = fs::remove_dir_all(&rt);
    }
}

#[test]
fn stale_lock_file_and_stale_sockets_are_taken_over() {
    let _wd = Watchdog::arm(Duration::from_secs(60));
    let tmp = TempDir::new();
    let rt = tmp.rt();
    fs::create_dir(&rt).unwrap();
    chmod(&rt, 0o700);
    fs::write(rt.join("agentd.lock"), "999999\n").unwrap();
    drop(std::os::unix::net::UnixListener::bind(rt.join("agentd.sock")).unwrap());
    fs::create_dir(rt.join("apps")).unwrap();
    chmod(&rt.join("apps"), 0o700);
    drop(std::os::unix::net::UnixListener::bind(rt.join("apps/ghost.sock")).unwrap());
    fs::write(rt.join("apps/notes.txt"), "not a socket").unwrap();
    let d = Daemon::start(&rt, &[]);
    d.assert_alive();
    assert!(!rt.join("apps/ghost.sock").exists(), "stale endpoint socket removed");
    assert_eq!(
        fs::read_to_string(rt.join("apps/notes.txt")).unwrap(),
        "not a socket",
        "non-socket kept"
    );
    assert_eq!(
        fs::read_to_string(rt.join("agentd.lock")).unwrap().trim(),
        d.proc.pid().to_string()
    );
    assert!(d.apps().is_empty());
}

#[test]
fn modes_do_not_depend_on_the_umask() {
    let _wd = Watchdog::arm(Duration::from_secs(120));
    for umask in ["000", "077", "022"] {
        let tmp = TempDir::new();
        let rt = tmp.rt();
        let watch_rt = rt.clone();
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let stop2 = stop.clone();
        // A tight stat loop during start-up: no node may ever be seen wider than allowed.
        let watcher = thread::spawn(move || {
            let mut seen = Vec::new();
            while !stop2.load(std::sync::atomic::Ordering::Relaxed) {
                for (name, max) in [
                    ("", 0o700),
                    ("agentd.sock", 0o600),
                    ("host.sock", 0o600),
                    ("agentd.lock", 0o600),
                    ("apps", 0o700),
                ] {
                    let p = if name.is_empty() { watch_rt.clone() } else { watch_rt.join(name) };
                    if let Ok(m) = fs::symlink_metadata(&p) {
                        let bits = m.permissions().mode() & 0o7777;
                        if bits & !max != 0 {
                            seen.push(format!("{} {bits:o}", p.display()));
                        }
                    }
                }
            }
            seen
        });
        let mut cmd = Command::new("sh");
        cmd.arg("-c")
            .arg(format!("umask {umask}; exec \"$0\""))
            .arg(jfgui_tests::agentd())
            .env("JFGUI_RUNTIME_DIR", &rt)
            .env_remove("XDG_RUNTIME_DIR");
        let d = Daemon::start_command(&rt, cmd);
        d.assert_alive();
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let wider = watcher.join().unwrap();
        assert!(wider.is_empty(), "umask {umask}: seen wider than allowed: {wider:?}");
        assert_eq!(mode(&rt), 0o700);
        assert_eq!(mode(&rt.join("apps")), 0o700);
        for f in ["agentd.sock", "host.sock", "agentd.lock"] {
            assert_eq!(mode(&rt.join(f)), 0o600, "umask {umask}: {f}");
        }
    }
}

#[test]
fn socket_path_too_long_is_refused_before_creating_anything() {
    let _wd = Watchdog::arm(Duration::from_secs(60));
    let tmp = TempDir::new();
    let rt = tmp.path().join("d".repeat(100));
    let stderr = assert_refused(&rt, &[], &["108-byte", "sun_path"]);
    assert!(stderr.contains(&rt.display().to_string()), "{stderr}");
    assert!(!rt.exists(), "nothing created for a refused path");
    // Fits the control socket but leaves no room for endpoint slugs: refused too.
    let rt =
        tmp.path().join("e".repeat(107 - tmp.path().as_os_str().len() - 1 - "/agentd.sock".len()));
    assert_refused(&rt, &[], &["apps/xxxxxxxx.sock", "108-byte"]);
}

#[test]
fn unusable_environment_is_refused_not_replaced() {
    let _wd = Watchdog::arm(Duration::from_secs(60));
    for (var, value) in [
        ("JFGUI_RUNTIME_DIR", "rel/dir"),
        ("JFGUI_RUNTIME_DIR", ""),
        ("XDG_RUNTIME_DIR", "relative"),
    ] {
        let mut cmd = Command::new(jfgui_tests::agentd());
        cmd.env_remove("JFGUI_RUNTIME_DIR").env_remove("XDG_RUNTIME_DIR").env(var, value);
        let (status, stderr) = run_daemon(cmd);
        assert_eq!(status.code(), Some(REFUSED), "{var}={value:?}: {stderr}");
        assert!(stderr.contains(var) && stderr.contains("not an absolute path"), "{stderr}");
    }
    let (status, stderr) = run_daemon({
        let mut cmd = Command::new(jfgui_tests::agentd());
        cmd.args(["--runtime-dir", "relative/rt"]);
        cmd
    });
    assert_eq!(status.code(), Some(REFUSED), "{stderr}");
    assert!(stderr.contains("absolute"), "{stderr}");

    // XDG_RUNTIME_DIR alone: the daemon uses XDG/jfgui-agent and says so in status.
    let tmp = TempDir::new();
    let mut cmd = Command::new(jfgui_tests::agentd());
    cmd.env_remove("JFGUI_RUNTIME_DIR").env("XDG_RUNTIME_DIR", tmp.path());
    let rt = tmp.path().join("jfgui-agent");
    let d = Daemon::start_command(&rt, cmd);
    assert_eq!(d.status()["runtimeDir"], rt.display().to_string());
    assert!(jfgui_tests::wait_until(PATIENCE, || rt.join("host.sock").exists()));
}

#[test]
fn swapping_the_dir_for_a_symlink_never_redirects_the_daemon() {
    let _wd = Watchdog::arm(Duration::from_secs(240));
    let tmp = TempDir::new();
    let target = tmp.path().join("target");
    fs::create_dir(&target).unwrap();
    chmod(&target, 0o700);
    let rt = tmp.path().join("rt");
    let real = tmp.path().join("rt.real");
    let link = tmp.path().join("rt.link");
    fs::create_dir(&real).unwrap();
    chmod(&real, 0o700);
    symlink(&target, &link).unwrap();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    // rename(2) of two prepared names as fast as possible: `rt` is alternately the real dir
    // and a symlink to `target`.
    let swapper = {
        let (stop, rt, real, link) = (stop.clone(), rt.clone(), real.clone(), link.clone());
        thread::spawn(move || {
            let mut swaps = 0u64;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let _ = fs::rename(&real, &rt);
                let _ = fs::rename(&rt, &real);
                let _ = fs::rename(&link, &rt);
                let _ = fs::rename(&rt, &link);
                swaps += 1;
            }
            swaps
        })
    };
    let mut started = 0;
    for _ in 0..60 {
        let mut cmd = daemon_command(&rt, &["--dir-check", "0"]);
        cmd.stdin(std::process::Stdio::null());
        let log = tmp.path().join("d.log");
        let mut p = jfgui_tests::Proc::spawn(cmd, log);
        // Either it refuses at once, or it runs; then stop it.
        if p.wait_exit(Duration::from_millis(200)).is_none() {
            started += 1;
            p.signal("TERM");
            assert!(p.wait_exit(PATIENCE).is_some(), "stops on SIGTERM");
        }
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let swaps = swapper.join().unwrap();
    assert!(swaps > 0);
    eprintln!("a7: {started} of 60 daemons started during {swaps} swaps");
    assert!(entries(&target).is_empty(), "the symlink target stayed empty ({started} daemons ran)");
}
