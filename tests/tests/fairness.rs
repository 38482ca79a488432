//! Fairness and totals under hostile load, with the real daemon and
//! `jfgui-testapp` in its hostile modes: a victim answered while attackers pipeline the
//! costliest legal requests (how fast is the bench's business, `benches/fairness.rs`), long
//! display names cut and listed in pages, the per-app task quota, unsolicited task updates,
//! running tasks' bytes, the daemon-wide partial-input budget, tricklers dropped at the
//! deadline counted from the first byte, and a departed app's task states.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use jfgui_tests::cli::run_agent;
use jfgui_tests::serde_json::{Value, json};
use jfgui_tests::{
    Daemon, LineClient, PATIENCE, TempDir, TestApp, json1, notepad, rpc, wait_until,
};

fn error_reason(response: &Value) -> &str {
    response["error"]["data"]["reason"].as_str().unwrap_or_else(|| panic!("no error: {response}"))
}

/// A victim's `document.get` on Notepad, with the suite's patience.
fn victim_read(endpoint: &Path) {
    let r = json1(endpoint, "actions/execute", json!({"action": "document.get"}));
    assert!(r["output"].is_object(), "{r}");
}

#[test]
fn a_victim_is_answered_while_attackers_pipeline_costly_requests() {
    let tmp = TempDir::new();
    let d = Daemon::start(&tmp.rt(), &[]);
    let _pad = notepad(&d.rt, &["--agent-enable"]);
    let dir = tmp.path();
    let _bulk = TestApp::start(
        &d.rt,
        dir,
        "Bulk",
        &["--bulk-actions", "4092", "--description-bytes", "800"],
    );
    let _huge = TestApp::start(&d.rt, dir, "Huge", &["--huge-schema", "800000"]);
    let endpoint = d.wait_endpoint("notepad");
    let attacks = [
        (
            d.wait_endpoint("bulk"),
            r#"{"jsonrpc":"2.0","id":1,"method":"actions/list","params":{"query":"zzz"}}"#,
        ),
        (
            d.wait_endpoint("huge"),
            r#"{"jsonrpc":"2.0","id":2,"method":"actions/describe","params":{"action":"huge.describe"}}"#,
        ),
        (d.control(), r#"{"jsonrpc":"2.0","id":3,"method":"apps/list"}"#),
    ];
    let stop = Arc::new(AtomicBool::new(false));
    let mut attackers = Vec::new();
    for i in 0..8 {
        let (path, line) = &attacks[i % attacks.len()];
        let stream = UnixStream::connect(path).unwrap();
        let mut w = stream.try_clone().unwrap();
        let lines = format!("{line}\n").repeat(16);
        let flag = Arc::clone(&stop);
        let writer = thread::spawn(move || {
            while !flag.load(Ordering::Relaxed) && w.write_all(lines.as_bytes()).is_ok() {}
        });
        let r = stream.try_clone().unwrap();
        let reader = thread::spawn(move || {
            let mut r = BufReader::new(r);
            let mut line = Vec::new();
            let mut answered = 0u64;
            while r.read_until(b'\n', &mut line).is_ok_and(|n| n > 0) {
                assert!(line.starts_with(b"{\"jsonrpc\"") || line.starts_with(b"{\"id\""));
                answered += 1;
                line.clear();
            }
            answered
        });
        attackers.push((stream, writer, reader));
    }
    thread::sleep(Duration::from_millis(300));
    for _ in 0..20 {
        victim_read(&endpoint);
    }
    stop.store(true, Ordering::Relaxed);
    for (stream, writer, reader) in attackers {
        let _ = stream.shutdown(std::net::Shutdown::Both);
        writer.join().unwrap();
        assert!(reader.join().unwrap() > 0, "every attacker was answered too");
    }
    d.assert_alive();
}

#[test]
fn long_display_names_are_cut_marked_and_listed_in_pages() {
    let tmp = TempDir::new();
    let d = Daemon::start(&tmp.rt(), &[]);
    let _apps: Vec<TestApp> = (0..5)
        .map(|i| {
            TestApp::start(&d.rt, tmp.path(), &format!("Lång{i}"), &["--name-bytes", "262144"])
        })
        .collect();
    let apps = d.wait_apps(5);
    for app in &apps {
        let name = app["displayName"].as_str().unwrap();
        assert!(name.len() <= 1024 && name.len() > 1000, "{}", name.len());
        assert!(name.starts_with("Lång"));
        assert_eq!(app["displayNameTruncated"], json!(true));
    }
    // Pages: 2 + 2 + 1, the cursor carries on where the last page stopped.
    let first = rpc(&d.control(), "apps/list", json!({"limit": 2})).unwrap();
    assert_eq!(first["result"]["apps"].as_array().unwrap().len(), 2);
    let cursor = first["result"]["nextCursor"].as_str().unwrap().to_string();
    let second = rpc(&d.control(), "apps/list", json!({"limit": 2, "cursor": cursor})).unwrap();
    assert_ne!(second["result"]["apps"][0]["slug"], first["result"]["apps"][0]["slug"]);
    for (params, reason) in [
        (json!({"cursor": "nonsense"}), "invalid_cursor"),
        (json!({"limit": 0}), "out_of_range"),
        (json!({"limit": 101}), "out_of_range"),
        (json!({"extra": 1}), "unknown_param"),
    ] {
        let r = rpc(&d.control(), "apps/list", params).unwrap();
        assert_eq!(r["error"]["code"], json!(-32602), "{r}");
        assert_eq!(error_reason(&r), reason);
    }
    // The CLI lists every app and finds one by its (cut) display name.
    let listed = run_agent(&d.rt, &["list", "--json"], b"");
    listed.assert_code(0);
    assert_eq!(listed.json()["apps"].as_array().unwrap().len(), 5);
    let name = apps[3]["displayName"].as_str().unwrap();
    let described = run_agent(&d.rt, &["describe", name, "state.get", "--json"], b"");
    described.assert_code(0);
    // agent/info says so too.
    let endpoint = d.wait_endpoint(apps[3]["slug"].as_str().unwrap());
    let info = json1(&endpoint, "agent/info", json!({}));
    assert_eq!(info["app"]["displayNameTruncated"], json!(true));
}

#[test]
fn many_apps_are_listed_across_pages() {
    let tmp = TempDir::new();
    let d = Daemon::start(&tmp.rt(), &[]);
    let _apps: Vec<TestApp> =
        (0..55).map(|i| TestApp::start(&d.rt, tmp.path(), &format!("Many {i}"), &[])).collect();
    let apps = d.wait_apps(55);
    let mut slugs: Vec<&str> = apps.iter().map(|a| a["slug"].as_str().unwrap()).collect();
    slugs.dedup();
    assert_eq!(slugs.len(), 55);
    let first = rpc(&d.control(), "apps/list", json!({})).unwrap();
    assert_eq!(first["result"]["apps"].as_array().unwrap().len(), 50, "default page");
    let listed = run_agent(&d.rt, &["list", "--json"], b"");
    listed.assert_code(0);
    assert_eq!(listed.json()["apps"].as_array().unwrap().len(), 55);
    run_agent(&d.rt, &["describe", "Many 53", "state.get"], b"").assert_code(0);
}

/// Starts `job.run` (a deferred task of `ms`) on `endpoint`: the whole response.
fn start_job(endpoint: &Path, ms: u64) -> Value {
    rpc(
        endpoint,
        "actions/execute",
        json!({"action": "job.run", "input": {"ms": ms}, "expectedRevision": 0}),
    )
    .unwrap()
}

#[test]
fn the_task_quota_is_per_app_and_unsolicited_updates_are_ignored() {
    let tmp = TempDir::new();
    let d = Daemon::start(&tmp.rt(), &["--max-tasks-per-app", "3", "--max-tasks", "8"]);
    let _greedy = TestApp::start(&d.rt, tmp.path(), "Greedy", &[]);
    let _ghosts = TestApp::start(&d.rt, tmp.path(), "Ghosts", &["--unsolicited-tasks", "4096"]);
    let _other = TestApp::start(&d.rt, tmp.path(), "Other", &[]);
    let greedy = d.wait_endpoint("greedy");
    let ghosts = d.wait_endpoint("ghosts");
    let other = d.wait_endpoint("other");
    for _ in 0..3 {
        assert_eq!(start_job(&greedy, 600_000)["result"]["task"]["state"], json!("running"));
    }
    let refused = start_job(&greedy, 600_000);
    assert_eq!(error_reason(&refused), "busy", "{refused}");
    // 4096 planted task updates took nothing: the other app still starts (and finishes) work.
    let ghost = rpc(&ghosts, "tasks/get", json!({"id": "ghost-0"})).unwrap();
    assert_eq!(error_reason(&ghost), "task", "{ghost}");
    let task = start_job(&other, 0);
    let id = task["result"]["task"]["id"].as_str().unwrap().to_string();
    assert!(wait_until(PATIENCE, || {
        json1(&other, "tasks/get", json!({"id": id}))["task"]["state"] == json!("completed")
    }));
    assert!(d.proc.stderr().contains("task update dropped"));
}

#[test]
fn running_tasks_results_count_in_the_task_budget() {
    let tmp = TempDir::new();
    let d = Daemon::start(&tmp.rt(), &["--max-task-bytes", "4194304"]);
    let _heavy =
        TestApp::start(&d.rt, tmp.path(), "Heavy", &["--fault", "job.run:running-result=1000000"]);
    let _other = TestApp::start(&d.rt, tmp.path(), "Other", &[]);
    let heavy = d.wait_endpoint("heavy");
    let other = d.wait_endpoint("other");
    let ids: Vec<String> = (0..10)
        .map(|_| start_job(&heavy, 600_000)["result"]["task"]["id"].as_str().unwrap().to_string())
        .collect();
    // Each update follows its reply on the channel: once the last reply is in, a tasks/get
    // after a round trip to the app sees every update the daemon kept.
    json1(&heavy, "actions/execute", json!({"action": "state.get"}));
    let with_result = ids
        .iter()
        .filter(|id| !json1(&heavy, "tasks/get", json!({"id": id}))["task"]["result"].is_null())
        .count();
    assert!(with_result >= 1, "updates that fit are kept");
    assert!(with_result <= 4, "{with_result} running results of 1 MB kept within 4 MiB");
    let task = start_job(&other, 0);
    assert_eq!(task["result"]["task"]["state"], json!("running"), "{task}");
}

#[test]
fn partial_input_has_a_daemon_wide_budget() {
    let tmp = TempDir::new();
    let d = Daemon::start(&tmp.rt(), &["--max-partial-bytes", "4194304"]);
    let _pad = notepad(&d.rt, &["--agent-enable"]);
    let endpoint = d.wait_endpoint("notepad");
    let chunk = vec![b'x'; (1 << 20) - 16];
    let holders: Vec<UnixStream> = (0..8)
        .map(|_| {
            let mut s = UnixStream::connect(&endpoint).unwrap();
            s.set_write_timeout(Some(PATIENCE)).unwrap();
            // A holder the daemon drops fails its write; that is the point.
            let _ = s.write_all(&chunk);
            s
        })
        .collect();
    // At most 4 MiB is held: the daemon keeps at most 4 of the 8 holders of 1 MiB.
    assert!(wait_until(PATIENCE, || d.status()["clients"].as_u64() <= Some(4)), "{}", d.status());
    // Once the holders are gone the budget is free again (while it is full, a newcomer's
    // partial line is over it too).
    drop(holders);
    assert!(wait_until(PATIENCE, || d.status()["clients"].as_u64() == Some(0)));
    victim_read(&endpoint);
    assert!(d.proc.stderr().contains("budget for buffered partial input"));
}

#[test]
fn tricklers_are_dropped_at_the_deadline_from_their_first_byte() {
    let tmp = TempDir::new();
    // The handshake deadline is far: the host-channel trickler must meet the partial deadline.
    let d = Daemon::start(&tmp.rt(), &["--partial-idle", "2s", "--handshake-deadline", "60s"]);
    let _pad = notepad(&d.rt, &["--agent-enable"]);
    let endpoint = d.wait_endpoint("notepad");
    // A client line and a host-channel hello, one byte every 300 ms: never idle for 2 s.
    let hello = {
        let body = json!({"hello": {"channelVersion": 1, "displayName": "Trickle", "pid": 1, "enabled": true}})
            .to_string();
        let mut frame = (body.len() as u32).to_be_bytes().to_vec();
        frame.extend_from_slice(body.as_bytes());
        frame
    };
    let line = br#"{"jsonrpc":"2.0","id":1,"method":"agent/info","params":{"protocolVersion":"1","padding":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}}"#.to_vec();
    let tricklers: Vec<_> = [(endpoint.clone(), line), (d.host(), hello)]
        .into_iter()
        .map(|(path, bytes)| {
            thread::spawn(move || {
                let mut s = UnixStream::connect(&path).unwrap();
                let started = Instant::now();
                for b in bytes.iter().take(bytes.len() - 1) {
                    if s.write_all(&[*b]).is_err() {
                        return Some(started.elapsed());
                    }
                    thread::sleep(Duration::from_millis(300));
                }
                None
            })
        })
        .collect();
    for t in tricklers {
        let dropped = t.join().unwrap();
        assert!(dropped.is_some(), "the trickler was never dropped");
    }
    victim_read(&endpoint);
    let mut c = LineClient::connect(&endpoint).unwrap();
    assert!(c.call("agent/info", json!({"protocolVersion": "1"})).unwrap()["result"].is_object());
}

#[test]
fn a_departed_apps_task_states_are_answered_when_it_returns() {
    let tmp = TempDir::new();
    let d = Daemon::start(&tmp.rt(), &[]);
    let app = TestApp::start(&d.rt, tmp.path(), "Keeper", &[]);
    let endpoint = d.wait_endpoint("keeper");
    let running =
        start_job(&endpoint, 600_000)["result"]["task"]["id"].as_str().unwrap().to_string();
    let done = start_job(&endpoint, 0)["result"]["task"]["id"].as_str().unwrap().to_string();
    assert!(wait_until(PATIENCE, || {
        json1(&endpoint, "tasks/get", json!({"id": done}))["task"]["state"] == json!("completed")
    }));
    app.proc.signal("KILL");
    assert!(wait_until(PATIENCE, || d.apps().is_empty()));
    // A new process with the same display name: the old states are answered on its endpoint.
    let _back = TestApp::start(&d.rt, tmp.path(), "Keeper", &[]);
    let endpoint = d.wait_endpoint("keeper");
    let failed = json1(&endpoint, "tasks/get", json!({"id": running}));
    assert_eq!(failed["task"]["state"], json!("failed"), "{failed}");
    assert_eq!(failed["task"]["error"]["reason"], json!("app_disconnected"));
    let completed = json1(&endpoint, "tasks/get", json!({"id": done}));
    assert_eq!(completed["task"]["state"], json!("completed"), "{completed}");
    // Another display name does not see them.
    let _other = TestApp::start(&d.rt, tmp.path(), "Stranger", &[]);
    let stranger = d.wait_endpoint("stranger");
    let r = rpc(&stranger, "tasks/get", json!({"id": running})).unwrap();
    assert_eq!(error_reason(&r), "task");
}
