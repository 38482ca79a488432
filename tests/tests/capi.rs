//! The C ABI (`host-sdk/capi`, `libjfgui_host`) across processes. The C example
//! `examples/c-counter`, built with its own Makefile against the library, is driven through
//! the real daemon and the real CLI (the contracts of the Rust dispatcher, now through C
//! callbacks), through `jfgui-agent headless` (stdio), and against a stand-in daemon for the
//! paths a real daemon never takes on purpose (a request reaching a disabled app, a reply over
//! the announced message bound). The Rust shim `jfgui-capi-shim` calls the same ABI with
//! callbacks that fail, panic, answer nothing or too much.
//!
//! `JFGUI_TEST_WRAPPER` (a command line, e.g. `valgrind --error-exitcode=99 --leak-check=full`)
//! runs the C example under that command; each test stops it with SIGTERM and requires exit
//! status 0, so a leak or an invalid access reported by the wrapper fails the test
//! (`tests/other-languages/run.sh` runs this module under valgrind in CI).

use std::io::{Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{OnceLock, mpsc};
use std::time::Duration;

use jfgui_proto::channel::{
    AppMessage, Call, ChannelLimits, DEFAULT_MAX_FRAME, DaemonMessage, ExecuteCall, FrameDecoder,
    Outcome, Request, Welcome, decode_message, encode_frame, frame_limits,
};
use jfgui_proto::{Limits, Map, Value as ProtoValue};
use jfgui_tests::cli::{agent_command, run_agent, run_command};
use jfgui_tests::serde_json::{Value, json};
use jfgui_tests::{Daemon, PATIENCE, Proc, TempDir, Watchdog, bin, bin_dir, rpc, wait_until};

/// The C example, built once per test process with `make` into the binaries' directory.
fn c_counter() -> &'static Path {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        let libdir = bin_dir();
        let out = libdir.join("c-counter");
        let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/c-counter");
        let status = Command::new("make")
            .arg("--no-print-directory")
            .arg("-C")
            .arg(&example)
            .arg(format!("LIBDIR={}", libdir.display()))
            .arg(format!("OUT={}", out.display()))
            .status()
            .unwrap_or_else(|e| panic!("cannot run make (make and a C compiler are needed): {e}"));
        assert!(status.success(), "building examples/c-counter failed: {status}");
        out
    })
}

/// The C example with `JFGUI_RUNTIME_DIR=rt`, under `JFGUI_TEST_WRAPPER` when set.
fn counter_command(rt: &Path, args: &[&str]) -> Command {
    let wrapper = std::env::var("JFGUI_TEST_WRAPPER").unwrap_or_default();
    let mut words = wrapper.split_whitespace();
    let mut cmd = match words.next() {
        Some(program) => {
            let mut cmd = Command::new(program);
            cmd.args(words).arg(c_counter());
            cmd
        }
        None => Command::new(c_counter()),
    };
    cmd.env("JFGUI_RUNTIME_DIR", rt).env_remove("XDG_RUNTIME_DIR").args(args);
    cmd
}

/// SIGTERM, then exit status 0 (the example closes its handle; a wrapper reports here).
fn stop_cleanly(mut app: Proc) {
    app.signal("TERM");
    // A wrapper such as valgrind needs time for its leak check.
    let status = app.wait_exit(PATIENCE * 3);
    assert!(
        status.is_some_and(|s| s.success()),
        "the C example did not exit cleanly ({status:?}); its stderr:\n{}",
        app.stderr()
    );
}

fn cli_json(rt: &Path, args: &[&str]) -> Value {
    let mut all = args.to_vec();
    all.push("--json");
    run_agent(rt, &all, b"").assert_code(0).assert_no_panic().json()
}

fn inspect(rt: &Path) -> Value {
    cli_json(rt, &["inspect", "c-counter"])
}

fn add(rt: &Path, by: i64, expected: u64) -> jfgui_tests::cli::Run {
    let input = json!({"by": by}).to_string();
    let expected = expected.to_string();
    run_agent(
        rt,
        &[
            "call",
            "c-counter",
            "counter.add",
            "--input-json",
            &input,
            "--expected-revision",
            &expected,
            "--json",
        ],
        b"",
    )
}

fn assert_error(response: &Value, code: i64, reason: &str) {
    assert_eq!(response["error"]["code"], json!(code), "{response}");
    assert_eq!(response["error"]["data"]["reason"], reason, "{response}");
}

fn call(action: &str, input: Value, expected: u64) -> Value {
    json!({"action": action, "input": input, "expectedRevision": expected})
}

