//! The browser bridge when something goes away: `browser-stdio` answers every request it
//! cannot deliver (no bridge, a redirect, a refused token: at once; no answer: at its deadline),
//! with the request's id, and keeps reading; `browser-bridge` survives a daemon restart on the same URL with the same
//! token and writes its `{url, token, origin}` line to `--info-file`.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::fs::PermissionsExt;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use jfgui_tests::bridge::{
    BridgeRig, ORIGIN, exchange, execute_get, read_answer, registration, request_bytes,
};
use jfgui_tests::serde_json::{Value, json};
use jfgui_tests::{Daemon, PATIENCE, Proc, TempDir, Watchdog, agent, rpc, wait_until};

/// How soon an undeliverable request must be answered.
const AT_ONCE: Duration = Duration::from_secs(1);

/// A running `browser-stdio` with its stdin held open and its stdout lines on a channel.
struct StdioClient {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
}

impl StdioClient {
    fn start(url: &str, token: &str, protocol: &str) -> StdioClient {
        StdioClient::start_with(url, token, protocol, &[])
    }

    fn start_with(url: &str, token: &str, protocol: &str, extra: &[&str]) -> StdioClient {
        let mut child = Command::new(agent())
            .args(["browser-stdio", "--url", url, "--protocol", protocol])
            .args(extra)
            .env("JFGUI_BRIDGE_TOKEN", token)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        StdioClient { stdin: child.stdin.take(), child, lines }
    }

    /// Sends `request` and returns its answer and how long it took.
    fn ask(&mut self, request: &Value) -> (Value, Duration) {
        let started = Instant::now();
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{request}").unwrap();
        stdin.flush().unwrap();
        let line = self.lines.recv_timeout(PATIENCE).expect("an answer line");
        (serde_json::from_str(&line).unwrap(), started.elapsed())
    }

    fn running(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }

    /// Closes stdin and returns the exit code.
    fn finish(mut self) -> Option<i32> {
        drop(self.stdin.take());
        let deadline = Instant::now() + PATIENCE;
        while Instant::now() < deadline {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code();
            }
            thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        panic!("browser-stdio did not exit at stdin EOF");
    }
}

/// Checks one local answer: the request's id, the protocol's code, the reason.
fn assert_undelivered(answer: &Value, id: &Value, protocol: &str, reason: &str) {
    assert_eq!(&answer["id"], id, "{answer}");
    let error = &answer["error"];
    match protocol {
        "mcp" => assert_eq!(error["code"], -32603, "{answer}"),
        _ => {
            assert_eq!(error["code"], 1001, "{answer}");
            assert_eq!(error["data"]["class"], "outcome_unknown", "{answer}");
        }
    }
    assert_eq!(error["data"]["reason"], reason, "{answer}");
    assert!(error["message"].as_str().is_some_and(|m| !m.is_empty()), "{answer}");
}

/// Every request to `url` is answered at once with `reason`, in both protocols, for several
/// requests in a row, while stdin stays open; stdin EOF then ends the command with 0.
fn answers_at_once(url: &str, token: &str, reason: &str) {
    for protocol in ["mcp", "json"] {
        let mut stdio = StdioClient::start(url, token, protocol);
        for (i, id) in [json!(7), json!("seven"), json!(8)].into_iter().enumerate() {
            let request = if protocol == "mcp" {
                json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"})
            } else {
                json!({"jsonrpc": "2.0", "id": id, "method": "agent/info"})
            };
            let (answer, took) = stdio.ask(&request);
            eprintln!("{reason} ({protocol}, request {i}): answered in {took:?}");
            assert!(took < AT_ONCE, "{reason} ({protocol}): answered after {took:?}");
            assert_undelivered(&answer, &id, protocol, reason);
            assert!(stdio.running(), "browser-stdio exited with stdin open");
        }
        assert_eq!(stdio.finish(), Some(0), "{reason} ({protocol}): exit at EOF");
    }
}

