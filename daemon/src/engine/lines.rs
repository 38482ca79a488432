//! Bounded lines over any `AsyncRead`, for client and control connections (SPEC S6 framing,
//! S8 sizes): the transport side of [`LineDecoder`], which owns the line rule (one message per
//! `\n`-terminated line, at most `max_line` bytes, an over-long line reported once and skipped).
//!
//! What this adds is time: a partial line that sees no byte for `partial_idle` ends the
//! connection (slowloris, FAULTS B4); an idle connection between lines may stay open
//! indefinitely, since CLI and MCP sessions idle legitimately.

use std::io;
use std::time::Duration;

pub use jfgui_proto::Line;
use jfgui_proto::LineDecoder;
use tokio::io::{AsyncRead, AsyncReadExt};

/// Bytes asked of the transport per read.
const READ_CHUNK: usize = 8 * 1024;

/// Why the line stream ended abnormally.
#[derive(Debug)]
pub enum LineError {
    /// The transport failed.
    Io(io::Error),
    /// A partial line saw no byte for the idle deadline.
    PartialIdle,
}

impl std::fmt::Display for LineError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LineError::Io(e) => write!(f, "read failed: {e}"),
            LineError::PartialIdle => f.write_str("a partial line was idle past its deadline"),
        }
    }
}

/// Reads bounded lines from `R`.
#[derive(Debug)]
pub struct LineReader<R> {
    inner: R,
    decoder: LineDecoder,
    partial_idle: Duration,
    eof: bool,
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    /// A reader accepting lines of at most `max_line` bytes (newline excluded).
    pub fn new(inner: R, max_line: usize, partial_idle: Duration) -> Self {
        LineReader { inner, decoder: LineDecoder::new(max_line), partial_idle, eof: false }
    }

    /// The next line, `Ok(None)` at end of stream. Cancel-safe: dropping the future loses no
    /// bytes, because everything read is fed to the decoder before any await.
    pub async fn next_line(&mut self) -> Result<Option<Line>, LineError> {
        loop {
            if let Some(line) = self.decoder.next_line() {
                return Ok(Some(line));
            }
            if self.eof {
                return Ok(self.decoder.finish());
            }
            let mut chunk = [0u8; READ_CHUNK];
            let read = self.inner.read(&mut chunk);
            let n = if self.decoder.has_partial() {
                match tokio::time::timeout(self.partial_idle, read).await {
                    Ok(r) => r.map_err(LineError::Io)?,
                    Err(_) => return Err(LineError::PartialIdle),
                }
            } else {
                read.await.map_err(LineError::Io)?
            };
            if n == 0 {
                self.eof = true;
            } else {
                self.decoder.feed(&chunk[..n]);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncWriteExt;

    const IDLE: Duration = Duration::from_secs(30);

    async fn collect(input: &[u8], max: usize, chunk: usize) -> Vec<Line> {
        let (mut tx, rx) = tokio::io::duplex(64);
        let input = input.to_vec();
        let writer = tokio::spawn(async move {
            for part in input.chunks(chunk.max(1)) {
                tx.write_all(part).await.unwrap();
            }
        });
        let mut reader = LineReader::new(rx, max, IDLE);
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
        let mut reader = LineReader::new(rx, 1024, IDLE);
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
        let mut reader = LineReader::new(rx, 1 << 20, IDLE);
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
        let mut reader = LineReader::new(rx, 100, Duration::from_secs(1));
        let err = reader.next_line().await.unwrap_err();
        assert!(matches!(err, LineError::PartialIdle));
        drop(tx);
    }

    #[tokio::test(start_paused = true)]
    async fn idle_between_lines_is_allowed() {
        let (mut tx, rx) = tokio::io::duplex(64);
        let mut reader = LineReader::new(rx, 100, Duration::from_secs(1));
        let writer = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_secs(60)).await;
            tx.write_all(b"late\n").await.unwrap();
        });
        assert_eq!(reader.next_line().await.unwrap(), Some(complete("late")));
        writer.await.unwrap();
    }
}
