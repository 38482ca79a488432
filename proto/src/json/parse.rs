//! The strict parser: one pass over a byte slice, every bound enforced as it is reached.
//!
//! Containers are tracked on an explicit stack instead of by recursion, so the nesting an
//! attacker can send costs heap (bounded by `max_depth`), never native stack.

use alloc::string::String;
use alloc::vec::Vec;

use super::escape::{escape_for, write_string};
use super::number::grammar_len;
use super::raw::{RawJson, Shape};
use super::scan::plain_run_end;
use super::stack::Stack;
use super::value::{PAIRWISE_KEYS, first_duplicate, first_repeat};
use super::{JsonError, JsonErrorKind, Limits, Map, Number, Value};

/// Parses exactly one JSON value (surrounded by optional whitespace) from `input`.
///
/// Rejects invalid UTF-8, invalid escapes, lone surrogates, unescaped control characters,
/// numbers outside the RFC 8259 grammar, duplicate keys (compared after unescaping), trailing
/// data, and anything over `limits`. A UTF-8 byte-order mark is not whitespace and is rejected.
/// Recursion-free, so no input can overflow the stack; memory stays proportional to the input.
///
/// The size bound is checked first (`TooLarge` at offset `max_bytes`); depth, value count,
/// member count and decoded string length are checked at the byte where they are exceeded, so
/// a rejected input never costs more than the bound it broke.
pub fn parse(input: &[u8], limits: &Limits) -> Result<Value, JsonError> {
    parse_splicing(input, limits, None).map(|(value, _)| value)
}

/// [`parse`], except that the value at `path` (the member names leading to it from the root
/// object) is kept as a fragment: checked exactly as [`parse`] checks it (same errors at the
/// same offsets, the same bounds on the whole document), but never built as a tree. Its bytes
/// are copied as they are when they already are in the encoder's form and written in that
/// form otherwise (whitespace dropped, escapes as the encoder writes them), so the fragment is
/// what encoding its tree would give. The tree of the rest is what [`parse`] gives, with
/// `null` where the fragment was (so its member keeps its place); with no value at `path`
/// there is no fragment and the tree equals [`parse`]'s.
///
/// For a value that is only passed on (a call's `input`, an action's `output`): splicing it
/// into the message that carries it on ([`Payload::Raw`](super::Payload::Raw)) costs one copy
/// instead of a tree and its encoding.
pub fn parse_with_raw(
    input: &[u8],
    limits: &Limits,
    path: &[&str],
) -> Result<(Value, Option<RawJson>), JsonError> {
    parse_splicing(input, limits, Some(path))
}

impl RawJson {
    /// Parses `input` strictly as one value within `limits` (as [`parse`] does) and keeps it
    /// as a fragment, without building its tree: bytes already in the encoder's form are
    /// copied, anything else is written in it.
    pub fn parse(input: &[u8], limits: &Limits) -> Result<RawJson, JsonError> {
        let (_, raw) = parse_splicing(input, limits, Some(&[]))?;
        Ok(raw.expect("the root is the value at the empty path"))
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
}

/// The value starting at `pos` of `input` as a fragment, `open` containers deep with `before`
/// values ahead of it in the document: exactly the capture [`parse_with_raw`] makes there (the
/// same bounds, the same errors at the same offsets). Gives the fragment, the position after
/// it and the document's value count so far. For a caller that has matched the bytes around
/// the fragment itself (`channel/per_call.rs`).
pub(crate) fn capture_at(
    input: &[u8],
    limits: &Limits,
    pos: usize,
    open: usize,
    before: usize,
) -> Result<(RawJson, usize, usize), JsonError> {
    let mut parser = Parser {
        input,
        pos,
        limits,
        values: before + 1,
        key_offsets: Stack::new(),
        raw_at: None,
        captured: None,
    };
    if parser.values > limits.max_values {
        return Err(parser.err(JsonErrorKind::TooManyValues, pos));
    }
    let raw = parser.capture(open)?;
    Ok((raw, parser.pos, parser.values))
}

fn parse_splicing(
    input: &[u8],
    limits: &Limits,
    path: Option<&[&str]>,
) -> Result<(Value, Option<RawJson>), JsonError> {
    if input.len() > limits.max_bytes {
        return Err(JsonError::new(JsonErrorKind::TooLarge, limits.max_bytes));
    }
    let mut parser = Parser {
        input,
        pos: 0,
        limits,
        values: 0,
        key_offsets: Stack::new(),
        raw_at: path,
        captured: None,
    };
    let value = parser.run()?;
    Ok((value, parser.captured))
}

/// An open container: the members parsed so far.
enum Frame {
    Array(Vec<Value>),
    Object {
        entries: Vec<(String, Value)>,
        /// The key whose value is being parsed.
        key: String,
        /// Where this object's key offsets start in [`Parser::key_offsets`].
        offsets_from: usize,
    },
}

/// An empty slot of the stack (`stack.rs`).
impl Default for Frame {
    fn default() -> Self {
        Frame::Array(Vec::new())
    }
}

struct Parser<'a> {
    input: &'a [u8],
    pos: usize,
    limits: &'a Limits,
    values: usize,
    /// Byte offset of every key of the open objects (a shared stack, so objects allocate
    /// nothing for it): large objects are checked for duplicates when they close, and the
    /// error must still name the repeated key's offset.
    key_offsets: Stack<usize, 8>,
    /// Where the value to keep as a fragment is, if any (see [`parse_with_raw`]).
    raw_at: Option<&'a [&'a str]>,
    /// That fragment, once captured.
    captured: Option<RawJson>,
}

/// An open container of a fragment being captured.
#[derive(Default)]
struct Open {
    object: bool,
    /// Members so far.
    members: usize,
    /// Where this object's keys start in the capture's key stack.
    keys_from: usize,
}

