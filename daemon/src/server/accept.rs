//! The accept loop shared by every listener: take a peer-checked stream, give it a slot under
//! the connection cap and a task of its own, or turn it away at once.

use std::future::Future;

use tracing::Instrument;

use super::gate::{Class, Gate};
use crate::transport::{Listener, Peer, Stream};

/// Accepts forever (the task running it is aborted to stop listening).
pub async fn accept_loop<F, Fut>(mut listener: Listener, gate: Gate, class: Class, serve: F)
where
    F: Fn(Stream, Peer) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    let socket = listener.path().display().to_string();
    loop {
        let (stream, peer) = listener.accept().await;
        match gate.enter(class) {
            Some(ticket) => {
                let span = tracing::debug_span!("connection", socket = %socket, peer_pid = ?peer.pid, peer_uid = peer.uid);
                let fut = serve(stream, peer);
                tokio::spawn(
                    async move {
                        fut.await;
                        drop(ticket);
                    }
                    .instrument(span),
                );
            }
            None => turn_away(&stream, class, gate.cap(class), &socket),
        }
    }
}

/// Over the cap: clients (JSON-RPC lines) get one error line, best effort and without
/// waiting; apps get a plain close. Either way the descriptor is released at once.
fn turn_away(stream: &Stream, class: Class, cap: usize, socket: &str) {
    tracing::warn!(socket, cap, "connection refused: too many connections");
    if class == Class::Client {
        let _ = stream.try_write(turn_away_line(cap).as_bytes());
    }
}

fn turn_away_line(cap: usize) -> String {
    format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{{\"code\":-32000,\"message\":\"too many \
         connections: this daemon serves at most {cap} client connections\",\"data\":\
         {{\"reason\":\"too_many_connections\",\"limit\":{cap}}}}}}}\n"
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn turn_away_line_is_one_balanced_json_line() {
        let line = super::turn_away_line(7);
        assert!(line.ends_with("}\n") && line.matches('\n').count() == 1, "{line}");
        assert_eq!(line.matches('{').count(), line.matches('}').count());
        assert!(line.contains("\"limit\":7") && line.contains("at most 7 client"), "{line}");
    }
}
