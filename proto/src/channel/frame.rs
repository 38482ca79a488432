//! The sans-IO frame codec: feed bytes in, take whole frames out; encode a message once into
//! header + body.

use alloc::vec::Vec;
use core::fmt;

use crate::{DecodeError, JsonError, Limits};

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
    /// The body is not strict JSON within the limits.
    Json(JsonError),
    /// The body is JSON but not a valid message (unknown field, wrong type, ...).
    Message(DecodeError),
}

impl fmt::Display for FrameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FrameError::TooLarge { announced, limit } => {
                write!(f, "frame of {announced} bytes exceeds the limit of {limit} bytes")
            }
            FrameError::Json(e) => write!(f, "frame body: {e}"),
            FrameError::Message(e) => write!(f, "frame message: {e}"),
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for FrameError {}

/// Splits a byte stream into frame bodies. Holds at most one partial frame (≤ the limit) plus
/// whatever the caller fed beyond it.
#[derive(Debug)]
pub struct FrameDecoder {
    max_frame: usize,
    buf: Vec<u8>,
}

impl FrameDecoder {
    /// A decoder accepting bodies of at most `max_frame` bytes.
    pub fn new(max_frame: usize) -> Self {
        FrameDecoder { max_frame, buf: Vec::new() }
    }

    /// Appends bytes read from the transport.
    pub fn feed(&mut self, bytes: &[u8]) {
        let _ = bytes;
        todo!("frame decoder")
    }

    /// The next complete frame body, `Ok(None)` when more bytes are needed, or
    /// [`FrameError::TooLarge`] as soon as a header over the limit is seen.
    pub fn next_frame(&mut self) -> Result<Option<Vec<u8>>, FrameError> {
        todo!("frame decoder")
    }

    /// True when a frame has been started but not completed (for idle-partial deadlines).
    pub fn has_partial(&self) -> bool {
        !self.buf.is_empty()
    }
}

/// Encodes `message` once into a complete frame (header + strict JSON body), checking the body
/// against `limits` and `max_frame`.
pub fn encode_frame<T: serde::Serialize>(
    message: &T,
    limits: &Limits,
    max_frame: usize,
) -> Result<Vec<u8>, FrameError> {
    let _ = (message, limits, max_frame);
    todo!("frame encoder")
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
