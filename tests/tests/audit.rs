//! The audit log, with the real daemon, the fault-injecting test app and the real
//! CLI: which calls are recorded and exactly how, the files on disk (modes, rotation), a log
//! that cannot be written, and `jfgui-agent log` (filters, `--follow`).
//!
//! "Exactly the expected records": the writer keeps the order of the calls, so each test ends
//! with a marker write and waits for its record; everything before it is then in the file.

use std::path::{Path, PathBuf};

use jfgui_tests::cli::{Session, agent_command, run_agent, run_agent_in_pty, run_command};
use jfgui_tests::serde_json::{self, Value, json};
use jfgui_tests::{
    Daemon, LineClient, PATIENCE, TempDir, TestApp, audit_dir, daemon_command, json1, mode, my_uid,
    notepad, rpc, wait_until,
};
use sha2::{Digest, Sha256};

/// A daemon with one test app (slug `target`).
struct World {
    app: TestApp,
    ep: PathBuf,
    d: Daemon,
    _tmp: TempDir,
}

fn world(daemon_args: &[&str], app_args: &[&str]) -> World {
    let tmp = TempDir::new();
    let d = Daemon::start(&tmp.rt(), daemon_args);
    let app = TestApp::start(&d.rt, tmp.path(), "Target", app_args);
    let ep = d.wait_endpoint("target");
    World { app, ep, d, _tmp: tmp }
}

fn log_file(rt: &Path) -> PathBuf {
    audit_dir(rt).join("audit.jsonl")
}

/// The records in `audit.jsonl` (every line must be strict JSON).
fn records(rt: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(log_file(rt)).unwrap_or_default();
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("record not JSON ({e}): {l}")))
        .collect()
}

/// Waits for a record whose input tag is `tag` and returns every record up to it.
fn records_until(rt: &Path, tag: &str) -> Vec<Value> {
    let mut found = Vec::new();
    let ok = wait_until(PATIENCE, || {
        found = records(rt);
        found.iter().any(|r| tag_of(r) == Some(tag.to_owned()))
    });
    assert!(ok, "no record tagged {tag}; records: {found:#?}");
    found
}

/// With `--audit-inputs` the input is kept; tests without it find tags in the action name of
/// the marker, so markers are recognised by their input hash instead.
fn tag_of(record: &Value) -> Option<String> {
    let sha = record["input"]["sha256"].as_str()?;
    MARKERS.iter().find(|m| sha256(&marker_input(m)) == sha).map(|m| m.to_string())
}

const MARKERS: [&str; 5] = ["end", "end-cli", "end-mcp", "end-all", "end-2"];

fn marker_input(tag: &str) -> Value {
    json!({"by": 1, "tag": tag})
}

fn sha256(input: &Value) -> String {
    // serde_json writes members sorted, compact: the bytes the daemon received and hashed.
    let bytes = serde_json::to_vec(input).unwrap();
    Sha256::digest(&bytes).iter().map(|b| format!("{b:02x}")).collect()
}

fn revision(ep: &Path) -> u64 {
    json1(ep, "agent/info", json!({}))["revision"].as_u64().expect("revision")
}

fn write(c: &mut LineClient, input: &Value, expected: u64) -> Value {
    c.call(
        "actions/execute",
        json!({"action": "counter.add", "input": input, "expectedRevision": expected}),
    )
    .expect("actions/execute")
}

fn marker(ep: &Path, tag: &str) {
    let mut c = LineClient::connect(ep).unwrap();
    let response = write(&mut c, &marker_input(tag), revision(ep));
    assert!(response.get("result").is_some(), "marker write: {response}");
}

/// The fields every record has, checked against the caller and the app.
fn assert_common(r: &Value, w: &World, method: &str) {
    assert_eq!(r["method"], method, "{r}");
    assert!(r["time"].as_str().is_some_and(|t| t.ends_with('Z') && t.len() == 24), "{r}");
    assert!(r["durationUs"].is_u64(), "{r}");
    assert_eq!(r["app"]["slug"], "target", "{r}");
    assert_eq!(r["app"]["displayName"], "Target", "{r}");
    assert_eq!(r["app"]["pid"], w.app.proc.pid(), "{r}");
    assert_eq!(r["client"]["uid"], my_uid(), "{r}");
    assert_eq!(r["client"]["transport"], "endpoint", "{r}");
    assert!(r["input"].get("json").is_none(), "no input kept by default: {r}");
}

fn assert_input(r: &Value, input: &Value) {
    let bytes = serde_json::to_vec(input).unwrap();
    assert_eq!(r["input"]["size"], bytes.len(), "{r}");
    assert_eq!(r["input"]["sha256"], sha256(input), "{r}");
}

