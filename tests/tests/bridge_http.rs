//! The browser bridge at the HTTP level: the real daemon, the real
//! `jfgui-agent browser-bridge`, raw requests over TCP and a scripted browser. Each test is
//! named after the attack it fends off.

use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, mpsc};
use std::thread;
use std::time::Duration;

use jfgui_tests::bridge::{
    AutoBrowser, BridgeRig, ORIGIN, exchange, execute_get, executed, open_bridge, read_answer,
    request_bytes, tcp_listeners, time_until, wait_opened,
};
use jfgui_tests::serde_json::{Value, json};
use jfgui_tests::{Daemon, PATIENCE, TempDir, Watchdog, agent, wait_until};

fn body_text(h: &jfgui_tests::bridge::Http) -> String {
    String::from_utf8_lossy(&h.body).to_string()
}

/// Headers with `Origin` and the given `Authorization`.
fn with_auth(auth: &str) -> Vec<(&'static str, String)> {
    vec![("Origin", ORIGIN.to_string()), ("Authorization", auth.to_string())]
}

fn send(
    rig: &BridgeRig,
    method: &str,
    path: &str,
    headers: &[(&str, String)],
    body: &[u8],
) -> jfgui_tests::bridge::Http {
    let h: Vec<(&str, &str)> = headers.iter().map(|(n, v)| (*n, v.as_str())).collect();
    exchange(rig.port, &request_bytes(rig.port, method, path, &h, body))
}

