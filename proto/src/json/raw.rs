//! Pre-encoded JSON fragments: a value encoded once by [`encode`](super::encode)'s rules and
//! then written verbatim wherever it is placed inside a larger document ([`Value::Raw`]).
//!
//! A fragment can only be made by this crate's encoder, so its bytes are strict JSON with no
//! literal line break, exactly what encoding the value again would produce. It remembers its
//! shape (nesting depth, value count, widest container, longest string), so the encoder that
//! splices it enforces every bound of [`Limits`] on the whole document exactly as if the
//! value's tree were encoded in its place, at the cost of a few comparisons and one copy.
//!
//! A document's *text form* ([`RawJson::text_of`]) is its encoding as a JSON string (MCP's
//! text twin of structured content). With `std`, a fragment keeps its own escaped form after
//! the first time it is needed, so the text form of a document holding a large fragment costs
//! one copy of that form, not escaping the fragment again on every use.

use alloc::sync::Arc;
use alloc::vec::Vec;
use core::fmt;

use super::encode::encode_shaped;
use super::parse::parse_raw;
use super::{JsonError, JsonErrorKind, Limits, Value, encode_into, parse};

/// What the bounds of [`Limits`] need to know about an encoded value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Shape {
    /// Containers open at once at the deepest point (0 for a scalar).
    pub(crate) depth: usize,
    /// Values in all, the fragment's own included.
    pub(crate) values: usize,
    /// Members of its widest array or object.
    pub(crate) members: usize,
    /// Decoded length of its longest string or key.
    pub(crate) string_bytes: usize,
}

impl Shape {
    /// The shape of a document holding both `self` and `other` at `open` containers deep.
    pub(super) fn absorb(&mut self, open: usize, other: &Shape) {
        self.depth = self.depth.max(open + other.depth);
        self.members = self.members.max(other.members);
        self.string_bytes = self.string_bytes.max(other.string_bytes);
    }
}

/// An encoded JSON value, cheap to clone (shared bytes). See the module docs.
#[derive(Clone, PartialEq, Eq)]
pub struct RawJson(Arc<Inner>);

struct Inner {
    shape: Shape,
    bytes: Vec<u8>,
    /// `bytes` escaped as the contents of a JSON string, made on first use by
    /// [`RawJson::text_of`]; at most twice `bytes` (see `escape_into`).
    #[cfg(feature = "std")]
    escaped: std::sync::OnceLock<Vec<u8>>,
}

/// Fragments are equal when their values are (the escaped form is only a cache).
impl PartialEq for Inner {
    fn eq(&self, other: &Inner) -> bool {
        self.shape == other.shape && self.bytes == other.bytes
    }
}

impl Eq for Inner {}

impl RawJson {
    /// Encodes `value` once (see [`encode`](super::encode)); fails like it if the fragment on
    /// its own breaks `limits`. Whether it fits where it is later placed is checked there.
    pub fn encode(value: &Value, limits: &Limits) -> Result<RawJson, JsonError> {
        let mut bytes = Vec::new();
        let shape = encode_shaped(value, limits, &mut bytes)?;
        bytes.shrink_to_fit();
        Ok(RawJson::from_encoded(shape, bytes))
    }

    /// Parses `input` strictly as one value within `limits` (as [`parse`] does) and keeps it
    /// as a fragment, without building its tree: bytes already in the encoder's form are
    /// copied, anything else is written in it.
    pub fn parse(input: &[u8], limits: &Limits) -> Result<RawJson, JsonError> {
        parse_raw(input, limits)
    }

    /// A fragment from bytes the caller wrote in the encoder's exact form, with their shape.
    pub(super) fn from_encoded(shape: Shape, bytes: Vec<u8>) -> RawJson {
        RawJson(Arc::new(Inner {
            shape,
            bytes,
            #[cfg(feature = "std")]
            escaped: std::sync::OnceLock::new(),
        }))
    }