#[test]
fn json1_writes_a_stale_write_a_failed_atomic_batch_and_a_cancel_are_recorded_exactly() {
    let w = world(&[], &["--fault", "counter.add:fail-in-batch-at=1"]);
    let me = std::process::id();
    let exe = std::env::current_exe().unwrap().to_string_lossy().into_owned();
    let rev0 = revision(&w.ep);
    let mut c = LineClient::connect(&w.ep).unwrap();

    let ok_input = json!({"by": 2, "tag": "w1"});
    let ok = write(&mut c, &ok_input, rev0);
    let rev1 = ok["result"]["revision"].as_u64().unwrap_or_else(|| panic!("{ok}"));
    let stale_input = json!({"by": 1, "tag": "s1"});
    let stale = write(&mut c, &stale_input, rev0);
    assert_eq!(stale["error"]["data"]["reason"], "stale_revision", "{stale}");
    // A read is not recorded without --audit-reads.
    let read = c.call("actions/execute", json!({"action": "state.get", "input": {}})).unwrap();
    assert!(read.get("result").is_some(), "{read}");
    let calls = json!([
        {"action": "counter.add", "input": {"by": 1, "tag": "b0"}, "expectedRevision": rev1},
        {"action": "counter.add", "input": {"by": 1, "tag": "b1"}, "expectedRevision": rev1},
    ]);
    let batch = c.call("actions/batch", json!({"calls": calls, "atomic": true})).unwrap();
    assert!(
        batch.get("error").is_some() || batch["result"]["results"].to_string().contains("error"),
        "{batch}"
    );
    let job = c
        .call(
            "actions/execute",
            json!({"action": "job.run", "input": {"ms": 600000}, "expectedRevision": rev1}),
        )
        .unwrap();
    let task = job["result"]["task"]["id"].as_str().unwrap_or_else(|| panic!("{job}")).to_owned();
    let cancel = c.call("tasks/cancel", json!({"id": task})).unwrap();
    assert!(cancel.get("result").is_some(), "{cancel}");
    marker(&w.ep, "end");

    let r = records_until(&w.d.rt, "end");
    assert_eq!(r.len(), 6, "write, stale, batch, job.run, cancel, marker: {r:#?}");
    for record in &r[..5] {
        assert_common(record, &w, record["method"].as_str().unwrap_or(""));
        assert_eq!(record["client"]["pid"], me, "{record}");
        assert_eq!(record["client"]["exe"], exe.as_str(), "{record}");
        assert_eq!(record["client"]["protocol"], "json-1", "{record}");
        assert_eq!(record["client"]["protocolRevision"], "1", "{record}");
    }
    assert_common(&r[0], &w, "actions/execute");
    assert_eq!(r[0]["action"], "counter.add");
    assert_input(&r[0], &ok_input);
    assert_eq!(
        (r[0]["expectedRevision"].as_u64(), r[0]["revision"].as_u64()),
        (Some(rev0), Some(rev1))
    );
    assert_eq!(r[0]["outcome"], "ok");

    assert_input(&r[1], &stale_input);
    assert_eq!(r[1]["expectedRevision"], rev0);
    assert_eq!(r[1]["revision"], rev1, "the current revision the refusal reported");
    assert_eq!(r[1]["outcome"]["refused"]["reason"], "stale_revision", "{}", r[1]);

    assert_common(&r[2], &w, "actions/batch");
    assert_eq!(r[2]["calls"], json!(["counter.add", "counter.add"]));
    assert_eq!(r[2]["atomic"], true);
    assert_input(&r[2], &calls);
    assert_eq!(r[2]["expectedRevision"], rev1);
    let failed = r[2]["outcome"]["failed"].as_object().unwrap_or_else(|| panic!("{}", r[2]));
    assert_eq!(failed["class"], "failed", "{}", r[2]);
    assert!(r[2]["revision"].is_null() || r[2]["revision"] == rev1, "rolled back: {}", r[2]);

    assert_eq!(r[3]["action"], "job.run");
    assert_input(&r[3], &json!({"ms": 600000}));
    assert_eq!(r[3]["outcome"], "ok");
    assert_common(&r[4], &w, "tasks/cancel");
    assert_eq!(r[4]["task"], task.as_str());
    assert!(r[4].get("input").is_none() && r[4].get("action").is_none(), "{}", r[4]);
    assert_eq!(r[4]["outcome"], "ok");

    // Private files: another user can neither list nor read them.
    assert_eq!(mode(&audit_dir(&w.d.rt)) & 0o777, 0o700);
    assert_eq!(mode(&log_file(&w.d.rt)) & 0o777, 0o600);
}

#[test]
fn cli_calls_are_recorded_with_the_cli_as_client() {
    let w = world(&[], &[]);
    let input = json!({"by": 3, "tag": "cli"});
    let text = input.to_string();
    let run = run_agent(
        &w.d.rt,
        &["call", "target", "counter.add", "--input-json", &text, "--expected-revision", "auto"],
        b"",
    );
    run.assert_code(0);
    let stale = run_agent(
        &w.d.rt,
        &["call", "target", "counter.add", "--input-json", &text, "--expected-revision", "0"],
        b"",
    );
    stale.assert_error(1, "stale_revision");
    marker(&w.ep, "end-cli");
    let r = records_until(&w.d.rt, "end-cli");
    assert_eq!(r.len(), 3, "{r:#?}");
    for record in &r[..2] {
        assert_common(record, &w, "actions/execute");
        assert_input(record, &input);
        let exe = record["client"]["exe"].as_str().unwrap_or_else(|| panic!("{record}"));
        assert!(exe.ends_with("/jfgui-agent"), "{record}");
    }
    assert_eq!(r[0]["outcome"], "ok");
    assert_eq!(r[1]["outcome"]["refused"]["reason"], "stale_revision");
    assert_eq!(r[1]["expectedRevision"], 0);
}

