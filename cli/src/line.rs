//! Bounded line reading over an async reader: one protocol message per line, and a line longer
//! than the bound is skipped to its newline without ever being held in memory whole (an oversize
//! line gets an error and the reader skips to the next newline). The line
//! rule itself is proto's [`LineDecoder`], the one the daemon uses too.

use std::io;

pub use jfgui_proto::Line;
use jfgui_proto::LineDecoder;
use tokio::io::{AsyncBufRead, AsyncBufReadExt};

/// Reads lines of at most `max` bytes (newline excluded) from a buffered reader.
///
/// Cancel-safe: a partial line lives in the decoder, not in the `next` future, so `next` can
/// be a branch of `tokio::select!` without losing bytes.
#[derive(Debug)]
pub struct LineReader<R> {
    inner: R,
    decoder: LineDecoder,
    eof: bool,
}

impl<R: AsyncBufRead + Unpin> LineReader<R> {
    /// Wraps `inner`; lines longer than `max` bytes become [`Line::TooLong`].
    pub fn new(inner: R, max: usize) -> Self {
        LineReader { inner, decoder: LineDecoder::new(max), eof: false }
    }

    /// The next line, or `None` at EOF. A final line without a newline still counts as a line.
    pub async fn next(&mut self) -> io::Result<Option<Line>> {
        loop {
            if let Some(line) = self.decoder.next_line() {
                return Ok(Some(line));
            }
            if self.eof {
                return Ok(self.decoder.finish());
            }
            // The only await point; the bytes it yields are fed before anything else awaits.
            let chunk = self.inner.fill_buf().await?;
            let n = chunk.len();
            if n == 0 {
                self.eof = true;
            } else {
                self.decoder.feed(chunk);
                self.inner.consume(n);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::BufReader;

    async fn all(input: &[u8], max: usize, buf: usize) -> Vec<Line> {
        let mut r = LineReader::new(BufReader::with_capacity(buf, input), max);
        let mut out = Vec::new();
        while let Some(l) = r.next().await.unwrap() {
            out.push(l);
        }
        out
    }

    #[tokio::test]
    async fn splits_lines_and_keeps_a_final_unterminated_one() {
        let got = all(b"a\nbc\r\n\nlast", 10, 3).await;
        assert_eq!(
            got,
            vec![
                Line::Complete(b"a".to_vec()),
                Line::Complete(b"bc\r".to_vec()),
                Line::Complete(Vec::new()),
                Line::Complete(b"last".to_vec()),
            ]
        );
    }

    #[tokio::test]
    async fn oversize_lines_are_skipped_to_the_newline() {
        let mut input = vec![b'x'; 100];
        input.extend_from_slice(b"\nok\n");
        input.extend_from_slice(&[b'y'; 50]);
        let got = all(&input, 10, 7).await;
        assert_eq!(got, vec![Line::TooLong, Line::Complete(b"ok".to_vec()), Line::TooLong]);
    }

    #[tokio::test]
    async fn a_line_of_exactly_max_bytes_is_accepted() {
        let got = all(b"0123456789\n01234567890\n", 10, 4).await;
        assert_eq!(got, vec![Line::Complete(b"0123456789".to_vec()), Line::TooLong]);
    }
}