    /// The text form of `value`: its encoding (see [`encode`](super::encode)) as a JSON string,
    /// `"…"`, as a fragment. The bytes equal encoding `value`, taking that as a string and
    /// encoding it again; fragments inside `value` are not escaped again but copied in their
    /// kept escaped form (see the module docs).
    ///
    /// Only the nesting is checked here (`limits.max_depth`, which bounds the walk); the other
    /// bounds hold or fail where the text is placed, exactly as they would for the string: its
    /// length is the whole encoding's.
    pub fn text_of(value: &Value, limits: &Limits) -> Result<RawJson, JsonError> {
        let mut text = TextForm { out: Vec::from(*b"\""), plain_len: 0, scratch: Vec::new() };
        text.value(value, 0, limits)?;
        text.out.push(b'"');
        let shape = Shape { depth: 0, values: 1, members: 0, string_bytes: text.plain_len };
        Ok(RawJson::from_encoded(shape, text.out))
    }

    /// Appends this fragment's escaped form (the contents of its text form).
    fn push_escaped(&self, out: &mut Vec<u8>) {
        #[cfg(feature = "std")]
        out.extend_from_slice(self.0.escaped.get_or_init(|| {
            let mut escaped = Vec::new();
            escape_into(self.as_bytes(), &mut escaped);
            escaped.shrink_to_fit();
            escaped
        }));
        #[cfg(not(feature = "std"))]
        escape_into(self.as_bytes(), out);
    }

    /// The encoded bytes: compact strict JSON, no line break.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0.bytes
    }

    pub(crate) fn shape(&self) -> &Shape {
        &self.0.shape
    }

    /// The value as a tree again (for typed decoding of a document that holds a fragment).
    pub fn to_value(&self) -> Value {
        let shape = self.shape();
        // Exactly the bounds the fragment has, so this parse of our own encoder's output
        // cannot fail.
        let limits = Limits {
            max_bytes: self.as_bytes().len(),
            max_depth: shape.depth,
            max_values: shape.values,
            max_members: shape.members,
            max_string_bytes: shape.string_bytes,
        };
        parse(self.as_bytes(), &limits).expect("a fragment is strict JSON within its own shape")
    }

    /// The JSON type name of the fragment's value, as [`Value::type_name`].
    pub fn type_name(&self) -> &'static str {
        match self.as_bytes().first() {
            Some(b'{') => "object",
            Some(b'[') => "array",
            Some(b'"') => "string",
            Some(b't' | b'f') => "boolean",
            Some(b'n') => "null",
            _ => "number",
        }
    }
}

/// Builds a text form: the escaped encoding, walked in the encoder's order.
struct TextForm {
    out: Vec<u8>,
    /// Length of the encoding (the string's decoded length).
    plain_len: usize,
    /// One scalar's or key's encoding.
    scratch: Vec<u8>,
}

impl TextForm {
    fn value(&mut self, value: &Value, open: usize, limits: &Limits) -> Result<(), JsonError> {
        match value {
            Value::Raw(raw) => {
                if open + raw.shape().depth > limits.max_depth {
                    return Err(JsonError::new(JsonErrorKind::TooDeep, self.plain_len));
                }
                raw.push_escaped(&mut self.out);
                self.plain_len += raw.as_bytes().len();
            }
            Value::Array(items) => {
                self.open(open, limits)?;
                self.punct(b'[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        self.punct(b',');
                    }
                    self.value(item, open + 1, limits)?;
                }
                self.punct(b']');
            }
            Value::Object(map) => {
                self.open(open, limits)?;
                self.punct(b'{');
                for (i, (key, item)) in map.entries().iter().enumerate() {
                    if i > 0 {
                        self.punct(b',');
                    }
                    self.scalar(&Value::String(key.clone()))?;
                    self.punct(b':');
                    self.value(item, open + 1, limits)?;
                }
                self.punct(b'}');
            }
            scalar => self.scalar(scalar)?,
        }
        Ok(())
    }

    fn open(&self, open: usize, limits: &Limits) -> Result<(), JsonError> {
        if open >= limits.max_depth {
            return Err(JsonError::new(JsonErrorKind::TooDeep, self.plain_len));
        }
        Ok(())
    }

    /// Brackets, commas and colons need no escaping.
    fn punct(&mut self, b: u8) {
        self.out.push(b);
        self.plain_len += 1;
    }

    fn scalar(&mut self, scalar: &Value) -> Result<(), JsonError> {
        self.scratch.clear();
        encode_into(scalar, &UNBOUNDED, &mut self.scratch)?;
        self.plain_len += self.scratch.len();
        escape_into(&self.scratch, &mut self.out);
        Ok(())
    }
}