#[test]
fn browser_stdio_answers_at_once_when_no_bridge_listens() {
    let _w = Watchdog::arm(Duration::from_secs(120));
    // A port that was free a moment ago and has no listener now.
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    answers_at_once(&format!("http://127.0.0.1:{port}"), &"A".repeat(43), "bridge_unreachable");
}

#[test]
fn browser_stdio_answers_at_once_when_the_bridge_redirects() {
    let _w = Watchdog::arm(Duration::from_secs(120));
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut s) = stream else { return };
            let _ = read_answer(&mut s.try_clone().unwrap());
            let _ = s.write_all(
                b"HTTP/1.1 307 Temporary Redirect\r\nLocation: http://127.0.0.1:9/\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            );
        }
    });
    answers_at_once(&format!("http://127.0.0.1:{port}"), &"A".repeat(43), "redirect_refused");
}

#[test]
fn browser_stdio_answers_at_once_when_the_token_is_refused() {
    let _w = Watchdog::arm(Duration::from_secs(120));
    let rig = BridgeRig::start(&[]);
    answers_at_once(&rig.url(), &"B".repeat(43), "unauthorized");
    rig.daemon.assert_alive();
}

/// A bridge that takes the request and never answers: the answer comes at the deadline
/// (`--timeout`), as `outcome_unknown/timeout` for that id, and the next request is read.
#[test]
fn browser_stdio_answers_at_its_deadline_when_the_bridge_never_answers() {
    let _w = Watchdog::arm(Duration::from_secs(120));
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming() {
            held.push(stream);
        }
    });
    let url = format!("http://127.0.0.1:{port}");
    let mut stdio = StdioClient::start_with(&url, &"A".repeat(43), "json", &["--timeout", "1"]);
    for id in [json!(1), json!(2)] {
        let (answer, took) =
            stdio.ask(&json!({"jsonrpc": "2.0", "id": id, "method": "agent/info"}));
        eprintln!("deadline: answered in {took:?}");
        assert!(took >= Duration::from_secs(1) && took < Duration::from_secs(5), "{took:?}");
        assert_undelivered(&answer, &id, "json", "timeout");
        assert!(stdio.running());
    }
    assert_eq!(stdio.finish(), Some(0));
}

/// `--info-file`: the stderr line, as a file of mode 0600, also over an existing file that
/// others could read.
#[test]
fn browser_bridge_writes_its_line_to_the_info_file() {
    let _w = Watchdog::arm(Duration::from_secs(120));
    let dir = TempDir::new();
    let daemon = Daemon::start(&dir.rt(), &[]);
    let info = dir.path().join("bridge.json");
    std::fs::write(&info, "stale\n").unwrap();
    std::fs::set_permissions(&info, std::fs::Permissions::from_mode(0o644)).unwrap();
    let cli = bridge_with_info(&dir, &daemon, &info, "info");
    let line = first_line(&cli);
    let text = std::fs::read_to_string(&info).unwrap();
    assert_eq!(text, format!("{line}\n"), "the file holds the stderr line");
    let written: Value = serde_json::from_str(&line).unwrap();
    assert!(written["url"].as_str().unwrap().starts_with("http://127.0.0.1:"), "{written}");
    assert_eq!(written["token"].as_str().unwrap().len(), 43);
    assert_eq!(written["origin"], ORIGIN);
    let mode = std::fs::metadata(&info).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "mode {mode:o}");
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.contains(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
}

fn bridge_with_info(dir: &TempDir, daemon: &Daemon, info: &std::path::Path, tag: &str) -> Proc {
    let mut cmd = Command::new(agent());
    cmd.env("JFGUI_RUNTIME_DIR", &daemon.rt)
        .env_remove("XDG_RUNTIME_DIR")
        .args(["browser-bridge", "--origin", ORIGIN, "--info-file"])
        .arg(info);
    Proc::spawn(cmd, dir.path().join(format!("browser-bridge-{tag}.log")))
}

fn first_line(cli: &Proc) -> String {
    let mut line = None;
    let ok = wait_until(PATIENCE, || {
        line = cli.stderr().lines().next().filter(|l| l.ends_with('}')).map(str::to_string);
        line.is_some()
    });
    assert!(ok, "no {{url, token, origin}} line; stderr:\n{}", cli.stderr());
    line.unwrap()
}

