//! The stdio gateway: a protocol-preserving line pipe between our stdin/stdout and one endpoint
//! connection (a daemon socket for `stdio`, the in-process engine for `headless`), both
//! directions at once, bounded, with stdout reserved for protocol lines and diagnostics on stderr.
//!
//! Lines pass through byte for byte (exact id tokens, whatever the protocol); the gateway only
//! parses them to know which requests are still unanswered. It answers two things itself:
//! a stdin line over the 1 MiB message bound (`-32600`, `data.reason: "too_large"`, id `null`,
//! or no `id` member in MCP: exactly what the daemon would answer, without shipping megabytes
//! to it), and, when the endpoint side goes away, every request still in flight, in the shape
//! `--protocol` names. One rewrite in MCP mode: an error line with `"id": null` (a connection
//! the daemon has not yet seen select MCP answers an unreadable id JSON-1 style) loses the
//! member, since MCP ids are strings or integers (both official MCP schemas say so).
//!
//! `all_apps.rs` is the gateway of `jfgui-agent mcp`, which outlives its daemon connection.

mod all_apps;
mod inflight;
mod stdio;

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use jfgui_proto::Limits;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

pub use all_apps::run as run_all_apps;
pub use inflight::Protocol;
use inflight::{InFlight, Unanswered, too_large_error};

use crate::exit::{Exit, Failure};
use crate::line::{Line, LineReader};
use crate::output::stdout_closed;

/// How the stdin side ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Upstream {
    /// Still forwarding.
    Running,
    /// Our stdin reached EOF; the connection was half-closed.
    Eof,
    /// Writing to the endpoint failed: it went away.
    Broken,
}

/// Why the pump stopped.
#[derive(Debug)]
enum End {
    /// Stdin ended and every request was answered.
    Finished,
    /// The endpoint side closed (or failed) with this description.
    PeerClosed(String),
    /// Our stdout was closed by the client.
    StdoutClosed,
    /// Stdin ended but answers were still missing after the drain time.
    DrainTimeout,
}

/// Pumps lines between our stdin/stdout and the connection until stdin EOF (then waits up to
/// `drain` for the outstanding answers), the peer closing, or stdout closing. `peer` names the
/// other side in messages.
pub async fn run<R, W>(
    conn_read: R,
    conn_write: W,
    protocol: Protocol,
    peer: &str,
    drain: Duration,
) -> Result<(), Failure>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let client = (stdio::input(), stdio::output());
    pump(client, (conn_read, conn_write), protocol, peer, drain).await
}

