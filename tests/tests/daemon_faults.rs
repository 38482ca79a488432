//! A daemon killed or stopped with calls in flight: the daemon is killed (or stopped) while a test app
//! is inside a write and four example apps are registered. The client hears an error or EOF,
//! never a success that did not happen; the mutation ledger decides what ran; reconnecting
//! apps burn no CPU while the daemon is down and register exactly once with the new daemon.

use std::thread;
use std::time::Duration;

use jfgui_tests::serde_json::{Value, json};
use jfgui_tests::{
    Daemon, LineClient, PATIENCE, Proc, TempDir, TestApp, Watchdog, cpu_ticks, json1, notepad, rpc,
};

fn add(tag: &str, revision: u64) -> Value {
    json!({"action": "counter.add", "input": {"by": 1, "tag": tag}, "expectedRevision": revision})
}

#[test]
fn sigkill_mid_call_with_five_apps() {
    let _wd = Watchdog::arm(Duration::from_secs(180));
    let tmp = TempDir::new();
    let rt = tmp.rt();
    let first = Daemon::start(&rt, &[]);
    let names = ["One", "Two", "Three", "Four"];
    let notepads: Vec<Proc> =
        names.iter().map(|n| notepad(&rt, &["--agent-enable", "--name", n])).collect();
    let writer = TestApp::start(&rt, tmp.path(), "Writer", &["--fault", "counter.add:sleep=1500"]);
    first.wait_apps(5);
    let ep = first.wait_endpoint("writer");
    let call = thread::spawn(move || {
        let mut c = LineClient::connect(&ep).unwrap();
        c.call("actions/execute", add("inflight", 0))
    });
    thread::sleep(Duration::from_millis(400));
    first.proc.signal("KILL");
    drop(first);
    // The client hears EOF (or an error), never a success.
    match call.join().unwrap() {
        Ok(v) => assert!(v.get("error").is_some(), "{v}"),
        Err(e) => println!("in-flight client got {e}"),
    }
    // Apps with nothing to talk to sleep: CPU over 3 s while no daemon runs.
    let before: Vec<u64> = notepads.iter().map(|p| cpu_ticks(p.pid()).unwrap()).collect();
    thread::sleep(Duration::from_secs(3));
    let spent: Vec<u64> =
        notepads.iter().zip(&before).map(|(p, b)| cpu_ticks(p.pid()).unwrap() - b).collect();
    println!("app CPU ticks (1/100 s) over 3 s without a daemon: {spent:?}");
    assert!(spent.iter().all(|t| *t < 30), "no busy reconnect loop: {spent:?}");

    let restarted_at = std::time::Instant::now();
    let second = Daemon::start(&rt, &[]);
    let listed = second.wait_apps(4);
    println!("all four apps listed {:?} after the new daemon started", restarted_at.elapsed());
    let mut slugs: Vec<String> =
        listed.iter().map(|a| a["slug"].as_str().unwrap().to_string()).collect();
    slugs.sort();
    assert_eq!(slugs, ["four", "one", "three", "two"], "each app exactly once");
    // Still exactly once a moment later (no duplicate registration from a second attempt).
    thread::sleep(Duration::from_millis(500));
    assert_eq!(second.apps().len(), 4, "{:?}", second.apps());
    for n in names {
        second.wait_endpoint(&n.to_lowercase());
    }
    // The test app does not reconnect: the ledger says whether the write ran, and a restart
    // on the same state shows exactly that.
    let mut writer = writer;
    assert!(writer.proc.wait_exit(PATIENCE).is_some(), "the test app noticed the EOF");
    let ran = writer.ledger();
    assert!(ran.len() <= 1, "applied at most once: {ran:?}");
    let restarted = TestApp::start(&rt, tmp.path(), "Writer", &[]);
    let ep = second.wait_endpoint("writer");
    let info = json1(&ep, "agent/info", json!({}));
    assert_eq!(info["revision"], ran.len(), "revision = ledger: {info} {ran:?}");
    assert!(
        rpc(&ep, "actions/execute", add("after", ran.len() as u64))
            .unwrap()
            .get("result")
            .is_some()
    );
    assert_eq!(restarted.ledger().len(), ran.len() + 1);
    second.assert_alive();
}

#[test]
fn sigterm_drains_calls_in_flight() {
    let _wd = Watchdog::arm(Duration::from_secs(180));
    let tmp = TempDir::new();
    let rt = tmp.rt();
    let mut d = Daemon::start(&rt, &["--shutdown-drain", "1500ms"]);
    let quick = TestApp::start(&rt, tmp.path(), "Quick", &["--fault", "counter.add:sleep=500"]);
    let stuck = TestApp::start(&rt, tmp.path(), "Stuck", &["--fault", "counter.add:hang"]);
    let quick_ep = d.wait_endpoint("quick");
    let stuck_ep = d.wait_endpoint("stuck");
    let q = thread::spawn(move || rpc(&quick_ep, "actions/execute", add("q", 0)).unwrap());
    let s = thread::spawn(move || rpc(&stuck_ep, "actions/execute", add("s", 0)).unwrap());
    thread::sleep(Duration::from_millis(200));
    d.proc.signal("TERM");
    // A reply inside the drain window is delivered; a call still running after it fails with
    // an outcome-unknown error that says so.
    let q = q.join().unwrap();
    assert!(q.get("result").is_some(), "answered during the drain: {q}");
    assert_eq!(quick.ledger(), ["q counter.add 0 1 committed"]);
    let s = s.join().unwrap();
    assert_eq!(s["error"]["code"], 1001, "{s}");
    assert_eq!(s["error"]["data"]["reason"], "daemon_shutdown", "{s}");
    assert!(d.proc.wait_exit(PATIENCE).is_some_and(|st| st.success()), "clean exit");
    assert!(!rt.join("agentd.sock").exists() && !rt.join("host.sock").exists());
    assert!(stuck.ledger().is_empty(), "the hung write never applied");
}