/// A key of an open object of a fragment: its offset in the input (for errors) and where its
/// encoded form is in the fragment. Encoded forms are equal exactly when the keys are, since
/// the encoder writes every string one way.
#[derive(Default)]
struct CapturedKey {
    at: usize,
    encoded: core::ops::Range<usize>,
}

/// The keys of a fragment's open objects.
type CapturedKeys = Stack<CapturedKey, 8>;

/// Where a string's decoded characters go while it is checked.
trait Decoded {
    /// Decoded bytes so far.
    fn len(&self) -> usize;
    /// A run of characters written as they are.
    fn run(&mut self, run: &str);
    /// A character that was written as the escape `written`.
    fn escaped(&mut self, c: char, written: &[u8]);
}

impl Decoded for String {
    fn len(&self) -> usize {
        String::len(self)
    }
    fn run(&mut self, run: &str) {
        self.push_str(run);
    }
    fn escaped(&mut self, c: char, _written: &[u8]) {
        self.push(c);
    }
}

/// Decodes nothing: measures a string and tells whether it is written exactly as the encoder
/// would write it (no escape it would not use, no literal U+2028/U+2029).
struct Measure {
    len: usize,
    exact: bool,
}

impl Decoded for Measure {
    fn len(&self) -> usize {
        self.len
    }
    fn run(&mut self, run: &str) {
        self.len += run.len();
        self.exact &= run.is_ascii() || !(run.contains('\u{2028}') || run.contains('\u{2029}'));
    }
    fn escaped(&mut self, c: char, written: &[u8]) {
        self.len += c.len_utf8();
        self.exact &= escape_for(c).is_some_and(|e| e.as_bytes() == written);
    }
}