/// [`run`] over any client side (`(input, output)`), so tests can drive it in memory.
async fn pump<I, O, R, W>(
    (input, output): (I, O),
    (conn_read, mut conn_write): (R, W),
    protocol: Protocol,
    peer: &str,
    drain: Duration,
) -> Result<(), Failure>
where
    I: AsyncRead + Unpin + Send + 'static,
    O: AsyncWrite + Unpin + Send + 'static,
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let max = Limits::DEFAULT.max_bytes;
    let inflight = Arc::new(Mutex::new(InFlight::new(protocol)));
    let (out_tx, mut writer) = spawn_output(output);

    let up_inflight = Arc::clone(&inflight);
    let up_out = out_tx.clone();
    let mut up = tokio::spawn(async move {
        let mut stdin = LineReader::new(BufReader::new(input), max);
        loop {
            match stdin.next().await {
                Ok(Some(Line::Complete(mut line))) => {
                    // A blank line carries no message; forwarding it would only earn a -32700.
                    if line.iter().all(u8::is_ascii_whitespace) {
                        continue;
                    }
                    lock(&up_inflight).sent(&line);
                    line.push(b'\n');
                    if conn_write.write_all(&line).await.is_err() {
                        return Upstream::Broken;
                    }
                }
                Ok(Some(Line::TooLong)) => {
                    if up_out.send(too_large_error(protocol)).await.is_err() {
                        return Upstream::Broken;
                    }
                }
                // A stdin read error ends the input like EOF does.
                Ok(None) | Err(_) => {
                    let _ = conn_write.shutdown().await;
                    return Upstream::Eof;
                }
            }
        }
    });

    let mut down = LineReader::new(BufReader::new(conn_read), max);
    let mut upstream = Upstream::Running;
    let drain_timer = tokio::time::sleep(Duration::MAX);
    tokio::pin!(drain_timer);
    let end = loop {
        // Biased: when stdin's EOF and the peer's resulting EOF are both ready, the stdin side
        // must be seen first, or a clean end would be reported as a lost connection.
        tokio::select! {
            biased;
            _ = &mut writer => break End::StdoutClosed,
            state = &mut up, if upstream == Upstream::Running => {
                upstream = state.unwrap_or(Upstream::Eof);
                if upstream == Upstream::Eof {
                    if lock(&inflight).idle() {
                        break End::Finished;
                    }
                    drain_timer.as_mut().reset(tokio::time::Instant::now() + drain);
                }
            },
            line = down.next() => match line {
                Ok(Some(Line::Complete(line))) => {
                    let Some(mut line) = lock(&inflight).received(line) else {
                        eprintln!("jfgui-agent: dropped a line from {peer} that is not strict JSON");
                        continue;
                    };
                    line.push(b'\n');
                    if out_tx.send(line).await.is_err() {
                        break End::StdoutClosed;
                    }
                    if upstream == Upstream::Eof && lock(&inflight).idle() {
                        break End::Finished;
                    }
                }
                Ok(Some(Line::TooLong)) => {
                    eprintln!("jfgui-agent: dropped a line from {peer} longer than {max} bytes");
                }
                Ok(None) => break End::PeerClosed(String::from("end of stream")),
                Err(e) => break End::PeerClosed(e.to_string()),
            },
            () = &mut drain_timer, if upstream == Upstream::Eof => break End::DrainTimeout,
        }
    };
    if upstream == Upstream::Running && up.is_finished() {
        upstream = (&mut up).await.unwrap_or(Upstream::Eof);
    }
    up.abort();

    let result = match end {
        End::Finished => Ok(()),
        End::StdoutClosed => return Err(stdout_closed()),
        End::PeerClosed(detail) => {
            let lost = lock(&inflight).fail_all(
                Unanswered::ConnectionLost,
                &format!("the connection to {peer} was lost before this request was answered; it may or may not have been executed: inspect before retrying"),
            );
            let missing = lost.len();
            for line in lost {
                if out_tx.send(line).await.is_err() {
                    break;
                }
            }
            if upstream == Upstream::Eof && missing == 0 {
                Ok(())
            } else {
                Err(Failure::new(
                    Exit::Daemon,
                    "connection_lost",
                    format!(
                        "{peer} closed the connection ({detail}); {missing} request(s) were left unanswered"
                    ),
                ))
            }
        }
        End::DrainTimeout => {
            let lost = lock(&inflight).fail_all(
                Unanswered::Timeout,
                &format!(
                    "no answer from {peer} within {} s after stdin closed; the outcome is unknown",
                    drain.as_secs()
                ),
            );
            let missing = lost.len();
            for line in lost {
                if out_tx.send(line).await.is_err() {
                    break;
                }
            }
            Err(Failure::new(
                Exit::OutcomeUnknown,
                "timeout",
                format!(
                    "stdin closed but {missing} request(s) to {peer} were still unanswered after {} s",
                    drain.as_secs()
                ),
            ))
        }
    };
    drop(out_tx);
    // Flush what is queued (local errors included); a stuck stdout must not keep us alive.
    match tokio::time::timeout(Duration::from_secs(5), writer).await {
        Ok(Ok(Ok(()))) => result,
        _ => result.and(Err(stdout_closed())),
    }
}

/// The task that writes lines (newline included) to the client's output, and its queue. The
/// queue is small: a client that stops reading stdout backpressures the daemon, never our heap.
/// The task ends with an error when the output is closed.
///
/// Lines are not flushed one by one: a pipe (`stdio.rs`) has no buffer, and tokio's stdout
/// hands each write whole to a blocking thread that writes it into std's stdout, which is
/// line-buffered and so writes every complete line out at once; a flush per line only cost a
/// second trip through that thread. The output is flushed when the queue closes.
fn spawn_output<O>(output: O) -> (mpsc::Sender<Vec<u8>>, JoinHandle<std::io::Result<()>>)
where
    O: AsyncWrite + Unpin + Send + 'static,
{
    let (out_tx, mut out_rx) = mpsc::channel::<Vec<u8>>(16);
    let writer = tokio::spawn(async move {
        let mut stdout = output;
        while let Some(line) = out_rx.recv().await {
            stdout.write_all(&line).await?;
        }
        stdout.flush().await
    });
    (out_tx, writer)
}