#[test]
fn missing_or_wrong_token_is_401_without_cors_or_side_effect() {
    let _w = Watchdog::arm(Duration::from_secs(120));
    let rig = BridgeRig::start(&[]);
    let body = jfgui_tests::bridge::registration("Spoof", true).to_string();
    let t = rig.token.clone();
    let flip = |i: usize| {
        let mut b = t.clone().into_bytes();
        b[i] = if b[i] == b'A' { b'B' } else { b'A' };
        String::from_utf8(b).unwrap()
    };
    type Case<'a> = (&'a str, Vec<(&'a str, String)>, String);
    let cases: Vec<Case<'_>> = vec![
        ("no Authorization", vec![("Origin", ORIGIN.into())], "/connect".into()),
        ("first byte flipped", with_auth(&format!("Bearer {}", flip(0))), "/connect".into()),
        (
            "last byte flipped",
            with_auth(&format!("Bearer {}", flip(t.len() - 1))),
            "/connect".into(),
        ),
        ("shorter", with_auth(&format!("Bearer {}", &t[..t.len() - 1])), "/connect".into()),
        ("longer", with_auth(&format!("Bearer {t}A")), "/connect".into()),
        ("empty", with_auth("Bearer "), "/connect".into()),
        (
            "lowercase scheme, wrong token",
            with_auth(&format!("bearer {}", flip(5))),
            "/connect".into(),
        ),
        ("Basic scheme", with_auth(&format!("Basic {t}")), "/connect".into()),
        ("token in the query", vec![("Origin", ORIGIN.into())], format!("/connect?token={t}")),
        (
            "token in a cookie",
            vec![("Origin", ORIGIN.into()), ("Cookie", format!("token={t}"))],
            "/connect".into(),
        ),
    ];
    for (label, headers, path) in &cases {
        let answer = send(&rig, "POST", path, headers, body.as_bytes());
        assert_eq!(answer.status, 401, "{label}: {}", body_text(&answer));
        assert!(!answer.has_cors(), "{label}: CORS headers on a 401");
        assert_eq!(answer.json()["error"]["reason"], "unauthorized", "{label}");
    }
    // The same refusal on every other route, including /rpc without Origin.
    for path in ["/poll?client=x", "/result", "/message", "/disconnect", "/session/close"] {
        let method = if path.starts_with("/poll") { "GET" } else { "POST" };
        let answer = send(&rig, method, path, &[("Origin", ORIGIN.into())], b"{}");
        assert_eq!(answer.status, 401, "{path}");
    }
    let rpc = send(&rig, "POST", "/rpc", &[], br#"{"session":"s","request":{}}"#);
    assert_eq!(rpc.status, 401);
    assert!(rig.daemon.apps().is_empty(), "a refused /connect registered an app");
    // The scheme is case-insensitive: lowercase `bearer` with the right token is accepted.
    let ok = send(&rig, "POST", "/connect", &with_auth(&format!("bearer {t}")), body.as_bytes());
    assert_eq!(ok.status, 200, "{}", body_text(&ok));
    // Only browser-bridge's own {url, token, origin} line carries it, on stderr.
    assert!(!rig.daemon.proc.stderr().contains(&rig.token), "the daemon logged the token");
    assert_eq!(
        rig.cli.stderr().matches(&rig.token).count(),
        1,
        "browser-bridge repeated the token"
    );
}

#[test]
fn fresh_token_per_start_never_on_stdout_nor_in_argv() {
    let _w = Watchdog::arm(Duration::from_secs(120));
    let dir = TempDir::new();
    let daemon = Daemon::start(&dir.rt(), &[]);
    let mut tokens = Vec::new();
    for tag in ["one", "two"] {
        let (mut cli, token_file, stdout) = open_bridge(&dir, &daemon, tag);
        let opened = wait_opened(&cli);
        let token = opened["token"].as_str().unwrap().to_string();
        assert_eq!(token.len(), 43, "256 bits in base64url: {token}");
        assert!(token.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'));
        let written = std::fs::read_to_string(&token_file).unwrap();
        assert_eq!(written.trim(), token);
        assert_eq!(jfgui_tests::mode(&token_file) & 0o777, 0o600);
        cli.signal("INT");
        assert!(cli.wait_exit(PATIENCE).is_some_and(|s| s.success()), "{}", cli.stderr());
        assert_eq!(std::fs::read_to_string(stdout).unwrap(), "", "browser-bridge wrote stdout");
        tokens.push(token);
    }
    assert_ne!(tokens[0], tokens[1], "a bridge start reused a token");
    assert!(!daemon.proc.stderr().contains(&tokens[0]), "the daemon logged a token");

    // The recommended ways keep the token out of argv: env and --token-file.
    let rig = BridgeRig::start(&[]);
    for how in ["env", "file"] {
        let mut cmd = Command::new(agent());
        cmd.args(["browser-stdio", "--url", &rig.url()]);
        if how == "env" {
            cmd.env("JFGUI_BRIDGE_TOKEN", &rig.token);
        } else {
            cmd.arg("--token-file").arg(&rig.token_file);
        }
        let mut child =
            cmd.stdin(Stdio::piped()).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
        let path = format!("/proc/{}/cmdline", child.id());
        let mut cmdline = Vec::new();
        // After exec (before it, the child still shows the test's own command line).
        assert!(wait_until(PATIENCE, || {
            cmdline = std::fs::read(&path).unwrap_or_default();
            String::from_utf8_lossy(&cmdline).contains("browser-stdio")
        }));
        assert!(!String::from_utf8_lossy(&cmdline).contains(&rig.token), "{how}: token in argv");
        drop(child.stdin.take());
        assert!(child.wait().unwrap().success(), "{how}");
    }
}

#[test]
fn a_wrong_origin_is_403_everywhere_even_with_the_token() {
    let _w = Watchdog::arm(Duration::from_secs(120));
    let rig = BridgeRig::start(&[]);
    let auth = format!("Bearer {}", rig.token);
    let origins = [
        "http://127.0.0.1:8765/",
        "HTTP://127.0.0.1:8765",
        "http://localhost:8765",
        "http://127.0.0.1:8766",
        "https://127.0.0.1:8765",
        "http://127.0.0.1:8765.evil.example",
        "http://evil.example",
        "null",
    ];
    let routes = [
        ("POST", "/connect"),
        ("GET", "/poll?client=x"),
        ("POST", "/result"),
        ("POST", "/message"),
        ("POST", "/disconnect"),
        ("POST", "/rpc"),
        ("POST", "/session/close"),
    ];
    let body = jfgui_tests::bridge::registration("Evil", true).to_string();
    for origin in origins {
        for (method, path) in routes {
            let headers = vec![("Origin", origin.to_string()), ("Authorization", auth.clone())];
            let answer = send(&rig, method, path, &headers, body.as_bytes());
            assert_eq!(answer.status, 403, "{origin} {path}: {}", body_text(&answer));
            assert!(answer.header("access-control-allow-origin").is_none(), "{origin} {path}");
        }
    }
    // Two Origin headers, even if one is right.
    let headers = vec![
        ("Origin", ORIGIN.to_string()),
        ("Origin", "http://evil.example".to_string()),
        ("Authorization", auth.clone()),
    ];
    assert_eq!(send(&rig, "POST", "/connect", &headers, body.as_bytes()).status, 403);
    // Browser routes need an Origin; /rpc (a CLI client) does not.
    let no_origin = vec![("Authorization", auth.clone())];
    assert_eq!(send(&rig, "POST", "/connect", &no_origin, body.as_bytes()).status, 403);
    assert!(rig.daemon.apps().is_empty(), "a refused /connect registered an app");
    let rpc = rig.rpc("s", &json!({"jsonrpc": "2.0", "id": 1, "method": "agent/info"}));
    assert_eq!(rpc.status, 200);
    assert_eq!(rpc.json()["error"]["data"]["reason"], "no_app", "{}", body_text(&rpc));
}

#[test]
fn preflight_is_answered_only_for_the_configured_origin() {
    let _w = Watchdog::arm(Duration::from_secs(60));
    let rig = BridgeRig::start(&[]);
    let pre = |origin: &str, method: &str, headers: &str, extra: &[(&str, &str)]| {
        let mut h = vec![
            ("Origin", origin.to_string()),
            ("Access-Control-Request-Method", method.to_string()),
            ("Access-Control-Request-Headers", headers.to_string()),
        ];
        h.extend(extra.iter().map(|(n, v)| (*n, v.to_string())));
        send(&rig, "OPTIONS", "/connect", &h, b"")
    };
    let ok = pre(ORIGIN, "POST", "authorization, content-type", &[]);
    assert_eq!(ok.status, 204);
    assert_eq!(ok.header("access-control-allow-origin"), Some(ORIGIN));
    assert_eq!(ok.header("vary"), Some("Origin"));
    assert_eq!(ok.header("access-control-allow-methods"), Some("GET, POST"));
    assert_eq!(ok.header("access-control-allow-headers"), Some("authorization, content-type"));
    assert!(ok.header("access-control-allow-credentials").is_none());
    assert!(ok.header("access-control-allow-private-network").is_none());
    let wrong = pre("http://evil.example", "POST", "authorization", &[]);
    assert_eq!(wrong.status, 403);
    assert!(!wrong.has_cors());
    assert_eq!(pre(ORIGIN, "PUT", "authorization", &[]).status, 403);
    assert_eq!(pre(ORIGIN, "POST", "authorization, x-extra", &[]).status, 403);
    let pna =
        pre(ORIGIN, "POST", "authorization", &[("Access-Control-Request-Private-Network", "true")]);
    assert_eq!(pna.header("access-control-allow-private-network"), Some("true"));
    let pna_evil = pre(
        "http://evil.example",
        "POST",
        "authorization",
        &[("Access-Control-Request-Private-Network", "true")],
    );
    assert_eq!(pna_evil.status, 403);
    assert!(!pna_evil.has_cors());
    assert!(rig.daemon.apps().is_empty());
}

/// DNS rebinding: one test per `Host` bypass class; every one is refused before the body is read.
macro_rules! host_case {
    ($name:ident, $raw:expr) => {
        #[test]
        fn $name() {
            let _w = Watchdog::arm(Duration::from_secs(60));
            let rig = BridgeRig::start(&[]);
            let make: fn(u16, &str) -> Vec<u8> = $raw;
            let body = jfgui_tests::bridge::registration("Rebind", true).to_string();
            let answer = exchange(rig.port, &make(rig.port, &format!("Origin: {ORIGIN}\r\nAuthorization: Bearer {}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}", rig.token, body.len())));
            assert!(matches!(answer.status, 400 | 403), "status {}: {}", answer.status, body_text(&answer));
            assert!(rig.daemon.apps().is_empty(), "a rebinding request registered an app");
        }
    };
}

host_case!(host_header_dns_name, |p, rest| format!(
    "POST /connect HTTP/1.1\r\nHost: evil.example:{p}\r\n{rest}"
)
.into_bytes());
host_case!(host_header_localhost, |p, rest| format!(
    "POST /connect HTTP/1.1\r\nHost: localhost:{p}\r\n{rest}"
)
.into_bytes());
host_case!(host_header_without_port, |_, rest| format!(
    "POST /connect HTTP/1.1\r\nHost: 127.0.0.1\r\n{rest}"
)
.into_bytes());
host_case!(host_header_other_port, |p, rest| format!(
    "POST /connect HTTP/1.1\r\nHost: 127.0.0.1:{}\r\n{rest}",
    p.wrapping_add(1)
)
.into_bytes());
host_case!(host_header_trailing_dot, |p, rest| format!(
    "POST /connect HTTP/1.1\r\nHost: 127.0.0.1:{p}.\r\n{rest}"
)
.into_bytes());
host_case!(host_header_ipv6_loopback, |p, rest| format!(
    "POST /connect HTTP/1.1\r\nHost: [::1]:{p}\r\n{rest}"
)
.into_bytes());
host_case!(host_header_hex_short_form, |p, rest| format!(
    "POST /connect HTTP/1.1\r\nHost: 0x7f.1:{p}\r\n{rest}"
)
.into_bytes());
host_case!(host_header_decimal_form, |p, rest| format!(
    "POST /connect HTTP/1.1\r\nHost: 2130706433:{p}\r\n{rest}"
)
.into_bytes());
host_case!(host_header_absent_http10, |_, rest| format!("POST /connect HTTP/1.0\r\n{rest}")
    .into_bytes());
host_case!(host_header_twice, |p, rest| format!(
    "POST /connect HTTP/1.1\r\nHost: 127.0.0.1:{p}\r\nHost: evil.example\r\n{rest}"
)
.into_bytes());
host_case!(host_header_absolute_form_target, |p, rest| format!(
    "POST http://evil.example/connect HTTP/1.1\r\nHost: 127.0.0.1:{p}\r\n{rest}"
)
.into_bytes());

/// A TCP server that counts every byte it receives (the proxy or redirect target).
fn capture_server() -> (u16, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let bytes = Arc::new(AtomicUsize::new(0));
    let counter = bytes.clone();
    thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut s) = stream else { return };
            let counter = counter.clone();
            thread::spawn(move || {
                let mut buf = [0u8; 4096];
                while let Ok(n) = std::io::Read::read(&mut s, &mut buf) {
                    if n == 0 {
                        break;
                    }
                    counter.fetch_add(n, Ordering::SeqCst);
                }
            });
        }
    });
    (port, bytes)
}

