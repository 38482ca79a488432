//! Bounded lines over any `AsyncRead`, for client and control connections: the transport side
//! of [`LineDecoder`], which owns the line rule (one message per
//! `\n`-terminated line, at most `max_line` bytes, an over-long line reported once and skipped).
//!
//! What this adds is time and the daemon-wide total (`partial.rs`): a line must complete within
//! the partial deadline counted from its first byte (against slowloris and tricklers),
//! and the bytes of the partial line count against the daemon-wide budget; either ends the
//! connection. An idle connection between lines may stay open indefinitely, since CLI and MCP
//! clients idle legitimately.

use std::io;

pub use jfgui_proto::Line;
use jfgui_proto::LineDecoder;
use tokio::io::{AsyncRead, AsyncReadExt};

use crate::partial::{Partial, PartialError};

/// Bytes asked of the transport per read.
const READ_CHUNK: usize = 8 * 1024;

/// Why the line stream ended abnormally.
#[derive(Debug)]
pub enum LineError {
    /// The transport failed.
    Io(io::Error),
    /// A partial line missed its deadline or the daemon-wide budget.
    Partial(PartialError),
}

impl std::fmt::Display for LineError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LineError::Io(e) => write!(f, "read failed: {e}"),
            LineError::Partial(e) => e.fmt(f),
        }
    }
}

/// Reads bounded lines from `R`.
#[derive(Debug)]
pub struct LineReader<R> {
    inner: R,
    /// What one read returned, before it is fed to the decoder. Kept (with its capacity) across
    /// reads: a fresh zeroed buffer per read showed up as a memset in the profile.
    chunk: Vec<u8>,
    decoder: LineDecoder,
    partial: Partial,
    eof: bool,
    /// Whether the last [`LineReader::next_line`] had to wait for the transport.
    waited: bool,
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    /// A reader accepting lines of at most `max_line` bytes (newline excluded), its partial
    /// lines tracked by `partial`.
    pub fn new(inner: R, max_line: usize, partial: Partial) -> Self {
        LineReader {
            inner,
            chunk: Vec::new(),
            decoder: LineDecoder::new(max_line),
            partial,
            eof: false,
            waited: false,
        }
    }

    /// The next line, `Ok(None)` at end of stream. Cancel-safe: dropping the future loses no
    /// bytes, because everything read is fed to the decoder before any await.
    pub async fn next_line(&mut self) -> Result<Option<Line>, LineError> {
        self.waited = false;
        loop {
            if let Some(line) = self.decoder.next_line() {
                self.partial.message_taken(self.decoder.partial_len(), self.decoder.has_partial());
                return Ok(Some(line));
            }
            if self.eof {
                return Ok(self.decoder.finish());
            }
            // Allocated on the first read, not per connection: most connections idle between
            // lines. `read_buf` fills the spare capacity without zeroing it first.
            self.chunk.clear();
            self.chunk.reserve(READ_CHUNK);
            let read = noting_wait(self.inner.read_buf(&mut self.chunk), &mut self.waited);
            let n = match self.partial.due() {
                Some(due) => match tokio::time::timeout_at(due, read).await {
                    Ok(r) => r.map_err(LineError::Io)?,
                    Err(_) => return Err(LineError::Partial(PartialError::Deadline)),
                },
                None => read.await.map_err(LineError::Io)?,
            };
            if n == 0 {
                self.eof = true;
            } else {
                self.decoder.feed(&self.chunk[..n]);
                self.partial
                    .track(self.decoder.partial_len(), self.decoder.has_partial())
                    .map_err(LineError::Partial)?;
            }
        }
    }

    /// Whether the last line had to wait for the transport: the task was suspended, so every
    /// other runnable task has had its turn since the line before. A connection loop yields
    /// between two lines only when this is false (the line was already there), which keeps
    /// the turn-taking between connections without a yield, and the driver poll it costs
    /// (an extra `epoll_wait`), per call of a client that waits for each response.
    pub fn waited(&self) -> bool {
        self.waited
    }
}

