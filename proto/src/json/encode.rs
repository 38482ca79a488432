//! The encoder: compact output, no literal line breaks, the same bounds as the parser.
//!
//! Like the parser it walks containers with an explicit stack, so encoding never recurses. It
//! writes a [`Value`] tree or a [`Payload`], whose fragments ([`RawJson`]) are copied verbatim
//! after their recorded shape is checked against the bounds at the depth where they are
//! placed.

use alloc::string::String;
use alloc::vec::Vec;

use super::escape::write_string;
use super::payload::Payload;
use super::raw::{RawJson, Shape};
use super::stack::Stack;
use super::{JsonError, JsonErrorKind, Limits, Value};

/// What the encoder writes: a [`Value`] tree, or a [`Payload`], which may hold fragments.
/// Sealed: those two are all there is.
pub trait Encode: sealed::Sealed {}

impl Encode for Value {}
impl Encode for Payload {}

mod sealed {
    /// The node the encoder starts at.
    pub trait Sealed {
        fn node(&self) -> super::Node<'_>;
    }

    impl Sealed for super::Value {
        fn node(&self) -> super::Node<'_> {
            super::Node::Value(self)
        }
    }

    impl Sealed for super::Payload {
        fn node(&self) -> super::Node<'_> {
            super::Node::Payload(self)
        }
    }
}

