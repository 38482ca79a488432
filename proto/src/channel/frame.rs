//! The sans-IO frame codec: feed bytes in, take whole frames out; encode a message once into
//! header + body.

use alloc::vec::Vec;
use core::fmt;

use crate::{DecodeError, JsonError, Limits};

/// Size of the length header: a `u32`, big-endian.
pub const HEADER_LEN: usize = 4;

/// Buffer capacity a [`FrameDecoder`] keeps once every frame in it was taken; more is freed.
const RETAINED_CAPACITY: usize = 64 * 1024;

/// Why a frame could not be read or written.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FrameError {
    /// A length header over the limit; raised on the header alone, before any body byte is
    /// buffered. The connection cannot be resynchronised and must be dropped.
    TooLarge {
        /// The announced length.
        announced: u64,
        /// The limit.
        limit: usize,
    },
    /// A length header of zero: a frame always holds one JSON object, so an empty one is a
    /// broken peer. Like [`FrameError::TooLarge`], the stream cannot be resynchronised.
    Empty,
    /// The body is not strict JSON within the limits.
    Json(JsonError),
    /// The body is JSON but not a valid message (unknown field, wrong type, ...), or (when
    /// encoding) the message has a shape JSON cannot hold.
    Message(DecodeError),
}

impl fmt::Display for FrameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FrameError::TooLarge { announced, limit } => {
                write!(f, "frame of {announced} bytes exceeds the limit of {limit} bytes")
            }
            FrameError::Empty => {
                f.write_str("frame of length zero (a frame holds one JSON object)")
            }
            FrameError::Json(e) => write!(f, "frame body: {e}"),
            FrameError::Message(e) => write!(f, "frame message: {e}"),
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for FrameError {}

/// Splits a byte stream into frame bodies (sans-IO: the caller reads the transport).
///
/// Feed whatever the transport delivered, then call [`FrameDecoder::next_frame`] until it
/// answers `Ok(None)`. The decoder holds at most one partial frame (never more than the limit,
/// because an over-limit header is refused before its body is kept) plus the unread rest of the
/// last feed. Consumed bytes are skipped with an offset and the buffer is compacted on the next
/// feed, so many small frames cost linear time.
///
/// After [`FrameError::TooLarge`] or [`FrameError::Empty`] the stream has no frame boundary any
/// more: the decoder drops its buffer, ignores further input and repeats the error.
#[derive(Debug)]
pub struct FrameDecoder {
    max_frame: usize,
    buf: Vec<u8>,
    /// Start of the unconsumed bytes in `buf`.
    start: usize,
    failed: Option<FrameError>,
}

impl FrameDecoder {
    /// A decoder accepting bodies of at most `max_frame` bytes.
    pub fn new(max_frame: usize) -> Self {
        FrameDecoder { max_frame, buf: Vec::new(), start: 0, failed: None }
    }

    /// Appends bytes read from the transport.
    pub fn feed(&mut self, bytes: &[u8]) {
        if self.failed.is_some() || bytes.is_empty() {
            return;
        }
        if self.start > 0 {
            self.buf.drain(..self.start);
            self.start = 0;
        }
        self.buf.extend_from_slice(bytes);
    }

    /// The next complete frame body, `Ok(None)` when more bytes are needed, or an error as soon
    /// as a header is seen that announces more than the limit ([`FrameError::TooLarge`]) or
    /// nothing ([`FrameError::Empty`]). The errors are final (see the type docs).
    pub fn next_frame(&mut self) -> Result<Option<Vec<u8>>, FrameError> {
        Ok(self.next_body()?.map(<[u8]>::to_vec))
    }

