//! The daemon on a multi-thread runtime (`--worker-threads 2`): calls through an app's
//! endpoint, the endpoint itself (from the registry's events) and a live audit follower work
//! as on the default single thread. On Linux with glibc the daemon also runs without libm.so:
//! it defines the one function it used from there, `pow`, which this runtime's scheduler
//! calls (docs/PERFORMANCE.md, "Idle memory").

use jfgui_tests::{Daemon, LineClient, TempDir, json1, notepad};
use serde_json::json;

#[test]
fn a_two_worker_daemon_serves_calls_endpoints_and_audit_followers() {
    let tmp = TempDir::new();
    let d = Daemon::start(&tmp.rt(), &["--worker-threads", "2"]);
    let _app = notepad(&d.rt, &["--agent-enable", "--text", "hello"]);
    let ep = d.wait_endpoint("notepad");

    let mut follower = LineClient::connect(&d.control()).unwrap();
    let following = follower.call("audit/follow", json!({})).unwrap();
    assert_eq!(following["result"]["following"], true, "{following}");

    // Enough calls that the workers go through many scheduling rounds (each ends with the
    // statistics that call `pow`).
    let mut c = LineClient::connect(&ep).unwrap();
    for _ in 0..300 {
        let r = c.call("actions/execute", json!({"action": "document.get", "input": {}})).unwrap();
        assert_eq!(r["result"]["output"]["text"], "hello", "{r}");
    }
    let revision = json1(&ep, "agent/info", json!({}))["revision"].as_u64().expect("revision");
    let write = c
        .call(
            "actions/execute",
            json!({"action": "document.text.insert", "input": {"text": "!"}, "expectedRevision": revision}),
        )
        .unwrap();
    assert!(write.get("result").is_some(), "{write}");

    let line = follower.read_line().unwrap().expect("an audit/record notification");
    let note: serde_json::Value = serde_json::from_str(&line).unwrap();
    assert_eq!(note["method"], "audit/record", "{note}");
    assert_eq!(note["params"]["record"]["action"], "document.text.insert", "{note}");
    assert_eq!(note["params"]["record"]["outcome"], "ok", "{note}");
    d.assert_alive();

    if cfg!(all(target_os = "linux", target_env = "gnu")) {
        let maps = std::fs::read_to_string(format!("/proc/{}/maps", d.proc.pid())).unwrap();
        // The check reads the right thing: the shared libraries the daemon has mapped.
        assert!(maps.contains("/libc.so"), "{maps}");
        assert!(!maps.contains("/libm.so"), "libm.so is mapped:\n{maps}");
    }
}