/// A node of a document: of a tree, or of a payload.
#[derive(Debug, Clone, Copy)]
pub enum Node<'a> {
    /// A tree node.
    Value(&'a Value),
    /// A payload node.
    Payload(&'a Payload),
}

/// Encodes `value` compactly. Fails (with [`JsonErrorKind`](super::JsonErrorKind) naming the
/// bound) if the output would break any of `limits`, so whatever we send, the peer's parser
/// with the same limits accepts. Strings are escaped so the output never contains a literal
/// line break (U+2028/U+2029 are escaped too, for JavaScript readers).
pub fn encode(value: &(impl Encode + ?Sized), limits: &Limits) -> Result<Vec<u8>, JsonError> {
    // Most messages are small; start past the first few doublings.
    let mut out = Vec::with_capacity(128);
    encode_into(value, limits, &mut out)?;
    Ok(out)
}

/// Appends the encoding of `value` to `out` (see [`encode`]). On error `out` is restored to its
/// length before the call.
pub fn encode_into(
    value: &(impl Encode + ?Sized),
    limits: &Limits,
    out: &mut Vec<u8>,
) -> Result<(), JsonError> {
    encode_shaped(value.node(), limits, out).map(drop)
}

/// [`encode_into`], also giving the shape of what it wrote (for [`RawJson`]).
fn encode_shaped(node: Node<'_>, limits: &Limits, out: &mut Vec<u8>) -> Result<Shape, JsonError> {
    let start = out.len();
    let mut encoder = Encoder { out: &mut *out, start, around: 0, limits, shape: Shape::default() };
    let result = encoder.run(node).map(|()| encoder.shape);
    if result.is_err() {
        out.truncate(start);
    }
    result
}

/// [`encode_into`] for one value of a document that a writer lays out itself around it (a
/// fixed envelope: no tree of it to build per message). `out` holds the document from its
/// first byte up to where `value` goes, `open` containers are open there and `values` values
/// came before it. The bounds are checked on the whole document so far, as encoding its tree
/// at once would: the size counts from `out`'s start, the depth from the document's root.
/// Gives the document's value count after `value`; on error `out` is restored to its length
/// before the call.
pub fn encode_placed(
    value: &(impl Encode + ?Sized),
    limits: &Limits,
    open: usize,
    values: usize,
    out: &mut Vec<u8>,
) -> Result<usize, JsonError> {
    let before = out.len();
    let shape = Shape { values, ..Shape::default() };
    let mut encoder = Encoder { out: &mut *out, start: 0, around: open, limits, shape };
    let result = encoder.run(value.node()).map(|()| encoder.shape.values);
    if result.is_err() {
        out.truncate(before);
    }
    result
}

impl RawJson {
    /// Encodes `value` once (see [`encode`]); fails like it if the fragment on its own breaks
    /// `limits`. Whether it fits where it is later placed is checked there.
    pub fn encode(value: &(impl Encode + ?Sized), limits: &Limits) -> Result<RawJson, JsonError> {
        let mut bytes = Vec::new();
        let shape = encode_shaped(value.node(), limits, &mut bytes)?;
        bytes.shrink_to_fit();
        Ok(RawJson::from_encoded(shape, bytes))
    }
}

/// An open container and whether a member has been written yet (for the commas).
enum Frame<'v> {
    Array(core::slice::Iter<'v, Value>, bool),
    Object(core::slice::Iter<'v, (String, Value)>, bool),
    PayloadArray(core::slice::Iter<'v, Payload>, bool),
    PayloadObject(core::slice::Iter<'v, (String, Payload)>, bool),
}

/// An empty slot of the stack (`stack.rs`).
impl Default for Frame<'_> {
    fn default() -> Self {
        Frame::Array(Default::default(), false)
    }
}

struct Encoder<'o, 'l> {
    out: &'o mut Vec<u8>,
    start: usize,
    /// Containers open around the value being encoded ([`encode_placed`]).
    around: usize,
    limits: &'l Limits,
    /// What has been written so far; its `values` is checked as it grows.
    shape: Shape,
}

impl Encoder<'_, '_> {
    fn run(&mut self, root: Node<'_>) -> Result<(), JsonError> {
        let mut stack: Stack<Frame<'_>, 4> = Stack::new();
        let mut next = Some(root);
        loop {
            if let Some(node) = next.take() {
                self.shape.values += 1;
                if self.shape.values > self.limits.max_values {
                    return Err(self.err(JsonErrorKind::TooManyValues));
                }
                let value = match node {
                    Node::Value(value) => value,
                    Node::Payload(Payload::Value(value)) => value,
                    Node::Payload(Payload::Raw(raw)) => {
                        self.splice(self.around + stack.len(), raw)?;
                        self.check_size()?;
                        continue;
                    }
                    Node::Payload(Payload::Array(items)) => {
                        self.open(self.around + stack.len(), items.len())?;
                        self.out.push(b'[');
                        stack.push(Frame::PayloadArray(items.iter(), false));
                        continue;
                    }
                    Node::Payload(Payload::Object(members)) => {
                        self.open(self.around + stack.len(), members.len())?;
                        self.out.push(b'{');
                        stack.push(Frame::PayloadObject(members.iter(), false));
                        continue;
                    }
                };
                match value {
                    Value::Null => self.out.extend_from_slice(b"null"),
                    Value::Bool(true) => self.out.extend_from_slice(b"true"),
                    Value::Bool(false) => self.out.extend_from_slice(b"false"),
                    Value::Number(n) => self.out.extend_from_slice(n.as_bytes()),
                    Value::String(s) => self.string(s)?,
                    Value::Array(items) => {
                        self.open(self.around + stack.len(), items.len())?;
                        self.out.push(b'[');
                        stack.push(Frame::Array(items.iter(), false));
                    }
                    Value::Object(map) => {
                        self.open(self.around + stack.len(), map.len())?;
                        self.out.push(b'{');
                        stack.push(Frame::Object(map.entries().iter(), false));
                    }
                }
                self.check_size()?;
            }
            // Closing brackets are not checked one by one; the final size is.
            let Some(frame) = stack.last_mut() else { return self.check_size() };
            let (item, started) = match frame {
                Frame::Array(items, started) => {
                    (items.next().map(|v| (None, Node::Value(v))), started)
                }
                Frame::Object(members, started) => {
                    (members.next().map(|(k, v)| (Some(k.as_str()), Node::Value(v))), started)
                }
                Frame::PayloadArray(items, started) => {
                    (items.next().map(|p| (None, Node::Payload(p))), started)
                }
                Frame::PayloadObject(members, started) => {
                    (members.next().map(|(k, p)| (Some(k.as_str()), Node::Payload(p))), started)
                }
            };
            match item {
                Some((key, node)) => {
                    if core::mem::replace(started, true) {
                        self.out.push(b',');
                    }
                    if let Some(key) = key {
                        self.string(key)?;
                        self.out.push(b':');
                    }
                    next = Some(node);
                }
                None => {
                    let array = matches!(frame, Frame::Array(..) | Frame::PayloadArray(..));
                    self.out.push(if array { b']' } else { b'}' });
                    stack.pop();
                }
            }
        }
    }

    /// The error offset is the length of the output produced so far.
    fn err(&self, kind: JsonErrorKind) -> JsonError {
        JsonError::new(kind, self.out.len() - self.start)
    }

    fn check_size(&self) -> Result<(), JsonError> {
        if self.out.len() - self.start > self.limits.max_bytes {
            return Err(JsonError::new(JsonErrorKind::TooLarge, self.limits.max_bytes));
        }
        Ok(())
    }

    /// Enters a container of `members` when `open` are already open.
    fn open(&mut self, open: usize, members: usize) -> Result<(), JsonError> {
        if open >= self.limits.max_depth {
            return Err(self.err(JsonErrorKind::TooDeep));
        }
        if members > self.limits.max_members {
            return Err(self.err(JsonErrorKind::TooManyMembers));
        }
        self.shape.absorb(open, &Shape { depth: 1, values: 0, members, string_bytes: 0 });
        Ok(())
    }

    /// Copies a fragment placed `open` containers deep, after checking that its tree would
    /// have passed every bound here (its own value was already counted).
    fn splice(&mut self, open: usize, raw: &RawJson) -> Result<(), JsonError> {
        let inner = raw.shape();
        if open + inner.depth > self.limits.max_depth {
            return Err(self.err(JsonErrorKind::TooDeep));
        }
        self.shape.values += inner.values - 1;
        if self.shape.values > self.limits.max_values {
            return Err(self.err(JsonErrorKind::TooManyValues));
        }
        if inner.members > self.limits.max_members {
            return Err(self.err(JsonErrorKind::TooManyMembers));
        }
        if inner.string_bytes > self.limits.max_string_bytes {
            return Err(self.err(JsonErrorKind::StringTooLong));
        }
        self.shape.absorb(open, inner);
        self.out.extend_from_slice(raw.as_bytes());
        Ok(())
    }

    /// Writes `s` quoted, after checking its length.
    fn string(&mut self, s: &str) -> Result<(), JsonError> {
        if s.len() > self.limits.max_string_bytes {
            return Err(self.err(JsonErrorKind::StringTooLong));
        }
        self.shape.string_bytes = self.shape.string_bytes.max(s.len());
        write_string(s, self.out);
        self.check_size()
    }
}

#[cfg(test)]
mod tests {
    use alloc::string::String;
    use alloc::vec;
    use alloc::vec::Vec;

    use super::*;
    use crate::{Map, Number, parse};

    fn enc(v: &Value) -> String {
        String::from_utf8(encode(v, &Limits::DEFAULT).unwrap()).unwrap()
    }

    #[test]
    fn compact_output_with_exact_numbers() {
        let mut m = Map::new();
        m.insert("b", Value::Number(Number::from_token("1.0e+3").unwrap()));
        m.insert("a", vec![Value::Null, true.into(), false.into(), "x".into()]);
        m.insert("c", Map::new());
        assert_eq!(enc(&m.into()), r#"{"b":1.0e+3,"a":[null,true,false,"x"],"c":{}}"#);
        assert_eq!(enc(&Value::Array(Vec::new())), "[]");
    }

    #[test]
    fn escapes_quotes_backslashes_controls_and_line_separators() {
        let s: String = (0u8..0x20).map(char::from).collect::<String>()
            + "\"\\/\u{7f}é\u{2028}\u{2029}\u{2027}😀";
        let out = enc(&Value::String(s.clone()));
        assert_eq!(
            out,
            "\"\\u0000\\u0001\\u0002\\u0003\\u0004\\u0005\\u0006\\u0007\\b\\t\\n\\u000b\\f\\r\\u000e\\u000f\\u0010\\u0011\\u0012\\u0013\\u0014\\u0015\\u0016\\u0017\\u0018\\u0019\\u001a\\u001b\\u001c\\u001d\\u001e\\u001f\\\"\\\\/\u{7f}é\\u2028\\u2029\u{2027}😀\""
        );
        assert!(!out.bytes().any(|b| b == b'\n' || b == b'\r'));
        assert_eq!(parse(out.as_bytes(), &Limits::DEFAULT).unwrap(), Value::String(s));
        let mut m = Map::new();
        m.insert("k\n\"", 1u64);
        assert_eq!(enc(&m.into()), r#"{"k\n\"":1}"#);
    }

    fn over(v: &Value, limits: Limits) -> JsonErrorKind {
        let mut out = b"prefix".to_vec();
        let e = encode_into(v, &limits, &mut out).unwrap_err();
        assert_eq!(out, b"prefix", "restored on error");
        e.kind()
    }

    fn nested(depth: usize) -> Value {
        (0..depth).fold(Value::Null, |inner, _| Value::Array(vec![inner]))
    }

    #[test]
    fn enforces_the_parser_bounds_and_restores_out() {
        let d = Limits::DEFAULT;
        encode(&nested(32), &d).unwrap();
        assert_eq!(over(&nested(33), d), JsonErrorKind::TooDeep);
        let items = |n: usize| Value::Array(vec![Value::Null; n]);
        encode(&items(4096), &d).unwrap();
        assert_eq!(over(&items(4097), d), JsonErrorKind::TooManyMembers);
        let object = |n: usize| {
            Value::Object((0..n).map(|i| (alloc::format!("{i}"), Value::Null)).collect())
        };
        encode(&object(4096), &d).unwrap();
        assert_eq!(over(&object(4097), d), JsonErrorKind::TooManyMembers);
        let wide = Limits { max_members: usize::MAX, ..d };
        encode(&items(16383), &wide).unwrap();
        assert_eq!(over(&items(16384), wide), JsonErrorKind::TooManyValues);
        let s = |n: usize| Value::String("é".repeat(n / 2));
        encode(&s(256 * 1024), &d).unwrap();
        assert_eq!(
            over(&Value::String("a".repeat(256 * 1024 + 1)), d),
            JsonErrorKind::StringTooLong
        );
        let mut key = Map::new();
        key.insert("a".repeat(256 * 1024 + 1), 1u64);
        assert_eq!(over(&key.into(), d), JsonErrorKind::StringTooLong);
        let size = Limits { max_bytes: 5, ..d };
        assert_eq!(encode(&Value::from("abc"), &size).unwrap(), b"\"abc\"");
        assert_eq!(over(&Value::from("abcd"), size), JsonErrorKind::TooLarge);
        // Escaping can push a string over the size bound even when its length is fine.
        assert_eq!(over(&Value::from("\n\n"), size), JsonErrorKind::TooLarge);
        // `[[null` fits in 6 bytes; only the closing brackets break the bound.
        assert_eq!(over(&nested(2), Limits { max_bytes: 6, ..d }), JsonErrorKind::TooLarge);
        encode(&nested(1), &Limits { max_bytes: 6, ..d }).unwrap();
    }

    #[test]
    fn appends_to_existing_output() {
        let mut out = b"x".to_vec();
        encode_into(&Value::from(7u64), &Limits::DEFAULT, &mut out).unwrap();
        assert_eq!(out, b"x7");
    }
}
