//! What the daemon carries on without looking inside: a JSON value as a tree, as the fragment
//! it arrived or was encoded as ([`RawJson`]), or an array or object holding either. An app
//! only ever sees trees ([`Value`]): decoding gives [`Payload::Value`], and
//! [`Payload::into_value`] turns any payload into its tree.
//!
//! The encoder writes a payload as it writes a tree (`encode.rs`), its fragments copied
//! verbatim with every bound checked on the whole document, as if their trees stood there.

use alloc::borrow::Cow;
use alloc::string::String;
use alloc::vec::Vec;

use super::{Map, RawJson, Value};

/// A JSON value as the daemon carries it (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Payload {
    /// A tree.
    Value(Value),
    /// A fragment, written verbatim. It equals only the same fragment, not the tree it was
    /// encoded from.
    Raw(RawJson),
    /// An array some of whose elements are fragments.
    Array(Vec<Payload>),
    /// An object, members in order and keys unique, some of whose members are fragments.
    Object(Vec<(String, Payload)>),
}

impl Payload {
    /// The object of `members`, which the caller gives with unique keys.
    pub fn object<const N: usize>(members: [(&str, Payload); N]) -> Payload {
        Payload::Object(members.into_iter().map(|(k, v)| (String::from(k), v)).collect())
    }

    /// The member `key` of an object, when it is a tree (a fragment is not looked into).
    pub fn get(&self, key: &str) -> Option<&Value> {
        match self {
            Payload::Value(value) => value.get(key),
            Payload::Object(members) => match members.iter().find(|(k, _)| k == key) {
                Some((_, Payload::Value(value))) => Some(value),
                _ => None,
            },
            Payload::Raw(_) | Payload::Array(_) => None,
        }
    }

    /// Whether this is an object with a member `key` (of any kind).
    pub fn has(&self, key: &str) -> bool {
        match self {
            Payload::Value(value) => value.get(key).is_some(),
            Payload::Object(members) => members.iter().any(|(k, _)| k == key),
            Payload::Raw(_) | Payload::Array(_) => false,
        }
    }

    /// Sets member `key` of an object to `value`, replacing an earlier one in place; nothing
    /// when this is no object.
    pub fn insert(&mut self, key: &str, value: impl Into<Payload>) {
        let value = value.into();
        if let (Payload::Value(Value::Object(map)), Payload::Value(tree)) = (&mut *self, &value) {
            map.insert(key, tree.clone());
            return;
        }
        let members = match self {
            Payload::Object(members) => members,
            Payload::Value(Value::Object(map)) => {
                let map = core::mem::take(map);
                *self =
                    Payload::Object(map.into_iter().map(|(k, v)| (k, Payload::Value(v))).collect());
                let Payload::Object(members) = self else { unreachable!("just made an object") };
                members
            }
            _ => return,
        };
        match members.iter_mut().find(|(k, _)| k == key) {
            Some((_, slot)) => *slot = value,
            None => members.push((String::from(key), value)),
        }
    }

    /// The tree, borrowed when this is one ([`Payload::Value`], all an app ever decodes), else
    /// made with the fragments parsed back.
    pub fn as_value(&self) -> Cow<'_, Value> {
        match self {
            Payload::Value(value) => Cow::Borrowed(value),
            other => Cow::Owned(other.clone().into_value()),
        }
    }

    /// The tree: fragments parsed back into trees.
    pub fn into_value(self) -> Value {
        match self {
            Payload::Value(value) => value,
            Payload::Raw(raw) => raw.to_value(),
            Payload::Array(items) => {
                Value::Array(items.into_iter().map(Payload::into_value).collect())
            }
            Payload::Object(members) => {
                let mut map = Map::with_capacity(members.len());
                for (key, member) in members {
                    map.insert(key, member.into_value());
                }
                Value::Object(map)
            }
        }
    }

    /// The JSON type name, as [`Value::type_name`].
    pub fn type_name(&self) -> &'static str {
        match self {
            Payload::Value(value) => value.type_name(),
            Payload::Raw(raw) => raw.type_name(),
            Payload::Array(_) => "array",
            Payload::Object(_) => "object",
        }
    }
}

/// A payload equals a tree when it is that tree ([`Payload::Value`]); a fragment or a
/// container of fragments equals no tree.
impl PartialEq<Value> for Payload {
    fn eq(&self, other: &Value) -> bool {
        matches!(self, Payload::Value(value) if value == other)
    }
}

impl Default for Payload {
    fn default() -> Self {
        Payload::Value(Value::Null)
    }
}

impl From<RawJson> for Payload {
    fn from(raw: RawJson) -> Self {
        Payload::Raw(raw)
    }
}

impl<T: Into<Value>> From<T> for Payload {
    fn from(value: T) -> Self {
        Payload::Value(value.into())
    }
}

/// As its tree (a fragment's tree is parsed back).
impl serde::Serialize for Payload {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Payload::Value(value) => value.serialize(serializer),
            Payload::Raw(raw) => raw.to_value().serialize(serializer),
            Payload::Array(items) => items.serialize(serializer),
            Payload::Object(members) => {
                use serde::ser::SerializeMap;
                let mut map = serializer.serialize_map(Some(members.len()))?;
                for (key, member) in members {
                    map.serialize_entry(key, member)?;
                }
                map.end()
            }
        }
    }
}

/// Always a tree ([`Payload::Value`]).
impl<'de> serde::Deserialize<'de> for Payload {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Value::deserialize(deserializer).map(Payload::Value)
    }
}
