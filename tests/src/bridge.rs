//! Browser-bridge helpers: a daemon with `jfgui-agent browser-bridge` running, raw
//! HTTP/1.1 over `std::net::TcpStream` (so a test can send exactly the bytes of an attack),
//! and a scripted browser doing `/connect`, `/poll` and `/result` by hand.

use std::fs;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use serde_json::{Value, json};

use crate::{Daemon, PATIENCE, Proc, TempDir, agent, wait_until};

/// The origin every bridge of the suites is opened for.
pub const ORIGIN: &str = "http://127.0.0.1:8765";

/// One HTTP answer.
#[derive(Debug, Clone)]
pub struct Http {
    /// Status code (0 when the connection closed without a status line).
    pub status: u16,
    /// Header lines, names lower-cased.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Vec<u8>,
}

impl Http {
    /// The value of header `name` (lower-case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    /// The body as JSON (panics with the body if it is not).
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| {
            panic!("{e}: status {} body {:?}", self.status, String::from_utf8_lossy(&self.body))
        })
    }

    /// Whether any CORS allow header is present.
    pub fn has_cors(&self) -> bool {
        self.headers.iter().any(|(n, _)| n.starts_with("access-control-allow"))
    }
}

/// Writes `bytes` and reads the answer until the server closes (requests carry
/// `Connection: close`) or a complete `Content-Length` body arrived.
pub fn exchange(port: u16, bytes: &[u8]) -> Http {
    let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect to the bridge");
    s.set_read_timeout(Some(PATIENCE)).unwrap();
    // The server may answer (413) and close before taking every byte: that is fine.
    let _ = s.write_all(bytes);
    read_answer(&mut s)
}