#[test]
fn mcp_calls_carry_the_revision_and_client_info() {
    let w = world(&[], &[]);
    let mut c = LineClient::connect(&w.ep).unwrap();
    let init = c
        .call(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "audit-suite", "version": "9.1"}}),
        )
        .unwrap();
    assert!(init.get("result").is_some(), "{init}");
    let legacy_input = json!({"by": 1, "tag": "mcp-legacy"});
    let call = |c: &mut LineClient, params: Value| {
        let response = c.call("tools/call", params).unwrap();
        assert_eq!(response["result"]["isError"], false, "{response}");
    };
    call(
        &mut c,
        json!({"name": "jfgui_actions_execute", "arguments": {"action": "counter.add", "input": legacy_input, "expectedRevision": revision(&w.ep)}}),
    );
    let modern_input = json!({"by": 1, "tag": "mcp-modern"});
    let mut m = LineClient::connect(&w.ep).unwrap();
    call(
        &mut m,
        json!({"name": "jfgui_actions_execute",
               "arguments": {"action": "counter.add", "input": modern_input, "expectedRevision": revision(&w.ep)},
               "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                         "io.modelcontextprotocol/clientCapabilities": {},
                         "io.modelcontextprotocol/clientInfo": {"name": "modern-suite", "version": "2"}}}),
    );
    marker(&w.ep, "end-mcp");
    let r = records_until(&w.d.rt, "end-mcp");
    assert_eq!(r.len(), 3, "{r:#?}");
    assert_common(&r[0], &w, "actions/execute");
    assert_input(&r[0], &legacy_input);
    assert_eq!(r[0]["client"]["protocol"], "mcp");
    assert_eq!(r[0]["client"]["protocolRevision"], "2025-11-25");
    assert_eq!(r[0]["client"]["clientInfo"], json!({"name": "audit-suite", "version": "9.1"}));
    assert_input(&r[1], &modern_input);
    assert_eq!(r[1]["client"]["protocolRevision"], "2026-07-28");
    assert_eq!(r[1]["client"]["clientInfo"], json!({"name": "modern-suite", "version": "2"}));
    assert_eq!(r[1]["outcome"], "ok");
}

#[test]
fn all_apps_mcp_calls_are_recorded_with_their_transport_revision_and_client() {
    let w = world(&[], &[]);
    let mut c = LineClient::connect(&w.d.rt.join("mcp.sock")).unwrap();
    let input = json!({"by": 1, "tag": "all-apps"});
    let response = c
        .call(
            "tools/call",
            json!({"name": "jfgui_actions_execute",
                   "arguments": {"app": "Target", "action": "counter.add", "input": input, "expectedRevision": revision(&w.ep)},
                   "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                             "io.modelcontextprotocol/clientCapabilities": {},
                             "io.modelcontextprotocol/clientInfo": {"name": "all-apps-suite", "version": "3"}}}),
        )
        .unwrap();
    assert_eq!(response["result"]["isError"], false, "{response}");
    marker(&w.ep, "end-all");
    let r = records_until(&w.d.rt, "end-all");
    assert_eq!(r.len(), 2, "{r:#?}");
    assert_eq!(r[0]["method"], "actions/execute", "{}", r[0]);
    assert_eq!(r[0]["app"]["slug"], "target", "{}", r[0]);
    assert_eq!(r[0]["client"]["transport"], "all-apps-mcp", "{}", r[0]);
    assert_eq!(r[0]["client"]["protocolRevision"], "2026-07-28", "{}", r[0]);
    assert_eq!(r[0]["client"]["clientInfo"], json!({"name": "all-apps-suite", "version": "3"}));
    assert_input(&r[0], &input);
    assert_eq!(r[0]["outcome"], "ok", "{}", r[0]);
}

#[test]
fn an_app_dying_mid_call_is_recorded_unknown_never_failed() {
    let w = world(&[], &["--fault", "counter.add:abort-after-apply"]);
    let mut c = LineClient::connect(&w.ep).unwrap();
    let input = json!({"by": 1, "tag": "dies"});
    let response = write(&mut c, &input, revision(&w.ep));
    assert_eq!(response["error"]["data"]["class"], "outcome_unknown", "{response}");
    let mut found = Vec::new();
    assert!(wait_until(PATIENCE, || {
        found = records(&w.d.rt);
        !found.is_empty()
    }));
    assert_eq!(found.len(), 1, "{found:#?}");
    let outcome = &found[0]["outcome"];
    assert!(outcome["unknown"]["reason"].is_string(), "{outcome}");
    assert_eq!(outcome["unknown"]["class"], "outcome_unknown");
    assert_input(&found[0], &input);
}

