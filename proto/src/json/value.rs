//! The JSON value model: objects keep insertion order and unique keys, numbers keep their token.

use alloc::string::String;
use alloc::vec::Vec;

use super::Number;

/// A strict JSON value. Produced by [`parse`](super::parse), written by
/// [`encode`](super::encode); typed messages map onto it with
/// [`from_value`](super::from_value) / [`to_value`](super::to_value).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Value {
    /// `null`
    #[default]
    Null,
    /// `true` / `false`
    Bool(bool),
    /// A number, kept as its exact token.
    Number(Number),
    /// A string (already unescaped, valid UTF-8).
    String(String),
    /// An array.
    Array(Vec<Value>),
    /// An object with unique keys in document order.
    Object(Map),
}

impl Value {
    /// The member `key` if this is an object that has it.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.as_object().and_then(|m| m.get(key))
    }
    /// The object, if this is one.
    pub fn as_object(&self) -> Option<&Map> {
        match self {
            Value::Object(m) => Some(m),
            _ => None,
        }
    }
    /// The array, if this is one.
    pub fn as_array(&self) -> Option<&[Value]> {
        match self {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }
    /// The string, if this is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }
    /// The boolean, if this is one.
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }
    /// The number, if this is one.
    pub fn as_number(&self) -> Option<&Number> {
        match self {
            Value::Number(n) => Some(n),
            _ => None,
        }
    }
    /// The exact `u64` value of an integral number (`1.0` and `1e3` count; `1.5` does not).
    pub fn as_u64(&self) -> Option<u64> {
        self.as_number().and_then(Number::to_u64)
    }
    /// The exact `i64` value of an integral number.
    pub fn as_i64(&self) -> Option<i64> {
        self.as_number().and_then(Number::to_i64)
    }
    /// True for `null`.
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }
    /// The JSON type name (`"null"`, `"boolean"`, `"number"`, `"string"`, `"array"`, `"object"`),
    /// for error messages.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "boolean",
            Value::Number(_) => "number",
            Value::String(_) => "string",
            Value::Array(_) => "array",
            Value::Object(_) => "object",
        }
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Self {
        Value::Bool(b)
    }
}
impl From<String> for Value {
    fn from(s: String) -> Self {
        Value::String(s)
    }
}
impl From<&str> for Value {
    fn from(s: &str) -> Self {
        Value::String(String::from(s))
    }
}
impl From<u64> for Value {
    fn from(n: u64) -> Self {
        Value::Number(Number::from(n))
    }
}
impl From<i64> for Value {
    fn from(n: i64) -> Self {
        Value::Number(Number::from(n))
    }
}
impl From<u32> for Value {
    fn from(n: u32) -> Self {
        Value::Number(Number::from(u64::from(n)))
    }
}
impl From<Map> for Value {
    fn from(m: Map) -> Self {
        Value::Object(m)
    }
}
impl From<Vec<Value>> for Value {
    fn from(a: Vec<Value>) -> Self {
        Value::Array(a)
    }
}

/// An object: members in insertion order, keys unique. Lookups are linear, which is the fast
/// choice for the small objects of a protocol (a handful of members); the parser checks
/// uniqueness pairwise for small objects and by sorting the keys of large ones.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Map {
    entries: Vec<(String, Value)>,
}

impl Map {
    /// An empty object.
    pub const fn new() -> Self {
        Map { entries: Vec::new() }
    }
    /// An empty object with room for `n` members.
    pub fn with_capacity(n: usize) -> Self {
        Map { entries: Vec::with_capacity(n) }
    }
    /// Builds a map from entries the caller guarantees to have unique keys (the parser checks
    /// before calling this).
    pub(crate) fn from_unique_entries(entries: Vec<(String, Value)>) -> Self {
        Map { entries }
    }
    /// The members in order, for the encoder's explicit stack (which needs a nameable
    /// iterator type).
    pub(super) fn entries(&self) -> &[(String, Value)] {
        &self.entries
    }
    /// Number of members.
    pub fn len(&self) -> usize {
        self.entries.len()
    }
    /// True when there are no members.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
    /// The value of `key`.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.entries.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }
    /// The value of `key`, mutably.
    pub fn get_mut(&mut self, key: &str) -> Option<&mut Value> {
        self.entries.iter_mut().find(|(k, _)| k == key).map(|(_, v)| v)
    }
    /// True when `key` is present.
    pub fn contains_key(&self, key: &str) -> bool {
        self.get(key).is_some()
    }
    /// Sets `key` to `value`, replacing (in place) and returning an earlier value of that key.
    pub fn insert(&mut self, key: impl Into<String>, value: impl Into<Value>) -> Option<Value> {
        let key = key.into();
        let value = value.into();
        match self.get_mut(&key) {
            Some(slot) => Some(core::mem::replace(slot, value)),
            None => {
                self.entries.push((key, value));
                None
            }
        }
    }
    /// Removes `key`, keeping the order of the others.
    pub fn remove(&mut self, key: &str) -> Option<Value> {
        let i = self.entries.iter().position(|(k, _)| k == key)?;
        Some(self.entries.remove(i).1)
    }
    /// Members in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&str, &Value)> {
        self.entries.iter().map(|(k, v)| (k.as_str(), v))
    }
    /// Keys in order.
    pub fn keys(&self) -> impl ExactSizeIterator<Item = &str> {
        self.entries.iter().map(|(k, _)| k.as_str())
    }
}

impl IntoIterator for Map {
    type Item = (String, Value);
    type IntoIter = alloc::vec::IntoIter<(String, Value)>;
    fn into_iter(self) -> Self::IntoIter {
        self.entries.into_iter()
    }
}

impl FromIterator<(String, Value)> for Map {
    /// Later duplicates replace earlier ones, as [`Map::insert`] does.
    fn from_iter<I: IntoIterator<Item = (String, Value)>>(iter: I) -> Self {
        let mut m = Map::new();
        for (k, v) in iter {
            m.insert(k, v);
        }
        m
    }
}

/// Objects up to this many members are checked for duplicate keys pairwise: for the handful of
/// members a protocol object has, that beats any index.
pub(super) const PAIRWISE_KEYS: usize = 16;

/// The index of the first member whose key already occurred earlier, if any. Pairwise for
/// small objects, sort-based (O(n log n), no hashing, so no collision attacks) for large ones.
pub(super) fn first_duplicate(entries: &[(String, Value)]) -> Option<usize> {
    first_repeat(entries.len(), |i| entries[i].0.as_str())
}

/// [`first_duplicate`] over `len` keys given by `key` (anything whose equality is the keys').
pub(super) fn first_repeat<'k, K: Ord + ?Sized + 'k>(
    len: usize,
    key: impl Fn(usize) -> &'k K,
) -> Option<usize> {
    if len <= PAIRWISE_KEYS {
        return (1..len).find(|&i| (0..i).any(|j| key(j) == key(i)));
    }
    let mut order: Vec<usize> = (0..len).collect();
    order.sort_unstable_by(|&a, &b| key(a).cmp(key(b)).then(a.cmp(&b)));
    // After sorting by (key, position), the later member of each equal pair is a repeat; the
    // earliest repeat is where a streaming check would have stopped.
    order.windows(2).filter(|w| key(w[0]) == key(w[1])).map(|w| w[1]).min()
}
