//! Pre-encoded JSON fragments: a value encoded once by [`encode`](super::encode)'s rules and
//! then written verbatim wherever it is placed inside a larger document (a
//! [`Payload`](super::Payload) holds them).
//!
//! A fragment can only be made by this crate's encoder, so its bytes are strict JSON with no
//! literal line break, exactly what encoding the value again would produce. It remembers its
//! shape (nesting depth, value count, widest container, longest string), so the encoder that
//! splices it enforces every bound of [`Limits`] on the whole document exactly as if the
//! value's tree were encoded in its place, at the cost of a few comparisons and one copy.
//!
//! A fragment is made by [`RawJson::encode`] (`encode.rs`), [`RawJson::parse`] (`parse.rs`) or
//! as a document's *text form*, [`RawJson::text_of`] (`text.rs`: its encoding as a JSON string,
//! MCP's text twin of structured content). With `std`, a fragment keeps its own escaped form
//! after the first time it is needed, so the text form of a document holding a large fragment
//! costs one copy of that form, not escaping the fragment again on every use.

use alloc::sync::Arc;
use alloc::vec::Vec;
use core::fmt;

use super::escape::escape_into;

/// What the bounds of [`Limits`](super::Limits) need to know about an encoded value.
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
    /// A fragment from bytes the caller wrote in the encoder's exact form, with their shape.
    pub(super) fn from_encoded(shape: Shape, bytes: Vec<u8>) -> RawJson {
        RawJson(Arc::new(Inner {
            shape,
            bytes,
            #[cfg(feature = "std")]
            escaped: std::sync::OnceLock::new(),
        }))
    }

    /// Appends this fragment's escaped form (the contents of its text form).
    pub(super) fn push_escaped(&self, out: &mut Vec<u8>) {
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

    /// The heap memory this fragment holds: its bytes and the shared record around them (the
    /// escaped form made by [`RawJson::text_of`] is not counted until made).
    pub fn heap_bytes(&self) -> usize {
        // The reference counts before the record, as `Arc` lays them out.
        2 * core::mem::size_of::<usize>() + core::mem::size_of::<Inner>() + self.0.bytes.capacity()
    }

    /// What the bounds need to know of the fragment.
    pub(crate) fn shape(&self) -> &Shape {
        &self.0.shape
    }

    /// The JSON type name of the fragment's value, as [`Value::type_name`](super::Value::type_name).
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
    use alloc::vec::Vec;

    use super::*;
    use crate::{JsonErrorKind, Limits, Map, Payload, Value, encode, encode_into, parse};

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
        let outer = Payload::object([
            ("a", Payload::Raw(raw.clone())),
            ("b", Payload::Array(vec![Payload::Raw(raw)])),
        ]);
        let mut tree = Map::new();
        tree.insert("a", sample());
        tree.insert("b", vec![sample()]);
        assert_eq!(
            encode(&outer, &Limits::DEFAULT).unwrap(),
            encode(&Value::from(tree), &Limits::DEFAULT).unwrap()
        );
    }

    /// Every bound fails on the spliced document exactly when it fails on the tree.
    #[test]
    fn bounds_hold_on_the_whole_document() {
        let raw = RawJson::encode(&sample(), &Limits::DEFAULT).unwrap();
        let tree_len = encode(&sample(), &Limits::DEFAULT).unwrap().len();
        let wrapped = |v: Payload| Payload::Array(vec![Payload::Array(vec![v])]);
        let kind = |v: &Payload, limits: Limits| {
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
            assert_eq!(kind(&wrapped(sample().into()), limits), expected, "tree, {limits:?}");
            assert_eq!(kind(&wrapped(Payload::Raw(raw.clone())), limits), expected, "{limits:?}");
        }
    }

    #[test]
    fn typed_decoding_sees_the_tree() {
        let raw = RawJson::encode(&sample(), &Limits::DEFAULT).unwrap();
        let tree = |p: Payload| p.into_value();
        assert_eq!(crate::from_value::<Value>(tree(Payload::Raw(raw.clone()))).unwrap(), sample());
        #[derive(serde::Deserialize)]
        struct Named {
            name: String,
        }
        let mut outer = Map::new();
        outer.insert("name", "x");
        let named = RawJson::encode(&Value::from(outer), &Limits::DEFAULT).unwrap();
        let decoded: Vec<Named> =
            crate::from_value(tree(Payload::Array(vec![Payload::Raw(named)]))).unwrap();
        assert_eq!(decoded[0].name, "x");
        let e = crate::from_value::<Vec<u8>>(tree(Payload::Raw(raw))).unwrap_err();
        assert!(e.message().contains("map"), "{e}");
    }

    #[test]
    fn a_fragment_within_a_fragment_keeps_its_shape() {
        let inner = RawJson::encode(&sample(), &Limits::DEFAULT).unwrap();
        let outer =
            RawJson::encode(&Payload::Array(vec![Payload::Raw(inner)]), &Limits::DEFAULT).unwrap();
        let direct = RawJson::encode(&Value::from(vec![sample()]), &Limits::DEFAULT).unwrap();
        assert_eq!(outer, direct);
    }

    /// The text form is the encoding, encoded again as a string, with or without fragments
    /// inside (and the second time from the fragment's kept escaped form).
    #[test]
    fn the_text_form_is_the_encoding_as_a_string() {
        let twice = |v: &Payload| {
            let plain = String::from_utf8(encode(v, &Limits::DEFAULT).unwrap()).unwrap();
            (encode(&Value::String(plain.clone()), &Limits::DEFAULT).unwrap(), plain.len())
        };
        let raw = RawJson::encode(&sample(), &Limits::DEFAULT).unwrap();
        let holder = Payload::object([
            ("a\"\\", Payload::Raw(raw.clone())),
            (
                "b",
                Payload::Array(vec![
                    Payload::Raw(raw.clone()),
                    "x\"y\u{2028}\n".into(),
                    Value::Null.into(),
                ]),
            ),
        ]);
        let cases = [sample().into(), Payload::Raw(raw.clone()), holder.clone(), "s".into()];
        for value in cases.iter().chain(&cases) {
            let text = RawJson::text_of(value, &Limits::DEFAULT).unwrap();
            let (expected, plain_len) = twice(value);
            assert_eq!(text.as_bytes(), expected, "{value:?}");
            assert_eq!(text.type_name(), "string");
            assert_eq!(text.shape().string_bytes, plain_len);
            assert_eq!(text.to_value(), parse(&expected, &Limits::DEFAULT).unwrap());
        }
        // Where it is placed, the string's length is bounded like any string's.
        let text = RawJson::text_of(&holder, &Limits::DEFAULT).unwrap();
        let len = text.shape().string_bytes;
        let tight = Limits { max_string_bytes: len - 1, ..Limits::DEFAULT };
        let e = encode(&Payload::Array(vec![Payload::Raw(text)]), &tight).unwrap_err();
        assert_eq!(e.kind(), JsonErrorKind::StringTooLong);
    }

    #[test]
    fn the_text_form_bounds_the_nesting() {
        let raw = RawJson::encode(&sample(), &Limits::DEFAULT).unwrap();
        let limits = |max_depth| Limits { max_depth, ..Limits::DEFAULT };
        let wrapped = Payload::Array(vec![Payload::Raw(raw)]);
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