#[test]
fn c_counter_keeps_every_contract_through_the_daemon_and_cli() {
    let _wd = Watchdog::arm(Duration::from_secs(240));
    let dir = TempDir::new();
    let rt = dir.rt();
    let d = Daemon::start(&rt, &[]);
    let app = Proc::spawn(counter_command(&rt, &["--agent-enable"]), dir.path().join("c.log"));
    let ep = d.wait_endpoint("c-counter");

    // Registered from the JSON declarations, exactly as declared.
    let apps = cli_json(&rt, &["list"]);
    let me = apps["apps"].as_array().unwrap().iter().find(|a| a["slug"] == "c-counter").cloned();
    let me = me.unwrap_or_else(|| panic!("c-counter listed: {apps}"));
    assert_eq!(
        (me["displayName"].clone(), me["enabled"].clone()),
        (json!("C Counter"), json!(true))
    );
    assert_eq!(me["actionCount"], 4, "{me}");
    let reset = cli_json(&rt, &["describe", "c-counter", "counter.reset"]);
    assert_eq!(
        (&reset["action"]["title"], &reset["action"]["confirm"]),
        (&json!("Reset the counter"), &json!(true)),
        "title and confirm from the JSON declaration"
    );
    let described = cli_json(&rt, &["describe", "c-counter", "counter.add"]);
    let action = &described["action"];
    assert_eq!(
        action["inputSchema"],
        json!({"type": "object", "properties": {"by": {"type": "integer", "minimum": -1000, "maximum": 1000}},
               "required": ["by"], "additionalProperties": false}),
        "{described}"
    );
    assert_eq!((action["kind"].clone(), action["undo"].clone()), (json!("write"), json!(true)));
    assert_eq!(action["transaction"], "counter");

    let fresh = json!({"protocolVersion": "1", "revision": 1, "state": {"value": 0}});
    assert_eq!(inspect(&rt), fresh);
    let ok = add(&rt, 5, 1).assert_code(0).json();
    assert_eq!(
        (ok["output"]["value"].clone(), ok["revision"].clone()),
        (json!(5), json!(2)),
        "{ok}"
    );
    let after_first = inspect(&rt);

    // Stale (older and newer) revisions: refused with the current one, no side effects.
    for stale in [1, 3] {
        let r = add(&rt, 7, stale);
        r.assert_error(1, "stale_revision");
        assert_eq!(r.json()["error"]["data"]["currentRevision"], 2, "{}", r.stdout);
        assert_eq!(inspect(&rt), after_first, "a stale write changed nothing");
    }
    // A write without a revision, and input outside the schema: refused before C runs.
    let r =
        run_agent(&rt, &["call", "c-counter", "counter.add", "--input-json", r#"{"by":1}"#], b"");
    r.assert_error(1, "revision_required");
    let r = add(&rt, 5000, 2);
    r.assert_error(1, "schema_violation");
    assert_eq!(r.json()["error"]["data"]["pointer"], "/by");
    // The C callback reports an error: failed/host_error with its code, nothing changed.
    let r = add(&rt, 999, 2);
    r.assert_error(1, "host_error");
    assert_eq!(r.json()["error"]["data"]["code"], "out_of_range", "{}", r.stdout);
    assert_eq!(inspect(&rt), after_first);

    // Atomic batch failing in its second call: rolled back through the C rollback callback.
    let batch =
        |calls: Value| rpc(&ep, "actions/batch", json!({"calls": calls, "atomic": true})).unwrap();
    let failed = batch(json!([
        call("counter.add", json!({"by": 100}), 2),
        call("counter.add", json!({"by": 900}), 2)
    ]));
    assert_error(&failed, 1002, "rolled_back");
    assert_eq!(failed["error"]["data"]["index"], 1, "{failed}");
    assert_eq!(failed["error"]["data"]["cause"]["data"]["code"], "out_of_range", "{failed}");
    assert_eq!(inspect(&rt), after_first, "state and revision restored");
    // Preflight: every expectedRevision refers to the initial state; nothing begins.
    let refused = batch(json!([
        call("counter.add", json!({"by": 1}), 2),
        call("counter.add", json!({"by": 1}), 3)
    ]));
    assert_error(&refused, 1000, "batch_preflight");
    assert_eq!(refused["error"]["data"]["index"], 1, "{refused}");
    assert_eq!(inspect(&rt), after_first);
    // A committed batch is one undo step.
    let done = batch(json!([
        call("counter.add", json!({"by": 1}), 2),
        call("counter.add", json!({"by": 2}), 2)
    ]));
    assert_eq!(done["result"]["revision"], 4, "{done}");
    assert_eq!(inspect(&rt)["state"]["value"], 8);
    let undo = |expected: u64| {
        let expected = expected.to_string();
        run_agent(
            &rt,
            &["call", "c-counter", "counter.undo", "--expected-revision", &expected, "--json"],
            b"",
        )
    };
    assert_eq!(
        undo(4).assert_code(0).json()["output"]["value"],
        5,
        "the whole batch undone at once"
    );
    assert_eq!(undo(5).assert_code(0).json()["output"]["value"], 0);
    undo(6).assert_error(1, "host_error");

    d.assert_alive();
    stop_cleanly(app);
}

#[test]
fn c_counter_headless_over_stdio() {
    let _wd = Watchdog::arm(Duration::from_secs(120));
    let dir = TempDir::new();
    let counter = c_counter().to_str().expect("UTF-8 path").to_string();
    let input = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "state/inspect"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "actions/execute",
               "params": {"action": "counter.add", "input": {"by": 3}, "expectedRevision": 1}}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "actions/execute",
               "params": {"action": "counter.add", "input": {"by": 3}, "expectedRevision": 1}}),
    ]
    .iter()
    .map(|v| format!("{v}\n"))
    .collect::<String>();
    let r = run_command(
        agent_command(&dir.rt(), &["headless", &counter, "--protocol", "json"]),
        input.as_bytes(),
    );
    r.assert_code(0);
    let lines = r.json_lines();
    assert_eq!(lines[0]["result"]["state"]["value"], 0, "{}", r.stdout);
    assert_eq!(lines[1]["result"]["output"]["value"], 3, "{}", r.stdout);
    assert_eq!(lines[1]["result"]["revision"], 2, "{}", r.stdout);
    assert_eq!(lines[2]["error"]["data"]["reason"], "stale_revision", "{}", r.stdout);
}

