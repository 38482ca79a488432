//! Through the real binaries: JSON control protocol 1 bounds a demanding client hits.

use std::process::Command;
use std::time::Duration;

use jfgui_tests::serde_json::json;
use jfgui_tests::{Daemon, LineClient, Proc, TempDir, Watchdog, notepad};

#[test]
fn resources_read_offset_past_the_end_is_invalid_params() {
    let _wd = Watchdog::arm(Duration::from_secs(120));
    let tmp = TempDir::new();
    let rt = tmp.rt();
    let d = Daemon::start(&rt, &[]);
    let _app = notepad(&rt, &["--agent-enable", "--text", "hello"]);
    let endpoint = d.wait_endpoint("notepad");
    let mut c = LineClient::connect(&endpoint).expect("connect");
    let rendered = c.call("view/render", json!({})).expect("render");
    let uri = rendered["result"]["output"]["uri"].as_str().expect("uri").to_string();
    let total = rendered["result"]["output"]["size"].as_u64().expect("size");

    // offset == totalSize is the end: an empty chunk with eof.
    let end = c.call("resources/read", json!({"uri": uri, "offset": total})).expect("read");
    assert_eq!(end["result"]["data"], "", "{end}");
    assert_eq!(end["result"]["eof"], true, "{end}");
    assert_eq!(end["result"]["totalSize"], total, "{end}");

    // Past the end is a paging parameter out of range (-32602), not a silent empty chunk.
    let past = c.call("resources/read", json!({"uri": uri, "offset": total + 1})).expect("read");
    assert_eq!(past["error"]["code"], -32602, "{past}");
    assert_eq!(past["error"]["data"]["reason"], "out_of_range", "{past}");
    assert_eq!(past["error"]["data"]["param"], "offset", "{past}");
    assert_eq!(past["error"]["data"]["totalSize"], total, "{past}");
}

/// Revisions are integers in 0..2^53−1, so float-only clients keep them and can send them
/// back as `expectedRevision`. A host that reports a larger one is buggy: the daemon says so
/// (internal) instead of passing on a revision no client could ever use.
#[test]
fn a_revision_beyond_2_pow_53_is_never_sent_to_a_client() {
    const MAX: u64 = jfgui_proto::MAX_REVISION;
    let _wd = Watchdog::arm(Duration::from_secs(120));
    let tmp = TempDir::new();
    let rt = tmp.rt();
    let d = Daemon::start(&rt, &[]);
    let state = tmp.path().join("state.json");
    std::fs::write(&state, format!(r#"{{"counter":0,"text":"","revision":{MAX}}}"#)).unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_jfgui-testapp"));
    cmd.args(["--agent-enable", "--name", "Big", "--state"])
        .arg(&state)
        .env("JFGUI_RUNTIME_DIR", &rt)
        .env_remove("XDG_RUNTIME_DIR");
    let _app = Proc::spawn(cmd, tmp.path().join("big.log"));
    let endpoint = d.wait_endpoint("big");
    let mut c = LineClient::connect(&endpoint).expect("connect");
    let info = c.call("agent/info", json!({})).expect("agent/info");
    assert_eq!(info["result"]["revision"], MAX, "{info}");

    // The write takes the host to 2^53: the answer is an internal error, not that revision.
    let write = c
        .call(
            "actions/execute",
            json!({"action": "counter.add", "input": {"by": 1}, "expectedRevision": MAX}),
        )
        .expect("execute");
    assert_eq!(write["error"]["code"], 1003, "{write}");
    assert_eq!(write["error"]["data"]["class"], "internal", "{write}");
    assert_eq!(write["error"]["data"]["reason"], "invalid_reply", "{write}");
    for (method, params) in [("agent/info", json!({})), ("state/inspect", json!({}))] {
        let r = c.call(method, params).expect(method);
        assert_eq!(r["error"]["data"]["reason"], "invalid_reply", "{method}: {r}");
        assert!(r["error"]["message"].as_str().unwrap().contains("9007199254740992"), "{r}");
    }
    d.assert_alive();
}
