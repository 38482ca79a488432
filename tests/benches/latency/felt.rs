//! The two things users feel, each measured whole (one "call" of these rows is one of them):
//!
//! - **an MCP cold session**, as an MCP client starts a server: spawn it, `initialize`,
//!   `notifications/initialized`, `tools/list`, one `tools/call`, stdin EOF, and its exit.
//!   `jfgui-agent mcp` (the all-apps gateway: its own start, the daemon's `mcp.sock`, a
//!   Notepad's `document.get`) beside an rmcp stdio server answering its no-op tool
//!   (`rmcp_noop.rs`);
//! - **a 16 MiB read**: `jfgui-agent read APP blob://data.bin` to its stdout (the test app's
//!   `--blob` resource, in chunks through the daemon) beside a raw Unix-socket copy of the same
//!   bytes (a child of this binary writes them to each connection; the client reads to EOF).
//!
//! Every session's answers and every byte read are checked.

use std::io::{self, BufRead, Read, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::thread;

use jfgui_tests::serde_json::{self, Value, json};
use jfgui_tests::{PATIENCE, Proc, blob, wait_until};

use crate::line::Template;
use crate::load::{Client, Target};
use crate::mcp::{next_log, start_initialized, tools_call};
use crate::middle;
use crate::payload::Size;

/// The size of the resource read.
pub const READ_BYTES: usize = 16 << 20;

/// The resource the test app offers with `--blob`.
pub const BLOB_URI: &str = "blob://data.bin";

/// Which server a cold session starts.
#[derive(Debug, Clone)]
pub enum Server {
    /// `jfgui-agent mcp` against the daemon on `rt`; the call is `document.get` of the
    /// Notepad `app` (a 64 B document).
    Gateway { agent: PathBuf, rt: PathBuf, app: String },
    /// The rmcp no-op server (this binary as a middle child).
    Rmcp,
}

/// Cold MCP sessions with `server`; the servers' logs go to `dir`.
#[derive(Debug)]
pub struct ColdMcp {
    pub server: Server,
    pub dir: PathBuf,
    /// The shared middle (the daemon), when there is one.
    pub middle: Vec<u32>,
}

impl Target for ColdMcp {
    fn connect(&self) -> io::Result<Box<dyn Client>> {
        Ok(Box::new(ColdClient {
            server: self.server.clone(),
            dir: self.dir.clone(),
            list: Value::Null,
            call: Value::Null,
        }))
    }

    fn middle_pids(&self) -> Vec<u32> {
        self.middle.clone()
    }
}

struct ColdClient {
    server: Server,
    dir: PathBuf,
    /// The last session's `tools/list` and `tools/call` replies.
    list: Value,
    call: Value,
}

impl ColdClient {
    fn command(&self, ctl: &Path) -> (Command, Template) {
        match &self.server {
            Server::Gateway { agent, rt, app } => {
                let mut cmd = Command::new(agent);
                cmd.env("JFGUI_RUNTIME_DIR", rt).env_remove("XDG_RUNTIME_DIR").arg("mcp");
                let arguments = json!({"app": app, "action": "document.get"}).to_string();
                (cmd, tools_call("jfgui_actions_execute", &arguments))
            }
            Server::Rmcp => {
                (middle::command("rmcp", ctl), tools_call(crate::rmcp_noop::TOOL, "{}"))
            }
        }
    }
}

impl Client for ColdClient {
    /// One whole session: spawn, handshake, `tools/list`, one call, EOF, exit.
    fn roundtrip(&mut self, _id: u64) -> io::Result<()> {
        let n = next_log();
        let (cmd, call) = self.command(&self.dir.join(format!("cold-{n}.ctl")));
        let (mut child, mut conn) =
            start_initialized(cmd, &self.dir.join(format!("cold-{n}.log")))?;
        let list =
            Template::new(|id| format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list"}}"#));
        let session = conn
            .exchange(&list, 1)
            .and_then(|()| {
                self.list = serde_json::from_str(&conn.reply).map_err(io::Error::other)?;
                conn.exchange(&call, 2)
            })
            .and_then(|()| {
                self.call = serde_json::from_str(&conn.reply).map_err(io::Error::other)?;
                let mut rest = String::new();
                conn.close_writer().read_line(&mut rest)?;
                if rest.is_empty() {
                    Ok(())
                } else {
                    Err(io::Error::other(format!("a line after the last answer: {rest}")))
                }
            });
        if session.is_err() {
            let _ = child.kill();
        }
        let status = child.wait()?;
        session?;
        if !status.success() {
            return Err(io::Error::other(format!("the server exited with {status}")));
        }
        Ok(())
    }

    fn check(&self, _id: u64) -> Result<(), String> {
        let tools: Vec<&str> = self.list["result"]["tools"]
            .as_array()
            .map(|t| t.iter().filter_map(|t| t["name"].as_str()).collect())
            .unwrap_or_default();
        let call = &self.call["result"];
        let ok = match &self.server {
            Server::Gateway { .. } => {
                tools.len() == 10
                    && tools.contains(&"jfgui_apps_list")
                    && tools.contains(&"jfgui_actions_execute")
                    && call["structuredContent"] == Size::B64.result()
                    && call["isError"] == json!(false)
            }
            Server::Rmcp => {
                tools == [crate::rmcp_noop::TOOL]
                    && call["content"][0]["text"] == json!("ok")
                    && call["isError"] != json!(true)
            }
        };
        if ok {
            Ok(())
        } else {
            Err(format!("tools/list {}\n  tools/call {}", self.list, self.call))
        }
    }
}

/// `jfgui-agent read APP blob://data.bin`, the bytes from its stdout.
#[derive(Debug)]
pub struct AgentRead {
    pub agent: PathBuf,
    pub rt: PathBuf,
    pub app: String,
    pub expected: Arc<Vec<u8>>,
    pub dir: PathBuf,
    pub daemon_pid: u32,
}

impl Target for AgentRead {
    fn connect(&self) -> io::Result<Box<dyn Client>> {
        let mut cmd = Command::new(&self.agent);
        cmd.env("JFGUI_RUNTIME_DIR", &self.rt)
            .env_remove("XDG_RUNTIME_DIR")
            .args(["read", &self.app, BLOB_URI]);
        Ok(Box::new(ReadClient {
            read: Read16::Agent { cmd, log: self.dir.join("read.log") },
            got: Vec::with_capacity(READ_BYTES),
            expected: Arc::clone(&self.expected),
        }))
    }

    fn middle_pids(&self) -> Vec<u32> {
        vec![self.daemon_pid]
    }
}

/// A raw Unix-socket copy of the same bytes: a child of this binary writes them to every
/// connection.
#[derive(Debug)]
pub struct RawCopy {
    proc: Proc,
    listen: PathBuf,
    expected: Arc<Vec<u8>>,
}

impl RawCopy {
    /// Starts the copy server in `dir`.
    pub fn start(dir: &Path, expected: Arc<Vec<u8>>) -> RawCopy {
        let listen = dir.join("copy.sock");
        let mut cmd = middle::command("copy", &dir.join("copy.ctl"));
        cmd.arg(&listen).arg(expected.len().to_string());
        let proc = Proc::spawn(cmd, dir.join("copy.log"));
        let up = wait_until(PATIENCE, || UnixStream::connect(&listen).is_ok());
        assert!(up, "the copy server did not start; its log:\n{}", proc.stderr());
        RawCopy { proc, listen, expected }
    }
}

impl Target for RawCopy {
    fn connect(&self) -> io::Result<Box<dyn Client>> {
        Ok(Box::new(ReadClient {
            read: Read16::Socket(self.listen.clone()),
            got: Vec::with_capacity(READ_BYTES),
            expected: Arc::clone(&self.expected),
        }))
    }

    fn middle_pids(&self) -> Vec<u32> {
        vec![self.proc.pid()]
    }
}

/// Child side of [`RawCopy`]: writes [`blob`]`(len)` to every connection to `listen`, then
/// closes it.
pub fn copy_server(listen: &Path, len: &str) {
    let bytes = Arc::new(blob(len.parse().expect("a byte count")));
    let listener = UnixListener::bind(listen).expect("bind the copy server");
    for stream in listener.incoming() {
        let Ok(mut stream) = stream else { continue };
        let bytes = Arc::clone(&bytes);
        thread::spawn(move || {
            let _ = stream.write_all(&bytes);
        });
    }
}

/// How one read gets its bytes.
enum Read16 {
    Agent { cmd: Command, log: PathBuf },
    Socket(PathBuf),
}

struct ReadClient {
    read: Read16,
    got: Vec<u8>,
    expected: Arc<Vec<u8>>,
}

impl Client for ReadClient {
    /// One whole read into `got`.
    fn roundtrip(&mut self, _id: u64) -> io::Result<()> {
        self.got.clear();
        match &mut self.read {
            Read16::Agent { cmd, log } => {
                let mut child =
                    cmd.stdout(Stdio::piped()).stderr(std::fs::File::create(&*log)?).spawn()?;
                let read = child.stdout.take().expect("piped stdout").read_to_end(&mut self.got);
                let status = child.wait()?;
                read?;
                if !status.success() {
                    let said = std::fs::read_to_string(&*log).unwrap_or_default();
                    return Err(io::Error::other(format!("jfgui-agent read: {status}: {said}")));
                }
            }
            Read16::Socket(path) => {
                UnixStream::connect(&*path)?.read_to_end(&mut self.got)?;
            }
        }
        Ok(())
    }

    fn check(&self, _id: u64) -> Result<(), String> {
        if self.got == *self.expected {
            Ok(())
        } else {
            let first = self.got.iter().zip(self.expected.iter()).position(|(a, b)| a != b);
            Err(format!(
                "read {} bytes, want {}; first difference at {first:?}",
                self.got.len(),
                self.expected.len()
            ))
        }
    }
}
