//! Grants and who they are for: "always" in the app records one for the agent the daemon saw
//! calling, and the next call of that agent runs without asking until the grant is revoked;
//! the agent is the program behind our CLI or gateway (a launcher's path), never what a client
//! says; and a grants file that fails the ownership rule or does not parse is moved aside and
//! trusts no grant.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use jfgui_tests::cli::{Run, daemon_with_notepad, run_agent};
use jfgui_tests::consent::{
    audit_record, clear, document, final_state, gateway_saying, notepad_asking, revision,
    waiting_task,
};
use jfgui_tests::{
    CrossUid, Daemon, LineClient, PATIENCE, TempDir, Watchdog, agent, audit_dir, cannot_run,
    wait_until,
};
use serde_json::{Value, json};

fn run(rt: &Path, args: &[&str]) -> Run {
    let r = run_agent(rt, args, b"");
    r.assert_no_panic();
    r
}

fn grants(rt: &Path) -> Vec<Value> {
    let r = run(rt, &["grants", "--json"]);
    r.assert_code(0);
    r.json()["grants"].as_array().cloned().unwrap_or_default()
}

fn me() -> String {
    std::env::current_exe().unwrap().to_string_lossy().into_owned()
}

fn insert(endpoint: &Path) {
    let at = revision(endpoint);
    let mut c = LineClient::connect(endpoint).unwrap();
    let r = c
        .call(
            "actions/execute",
            json!({"protocolVersion": "1", "action": "document.text.insert",
                "input": {"text": "more"}, "expectedRevision": at}),
        )
        .unwrap();
    assert!(r.get("result").is_some(), "{r}");
}

#[test]
fn always_records_a_grant_and_the_next_call_runs_unasked_until_revoked() {
    let _w = Watchdog::arm(PATIENCE * 3);
    let dir = TempDir::new();
    let rt = dir.rt();
    let (_daemon, _app, mut terminal, endpoint) = notepad_asking(&rt, &[]);
    let (mut client, response) = clear(&endpoint);
    let id = waiting_task(&response);
    assert!(terminal.wait_for("[a]lways allow"), "always is offered: {:?}", terminal.text());
    terminal.type_line("a");
    let task = final_state(&mut client, &id);
    assert_eq!(task["consent"]["answer"], "allow_always", "{task}");
    let listed = grants(&rt);
    assert_eq!(listed.len(), 1, "{listed:?}");
    let g = &listed[0];
    assert_eq!(
        (g["agent"].as_str(), g["app"].as_str(), g["action"].as_str(), g["by"].as_str()),
        (Some(me().as_str()), Some("Notepad"), Some("document.clear"), Some("prompt")),
        "{g}"
    );
    let file = fs::metadata(audit_dir(&rt).join("grants.json")).unwrap();
    assert_eq!(file.permissions().mode() & 0o777, 0o600);

    // The next call runs at once, no prompt: the answer is the output itself.
    insert(&endpoint);
    let (_c, response) = clear(&endpoint);
    assert_eq!(response["result"]["output"]["length"], 0, "{response}");
    assert_eq!(terminal.text().matches("wants to").count(), 1, "asked only once");
    let record = audit_record(&rt, |r| r["consent"]["asked"] == false);
    assert_eq!(record["consent"]["by"], format!("grant({})", g["id"]), "{record}");

    // Revoked: it asks again.
    run(&rt, &["grants", "revoke", "--all"]).assert_code(0);
    assert!(grants(&rt).is_empty());
    insert(&endpoint);
    let (mut client, response) = clear(&endpoint);
    let id = waiting_task(&response);
    assert!(wait_until(PATIENCE, || terminal.text().matches("wants to").count() == 2));
    terminal.type_line("n");
    assert_eq!(final_state(&mut client, &id)["error"]["reason"], "denied_by_user");
    assert_eq!(document(&endpoint).0, "more");
}

