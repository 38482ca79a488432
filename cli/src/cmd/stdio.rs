//! `jfgui-agent stdio ENDPOINT --protocol mcp|json`: the gateway MCP clients start as an
//! ordinary stdio server: lines pass byte for byte, stdout carries protocol lines only.

use clap::Args;

use super::completions::candidates;
use super::{Context, daemon};
use crate::endpoint;
use crate::exit::Failure;
use crate::gateway::{self, Protocol};

/// Shown after `stdio --help`.
pub const AFTER_HELP: &str = "\
stdout carries protocol lines only; diagnostics go to stderr. Lines pass through unchanged
and the daemon picks JSON-1 or MCP from the traffic; --protocol only sets the shape of the
errors the gateway writes itself (MCP: JSON-RPC -32603; json: 1001 outcome_unknown) for
requests left unanswered when the daemon goes away. A stdin line over 1 MiB is answered
locally with -32600 (data.reason \"too_large\", id null) and skipped.
stdin EOF: waits for the outstanding answers (up to --timeout), then exits 0.
Daemon gone: exit 4 (MCP clients restart the gateway). Unknown endpoint: exit 3.

Example (MCP client configuration):
  {\"command\": \"jfgui-agent\", \"args\": [\"stdio\", \"notepad\", \"--protocol\", \"mcp\"]}";

/// Arguments of `stdio`.
#[derive(Debug, Args)]
pub struct StdioArgs {
    /// The app: slug, exact display name, or unique slug prefix.
    #[arg(add = candidates::endpoints())]
    pub endpoint: String,
    /// The protocol the client speaks on stdin/stdout.
    #[arg(long, value_enum, default_value_t = Protocol::Mcp)]
    pub protocol: Protocol,
}

/// Connects and pipes until EOF on either side.
pub async fn run(args: StdioArgs, ctx: Context) -> Result<(), Failure> {
    let daemon = daemon()?;
    let (slug, (read, write)) =
        endpoint::open(&daemon, &args.endpoint, ctx.timeout, ctx.activate).await?;
    gateway::run(read, write, args.protocol, &format!("endpoint '{slug}'"), ctx.timeout).await
}