/// Reads one answer from `s`.
pub fn read_answer(s: &mut TcpStream) -> Http {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 16 * 1024];
    loop {
        if let Some(head_end) = find(&buf, b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
            let mut lines = head.split("\r\n");
            let status = lines
                .next()
                .and_then(|l| l.split(' ').nth(1))
                .and_then(|c| c.parse().ok())
                .unwrap_or(0);
            let headers: Vec<(String, String)> = lines
                .filter_map(|l| l.split_once(':'))
                .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
                .collect();
            let length = headers
                .iter()
                .find(|(n, _)| n == "content-length")
                .and_then(|(_, v)| v.parse::<usize>().ok())
                .unwrap_or(0);
            if buf.len() >= head_end + 4 + length {
                let body = buf[head_end + 4..head_end + 4 + length].to_vec();
                return Http { status, headers, body };
            }
        }
        match s.read(&mut chunk) {
            Ok(0) | Err(_) => return Http { status: 0, headers: Vec::new(), body: buf },
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// A request's bytes: `METHOD PATH HTTP/1.1`, `Host: 127.0.0.1:PORT`, `extra` headers, the
/// body with its `Content-Length`, and `Connection: close`.
pub fn request_bytes(
    port: u16,
    method: &str,
    path: &str,
    extra: &[(&str, &str)],
    body: &[u8],
) -> Vec<u8> {
    let mut head = format!("{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n");
    for (n, v) in extra {
        head.push_str(&format!("{n}: {v}\r\n"));
    }
    if !body.is_empty() || method == "POST" {
        head.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    head.push_str("Connection: close\r\n\r\n");
    let mut bytes = head.into_bytes();
    bytes.extend_from_slice(body);
    bytes
}

/// A daemon with a bridge opened by a running `jfgui-agent browser-bridge`.
#[derive(Debug)]
pub struct BridgeRig {
    /// The daemon.
    pub daemon: Daemon,
    /// The `browser-bridge` process.
    pub cli: Proc,
    /// Its port.
    pub port: u16,
    /// The token.
    pub token: String,
    /// The `--token-file` it wrote.
    pub token_file: PathBuf,
    /// Where its stdout went.
    pub cli_stdout: PathBuf,
    /// Owns the runtime dir.
    pub dir: TempDir,
}

impl BridgeRig {
    /// A daemon with `daemon_args` and a bridge for [`ORIGIN`].
    pub fn start(daemon_args: &[&str]) -> BridgeRig {
        let dir = TempDir::new();
        let daemon = Daemon::start(&dir.rt(), daemon_args);
        let (cli, token_file, cli_stdout) = open_bridge(&dir, &daemon, "rig");
        let opened = wait_opened(&cli);
        let url = opened["url"].as_str().unwrap().to_string();
        let port = url.rsplit(':').next().unwrap().parse().unwrap();
        let token = opened["token"].as_str().unwrap().to_string();
        assert_eq!(opened["origin"], ORIGIN);
        BridgeRig { daemon, cli, port, token, token_file, cli_stdout, dir }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// `Authorization: Bearer TOKEN` plus the configured `Origin`.
    pub fn browser_headers(&self) -> Vec<(&'static str, String)> {
        vec![("Authorization", format!("Bearer {}", self.token)), ("Origin", ORIGIN.to_string())]
    }

    /// A browser-style request (token and Origin) with a JSON body.
    pub fn browser(&self, method: &str, path: &str, body: &Value) -> Http {
        let headers = self.browser_headers();
        let h: Vec<(&str, &str)> = headers.iter().map(|(n, v)| (*n, v.as_str())).collect();
        let body = if method == "GET" { Vec::new() } else { body.to_string().into_bytes() };
        exchange(self.port, &request_bytes(self.port, method, path, &h, &body))
    }

    /// A CLI-style `/rpc` (token, no Origin).
    pub fn rpc(&self, session: &str, request: &Value) -> Http {
        let auth = format!("Bearer {}", self.token);
        let body = json!({"session": session, "request": request}).to_string();
        exchange(
            self.port,
            &request_bytes(self.port, "POST", "/rpc", &[("Authorization", &auth)], body.as_bytes()),
        )
    }

    /// `/rpc` on a thread, for calls the scripted browser must answer first.
    pub fn rpc_later(&self, session: &str, request: Value) -> std::thread::JoinHandle<Http> {
        let (port, token, session) = (self.port, self.token.clone(), session.to_string());
        std::thread::spawn(move || {
            let auth = format!("Bearer {token}");
            let body = json!({"session": session, "request": request}).to_string();
            exchange(
                port,
                &request_bytes(port, "POST", "/rpc", &[("Authorization", &auth)], body.as_bytes()),
            )
        })
    }

    /// `/connect` with the scripted app's registration; returns the client id.
    pub fn connect(&self, name: &str, enabled: bool) -> String {
        let answer = self.browser("POST", "/connect", &registration(name, enabled));
        assert_eq!(answer.status, 200, "connect: {:?}", String::from_utf8_lossy(&answer.body));
        answer.json()["client"].as_str().unwrap().to_string()
    }

    /// One `/poll`: the `requests` items.
    pub fn poll(&self, client: &str) -> Vec<Value> {
        let answer = self.browser("GET", &format!("/poll?client={client}"), &Value::Null);
        assert_eq!(answer.status, 200, "poll: {:?}", String::from_utf8_lossy(&answer.body));
        answer.json()["requests"].as_array().unwrap().clone()
    }

    /// `/result` for `id`.
    pub fn result(&self, client: &str, id: &Value, response: Value) -> Http {
        self.browser("POST", "/result", &json!({"client": client, "id": id, "response": response}))
    }
}

/// Starts `jfgui-agent browser-bridge` for [`ORIGIN`] against `daemon`, stdout captured;
/// `tag` names its files in `dir`.
pub fn open_bridge(dir: &TempDir, daemon: &Daemon, tag: &str) -> (Proc, PathBuf, PathBuf) {
    let token_file = dir.path().join(format!("token-{tag}"));
    let stdout = dir.path().join(format!("browser-bridge-{tag}.stdout"));
    let mut cmd = Command::new(agent());
    cmd.env("JFGUI_RUNTIME_DIR", &daemon.rt)
        .env_remove("XDG_RUNTIME_DIR")
        .args(["browser-bridge", "--origin", ORIGIN, "--token-file"])
        .arg(&token_file);
    let stderr = dir.path().join(format!("browser-bridge-{tag}.log"));
    let out = fs::File::create(&stdout).unwrap();
    cmd.stdout(out);
    let cli = Proc::spawn_keep_stdout(cmd, stderr);
    (cli, token_file, stdout)
}

/// Waits for `browser-bridge`'s `{url, token, origin}` line on stderr.
pub fn wait_opened(cli: &Proc) -> Value {
    let mut opened = None;
    let ok = wait_until(PATIENCE, || {
        opened = cli.stderr().lines().next().and_then(|l| serde_json::from_str::<Value>(l).ok());
        opened.is_some()
    });
    assert!(ok, "browser-bridge printed no {{url, token, origin}}; stderr:\n{}", cli.stderr());
    opened.unwrap()
}

/// The scripted app's `/connect` body: a read and a write action.
pub fn registration(name: &str, enabled: bool) -> Value {
    let object = json!({"type": "object"});
    json!({"app": {
        "hello": {"channelVersion": 1, "displayName": name, "pid": 1, "enabled": enabled},
        "actions": [
            {"name": "doc.get", "description": "Read", "kind": "read",
             "inputSchema": object, "outputSchema": object, "capabilities": 0, "undo": false},
            {"name": "doc.set", "description": "Write", "kind": "write",
             "inputSchema": object, "outputSchema": object, "capabilities": 0, "undo": true},
        ],
    }})
}

/// A JSON-1 `actions/execute` of the scripted app's read action.
pub fn execute_get(id: u64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "actions/execute", "params": {"action": "doc.get"}})
}

/// The outcome the scripted browser answers an `execute` with.
pub fn executed(revision: u64) -> Value {
    json!({"ok": {"executed": {"output": {}, "revision": revision}}})
}

/// Listening TCP sockets of `pid`: `(local address, port)` rows from `/proc/net/tcp` and
/// `/proc/net/tcp6` whose inode is one of the process's descriptors.
pub fn tcp_listeners(pid: u32) -> Vec<(String, String)> {
    let inodes: Vec<String> = fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|d| {
            d.filter_map(|e| fs::read_link(e.ok()?.path()).ok())
                .filter_map(|l| {
                    let l = l.to_string_lossy().to_string();
                    l.strip_prefix("socket:[")?.strip_suffix(']').map(str::to_string)
                })
                .collect()
        })
        .unwrap_or_default();
    let mut out = Vec::new();
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        for line in fs::read_to_string(table).unwrap_or_default().lines().skip(1) {
            let cols: Vec<&str> = line.split_whitespace().collect();
            if cols.len() > 9 && cols[3] == "0A" && inodes.iter().any(|i| i == cols[9]) {
                out.push((table.to_string(), cols[1].to_string()));
            }
        }
    }
    out
}