#[test]
fn a_client_killed_mid_call_is_recorded_unknown_with_what_the_app_did() {
    let w = world(&[], &["--fault", "counter.add:sleep=3000"]);
    let input = json!({"by": 1, "tag": "orphan"});
    let rev = revision(&w.ep).to_string();
    let text = input.to_string();
    // A real client process, killed while its write runs in the app (which sleeps 3 s first).
    let mut cmd = agent_command(
        &w.d.rt,
        &["call", "target", "counter.add", "--input-json", &text, "--expected-revision", &rev],
    );
    cmd.stdout(std::process::Stdio::null()).stderr(std::process::Stdio::null());
    let mut client = cmd.spawn().expect("spawn jfgui-agent call");
    let connected = wait_until(PATIENCE, || w.d.status()["clients"] == 1);
    assert!(connected, "the client never connected");
    // It sends its one request right after connecting.
    std::thread::sleep(std::time::Duration::from_millis(300));
    client.kill().unwrap();
    client.wait().unwrap();
    let r = orphan_record(&w, "orphan");
    assert!(r["revision"].as_u64().is_some_and(|v| v > rev.parse::<u64>().unwrap()), "{r}");
    assert_input(&r, &input);
    assert!(r["client"]["exe"].as_str().is_some_and(|e| e.ends_with("/jfgui-agent")));
}

/// The one record of a write whose client was killed while the app ran it (after the kill the
/// app completes it, tagged `tag`): the agent never learned the outcome, so it is `unknown`,
/// with what the app did (its ledger has it) kept beside.
fn orphan_record(w: &World, tag: &str) -> Value {
    assert!(w.app.ledger().is_empty(), "killed before the app applied: {:?}", w.app.ledger());
    let mut found = Vec::new();
    assert!(wait_until(PATIENCE, || {
        found = records(&w.d.rt);
        !found.is_empty()
    }));
    assert_eq!(found.len(), 1, "{found:#?}");
    let r = found.remove(0);
    assert_eq!(
        r["outcome"],
        json!({"unknown": {"class": "outcome_unknown", "reason": "client_disconnected"}}),
        "{r}"
    );
    assert_eq!(r["appOutcome"], "ok", "{r}");
    let applied = format!("{tag} ");
    assert!(w.app.ledger().iter().any(|l| l.starts_with(&applied)), "{:?}", w.app.ledger());
    r
}

#[test]
fn an_all_apps_mcp_client_killed_mid_call_is_recorded_unknown_with_what_the_app_did() {
    let w = world(&[], &["--fault", "counter.add:sleep=3000"]);
    let input = json!({"by": 1, "tag": "orphan-mcp"});
    let rev = revision(&w.ep);
    // A real MCP client process (the stdio gateway to the all-apps server), killed while its
    // write runs in the app (which sleeps 3 s first).
    let mut gateway = Session::start(agent_command(&w.d.rt, &["mcp"]));
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "jfgui_actions_execute",
                   "arguments": {"app": "Target", "action": "counter.add", "input": input, "expectedRevision": rev},
                   "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                             "io.modelcontextprotocol/clientCapabilities": {},
                             "io.modelcontextprotocol/clientInfo": {"name": "doomed", "version": "1"}}}});
    gateway.send(&call.to_string());
    let running = wait_until(PATIENCE, || w.d.status()["clients"] == 1);
    assert!(running, "the gateway never connected");
    std::thread::sleep(std::time::Duration::from_millis(300));
    let killed = std::process::Command::new("kill")
        .args(["-KILL", &gateway.pid().to_string()])
        .status()
        .expect("run kill");
    assert!(killed.success());
    gateway.finish();
    let r = orphan_record(&w, "orphan-mcp");
    assert_eq!(r["client"]["transport"], "all-apps-mcp", "{r}");
    assert_eq!(r["client"]["clientInfo"], json!({"name": "doomed", "version": "1"}), "{r}");
    assert_input(&r, &input);
}

#[test]
fn rotation_at_a_small_bound_keeps_four_files_of_whole_records() {
    let w = world(&["--audit-max-bytes", "2048"], &[]);
    let mut c = LineClient::connect(&w.ep).unwrap();
    for i in 0..40 {
        let response = write(&mut c, &json!({"by": 1, "tag": format!("r{i}")}), revision(&w.ep));
        assert!(response.get("result").is_some(), "{response}");
    }
    marker(&w.ep, "end");
    records_until(&w.d.rt, "end");
    let dir = audit_dir(&w.d.rt);
    for name in kept_files(&dir) {
        let path = dir.join(&name);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.len() <= 2048, "{name}: {} bytes", text.len());
        for line in text.lines() {
            let r: Value =
                serde_json::from_str(line).unwrap_or_else(|e| panic!("{name}: {e}: {line}"));
            assert_eq!(r["action"], "counter.add", "{r}");
        }
        assert_eq!(mode(&path) & 0o777, 0o600, "{name}");
    }
}

/// The names of the log files in `dir` after rotations, checked to be the four kept ones, the
/// live file first (`audit.lock`, which serializes rotations between processes, beside them).
fn kept_files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["audit.jsonl", "audit.jsonl.1", "audit.jsonl.2", "audit.jsonl.3", "audit.lock"]
    );
    names.pop();
    names
}