/// The daemon's end of the host channel, played by the test.
struct StandIn {
    writer: UnixStream,
    rx: mpsc::Receiver<AppMessage>,
}

fn frame_json_limits() -> Limits {
    frame_limits(&Limits::DEFAULT, DEFAULT_MAX_FRAME)
}

impl StandIn {
    /// Accepts the app's connection on `listener` and reads its registration: (display name,
    /// enabled, action count).
    fn accept(listener: &UnixListener) -> (StandIn, (String, bool, usize)) {
        listener.set_nonblocking(false).unwrap();
        let (stream, _) = listener.accept().unwrap();
        let mut reader = stream.try_clone().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut decoder = FrameDecoder::new(DEFAULT_MAX_FRAME);
            let mut buf = [0u8; 4096];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    return;
                }
                decoder.feed(&buf[..n]);
                while let Ok(Some(body)) = decoder.next_frame() {
                    if tx.send(decode_message(&body, &frame_json_limits()).unwrap()).is_err() {
                        return;
                    }
                }
            }
        });
        let s = StandIn { writer: stream, rx };
        let AppMessage::Hello(hello) = s.next() else { panic!("hello first") };
        let AppMessage::Actions(page) = s.next() else { panic!("then actions") };
        let AppMessage::Ready(ready) = s.next() else { panic!("then ready") };
        assert_eq!(page.actions.len(), ready.action_count as usize);
        (s, (hello.display_name, hello.enabled, page.actions.len()))
    }

    fn next(&self) -> AppMessage {
        self.rx.recv_timeout(PATIENCE).expect("a message from the app in time")
    }

    fn send(&mut self, msg: &DaemonMessage) {
        let frame = encode_frame(msg, &frame_json_limits(), DEFAULT_MAX_FRAME).unwrap();
        self.writer.write_all(&frame).unwrap();
    }

    fn welcome(&mut self, max_message_bytes: u32) {
        self.send(&DaemonMessage::Welcome(Welcome {
            slug: "c-counter".into(),
            limits: ChannelLimits { max_frame_bytes: DEFAULT_MAX_FRAME as u32, max_message_bytes },
        }));
    }

    /// Sends `actions/execute` of `action` with `{}` input and returns the reply's error reason
    /// and data.
    fn execute_error(&mut self, id: u64, action: &str) -> (String, Map) {
        let call = ExecuteCall {
            action: action.into(),
            input: ProtoValue::Object(Map::new()).into(),
            expected_revision: None,
            consent: None,
        };
        self.send(&DaemonMessage::Request(Request { id, call: Call::Execute(call) }));
        match self.next() {
            AppMessage::Reply(r) if r.id == id => match r.outcome {
                Outcome::Error(e) => (e.reason.as_str().to_string(), e.reason.data()),
                other => panic!("expected an error, got {other:?}"),
            },
            other => panic!("expected the reply to {id}, got {other:?}"),
        }
    }
}

