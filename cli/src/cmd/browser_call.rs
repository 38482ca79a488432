//! `jfgui-agent browser-call --url URL METHOD [PARAMS]`: one JSON-RPC call to the browser app
//! attached to a bridge, through `/rpc` (docs/PROTOCOL.md, "Clients: `/rpc` and
//! `/session/close`").

use clap::Args;
use jfgui_proto::{Limits, Map, Value};

use super::{Context, JsonFlag};
use crate::bridge::{Bridge, BridgeArgs, bridge_error_exit, refusal, rpc_body};
use crate::exit::{Exit, Failure};
use crate::gateway::Protocol;
use crate::output::{Format, pretty, print_json, print_text};

/// Shown after `browser-call --help`.
pub const AFTER_HELP: &str = "\
Sends {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":METHOD,\"params\":PARAMS} in a session of the
bridge and prints the result. Without --session, calls of one protocol share a default
session (jfgui-agent-json or jfgui-agent-mcp), so repeated calls take no new session slot.
With --protocol mcp, params without _meta get the 2026-07-28 envelope added.

Examples:
  JFGUI_BRIDGE_TOKEN=... jfgui-agent browser-call --url http://127.0.0.1:PORT actions/list
  jfgui-agent browser-call --url http://127.0.0.1:PORT --token-file F state/inspect '{}'
  jfgui-agent browser-call --url http://127.0.0.1:PORT --token-file F --protocol mcp tools/list";

/// Arguments of `browser-call`.
#[derive(Debug, Args)]
pub struct BrowserCallArgs {
    #[command(flatten)]
    pub bridge: BridgeArgs,
    /// The session to use (default: one per protocol, shared by every browser-call).
    #[arg(long, value_name = "NAME")]
    pub session: Option<String>,
    /// The protocol of METHOD.
    #[arg(long, value_enum, default_value_t = Protocol::Json)]
    pub protocol: Protocol,
    /// The JSON-RPC method, e.g. actions/list or tools/list.
    pub method: String,
    /// Its params, a JSON object (default {}).
    pub params: Option<String>,
    #[command(flatten)]
    pub out: JsonFlag,
}

/// The MCP revision whose per-request envelope `--protocol mcp` adds.
const MCP_MODERN: &str = "2026-07-28";

/// Sends the call and prints its result.
pub async fn run(args: BrowserCallArgs, ctx: Context, format: Format) -> Result<(), Failure> {
    let bridge = Bridge::new(&args.bridge, ctx.timeout)?;
    let mut params = match &args.params {
        None => Map::new(),
        Some(text) => match jfgui_proto::parse(text.as_bytes(), &Limits::DEFAULT) {
            Ok(Value::Object(m)) => m,
            _ => {
                return Err(Failure::usage("invalid_params", "PARAMS must be a JSON object"));
            }
        },
    };
    if args.protocol == Protocol::Mcp && !params.contains_key("_meta") {
        let mut meta = Map::new();
        meta.insert("io.modelcontextprotocol/protocolVersion", MCP_MODERN);
        meta.insert("io.modelcontextprotocol/clientCapabilities", Map::new());
        params.insert("_meta", meta);
    }
    let session = args.session.clone().unwrap_or_else(|| match args.protocol {
        Protocol::Json => String::from("jfgui-agent-json"),
        Protocol::Mcp => String::from("jfgui-agent-mcp"),
    });
    let mut request = Map::new();
    request.insert("jsonrpc", "2.0");
    request.insert("id", 1u64);
    request.insert("method", args.method.as_str());
    request.insert("params", params);
    let answer = bridge.post("/rpc", rpc_body(&session, Value::Object(request))?).await?;
    if !answer.status.is_success() {
        return Err(refusal(&answer));
    }
    let response = jfgui_proto::parse(&answer.body, &Limits::DEFAULT).map_err(|e| {
        Failure::new(Exit::Protocol, "malformed_response", format!("the answer is not JSON: {e}"))
    })?;
    if let Some(error) = response.get("error") {
        let mut failure = Failure::from_rpc_error(error);
        if error.get("code").and_then(Value::as_i64) == Some(-32000)
            && let Some(exit) = bridge_error_exit(&failure.reason)
        {
            failure.exit = exit;
        }
        return Err(failure);
    }
    let result = response.get("result").cloned().ok_or_else(|| {
        Failure::new(Exit::Protocol, "malformed_response", "the answer has no result")
    })?;
    match format {
        Format::Json => print_json(&result),
        Format::Human => print_text(&pretty(&result)),
    }
}
