//! A client started with the environment the official MCP SDKs give
//! a stdio server (`HOME LOGNAME PATH SHELL TERM USER`, so no `XDG_RUNTIME_DIR`) must find the
//! daemon of the user's session through `/run/user/UID`. A throw-away user gets
//! a `/run/user/UID` (0700, as systemd-logind makes it), created and removed here; its daemon,
//! app, CLI and gateway all resolve the runtime dir with the one rule. Needs root; without it
//! the test fails unless `JFGUI_ALLOW_SKIP=1`.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use jfgui_tests::cli::{Session, run_command};
use jfgui_tests::serde_json::json;
use jfgui_tests::{Created, CrossUid, Daemon, Proc, TempDir, User, Watchdog, cannot_run};

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"run-user-test","version":"1"}}}"#;

/// `/run/user/UID` for `user`, 0700, removed on drop (and `/run/user` too if it was missing).
fn run_user_dir(user: &User) -> (Option<Created>, Created) {
    let base = PathBuf::from("/run/user");
    let made_base = if base.exists() {
        None
    } else {
        fs::create_dir_all(&base).unwrap();
        fs::set_permissions(&base, fs::Permissions::from_mode(0o755)).unwrap();
        Some(Created(base.clone()))
    };
    let dir = base.join(user.uid.to_string());
    assert!(!dir.exists(), "a fresh user has no {}", dir.display());
    fs::create_dir(&dir).unwrap();
    let dir = Created(dir);
    let status = Command::new("chown").arg(format!("{0}:{0}", user.name)).arg(&dir.0).status();
    assert!(status.is_ok_and(|s| s.success()));
    fs::set_permissions(&dir.0, fs::Permissions::from_mode(0o700)).unwrap();
    (made_base, dir)
}

#[test]
fn a_client_without_xdg_runtime_dir_finds_the_session_daemon_through_run_user() {
    let test = "a_client_without_xdg_runtime_dir_finds_the_session_daemon_through_run_user";
    let _wd = Watchdog::arm(Duration::from_secs(120));
    let cu = match CrossUid::setup() {
        Ok(cu) => cu,
        Err(reason) => return cannot_run(test, &reason),
    };
    let (_base, run_user) = run_user_dir(&cu.a);
    let rt = run_user.0.join("jfgui-agent");
    let home = cu.home_for(&cu.a);
    let logs = TempDir::new();
    let bare = |program: &str| cu.command_as_bare(&cu.a, &cu.bin(program), home.path());
    let agent = |args: &[&str]| {
        let mut cmd = bare("jfgui-agent");
        cmd.args(args);
        cmd
    };

    // Nothing running yet: the CLI says where it looked and how to start the daemon there.
    let r = run_command(agent(&["list"]), b"");
    r.assert_error(4, "daemon_not_running");
    assert!(r.stderr.contains(&format!("nothing listens in {}", rt.display())), "{}", r.stderr);
    assert!(r.stderr.contains("since XDG_RUNTIME_DIR is not set"), "{}", r.stderr);
    assert!(r.stderr.contains("systemctl --user start jfgui-agentd"), "{}", r.stderr);

    // The daemon, with the same bare environment, picks the same dir; an app started from a
    // desktop session (XDG_RUNTIME_DIR set) too.
    let mut daemon = bare("jfgui-agentd");
    daemon.env("JFGUI_LOG", "info");
    let d = Daemon::start_logged(&rt, daemon, logs.path().join("agentd.log"));
    assert_eq!(d.status()["runtimeDir"], json!(rt.display().to_string()));
    let mut app = bare("jfgui-notepad");
    app.arg("--agent-enable").env("XDG_RUNTIME_DIR", &run_user.0);
    let _app = Proc::spawn(app, logs.path().join("notepad.log"));
    d.wait_endpoint("notepad");

    let r = run_command(agent(&["list", "--json"]), b"");
    r.assert_code(0);
    assert!(r.stdout.contains("\"notepad\""), "{}", r.stdout);

    // The gateway as an MCP client starts it: stripped environment, MCP spoken.
    let mut s = Session::start(agent(&["stdio", "notepad", "--protocol", "mcp"]));
    s.send(INIT);
    let r = s.recv();
    assert_eq!(r["result"]["protocolVersion"], "2025-11-25", "{r}");
    s.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    s.send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"jfgui_state_inspect","arguments":{}}}"#);
    let r = s.recv();
    assert_eq!(r["id"], 2);
    assert!(r["result"]["structuredContent"]["revision"].is_u64(), "{r}");
    s.close_stdin();
    let (status, rest, stderr) = s.finish();
    assert!(status.success() && rest.is_empty(), "{status:?} {rest:?} {stderr}");
}
