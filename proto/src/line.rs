//! The sans-IO line codec of client connections (JSON-1, MCP, the control socket): one message
//! per `\n`-terminated line, at most a fixed number of bytes. Feed bytes in, take lines out,
//! like [`FrameDecoder`](crate::channel::FrameDecoder) does for the host channel.
//!
//! It sits beside the frame codec rather than inside `channel` because lines frame the client
//! side, not the host channel. The daemon, the CLI and the tests all split lines with it, so
//! they agree on where a line ends and when it is too long.

use alloc::collections::VecDeque;
use alloc::vec::Vec;

/// One item of a line stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Line {
    /// A complete line without its terminating `\n`. A `\r` before the newline is kept: it is
    /// JSON whitespace, so the parser that reads the line tolerates it, and it counts toward
    /// the bound like any other byte.
    Complete(Vec<u8>),
    /// A line longer than the bound. Reported once, as soon as the bound is passed; the rest
    /// of the line is discarded as it arrives, up to and including its newline.
    TooLong,
}

/// Splits a byte stream into bounded lines (sans-IO: the caller reads the transport).
///
/// Feed whatever the transport delivered with [`LineDecoder::feed`], then call
/// [`LineDecoder::next_line`] until it answers `None`; at end of stream,
/// [`LineDecoder::finish`] yields the last line if it had no newline (`printf '{..}' | nc` is
/// common). The bound is checked as bytes arrive, so memory stays bounded whatever the peer
/// sends: at most `max_line` bytes of a partial line, plus the complete lines of the last feed
/// that were not taken yet. An over-long line is never held: it becomes [`Line::TooLong`] the
/// moment it passes the bound, and its further bytes are dropped up to the next newline.
///
/// The lines and their order do not depend on how the input was chunked.
///
/// ```
/// # use jfgui_proto::{Line, LineDecoder};
/// let mut lines = LineDecoder::new(8);
/// lines.feed(b"{\"a\":1}\r\n0123456789");
/// lines.feed(b"abc\nlast");
/// assert_eq!(lines.next_line(), Some(Line::Complete(b"{\"a\":1}\r".to_vec())));
/// assert_eq!(lines.next_line(), Some(Line::TooLong));
/// assert_eq!(lines.next_line(), None);
/// assert_eq!(lines.finish(), Some(Line::Complete(b"last".to_vec())));
/// ```
#[derive(Debug)]
pub struct LineDecoder {
    max_line: usize,
    /// Lines (and over-long markers) complete but not taken yet, in stream order.
    ready: VecDeque<Line>,
    /// The current line so far (no newline in it), at most `max_line` bytes.
    partial: Vec<u8>,
    /// Inside an over-long line that was already reported: drop bytes up to the next newline.
    skipping: bool,
}

impl LineDecoder {
    /// A decoder accepting lines of at most `max_line` bytes (newline excluded).
    pub fn new(max_line: usize) -> Self {
        LineDecoder { max_line, ready: VecDeque::new(), partial: Vec::new(), skipping: false }
    }

    /// Appends bytes read from the transport, splitting off every line they complete.
    pub fn feed(&mut self, mut bytes: &[u8]) {
        while let Some(end) = bytes.iter().position(|&b| b == b'\n') {
            self.take(&bytes[..end]);
            self.end_line();
            bytes = &bytes[end + 1..];
        }
        self.take(bytes);
    }

    /// The next complete line (or over-long marker), `None` when more bytes are needed.
    pub fn next_line(&mut self) -> Option<Line> {
        self.ready.pop_front()
    }

    /// End of stream: the last line if it had no newline. Lines still waiting in
    /// [`LineDecoder::next_line`] come first; take them before calling this. A last line over
    /// the bound was already reported as [`Line::TooLong`] and yields nothing here.
    pub fn finish(&mut self) -> Option<Line> {
        if core::mem::take(&mut self.skipping) || self.partial.is_empty() {
            return None;
        }
        Some(Line::Complete(core::mem::take(&mut self.partial)))
    }

    /// True while part of a line (or of a skipped over-long line) has been received, for
    /// partial-line deadlines.
    pub fn has_partial(&self) -> bool {
        self.skipping || !self.partial.is_empty()
    }

    /// Bytes of the current partial line held (for a budget of buffered input).
    pub fn partial_len(&self) -> usize {
        self.partial.len()
    }

    /// Adds bytes without a newline to the current line, or reports it over-long.
    fn take(&mut self, bytes: &[u8]) {
        if self.skipping || bytes.is_empty() {
            return;
        }
        if bytes.len() > self.max_line - self.partial.len() {
            // Release the memory of the line at once: nothing of it will be used.
            self.partial = Vec::new();
            self.skipping = true;
            self.ready.push_back(Line::TooLong);
        } else {
            self.partial.extend_from_slice(bytes);
        }
    }

    /// A newline: the current line is complete (or the skipped one is over).
    fn end_line(&mut self) {
        if core::mem::take(&mut self.skipping) {
            return;
        }
        self.ready.push_back(Line::Complete(core::mem::take(&mut self.partial)));
    }
}

#[cfg(test)]
mod tests {
    use alloc::{format, vec};

    use proptest::prelude::*;

    use super::*;

    /// Every item of `input` fed in pieces of `chunk` bytes, then what `finish` yields.
    fn all(input: &[u8], max: usize, chunk: usize) -> Vec<Line> {
        let mut d = LineDecoder::new(max);
        let mut out = Vec::new();
        for piece in input.chunks(chunk.max(1)) {
            d.feed(piece);
            out.extend(core::iter::from_fn(|| d.next_line()));
        }
        out.extend(d.finish());
        out
    }

