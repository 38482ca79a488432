//! The stdio gateway: a protocol-preserving line pipe between our stdin/stdout and one endpoint
//! connection (a daemon socket for `stdio`, the in-process engine for `headless`), both
//! directions at once, bounded, with stdout reserved for protocol lines (SPEC S7, FAULTS G1).
//!
//! Lines pass through byte for byte (exact id tokens, whatever the protocol); the gateway only
//! parses them to know which requests are still unanswered. It answers two things itself:
//! a stdin line over the 1 MiB message bound (`-32600`, `data.reason: "too_large"`, id `null`,
//! exactly what the daemon would answer, without shipping megabytes to it), and, when the
//! endpoint side goes away, every request still in flight, in the shape `--protocol` names.

mod inflight;

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use jfgui_proto::Limits;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

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

/// Pumps lines until stdin EOF (then waits up to `drain` for the outstanding answers), the peer
/// closing, or stdout closing. `peer` names the other side in messages.
pub async fn run<R, W>(
    conn_read: R,
    mut conn_write: W,
    protocol: Protocol,
    peer: &str,
    drain: Duration,
) -> Result<(), Failure>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let max = Limits::DEFAULT.max_bytes;
    let inflight = Arc::new(Mutex::new(InFlight::default()));
    // Small queue: a client that stops reading stdout backpressures the daemon, never our heap.
    let (out_tx, mut out_rx) = mpsc::channel::<Vec<u8>>(16);
    let mut writer = tokio::spawn(async move {
        let mut stdout = tokio::io::stdout();
        while let Some(line) = out_rx.recv().await {
            stdout.write_all(&line).await?;
            if out_rx.is_empty() {
                stdout.flush().await?;
            }
        }
        stdout.flush().await
    });

    let up_inflight = Arc::clone(&inflight);
    let up_out = out_tx.clone();
    let mut up = tokio::spawn(async move {
        let mut stdin = LineReader::new(BufReader::new(tokio::io::stdin()), max);
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
                    if up_out.send(too_large_error()).await.is_err() {
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
                Ok(Some(Line::Complete(mut line))) => {
                    if !lock(&inflight).received(&line) {
                        eprintln!("jfgui-agent: dropped a line from {peer} that is not strict JSON");
                        continue;
                    }
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
                protocol,
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
                protocol,
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

/// The lock is never held across an await, and a panic while holding it cannot leave the set
/// inconsistent in a way that matters for a gateway that is exiting anyway.
fn lock(m: &Mutex<InFlight>) -> std::sync::MutexGuard<'_, InFlight> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}
