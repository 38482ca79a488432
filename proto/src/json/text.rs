//! The *text form* of a document: its encoding as a JSON string (MCP's text twin of a tool's
//! structured content), made as a fragment. The fragments inside the document are copied in
//! the escaped form they keep after their first use (`raw.rs`), not escaped again.

use alloc::vec::Vec;

use super::encode::{Encode, Node};
use super::escape::escape_into;
use super::payload::Payload;
use super::raw::{RawJson, Shape};
use super::{JsonError, JsonErrorKind, Limits, Value, encode_into};

impl RawJson {
    /// The text form of `value`: its encoding (see [`encode`](super::encode)) as a JSON string,
    /// `"…"`, as a fragment. The bytes equal encoding `value`, taking that as a string and
    /// encoding it again; fragments inside `value` are not escaped again but copied in their
    /// kept escaped form (see the module docs).
    ///
    /// Only the nesting is checked here (`limits.max_depth`, which bounds the walk); the other
    /// bounds hold or fail where the text is placed, exactly as they would for the string: its
    /// length is the whole encoding's.
    pub fn text_of(value: &(impl Encode + ?Sized), limits: &Limits) -> Result<RawJson, JsonError> {
        let mut text = TextForm { out: Vec::from(*b"\""), plain_len: 0, scratch: Vec::new() };
        text.node(value.node(), 0, limits)?;
        text.out.push(b'"');
        let shape = Shape { depth: 0, values: 1, members: 0, string_bytes: text.plain_len };
        Ok(RawJson::from_encoded(shape, text.out))
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
    fn node(&mut self, node: Node<'_>, open: usize, limits: &Limits) -> Result<(), JsonError> {
        match node {
            Node::Value(value) | Node::Payload(Payload::Value(value)) => {
                self.value(value, open, limits)
            }
            Node::Payload(Payload::Raw(raw)) => {
                if open + raw.shape().depth > limits.max_depth {
                    return Err(JsonError::new(JsonErrorKind::TooDeep, self.plain_len));
                }
                raw.push_escaped(&mut self.out);
                self.plain_len += raw.as_bytes().len();
                Ok(())
            }
            Node::Payload(Payload::Array(items)) => {
                self.open(open, limits)?;
                self.punct(b'[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        self.punct(b',');
                    }
                    self.node(Node::Payload(item), open + 1, limits)?;
                }
                self.punct(b']');
                Ok(())
            }
            Node::Payload(Payload::Object(members)) => {
                self.open(open, limits)?;
                self.punct(b'{');
                for (i, (key, item)) in members.iter().enumerate() {
                    if i > 0 {
                        self.punct(b',');
                    }
                    self.scalar(&Value::String(key.clone()))?;
                    self.punct(b':');
                    self.node(Node::Payload(item), open + 1, limits)?;
                }
                self.punct(b'}');
                Ok(())
            }
        }
    }

    fn value(&mut self, value: &Value, open: usize, limits: &Limits) -> Result<(), JsonError> {
        match value {
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
