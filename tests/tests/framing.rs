//! Framing and strict JSON across processes: oversize, chunked, malformed and garbage
//! bytes on the real sockets of the real
//! `jfgui-agentd`, with real test apps behind the endpoint. Every verdict is read from the
//! response line itself (one strict JSON object per line), the target app's mutation ledger
//! says nothing ran, and the liveness probe follows every attack.

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::thread;
use std::time::Duration;

use jfgui_tests::serde_json::{self, Value, json};
use jfgui_tests::{LineClient, PATIENCE, Rig, Watchdog, json1, status_kib, testapp_add};

const MIB: usize = 1024 * 1024;

/// Sends `bytes` + `\n` on a fresh connection to `path` and returns the single response line,
/// parsed strictly (the line must be valid UTF-8 and one JSON object).
fn one_shot(path: &Path, bytes: &[u8]) -> Value {
    let mut c = LineClient::connect(path).unwrap();
    c.send_bytes(bytes).unwrap();
    c.send_bytes(b"\n").unwrap();
    let line = c.read_line().expect("response is UTF-8").expect("a response line");
    assert!(line.ends_with('\n') && !line[..line.len() - 1].contains('\n'), "{line:?}");
    serde_json::from_str(&line).unwrap_or_else(|e| panic!("strict JSON: {e}: {line:?}"))
}

/// Reads a raw host connection to its end and asserts how it ended: closed with nothing
/// written, or with exactly one `refused` frame first (a handshake ends in `welcome`
/// or `refused{reason}`; the daemon says why when the peer can still read). A peer that is
/// neither answered nor closed within the read timeout fails the test.
fn assert_refused_or_closed(host: &mut UnixStream, what: &str) {
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match host.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => got.extend_from_slice(&buf[..n]),
            // Closing with our unread bytes still queued resets the connection.
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => break,
            Err(e) => panic!("{what}: the host connection was not closed: {e}; read {got:?}"),
        }
    }
    if got.is_empty() {
        return;
    }
    let (len, body) = got.split_at(4.min(got.len()));
    let len = u32::from_be_bytes(len.try_into().unwrap_or_else(|_| panic!("{what}: {got:?}")));
    assert_eq!(body.len(), len as usize, "{what}: one whole frame, then the close: {got:?}");
    let v: Value = serde_json::from_slice(body)
        .unwrap_or_else(|e| panic!("{what}: strict JSON frame ({e}): {got:?}"));
    assert!(v.get("refused").is_some(), "{what}: only a refusal may come back: {v}");
}

fn assert_code(response: &Value, code: i64, what: &str) {
    assert_eq!(response["error"]["code"], json!(code), "{what}: {response}");
}

fn request(method: &str, params: &str) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":7,"method":"{method}","params":{params}}}"#)
}

