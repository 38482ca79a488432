//! The write half of a connection, client or app, and the one non-blocking write its owner
//! makes when nothing is ahead of its bytes (a client's answers, the link's requests): a
//! call then costs no wake-up of the connection's writer task.

use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use tokio::io::AsyncWrite;

/// The write half of a connection, whichever transport it is.
pub(crate) type Sink = Box<dyn AsyncWrite + Send + Unpin>;

/// Writes what the socket takes of `bytes` without waiting; 0 when it takes nothing now or
/// fails (the writer task then meets the same state, with the rest, and handles it as ever).
/// Polled with a no-op waker: the write half is idle, so no writer task waits on it; if the
/// socket is full, the waker it keeps is that no-op one until the writer task, which the rest
/// is queued for, polls it with its own.
pub(crate) fn write_now(sink: &mut Sink, bytes: &[u8]) -> usize {
    match Pin::new(sink).poll_write(&mut Context::from_waker(Waker::noop()), bytes) {
        Poll::Ready(Ok(n)) => n,
        Poll::Ready(Err(_)) | Poll::Pending => 0,
    }
}
