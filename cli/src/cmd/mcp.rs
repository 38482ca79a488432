//! `jfgui-agent mcp`: the one MCP server entry for every app: a
//! stdio gateway to the daemon's `mcp.sock` that stays up while the daemon is away.

use std::io;

use super::{Context, daemon};
use crate::exit::Failure;
use crate::gateway;
use crate::transport;

/// Shown after `mcp --help`.
pub const AFTER_HELP: &str = "\
Serves every enabled app at once, over MCP (2026-07-28 and 2025-11-25): the tool
jfgui_apps_list lists the apps, and the other jfgui_* tools take one of them as their `app`
argument (slug, display name or unique slug prefix; optional while one app is enabled).
stdout carries protocol lines only; diagnostics go to stderr.
The daemon may start later, restart or stop: the gateway stays up, reconnects by itself
(backoff up to 2 s), answers tool calls meanwhile with an isError result
not_executed/daemon_unavailable naming the runtime directory it looked in (the words of
`list`, said once on stderr too; outcome_unknown for a call the daemon had already
received), and keeps the client's session (it replays a 2025-11-25
initialize to the new daemon). stdin EOF: waits for the outstanding answers (up to
--timeout), then exits 0. Under systemd socket activation (the packaged units), a failed
attempt also connects to the control socket, which starts the daemon.

Example (MCP client configuration; use the absolute path of jfgui-agent if the client's PATH
may not include it):
  {\"command\": \"jfgui-agent\", \"args\": [\"mcp\"]}";

/// Pipes between stdin/stdout and `mcp.sock` until stdin EOF or stdout closing.
pub async fn run(ctx: Context) -> Result<(), Failure> {
    let daemon = daemon()?;
    let (mcp, control) = (daemon.mcp(), daemon.control());
    let connect = || async {
        let attempt = transport::connect(&mcp).await;
        if attempt.as_ref().is_err_and(|e| {
            matches!(e.kind(), io::ErrorKind::NotFound | io::ErrorKind::ConnectionRefused)
        }) {
            // Under socket activation systemd holds agentd.sock (never mcp.sock): a connection
            // there starts the daemon, which then binds mcp.sock for the next attempt.
            drop(transport::connect(&control).await);
        }
        attempt
    };
    let unreachable = transport::not_running(&control);
    gateway::run_all_apps(connect, ctx.timeout, unreachable).await
}