/// Waits until `cond`, for at most `limit`, returning how long it took.
pub fn time_until(limit: Duration, cond: impl FnMut() -> bool) -> Option<Duration> {
    let start = std::time::Instant::now();
    wait_until(limit, cond).then(|| start.elapsed())
}

/// A scripted browser that keeps polling and answers every request: `listResources` with no
/// resources, `revision` with 1, `inspect` with an empty state at revision 1, anything else as an executed call at revision 1. Every call
/// it received is kept (the browser ledger).
#[derive(Debug)]
pub struct AutoBrowser {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    seen: std::sync::Arc<std::sync::Mutex<Vec<Value>>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl AutoBrowser {
    /// Starts answering for `client` on the bridge at `port` with `token`.
    pub fn start(port: u16, token: &str, client: &str) -> AutoBrowser {
        use std::sync::atomic::Ordering;
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let (stop2, seen2, token, client) =
            (stop.clone(), seen.clone(), token.to_string(), client.to_string());
        let thread = std::thread::spawn(move || {
            let auth = format!("Bearer {token}");
            let headers = [("Origin", ORIGIN), ("Authorization", auth.as_str())];
            while !stop2.load(Ordering::SeqCst) {
                let poll = exchange(
                    port,
                    &request_bytes(port, "GET", &format!("/poll?client={client}"), &headers, b""),
                );
                if poll.status != 200 {
                    return;
                }
                for item in poll.json()["requests"].as_array().cloned().unwrap_or_default() {
                    if item["id"].is_null() {
                        continue;
                    }
                    let call = &item["request"];
                    seen2.lock().unwrap().push(call.clone());
                    let response = if call.get("listResources").is_some() {
                        json!({"ok": {"resources": {"resources": []}}})
                    } else if call.get("revision").is_some() {
                        json!({"ok": {"revision": {"revision": 1}}})
                    } else if call.get("inspect").is_some() {
                        json!({"ok": {"inspected": {"revision": 1, "state": {}}}})
                    } else {
                        executed(1)
                    };
                    let body = json!({"client": client, "id": item["id"], "response": response})
                        .to_string();
                    exchange(
                        port,
                        &request_bytes(port, "POST", "/result", &headers, body.as_bytes()),
                    );
                }
            }
        });
        AutoBrowser { stop, seen, thread: Some(thread) }
    }

    /// The calls received so far.
    pub fn seen(&self) -> Vec<Value> {
        self.seen.lock().unwrap().clone()
    }
}

impl Drop for AutoBrowser {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
