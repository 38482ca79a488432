//! Errors of the strict parser and encoder: a stable kind and the byte offset where it was found.

use core::fmt;

/// What went wrong. The names returned by [`JsonErrorKind::as_str`] are part of the wire
/// contract (they appear as `data.reason` in protocol errors) and never change.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum JsonErrorKind {
    /// The bytes are not valid UTF-8 (overlong forms, encoded surrogates, truncated sequences).
    InvalidUtf8,
    /// The input ended inside a value.
    UnexpectedEnd,
    /// A byte that cannot start or continue a value here.
    UnexpectedByte,
    /// Non-whitespace after the top-level value.
    TrailingData,
    /// A backslash escape other than the eight of RFC 8259 and `\uXXXX`.
    InvalidEscape,
    /// A `\uD800`–`\uDFFF` escape that is not part of a high+low surrogate pair.
    LoneSurrogate,
    /// An unescaped control character (U+0000–U+001F) inside a string.
    ControlCharacter,
    /// A number outside the RFC 8259 grammar (leading zeros, `+`, `.5`, `1.`, `NaN`, …).
    InvalidNumber,
    /// The same key twice in one object, compared after unescaping.
    DuplicateKey,
    /// The message is longer than [`Limits::max_bytes`](super::Limits::max_bytes).
    TooLarge,
    /// Nesting deeper than [`Limits::max_depth`](super::Limits::max_depth).
    TooDeep,
    /// More values than [`Limits::max_values`](super::Limits::max_values).
    TooManyValues,
    /// More array elements or object members than
    /// [`Limits::max_members`](super::Limits::max_members).
    TooManyMembers,
    /// A decoded string longer than [`Limits::max_string_bytes`](super::Limits::max_string_bytes).
    StringTooLong,
}

impl JsonErrorKind {
    /// Stable machine-readable name, e.g. `"duplicate_key"`, `"depth"`, `"too_large"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            JsonErrorKind::InvalidUtf8 => "invalid_utf8",
            JsonErrorKind::UnexpectedEnd => "unexpected_end",
            JsonErrorKind::UnexpectedByte => "unexpected_byte",
            JsonErrorKind::TrailingData => "trailing_data",
            JsonErrorKind::InvalidEscape => "invalid_escape",
            JsonErrorKind::LoneSurrogate => "lone_surrogate",
            JsonErrorKind::ControlCharacter => "control_character",
            JsonErrorKind::InvalidNumber => "invalid_number",
            JsonErrorKind::DuplicateKey => "duplicate_key",
            JsonErrorKind::TooLarge => "too_large",
            JsonErrorKind::TooDeep => "depth",
            JsonErrorKind::TooManyValues => "too_many_values",
            JsonErrorKind::TooManyMembers => "too_many_members",
            JsonErrorKind::StringTooLong => "string_too_long",
        }
    }

    /// True for the five bounds of [`Limits`](crate::Limits) (as opposed to malformed input).
    pub const fn is_bound(self) -> bool {
        matches!(
            self,
            JsonErrorKind::TooLarge
                | JsonErrorKind::TooDeep
                | JsonErrorKind::TooManyValues
                | JsonErrorKind::TooManyMembers
                | JsonErrorKind::StringTooLong
        )
    }
}

/// A parse or encode failure: what ([`kind`](JsonError::kind)) and where
/// ([`offset`](JsonError::offset), a byte offset into the input; for the encoder, into the
/// output produced so far).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JsonError {
    kind: JsonErrorKind,
    offset: usize,
}

impl JsonError {
    /// Builds an error of `kind` found at byte `offset`.
    pub const fn new(kind: JsonErrorKind, offset: usize) -> Self {
        JsonError { kind, offset }
    }

    /// The stable kind.
    pub const fn kind(&self) -> JsonErrorKind {
        self.kind
    }

    /// Byte offset where the problem was detected.
    pub const fn offset(&self) -> usize {
        self.offset
    }
}

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self.kind {
            JsonErrorKind::InvalidUtf8 => "invalid UTF-8",
            JsonErrorKind::UnexpectedEnd => "unexpected end of input",
            JsonErrorKind::UnexpectedByte => "unexpected byte",
            JsonErrorKind::TrailingData => "trailing data after the value",
            JsonErrorKind::InvalidEscape => "invalid escape sequence",
            JsonErrorKind::LoneSurrogate => "lone surrogate in \\u escape",
            JsonErrorKind::ControlCharacter => "unescaped control character in string",
            JsonErrorKind::InvalidNumber => "invalid number",
            JsonErrorKind::DuplicateKey => "duplicate object key",
            JsonErrorKind::TooLarge => "message exceeds the size limit",
            JsonErrorKind::TooDeep => "nesting exceeds the depth limit",
            JsonErrorKind::TooManyValues => "message exceeds the value-count limit",
            JsonErrorKind::TooManyMembers => "container exceeds the member limit",
            JsonErrorKind::StringTooLong => "string exceeds the length limit",
        };
        write!(f, "{what} at byte {}", self.offset)
    }
}

#[cfg(feature = "std")]
impl std::error::Error for JsonError {}