/// A copy of `/bin/sh` under a name of its own: a program that starts our CLI as its child,
/// as an agent does.
fn launcher(dir: &Path) -> PathBuf {
    let path = dir.join("launcher");
    fs::copy("/bin/sh", &path).unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// `launcher` running `jfgui-agent call notepad document.clear` as its child.
fn launched_clear(rt: &Path, launcher: &Path) -> std::process::Child {
    Command::new(launcher)
        .args([
            "-c",
            r#""$1" call notepad document.clear --expected-revision auto --json; exit $?"#,
            "launcher",
        ])
        .arg(agent())
        .env("JFGUI_RUNTIME_DIR", rt)
        .env_remove("XDG_RUNTIME_DIR")
        .env("JFGUI_AUDIT_DIR", audit_dir(rt))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

#[test]
fn the_agent_is_the_launcher_behind_the_cli_and_what_a_client_says_never_matches() {
    let _w = Watchdog::arm(PATIENCE * 4);
    let dir = TempDir::new();
    let rt = dir.rt();
    let launcher = launcher(dir.path());
    let (_daemon, _app, mut terminal, endpoint) = notepad_asking(&rt, &[]);

    let call = launched_clear(&rt, &launcher);
    assert!(
        terminal.wait_for(&format!("who: {}", launcher.display())),
        "the prompt names the launcher, not jfgui-agent: {:?}",
        terminal.text()
    );
    assert!(terminal.text().contains("launcher wants to"), "{:?}", terminal.text());
    terminal.type_line("n");
    let out = call.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let record = audit_record(&rt, |r| r["consent"]["answer"] == "deny");
    assert_eq!(record["client"]["agent"]["exe"], launcher.to_str().unwrap(), "{record}");
    assert!(record["client"]["exe"].as_str().unwrap().ends_with("jfgui-agent"), "{record}");
    let log = run(&rt, &["log", "--client", "launcher", "--json"]);
    assert!(
        log.json_lines().iter().any(|r| r["consent"]["answer"] == "deny"),
        "the log finds the launcher's calls: {}",
        log.stdout
    );

    // Granted to the launcher: its call runs at once.
    let exe = launcher.to_str().unwrap();
    run(&rt, &["grants", "allow", "Notepad", "document.clear", "--agent", exe]).assert_code(0);
    let out = launched_clear(&rt, &launcher).wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(document(&endpoint).0, "");

    // An MCP client that says it is the launcher is still asked.
    insert(&endpoint);
    let mut s = gateway_saying(&rt, exe);
    s.send(
        &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "jfgui_actions_execute", "arguments": {"action": "document.clear",
        "expectedRevision": revision(&endpoint)}}})
        .to_string(),
    );
    let answer = s.recv();
    assert_eq!(
        answer["result"]["structuredContent"]["task"]["awaiting"], "confirmation",
        "{answer}"
    );
    assert!(
        terminal.wait_for(&format!("who: {} (says it is \"{exe} 1\")", me())),
        "the prompt names this program, beside what the client says: {:?}",
        terminal.text()
    );
    terminal.type_line("n");
    drop(s);
    assert_eq!(document(&endpoint).0, "more");
}

/// A `grants.json` granting this test program `document.clear` of Notepad.
fn grant_file() -> String {
    json!({"grants": [{"id": 1, "agent": me(), "app": "Notepad", "action": "document.clear",
        "created": "2026-12-01T00:00:00.000Z", "by": "cli"}]})
    .to_string()
}

fn state_dir(rt: &Path) -> PathBuf {
    let dir = audit_dir(rt);
    fs::create_dir_all(&dir).unwrap();
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o700)).unwrap();
    dir
}

