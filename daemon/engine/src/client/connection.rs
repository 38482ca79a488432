//! The one line loop every client socket runs: an app's endpoint (JSON-1 or MCP,
//! `endpoint.rs`), the all-apps MCP socket (`mcp/all_apps.rs`) and the control socket
//! (`control.rs`). Bounded lines in, responses out, many requests in flight; what a line means
//! is the [`Handler`]'s.
//!
//! Work and memory are bounded: at most `max_in_flight_per_client` requests run at once, and
//! the reader stops while about one maximum-size response is buffered for a client that does
//! not read (ssh-agent's rule); the calls already running are bounded by the response bytes
//! they may bring back (`backpressure.rs`). Responses are written as they complete, so they
//! may be out of order; each carries its id.
//!
//! Fairness: the connection yields to the others after every line it did not have to wait
//! for, methods answered from the daemon's own state run on the connection's task one at a
//! time (inside [`Handler::line`]), and only calls that wait for an app run concurrently: as
//! futures this same task polls whatever else it waits for (`running.rs`), not a task each, so
//! a call costs no spawn and no wake-up of another task on the client's side; its response
//! goes out from here when nothing is buffered before it (`output.rs`).

use std::future::Future;

use jfgui_proto::Limits;
use tokio::io::{AsyncRead, AsyncWrite};

use super::backpressure::{Backpressure, CallPermit};
use super::lines::{Line, LineReader};
use super::observer::ClientFate;
use super::running::{Call, Running};
use crate::output::Output;
use crate::partial::Partial;
use crate::{EngineConfig, PeerInfo};

/// What one kind of client connection does with its lines.
pub(crate) trait Handler: Send {
    /// Handles one complete line: answers it now through `output` (or not at all: a
    /// notification), runs a method answered from the daemon's own state right here, or
    /// returns a call that waits for an app, for the connection to run beside the others; the
    /// call keeps `permit` (its in-flight slot and response budget) until its response is sent.
    fn line(
        &mut self,
        line: &[u8],
        permit: CallPermit,
        output: &Output,
    ) -> impl Future<Output = Option<Call>> + Send;

    /// The answer to a line over the bound (`limits.max_bytes`), whose id could not be read.
    fn too_long(&self, limits: &Limits) -> Vec<u8>;
}

/// How a connection's end treats the calls still running when it stops reading.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ending {
    /// They deliver their responses first (within the request deadline plus the drain time):
    /// the client may only have half-closed its side and still wait for them.
    Drain,
    /// They end with the connection (a control connection's `audit/follow` stream).
    Drop,
}

/// A client connection's parts that do not depend on its kind.
pub(crate) struct Connection<'a> {
    /// Bounds and deadlines.
    pub config: &'a EngineConfig,
    /// The connection's share of the partial-input budget.
    pub partial: Partial,
    /// Who is on the other end, for logs.
    pub peer: PeerInfo,
    /// The client's fate, when its calls are audited (its records settle after its answers).
    pub fate: Option<ClientFate>,
    /// What the connection's end does with the calls still running.
    pub ending: Ending,
}

impl Connection<'_> {
    /// Runs the connection until EOF, a read error, or `stop` (the app leaving, shutdown), then
    /// ends it as [`Connection::ending`] says.
    pub(crate) async fn serve<S, H>(
        self,
        stream: S,
        mut handler: H,
        stop: impl Future<Output = &'static str>,
    ) where
        S: AsyncRead + AsyncWrite + Send + Unpin + 'static,
        H: Handler,
    {
        let Connection { config, partial, peer, fate, ending } = self;
        let limits = config.json;
        let (rd, wr) = tokio::io::split(stream);
        let mut lines = LineReader::new(rd, limits.max_bytes, partial);
        let output = Output::start(wr, limits.max_bytes);
        let backpressure = Backpressure::new(config);
        // The calls waiting for an app run here, polled by this task whatever it waits for.
        let mut calls = Running::new(output.clone());
        if let Some(fate) = &fate {
            calls = calls.settling(fate.clone());
        }
        tokio::pin!(stop);
        // In the `select!`s the calls are polled first (a call just added starts before the
        // next line is read), and `stop` wins over reading more. `stop` is never polled again
        // once it completed: the loop ends there.
        let ended = loop {
            // Backpressure first: a free in-flight slot and room in the output buffer.
            let permit = tokio::select! {
                biased;
                () = calls.run() => unreachable!("Running::run never completes"),
                reason = &mut stop => break reason,
                p = backpressure.permit(&output) => match p { Ok(p) => p, Err(_) => break "closed" },
            };
            let line = tokio::select! {
                biased;
                () = calls.run() => unreachable!("Running::run never completes"),
                reason = &mut stop => break reason,
                l = lines.next_line() => l,
            };
            match line {
                Ok(Some(Line::Complete(bytes))) => {
                    // Boxed: a line's handling (every method's state) is allocated while it
                    // runs, so an idle connection's task holds only this loop's state.
                    let handled = Box::pin(handler.line(&bytes, permit, &output));
                    if let Some(call) = calls.beside(handled).await {
                        calls.push(call);
                    }
                    // Lines already buffered are not worked through in one go: every other
                    // runnable connection gets its turn between two lines (a line the reader
                    // waited for came after such a turn already).
                    if !lines.waited() {
                        tokio::task::yield_now().await;
                    }
                }
                Ok(Some(Line::TooLong)) => {
                    calls.beside(output.send(handler.too_long(&limits))).await;
                }
                Ok(None) => break "eof",
                Err(e) => {
                    tracing::info!(?peer, "client connection ended: {e}");
                    break "read error";
                }
            }
        };
        tracing::debug!(?peer, reason = ended, "client stops reading");
        // Ends what the handler holds for the connection (the bridge a control connection
        // opened) now, not when the task is freed.
        drop(handler);
        if ending == Ending::Drop {
            calls = Running::new(output.clone());
        }
        let finish = finish(calls, output, config, peer);
        match fate {
            Some(fate) => fate.close(ended, finish).await,
            None => _ = finish.await,
        }
    }
}

/// Lets the calls already running deliver their responses and closes the connection, within
/// the request deadline plus the drain time; a client that never takes them is dropped, and
/// so are the calls still running then. True when every response was written.
async fn finish(mut calls: Running, output: Output, config: &EngineConfig, peer: PeerInfo) -> bool {
    let finish = async {
        calls.finish().await;
        output.close().await
    };
    match tokio::time::timeout(config.request_deadline + config.shutdown_drain, finish).await {
        Ok(delivered) => delivered,
        Err(_) => {
            tracing::warn!(?peer, "client never took its responses; dropped");
            output.abandon();
            false
        }
    }
}
