//! The bounded line codec for client and control connections (SPEC S6 framing, S8 sizes): one
//! message per `\n`-terminated line, at most `max_line` bytes, over any `AsyncRead`.
//!
//! Memory stays bounded whatever the peer sends: an over-long line is reported once as
//! [`Line::TooLong`] and the rest of it is discarded up to the next newline, so the buffer never
//! holds more than `max_line` plus one read chunk. A partial line that sees no byte for
//! `partial_idle` ends the connection (slowloris, FAULTS B4); an idle connection between lines
//! may stay open indefinitely, since CLI and MCP sessions idle legitimately.

use std::io;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt};

/// Bytes asked of the transport per read.
const READ_CHUNK: usize = 8 * 1024;

/// One item of the line stream.
#[derive(Debug, PartialEq, Eq)]
pub enum Line {
    /// A complete line without its terminating `\n`.
    Complete(Vec<u8>),
    /// A line longer than the bound; its bytes were discarded up to the next newline (or are
    /// being discarded as they arrive).
    TooLong,
}

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
    buf: Vec<u8>,
    /// Bytes of `buf` already known to hold no newline, so byte-by-byte input costs O(n).
    scanned: usize,
    max_line: usize,
    partial_idle: Duration,
    /// Inside an over-long line: drop bytes until the next newline.
    skipping: bool,
    eof: bool,
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    /// A reader accepting lines of at most `max_line` bytes (newline excluded).
    pub fn new(inner: R, max_line: usize, partial_idle: Duration) -> Self {
        LineReader {
            inner,
            buf: Vec::new(),
            scanned: 0,
            max_line,
            partial_idle,
            skipping: false,
            eof: false,
        }
    }

    /// The next line, `Ok(None)` at end of stream. Cancel-safe: dropping the future loses no
    /// bytes, because everything read is kept in the buffer before any await.
    pub async fn next_line(&mut self) -> Result<Option<Line>, LineError> {
        loop {
            if let Some(pos) = self.buf[self.scanned..].iter().position(|&b| b == b'\n') {
                let end = self.scanned + pos;
                let mut line: Vec<u8> = self.buf.drain(..=end).collect();
                line.pop();
                self.scanned = 0;
                if self.skipping {
                    self.skipping = false;
                    continue;
                }
                if line.len() > self.max_line {
                    return Ok(Some(Line::TooLong));
                }
                return Ok(Some(Line::Complete(line)));
            }
            self.scanned = self.buf.len();
            if self.skipping {
                self.buf.clear();
                self.scanned = 0;
            } else if self.buf.len() > self.max_line {
                self.buf.clear();
                self.scanned = 0;
                self.skipping = true;
                return Ok(Some(Line::TooLong));
            }
            if self.eof {
                if self.skipping || self.buf.is_empty() {
                    return Ok(None);
                }
                // A last line without a newline still counts: `printf '{..}' | nc` is common.
                self.scanned = 0;
                return Ok(Some(Line::Complete(std::mem::take(&mut self.buf))));
            }
            self.fill().await?;
        }
    }

    /// True while part of a line (or of a skipped over-long line) has been received.
    fn has_partial(&self) -> bool {
        self.skipping || !self.buf.is_empty()
    }

    async fn fill(&mut self) -> Result<(), LineError> {
        // One big line must not pin its buffer for the rest of a long-lived connection.
        if self.buf.capacity() > 4 * READ_CHUNK && self.buf.len() <= READ_CHUNK {
            self.buf.shrink_to(2 * READ_CHUNK);
        }
        let mut chunk = [0u8; READ_CHUNK];
        let partial = self.has_partial();
        let read = self.inner.read(&mut chunk);
        let n = if partial {
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
            self.buf.extend_from_slice(&chunk[..n]);
        }
        Ok(())
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
        assert_eq!(reader.next_line().await.unwrap(), Some(Line::TooLong));
        // The skipped bytes never accumulate: at most one read chunk is held at a time.
        assert!(reader.buf.capacity() <= 1024 + 2 * READ_CHUNK);
        assert_eq!(reader.next_line().await.unwrap(), Some(complete("{\"next\":1}")));
        assert!(reader.buf.capacity() <= 1024 + 2 * READ_CHUNK);
        writer.await.unwrap();
    }

    #[tokio::test]
    async fn a_big_line_does_not_pin_its_buffer() {
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
        assert!(reader.buf.capacity() >= 1 << 20);
        assert_eq!(reader.next_line().await.unwrap(), Some(complete("small")));
        assert!(reader.buf.capacity() <= 4 * READ_CHUNK);
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