#[test]
fn oversize_lines_and_frames() {
    let _wd = Watchdog::arm(Duration::from_secs(180));
    let r = Rig::start(&[], &[]);
    let pid = r.d.proc.pid();
    let fds = r.fd_baseline();

    // Exactly at the limit (1 MiB without the newline): accepted. Padding is JSON whitespace.
    let head = br#"{"jsonrpc":"2.0","id":1,"method":"agent/info""#;
    let mut at = head.to_vec();
    at.resize(MIB - 1, b' ');
    at.push(b'}');
    let mut c = LineClient::connect(&r.target_ep).unwrap();
    c.send_bytes(&at).unwrap();
    c.send_bytes(b"\n").unwrap();
    let ok: Value = serde_json::from_str(&c.read_line().unwrap().unwrap()).unwrap();
    assert!(ok["result"]["revision"].is_u64(), "at-limit line: {ok}");

    // One byte over, newline after a pause: one -32600 too_large, then the stream resumes.
    let mut over = at.clone();
    over.insert(head.len(), b' ');
    c.send_bytes(&over).unwrap();
    thread::sleep(Duration::from_millis(100));
    c.send_bytes(b"\n").unwrap();
    let err: Value = serde_json::from_str(&c.read_line().unwrap().unwrap()).unwrap();
    assert_code(&err, -32600, "limit + 1");
    assert_eq!(err["error"]["data"]["reason"], "too_large", "{err}");
    assert_eq!(c.call("agent/info", json!({})).unwrap()["result"]["app"]["slug"], "target");
    // Closed now: a connection still open at the end would be counted against the baseline.
    drop(c);

    // 10 MiB on the endpoint and on the control socket: bounded memory, one error each.
    for path in [r.target_ep.clone(), r.d.control()] {
        let hwm_before = status_kib(pid, "VmHWM").unwrap();
        let mut c = LineClient::connect(&path).unwrap();
        let chunk = vec![b'a'; 64 * 1024];
        for _ in 0..160 {
            c.send_bytes(&chunk).unwrap();
        }
        c.send_bytes(b"\n").unwrap();
        let err: Value = serde_json::from_str(&c.read_line().unwrap().unwrap()).unwrap();
        assert_code(&err, -32600, "10 MiB line");
        let grew = status_kib(pid, "VmHWM").unwrap().saturating_sub(hwm_before);
        println!("10 MiB line on {}: peak RSS grew {grew} KiB", path.display());
        assert!(grew < 2 * 1024, "peak RSS grew {grew} KiB (< 2 × the 1 MiB limit expected)");
    }

    // A host peer announcing a 0xFFFFFFFF-byte frame is dropped before the body is read.
    let mut host = UnixStream::connect(r.d.host()).unwrap();
    host.set_read_timeout(Some(PATIENCE)).unwrap();
    host.write_all(&[0xFF, 0xFF, 0xFF, 0xFF]).unwrap();
    let _ = host.write_all(&[b'x'; 4096]);
    assert_refused_or_closed(&mut host, "0xFFFFFFFF frame header");
    assert_eq!(r.d.apps().len(), 2, "no app registered or lost: {:?}", r.d.apps());

    r.assert_target_ledger_empty();
    r.assert_live();
    r.assert_fds_back(fds);
}

