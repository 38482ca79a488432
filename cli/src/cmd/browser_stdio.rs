//! `jfgui-agent browser-stdio --url URL`: a stdio gateway to the browser app attached to a
//! bridge: each stdin line is one `/rpc` request in this process's own session, each
//! response one stdout line; the session is closed on EOF.
//!
//! Every request gets its line: one the bridge does not take (unreachable, a redirect, the
//! token refused, no answer within `--timeout`) is answered here, the moment that is known,
//! with an error for its id in the shape its protocol expects (MCP: JSON-RPC -32603; JSON-1:
//! `1001 outcome_unknown`), `data.reason` saying which. Only stdin EOF ends the command.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use clap::Args;
use jfgui_proto::{ErrorClass, Limits, Map, Value};
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::sync::{Semaphore, mpsc};
use tokio::task::JoinSet;

use super::Context;
use crate::bridge::{Bridge, BridgeArgs, close_session, refusal, rpc_body};
use crate::exit::Failure;
use crate::gateway::Protocol;
use crate::line::{Line, LineReader};

/// Shown after `browser-stdio --help`.
pub const AFTER_HELP: &str = "\
stdout carries protocol lines only; diagnostics go to stderr. Each line goes to the bridge's
/rpc in a session of this process (JSON-1 or MCP, chosen by the traffic as on an endpoint);
up to 4 requests are in flight at once. A request the bridge does not take (unreachable,
redirect refused, token refused, no answer within --timeout) is answered here at once with an
error for its id (MCP: -32603; json: 1001 outcome_unknown; data.reason: bridge_unreachable,
redirect_refused, unauthorized, timeout, ...); the command goes on reading. stdin EOF: waits
for the answers, closes the session and exits 0. A line that is not a JSON object is answered
here (-32700 / -32600, id null).