impl Parser<'_> {
    fn run(&mut self) -> Result<Value, JsonError> {
        let mut stack: Stack<Frame, 4> = Stack::new();
        let value = 'value: loop {
            self.skip_ws();
            let start = self.pos;
            self.values += 1;
            if self.values > self.limits.max_values {
                return Err(self.err(JsonErrorKind::TooManyValues, start));
            }
            let raw_here = self.raw_at.is_some_and(|path| {
                path.len() == stack.len()
                    && stack.iter().zip(path).all(
                        |(frame, name)| matches!(frame, Frame::Object { key, .. } if key == name),
                    )
            });
            let mut value = match self.input.get(start) {
                _ if raw_here => {
                    self.captured = Some(self.capture(stack.len())?);
                    Value::Null
                }
                None => return Err(self.err(JsonErrorKind::UnexpectedEnd, start)),
                Some(b'{') => {
                    self.open(stack.len(), start)?;
                    self.skip_ws();
                    if self.eat(b'}') {
                        Value::Object(Map::new())
                    } else {
                        self.check_members(0)?;
                        let offsets_from = self.key_offsets.len();
                        let key = self.member_key()?;
                        stack.push(Frame::Object { entries: Vec::new(), key, offsets_from });
                        continue 'value;
                    }
                }
                Some(b'[') => {
                    self.open(stack.len(), start)?;
                    self.skip_ws();
                    if self.eat(b']') {
                        Value::Array(Vec::new())
                    } else {
                        self.check_members(0)?;
                        stack.push(Frame::Array(Vec::new()));
                        continue 'value;
                    }
                }
                Some(b'"') => Value::String(self.string()?),
                Some(b'-' | b'0'..=b'9') => Value::Number(self.number()?),
                // `+1` and `.5` are numbers other grammars allow; say so.
                Some(b'+' | b'.') => return Err(self.err(JsonErrorKind::InvalidNumber, start)),
                Some(b't') => self.literal(b"true", Value::Bool(true))?,
                Some(b'f') => self.literal(b"false", Value::Bool(false))?,
                Some(b'n') => self.literal(b"null", Value::Null)?,
                Some(_) => return Err(self.unexpected(start, JsonErrorKind::UnexpectedByte)),
            };
            // `value` is complete: hand it to the open containers, closing those that end here.
            loop {
                let Some(frame) = stack.last_mut() else { break 'value value };
                self.skip_ws();
                let at = self.pos;
                match frame {
                    Frame::Array(items) => {
                        items.push(value);
                        match self.input.get(at) {
                            Some(b',') => {
                                self.pos += 1;
                                self.skip_ws();
                                self.check_members(items.len())?;
                                continue 'value;
                            }
                            Some(b']') => {
                                self.pos += 1;
                                value = Value::Array(core::mem::take(items));
                                stack.pop();
                            }
                            _ => return Err(self.after_value(at)),
                        }
                    }
                    Frame::Object { entries, key, offsets_from } => {
                        entries.push((core::mem::take(key), value));
                        match self.input.get(at) {
                            Some(b',') => {
                                self.pos += 1;
                                self.skip_ws();
                                self.check_members(entries.len())?;
                                let key_at = self.pos;
                                *key = self.member_key()?;
                                if entries.len() < PAIRWISE_KEYS
                                    && entries.iter().any(|(k, _)| k == key)
                                {
                                    return Err(self.err(JsonErrorKind::DuplicateKey, key_at));
                                }
                                continue 'value;
                            }
                            Some(b'}') => {
                                self.pos += 1;
                                // Objects past the pairwise size were not checked per key.
                                if entries.len() > PAIRWISE_KEYS
                                    && let Some(i) = first_duplicate(entries)
                                {
                                    let key_at = self.key_offsets[*offsets_from + i];
                                    return Err(self.err(JsonErrorKind::DuplicateKey, key_at));
                                }
                                self.key_offsets.truncate(*offsets_from);
                                value = Value::Object(Map::from_unique_entries(core::mem::take(
                                    entries,
                                )));
                                stack.pop();
                            }
                            _ => return Err(self.after_value(at)),
                        }
                    }
                }
            }
        };
        self.skip_ws();
        match self.input.get(self.pos) {
            None => Ok(value),
            Some(_) => Err(self.unexpected(self.pos, JsonErrorKind::TrailingData)),
        }
    }

    fn err(&self, kind: JsonErrorKind, at: usize) -> JsonError {
        JsonError::new(kind, at)
    }

    /// The error for a byte that cannot appear at `at`: invalid UTF-8 is reported as such (so
    /// a stray `0xFF` between tokens reads as an encoding problem), anything else as `kind`.
    fn unexpected(&self, at: usize, kind: JsonErrorKind) -> JsonError {
        let window = &self.input[at..self.input.len().min(at + 4)];
        match core::str::from_utf8(window) {
            Err(e) if e.valid_up_to() == 0 => self.err(JsonErrorKind::InvalidUtf8, at),
            _ => self.err(kind, at),
        }
    }

    /// A member ended and neither `,` nor the closing bracket follows.
    fn after_value(&self, at: usize) -> JsonError {
        if at == self.input.len() {
            self.err(JsonErrorKind::UnexpectedEnd, at)
        } else {
            self.unexpected(at, JsonErrorKind::UnexpectedByte)
        }
    }

    fn skip_ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.input.get(self.pos) {
            self.pos += 1;
        }
    }

    fn eat(&mut self, byte: u8) -> bool {
        let hit = self.input.get(self.pos) == Some(&byte);
        self.pos += usize::from(hit);
        hit
    }

    /// Enters a container at `at` when `open` are already open.
    fn open(&mut self, open: usize, at: usize) -> Result<(), JsonError> {
        if open >= self.limits.max_depth {
            return Err(self.err(JsonErrorKind::TooDeep, at));
        }
        self.pos += 1;
        Ok(())
    }

    /// Called at the first byte of the next member of a container that has `count` already.
    fn check_members(&self, count: usize) -> Result<(), JsonError> {
        if count >= self.limits.max_members {
            return Err(self.err(JsonErrorKind::TooManyMembers, self.pos));
        }
        Ok(())
    }

    /// `"key"` `:` — leaves the position at the value.
    fn member_key(&mut self) -> Result<String, JsonError> {
        self.key_start()?;
        self.key_offsets.push(self.pos);
        let key = self.string()?;
        self.key_end()?;
        Ok(key)
    }

    /// A key must start here.
    fn key_start(&self) -> Result<(), JsonError> {
        match self.input.get(self.pos) {
            Some(b'"') => Ok(()),
            None => Err(self.err(JsonErrorKind::UnexpectedEnd, self.pos)),
            Some(_) => Err(self.unexpected(self.pos, JsonErrorKind::UnexpectedByte)),
        }
    }

    /// After a key: `:`, leaving the position at the value.
    fn key_end(&mut self) -> Result<(), JsonError> {
        self.skip_ws();
        match self.input.get(self.pos) {
            Some(b':') => {
                self.pos += 1;
                Ok(())
            }
            None => Err(self.err(JsonErrorKind::UnexpectedEnd, self.pos)),
            Some(_) => Err(self.unexpected(self.pos, JsonErrorKind::UnexpectedByte)),
        }
    }

    fn literal(&mut self, word: &[u8], value: Value) -> Result<Value, JsonError> {
        let rest = &self.input[self.pos..];
        if rest.starts_with(word) {
            self.pos += word.len();
            return Ok(value);
        }
        let same = rest.iter().zip(word).take_while(|(a, b)| a == b).count();
        if same == rest.len() {
            Err(self.err(JsonErrorKind::UnexpectedEnd, self.input.len()))
        } else {
            Err(self.unexpected(self.pos + same, JsonErrorKind::UnexpectedByte))
        }
    }

    fn number(&mut self) -> Result<Number, JsonError> {
        let start = self.pos;
        let len = self.number_len()?;
        let token = core::str::from_utf8(&self.input[start..start + len])
            .map_err(|_| self.err(JsonErrorKind::InvalidNumber, start))?;
        self.pos += len;
        Ok(Number::from_checked_token(token))
    }

    /// The length of the number token starting here (an ASCII token of the RFC 8259 grammar).
    fn number_len(&self) -> Result<usize, JsonError> {
        let start = self.pos;
        let rest = &self.input[start..];
        let Some(len) = grammar_len(rest) else {
            return Err(self.err(JsonErrorKind::InvalidNumber, start));
        };
        // The grammar stops at the longest valid prefix; a number character right after it
        // (`01`, `1.`, `1e`, `1.5.2`) means the token as written is malformed.
        if let Some(b'0'..=b'9' | b'.' | b'e' | b'E' | b'+' | b'-') = rest.get(len) {
            return Err(self.err(JsonErrorKind::InvalidNumber, start + len));
        }
        Ok(len)
    }

    /// A string starting at the opening quote. Plain runs are validated and copied whole; a
    /// string without escapes is a single allocation of its exact size.
    fn string(&mut self) -> Result<String, JsonError> {
        let mut decoded = String::new();
        self.string_into(&mut decoded)?;
        Ok(decoded)
    }

    /// Checks the string starting at the opening quote, handing its characters to `decoded`.
    fn string_into(&mut self, decoded: &mut impl Decoded) -> Result<(), JsonError> {
        let input = self.input;
        let max = self.limits.max_string_bytes;
        let mut run_start = self.pos + 1;
        loop {
            // Never look further than the bound allows: a huge string is refused after
            // `max_string_bytes + 1` bytes, however long it is.
            let room = max - decoded.len();
            let scan_end = input.len().min(run_start.saturating_add(room).saturating_add(1));
            let i = plain_run_end::<0>(input, run_start, scan_end);
            if i - run_start > room {
                return Err(self.err(JsonErrorKind::StringTooLong, run_start + room));
            }
            let run = core::str::from_utf8(&input[run_start..i])
                .map_err(|e| self.err(JsonErrorKind::InvalidUtf8, run_start + e.valid_up_to()))?;
            match input.get(i) {
                Some(b'"') => {
                    self.pos = i + 1;
                    decoded.run(run);
                    return Ok(());
                }
                Some(b'\\') => {
                    decoded.run(run);
                    let (c, next) = self.escape(i)?;
                    if decoded.len() + c.len_utf8() > max {
                        return Err(self.err(JsonErrorKind::StringTooLong, i));
                    }
                    decoded.escaped(c, &input[i..next]);
                    run_start = next;
                }
                Some(_) => return Err(self.err(JsonErrorKind::ControlCharacter, i)),
                None => return Err(self.err(JsonErrorKind::UnexpectedEnd, i)),
            }
        }
    }

    /// Captures the string starting at the opening quote into `out` in the encoder's form;
    /// its decoded length.
    fn capture_string(&mut self, out: &mut Vec<u8>) -> Result<usize, JsonError> {
        let from = self.pos;
        let mut measure = Measure { len: 0, exact: true };
        self.string_into(&mut measure)?;
        if measure.exact {
            out.extend_from_slice(&self.input[from..self.pos]);
        } else {
            // Rare (an escape we would not write, a literal line separator): decode it again
            // and write it our way.
            self.pos = from;
            let mut decoded = String::new();
            self.string_into(&mut decoded)?;
            write_string(&decoded, out);
        }
        Ok(measure.len)
    }

    /// The next value of an open container of a capture starts here: count it as `run` does.
    fn capture_next(&mut self, shape: &mut Shape) -> Result<(), JsonError> {
        self.skip_ws();
        self.values += 1;
        if self.values > self.limits.max_values {
            return Err(self.err(JsonErrorKind::TooManyValues, self.pos));
        }
        shape.values += 1;
        Ok(())
    }

    /// Captures an object key and its `:` into `out`.
    fn capture_key(
        &mut self,
        out: &mut Vec<u8>,
        keys: &mut CapturedKeys,
        shape: &mut Shape,
    ) -> Result<(), JsonError> {
        self.key_start()?;
        let at = self.pos;
        let from = out.len();
        let len = self.capture_string(out)?;
        shape.string_bytes = shape.string_bytes.max(len);
        keys.push(CapturedKey { at, encoded: from..out.len() });
        self.key_end()?;
        out.push(b':');
        Ok(())
    }

    /// The value starting here, `open` containers deep and already counted, as a fragment (see
    /// [`parse_with_raw`]). Mirrors `run` step by step, so every error and bound is the same;
    /// only nothing is built but the fragment's bytes.
    fn capture(&mut self, open: usize) -> Result<RawJson, JsonError> {
        let mut out = Vec::with_capacity(self.input.len() - self.pos);
        let mut shape = Shape { depth: 0, values: 1, members: 0, string_bytes: 0 };
        let mut stack: Stack<Open, 4> = Stack::new();
        let mut keys: CapturedKeys = Stack::new();
        'value: loop {
            let start = self.pos;
            match self.input.get(start) {
                None => return Err(self.err(JsonErrorKind::UnexpectedEnd, start)),
                Some(&bracket @ (b'{' | b'[')) => {
                    let object = bracket == b'{';
                    self.open(open + stack.len(), start)?;
                    out.push(bracket);
                    shape.depth = shape.depth.max(stack.len() + 1);
                    self.skip_ws();
                    let close = if object { b'}' } else { b']' };
                    if self.eat(close) {
                        out.push(close);
                    } else {
                        self.check_members(0)?;
                        stack.push(Open { object, members: 0, keys_from: keys.len() });
                        if object {
                            self.capture_key(&mut out, &mut keys, &mut shape)?;
                        }
                        self.capture_next(&mut shape)?;
                        continue 'value;
                    }
                }
                Some(b'"') => {
                    let len = self.capture_string(&mut out)?;
                    shape.string_bytes = shape.string_bytes.max(len);
                }
                Some(b'-' | b'0'..=b'9') => {
                    let len = self.number_len()?;
                    out.extend_from_slice(&self.input[start..start + len]);
                    self.pos += len;
                }
                Some(b'+' | b'.') => return Err(self.err(JsonErrorKind::InvalidNumber, start)),
                Some(&first @ (b't' | b'f' | b'n')) => {
                    let word: &[u8] = match first {
                        b't' => b"true",
                        b'f' => b"false",
                        _ => b"null",
                    };
                    self.literal(word, Value::Null)?;
                    out.extend_from_slice(word);
                }
                Some(_) => return Err(self.unexpected(start, JsonErrorKind::UnexpectedByte)),
            }
            // A value is complete: close the containers that end here.
            loop {
                let Some(top) = stack.last_mut() else { break 'value };
                top.members += 1;
                self.skip_ws();
                let at = self.pos;
                match self.input.get(at) {
                    Some(b',') => {
                        self.pos += 1;
                        out.push(b',');
                        self.skip_ws();
                        self.check_members(top.members)?;
                        if top.object {
                            let key_at = self.pos;
                            self.capture_key(&mut out, &mut keys, &mut shape)?;
                            let own = &keys[top.keys_from..];
                            if top.members < PAIRWISE_KEYS
                                && let Some((key, earlier)) = own.split_last()
                                && earlier
                                    .iter()
                                    .any(|k| out[k.encoded.clone()] == out[key.encoded.clone()])
                            {
                                return Err(self.err(JsonErrorKind::DuplicateKey, key_at));
                            }
                        }
                        self.capture_next(&mut shape)?;
                        continue 'value;
                    }
                    Some(b']') if !top.object => self.pos += 1,
                    Some(b'}') if top.object => {
                        self.pos += 1;
                        let own = &keys[top.keys_from..];
                        // Objects past the pairwise size were not checked per key.
                        if top.members > PAIRWISE_KEYS
                            && let Some(i) =
                                first_repeat(own.len(), |i| &out[own[i].encoded.clone()])
                        {
                            return Err(self.err(JsonErrorKind::DuplicateKey, own[i].at));
                        }
                        keys.truncate(top.keys_from);
                    }
                    _ => return Err(self.after_value(at)),
                }
                out.push(if top.object { b'}' } else { b']' });
                shape.members = shape.members.max(top.members);
                stack.pop();
            }
        }
        // The buffer was sized for the rest of the input; give the room back only when most
        // of it is unused (a `realloc` per fragment otherwise).
        if out.capacity() / 2 > out.len() {
            out.shrink_to_fit();
        }
        Ok(RawJson::from_encoded(shape, out))
    }

    /// Decodes the escape whose backslash is at `at`: the character and the offset after it.
    fn escape(&self, at: usize) -> Result<(char, usize), JsonError> {
        let c = match self.input.get(at + 1) {
            None => return Err(self.err(JsonErrorKind::UnexpectedEnd, at + 1)),
            Some(b'"') => '"',
            Some(b'\\') => '\\',
            Some(b'/') => '/',
            Some(b'b') => '\u{8}',
            Some(b'f') => '\u{c}',
            Some(b'n') => '\n',
            Some(b'r') => '\r',
            Some(b't') => '\t',
            Some(b'u') => return self.unicode_escape(at),
            Some(_) => return Err(self.err(JsonErrorKind::InvalidEscape, at)),
        };
        Ok((c, at + 2))
    }

    /// `\uXXXX`, or a `\uD8xx\uDCxx` surrogate pair, at `at`.
    fn unicode_escape(&self, at: usize) -> Result<(char, usize), JsonError> {
        let high = self.hex4(at, at + 2)?;
        let code = match high {
            0xD800..=0xDBFF => {
                let rest = &self.input[at + 6..];
                if rest.len() < 2 && b"\\u".starts_with(rest) {
                    return Err(self.err(JsonErrorKind::UnexpectedEnd, self.input.len()));
                }
                if !rest.starts_with(b"\\u") {
                    return Err(self.err(JsonErrorKind::LoneSurrogate, at));
                }
                let low = self.hex4(at + 6, at + 8)?;
                if !(0xDC00..=0xDFFF).contains(&low) {
                    return Err(self.err(JsonErrorKind::LoneSurrogate, at));
                }
                let code = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00);
                let c = char::from_u32(code)
                    .ok_or_else(|| self.err(JsonErrorKind::LoneSurrogate, at))?;
                return Ok((c, at + 12));
            }
            0xDC00..=0xDFFF => return Err(self.err(JsonErrorKind::LoneSurrogate, at)),
            code => code,
        };
        let c = char::from_u32(code).ok_or_else(|| self.err(JsonErrorKind::LoneSurrogate, at))?;
        Ok((c, at + 6))
    }

    /// Four hex digits at `digits` of the escape whose backslash is at `escape`.
    fn hex4(&self, escape: usize, digits: usize) -> Result<u32, JsonError> {
        let mut code = 0;
        for i in digits..digits + 4 {
            let Some(&b) = self.input.get(i) else {
                return Err(self.err(JsonErrorKind::UnexpectedEnd, self.input.len()));
            };
            let d = match b {
                b'0'..=b'9' => b - b'0',
                b'a'..=b'f' => b - b'a' + 10,
                b'A'..=b'F' => b - b'A' + 10,
                _ => return Err(self.err(JsonErrorKind::InvalidEscape, escape)),
            };
            code = code * 16 + u32::from(d);
        }
        Ok(code)
    }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use alloc::string::String;
    use alloc::vec::Vec;
    use alloc::{format, vec};

    use super::*;
    use crate::encode;

    fn ok(input: &str) -> Value {
        parse(input.as_bytes(), &Limits::DEFAULT).unwrap_or_else(|e| panic!("{input:?}: {e}"))
    }

    fn kind(input: &[u8]) -> JsonErrorKind {
        kind_with(input, &Limits::DEFAULT)
    }

    fn kind_with(input: &[u8], limits: &Limits) -> JsonErrorKind {
        match parse(input, limits) {
            Ok(v) => panic!("{:?} accepted as {v:?}", String::from_utf8_lossy(input)),
            Err(e) => e.kind(),
        }
    }

    fn err(input: &[u8]) -> JsonError {
        parse(input, &Limits::DEFAULT).unwrap_err()
    }

    #[test]
    fn accepts_every_json_type_with_whitespace() {
        let v = ok(" \t\r\n{\"a\" : [ 1 , -2.5e3 , true , false , null , \"s\" , {} , [] ] } \n");
        let a = v.get("a").unwrap().as_array().unwrap();
        assert_eq!(a.len(), 8);
        assert_eq!(a[1].as_number().unwrap().as_str(), "-2.5e3");
        assert_eq!(ok("\"x\""), Value::from("x"));
        assert_eq!(ok("0"), Value::from(0u64));
        assert_eq!(ok("null"), Value::Null);
    }

    #[test]
    fn numbers_keep_their_exact_token() {
        for token in ["123456789012345678901234567890", "1e400", "-0", "1.0", "0.1e1", "1E+2"] {
            let v = ok(token);
            assert_eq!(v.as_number().unwrap().as_str(), token);
            assert_eq!(encode(&v, &Limits::DEFAULT).unwrap(), token.as_bytes());
        }
        let v = ok(r#"{"id":123456789012345678901234567890}"#);
        assert_eq!(
            encode(&v, &Limits::DEFAULT).unwrap(),
            br#"{"id":123456789012345678901234567890}"#
        );
    }

    #[test]
    fn rejects_bad_numbers() {
        for bad in [
            "012",
            "+1",
            ".5",
            "1.",
            "1e",
            "1e+",
            "-",
            "-a",
            "-Infinity",
            "1.5.2",
            "[01]",
            "[1.]",
            "1e5e5",
            "--1",
        ] {
            assert_eq!(kind(bad.as_bytes()), JsonErrorKind::InvalidNumber, "{bad}");
        }
        assert_eq!(kind(b"0x10"), JsonErrorKind::TrailingData);
        for bad in ["NaN", "Infinity", "[NaN]"] {
            assert_eq!(kind(bad.as_bytes()), JsonErrorKind::UnexpectedByte, "{bad}");
        }
    }

    #[test]
    fn hundred_thousand_digit_number_is_accepted() {
        let mut doc = String::from("{\"n\":");
        doc.extend(core::iter::repeat_n('7', 100_000));
        doc.push('}');
        let v = ok(&doc);
        assert_eq!(v.get("n").unwrap().as_number().unwrap().as_str().len(), 100_000);
    }

    #[test]
    fn escapes_decode() {
        assert_eq!(ok(r#""\"\\\/\b\f\n\r\t""#), Value::from("\"\\/\u{8}\u{c}\n\r\t"));
        assert_eq!(ok(r#""\u0041\u00e9\u20AC""#), Value::from("Aé€"));
        assert_eq!(ok(r#""\ud83d\ude00""#), Value::from("😀"));
        assert_eq!(ok(r#""\u0000""#), Value::from("\0"));
        assert_eq!(ok("\"plain é 😀 text\""), Value::from("plain é 😀 text"));
    }

    #[test]
    fn rejects_bad_escapes() {
        for bad in [r#""\x""#, r#""\u12G4""#, r#""\U0041""#, r#""\'""#, r#""\ ""#] {
            assert_eq!(kind(bad.as_bytes()), JsonErrorKind::InvalidEscape, "{bad}");
        }
        assert_eq!(kind(br#""\u12"#), JsonErrorKind::UnexpectedEnd);
        assert_eq!(kind(br#""\"#), JsonErrorKind::UnexpectedEnd);
    }

    #[test]
    fn rejects_lone_and_inverted_surrogates_in_keys_and_values() {
        for s in [
            r"\ud800",
            r"\udc00",
            r"\ud800\u0041",
            r"\udc00\ud800",
            r"\ud800\ud800",
            r"\ud800x",
            r"\uDBFF\uE000",
        ] {
            assert_eq!(kind(format!("\"{s}\"").as_bytes()), JsonErrorKind::LoneSurrogate, "{s}");
            assert_eq!(kind(format!("{{\"{s}\":1}}").as_bytes()), JsonErrorKind::LoneSurrogate);
        }
    }

    #[test]
    fn valid_surrogate_pair_round_trips_byte_exactly() {
        let v = ok(r#"{"text":"\ud83d\ude00"}"#);
        assert_eq!(v.get("text").unwrap().as_str().unwrap().as_bytes(), "😀".as_bytes());
        let out = encode(&v, &Limits::DEFAULT).unwrap();
        assert_eq!(out, "{\"text\":\"😀\"}".as_bytes());
        assert_eq!(ok(core::str::from_utf8(&out).unwrap()), v);
    }

    #[test]
    fn rejects_invalid_utf8_in_values_keys_and_between_tokens() {
        let cases: [&[u8]; 10] = [
            b"\"\xff\"",
            b"\"\xc0\xaf\"",
            b"\"\xed\xa0\x80\"",
            b"\"\xe2\x82\"",
            b"\"\xe2\x82",
            b"{\"\xc0\xaf\":1}",
            b"{\"a\":1,\xff\"b\":2}",
            b"[1,\xff]",
            b"\xff",
            b"\xf8\x88\x80\x80\x80",
        ];
        for c in cases {
            assert_eq!(kind(c), JsonErrorKind::InvalidUtf8, "{c:?}");
        }
        assert_eq!(err(b"\"ab\xed\xa0\x80\"").offset(), 3);
    }

    #[test]
    fn rejects_a_byte_order_mark() {
        assert_eq!(kind(b"\xef\xbb\xbf{}"), JsonErrorKind::UnexpectedByte);
    }

    #[test]
    fn rejects_control_characters_in_strings() {
        for b in 0u8..0x20 {
            assert_eq!(kind(&[b'"', b, b'"']), JsonErrorKind::ControlCharacter, "{b}");
        }
        assert_eq!(kind(b"\"a\nb\""), JsonErrorKind::ControlCharacter);
        ok("\"\u{7f}\"");
    }

    #[test]
    fn rejects_structural_errors() {
        for (bad, k) in [
            ("", JsonErrorKind::UnexpectedEnd),
            ("   ", JsonErrorKind::UnexpectedEnd),
            ("[1,]", JsonErrorKind::UnexpectedByte),
            ("{\"a\":1,}", JsonErrorKind::UnexpectedByte),
            ("[1 2]", JsonErrorKind::UnexpectedByte),
            ("{\"a\" 1}", JsonErrorKind::UnexpectedByte),
            ("{a:1}", JsonErrorKind::UnexpectedByte),
            ("{'a':1}", JsonErrorKind::UnexpectedByte),
            ("[1", JsonErrorKind::UnexpectedEnd),
            ("{\"a\":1", JsonErrorKind::UnexpectedEnd),
            ("{\"a\"", JsonErrorKind::UnexpectedEnd),
            ("\"abc", JsonErrorKind::UnexpectedEnd),
            ("tru", JsonErrorKind::UnexpectedEnd),
            ("trUe", JsonErrorKind::UnexpectedByte),
            ("nul", JsonErrorKind::UnexpectedEnd),
            ("{} {}", JsonErrorKind::TrailingData),
            ("1 2", JsonErrorKind::TrailingData),
            ("[]]", JsonErrorKind::TrailingData),
            ("truex", JsonErrorKind::TrailingData),
            ("/* c */ 1", JsonErrorKind::UnexpectedByte),
            ("\u{a0}1", JsonErrorKind::UnexpectedByte),
            ("[,1]", JsonErrorKind::UnexpectedByte),
            ("{,}", JsonErrorKind::UnexpectedByte),
        ] {
            assert_eq!(kind(bad.as_bytes()), k, "{bad:?}");
        }
        assert_eq!(err(b"[1,]").offset(), 3);
        assert_eq!(err(b"{} x").offset(), 3);
    }

    #[test]
    fn rejects_duplicate_keys_never_first_or_last_wins() {
        let cases = [
            r#"{"jsonrpc":"2.0","id":1,"method":"actions/list","method":"actions/execute"}"#,
            r#"{"id":1,"id":2}"#,
            r#"{"method":"a","\u006dethod":"b"}"#,
            r#"{"params":{"input":{"x":1,"x":1}}}"#,
            r#"{"a":{},"b":[],"a":null}"#,
        ];
        for c in cases {
            assert_eq!(kind(c.as_bytes()), JsonErrorKind::DuplicateKey, "{c}");
        }
        assert_eq!(err(br#"{"id":1,"id":2}"#).offset(), 8);
        // The same key in sibling objects is fine.
        ok(r#"[{"a":1},{"a":2}]"#);
    }

    #[test]
    fn duplicate_keys_in_large_objects_name_the_repeat() {
        for size in [15, 16, 17, 40, 4096] {
            let mut members: Vec<String> = (0..size).map(|i| format!("\"k{i}\":{i}")).collect();
            let doc = format!("{{{}}}", members.join(","));
            assert_eq!(ok(&doc).as_object().unwrap().len(), size);
            // Repeat a key at the end (after the pairwise window for big objects).
            members.push(String::from("\"k3\":0"));
            let mut limits = Limits::DEFAULT;
            limits.max_members = size + 1;
            let doc = format!("{{{}}}", members.join(","));
            let e = parse(doc.as_bytes(), &limits).unwrap_err();
            assert_eq!(e.kind(), JsonErrorKind::DuplicateKey, "{size}");
            assert_eq!(e.offset(), doc.rfind("\"k3\"").unwrap(), "{size}");
            // An escaped spelling of an earlier key in a big object.
            let doc = format!("{{{},\"\\u006b1\":0}}", members[..size].join(","));
            assert_eq!(kind_with(doc.as_bytes(), &limits), JsonErrorKind::DuplicateKey);
        }
    }

    fn nested(depth: usize) -> String {
        let mut s = "[".repeat(depth);
        s.push_str(&"]".repeat(depth));
        s
    }

    #[test]
    fn depth_bound_at_limit_and_over() {
        ok(&nested(32));
        assert_eq!(kind(nested(33).as_bytes()), JsonErrorKind::TooDeep);
        assert_eq!(err(nested(33).as_bytes()).offset(), 32);
        let mut objects = "{\"a\":".repeat(32);
        objects.push('1');
        objects.push_str(&"}".repeat(32));
        ok(&objects);
        let deeper = format!("{{\"a\":{objects}}}");
        assert_eq!(kind(deeper.as_bytes()), JsonErrorKind::TooDeep);
        let limits = Limits { max_depth: 3, ..Limits::DEFAULT };
        assert_eq!(
            kind_with(b"[[{}]]", &Limits { max_depth: 2, ..Limits::DEFAULT }),
            JsonErrorKind::TooDeep
        );
        parse(b"[[{}]]", &limits).unwrap();
        assert_eq!(
            kind_with(b"[]", &Limits { max_depth: 0, ..Limits::DEFAULT }),
            JsonErrorKind::TooDeep
        );
    }

    #[test]
    fn hundred_thousand_brackets_do_not_overflow_a_small_stack() {
        let handle = std::thread::Builder::new()
            .stack_size(64 * 1024)
            .spawn(|| {
                let mut open = vec![b'['; 100_000];
                open.push(b'\n');
                let deep = parse(&open, &Limits::DEFAULT).unwrap_err();
                // Even with the depth bound lifted, the parser itself never recurses.
                let unlimited = Limits { max_depth: usize::MAX, ..Limits::DEFAULT };
                let end = parse(&open, &unlimited).unwrap_err();
                (deep, end)
            })
            .unwrap();
        let (deep, end) = handle.join().unwrap();
        assert_eq!(deep, JsonError::new(JsonErrorKind::TooDeep, 32));
        assert_eq!(end.kind(), JsonErrorKind::TooManyValues);
    }

    #[test]
    fn value_count_bound_at_limit_and_over() {
        // 16384 values: the array itself and 16383 elements.
        let at = format!("[{}]", vec!["0"; 16383].join(","));
        let limits = Limits { max_members: usize::MAX, ..Limits::DEFAULT };
        parse(at.as_bytes(), &limits).unwrap();
        let over = format!("[{}]", vec!["0"; 16384].join(","));
        let e = parse(over.as_bytes(), &limits).unwrap_err();
        assert_eq!(e.kind(), JsonErrorKind::TooManyValues);
        assert_eq!(e.offset(), over.len() - 2);
        // Counted as reached: the error comes before the rest of the input is looked at.
        let mut early = over.clone();
        early.truncate(over.len() - 1);
        early.push_str(",\u{1}");
        assert_eq!(kind_with(early.as_bytes(), &limits), JsonErrorKind::TooManyValues);
    }

    #[test]
    fn member_bound_at_limit_and_over() {
        let limits = Limits::DEFAULT;
        let at = format!("[{}]", vec!["0"; 4096].join(","));
        parse(at.as_bytes(), &limits).unwrap();
        let over = format!("[{}]", vec!["0"; 4097].join(","));
        assert_eq!(kind(over.as_bytes()), JsonErrorKind::TooManyMembers);
        assert_eq!(err(over.as_bytes()).offset(), over.len() - 2);
        let members: Vec<String> = (0..4097).map(|i| format!("\"{i}\":0")).collect();
        let at = format!("{{{}}}", members[..4096].join(","));
        parse(at.as_bytes(), &limits).unwrap();
        let over = format!("{{{}}}", members.join(","));
        assert_eq!(kind(over.as_bytes()), JsonErrorKind::TooManyMembers);
        let none = Limits { max_members: 0, ..Limits::DEFAULT };
        parse(b"[]", &none).unwrap();
        parse(b"{}", &none).unwrap();
        assert_eq!(kind_with(b"[1]", &none), JsonErrorKind::TooManyMembers);
        assert_eq!(kind_with(b"{\"a\":1}", &none), JsonErrorKind::TooManyMembers);
    }

    #[test]
    fn string_bound_counts_decoded_bytes() {
        let max = 256 * 1024;
        let plain = |n: usize| format!("\"{}\"", "a".repeat(n));
        ok(&plain(max));
        assert_eq!(kind(plain(max + 1).as_bytes()), JsonErrorKind::StringTooLong);
        assert_eq!(err(plain(max + 1).as_bytes()).offset(), 1 + max);
        // `\u00e9` is 6 input bytes but 2 decoded bytes: the decoded length is what counts.
        let escaped = |pairs: usize, tail: &str| format!("\"{}{tail}\"", "\\u00e9".repeat(pairs));
        // 786 KiB of escapes: within the 1 MiB message bound, so only the string bound applies.
        let limits = Limits::DEFAULT;
        parse(escaped(max / 2, "").as_bytes(), &limits).unwrap();
        let e = parse(escaped(max / 2, "a").as_bytes(), &limits).unwrap_err();
        assert_eq!(e.kind(), JsonErrorKind::StringTooLong);
        let e = parse(escaped(max / 2, "\\n").as_bytes(), &limits).unwrap_err();
        assert_eq!(e.kind(), JsonErrorKind::StringTooLong);
        // Multi-byte characters count by their UTF-8 length.
        let small = Limits { max_string_bytes: 4, ..Limits::DEFAULT };
        parse("\"é€\"".as_bytes(), &Limits { max_string_bytes: 5, ..Limits::DEFAULT }).unwrap();
        assert_eq!(kind_with("\"é€\"".as_bytes(), &small), JsonErrorKind::StringTooLong);
        assert_eq!(kind_with(br#""\ud83d\ude00x""#, &small), JsonErrorKind::StringTooLong);
        parse(br#""\ud83d\ude00""#, &small).unwrap();
        // Keys are strings too.
        assert_eq!(kind_with(br#"{"abcde":1}"#, &small), JsonErrorKind::StringTooLong);
    }

    #[test]
    fn huge_string_is_refused_at_the_bound_not_the_end() {
        let limits = Limits { max_bytes: usize::MAX, max_string_bytes: 10, ..Limits::DEFAULT };
        // Invalid UTF-8 far past the bound is never looked at.
        let mut doc = vec![b'"'; 1];
        doc.extend(core::iter::repeat_n(b'a', 100));
        doc.push(0xff);
        assert_eq!(
            parse(&doc, &limits).unwrap_err(),
            JsonError::new(JsonErrorKind::StringTooLong, 11)
        );
    }

    #[test]
    fn size_bound_is_checked_first() {
        let max = 1024 * 1024;
        let at = format!("\"{}\"", "a".repeat(max - 2));
        let limits = Limits { max_string_bytes: usize::MAX, ..Limits::DEFAULT };
        parse(at.as_bytes(), &limits).unwrap();
        let over = format!("\"{}\"", "a".repeat(max - 1));
        assert_eq!(
            parse(over.as_bytes(), &limits).unwrap_err(),
            JsonError::new(JsonErrorKind::TooLarge, max)
        );
        // Whitespace counts.
        let mut padded = at.clone();
        padded.push(' ');
        assert_eq!(parse(padded.as_bytes(), &limits).unwrap_err().kind(), JsonErrorKind::TooLarge);
        assert_eq!(
            kind_with(b"[1, 2]", &Limits { max_bytes: 5, ..Limits::DEFAULT }),
            JsonErrorKind::TooLarge
        );
        parse(b"[1,2]", &Limits { max_bytes: 5, ..Limits::DEFAULT }).unwrap();
    }

    #[test]
    fn parse_encode_parse_is_identity() {
        let docs = [
            r#"{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"actions/execute","params":{"action":"document.text.replace","input":{"text":"a\"b\\c\n\u2028\u0001é😀"},"expectedRevision":1e3}}"#,
            r#"[null,true,false,-0,1.0,0.1e1,"",[],{},[[[]]],{"":{"":""}}]"#,
            "\"\\u2029\"",
        ];
        for doc in docs {
            let v = ok(doc);
            let out = encode(&v, &Limits::DEFAULT).unwrap();
            assert!(!out.contains(&b'\n') && !out.contains(&b'\r'));
            assert_eq!(ok(core::str::from_utf8(&out).unwrap()), v);
        }
    }
}
