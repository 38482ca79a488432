//! The bridge's TCP listener on 127.0.0.1: at most `max_connections` HTTP/1.1 connections at
//! once (one more is answered 503 and closed), each with the header deadline (which also
//! closes idle keep-alive connections) and small head bounds.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinSet;

use super::{BridgeState, routes};

/// Largest request head (request line and headers); hyper answers 431 beyond it.
const MAX_HEAD_BYTES: usize = 16 * 1024;

/// Most header fields in one request; hyper answers 431 beyond it.
const MAX_HEADERS: usize = 64;

/// How long a refused connection may take to receive its 503.
const REFUSE_DEADLINE: Duration = Duration::from_secs(1);

/// What a connection over the cap receives before it is closed.
const TOO_MANY: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nContent-Length: 90\r\nConnection: close\r\n\r\n{\"error\":{\"reason\":\"too_many_connections\",\"message\":\"The bridge has no free connection.\"}}";

/// Accepts until the task is aborted (the bridge closing), which also aborts every
/// connection in the set.
pub async fn serve(listener: TcpListener, state: Arc<BridgeState>) {
    let permits = Arc::new(Semaphore::new(state.limits.max_connections.max(1)));
    let mut connections = JoinSet::new();
    loop {
        let accepted = listener.accept().await;
        while connections.try_join_next().is_some() {}
        let stream = match accepted {
            Ok((stream, _)) => stream,
            Err(e) => {
                // EMFILE and friends: pause instead of spinning.
                tracing::warn!("bridge: accept failed: {e}");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        match permits.clone().try_acquire_owned() {
            Ok(permit) => connections.spawn(connection(stream, state.clone(), permit)),
            Err(_) => connections.spawn(refuse(stream)),
        };
    }
}

async fn connection(stream: TcpStream, state: Arc<BridgeState>, _permit: OwnedSemaphorePermit) {
    let header_deadline = state.limits.header_deadline;
    let service = service_fn(move |request| {
        let state = state.clone();
        async move { Ok::<_, Infallible>(routes::handle(state, request).await) }
    });
    let served = http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(header_deadline)
        .max_buf_size(MAX_HEAD_BYTES)
        .max_headers(MAX_HEADERS)
        .serve_connection(TokioIo::new(stream), service)
        .await;
    if let Err(e) = served {
        tracing::debug!("bridge: connection ended: {e}");
    }
}

async fn refuse(mut stream: TcpStream) {
    let _ = tokio::time::timeout(REFUSE_DEADLINE, async {
        let _ = stream.write_all(TOO_MANY).await;
        let _ = stream.shutdown().await;
    })
    .await;
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_refusal_is_well_formed() {
        let text = std::str::from_utf8(super::TOO_MANY).unwrap();
        let (head, body) = text.split_once("\r\n\r\n").unwrap();
        assert!(head.contains(&format!("Content-Length: {}", body.len())), "{head}");
        jfgui_proto::parse(body.as_bytes(), &jfgui_proto::Limits::DEFAULT).unwrap();
    }
}