/// A fake bridge that answers every request with `status` and `Location: location`.
fn redirecting_server(status: &'static str, location: String) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut s) = stream else { return };
            let answer = format!(
                "HTTP/1.1 {status}\r\nLocation: {location}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            );
            let _ = read_answer(&mut s.try_clone().unwrap()).status;
            let _ = s.write_all(answer.as_bytes());
        }
    });
    port
}

fn cli_with_proxies(capture: u16, args: &[&str], token: &str) -> Command {
    let proxy = format!("http://127.0.0.1:{capture}");
    let mut cmd = Command::new(agent());
    for var in ["HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy", "HTTPS_PROXY", "https_proxy"]
    {
        cmd.env(var, &proxy);
    }
    cmd.env_remove("NO_PROXY").env_remove("no_proxy").env("JFGUI_BRIDGE_TOKEN", token).args(args);
    cmd
}

#[test]
fn cli_clients_ignore_proxies_and_refuse_redirects() {
    let _w = Watchdog::arm(Duration::from_secs(120));
    let (capture, received) = capture_server();
    let rig = BridgeRig::start(&[]);
    // Through the proxy variables to the real bridge: the call works and the proxy sees nothing.
    let out =
        cli_with_proxies(capture, &["browser-call", "--url", &rig.url(), "agent/info"], &rig.token)
            .output()
            .unwrap();
    assert_eq!(
        out.status.code(),
        Some(3),
        "no app attached: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("no_app"));
    for status in ["307 Temporary Redirect", "302 Found"] {
        let fake = redirecting_server(status, format!("http://127.0.0.1:{capture}/"));
        let url = format!("http://127.0.0.1:{fake}");
        let out = cli_with_proxies(capture, &["browser-call", "--url", &url, "agent/info"], "tok")
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(7),
            "{status}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(String::from_utf8_lossy(&out.stderr).contains("redirect"), "{status}");
        let mut child = cli_with_proxies(capture, &["browser-stdio", "--url", &url], "tok")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"agent/info\"}\n")
            .unwrap();
        let out = child.wait_with_output().unwrap();
        // The request is answered in-band (its id, the reason) and EOF ends the command.
        let answer: Value = jfgui_tests::serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(answer["id"], 1, "stdio {status}: {answer}");
        assert_eq!(answer["error"]["data"]["reason"], "redirect_refused", "stdio {status}");
        assert_eq!(
            out.status.code(),
            Some(0),
            "stdio {status}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    thread::sleep(Duration::from_millis(200));
    assert_eq!(received.load(Ordering::SeqCst), 0, "the capture server received bytes");
}

/// A full request queue, lowered to 4.
#[test]
fn queue_full_answers_busy_at_once_and_delivers_each_request_once() {
    let _w = Watchdog::arm(Duration::from_secs(120));
    let rig = BridgeRig::start(&["--bridge-queue", "4"]);
    let client = rig.connect("Queue", true);
    let calls: Vec<_> = (1..=4).map(|i| rig.rpc_later(&format!("s{i}"), execute_get(i))).collect();
    // Each /rpc session is one client connection of the engine.
    assert!(wait_until(PATIENCE, || rig.daemon.status()["clients"].as_u64() >= Some(4)));
    thread::sleep(Duration::from_millis(300));
    let fifth = rig.rpc("s5", &execute_get(5));
    let e = &fifth.json()["error"];
    assert_eq!(e["code"], 1000, "{}", body_text(&fifth));
    assert_eq!(e["data"]["reason"], "busy");
    let mut delivered = Vec::new();
    while delivered.len() < 4 {
        let items = rig.poll(&client);
        assert!(items.len() <= 8);
        for item in items {
            rig.result(&client, &item["id"], executed(1));
            delivered.push(item["id"].clone());
        }
    }
    let mut unique = delivered.clone();
    unique.dedup();
    assert_eq!(unique.len(), 4, "each request delivered once: {delivered:?}");
    for call in calls {
        let answer = call.join().unwrap();
        assert_eq!(answer.json()["result"]["revision"], 1, "{}", body_text(&answer));
    }
}

/// A full request queue at the shipped default (64): 65 requests on the tab's endpoint socket, over 17
/// connections (a new connection is admitted a few calls at a time).
#[test]
fn queue_full_at_the_shipped_default_of_64() {
    let _w = Watchdog::arm(Duration::from_secs(120));
    let rig = BridgeRig::start(&["--bridge-poll-wait", "500ms"]);
    let client = rig.connect("Queue64", true);
    let endpoint = rig.daemon.wait_endpoint("queue64");
    let mut conns: Vec<(UnixStream, std::io::BufReader<UnixStream>)> = (0..17)
        .map(|_| {
            let s = UnixStream::connect(&endpoint).unwrap();
            let r = std::io::BufReader::new(s.try_clone().unwrap());
            (s, r)
        })
        .collect();
    for i in 0..64u64 {
        let line = format!("{}\n", execute_get(i + 1));
        conns[(i / 4) as usize].0.write_all(line.as_bytes()).unwrap();
    }
    // Give the 64 time to reach the bridge's queue (nothing polls), then send the 65th.
    thread::sleep(Duration::from_secs(2));
    let line = format!("{}\n", execute_get(65));
    conns[16].0.write_all(line.as_bytes()).unwrap();
    let mut answer = String::new();
    std::io::BufRead::read_line(&mut conns[16].1, &mut answer).unwrap();
    let answer: Value = jfgui_tests::serde_json::from_str(&answer).unwrap();
    assert_eq!(answer["id"], 65, "{answer}");
    assert_eq!(answer["error"]["data"]["reason"], "busy", "{answer}");
    let mut ids = Vec::new();
    while ids.len() < 64 {
        let items = rig.poll(&client);
        assert!(items.len() <= 8);
        for item in &items {
            rig.result(&client, &item["id"], executed(2));
            ids.push(item["id"].as_u64().unwrap());
        }
    }
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), 64, "64 unique deliveries");
    for (_, reader) in conns.iter_mut().take(16) {
        for _ in 0..4 {
            let mut line = String::new();
            std::io::BufRead::read_line(reader, &mut line).unwrap();
            let v: Value = jfgui_tests::serde_json::from_str(&line).unwrap();
            assert_eq!(v["result"]["revision"], 2, "{v}");
        }
    }
}