#[test]
fn the_headless_cli_rotates_at_jfgui_audit_max_bytes_as_the_daemon_does() {
    let tmp = TempDir::new();
    let rt = tmp.rt();
    let notepad = jfgui_tests::bin("jfgui-notepad");
    // Each record is longer than the smallest bound (256 B): every write after the first
    // rotates, so six writes leave the four files kept (with the default 8 MiB, one). A
    // fresh Notepad is at revision 1; the writes after the first may be refused as stale,
    // which is recorded all the same.
    let input = (1..=6)
        .map(|id| {
            let call = json!({"jsonrpc": "2.0", "id": id, "method": "actions/execute",
                "params": {"action": "selection.set", "input": {"start": 0, "end": 0},
                           "expectedRevision": 1}});
            format!("{call}\n")
        })
        .collect::<String>();
    let mut cmd =
        agent_command(&rt, &["headless", notepad.to_str().expect("UTF-8"), "--protocol", "json"]);
    cmd.env("JFGUI_AUDIT_MAX_BYTES", "256");
    let run = run_command(cmd, input.as_bytes());
    run.assert_code(0);
    let answers = run.json_lines();
    assert_eq!(answers.len(), 6, "{}", run.stdout);
    assert!(answers[0]["result"]["revision"].is_u64(), "{}", run.stdout);
    let dir = audit_dir(&rt);
    for name in kept_files(&dir) {
        let text = std::fs::read_to_string(dir.join(&name)).unwrap();
        assert_eq!(text.lines().count(), 1, "{name}: one whole record per file: {text}");
        let r: Value = serde_json::from_str(text.trim_end()).unwrap();
        assert_eq!(r["client"]["transport"], "cli-headless", "{r}");
        assert_eq!(r["action"], "selection.set", "{r}");
    }
    // A bound the daemon refuses is refused here too.
    let mut cmd = agent_command(&rt, &["headless", notepad.to_str().expect("UTF-8")]);
    cmd.env("JFGUI_AUDIT_MAX_BYTES", "10");
    let refused = run_command(cmd, b"");
    assert_eq!(refused.status.code(), Some(2), "{}", refused.stderr);
    assert!(
        refused.stderr.contains("JFGUI_AUDIT_MAX_BYTES")
            || refused.stderr.contains("audit-max-bytes"),
        "{}",
        refused.stderr
    );
}

#[test]
fn an_unwritable_log_never_fails_a_call_and_is_reported() {
    let tmp = TempDir::new();
    // A directory under a regular file: not creatable, even for root.
    let blocker = tmp.path().join("blocker");
    std::fs::write(&blocker, b"not a directory").unwrap();
    let dir = blocker.join("audit");
    let mut cmd = daemon_command(&tmp.rt(), &[]);
    cmd.env("JFGUI_AUDIT_DIR", &dir);
    let d = Daemon::start_command(&tmp.rt(), cmd);
    let app = TestApp::start(&d.rt, tmp.path(), "Target", &[]);
    let ep = d.wait_endpoint("target");
    let mut c = LineClient::connect(&ep).unwrap();
    for i in 0..3 {
        let response = write(&mut c, &json!({"by": 1, "tag": format!("u{i}")}), revision(&ep));
        assert!(response.get("result").is_some(), "the call succeeds: {response}");
    }
    assert!(wait_until(PATIENCE, || d.status()["auditDropped"] == 3), "status: {}", d.status());
    assert_eq!(app.ledger().len(), 3);
    // Writable again: the gap is written first, then the record.
    std::fs::remove_file(&blocker).unwrap();
    marker(&ep, "end");
    // Written off the call path: wait for the marker's record.
    let mut lines: Vec<Value> = Vec::new();
    let written = wait_until(PATIENCE, || {
        lines = std::fs::read_to_string(dir.join("audit.jsonl"))
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        lines.iter().any(|l| tag_of(l).is_some())
    });
    assert!(written, "{lines:#?}");
    assert_eq!(lines.len(), 2, "{lines:#?}");
    assert_eq!(lines[0]["dropped"], 3, "{}", lines[0]);
    assert_eq!(tag_of(&lines[1]).as_deref(), Some("end"));
    assert!(d.proc.stderr().contains("audit: cannot write the log"), "{}", d.proc.stderr());
}