    fn complete(s: &str) -> Line {
        Line::Complete(s.as_bytes().to_vec())
    }

    #[test]
    fn splits_lines_whatever_the_chunking() {
        let input = "{\"a\":\"é\"}\n{\"b\":2}\n\nlast";
        for chunk in [1, 2, 3, 7, 1000] {
            assert_eq!(
                all(input.as_bytes(), 100, chunk),
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

    #[test]
    fn a_carriage_return_is_kept_for_the_parser() {
        assert_eq!(
            all(b"a\nbc\r\n\nlast", 10, 3),
            vec![complete("a"), complete("bc\r"), complete(""), complete("last")]
        );
    }

    #[test]
    fn line_at_the_bound_passes_and_one_more_byte_is_reported_once() {
        let at = "x".repeat(10);
        let over = "y".repeat(11);
        let input = format!("{at}\n{over}\nok\n");
        for chunk in [1, 3, 100] {
            assert_eq!(
                all(input.as_bytes(), 10, chunk),
                vec![complete(&at), Line::TooLong, complete("ok")]
            );
        }
        assert_eq!(
            all(b"0123456789\n01234567890\n", 10, 4),
            vec![complete("0123456789"), Line::TooLong]
        );
    }

    #[test]
    fn oversize_lines_are_skipped_to_the_newline() {
        let mut input = vec![b'x'; 100];
        input.extend_from_slice(b"\nok\n");
        input.extend_from_slice(&[b'y'; 50]);
        assert_eq!(all(&input, 10, 7), vec![Line::TooLong, complete("ok"), Line::TooLong]);
    }

    #[test]
    fn over_long_last_line_without_newline_is_reported_not_returned() {
        assert_eq!(all(b"abcdefghijk", 10, 4), vec![Line::TooLong]);
    }

    #[test]
    fn too_long_is_reported_before_the_newline_arrives() {
        let mut d = LineDecoder::new(4);
        d.feed(b"ok\nabcde");
        assert_eq!(d.next_line(), Some(complete("ok")));
        assert_eq!(d.next_line(), Some(Line::TooLong));
        assert!(d.has_partial(), "still inside the over-long line");
        d.feed(b"fgh");
        assert_eq!(d.next_line(), None);
        d.feed(b"\n");
        assert!(!d.has_partial());
        assert_eq!(d.next_line(), None, "the newline only ends the skipped line");
    }

    #[test]
    fn huge_line_is_skipped_with_bounded_memory() {
        let mut d = LineDecoder::new(1024);
        let chunk = vec![b'z'; 8192];
        for _ in 0..1280 {
            d.feed(&chunk);
            assert!(d.partial.capacity() <= 1024, "the skipped bytes never accumulate");
        }
        d.feed(b"\n{\"next\":1}\n");
        assert_eq!(d.next_line(), Some(Line::TooLong));
        assert_eq!(d.next_line(), Some(complete("{\"next\":1}")));
        assert_eq!(d.next_line(), None);
    }

    #[test]
    fn a_big_line_does_not_pin_its_buffer() {
        let mut d = LineDecoder::new(1 << 20);
        let mut big = vec![b'b'; 1 << 20];
        for piece in big.chunks(8192) {
            d.feed(piece);
        }
        assert!(d.partial.capacity() >= 1 << 20);
        big.clear();
        d.feed(b"\nsmall");
        assert!(matches!(d.next_line(), Some(Line::Complete(l)) if l.len() == 1 << 20));
        assert!(d.partial.capacity() <= 8192, "the big line's buffer left with it");
        assert_eq!(d.finish(), Some(complete("small")));
    }

    #[test]
    fn has_partial_tracks_the_current_line() {
        let mut d = LineDecoder::new(10);
        assert!(!d.has_partial());
        d.feed(b"{\"half\":");
        assert!(d.has_partial());
        d.feed(b"1}\n");
        assert!(!d.has_partial());
        assert_eq!(d.next_line(), Some(complete("{\"half\":1}")));
    }

    #[test]
    fn a_zero_bound_accepts_only_empty_lines() {
        assert_eq!(all(b"\nx\n\n", 0, 1), vec![complete(""), Line::TooLong, complete("")]);
    }

    proptest! {
        /// Random split points of a stream give the same lines as feeding it in one piece.
        #[test]
        fn split_points_do_not_matter(
            stream in prop::collection::vec(prop::sample::select(vec![b'a', b'\r', b'\n', 0xC3]), 0..200),
            cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..30),
            max in 0usize..12,
        ) {
            let whole = all(&stream, max, stream.len().max(1));
            let mut points: Vec<usize> = cuts.iter().map(|c| c.index(stream.len() + 1)).collect();
            points.push(0);
            points.push(stream.len());
            points.sort_unstable();
            let mut d = LineDecoder::new(max);
            let mut split = Vec::new();
            for w in points.windows(2) {
                d.feed(&stream[w[0]..w[1]]);
                split.extend(core::iter::from_fn(|| d.next_line()));
            }
            split.extend(d.finish());
            prop_assert_eq!(split, whole);
        }

        /// No complete line is ever over the bound.
        #[test]
        fn complete_lines_respect_the_bound(
            stream in prop::collection::vec(any::<u8>(), 0..300),
            max in 0usize..40,
        ) {
            for line in all(&stream, max, 17) {
                if let Line::Complete(l) = line {
                    prop_assert!(l.len() <= max && !l.contains(&b'\n'));
                }
            }
        }
    }
}