use std::os::unix::net::UnixStream;

#[test]
fn oversize_and_malformed_bodies() {
    let _w = Watchdog::arm(Duration::from_secs(120));
    let rig =
        BridgeRig::start(&["--bridge-body-deadline", "300ms", "--bridge-header-deadline", "2s"]);
    let auth = format!("Bearer {}", rig.token);
    let head = |extra: &str| {
        format!(
            "POST /connect HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nOrigin: {ORIGIN}\r\nAuthorization: {auth}\r\n{extra}\r\n",
            rig.port
        )
    };
    // 1 MiB + 1 announced, headers only: 413 at once, no body read.
    let mut s = TcpStream::connect(("127.0.0.1", rig.port)).unwrap();
    s.set_read_timeout(Some(PATIENCE)).unwrap();
    s.write_all(head(&format!("Content-Length: {}\r\n", 1024 * 1024 + 1)).as_bytes()).unwrap();
    let took = std::time::Instant::now();
    let answer = read_answer(&mut s);
    assert_eq!(answer.status, 413, "{}", body_text(&answer));
    eprintln!("413 for an oversize Content-Length after {:?}", took.elapsed());
    // Shorter than announced, then a stall: 408 at the body deadline.
    let mut s = TcpStream::connect(("127.0.0.1", rig.port)).unwrap();
    s.set_read_timeout(Some(PATIENCE)).unwrap();
    s.write_all(format!("{}{{\"app\"", head("Content-Length: 100\r\n")).as_bytes()).unwrap();
    assert_eq!(read_answer(&mut s).status, 408);
    // Absurd or conflicting lengths: refused by the HTTP parser.
    for extra in
        ["Content-Length: 99999999999999999999\r\n", "Content-Length: 5\r\nContent-Length: 6\r\n"]
    {
        let status = exchange(rig.port, format!("{}abcde", head(extra)).as_bytes()).status;
        assert!(matches!(status, 400 | 413), "{extra:?}: {status}");
    }
    // Endless chunks: cut off at the bound.
    let mut s = TcpStream::connect(("127.0.0.1", rig.port)).unwrap();
    s.set_read_timeout(Some(PATIENCE)).unwrap();
    s.write_all(head("Transfer-Encoding: chunked\r\n").as_bytes()).unwrap();
    let chunk = format!("{:x}\r\n{}\r\n", 64 * 1024, "a".repeat(64 * 1024));
    for _ in 0..40 {
        if s.write_all(chunk.as_bytes()).is_err() {
            break;
        }
    }
    assert_eq!(read_answer(&mut s).status, 413);
    // 100 KiB of headers, and 10 000 headers: 431.
    let big = format!("X-Big: {}\r\n", "a".repeat(100 * 1024));
    assert_eq!(exchange(rig.port, head(&big).as_bytes()).status, 431);
    let many: String = (0..10_000).map(|i| format!("X-H{i}: v\r\n")).collect();
    assert_eq!(exchange(rig.port, head(&many).as_bytes()).status, 431);
    // Not JSON, and not strict JSON (a duplicate key).
    for body in ["not json", "{\"app\":1,\"app\":2}", "[1,2]"] {
        let answer = exchange(
            rig.port,
            format!("{}{body}", head(&format!("Content-Length: {}\r\n", body.len()))).as_bytes(),
        );
        assert_eq!(answer.status, 400, "{body}: {}", body_text(&answer));
    }
    assert!(rig.daemon.apps().is_empty());
    rig.daemon.assert_alive();
}