#[test]
fn inputs_are_kept_only_when_asked_and_reads_only_with_audit_reads() {
    let w = world(&["--audit-inputs", "--audit-reads"], &[]);
    // 3000 characters (within the action's bound), 6000 bytes of UTF-8.
    let big = "é".repeat(3000);
    let input = json!({"text": big, "tag": "long"});
    let mut c = LineClient::connect(&w.ep).unwrap();
    let response = c
        .call(
            "actions/execute",
            json!({"action": "text.append", "input": input, "expectedRevision": revision(&w.ep)}),
        )
        .unwrap();
    assert!(response.get("result").is_some(), "{response}");
    let read = c.call("actions/execute", json!({"action": "state.get", "input": {}})).unwrap();
    assert!(read.get("result").is_some(), "{read}");
    marker(&w.ep, "end");
    let r = records_until(&w.d.rt, "end");
    // The agent/info reads of `revision` are not recorded (nothing reaches the app's actions).
    assert_eq!(r.len(), 3, "{r:#?}");
    let kept = r[0]["input"]["json"].as_str().unwrap_or_else(|| panic!("{}", r[0]));
    assert!(kept.len() <= 4096 && kept.len() > 4092, "cut on a character boundary: {}", kept.len());
    assert!(serde_json::to_string(&input).unwrap().starts_with(kept));
    assert_eq!(r[0]["input"]["truncated"], true);
    assert_input(&r[0], &input);
    assert_eq!(r[1]["action"], "state.get");
    assert_eq!(r[1]["outcome"], "ok");
}

#[test]
fn log_filters_and_follow_sees_a_new_record() {
    let w = world(&[], &[]);
    marker(&w.ep, "end");
    records_until(&w.d.rt, "end");

    let all = run_agent(&w.d.rt, &["log", "--json"], b"");
    all.assert_code(0);
    assert_eq!(all.json_lines().len(), 1);
    // An app the log never saw is named as such, with the nearest name it has.
    let unseen = run_agent(&w.d.rt, &["log", "--app", "targt"], b"");
    unseen.assert_code(0);
    assert!(unseen.stdout.trim().is_empty(), "{}", unseen.stdout);
    assert!(unseen.stderr.contains("no record of an app named 'targt'"), "{}", unseen.stderr);
    assert!(unseen.stderr.contains("did you mean target"), "{}", unseen.stderr);
    let none =
        run_agent(&w.d.rt, &["log", "--app", "Target", "--since", "2100-01-01T00:00:00Z"], b"");
    none.assert_code(0);
    assert!(none.stdout.trim().is_empty(), "{}", none.stdout);
    let by_pid = run_agent(&w.d.rt, &["log", "--client", &std::process::id().to_string()], b"");
    assert_eq!(by_pid.json_lines().len(), 1);
    let future = run_agent(&w.d.rt, &["log", "--since", "2100-01-01T00:00:00Z"], b"");
    assert!(future.stdout.trim().is_empty(), "{}", future.stdout);
    run_agent(&w.d.rt, &["log", "--since", "yesterday"], b"").assert_error(2, "invalid_since");

    let mut follow =
        Session::start(agent_command(&w.d.rt, &["log", "--follow", "--app", "target"]));
    // The history first: once it is printed, the stream is subscribed.
    let first = follow.recv();
    assert_eq!(tag_of(&first).as_deref(), Some("end"), "{first}");
    marker(&w.ep, "end-2");
    let live = follow.recv();
    assert_eq!(tag_of(&live).as_deref(), Some("end-2"), "{live}");
    assert_eq!(live["outcome"], "ok");
    assert_eq!(live["action"], "counter.add");
}