/// A daemon restart under a running `browser-bridge`: the bridge comes back on the same port
/// with the same token (a browser attaches with them), the CLI never exits, and a second
/// `bridge/open` naming that token is the only way to reuse it.
#[test]
fn browser_bridge_survives_a_daemon_restart_with_its_url_and_token() {
    let _w = Watchdog::arm(Duration::from_secs(180));
    let dir = TempDir::new();
    let mut daemon = Daemon::start(&dir.rt(), &[]);
    let info = dir.path().join("bridge.json");
    let mut cli = bridge_with_info(&dir, &daemon, &info, "restart");
    let opened: Value = serde_json::from_str(&first_line(&cli)).unwrap();
    let port: u16 = opened["url"].as_str().unwrap().rsplit(':').next().unwrap().parse().unwrap();
    let token = opened["token"].as_str().unwrap().to_string();
    let connect = || {
        let auth = format!("Bearer {token}");
        let body = registration("Restarted", true).to_string();
        exchange(
            port,
            &request_bytes(
                port,
                "POST",
                "/connect",
                &[("Origin", ORIGIN), ("Authorization", &auth)],
                body.as_bytes(),
            ),
        )
    };
    assert_eq!(connect().status, 200, "before the restart");
    for (round, signal) in ["TERM", "KILL"].into_iter().enumerate() {
        daemon.proc.signal(signal);
        assert!(daemon.proc.wait_exit(PATIENCE).is_some(), "the daemon did not stop");
        assert!(
            cli.wait_stderr("lost jfgui-agentd"),
            "round {round}: browser-bridge did not notice; stderr:\n{}",
            cli.stderr()
        );
        assert!(
            TcpStream::connect(("127.0.0.1", port)).is_err(),
            "round {round}: the port is closed while no daemon runs"
        );
        assert!(cli.try_status().is_none(), "round {round}: browser-bridge exited");
        // A restart leaves the runtime dir behind after SIGKILL: the new daemon takes it over.
        daemon = Daemon::start(&dir.rt(), &[]);
        let reopened = wait_until(PATIENCE, || cli.stderr().matches("open again").count() > round);
        assert!(reopened, "round {round}: not reopened; stderr:\n{}", cli.stderr());
        let answer = connect();
        assert_eq!(
            answer.status,
            200,
            "round {round}: same port and token after the restart: {}",
            String::from_utf8_lossy(&answer.body)
        );
        let apps = daemon.wait_apps(1);
        assert_eq!(apps[0]["displayName"], "Restarted", "{apps:?}");
        let wrong = exchange(
            port,
            &request_bytes(
                port,
                "POST",
                "/rpc",
                &[("Authorization", &format!("Bearer {}", "C".repeat(43)))],
                json!({"session": "s", "request": execute_get(1)}).to_string().as_bytes(),
            ),
        );
        assert_eq!(wrong.status, 401, "round {round}: any other token is still refused");
    }
    let info_line: Value =
        serde_json::from_str(std::fs::read_to_string(&info).unwrap().trim()).unwrap();
    assert_eq!(info_line, opened, "the info file still names the bridge");
    // The daemon takes a token back only in the form it generates.
    for (token, reason) in [(json!("short"), "invalid_token"), (json!(5), "invalid_type")] {
        let answer =
            rpc(&daemon.control(), "bridge/open", json!({"origin": ORIGIN, "token": token}))
                .unwrap();
        assert_eq!(answer["error"]["code"], -32602, "{answer}");
        assert_eq!(answer["error"]["data"]["reason"], reason, "{answer}");
        assert_eq!(answer["error"]["data"]["param"], "token", "{answer}");
    }
    cli.signal("TERM");
    let status = cli.wait_exit(PATIENCE).expect("browser-bridge exits on SIGTERM");
    assert_eq!(status.code(), Some(0), "stderr:\n{}", cli.stderr());
}
