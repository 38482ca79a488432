//! A forged frame header, a reply nested 100 000 deep, duplicate keys and invalid UTF-8 in a
//! reply, and garbage mid-stream on the host channel, from a raw app
//! peer (`RawHost`) that registered properly and has a client call in flight. The call fails
//! with a clear error, the other app's call in flight at the same time completes, and the
//! daemon stays live.

use std::path::PathBuf;
use std::thread;
use std::time::Duration;

use jfgui_tests::serde_json::{Value, json};
use jfgui_tests::{RawHost, Rig, Watchdog, rpc, testapp_add};

/// Registers a raw host, starts a client call to it and a slow write on the target test app,
/// lets `attack` answer the raw host's request, and returns the raw client's response.
fn attack(r: &Rig, name: &str, attack: impl FnOnce(&mut RawHost, u64)) -> Value {
    let mut host = RawHost::register(&r.d, name);
    let endpoint: PathBuf = r.d.wait_endpoint(&host.slug);
    let target = r.target_ep.clone();
    let tag = format!("during-{name}");
    let slow = thread::spawn(move || testapp_add(&target, 1, &tag));
    let call = thread::spawn(move || {
        rpc(&endpoint, "actions/execute", json!({"action": "raw.get"})).unwrap()
    });
    let id = host.next_request();
    attack(&mut host, id);
    let response = call.join().unwrap();
    let done = slow.join().unwrap();
    assert!(done.get("result").is_some(), "the other app's call completes: {done}");
    response
}

/// A reply frame body for a request id.
type Reply = fn(u64) -> Vec<u8>;

fn assert_error(response: &Value, code: i64, reason: &str) {
    assert_eq!(response["error"]["code"], code, "{response}");
    assert_eq!(response["error"]["data"]["reason"], reason, "{response}");
}

#[test]
fn host_frame_faults_fail_the_call_and_drop_only_that_app() {
    let _wd = Watchdog::arm(Duration::from_secs(180));
    let r = Rig::start(&[], &["--fault", "counter.add:sleep=300"]);
    let fds = r.fd_baseline();

    // A forged header over the frame limit drops the app before the body is read.
    let response = attack(&r, "Forged", |host, _| {
        host.send_bytes(&[0xFF, 0xFF, 0xFF, 0xFF]);
        assert!(host.closed(), "dropped at the header");
    });
    assert_error(&response, 1001, "app_disconnected");

    // 1 KiB of zeros, then random bytes, mid-stream.
    let response = attack(&r, "Zeros", |host, _| {
        host.send_bytes(&[0u8; 1024]);
        assert!(host.closed());
    });
    assert_eq!(response["error"]["code"], 1001, "{response}");
    let response = attack(&r, "Noise", |host, _| {
        let noise: Vec<u8> =
            (0..1024u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
        host.send_bytes(&noise);
        assert!(host.closed());
    });
    assert_eq!(response["error"]["code"], 1001, "{response}");

    // A reply nested 100 000 deep, duplicate keys, invalid UTF-8. Pinned: a reply
    // that is not strict JSON is a broken channel, so the app is dropped and the call fails
    // outcome_unknown/app_disconnected, not an internal error: the app is gone.
    let replies: [(&str, Reply); 3] = [
        ("Deep", |id| {
            let nest = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
            format!(r#"{{"reply":{{"id":{id},"outcome":{{"ok":{{"executed":{{"output":{{"x":{nest}}},"revision":1}}}}}}}}}}"#)
                .into_bytes()
        }),
        ("Dup", |id| {
            format!(r#"{{"reply":{{"id":{id},"id":{id},"outcome":{{"ok":{{"executed":{{"output":{{}},"revision":1}}}}}}}}}}"#)
                .into_bytes()
        }),
        ("Utf", |id| {
            [
                format!(
                    r#"{{"reply":{{"id":{id},"outcome":{{"ok":{{"executed":{{"output":{{"s":""#
                )
                .as_bytes(),
                b"\xC0\xAF",
                br#""},"revision":1}}}}}"#,
            ]
            .concat()
        }),
    ];
    for (name, reply) in replies {
        let response = attack(&r, name, |host, id| {
            host.send_frame(&reply(id));
            assert!(host.closed(), "{name}: dropped");
        });
        assert_error(&response, 1001, "app_disconnected");
    }

    // A well-formed raw host still works, and the rig is live.
    let response = attack(&r, "Good", |host, id| {
        host.send(&json!({"reply": {"id": id, "outcome": {"ok": {"executed": {"output": {"fine": true}, "revision": 1}}}}}));
    });
    assert_eq!(response["result"]["output"]["fine"], true, "{response}");
    r.assert_live();
    r.assert_fds_back(fds);
}