    /// [`FrameDecoder::next_frame`] without the copy: the body is borrowed from the decoder's
    /// buffer until the next call.
    pub fn next_body(&mut self) -> Result<Option<&[u8]>, FrameError> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        if self.start == self.buf.len() && self.start > 0 {
            // Everything taken: the room of a large frame is given back rather than kept by an
            // idle connection (an app's registration pages would otherwise stay with it).
            self.start = 0;
            if self.buf.capacity() > RETAINED_CAPACITY {
                self.buf = Vec::new();
            } else {
                self.buf.clear();
            }
        }
        let pending = &self.buf[self.start..];
        let Some(header) = pending.first_chunk::<HEADER_LEN>() else {
            return Ok(None);
        };
        let announced = u32::from_be_bytes(*header);
        let len = announced as usize;
        if announced == 0 {
            return Err(self.fail(FrameError::Empty));
        }
        if u64::from(announced) > self.max_frame as u64 {
            let limit = self.max_frame;
            return Err(self.fail(FrameError::TooLarge { announced: u64::from(announced), limit }));
        }
        if pending.len() < HEADER_LEN + len {
            return Ok(None);
        }
        // The consumed bytes stay until the next feed compacts the buffer.
        let body = self.start + HEADER_LEN;
        self.start = body + len;
        Ok(Some(&self.buf[body..self.start]))
    }

    /// True when a frame has been started but not completed (for idle-partial deadlines).
    pub fn has_partial(&self) -> bool {
        self.failed.is_none() && self.start < self.buf.len()
    }

    /// Bytes received and not yet returned as frames (for a budget of buffered input).
    pub fn buffered_len(&self) -> usize {
        self.buf.len() - self.start
    }

    fn fail(&mut self, error: FrameError) -> FrameError {
        self.buf = Vec::new();
        self.start = 0;
        self.failed = Some(error.clone());
        error
    }
}

/// Encodes `message` once into a complete frame: the body is encoded straight after a
/// placeholder header in one buffer, checked against `limits` (while encoding) and `max_frame`,
/// and the header is filled in last. Nothing is copied.
pub fn encode_frame<T: serde::Serialize>(
    message: &T,
    limits: &Limits,
    max_frame: usize,
) -> Result<Vec<u8>, FrameError> {
    let value = crate::to_value(message).map_err(FrameError::Message)?;
    encode_value_frame(&value, limits, max_frame)
}

/// [`encode_frame`] of a message already mapped to its value.
pub(super) fn encode_value_frame(
    value: &(impl crate::Encode + ?Sized),
    limits: &Limits,
    max_frame: usize,
) -> Result<Vec<u8>, FrameError> {
    let mut frame = Vec::with_capacity(256);
    frame.extend_from_slice(&[0; HEADER_LEN]);
    crate::encode_into(value, limits, &mut frame).map_err(FrameError::Json)?;
    let len = frame.len() - HEADER_LEN;
    match u32::try_from(len) {
        Ok(announced) if len <= max_frame => {
            frame[..HEADER_LEN].copy_from_slice(&announced.to_be_bytes());
            Ok(frame)
        }
        _ => Err(FrameError::TooLarge { announced: len as u64, limit: max_frame }),
    }
}

/// Decodes one frame body into a typed message (strict parse, then typed mapping that rejects
/// unknown fields).
pub fn decode_message<T: serde::de::DeserializeOwned>(
    body: &[u8],
    limits: &Limits,
) -> Result<T, FrameError> {
    let value = crate::parse(body, limits).map_err(FrameError::Json)?;
    crate::from_value(value).map_err(FrameError::Message)
}

#[cfg(test)]
mod tests {
    use alloc::vec;

    use proptest::prelude::*;

    use super::*;

    fn frame(body: &[u8]) -> Vec<u8> {
        let mut f = (body.len() as u32).to_be_bytes().to_vec();
        f.extend_from_slice(body);
        f
    }

    fn drain(d: &mut FrameDecoder, out: &mut Vec<Vec<u8>>) -> Result<(), FrameError> {
        while let Some(body) = d.next_frame()? {
            out.push(body);
        }
        Ok(())
    }

    #[test]
    fn frames_come_out_whole_and_in_order() {
        let mut d = FrameDecoder::new(16);
        let mut stream = frame(b"{}");
        stream.extend(frame(b"[1,2]"));
        stream.extend(&frame(b"abc")[..5]);
        d.feed(&stream);
        assert_eq!(d.next_frame(), Ok(Some(b"{}".to_vec())));
        assert_eq!(d.next_frame(), Ok(Some(b"[1,2]".to_vec())));
        assert_eq!(d.next_frame(), Ok(None));
        assert!(d.has_partial());
        d.feed(b"bc");
        assert_eq!(d.next_frame(), Ok(Some(b"abc".to_vec())));
        assert_eq!(d.next_frame(), Ok(None));
        assert!(!d.has_partial());
    }

    #[test]
    fn a_partial_header_is_a_partial_frame() {
        let mut d = FrameDecoder::new(16);
        assert!(!d.has_partial());
        d.feed(&[0, 0]);
        assert_eq!(d.next_frame(), Ok(None));
        assert!(d.has_partial());
    }