#[test]
fn chunked_and_pipelined_requests_answer_like_the_one_shot_run() {
    let _wd = Watchdog::arm(Duration::from_secs(180));
    let r = Rig::start(&[], &[]);
    // UTF-8 (2-, 3- and 4-byte sequences) and escapes, so splits land inside both.
    let requests: Vec<String> = (0..50)
        .map(|i| {
            format!(
                r#"{{"jsonrpc":"2.0","id":{i},"method":"actions/describe","params":{{"action":"é€😀\u00e9\"{i}"}}}}"#
            )
        })
        .collect();
    let expected: Vec<String> = requests
        .iter()
        .map(|q| {
            let mut c = LineClient::connect(&r.target_ep).unwrap();
            c.send_raw(q).unwrap();
            c.read_line().unwrap().unwrap()
        })
        .collect();
    assert!(expected[0].contains(r#""code":1004"#), "not_found: {}", expected[0]);

    // One byte per write, 1 ms apart.
    let mut c = LineClient::connect(&r.target_ep).unwrap();
    for b in format!("{}\n", requests[3]).bytes() {
        c.send_bytes(&[b]).unwrap();
        thread::sleep(Duration::from_millis(1));
    }
    assert_eq!(c.read_line().unwrap().unwrap(), expected[3], "byte by byte");

    // All 50 in one write: each answered once with its own id (order may differ).
    let all: String = requests.iter().map(|q| format!("{q}\n")).collect();
    c.send_bytes(all.as_bytes()).unwrap();
    let mut got: Vec<String> = (0..50).map(|_| c.read_line().unwrap().unwrap()).collect();
    got.sort();
    let mut want = expected.clone();
    want.sort();
    assert_eq!(got, want, "pipelined");

    // A request followed by half of the next; the rest arrives later.
    let two = format!("{}\n{}\n", requests[10], requests[11]);
    let cut = requests[10].len() + 1 + requests[11].find('€').unwrap() + 1; // inside '€'
    c.send_bytes(&two.as_bytes()[..cut]).unwrap();
    assert_eq!(c.read_line().unwrap().unwrap(), expected[10]);
    thread::sleep(Duration::from_millis(50));
    c.send_bytes(&two.as_bytes()[cut..]).unwrap();
    assert_eq!(c.read_line().unwrap().unwrap(), expected[11]);

    r.assert_live();
}

/// Each case: raw line, expected error code, and a word the error must mention (in the
/// message or `data`), lower-cased.
fn strict_json_cases() -> Vec<(&'static str, Vec<u8>, i64, &'static str)> {
    let nest = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
    let mut cases: Vec<(&'static str, Vec<u8>, i64, &'static str)> = vec![
        ("100 000 brackets", [b"[".repeat(100_000), vec![]].concat(), -32700, "depth"),
        (
            "33 levels in params.input",
            request("actions/execute", &format!(r#"{{"action":"state.get","input":{}}}"#, nest(31)))
                .into_bytes(),
            -32700,
            "depth",
        ),
        (
            "duplicate method",
            br#"{"jsonrpc":"2.0","id":1,"method":"actions/list","method":"actions/execute","params":{"action":"counter.add","input":{"by":1},"expectedRevision":0}}"#.to_vec(),
            -32700,
            "duplicate",
        ),
        (
            "duplicate in params",
            request("actions/execute", r#"{"action":"state.get","action":"counter.add","input":{"by":1},"expectedRevision":0}"#).into_bytes(),
            -32700,
            "duplicate",
        ),
        (
            "duplicate in input",
            request("actions/execute", r#"{"action":"counter.add","input":{"by":1,"by":2},"expectedRevision":0}"#).into_bytes(),
            -32700,
            "duplicate",
        ),
        (
            "duplicate via escape",
            br#"{"jsonrpc":"2.0","id":1,"method":"actions/list","\u006dethod":"actions/execute"}"#.to_vec(),
            -32700,
            "duplicate",
        ),
        (
            "duplicate id",
            br#"{"jsonrpc":"2.0","id":1,"id":2,"method":"agent/info"}"#.to_vec(),
            -32700,
            "duplicate",
        ),
        (
            "lone high surrogate",
            request("actions/describe", r#"{"action":"\ud800"}"#).into_bytes(),
            -32700,
            "surrogate",
        ),
        (
            "lone low surrogate",
            request("actions/describe", r#"{"action":"\udc00"}"#).into_bytes(),
            -32700,
            "surrogate",
        ),
        (
            "high + letter",
            request("actions/describe", r#"{"action":"\ud800\u0041"}"#).into_bytes(),
            -32700,
            "surrogate",
        ),
        (
            "inverted pair in a key",
            request("actions/describe", r#"{"\ude00\ud83d":"x"}"#).into_bytes(),
            -32700,
            "surrogate",
        ),
        (
            "expectedRevision 2^64",
            request("actions/execute", r#"{"action":"counter.add","input":{"by":1},"expectedRevision":18446744073709551616}"#).into_bytes(),
            -32602,
            "expectedrevision",
        ),
        (
            "expectedRevision -1",
            request("actions/execute", r#"{"action":"counter.add","input":{"by":1},"expectedRevision":-1}"#).into_bytes(),
            -32602,
            "expectedrevision",
        ),
        (
            "expectedRevision 12E-1",
            request("actions/execute", r#"{"action":"counter.add","input":{"by":1},"expectedRevision":12E-1}"#).into_bytes(),
            -32602,
            "expectedrevision",
        ),
        (
            "limit 100.5",
            request("actions/list", r#"{"limit":100.5}"#).into_bytes(),
            -32602,
            "limit",
        ),
        (
            "limit 1e999999999",
            request("actions/list", r#"{"limit":1e999999999}"#).into_bytes(),
            -32602,
            "limit",
        ),
        (
            "4097 array elements",
            request("actions/execute", &format!(r#"{{"action":"state.get","input":{{"x":[{}0]}}}}"#, "0,".repeat(4096))).into_bytes(),
            -32700,
            "member",
        ),
        (
            "256 KiB + 1 decoded via escapes",
            request("actions/execute", &format!(r#"{{"action":"text.append","input":{{"text":"{}x"}},"expectedRevision":0}}"#, "\\u00e9".repeat(128 * 1024))).into_bytes(),
            -32700,
            "string",
        ),
        (
            "16 385 values",
            request("actions/execute", &format!(r#"{{"action":"state.get","input":{{{}}}}}"#, (0..4)
                .map(|k| format!(r#""k{k}":[{}0]"#, "0,".repeat(4095)))
                .collect::<Vec<_>>()
                .join(","))).into_bytes(),
            -32700,
            "values",
        ),
    ];
    // Invalid UTF-8 in values, keys and between tokens; a BOM.
    for (name, bad) in [
        ("0xFF in a value", &b"\xFF"[..]),
        ("overlong C0 AF", b"\xC0\xAF"),
        ("encoded surrogate", b"\xED\xA0\x80"),
        ("truncated sequence", b"\xE2\x82"),
    ] {
        let mut v =
            br#"{"jsonrpc":"2.0","id":1,"method":"actions/describe","params":{"action":""#.to_vec();
        v.extend_from_slice(bad);
        v.extend_from_slice(br#""}}"#);
        cases.push((name, v, -32700, ""));
    }
    let mut key = br#"{"jsonrpc":"2.0","id":1,"method":"agent/info","params":{""#.to_vec();
    key.extend_from_slice(b"\xFF\":1}}");
    cases.push(("0xFF in a key", key, -32700, ""));
    cases.push((
        "0xFF between tokens",
        b"{\"jsonrpc\":\"2.0\",\xFF\"id\":1,\"method\":\"agent/info\"}".to_vec(),
        -32700,
        "",
    ));
    cases.push((
        "a BOM",
        [&b"\xEF\xBB\xBF"[..], br#"{"jsonrpc":"2.0","id":1,"method":"agent/info"}"#].concat(),
        -32700,
        "",
    ));
    cases
}

#[test]
fn strict_json_on_the_endpoint_and_the_control_socket() {
    let _wd = Watchdog::arm(Duration::from_secs(180));
    let r = Rig::start(&[], &[]);
    let before = json1(&r.target_ep, "agent/info", json!({}))["revision"].clone();
    for (name, line, code, word) in strict_json_cases() {
        let response = one_shot(&r.target_ep, &line);
        assert_code(&response, code, name);
        let text = response["error"].to_string().to_lowercase();
        assert!(text.contains(word), "{name}: error should mention {word:?}: {response}");
        if code == -32700 {
            assert_eq!(response["id"], Value::Null, "{name}: {response}");
        }
    }
    // The control socket parses with the same strictness.
    for (name, line, code, _) in strict_json_cases() {
        if code == -32700 {
            assert_code(&one_shot(&r.d.control(), &line), code, name);
        }
    }
    // At-limit versions pass parsing (the verdicts after parsing are the app's or the schema's).
    let nest = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
    for (name, line) in [
        (
            "32 levels",
            request("actions/describe", &format!(r#"{{"action":"x","x":{}}}"#, nest(30))),
        ),
        (
            "4096 elements",
            request(
                "actions/describe",
                &format!(r#"{{"action":"x","x":[{}0]}}"#, "0,".repeat(4095)),
            ),
        ),
        (
            "256 KiB decoded via escapes",
            request(
                "actions/describe",
                &format!(r#"{{"action":"{}"}}"#, "\\u00e9".repeat(128 * 1024)),
            ),
        ),
    ] {
        let response = one_shot(&r.target_ep, line.as_bytes());
        let code = response["error"]["code"].as_i64();
        assert!(code != Some(-32700) && code != Some(-32600), "{name} must parse: {response}");
    }

    // Ids keep their exact token; integral spellings of a revision convert exactly.
    for id in ["123456789012345678901234567890", "1e400", "-0", "1.0", "0.1e1"] {
        let mut c = LineClient::connect(&r.target_ep).unwrap();
        c.send_raw(&format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"agent/info"}}"#)).unwrap();
        let line = c.read_line().unwrap().unwrap();
        assert!(line.contains(&format!(r#""id":{id}"#)), "id {id} echoed exactly: {line}");
    }
    let digits = format!("1{}", "0".repeat(99_999));
    let started = std::time::Instant::now();
    let response = one_shot(
        &r.target_ep,
        request("actions/list", &format!(r#"{{"limit":{digits}}}"#)).as_bytes(),
    );
    assert_code(&response, -32602, "100 000 digits");
    println!("a 100 000-digit number answered in {:?} (round trip)", started.elapsed());
    // A valid pair round-trips byte-exactly through a write and a read.
    let response = one_shot(
        &r.target_ep,
        request(
            "actions/execute",
            &format!(
                r#"{{"action":"text.append","input":{{"text":"\ud83d\ude00","tag":"pair"}},"expectedRevision":{before}}}"#
            ),
        )
        .as_bytes(),
    );
    assert_eq!(response["result"]["output"]["text"], "😀", "{response}");
    let state = json1(&r.target_ep, "actions/execute", json!({"action": "state.get"}));
    assert_eq!(state["output"]["text"].as_str().unwrap().as_bytes(), "😀".as_bytes());
    // Only that one write ran; the `1e3`-style integral revision converts exactly.
    let revision = state["revision"].as_u64().unwrap();
    assert_eq!(r.target.ledger(), vec![format!("pair text.append {before} {revision} committed")]);
    let spelled = format!("{}.0", revision);
    let response = one_shot(
        &r.target_ep,
        request(
            "actions/execute",
            &format!(r#"{{"action":"counter.add","input":{{"by":1,"tag":"int"}},"expectedRevision":{spelled}}}"#),
        )
        .as_bytes(),
    );
    assert!(response.get("result").is_some(), "expectedRevision {spelled} is integral: {response}");
    assert_eq!(r.target.ledger().len(), 2, "{:?}", r.target.ledger());
    r.assert_live();
}

#[test]
fn garbage_mid_stream_hurts_only_its_own_connection() {
    let _wd = Watchdog::arm(Duration::from_secs(180));
    let r = Rig::start(&[], &["--fault", "counter.add:sleep=1500"]);
    let fds = r.fd_baseline();
    // A slow write in flight on another client while the garbage arrives.
    let ep = r.target_ep.clone();
    let slow = thread::spawn(move || testapp_add(&ep, 5, "slow"));
    thread::sleep(Duration::from_millis(300));

    let mut pseudo = 0x2545_F491_4F6C_DD1Du64;
    let random: Vec<u8> = (0..1024)
        .map(|_| {
            pseudo ^= pseudo << 13;
            pseudo ^= pseudo >> 7;
            pseudo ^= pseudo << 17;
            (pseudo >> 24) as u8
        })
        .collect();
    for garbage in [vec![0u8; 1024], random.clone()] {
        let mut c = LineClient::connect(&r.target_ep).unwrap();
        assert!(c.call("agent/info", json!({})).unwrap().get("result").is_some());
        c.send_bytes(&garbage).unwrap();
        c.send_bytes(b"\n").unwrap();
        // An error line, or the connection closed: never a hang, never a success.
        if let Ok(Some(line)) = c.read_line() {
            let v: Value = serde_json::from_str(&line).unwrap();
            assert!(v.get("error").is_some(), "{v}");
        }
        // A raw host peer: garbage straight away is a dropped connection.
        let mut host = UnixStream::connect(r.d.host()).unwrap();
        host.set_read_timeout(Some(PATIENCE)).unwrap();
        let _ = host.write_all(&garbage);
        assert_refused_or_closed(&mut host, "garbage host peer");
    }
    let done = slow.join().unwrap();
    assert!(done.get("result").is_some(), "the other client's call completes: {done}");
    let slow_lines = r.target.ledger().iter().filter(|l| l.starts_with("slow ")).count();
    assert_eq!(slow_lines, 1, "{:?}", r.target.ledger());
    assert_eq!(r.d.apps().len(), 2);
    r.assert_live();
    r.assert_fds_back(fds);
}
