//! The encoder: compact output, no literal line breaks, the same bounds as the parser.

use alloc::vec::Vec;

use super::{JsonError, Limits, Value};

/// Encodes `value` compactly. Fails (with [`JsonErrorKind`](super::JsonErrorKind) naming the
/// bound) if the output would break any of `limits`, so whatever we send, the peer's parser
/// with the same limits accepts. Strings are escaped so the output never contains a literal
/// line break (U+2028/U+2029 are escaped too, for JavaScript readers).
pub fn encode(value: &Value, limits: &Limits) -> Result<Vec<u8>, JsonError> {
    let mut out = Vec::new();
    encode_into(value, limits, &mut out)?;
    Ok(out)
}

/// Appends the encoding of `value` to `out` (see [`encode`]). On error `out` is restored to its
/// length before the call.
pub fn encode_into(value: &Value, limits: &Limits, out: &mut Vec<u8>) -> Result<(), JsonError> {
    let _ = (value, limits, out);
    todo!("strict encoder")
}