#[test]
fn a_grants_file_that_fails_the_rules_is_moved_aside_and_every_call_asks() {
    let _w = Watchdog::arm(PATIENCE * 12);
    let good = grant_file();
    let duplicate = good.replacen(r#"{"grants":"#, r#"{"grants":[],"grants":"#, 1);
    let huge = format!("{},\"pad\":\"{}\"}}", &good[..good.len() - 1], "x".repeat(10 << 20));
    type Fault = Box<dyn Fn(&Path)>;
    let write = |text: String, mode: u32| -> Fault {
        Box::new(move |file: &Path| {
            fs::write(file, &text).unwrap();
            fs::set_permissions(file, fs::Permissions::from_mode(mode)).unwrap();
        })
    };
    let cases: Vec<(&str, Fault, bool)> = vec![
        ("trusted", write(good.clone(), 0o600), false),
        ("group-writable", write(good.clone(), 0o620), true),
        ("world-writable", write(good.clone(), 0o606), true),
        ("truncated", write(good[..good.len() / 2].to_string(), 0o600), true),
        ("duplicate keys", write(duplicate, 0o600), true),
        ("10 MiB", write(huge, 0o600), true),
        (
            "another owner",
            Box::new({
                let good = good.clone();
                move |file: &Path| {
                    fs::write(file, &good).unwrap();
                    fs::set_permissions(file, fs::Permissions::from_mode(0o600)).unwrap();
                    let status = Command::new("chown").arg("65534").arg(file).status().unwrap();
                    assert!(status.success(), "chown (the suite runs as root)");
                }
            }),
            true,
        ),
        (
            "a symlink",
            Box::new({
                let good = good.clone();
                move |file: &Path| {
                    let real = file.with_file_name("elsewhere.json");
                    fs::write(&real, &good).unwrap();
                    fs::set_permissions(&real, fs::Permissions::from_mode(0o600)).unwrap();
                    std::os::unix::fs::symlink(&real, file).unwrap();
                }
            }),
            true,
        ),
    ];
    for (what, fault, refused) in cases {
        let dir = TempDir::new();
        let rt = dir.rt();
        let file = state_dir(&rt).join("grants.json");
        fault(&file);
        let (daemon, _app) = daemon_with_notepad(&rt, &["--text", "hello", "--confirm", "deny"]);
        let endpoint = rt.join("apps/notepad.sock");
        let (mut client, response) = clear(&endpoint);
        if refused {
            let id = waiting_task(&response);
            assert_eq!(
                final_state(&mut client, &id)["error"]["reason"],
                "denied_by_user",
                "{what}"
            );
            assert_eq!(document(&endpoint).0, "hello", "{what}");
            assert!(
                daemon.proc.wait_stderr("grants: file refused"),
                "{what}: {}",
                daemon.proc.stderr()
            );
            assert!(grants(&rt).is_empty(), "{what}");
            let aside = fs::read_dir(audit_dir(&rt))
                .unwrap()
                .filter_map(Result::ok)
                .any(|e| e.file_name().to_string_lossy().starts_with("grants.json.untrusted-"));
            assert!(aside, "{what}: moved aside");
        } else {
            assert_eq!(response["result"]["output"]["length"], 0, "{what}: {response}");
        }
    }
}

#[test]
fn a_grants_file_of_another_user_is_not_trusted() {
    let _w = Watchdog::arm(PATIENCE * 4);
    let cu = match CrossUid::setup() {
        Ok(cu) => cu,
        Err(reason) => return cannot_run("a_grants_file_of_another_user_is_not_trusted", &reason),
    };
    let home = cu.home_for(&cu.a);
    let rt = home.path().join("rt");
    let state = home.path().join("state");
    fs::create_dir(&state).unwrap();
    fs::set_permissions(&state, fs::Permissions::from_mode(0o700)).unwrap();
    let chown = |who: &str, path: &Path| {
        let ok = Command::new("chown").arg(format!("{who}:{who}")).arg(path).status().unwrap();
        assert!(ok.success());
    };
    chown(&cu.a.name, &state);
    // Readable by the daemon's user, so it is the owner that is refused.
    let file = state.join("grants.json");
    fs::write(&file, grant_file()).unwrap();
    fs::set_permissions(&file, fs::Permissions::from_mode(0o644)).unwrap();
    chown(&cu.b.name, &file);
    let mut cmd = cu.command_as(&cu.a, &cu.bin("jfgui-agentd"));
    cmd.env("JFGUI_RUNTIME_DIR", &rt)
        .env_remove("XDG_RUNTIME_DIR")
        .env("JFGUI_AUDIT_DIR", &state)
        .env("JFGUI_LOG", "info");
    let daemon = Daemon::start_command(&rt, cmd);
    assert!(daemon.proc.wait_stderr("grants: file refused"), "{}", daemon.proc.stderr());
    assert!(
        daemon.proc.stderr().contains(&format!("owned by uid {}", cu.b.uid)),
        "{}",
        daemon.proc.stderr()
    );
    let out = cu
        .command_as(&cu.a, &cu.bin("jfgui-agent"))
        .args(["grants", "--json"])
        .env("JFGUI_RUNTIME_DIR", &rt)
        .env_remove("XDG_RUNTIME_DIR")
        .output()
        .unwrap();
    let listed: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|_| panic!("{out:?}"));
    assert_eq!(listed["grants"], json!([]), "no grant of the other user's file applies");
    assert!(!file.exists(), "moved aside");
}