#[test]
fn the_log_table_shows_a_refused_call_without_a_revision_change() {
    let w = world(&[], &[]);
    let rev0 = revision(&w.ep);
    let mut c = LineClient::connect(&w.ep).unwrap();
    let ok = write(&mut c, &marker_input("applied"), rev0);
    let rev1 = ok["result"]["revision"].as_u64().unwrap_or_else(|| panic!("{ok}"));
    let stale = write(&mut c, &marker_input("end"), rev0);
    assert_eq!(stale["error"]["data"]["reason"], "stale_revision", "{stale}");
    records_until(&w.d.rt, "end");

    let table = run_agent_in_pty(&w.d.rt, &["log"]);
    table.assert_code(0);
    let rows: Vec<&str> = table.stdout.lines().filter(|l| l.contains("counter.add")).collect();
    assert_eq!(rows.len(), 2, "{}", table.stdout);
    let cells = |row: &str| {
        row.split("  ")
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    let applied = cells(rows[0]);
    assert!(applied.contains(&format!("{rev0} → {rev1}")), "{applied:?}");
    let refused = cells(rows[1]);
    assert!(refused.contains(&rev1.to_string()), "{refused:?}");
    assert!(refused.iter().all(|c| !c.contains('→')), "{refused:?}");
    assert!(refused.contains(&"refused: stale_revision".to_owned()), "{refused:?}");
}

#[test]
fn follow_is_refused_cleanly_with_params_and_the_method_is_listed() {
    let tmp = TempDir::new();
    let d = Daemon::start(&tmp.rt(), &[]);
    let response = rpc(&d.control(), "audit/follow", json!({"app": "x"})).unwrap();
    assert_eq!(response["error"]["code"], -32602, "{response}");
    assert_eq!(response["error"]["data"]["reason"], "unknown_param");
    let unknown = rpc(&d.control(), "audit/nope", json!({})).unwrap();
    assert!(unknown["error"]["message"].as_str().unwrap().contains("audit/follow"), "{unknown}");
}

/// The `last agent action` lines Notepad printed for the daemon's `activity` notices.
fn activity_lines(stderr: &str) -> Vec<String> {
    stderr
        .lines()
        .filter_map(|l| l.strip_prefix("jfgui-notepad: last agent action: "))
        .map(str::to_owned)
        .collect()
}

#[test]
fn an_app_that_asked_gets_one_activity_per_recorded_call_through_json1_and_all_apps_mcp() {
    let tmp = TempDir::new();
    let d = Daemon::start(&tmp.rt(), &[]);
    let app = notepad(&d.rt, &["--agent-enable"]);
    let ep = d.wait_endpoint("notepad");
    let rev = |ep: &Path| revision(ep);
    let mut c = LineClient::connect(&ep).unwrap();
    let insert = |c: &mut LineClient, text: &str, expected: u64| {
        c.call(
            "actions/execute",
            json!({"action": "document.text.insert", "input": {"text": text}, "expectedRevision": expected}),
        )
        .unwrap()
    };
    let r0 = rev(&ep);
    let ok = insert(&mut c, "a", r0);
    assert!(ok.get("result").is_some(), "{ok}");
    let stale = insert(&mut c, "b", r0);
    assert_eq!(stale["error"]["data"]["reason"], "stale_revision", "{stale}");
    // Reads are not recorded, so they bring no notice.
    let read = c.call("actions/execute", json!({"action": "document.get", "input": {}})).unwrap();
    assert!(read.get("result").is_some(), "{read}");
    let r1 = rev(&ep);
    let calls = json!([
        {"action": "document.text.insert", "input": {"text": "c"}, "expectedRevision": r1},
        {"action": "document.text.insert", "input": {"text": "d"}, "expectedRevision": r1},
    ]);
    let batch = c.call("actions/batch", json!({"calls": calls, "atomic": true})).unwrap();
    assert!(batch.get("result").is_some(), "{batch}");
    let mut all = LineClient::connect(&d.rt.join("mcp.sock")).unwrap();
    let response = all
        .call(
            "tools/call",
            json!({"name": "jfgui_actions_execute",
                   "arguments": {"app": "Notepad", "action": "document.text.insert", "input": {"text": "d"}, "expectedRevision": rev(&ep)},
                   "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                             "io.modelcontextprotocol/clientCapabilities": {},
                             "io.modelcontextprotocol/clientInfo": {"name": "activity-suite", "version": "4"}}}),
        )
        .unwrap();
    assert_eq!(response["result"]["isError"], false, "{response}");

    let me = std::process::id();
    let exe = std::env::current_exe().unwrap();
    let exe = exe.file_name().unwrap().to_string_lossy();
    let expected = [
        format!("{exe}[{me}] via endpoint: document.text.insert -> ok"),
        format!("{exe}[{me}] via endpoint: document.text.insert -> refused (stale_revision)"),
        format!(
            "{exe}[{me}] via endpoint: batch(document.text.insert, document.text.insert) -> ok"
        ),
        // The agent the OS named comes first; what the client says is only beside it.
        format!("{exe}[{me}] via all-apps-mcp, says activity-suite 4: document.text.insert -> ok"),
    ];
    let mut seen = Vec::new();
    let complete = wait_until(PATIENCE, || {
        seen = activity_lines(&app.stderr());
        seen.len() >= expected.len()
    });
    assert!(complete, "notices seen: {seen:#?}\nnotepad stderr:\n{}", app.stderr());
    // Exactly one per recorded call, in order: nothing more arrives.
    std::thread::sleep(std::time::Duration::from_millis(500));
    assert_eq!(activity_lines(&app.stderr()), expected);
    assert_eq!(records(&d.rt).len(), expected.len(), "one record per notice");
    assert_eq!(d.status()["activityDropped"], 0);
}

#[test]
fn an_app_that_did_not_ask_gets_no_activity_and_keeps_working() {
    // The test app's hello has no `activity` member (the original shape): it registers, and a
    // notice it did not ask for would be a protocol error that drops its connection.
    let mut w = world(&[], &[]);
    let mut c = LineClient::connect(&w.ep).unwrap();
    for n in 0..5 {
        let input = json!({"by": 1, "tag": format!("quiet-{n}")});
        let response = write(&mut c, &input, revision(&w.ep));
        assert!(response.get("result").is_some(), "{response}");
    }
    marker(&w.ep, "end");
    assert_eq!(records_until(&w.d.rt, "end").len(), 6);
    let apps = w.d.apps();
    assert!(apps.iter().any(|a| a["slug"] == "target" && a["enabled"] == true), "{apps:?}");
    assert!(w.app.proc.try_status().is_none(), "test app stderr:\n{}", w.app.proc.stderr());
    assert!(!w.app.proc.stderr().contains("unexpected"), "{}", w.app.proc.stderr());
    assert_eq!(w.d.status()["activityDropped"], 0);
}