Example (MCP client configuration):
  {\"command\": \"jfgui-agent\", \"args\": [\"browser-stdio\", \"--url\", \"http://127.0.0.1:PORT\",
   \"--token-file\", \"/path/to/token\"]}";

/// Arguments of `browser-stdio`.
#[derive(Debug, Args)]
pub struct BrowserStdioArgs {
    #[command(flatten)]
    pub bridge: BridgeArgs,
    /// The protocol the client speaks (the bridge's session decides from the traffic; this
    /// names the session).
    #[arg(long, value_enum, default_value_t = Protocol::Mcp)]
    pub protocol: Protocol,
    /// Use this session instead of a fresh one (it is closed on EOF all the same).
    #[arg(long, value_name = "NAME")]
    pub session: Option<String>,
}

/// Requests sent at once (the bridge takes 16 connections in all).
const IN_FLIGHT: usize = 4;

/// Pipes stdin to the bridge and the answers to stdout until EOF.
pub async fn run(args: BrowserStdioArgs, ctx: Context) -> Result<(), Failure> {
    let bridge = Arc::new(Bridge::new(&args.bridge, ctx.timeout)?);
    let session = Arc::new(match args.session {
        Some(s) => s,
        None => {
            let kind = if args.protocol == Protocol::Mcp { "mcp" } else { "json" };
            format!("browser-stdio-{kind}-{}-{}", std::process::id(), nonce())
        }
    });
    let (out_tx, mut out_rx) = mpsc::channel::<Vec<u8>>(IN_FLIGHT * 2);
    let writer = tokio::spawn(async move {
        let mut stdout = tokio::io::stdout();
        while let Some(mut line) = out_rx.recv().await {
            line.push(b'\n');
            if stdout.write_all(&line).await.is_err() || stdout.flush().await.is_err() {
                return;
            }
        }
    });
    let slots = Arc::new(Semaphore::new(IN_FLIGHT));
    // Whether the bridge took a request, so the session exists there and is closed at EOF.
    let opened = Arc::new(AtomicBool::new(false));
    let mut calls = JoinSet::new();
    let mut lines = LineReader::new(BufReader::new(tokio::io::stdin()), Limits::DEFAULT.max_bytes);
    loop {
        let line = match lines.next().await {
            Ok(Some(Line::Complete(bytes))) => bytes,
            Ok(Some(Line::TooLong)) => {
                let _ =
                    out_tx.send(local_error(-32600, "too_large", "The line exceeds 1 MiB.")).await;
                continue;
            }
            Ok(None) | Err(_) => break,
        };
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let request = match jfgui_proto::parse(&line, &Limits::DEFAULT) {
            Ok(v @ Value::Object(_)) => v,
            Ok(_) => {
                let e = local_error(-32600, "not_an_object", "A request must be a JSON object.");
                let _ = out_tx.send(e).await;
                continue;
            }
            Err(e) => {
                let message = format!("Parse error: {e}.");
                let _ = out_tx.send(local_error(-32700, e.kind().as_str(), &message)).await;
                continue;
            }
        };
        let Ok(permit) = slots.clone().acquire_owned().await else { break };
        while calls.try_join_next().is_some() {}
        let (bridge, session, out, opened) =
            (bridge.clone(), session.clone(), out_tx.clone(), opened.clone());
        let protocol = args.protocol;
        calls.spawn(async move {
            let _permit = permit;
            let id = request.get("id").cloned();
            let answer = match deliver(&bridge, &session, request).await {
                Ok(answer) => {
                    opened.store(true, Ordering::Relaxed);
                    answer
                }
                Err(failure) => match id {
                    Some(id) => undelivered(protocol, &id, &failure),
                    None => {
                        eprintln!(
                            "jfgui-agent: a notification was not delivered: {}",
                            failure.message
                        );
                        return;
                    }
                },
            };
            if !answer.is_empty() {
                let _ = out.send(answer).await;
            }
        });
    }
    while calls.join_next().await.is_some() {}
    drop(out_tx);
    let _ = writer.await;
    if opened.load(Ordering::Relaxed) { close_session(&bridge, &session).await } else { Ok(()) }
}

/// One request through `/rpc`: the response line (empty for a notification), or why the
/// bridge did not take it.
async fn deliver(bridge: &Bridge, session: &str, request: Value) -> Result<Vec<u8>, Failure> {
    let answer = bridge.post("/rpc", rpc_body(session, request)?).await?;
    if answer.status.is_success() { Ok(answer.body.to_vec()) } else { Err(refusal(&answer)) }
}

/// A process-unique suffix for the default session name.
fn nonce() -> u128 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos())
}

/// A JSON-RPC error line with id `null`, for a line the bridge could not be given.
fn local_error(code: i64, reason: &str, message: &str) -> Vec<u8> {
    error_line(&Value::Null, code, None, reason, message)
}

/// The answer to request `id` the bridge did not take: MCP gets a JSON-RPC error, which every
/// MCP request may receive; JSON-1 gets `1001 outcome_unknown` (the request may have reached
/// the bridge before its answer was lost).
fn undelivered(protocol: Protocol, id: &Value, failure: &Failure) -> Vec<u8> {
    let (code, class) = match protocol {
        Protocol::Mcp => (-32603, None),
        Protocol::Json => (ErrorClass::OutcomeUnknown.code(), Some(ErrorClass::OutcomeUnknown)),
    };
    error_line(id, code, class, &failure.reason, &failure.message)
}

fn error_line(
    id: &Value,
    code: i64,
    class: Option<ErrorClass>,
    reason: &str,
    message: &str,
) -> Vec<u8> {
    let mut data = Map::new();
    if let Some(class) = class {
        data.insert("class", class.as_str());
    }
    data.insert("reason", reason);
    let mut error = Map::new();
    error.insert("code", code);
    error.insert("message", message);
    error.insert("data", data);
    let mut response = Map::new();
    response.insert("jsonrpc", "2.0");
    response.insert("id", id.clone());
    response.insert("error", error);
    jfgui_proto::encode(&Value::Object(response), &Limits::DEFAULT).unwrap_or_default()
}
