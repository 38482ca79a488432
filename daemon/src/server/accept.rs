//! The accept loop shared by every listener: take a peer-checked stream, give it a slot under
//! the connection cap and a task of its own, or turn it away at once.

use std::future::Future;
use std::time::{Duration, Instant};

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
                turn_away(&stream, class, gate.cap(class));
            }
        }
    }
}

/// Over the cap: clients (JSON-RPC lines) get one error line, best effort and without
/// waiting; apps get a plain close. Either way the descriptor is released at once.
fn turn_away(stream: &Stream, class: Class, cap: usize) {
    if class == Class::Client {
        let _ = stream.try_write(turn_away_line(cap).as_bytes());
    }
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