#[test]
fn records_of_calls_answered_just_before_sigterm_are_in_the_file() {
    let mut w = world(&[], &[]);
    let mut c = LineClient::connect(&w.ep).unwrap();
    // Large inputs keep the writer (which hashes them) busy behind the calls.
    let big = "x".repeat(240 * 1024);
    let mut rev = revision(&w.ep);
    for n in 0..12 {
        let input = json!({"by": 1, "tag": format!("{n}-{big}")});
        let response = write(&mut c, &input, rev);
        rev = response["result"]["revision"].as_u64().unwrap_or_else(|| panic!("{response}"));
    }
    w.d.proc.signal("TERM");
    let status = w.d.proc.wait_exit(PATIENCE).expect("the daemon exits on SIGTERM");
    assert!(status.success(), "{status:?}\n{}", w.d.proc.stderr());
    let found = records(&w.d.rt);
    assert_eq!(found.len(), 12, "{}", w.d.proc.stderr());
    assert_eq!(found[11]["revision"], rev);
}

#[test]
fn two_processes_rotating_one_log_lose_no_record_and_rotate_once() {
    // Two daemons (as a daemon and a headless `jfgui-agent` may) append to one log with a small
    // bound; every record must end up in exactly one of the kept files.
    const BOUND: usize = 8192;
    let bound = BOUND.to_string();
    let args = ["--audit-max-bytes", bound.as_str()];
    let a = world(&args, &[]);
    let tmp_b = TempDir::new();
    let mut cmd = daemon_command(&tmp_b.rt(), &args);
    cmd.env("JFGUI_AUDIT_DIR", audit_dir(&a.d.rt));
    let b_daemon = Daemon::start_command(&tmp_b.rt(), cmd);
    let _b_app = TestApp::start(&b_daemon.rt, tmp_b.path(), "Target", &[]);
    let b_ep = b_daemon.wait_endpoint("target");
    const EACH: usize = 20;
    let run = |ep: PathBuf, side: &'static str| {
        std::thread::spawn(move || {
            let mut c = LineClient::connect(&ep).unwrap();
            for i in 0..EACH {
                let response =
                    write(&mut c, &json!({"by": 1, "tag": format!("{side}{i}")}), revision(&ep));
                assert!(response.get("result").is_some(), "{response}");
            }
        })
    };
    let (ta, tb) = (run(a.ep.clone(), "a"), run(b_ep, "b"));
    ta.join().unwrap();
    tb.join().unwrap();
    let dir = audit_dir(&a.d.rt);
    let read_all = || {
        let mut tags = Vec::new();
        let mut files = Vec::new();
        for n in 0..6 {
            let name = if n == 0 { "audit.jsonl".to_owned() } else { format!("audit.jsonl.{n}") };
            let Ok(text) = std::fs::read_to_string(dir.join(&name)) else { continue };
            for line in text.lines() {
                let r: Value =
                    serde_json::from_str(line).unwrap_or_else(|e| panic!("{name}: {e}: {line}"));
                tags.push(r["input"]["sha256"].as_str().unwrap_or_default().to_owned());
            }
            files.push((name, text.len()));
        }
        (tags, files)
    };
    let (mut tags, mut files) = (Vec::new(), Vec::new());
    let all_there = wait_until(PATIENCE, || {
        (tags, files) = read_all();
        tags.len() >= 2 * EACH
    });
    assert!(all_there, "{} records in {files:?}", tags.len());
    assert!(files.len() >= 2 && files.len() <= 4, "rotated, four files at most: {files:?}");
    for (name, len) in &files {
        // Two processes may each pass the size check before either appends: one record over.
        assert!(*len <= BOUND + 1024, "{name}: {len} bytes");
    }
    for side in ["a", "b"] {
        for i in 0..EACH {
            let sha = sha256(&json!({"by": 1, "tag": format!("{side}{i}")}));
            let n = tags.iter().filter(|t| **t == sha).count();
            assert_eq!(n, 1, "record {side}{i} found {n} times in {files:?}");
        }
    }
}

#[test]
fn a_client_that_half_closes_and_reads_its_answer_is_recorded_as_answered() {
    // `jfgui-agent stdio` and `nc -N` shut their sending side at EOF and still read: their
    // calls were delivered, whatever the order of EOF and the answer.
    use std::io::{BufRead, BufReader, Write};
    let w = world(&[], &["--fault", "counter.add:sleep=1500"]);
    let input = json!({"by": 1, "tag": "half"});
    let mut s = std::os::unix::net::UnixStream::connect(&w.ep).unwrap();
    let request = json!({"jsonrpc": "2.0", "id": 1, "method": "actions/execute",
        "params": {"protocolVersion": "1", "action": "counter.add", "input": input, "expectedRevision": revision(&w.ep)}});
    s.write_all(format!("{request}\n").as_bytes()).unwrap();
    s.shutdown(std::net::Shutdown::Write).unwrap();
    let mut line = String::new();
    BufReader::new(&s).read_line(&mut line).unwrap();
    assert!(line.contains("\"result\""), "{line}");
    let mut found = Vec::new();
    assert!(wait_until(PATIENCE, || {
        found = records(&w.d.rt);
        !found.is_empty()
    }));
    assert_eq!(found[0]["outcome"], "ok", "{}", found[0]);
    assert!(found[0].get("appOutcome").is_none(), "{}", found[0]);
}