/// Runs `fut`, setting `waited` if it was ever pending.
async fn noting_wait<F: Future>(fut: F, waited: &mut bool) -> F::Output {
    let mut fut = std::pin::pin!(fut);
    std::future::poll_fn(|cx| {
        let poll = fut.as_mut().poll(cx);
        *waited |= poll.is_pending();
        poll
    })
    .await
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::partial::PartialBudget;
    use tokio::io::AsyncWriteExt;

    fn partial(deadline: Duration) -> Partial {
        Partial::new(PartialBudget::new(64 << 20), deadline)
    }

    fn idle() -> Partial {
        partial(Duration::from_secs(30))
    }

    async fn collect(input: &[u8], max: usize, chunk: usize) -> Vec<Line> {
        let (mut tx, rx) = tokio::io::duplex(64);
        let input = input.to_vec();
        let writer = tokio::spawn(async move {
            for part in input.chunks(chunk.max(1)) {
                tx.write_all(part).await.unwrap();
            }
        });
        let mut reader = LineReader::new(rx, max, idle());
        let mut out = Vec::new();
        while let Some(line) = reader.next_line().await.unwrap() {
            out.push(line);
        }
        writer.await.unwrap();
        out
    }

    fn complete(s: &str) -> Line {
        Line::Complete(s.as_bytes().to_vec())
    }

    #[tokio::test]
    async fn splits_lines_whatever_the_chunking() {
        let input = "{\"a\":\"é\"}\n{\"b\":2}\n\nlast";
        for chunk in [1, 2, 3, 7, 1000] {
            let lines = collect(input.as_bytes(), 100, chunk).await;
            assert_eq!(
                lines,
                vec![
                    complete("{\"a\":\"é\"}"),
                    complete("{\"b\":2}"),
                    complete(""),
                    complete("last")
                ],
                "chunk {chunk}"
            );
        }
    }

    #[tokio::test]
    async fn line_at_the_bound_passes_and_one_more_byte_is_reported_once() {
        let at = "x".repeat(10);
        let over = "y".repeat(11);
        let input = format!("{at}\n{over}\nok\n");
        let lines = collect(input.as_bytes(), 10, 3).await;
        assert_eq!(lines, vec![complete(&at), Line::TooLong, complete("ok")]);
    }

    #[tokio::test]
    async fn huge_line_is_skipped_with_bounded_buffer() {
        let mut input = vec![b'z'; 10 * 1024 * 1024];
        input.extend_from_slice(b"\n{\"next\":1}\n");
        let (mut tx, rx) = tokio::io::duplex(64 * 1024);
        let writer = tokio::spawn(async move { tx.write_all(&input).await.unwrap() });
        let mut reader = LineReader::new(rx, 1024, idle());
        // The decoder's own tests show the skipped bytes never accumulate
        // (`huge_line_is_skipped_with_bounded_memory` in proto).
        assert_eq!(reader.next_line().await.unwrap(), Some(Line::TooLong));
        assert_eq!(reader.next_line().await.unwrap(), Some(complete("{\"next\":1}")));
        writer.await.unwrap();
    }

    /// The buffer itself is released with the line (proto's `a_big_line_does_not_pin_its_buffer`).
    #[tokio::test]
    async fn a_big_line_then_a_small_one() {
        let (mut tx, rx) = tokio::io::duplex(64 * 1024);
        let mut reader = LineReader::new(rx, 1 << 20, idle());
        let mut big = vec![b'b'; 1 << 20];
        big.push(b'\n');
        let writer = tokio::spawn(async move {
            tx.write_all(&big).await.unwrap();
            tokio::time::sleep(Duration::from_millis(10)).await;
            tx.write_all(b"small\n").await.unwrap();
        });
        assert!(
            matches!(reader.next_line().await.unwrap(), Some(Line::Complete(l)) if l.len() == 1 << 20)
        );
        assert_eq!(reader.next_line().await.unwrap(), Some(complete("small")));
        writer.await.unwrap();
    }

    #[tokio::test]
    async fn over_long_last_line_without_newline_is_an_error_not_a_line() {
        let lines = collect(b"abcdefghijk", 10, 4).await;
        assert_eq!(lines, vec![Line::TooLong]);
    }

    #[tokio::test(start_paused = true)]
    async fn partial_line_idle_past_the_deadline_ends_the_stream() {
        let (mut tx, rx) = tokio::io::duplex(64);
        tx.write_all(b"{\"half\":").await.unwrap();
        let mut reader = LineReader::new(rx, 100, partial(Duration::from_secs(1)));
        let err = reader.next_line().await.unwrap_err();
        assert!(matches!(err, LineError::Partial(PartialError::Deadline)));
        drop(tx);
    }

    #[tokio::test(start_paused = true)]
    async fn a_trickled_line_is_dropped_at_the_deadline_from_its_first_byte() {
        let (mut tx, rx) = tokio::io::duplex(64);
        let mut reader = LineReader::new(rx, 100, partial(Duration::from_secs(30)));
        let writer = tokio::spawn(async move {
            // One byte every 5 s: never idle for 30 s, but 30 s after the first byte it is due.
            for _ in 0..20 {
                if tx.write_all(b"x").await.is_err() {
                    return;
                }
                tokio::time::sleep(Duration::from_secs(5)).await;
            }
        });
        let started = tokio::time::Instant::now();
        let err = reader.next_line().await.unwrap_err();
        assert!(matches!(err, LineError::Partial(PartialError::Deadline)));
        assert_eq!(started.elapsed(), Duration::from_secs(30));
        drop(reader);
        writer.await.unwrap();
    }

    #[tokio::test]
    async fn a_partial_line_over_the_daemon_budget_ends_the_stream() {
        let budget = PartialBudget::new(1000);
        let (mut tx, rx) = tokio::io::duplex(4096);
        tx.write_all(&[b'y'; 1500]).await.unwrap();
        let mut reader =
            LineReader::new(rx, 4096, Partial::new(budget.clone(), Duration::from_secs(30)));
        let err = reader.next_line().await.unwrap_err();
        assert!(matches!(err, LineError::Partial(PartialError::OverBudget)));
        drop(reader);
        assert_eq!(budget.used(), 0, "the share is given back");
    }

    #[tokio::test(start_paused = true)]
    async fn idle_between_lines_is_allowed() {
        let (mut tx, rx) = tokio::io::duplex(64);
        let mut reader = LineReader::new(rx, 100, partial(Duration::from_secs(1)));
        let writer = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_secs(60)).await;
            tx.write_all(b"late\n").await.unwrap();
        });
        assert_eq!(reader.next_line().await.unwrap(), Some(complete("late")));
        writer.await.unwrap();
    }
}
