//! The accept loop shared by every listener: take a peer-checked stream, give it a slot under
//! the connection cap and a task of its own, or turn it away at once.

use std::future::Future;
use std::time::{Duration, Instant};

use tracing::Instrument;

use super::gate::{Class, Gate};
use crate::transport::{Listener, Peer, Stream};

/// How a connection over the cap is told so before it is closed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TurnAway {
    /// A JSON-RPC 2.0 error line with `"id": null` (JSON-1 and undecided sockets).
    JsonRpc,
    /// The same error line without the `id` member (`mcp.sock`: MCP's schemas allow no null id).
    Mcp,
    /// A plain close (the host socket: apps speak frames, not lines).
    Close,
}

/// Accepts forever (the task running it is aborted to stop listening).
pub async fn accept_loop<F, Fut>(
    mut listener: Listener,
    gate: Gate,
    class: Class,
    refusal: TurnAway,
    serve: F,
) where
    F: Fn(Stream, Peer) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    let socket = listener.path().display().to_string();
    let mut refusals = Refusals::default();
    loop {
        let (stream, peer) = listener.accept().await;
        match gate.enter(class) {
            Some(ticket) => {
                let span = tracing::debug_span!("connection", socket = %socket, peer_pid = ?peer.pid, peer_uid = ?peer.uid);
                let fut = serve(stream, peer);
                tokio::spawn(
                    async move {
                        fut.await;
                        drop(ticket);
                    }
                    .instrument(span),
                );
            }
            None => {
                refusals.log(&socket, gate.cap(class));
                turn_away(&stream, refusal, gate.cap(class));
            }
        }
    }
}

/// Over the cap: clients (JSON-RPC lines) get one error line, best effort and without
/// waiting; apps get a plain close. Either way the descriptor is released at once.
fn turn_away(stream: &Stream, refusal: TurnAway, cap: usize) {
    let id = match refusal {
        TurnAway::JsonRpc => r#""id":null,"#,
        TurnAway::Mcp => "",
        TurnAway::Close => return,
    };
    let _ = stream.try_write(turn_away_line(id, cap).as_bytes());
}

/// At most one "too many connections" line per listener and interval, so a flood cannot
/// flood the log too.
const REFUSAL_LOG_EVERY: Duration = Duration::from_secs(10);

#[derive(Default)]
struct Refusals {
    last: Option<Instant>,
    unlogged: u64,
}

impl Refusals {
    fn log(&mut self, socket: &str, cap: usize) {
        let now = Instant::now();
        if self.last.is_some_and(|t| now - t < REFUSAL_LOG_EVERY) {
            self.unlogged += 1;
            return;
        }
        tracing::warn!(
            socket,
            cap,
            also_refused_since_last_report = self.unlogged,
            "connection refused: too many connections"
        );
        self.last = Some(now);
        self.unlogged = 0;
    }
}

/// The error line; `id` is the `"id":null,` member or empty.
fn turn_away_line(id: &str, cap: usize) -> String {
    format!(
        "{{\"jsonrpc\":\"2.0\",{id}\"error\":{{\"code\":-32000,\"message\":\"too many \
         connections: this daemon serves at most {cap} client connections\",\"data\":\
         {{\"reason\":\"too_many_connections\",\"limit\":{cap}}}}}}}\n"
    )
}

#[cfg(test)]
mod tests {
    use jfgui_proto::{Limits, Value};

    /// Parses `line` (one line with its newline) with the daemon's strict parser.
    fn parsed(line: &str) -> Value {
        let body = line.strip_suffix('\n').expect("a newline at the end");
        assert!(!body.contains('\n'), "{line}");
        jfgui_proto::parse(body.as_bytes(), &Limits::default()).expect("strict JSON")
    }

    #[test]
    fn turn_away_line_is_one_strict_json_line_with_a_null_id() {
        let line = super::turn_away_line(r#""id":null,"#, 7);
        assert_eq!(parsed(&line).get("id"), Some(&Value::Null), "{line}");
        assert!(line.contains(r#""limit":7"#) && line.contains("at most 7 client"), "{line}");
    }

    #[test]
    fn mcp_turn_away_line_has_no_id_member() {
        let line = super::turn_away_line("", 7);
        let v = parsed(&line);
        assert_eq!(v.get("id"), None, "{line}");
        assert!(v.get("error").is_some() && line.contains("too_many_connections"), "{line}");
    }
}
