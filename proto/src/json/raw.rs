//! Pre-encoded JSON fragments: a value encoded once by [`encode`](super::encode)'s rules and
//! then written verbatim wherever it is placed inside a larger document ([`Value::Raw`]).
//!
//! A fragment can only be made by this crate's encoder, so its bytes are strict JSON with no
//! literal line break, exactly what encoding the value again would produce. It remembers its
//! shape (nesting depth, value count, widest container, longest string), so the encoder that
//! splices it enforces every bound of [`Limits`] on the whole document exactly as if the
//! value's tree were encoded in its place, at the cost of a few comparisons and one copy.

use alloc::sync::Arc;
use alloc::vec::Vec;
use core::fmt;

use super::encode::encode_shaped;
use super::parse::parse_raw;
use super::{JsonError, Limits, Value, parse};

/// What the bounds of [`Limits`] need to know about an encoded value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) struct Shape {
    /// Containers open at once at the deepest point (0 for a scalar).
    pub(super) depth: usize,
    /// Values in all, the fragment's own included.
    pub(super) values: usize,
    /// Members of its widest array or object.
    pub(super) members: usize,
    /// Decoded length of its longest string or key.
    pub(super) string_bytes: usize,
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

#[derive(PartialEq, Eq)]
struct Inner {
    shape: Shape,
    bytes: Vec<u8>,
}

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
        RawJson(Arc::new(Inner { shape, bytes }))
    }

    /// The encoded bytes: compact strict JSON, no line break.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0.bytes
    }

    pub(super) fn shape(&self) -> &Shape {
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

    #[test]
    fn making_a_fragment_checks_its_own_bounds() {
        let limits = Limits { max_depth: 1, ..Limits::DEFAULT };
        assert_eq!(RawJson::encode(&sample(), &limits).unwrap_err().kind(), JsonErrorKind::TooDeep);
    }
}
