//! The property of the `frame_decode` fuzz target, shared with the corpus replay in
//! `proto/tests/fuzz_corpus.rs` so both check exactly the same thing: the frame decoder fed
//! in odd-sized chunks (at most 143 bytes), each frame body decoded as both message
//! directions. Nothing may panic, and the frames and verdict must be the same as when the
//! whole input is fed at once.

use jfgui_proto::channel::{AppMessage, DaemonMessage, FrameDecoder, FrameError, decode_message};
use jfgui_proto::{JsonError, Limits};

/// Small enough that the fuzzer can reach the limit.
const MAX_FRAME: usize = 4096;

/// Every frame the decoder yields, then its final verdict (an error, or how many bytes of a
/// partial frame are pending).
fn frames(data: &[u8], chunk_lens: impl Iterator<Item = usize>) -> (Vec<Vec<u8>>, String) {
    let mut decoder = FrameDecoder::new(MAX_FRAME);
    let mut out = Vec::new();
    let mut rest = data;
    for len in chunk_lens {
        if rest.is_empty() {
            break;
        }
        let (chunk, tail) = rest.split_at(len.min(rest.len()));
        rest = tail;
        decoder.feed(chunk);
        loop {
            match decoder.next_frame() {
                Ok(Some(body)) => out.push(body),
                Ok(None) => break,
                Err(e) => return (out, format!("error: {e}")),
            }
        }
    }
    (out, format!("partial: {}", decoder.has_partial()))
}

fn json_error<T>(result: &Result<T, FrameError>) -> Option<JsonError> {
    match result {
        Err(FrameError::Json(e)) => Some(*e),
        _ => None,
    }
}

/// See the module docs.
pub fn check(data: &[u8]) {
    // Chunk sizes from the input's first byte: odd lengths from 1 to 143.
    let seed = usize::from(data.first().copied().unwrap_or(0));
    let chunks = (0..).map(|i: usize| 1 + 2 * ((seed + 7 * i) % 72));
    let (chunked, chunked_verdict) = frames(data, chunks);
    let (whole, whole_verdict) = frames(data, std::iter::once(data.len().max(1)));
    assert_eq!(chunked, whole, "frames depend on how the bytes were chunked");
    assert_eq!(chunked_verdict, whole_verdict);
    let limits = Limits::DEFAULT;
    for body in &chunked {
        assert!(body.len() <= MAX_FRAME);
        let app = decode_message::<AppMessage>(body, &limits);
        let daemon = decode_message::<DaemonMessage>(body, &limits);
        // Both directions run the same strict parse first, so they agree on JSON errors.
        assert_eq!(json_error(&app), json_error(&daemon));
    }
}