/// The lock is never held across an await, and a panic while holding it cannot leave the set
/// inconsistent in a way that matters for a gateway that is exiting anyway.
fn lock(m: &Mutex<InFlight>) -> std::sync::MutexGuard<'_, InFlight> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncBufReadExt, AsyncReadExt, DuplexStream, duplex};

    const WAIT: Duration = Duration::from_secs(10);

    /// The gateway between an in-memory client and an in-memory peer; returns the client's and
    /// the peer's ends and the running gateway.
    fn start(
        protocol: Protocol,
        drain: Duration,
    ) -> (DuplexStream, DuplexStream, DuplexStream, tokio::task::JoinHandle<Result<(), Failure>>)
    {
        let (client_in, gateway_in) = duplex(1 << 16);
        let (gateway_out, client_out) = duplex(1 << 16);
        let (gateway_conn, peer) = duplex(1 << 16);
        let (conn_read, conn_write) = tokio::io::split(gateway_conn);
        let task = tokio::spawn(async move {
            pump((gateway_in, gateway_out), (conn_read, conn_write), protocol, "the peer", drain)
                .await
        });
        (client_in, client_out, peer, task)
    }

    async fn read_all(mut r: DuplexStream) -> String {
        let mut s = String::new();
        tokio::time::timeout(WAIT, r.read_to_string(&mut s)).await.unwrap().unwrap();
        s
    }

    #[tokio::test]
    async fn lines_pass_through_and_eof_ends_cleanly_once_answered() {
        let (mut client_in, client_out, peer, task) = start(Protocol::Json, WAIT);
        client_in
            .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1.0,\"method\":\"agent/info\"}\n\n  \n")
            .await
            .unwrap();
        drop(client_in);
        let (peer_read, mut peer_write) = tokio::io::split(peer);
        let mut lines = tokio::io::BufReader::new(peer_read).lines();
        let got = tokio::time::timeout(WAIT, lines.next_line()).await.unwrap().unwrap().unwrap();
        assert_eq!(got, "{\"jsonrpc\":\"2.0\",\"id\":1.0,\"method\":\"agent/info\"}");
        // Blank lines are not forwarded; stdin EOF half-closes the connection.
        assert_eq!(tokio::time::timeout(WAIT, lines.next_line()).await.unwrap().unwrap(), None);
        peer_write.write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1.0,\"result\":{}}\n").await.unwrap();
        assert_eq!(tokio::time::timeout(WAIT, task).await.unwrap().unwrap(), Ok(()));
        assert_eq!(read_all(client_out).await, "{\"jsonrpc\":\"2.0\",\"id\":1.0,\"result\":{}}\n");
    }

    #[tokio::test]
    async fn a_peer_that_closes_gets_in_flight_requests_answered_locally() {
        for (protocol, code) in [(Protocol::Json, "1001"), (Protocol::Mcp, "-32603")] {
            let (mut client_in, client_out, peer, task) = start(protocol, WAIT);
            client_in
                .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"method\":\"tools/call\"}\n")
                .await
                .unwrap();
            let mut peer = tokio::io::BufReader::new(peer);
            let mut line = String::new();
            tokio::time::timeout(WAIT, peer.read_line(&mut line)).await.unwrap().unwrap();
            drop(peer);
            let failure = tokio::time::timeout(WAIT, task).await.unwrap().unwrap().unwrap_err();
            assert_eq!((failure.exit, failure.reason.as_str()), (Exit::Daemon, "connection_lost"));
            let out = read_all(client_out).await;
            assert!(
                out.starts_with("{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"error\":{\"code\":"),
                "{out}"
            );
            assert!(out.contains(&format!("\"code\":{code},")), "{out}");
            drop(client_in);
        }
    }

    #[tokio::test]
    async fn oversize_lines_are_answered_locally_and_skipped() {
        let (mut client_in, client_out, peer, task) = start(Protocol::Mcp, WAIT);
        let writer = tokio::spawn(async move {
            let mut line = vec![b'x'; Limits::DEFAULT.max_bytes + 1];
            line.extend_from_slice(
                b"\n{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n",
            );
            client_in.write_all(&line).await.unwrap();
        });
        let mut lines = tokio::io::BufReader::new(peer).lines();
        let got = tokio::time::timeout(WAIT, lines.next_line()).await.unwrap().unwrap().unwrap();
        assert_eq!(got, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
        writer.await.unwrap();
        // Nothing was in flight (a notification), so EOF ends the gateway at once.
        assert_eq!(tokio::time::timeout(WAIT, task).await.unwrap().unwrap(), Ok(()));
        let out = read_all(client_out).await;
        // MCP: the id cannot be known, so the member is omitted (both schemas forbid null).
        assert!(out.contains("\"reason\":\"too_large\"") && !out.contains("\"id\""), "{out}");
        assert_eq!(out.lines().count(), 1, "{out}");
    }

    #[tokio::test]
    async fn unanswered_requests_after_eof_time_out_with_local_errors() {
        let (mut client_in, client_out, peer, task) =
            start(Protocol::Json, Duration::from_millis(50));
        client_in
            .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"agent/info\"}\n")
            .await
            .unwrap();
        drop(client_in);
        let failure = tokio::time::timeout(WAIT, task).await.unwrap().unwrap().unwrap_err();
        assert_eq!((failure.exit, failure.reason.as_str()), (Exit::OutcomeUnknown, "timeout"));
        let out = read_all(client_out).await;
        assert!(out.contains("\"id\":7") && out.contains("\"reason\":\"timeout\""), "{out}");
        drop(peer);
    }

    #[tokio::test]
    async fn a_closed_client_output_is_a_quiet_end() {
        let (mut client_in, client_out, peer, task) = start(Protocol::Json, WAIT);
        drop(client_out);
        client_in
            .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"agent/info\"}\n")
            .await
            .unwrap();
        let (peer_read, mut peer_write) = tokio::io::split(peer);
        let mut lines = tokio::io::BufReader::new(peer_read).lines();
        tokio::time::timeout(WAIT, lines.next_line()).await.unwrap().unwrap();
        peer_write.write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n").await.unwrap();
        let failure = tokio::time::timeout(WAIT, task).await.unwrap().unwrap().unwrap_err();
        assert_eq!(failure.exit, Exit::Ok, "{failure}");
    }
}