#[test]
fn expiry_fails_queued_as_not_executed_and_delivered_as_outcome_unknown() {
    let _w = Watchdog::arm(Duration::from_secs(120));
    let rig = BridgeRig::start(&["--bridge-expiry", "1s", "--bridge-poll-wait", "200ms"]);
    let client = rig.connect("Expiry", true);
    let delivered = rig.rpc_later("a", execute_get(1));
    let mut items = Vec::new();
    wait_until(PATIENCE, || {
        items = rig.poll(&client);
        !items.is_empty()
    });
    assert_eq!(items.len(), 1);
    let queued = rig.rpc_later("b", execute_get(2));
    // Stop polling: after the expiry both fail, each with the right class.
    let gone = time_until(PATIENCE, || rig.daemon.apps().is_empty());
    eprintln!("browser removed {gone:?} after its last poll (expiry 1 s)");
    assert!(gone.is_some(), "the expired browser is still listed");
    let d = delivered.join().unwrap().json();
    assert_eq!(d["error"]["code"], 1001, "delivered, unanswered: {d}");
    assert_eq!(d["error"]["data"]["reason"], "app_disconnected");
    let q = queued.join().unwrap().json();
    assert!(
        q["error"]["code"] == 1000 || q["error"]["data"]["reason"] == "no_app",
        "never delivered: {q}"
    );
    assert_ne!(
        q["error"]["code"], 1001,
        "a never-delivered request claimed an unknown outcome: {q}"
    );
    assert!(!d.to_string().contains("cancel") && !d.to_string().contains("rolled"));
    assert_eq!(rig.result(&client, &items[0]["id"], executed(1)).status, 409);
}

