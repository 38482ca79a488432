//! The property of the `line_decode` fuzz target, shared with the corpus replay in
//! `proto/tests/fuzz_corpus.rs` so both check exactly the same thing.

use jfgui_proto::{Line, LineDecoder};

/// Small enough that the fuzzer reaches the bound often.
pub const MAX_LINE: usize = 64;

/// Every item the decoder yields when `data` is fed in pieces of `chunk_lens`, then what
/// `finish` yields at end of stream.
pub fn lines(data: &[u8], chunk_lens: impl Iterator<Item = usize>) -> Vec<Line> {
    let mut decoder = LineDecoder::new(MAX_LINE);
    let mut out = Vec::new();
    let mut rest = data;
    for len in chunk_lens {
        if rest.is_empty() {
            break;
        }
        let (chunk, tail) = rest.split_at(len.min(rest.len()));
        rest = tail;
        decoder.feed(chunk);
        out.extend(std::iter::from_fn(|| decoder.next_line()));
    }
    out.extend(decoder.finish());
    assert!(!decoder.has_partial(), "finish leaves nothing behind");
    out
}

/// Feeding `data` in odd-sized chunks (1 to 143 bytes, chosen by its first byte) yields the
/// same lines as feeding it at once, and no complete line is over the bound or holds a newline.
pub fn check(data: &[u8]) {
    let seed = usize::from(data.first().copied().unwrap_or(0));
    let chunked = lines(data, (0..).map(|i: usize| 1 + 2 * ((seed + 7 * i) % 72)));
    let whole = lines(data, std::iter::once(data.len().max(1)));
    assert_eq!(chunked, whole, "lines depend on how the bytes were chunked");
    for line in &whole {
        if let Line::Complete(bytes) = line {
            assert!(bytes.len() <= MAX_LINE, "a complete line of {} bytes", bytes.len());
            assert!(!bytes.contains(&b'\n'), "a complete line holds a newline");
        }
    }
}