/// No bounds: a scalar of a value in memory; the bounds are checked where the text is placed.
const UNBOUNDED: Limits = Limits {
    max_bytes: usize::MAX,
    max_depth: usize::MAX,
    max_values: usize::MAX,
    max_members: usize::MAX,
    max_string_bytes: usize::MAX,
};

/// Appends `encoded`, our encoder's output, escaped as the contents of a JSON string. That
/// output holds no control character and no literal line separator (the encoder escapes them),
/// so of the encoder's string rule only `"` and `\` apply.
fn escape_into(encoded: &[u8], out: &mut Vec<u8>) {
    out.reserve(encoded.len());
    let mut rest = encoded;
    while let Some(i) = rest.iter().position(|&b| b == b'"' || b == b'\\') {
        out.extend_from_slice(&rest[..i]);
        out.extend_from_slice(&[b'\\', rest[i]]);
        rest = &rest[i + 1..];
    }
    out.extend_from_slice(rest);
}

impl fmt::Debug for RawJson {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Our encoder's output is always UTF-8.
        f.debug_tuple("RawJson").field(&core::str::from_utf8(self.as_bytes())).finish()
    }
}

#[cfg(test)]
mod tests {
    use alloc::string::String;
    use alloc::vec;

    use super::*;
    use crate::{JsonErrorKind, Map, encode, encode_into};

    fn sample() -> Value {
        let mut m = Map::new();
        m.insert("name", "doc.get");
        m.insert("line\n", vec![Value::from(1u64), Value::Array(vec![Value::Null])]);
        m.insert("s", "\u{2028}é");
        m.into()
    }

    #[test]
    fn spliced_bytes_equal_encoding_the_tree() {
        let raw = RawJson::encode(&sample(), &Limits::DEFAULT).unwrap();
        assert_eq!(raw.as_bytes(), encode(&sample(), &Limits::DEFAULT).unwrap());
        assert_eq!(raw.to_value(), sample());
        assert_eq!(raw.type_name(), "object");
        let mut outer = Map::new();
        outer.insert("a", Value::Raw(raw.clone()));
        outer.insert("b", vec![Value::Raw(raw)]);
        let mut tree = Map::new();
        tree.insert("a", sample());
        tree.insert("b", vec![sample()]);
        assert_eq!(
            encode(&outer.into(), &Limits::DEFAULT).unwrap(),
            encode(&tree.into(), &Limits::DEFAULT).unwrap()
        );
    }

    /// Every bound fails on the spliced document exactly when it fails on the tree.
    #[test]
    fn bounds_hold_on_the_whole_document() {
        let raw = RawJson::encode(&sample(), &Limits::DEFAULT).unwrap();
        let tree_len = encode(&sample(), &Limits::DEFAULT).unwrap().len();
        let wrapped = |v: Value| Value::Array(vec![Value::Array(vec![v])]);
        let kind = |v: &Value, limits: Limits| {
            let mut out = String::from("x").into_bytes();
            let e = encode_into(v, &limits, &mut out).err().map(|e| e.kind());
            assert!(e.is_none() || out == b"x", "restored on error");
            e
        };
        let d = Limits::DEFAULT;
        let cases = [
            // Depth: two wrapping arrays + the object + its two nested arrays.
            (Limits { max_depth: 5, ..d }, None),
            (Limits { max_depth: 4, ..d }, Some(JsonErrorKind::TooDeep)),
            // Values: two wrappers + the object + its 3 member values + `1`, `[null]`, `null`.
            (Limits { max_values: 9, ..d }, None),
            (Limits { max_values: 8, ..d }, Some(JsonErrorKind::TooManyValues)),
            (Limits { max_members: 3, ..d }, None),
            (Limits { max_members: 2, ..d }, Some(JsonErrorKind::TooManyMembers)),
            // The longest string is `doc.get`.
            (Limits { max_string_bytes: 7, ..d }, None),
            (Limits { max_string_bytes: 6, ..d }, Some(JsonErrorKind::StringTooLong)),
            (Limits { max_bytes: tree_len + 4, ..d }, None),
            (Limits { max_bytes: tree_len + 3, ..d }, Some(JsonErrorKind::TooLarge)),
        ];
        for (limits, expected) in cases {
            assert_eq!(kind(&wrapped(sample()), limits), expected, "tree, {limits:?}");
            assert_eq!(kind(&wrapped(Value::Raw(raw.clone())), limits), expected, "{limits:?}");
        }
    }