    #[test]
    fn limit_is_inclusive() {
        let mut d = FrameDecoder::new(4);
        d.feed(&frame(b"1234"));
        assert_eq!(d.next_frame(), Ok(Some(b"1234".to_vec())));
        d.feed(&frame(b"12345"));
        assert_eq!(d.next_frame(), Err(FrameError::TooLarge { announced: 5, limit: 4 }));
    }

    #[test]
    fn an_oversize_header_fails_before_any_body_byte() {
        let mut d = FrameDecoder::new(crate::channel::DEFAULT_MAX_FRAME);
        d.feed(&[0xFF, 0xFF, 0xFF, 0xFF]);
        let err = FrameError::TooLarge {
            announced: 0xFFFF_FFFF,
            limit: crate::channel::DEFAULT_MAX_FRAME,
        };
        assert_eq!(d.next_frame(), Err(err.clone()));
        // Final: the body that follows is not even kept.
        d.feed(&vec![b'x'; 1 << 16]);
        assert_eq!(d.buf.capacity(), 0);
        assert_eq!(d.next_frame(), Err(err));
        assert!(!d.has_partial());
    }

    #[test]
    fn zero_length_frames_are_refused() {
        let mut d = FrameDecoder::new(16);
        d.feed(&frame(b"{}"));
        d.feed(&[0, 0, 0, 0]);
        d.feed(&frame(b"{}"));
        assert_eq!(d.next_frame(), Ok(Some(b"{}".to_vec())));
        assert_eq!(d.next_frame(), Err(FrameError::Empty));
        assert_eq!(d.next_frame(), Err(FrameError::Empty));
    }

    #[test]
    fn many_small_frames_reuse_one_buffer() {
        let mut d = FrameDecoder::new(16);
        let mut stream = Vec::new();
        for i in 0..1000u32 {
            stream.extend(frame(&i.to_be_bytes()));
        }
        let mut out = Vec::new();
        for chunk in stream.chunks(7) {
            d.feed(chunk);
            drain(&mut d, &mut out).unwrap();
            assert!(d.buf.len() < 16, "only a partial frame stays buffered");
        }
        assert_eq!(out.len(), 1000);
        assert!(out.iter().enumerate().all(|(i, b)| b[..] == (i as u32).to_be_bytes()));
    }

    #[test]
    fn the_room_of_a_large_frame_is_given_back_once_it_is_taken() {
        let mut d = FrameDecoder::new(1 << 20);
        let big = vec![b'x'; 256 * 1024];
        d.feed(&frame(&big));
        assert_eq!(d.next_frame(), Ok(Some(big)));
        assert_eq!(d.next_frame(), Ok(None));
        assert_eq!(d.buf.capacity(), 0);
        // A small frame's room stays for the next one.
        d.feed(&frame(b"{}"));
        assert_eq!(d.next_frame(), Ok(Some(b"{}".to_vec())));
        assert_eq!(d.next_frame(), Ok(None));
        assert!(d.buf.capacity() > 0 && d.buf.is_empty());
    }

    proptest! {
        /// Random split points of a stream give the same frames, and the same final error, as
        /// feeding it in one piece.
        #[test]
        fn split_points_do_not_matter(
            bodies in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..40), 0..20),
            tail in prop::collection::vec(any::<u8>(), 0..8),
            cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..30),
        ) {
            let mut stream = Vec::new();
            for b in &bodies {
                stream.extend(frame(b));
            }
            stream.extend(&tail);

            let mut whole = FrameDecoder::new(32);
            let mut expected = Vec::new();
            whole.feed(&stream);
            let expected_end = drain(&mut whole, &mut expected);

            let mut points: Vec<usize> = cuts.iter().map(|c| c.index(stream.len() + 1)).collect();
            points.push(0);
            points.push(stream.len());
            points.sort_unstable();
            let mut split = FrameDecoder::new(32);
            let mut got = Vec::new();
            let mut end = Ok(());
            for w in points.windows(2) {
                split.feed(&stream[w[0]..w[1]]);
                end = drain(&mut split, &mut got);
                if end.is_err() {
                    break;
                }
            }
            prop_assert_eq!(got, expected);
            prop_assert_eq!(end, expected_end);
            prop_assert_eq!(split.has_partial(), whole.has_partial());
        }

        /// Arbitrary bytes never panic and never yield a frame over the limit.
        #[test]
        fn arbitrary_bytes_are_safe(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
            let mut d = FrameDecoder::new(64);
            d.feed(&bytes);
            while let Ok(Some(body)) = d.next_frame() {
                prop_assert!(!body.is_empty() && body.len() <= 64);
            }
        }
    }
}