#[test]
fn c_counter_rejects_while_disabled_and_bounds_its_replies() {
    let _wd = Watchdog::arm(Duration::from_secs(180));
    let dir = TempDir::new();
    let rt = dir.rt();
    std::fs::create_dir(&rt).unwrap();
    std::fs::set_permissions(&rt, std::fs::Permissions::from_mode(0o700)).unwrap();
    let listener = UnixListener::bind(rt.join("host.sock")).unwrap();

    // Without --agent-enable the app registers disabled, and a request that reaches it
    // anyway is refused before any callback runs.
    let app = Proc::spawn(counter_command(&rt, &[]), dir.path().join("disabled.log"));
    let (mut s, registration) = StandIn::accept(&listener);
    assert_eq!(registration, ("C Counter".to_string(), false, 4));
    s.welcome(1024 * 1024);
    assert_eq!(s.execute_error(1, "counter.get").0, "disabled");
    stop_cleanly(app);

    // A reply larger than the daemon's announced message bound becomes
    // internal/response_too_large naming the action; the app keeps serving.
    let app = Proc::spawn(counter_command(&rt, &["--agent-enable"]), dir.path().join("big.log"));
    let (mut s, registration) = StandIn::accept(&listener);
    assert!(registration.1, "enabled with the flag");
    s.welcome(48);
    let (reason, data) = s.execute_error(2, "counter.get");
    assert_eq!(reason, "response_too_large");
    assert_eq!(data.get("action").and_then(ProtoValue::as_str), Some("counter.get"));
    // Still serving: the next request is answered (its error is too large as well).
    let (reason, data) = s.execute_error(3, "counter.nope");
    assert_eq!(reason, "response_too_large");
    assert_eq!(data.get("action").and_then(ProtoValue::as_str), Some("counter.nope"));
    stop_cleanly(app);
}

/// The shim with its stdin for commands.
fn shim(rt: &Path, dir: &Path) -> (Proc, std::process::ChildStdin) {
    let mut cmd = Command::new(bin("jfgui-capi-shim"));
    cmd.env("JFGUI_RUNTIME_DIR", rt).env_remove("XDG_RUNTIME_DIR").arg("--agent-enable");
    Proc::spawn_with_input(cmd, dir.join("shim.log"))
}

#[test]
fn failing_and_panicking_callbacks_leave_app_and_daemon_healthy() {
    let _wd = Watchdog::arm(Duration::from_secs(180));
    let dir = TempDir::new();
    let rt = dir.rt();
    let d = Daemon::start(&rt, &[]);
    let (mut app, mut commands) = shim(&rt, dir.path());
    let ep = d.wait_endpoint("capi-shim");
    let exec = |action: &str, input: Value, expected: Option<u64>| {
        let mut params = json!({"action": action, "input": input});
        if let Some(r) = expected {
            params["expectedRevision"] = json!(r);
        }
        rpc(&ep, "actions/execute", params).unwrap()
    };

    let panicked = exec("shim.panic", json!({}), Some(1));
    assert_error(&panicked, 1003, "invalid_reply");
    let message = panicked["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("execute callback panicked"), "{panicked}");
    let failed = exec("shim.fail", json!({}), Some(1));
    assert_error(&failed, 1002, "host_error");
    assert_eq!(failed["error"]["data"]["code"], "shim_failure", "{failed}");
    let silent = exec("shim.silent", json!({}), None);
    assert_error(&silent, 1003, "invalid_reply");
    assert!(silent["error"]["message"].as_str().unwrap_or_default().contains("without a result"));
    let big = exec("shim.big", json!({"bytes": 2 * 1024 * 1024}), None);
    assert_error(&big, 1003, "response_too_large");
    assert_eq!(big["error"]["data"]["action"], "shim.big", "{big}");

    // Every callback ran once; the app serves on, its revision untouched by the failures.
    let state = exec("shim.get", json!({}), None);
    assert_eq!(state["result"]["output"], json!({"calls": 5, "bumps": 0}), "{state}");
    assert_eq!(state["result"]["revision"], 1);
    let bumped = exec("shim.bump", json!({}), Some(1));
    assert_eq!(bumped["result"]["revision"], 2, "{bumped}");
    d.assert_alive();
    assert!(app.try_status().is_none(), "the shim survived: {}", app.stderr());

    // set_enabled through the ABI: the daemon removes the endpoint, then brings it back.
    let enabled = |want: bool| {
        wait_until(PATIENCE, || {
            d.apps().iter().any(|a| a["slug"] == "capi-shim" && a["enabled"] == want)
        })
    };
    writeln!(commands, "disable").unwrap();
    assert!(enabled(false), "disabled: {:?}", d.apps());
    assert!(wait_until(PATIENCE, || UnixStream::connect(&ep).is_err()), "endpoint removed");
    writeln!(commands, "enable").unwrap();
    let ep = d.wait_endpoint("capi-shim");
    assert_eq!(json_result(&ep, "shim.get")["output"]["calls"], 7);
    writeln!(commands, "quit").unwrap();
    assert!(app.wait_exit(PATIENCE).is_some_and(|s| s.success()), "{}", app.stderr());
    d.assert_alive();
}

fn json_result(ep: &Path, action: &str) -> Value {
    jfgui_tests::json1(ep, "actions/execute", json!({"action": action}))
}