    #[test]
    fn typed_decoding_sees_the_tree() {
        let raw = RawJson::encode(&sample(), &Limits::DEFAULT).unwrap();
        assert_eq!(crate::from_value::<Value>(Value::Raw(raw.clone())).unwrap(), sample());
        #[derive(serde::Deserialize)]
        struct Named {
            name: String,
        }
        let mut outer = Map::new();
        outer.insert("name", "x");
        let named = RawJson::encode(&outer.into(), &Limits::DEFAULT).unwrap();
        let decoded: Vec<Named> = crate::from_value(Value::Array(vec![Value::Raw(named)])).unwrap();
        assert_eq!(decoded[0].name, "x");
        let e = crate::from_value::<Vec<u8>>(Value::Raw(raw)).unwrap_err();
        assert!(e.message().contains("map"), "{e}");
    }

    #[test]
    fn a_fragment_within_a_fragment_keeps_its_shape() {
        let inner = RawJson::encode(&sample(), &Limits::DEFAULT).unwrap();
        let outer = RawJson::encode(&vec![Value::Raw(inner)].into(), &Limits::DEFAULT).unwrap();
        let direct = RawJson::encode(&vec![sample()].into(), &Limits::DEFAULT).unwrap();
        assert_eq!(outer, direct);
    }

    /// The text form is the encoding, encoded again as a string, with or without fragments
    /// inside (and the second time from the fragment's kept escaped form).
    #[test]
    fn the_text_form_is_the_encoding_as_a_string() {
        let twice = |v: &Value| {
            let plain = String::from_utf8(encode(v, &Limits::DEFAULT).unwrap()).unwrap();
            (encode(&Value::String(plain.clone()), &Limits::DEFAULT).unwrap(), plain.len())
        };
        let raw = RawJson::encode(&sample(), &Limits::DEFAULT).unwrap();
        let mut holder = Map::new();
        holder.insert("a\"\\", Value::Raw(raw.clone()));
        holder.insert("b", vec![Value::Raw(raw.clone()), "x\"y\u{2028}\n".into(), Value::Null]);
        let cases = [sample(), Value::Raw(raw.clone()), holder.clone().into(), "s".into()];
        for value in cases.iter().chain(&cases) {
            let text = RawJson::text_of(value, &Limits::DEFAULT).unwrap();
            let (expected, plain_len) = twice(value);
            assert_eq!(text.as_bytes(), expected, "{value:?}");
            assert_eq!(text.type_name(), "string");
            assert_eq!(text.shape().string_bytes, plain_len);
            assert_eq!(text.to_value(), parse(&expected, &Limits::DEFAULT).unwrap());
        }
        // Where it is placed, the string's length is bounded like any string's.
        let text = RawJson::text_of(&holder.into(), &Limits::DEFAULT).unwrap();
        let len = text.shape().string_bytes;
        let tight = Limits { max_string_bytes: len - 1, ..Limits::DEFAULT };
        let e = encode(&vec![Value::Raw(text)].into(), &tight).unwrap_err();
        assert_eq!(e.kind(), JsonErrorKind::StringTooLong);
    }

    #[test]
    fn the_text_form_bounds_the_nesting() {
        let raw = RawJson::encode(&sample(), &Limits::DEFAULT).unwrap();
        let limits = |max_depth| Limits { max_depth, ..Limits::DEFAULT };
        let wrapped = Value::Array(vec![Value::Raw(raw)]);
        assert!(RawJson::text_of(&wrapped, &limits(4)).is_ok());
        let e = RawJson::text_of(&wrapped, &limits(3)).unwrap_err();
        assert_eq!(e.kind(), JsonErrorKind::TooDeep);
        let nested = Value::Array(vec![Value::Array(vec![Value::Null])]);
        assert!(RawJson::text_of(&nested, &limits(2)).is_ok());
        let e = RawJson::text_of(&nested, &limits(1)).unwrap_err();
        assert_eq!(e.kind(), JsonErrorKind::TooDeep);
    }

    #[test]
    fn making_a_fragment_checks_its_own_bounds() {
        let limits = Limits { max_depth: 1, ..Limits::DEFAULT };
        assert_eq!(RawJson::encode(&sample(), &limits).unwrap_err().kind(), JsonErrorKind::TooDeep);
    }
}