/// A tab closed while its `/poll` waits: the browser drops the connection, the server drops
/// the poll, and the tab must still expire (found with Firefox, whose closed tab sometimes
/// sends no `/disconnect`: a dropped poll used to count as waiting forever).
#[test]
fn a_tab_closed_during_a_poll_still_expires() {
    let _w = Watchdog::arm(Duration::from_secs(120));
    let rig = BridgeRig::start(&["--bridge-expiry", "1s", "--bridge-poll-wait", "60s"]);
    let client = rig.connect("Closed mid-poll", true);
    let headers = rig.browser_headers();
    let h: Vec<(&str, &str)> = headers.iter().map(|(n, v)| (*n, v.as_str())).collect();
    let mut poll = TcpStream::connect(("127.0.0.1", rig.port)).unwrap();
    let path = format!("/poll?client={client}");
    poll.write_all(&request_bytes(rig.port, "GET", &path, &h, b"")).unwrap();
    // Well past the expiry while the poll waits: a waiting poll keeps the tab alive.
    thread::sleep(Duration::from_millis(2500));
    assert_eq!(rig.daemon.apps().len(), 1, "a tab with a waiting poll expired");
    drop(poll);
    let gone = time_until(PATIENCE, || rig.daemon.apps().is_empty());
    eprintln!("browser removed {gone:?} after its poll's connection closed (expiry 1 s)");
    assert!(gone.is_some(), "a tab whose poll connection closed never expired");
    rig.daemon.assert_alive();
}

#[test]
fn result_spoofing_is_rejected_and_the_first_valid_result_wins() {
    let _w = Watchdog::arm(Duration::from_secs(60));
    let rig = BridgeRig::start(&[]);
    let first = rig.connect("Spoofed", true);
    // An id never delivered.
    let never = rig.result(&first, &json!(999), executed(1));
    assert_eq!(never.status, 409);
    assert_eq!(never.json()["accepted"], false);
    let call = rig.rpc_later("s", execute_get(1));
    let mut items = Vec::new();
    wait_until(PATIENCE, || {
        items = rig.poll(&first);
        !items.is_empty()
    });
    let id = items[0]["id"].clone();
    // A wrong client id.
    let wrong = rig.result("0123456789abcdef0123456789abcdef", &id, executed(7));
    assert_eq!(wrong.status, 409);
    assert_ne!(wrong.json()["accepted"], true);
    // A malformed outcome is refused and does not use up the id.
    assert_eq!(rig.result(&first, &id, json!({"ok": {"nonsense": {}}})).status, 400);
    assert_eq!(rig.result(&first, &id, executed(3)).status, 200);
    assert_eq!(rig.result(&first, &id, executed(4)).status, 409, "a second result");
    let answer = call.join().unwrap().json();
    assert_eq!(answer["result"]["revision"], 3, "{answer}");
    // An id delivered to an earlier client: the new client cannot answer it.
    assert_eq!(rig.browser("POST", "/disconnect", &json!({"client": first})).status, 200);
    let second = rig.connect("Spoofed", true);
    assert_eq!(rig.result(&second, &id, executed(5)).status, 409);
    assert_eq!(rig.result(&first, &id, executed(5)).status, 409);
}

