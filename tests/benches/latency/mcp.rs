//! MCP over stdio, as MCP clients run servers: each client starts its own server process and
//! speaks newline-framed JSON-RPC on its stdin/stdout after the `initialize` handshake. Two
//! paths use it: the daemon through the gateway (client → `jfgui-agent stdio SLUG --protocol
//! mcp` → daemon → Notepad, 3 hops, `tools/call` of `jfgui_actions_execute`) and the rmcp
//! baseline (`rmcp_noop.rs`, 1 hop).

use std::io;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};

use jfgui_tests::serde_json::{self, Value};

use crate::line::{LineConn, Template};
use crate::load::{Client, Target};
use crate::payload::Size;

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"jfgui-latency-bench","version":"1"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

/// A fresh number for a server's stderr log file.
pub fn next_log() -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// `tools/call` of `tool` with `arguments` (a JSON object, as text).
pub fn tools_call(tool: &str, arguments: &str) -> Template {
    Template::new(|id| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{arguments}}}}}"#
        )
    })
}

/// A stdio MCP server process of one client, killed and reaped on drop.
pub struct Session {
    child: Child,
    conn: LineConn<ChildStdout, ChildStdin>,
}

/// Starts `cmd` (its stderr to `log`) and completes the `initialize` handshake on its stdio.
pub fn start_initialized(
    mut cmd: Command,
    log: &Path,
) -> io::Result<(Child, LineConn<ChildStdout, ChildStdin>)> {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(log)?)
        .spawn()?;
    let (stdin, stdout) = (child.stdin.take(), child.stdout.take());
    let mut conn = LineConn::new(stdout.expect("piped stdout"), stdin.expect("piped stdin"));
    let init = Template::new(|id| INITIALIZE.replacen(r#""id":0"#, &format!(r#""id":{id}"#), 1));
    let handshake = conn.exchange(&init, 0).and_then(|()| {
        let reply: Value = serde_json::from_str(&conn.reply).map_err(io::Error::other)?;
        if reply.pointer("/result/protocolVersion").is_none() {
            return Err(io::Error::other(format!("initialize failed: {reply}")));
        }
        conn.send(INITIALIZED)
    });
    if let Err(e) = handshake {
        let _ = child.kill();
        let _ = child.wait();
        return Err(e);
    }
    Ok((child, conn))
}

impl Session {
    /// Starts `cmd` (its stderr to `log`) and completes the handshake.
    pub fn start(cmd: Command, log: &Path) -> io::Result<Session> {
        let (child, conn) = start_initialized(cmd, log)?;
        Ok(Session { child, conn })
    }

    /// One call, returning the parsed reply (set-up only; timed calls use [`Session::conn`]).
    pub fn call(&mut self, request: &Template, id: u64) -> io::Result<Value> {
        self.conn.exchange(request, id)?;
        serde_json::from_str(&self.conn.reply).map_err(io::Error::other)
    }

    /// The reply of the last call, as a template for call `id`'s successors.
    pub fn last_reply(&self, id: u64) -> Template {
        let line = self.conn.reply.clone();
        let was = format!(r#""id":{id},"#);
        Template::new(|n| line.replacen(&was, &format!(r#""id":{n},"#), 1))
    }

    /// Its pid.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The line connection.
    pub fn conn(&mut self) -> &mut LineConn<ChildStdout, ChildStdin> {
        &mut self.conn
    }

    /// The line connection, for checks.
    pub fn conn_ref(&self) -> &LineConn<ChildStdout, ChildStdin> {
        &self.conn
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A timed client over a [`Session`]: `request` out, `reply` back.
pub struct SessionClient {
    pub session: Session,
    pub request: Template,
    pub reply: Template,
    /// Processes counted as the middle besides the shared ones (the session's own server).
    pub own_pids: Vec<u32>,
    /// Where the session's server reports its allocations, when it counts them.
    pub ctl: Option<PathBuf>,
}

impl Client for SessionClient {
    fn roundtrip(&mut self, id: u64) -> io::Result<()> {
        self.session.conn().exchange(&self.request, id)
    }

    fn check(&self, id: u64) -> Result<(), String> {
        self.session.conn_ref().check(&self.reply, id)
    }

    fn pids(&self) -> Vec<u32> {
        self.own_pids.clone()
    }

    fn allocations(&self) -> Option<u64> {
        crate::count_alloc::query(self.ctl.as_deref()?)
    }
}

/// The daemon through the stdio gateway, for the Notepad of `size`.
pub struct Gateway {
    pub agent: PathBuf,
    pub rt: PathBuf,
    pub slug: String,
    pub size: Size,
    pub daemon_pid: u32,
    pub logs: PathBuf,
}

impl Gateway {
    fn command(&self) -> Command {
        let mut cmd = Command::new(&self.agent);
        cmd.env("JFGUI_RUNTIME_DIR", &self.rt).env_remove("XDG_RUNTIME_DIR").args([
            "stdio",
            &self.slug,
            "--protocol",
            "mcp",
        ]);
        cmd
    }
}

impl Target for Gateway {
    /// A gateway of its own, its first reply checked against the JSON-1 result built
    /// independently ([`Size::result`]) in both `structuredContent` and the text content.
    fn connect(&self) -> io::Result<Box<dyn Client>> {
        let log = self.logs.join(format!("gateway-{}.log", next_log()));
        let mut session = Session::start(self.command(), &log)?;
        let request = tools_call("jfgui_actions_execute", r#"{"action":"document.get"}"#);
        let reply = session.call(&request, 1)?;
        let want = self.size.result();
        let text: Option<Value> = reply
            .pointer("/result/content/0/text")
            .and_then(Value::as_str)
            .and_then(|t| serde_json::from_str(t).ok());
        if reply.pointer("/result/structuredContent") != Some(&want)
            || text.as_ref() != Some(&want)
            || reply.pointer("/result/isError") != Some(&Value::Bool(false))
        {
            return Err(io::Error::other(format!(
                "tools/call reply {reply}; want {want} as structuredContent and as text content"
            )));
        }
        let template = session.last_reply(1);
        let pid = session.pid();
        Ok(Box::new(SessionClient {
            session,
            request,
            reply: template,
            own_pids: vec![pid],
            ctl: None,
        }))
    }

    fn middle_pids(&self) -> Vec<u32> {
        vec![self.daemon_pid]
    }
}
