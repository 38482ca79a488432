//! `jfgui-agent mcp`: the one MCP server entry for every app (SPEC S7 "All-apps MCP", S9): a
//! stdio gateway to the daemon's `mcp.sock` that stays up while the daemon is away.

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
outcome_unknown/daemon_unavailable, and keeps the client's session (it replays a 2025-11-25
initialize to the new daemon). stdin EOF: waits for the outstanding answers (up to
--timeout), then exits 0.

Example (MCP client configuration; use the absolute path of jfgui-agent if the client's PATH
may not include it):
  {\"command\": \"jfgui-agent\", \"args\": [\"mcp\"]}";

/// Pipes between stdin/stdout and `mcp.sock` until stdin EOF or stdout closing.
pub async fn run(ctx: Context) -> Result<(), Failure> {
    let daemon = daemon()?;
    let path = daemon.mcp();
    gateway::run_all_apps(|| transport::connect(&path), ctx.timeout).await
}