#[test]
fn connection_cap_slowloris_and_parallel_polls() {
    let _w = Watchdog::arm(Duration::from_secs(120));
    let rig = BridgeRig::start(&["--bridge-header-deadline", "1s", "--bridge-poll-wait", "2s"]);
    let client = rig.connect("Cap", true);
    // 16 connections sending headers one byte at a time.
    let mut slow: Vec<TcpStream> = (0..16)
        .map(|_| {
            let mut s = TcpStream::connect(("127.0.0.1", rig.port)).unwrap();
            s.write_all(b"P").unwrap();
            s
        })
        .collect();
    thread::sleep(Duration::from_millis(200));
    let took = std::time::Instant::now();
    let seventeenth = exchange(rig.port, b"GET / HTTP/1.1\r\n\r\n");
    assert_eq!(seventeenth.status, 503, "{}", body_text(&seventeenth));
    eprintln!("the 17th connection refused after {:?}", took.elapsed());
    // The header deadline frees the slots; then a legitimate /rpc works.
    let ok = time_until(PATIENCE, || {
        rig.rpc("x", &json!({"jsonrpc": "2.0", "id": 1, "method": "actions/list"})).status == 200
    });
    eprintln!("a legitimate /rpc succeeded {ok:?} after the slowloris start (header deadline 1 s)");
    assert!(ok.is_some());
    for s in &mut slow {
        let _ = s.write_all(b"O");
    }
    // 20 polls at once for one client (those over the connection cap get 503) never deliver an
    // item twice: a newer poll answers the older ones at once with [].
    let calls: Vec<_> = (1..=3).map(|i| rig.rpc_later(&format!("p{i}"), execute_get(i))).collect();
    assert!(wait_until(PATIENCE, || rig.daemon.status()["clients"].as_u64() >= Some(4)));
    thread::sleep(Duration::from_millis(300));
    let (tx, rx) = mpsc::channel();
    let mut pollers = Vec::new();
    for _ in 0..20 {
        let (port, token, client, tx) = (rig.port, rig.token.clone(), client.clone(), tx.clone());
        pollers.push(thread::spawn(move || {
            let auth = format!("Bearer {token}");
            let bytes = request_bytes(
                port,
                "GET",
                &format!("/poll?client={client}"),
                &[("Origin", ORIGIN), ("Authorization", &auth)],
                b"",
            );
            let answer = exchange(port, &bytes);
            if answer.status == 200 {
                for item in answer.json()["requests"].as_array().unwrap() {
                    tx.send(item["id"].clone()).unwrap();
                }
            }
        }));
    }
    for p in pollers {
        p.join().unwrap();
    }
    drop(tx);
    let mut seen: Vec<Value> = rx.iter().collect();
    while seen.len() < 3 {
        seen.extend(rig.poll(&client).into_iter().map(|i| i["id"].clone()));
    }
    let mut unique: Vec<String> = seen.iter().map(Value::to_string).collect();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), seen.len(), "an item was delivered twice: {seen:?}");
    for id in &seen {
        rig.result(&client, id, executed(9));
    }
    for c in calls {
        assert_eq!(c.join().unwrap().json()["result"]["revision"], 9);
    }
}

fn initialize(id: u64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
}

#[test]
fn sessions_lru_legacy_table_malformed_envelopes_and_one_browser() {
    let _w = Watchdog::arm(Duration::from_secs(120));
    let rig = BridgeRig::start(&["--bridge-poll-wait", "300ms"]);
    let client = rig.connect("Sessions", true);
    // `initialize` asks the app for its resources: a scripted browser answers everything.
    let auto = AutoBrowser::start(rig.port, &rig.token, &client);
    let list = |id: u64| json!({"jsonrpc": "2.0", "id": id, "method": "actions/list"});
    // 17 distinct stateless sessions: all served (the least recently used one makes room).
    for i in 0..17 {
        let answer = rig.rpc(&format!("json-{i}"), &list(i));
        assert!(
            answer.json()["result"]["actions"].is_array(),
            "session {i}: {}",
            body_text(&answer)
        );
    }
    // 16 initialized legacy MCP sessions fill the table; they stay until closed.
    for i in 0..16 {
        let answer = rig.rpc(&format!("legacy-{i}"), &initialize(i));
        assert_eq!(answer.json()["result"]["protocolVersion"], "2025-11-25");
    }
    // One more session: a correlated error, and the request never reaches the app.
    let full = rig.rpc("one-more", &execute_get(77));
    let e = full.json();
    assert_eq!(e["id"], 77, "{e}");
    assert_eq!(e["error"]["data"]["reason"], "too_many_sessions", "{e}");
    assert!(
        !auto.seen().iter().any(|c| c.get("execute").is_some()),
        "a refused request was delivered"
    );
    // Malformed envelopes reserve nothing (and are refused as such).
    for bad in [
        json!({"session": 5, "request": list(1)}),
        json!({"request": list(1)}),
        json!({"session": "x"}),
        json!({"session": "", "request": list(1)}),
        json!({"session": "x", "request": list(1), "extra": 1}),
    ] {
        let auth = format!("Bearer {}", rig.token);
        let answer = exchange(
            rig.port,
            &request_bytes(
                rig.port,
                "POST",
                "/rpc",
                &[("Authorization", &auth)],
                bad.to_string().as_bytes(),
            ),
        );
        assert_eq!(answer.status, 400, "{bad}");
    }
    let invalid = rig.rpc("brand-new", &json!({"jsonrpc": "1.0", "id": 3, "method": "agent/info"}));
    assert_eq!(invalid.json()["error"]["code"], -32600, "{}", body_text(&invalid));
    // A legacy session keeps its state, and closing one makes room.
    let tools = rig.rpc("legacy-3", &json!({"jsonrpc": "2.0", "id": 9, "method": "tools/list"}));
    assert!(tools.json()["result"]["tools"].is_array(), "{}", body_text(&tools));
    let close = rig.rpc_close("legacy-3");
    assert_eq!(close.status, 200);
    assert_eq!(close.json()["closed"], true);
    let now_ok = rig.rpc("one-more", &list(78));
    assert!(now_ok.json()["result"].is_object(), "{}", body_text(&now_ok));
    let unknown = rig.rpc_close("never-opened");
    assert_eq!(unknown.status, 404);
    assert_eq!(unknown.json()["error"]["reason"], "unknown_session");
    // A second browser while one is attached.
    let second =
        rig.browser("POST", "/connect", &jfgui_tests::bridge::registration("Second", true));
    assert_eq!(second.status, 409);
    assert_eq!(second.json()["error"]["reason"], "browser_attached");
    assert_eq!(rig.daemon.apps().len(), 1);
}

trait CloseSession {
    fn rpc_close(&self, session: &str) -> jfgui_tests::bridge::Http;
}

impl CloseSession for BridgeRig {
    fn rpc_close(&self, session: &str) -> jfgui_tests::bridge::Http {
        let auth = format!("Bearer {}", self.token);
        let body = json!({"session": session}).to_string();
        exchange(
            self.port,
            &request_bytes(
                self.port,
                "POST",
                "/session/close",
                &[("Authorization", &auth)],
                body.as_bytes(),
            ),
        )
    }
}

#[test]
fn methods_and_paths_get_fixed_answers() {
    let _w = Watchdog::arm(Duration::from_secs(60));
    let rig = BridgeRig::start(&[]);
    let h = rig.browser_headers();
    let h: Vec<(&str, String)> = h.into_iter().collect();
    assert_eq!(send(&rig, "GET", "/rpc", &h, b"").status, 405);
    assert_eq!(send(&rig, "PUT", "/connect", &h, b"{}").status, 405);
    assert_eq!(send(&rig, "TRACE", "/", &h, b"").status, 404);
    let script = format!("/{}<script>alert(1)</script>", "a".repeat(4000));
    let unknown = send(&rig, "GET", &script, &h, b"");
    assert!(matches!(unknown.status, 400 | 404), "{}", unknown.status);
    assert!(!body_text(&unknown).contains("script"), "the path was reflected");
    let connect = exchange(
        rig.port,
        format!(
            "CONNECT 127.0.0.1:22 HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nConnection: close\r\n\r\n",
            rig.port
        )
        .as_bytes(),
    );
    assert!(matches!(connect.status, 400 | 403 | 404 | 405), "CONNECT: {}", connect.status);
    let http09 = exchange(rig.port, b"GET /\r\n\r\n");
    assert!(matches!(http09.status, 0 | 400 | 505), "HTTP/0.9: {}", http09.status);
    let tls = exchange(
        rig.port,
        &[0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03, 0, 0, 0, 0],
    );
    assert!(matches!(tls.status, 0 | 400), "TLS ClientHello: {}", tls.status);
    rig.daemon.assert_alive();
    let ok = rig.rpc("after", &json!({"jsonrpc": "2.0", "id": 1, "method": "agent/info"}));
    assert_eq!(ok.status, 200);
}

#[test]
fn tcp_listener_exists_only_while_browser_bridge_runs() {
    let _w = Watchdog::arm(Duration::from_secs(120));
    let dir = TempDir::new();
    let daemon = Daemon::start(&dir.rt(), &[]);
    let pid = daemon.proc.pid();
    assert!(
        tcp_listeners(pid).is_empty(),
        "a TCP listener before the bridge: {:?}",
        tcp_listeners(pid)
    );
    for (round, signal) in ["INT", "KILL"].iter().enumerate() {
        let (mut cli, _, _) = open_bridge(&dir, &daemon, &format!("a10-{round}"));
        let opened = wait_opened(&cli);
        let port: u16 =
            opened["url"].as_str().unwrap().rsplit(':').next().unwrap().parse().unwrap();
        let listening = tcp_listeners(pid);
        assert_eq!(
            listening,
            vec![("/proc/net/tcp".to_string(), format!("0100007F:{port:04X}"))],
            "while the bridge runs"
        );
        cli.signal(signal);
        cli.wait_exit(PATIENCE);
        let gone = time_until(PATIENCE, || tcp_listeners(pid).is_empty());
        eprintln!("listener gone {gone:?} after SIG{signal} of browser-bridge");
        assert!(gone.is_some(), "SIG{signal}: still listening: {:?}", tcp_listeners(pid));
        assert!(
            TcpStream::connect(("127.0.0.1", port)).is_err(),
            "SIG{signal}: port still accepts"
        );
    }
    daemon.assert_alive();
}
