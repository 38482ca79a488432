//! Typed decoding: a `serde::Deserializer` over an owned [`Value`], and `Deserialize` for
//! [`Value`] that keeps exact number tokens.
//!
//! Numbers travel through serde as a newtype struct named [`NUMBER_TOKEN`](super::ser::NUMBER_TOKEN) that carries the
//! token as a string, and integer-typed fields convert the token exactly. This only works for
//! types whose `Deserialize` asks for what it wants: `#[serde(untagged)]`, internally or
//! adjacently tagged enums and `#[serde(flatten)]` first buffer the value in serde's private
//! `Content`, which sees the number as a string (and would lose the exact token anyway), so
//! typed messages must not use them.
//!
//! Errors carry a JSON pointer: every sequence element, map value and enum variant that fails
//! prefixes its own segment while the error travels up, so the success path pays nothing.

use alloc::borrow::ToOwned;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::fmt;

use serde::Deserialize;
use serde::de::{self, DeserializeSeed, IntoDeserializer, Unexpected, Visitor};

use super::value::first_duplicate;
use super::{Map, Number, Value};

/// A typed decoding failure: where (a JSON pointer into the decoded value) and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError {
    pointer: String,
    message: String,
}

impl DecodeError {
    /// JSON pointer (RFC 6901) of the offending value, `""` for the root.
    pub fn pointer(&self) -> &str {
        &self.pointer
    }
    /// What was wrong, e.g. `unknown field `foo`, expected one of ...`.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.pointer.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "{} at {}", self.message, self.pointer)
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for DecodeError {}

/// The error type inside serde. It is not [`DecodeError`] itself because serde requires its
/// errors to implement serde's `StdError`, which is `std::error::Error` exactly when *serde's*
/// `std` feature is on (decided by feature unification elsewhere in the build), and that would
/// clash with `DecodeError`'s own `std` impl.
#[derive(Debug)]
pub(super) struct Error {
    /// Built from the inside out: each level prefixes its segment.
    pointer: String,
    message: String,
}

impl Error {
    /// Prefixes the pointer with `/segment`, escaped per RFC 6901.
    pub(super) fn at(mut self, segment: &str) -> Self {
        let mut prefix = String::with_capacity(segment.len() + 1);
        prefix.push('/');
        for c in segment.chars() {
            match c {
                '~' => prefix.push_str("~0"),
                '/' => prefix.push_str("~1"),
                c => prefix.push(c),
            }
        }
        self.pointer.insert_str(0, &prefix);
        self
    }

    pub(super) fn at_index(self, index: usize) -> Self {
        self.at(&index.to_string())
    }

    pub(super) fn message(message: impl fmt::Display) -> Self {
        Error { pointer: String::new(), message: message.to_string() }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl serde::de::StdError for Error {}

impl de::Error for Error {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        Error::message(msg)
    }
}

impl serde::ser::Error for Error {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        Error::message(msg)
    }
}

impl From<Error> for DecodeError {
    fn from(e: Error) -> Self {
        DecodeError { pointer: e.pointer, message: e.message }
    }
}

/// Decodes a typed message from a strictly parsed value.
///
/// Integer fields convert exactly (`1.0` is 1, `1.5` and out-of-range values are errors);
/// fields of type [`Value`] keep their exact number tokens; unknown fields are rejected where
/// the type says `deny_unknown_fields`. The error's [`pointer`](DecodeError::pointer) names
/// the offending value (for an unknown field, the field itself).
///
/// ```
/// # use jfgui_proto::{from_value, parse, Limits};
/// let v = parse(br#"{"a":[1,2.5]}"#, &Limits::DEFAULT).unwrap();
/// #[derive(serde::Deserialize, Debug)]
/// struct T { a: Vec<u8> }
/// let e = from_value::<T>(v).unwrap_err();
/// assert_eq!(e.pointer(), "/a/1");
/// ```
pub fn from_value<T: serde::de::DeserializeOwned>(value: Value) -> Result<T, DecodeError> {
    T::deserialize(ValueDeserializer::new(value)).map_err(DecodeError::from)
}

/// What a value is, for "invalid type" messages.
fn unexpected(value: &Value) -> Unexpected<'_> {
    match value {
        Value::Null => Unexpected::Unit,
        Value::Bool(b) => Unexpected::Bool(*b),
        Value::Number(_) => Unexpected::Other("number"),
        Value::String(s) => Unexpected::Str(s),
        Value::Array(_) => Unexpected::Seq,
        Value::Object(_) => Unexpected::Map,
    }
}

fn invalid_type(value: &Value, expected: &dyn de::Expected) -> Error {
    de::Error::invalid_type(unexpected(value), expected)
}

/// Deserializes from an owned value.
struct ValueDeserializer(Value);

impl ValueDeserializer {
    fn new(value: Value) -> Self {
        ValueDeserializer(value)
    }
}

macro_rules! deserialize_integer {
    ($($method:ident => $visit:ident($ty:ty) via $exact:ident;)*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
            match self.0 {
                Value::Number(n) => match n.$exact().and_then(|x| <$ty>::try_from(x).ok()) {
                    Some(x) => visitor.$visit(x),
                    None => Err(de::Error::invalid_value(
                        Unexpected::Other(&alloc::format!("number {n}")),
                        &visitor,
                    )),
                },
                other => Err(invalid_type(&other, &visitor)),
            }
        }
    )*};
}

impl<'de> de::Deserializer<'de> for ValueDeserializer {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Value::Null => visitor.visit_unit(),
            Value::Bool(b) => visitor.visit_bool(b),
            Value::Number(n) => visitor.visit_newtype_struct(NumberTokenDeserializer(n)),
            Value::String(s) => visitor.visit_string(s),
            Value::Array(items) => visit_array(items, visitor),
            Value::Object(map) => visit_object(map, visitor),
        }
    }

    deserialize_integer! {
        deserialize_u8 => visit_u8(u8) via to_u64;
        deserialize_u16 => visit_u16(u16) via to_u64;
        deserialize_u32 => visit_u32(u32) via to_u64;
        deserialize_u64 => visit_u64(u64) via to_u64;
        deserialize_u128 => visit_u128(u128) via to_u128;
        deserialize_i8 => visit_i8(i8) via to_i64;
        deserialize_i16 => visit_i16(i16) via to_i64;
        deserialize_i32 => visit_i32(i32) via to_i64;
        deserialize_i64 => visit_i64(i64) via to_i64;
        deserialize_i128 => visit_i128(i128) via to_i128;
    }

    fn deserialize_f32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Value::Number(n) if n.to_f32().is_finite() => visitor.visit_f32(n.to_f32()),
            Value::Number(n) => Err(out_of_range(&n, &visitor)),
            other => Err(invalid_type(&other, &visitor)),
        }
    }

    fn deserialize_f64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Value::Number(n) if n.to_f64().is_finite() => visitor.visit_f64(n.to_f64()),
            Value::Number(n) => Err(out_of_range(&n, &visitor)),
            other => Err(invalid_type(&other, &visitor)),
        }
    }

    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Value::Bool(b) => visitor.visit_bool(b),
            other => Err(invalid_type(&other, &visitor)),
        }
    }

    fn deserialize_char<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_string(visitor)
    }

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_string(visitor)
    }

    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Value::String(s) => visitor.visit_string(s),
            other => Err(invalid_type(&other, &visitor)),
        }
    }

    fn deserialize_bytes<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_byte_buf(visitor)
    }

    fn deserialize_byte_buf<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Value::String(s) => visitor.visit_string(s),
            Value::Array(items) => visit_array(items, visitor),
            other => Err(invalid_type(&other, &visitor)),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Value::Null => visitor.visit_none(),
            other => visitor.visit_some(ValueDeserializer::new(other)),
        }
    }

    fn deserialize_unit<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Value::Null => visitor.visit_unit(),
            other => Err(invalid_type(&other, &visitor)),
        }
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.deserialize_unit(visitor)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Value::Array(items) => visit_array(items, visitor),
            other => Err(invalid_type(&other, &visitor)),
        }
    }

    fn deserialize_tuple<V: Visitor<'de>>(
        self,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Value::Object(map) => visit_object(map, visitor),
            other => Err(invalid_type(&other, &visitor)),
        }
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.deserialize_map(visitor)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        match self.0 {
            // A unit variant is its name.
            Value::String(name) => visitor.visit_enum(EnumDeserializer { name, value: None }),
            // Any other variant is an object with exactly one member, named after it.
            Value::Object(map) if map.len() == 1 => {
                let Some((name, value)) = map.into_iter().next() else {
                    return Err(de::Error::custom("an enum object needs exactly one member"));
                };
                visitor.visit_enum(EnumDeserializer { name, value: Some(value) })
            }
            Value::Object(map) => Err(de::Error::invalid_length(
                map.len(),
                &"an object with exactly one member naming the variant",
            )),
            other => Err(invalid_type(&other, &visitor)),
        }
    }

    fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_string(visitor)
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        drop(self);
        visitor.visit_unit()
    }
}

fn out_of_range(n: &Number, expected: &dyn de::Expected) -> Error {
    de::Error::invalid_value(Unexpected::Other(&alloc::format!("number {n}")), expected)
}

fn visit_array<'de, V: Visitor<'de>>(items: Vec<Value>, visitor: V) -> Result<V::Value, Error> {
    let len = items.len();
    let mut seq = SeqDeserializer { items: items.into_iter(), index: 0 };
    let value = visitor.visit_seq(&mut seq)?;
    // A visitor that stops early (a tuple of two given three elements) must not silently drop
    // the rest.
    if seq.items.len() != 0 {
        return Err(de::Error::invalid_length(len, &"fewer elements in the array"));
    }
    Ok(value)
}

fn visit_object<'de, V: Visitor<'de>>(map: Map, visitor: V) -> Result<V::Value, Error> {
    let len = map.len();
    let mut access = MapDeserializer { members: map.into_iter(), pending: None };
    let value = visitor.visit_map(&mut access)?;
    if access.members.len() != 0 {
        return Err(de::Error::invalid_length(len, &"fewer members in the object"));
    }
    Ok(value)
}

struct SeqDeserializer {
    items: alloc::vec::IntoIter<Value>,
    index: usize,
}

impl<'de> de::SeqAccess<'de> for SeqDeserializer {
    type Error = Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Error> {
        let Some(item) = self.items.next() else { return Ok(None) };
        let index = self.index;
        self.index += 1;
        seed.deserialize(ValueDeserializer::new(item)).map(Some).map_err(|e| e.at_index(index))
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.items.len())
    }
}

struct MapDeserializer {
    members: alloc::vec::IntoIter<(String, Value)>,
    /// The member whose key was just handed out; its key names the error pointer segment.
    pending: Option<(String, Value)>,
}

impl<'de> de::MapAccess<'de> for MapDeserializer {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Error> {
        let Some((key, value)) = self.members.next() else { return Ok(None) };
        // An unknown field is reported at the field itself.
        let decoded = seed.deserialize(KeyDeserializer(&key)).map_err(|e| e.at(&key))?;
        self.pending = Some((key, value));
        Ok(Some(decoded))
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Error> {
        let Some((key, value)) = self.pending.take() else {
            return Err(de::Error::custom("a map value was requested before its key"));
        };
        seed.deserialize(ValueDeserializer::new(value)).map_err(|e| e.at(&key))
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.members.len())
    }
}

/// An object key: a string, also readable as a unit enum variant or a newtype around a string.
struct KeyDeserializer<'a>(&'a str);

impl<'de> de::Deserializer<'de> for KeyDeserializer<'_> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_str(self.0)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        let key: de::value::StrDeserializer<'_, Error> = self.0.into_deserializer();
        key.deserialize_enum(name, variants, visitor)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf option unit unit_struct seq tuple tuple_struct map struct
        identifier ignored_any
    }
}

/// An enum value: the variant name and, unless it is a unit variant written as a string, the
/// variant's content.
struct EnumDeserializer {
    name: String,
    value: Option<Value>,
}

impl<'de> de::EnumAccess<'de> for EnumDeserializer {
    type Error = Error;
    type Variant = VariantDeserializer;

    fn variant_seed<S: DeserializeSeed<'de>>(
        self,
        seed: S,
    ) -> Result<(S::Value, Self::Variant), Error> {
        let variant = match self.value {
            Some(_) => seed.deserialize(KeyDeserializer(&self.name)).map_err(|e| e.at(&self.name)),
            None => seed.deserialize(KeyDeserializer(&self.name)),
        }?;
        Ok((variant, VariantDeserializer { name: self.name, value: self.value }))
    }
}

struct VariantDeserializer {
    name: String,
    value: Option<Value>,
}

impl VariantDeserializer {
    /// The content of a non-unit variant, or the error for a bare name.
    fn content(self, expected: &str) -> Result<(String, Value), Error> {
        match self.value {
            Some(value) => Ok((self.name, value)),
            None => Err(de::Error::invalid_type(Unexpected::UnitVariant, &expected)),
        }
    }
}

impl<'de> de::VariantAccess<'de> for VariantDeserializer {
    type Error = Error;

    fn unit_variant(self) -> Result<(), Error> {
        match self.value {
            None => Ok(()),
            Some(value) => {
                Err(invalid_type(&value, &"a unit variant written as a string").at(&self.name))
            }
        }
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, Error> {
        let (name, value) = self.content("a newtype variant")?;
        seed.deserialize(ValueDeserializer::new(value)).map_err(|e| e.at(&name))
    }

    fn tuple_variant<V: Visitor<'de>>(self, _len: usize, visitor: V) -> Result<V::Value, Error> {
        let (name, value) = self.content("a tuple variant")?;
        de::Deserializer::deserialize_seq(ValueDeserializer::new(value), visitor)
            .map_err(|e| e.at(&name))
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        let (name, value) = self.content("a struct variant")?;
        de::Deserializer::deserialize_map(ValueDeserializer::new(value), visitor)
            .map_err(|e| e.at(&name))
    }
}

/// The content of the [`NUMBER_TOKEN`](super::ser::NUMBER_TOKEN) newtype: the token as a string.
struct NumberTokenDeserializer(Number);

impl<'de> de::Deserializer<'de> for NumberTokenDeserializer {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_str(self.0.as_str())
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf option unit unit_struct newtype_struct seq tuple tuple_struct map
        struct enum identifier ignored_any
    }
}

impl<'de> serde::Deserialize<'de> for Value {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ValueVisitor)
    }
}

/// Rebuilds a [`Value`]. From our own deserializer numbers arrive as the [`NUMBER_TOKEN`](super::ser::NUMBER_TOKEN)
/// newtype and keep their token; from foreign deserializers they arrive as machine numbers.
struct ValueVisitor;

impl<'de> Visitor<'de> for ValueVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        Value::deserialize(d)
    }

    fn visit_bool<E: de::Error>(self, b: bool) -> Result<Value, E> {
        Ok(Value::Bool(b))
    }

    fn visit_i64<E: de::Error>(self, n: i64) -> Result<Value, E> {
        Ok(Value::Number(Number::from(n)))
    }

    fn visit_u64<E: de::Error>(self, n: u64) -> Result<Value, E> {
        Ok(Value::Number(Number::from(n)))
    }

    fn visit_i128<E: de::Error>(self, n: i128) -> Result<Value, E> {
        Ok(Value::Number(Number::from_i128(n)))
    }

    fn visit_u128<E: de::Error>(self, n: u128) -> Result<Value, E> {
        Ok(Value::Number(Number::from_u128(n)))
    }

    fn visit_f64<E: de::Error>(self, f: f64) -> Result<Value, E> {
        Number::from_f64(f)
            .map(Value::Number)
            .ok_or_else(|| E::invalid_value(Unexpected::Float(f), &"a finite number"))
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<Value, E> {
        Ok(Value::String(s.to_owned()))
    }

    fn visit_string<E: de::Error>(self, s: String) -> Result<Value, E> {
        Ok(Value::String(s))
    }

    fn visit_newtype_struct<D: serde::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        let token = String::deserialize(d)?;
        Number::from_token(&token).map(Value::Number).map_err(|_| {
            de::Error::invalid_value(Unexpected::Str(&token), &"an RFC 8259 number token")
        })
    }

    fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        // The hint comes from the other side; never trust it for more than a small allocation.
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(256));
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut entries: Vec<(String, Value)> =
            Vec::with_capacity(map.size_hint().unwrap_or(0).min(256));
        while let Some((key, value)) = map.next_entry()? {
            entries.push((key, value));
        }
        // Our own deserializer never repeats a key; a foreign one might, and a repeat must be
        // refused here as the strict parser would, never first- or last-wins.
        if let Some(i) = first_duplicate(&entries) {
            return Err(de::Error::custom(alloc::format!("duplicate key `{}`", entries[i].0)));
        }
        Ok(Value::Object(Map::from_unique_entries(entries)))
    }
}

impl<'de> serde::Deserialize<'de> for super::Map {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match Value::deserialize(deserializer)? {
            Value::Object(m) => Ok(m),
            other => Err(serde::de::Error::custom(alloc::format!(
                "expected an object, found {}",
                other.type_name()
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use alloc::boxed::Box;
    use alloc::collections::BTreeMap;
    use alloc::string::String;
    use alloc::vec;
    use alloc::vec::Vec;

    use serde::{Deserialize, Serialize};

    use super::*;
    use crate::channel::{
        AppMessage, BatchOutcome, Call, CallResult, DaemonMessage, ExecuteCall, Outcome, Reply,
        Request, TaskSnapshot, TaskState,
    };
    use crate::{ActionError, Limits, Reason, encode, parse, to_value};

    fn json(text: &str) -> Value {
        parse(text.as_bytes(), &Limits::DEFAULT).unwrap()
    }

    fn decode<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, DecodeError> {
        from_value(json(text))
    }

    #[derive(Debug, PartialEq, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Rev {
        rev: u64,
    }

    #[test]
    fn integers_convert_exactly() {
        assert_eq!(decode::<Rev>(r#"{"rev":12}"#).unwrap().rev, 12);
        assert_eq!(decode::<Rev>(r#"{"rev":1.0}"#).unwrap().rev, 1);
        assert_eq!(decode::<Rev>(r#"{"rev":1e3}"#).unwrap().rev, 1000);
        assert_eq!(decode::<Rev>(r#"{"rev":100E-2}"#).unwrap().rev, 1);
        assert_eq!(decode::<Rev>(r#"{"rev":-0}"#).unwrap().rev, 0);
        for bad in ["18446744073709551616", "-1", "12E-1", "100.5", "1e999999999", "\"1\"", "null"]
        {
            let e = decode::<Rev>(&alloc::format!(r#"{{"rev":{bad}}}"#)).unwrap_err();
            assert_eq!(e.pointer(), "/rev", "{bad}: {e}");
        }
        assert_eq!(from_value::<u8>(json("255")).unwrap(), 255);
        assert!(from_value::<u8>(json("256")).is_err());
        assert_eq!(from_value::<i8>(json("-128")).unwrap(), -128);
        assert!(from_value::<i8>(json("-129")).is_err());
        assert_eq!(from_value::<i64>(json("-9223372036854775808")).unwrap(), i64::MIN);
        assert_eq!(from_value::<u128>(json("1e38")).unwrap(), 10u128.pow(38));
        assert_eq!(from_value::<i128>(json("-1e38")).unwrap(), -(10i128.pow(38)));
        let e = from_value::<u32>(json("1.5")).unwrap_err();
        assert!(e.message().contains("number 1.5"), "{e}");
    }

    #[test]
    fn floats_and_other_scalars() {
        assert_eq!(from_value::<f64>(json("0.1")).unwrap(), 0.1);
        assert_eq!(from_value::<f32>(json("0.1")).unwrap(), 0.1f32);
        assert_eq!(from_value::<f64>(json("1")).unwrap(), 1.0);
        assert!(from_value::<f64>(json("1e400")).is_err());
        assert!(from_value::<f32>(json("1e39")).is_err());
        assert!(from_value::<bool>(json("true")).unwrap());
        assert!(from_value::<bool>(json("1")).is_err());
        assert_eq!(from_value::<char>(json("\"é\"")).unwrap(), 'é');
        assert!(from_value::<char>(json("\"ab\"")).is_err());
        assert_eq!(from_value::<String>(json("\"s\"")).unwrap(), "s");
        from_value::<()>(json("null")).unwrap();
        assert!(from_value::<()>(json("0")).is_err());
        assert_eq!(from_value::<Option<u8>>(json("null")).unwrap(), None);
        assert_eq!(from_value::<Option<u8>>(json("3")).unwrap(), Some(3));
        assert_eq!(from_value::<(u8, String)>(json("[1,\"a\"]")).unwrap(), (1, String::from("a")));
        let e = from_value::<(u8, u8)>(json("[1,2,3]")).unwrap_err();
        assert_eq!(e.pointer(), "");
        assert!(from_value::<(u8, u8, u8)>(json("[1,2]")).is_err());
        assert_eq!(from_value::<Vec<u8>>(json("[1,2]")).unwrap(), vec![1, 2]);
        let m: BTreeMap<String, u8> = from_value(json(r#"{"a":1,"b":2}"#)).unwrap();
        assert_eq!(m.len(), 2);
    }

    #[test]
    fn value_fields_keep_exact_tokens() {
        #[derive(Debug, Deserialize, Serialize)]
        struct Envelope {
            id: Value,
            params: Option<Value>,
        }
        let text = r#"{"id":123456789012345678901234567890,"params":{"a":[1e400,-0,1.0,0.1e1]}}"#;
        let env: Envelope = decode(text).unwrap();
        assert_eq!(env.id.as_number().unwrap().as_str(), "123456789012345678901234567890");
        let back = encode(&to_value(&env).unwrap(), &Limits::DEFAULT).unwrap();
        assert_eq!(back, text.as_bytes());
        let v = json(text);
        assert_eq!(from_value::<Value>(v.clone()).unwrap(), v);
        assert_eq!(from_value::<crate::Map>(v.clone()).unwrap(), *v.as_object().unwrap());
        assert!(from_value::<crate::Map>(json("[]")).is_err());
    }

    #[test]
    fn unknown_fields_are_rejected_with_a_pointer_to_the_field() {
        let e = decode::<Rev>(r#"{"rev":1,"extra":2}"#).unwrap_err();
        assert_eq!(e.pointer(), "/extra");
        assert!(e.message().contains("unknown field `extra`"), "{e}");
        let e = decode::<DaemonMessage>(
            r#"{"request":{"id":1,"call":{"execute":{"action":"a","input":{},"bogus":true}}}}"#,
        )
        .unwrap_err();
        assert_eq!(e.pointer(), "/request/call/execute/bogus");
        let e = decode::<DaemonMessage>(r#"{"request":{"id":1}}"#).unwrap_err();
        assert_eq!(e.pointer(), "/request");
        assert!(e.message().contains("missing field `call`"), "{e}");
        let e = decode::<DaemonMessage>(r#"{"request":{"id":1.5,"call":{"revision":{}}}}"#)
            .unwrap_err();
        assert_eq!(e.pointer(), "/request/id");
        let e = decode::<DaemonMessage>(r#"{"shout":{}}"#).unwrap_err();
        assert_eq!(e.pointer(), "/shout");
        assert!(e.message().contains("unknown variant"), "{e}");
        let e = decode::<DaemonMessage>(r#"{"bye":{"reason":"x"},"welcome":{}}"#).unwrap_err();
        assert_eq!(e.pointer(), "");
    }

    #[test]
    fn pointers_escape_and_index() {
        let e = from_value::<BTreeMap<String, Vec<u8>>>(json(r#"{"a/b~c":[1,"x"]}"#)).unwrap_err();
        assert_eq!(e.pointer(), "/a~1b~0c/1");
        assert_eq!(alloc::format!("{e}"), alloc::format!("{} at /a~1b~0c/1", e.message()));
    }

    #[test]
    fn enums_are_externally_tagged() {
        assert_eq!(from_value::<TaskState>(json("\"running\"")).unwrap(), TaskState::Running);
        assert!(from_value::<TaskState>(json("\"walking\"")).is_err());
        assert!(from_value::<TaskState>(json(r#"{"running":null}"#)).is_err());
        let call: Call = decode(r#"{"revision":{}}"#).unwrap();
        assert_eq!(call, Call::Revision {});
        assert!(decode::<Call>(r#""revision""#).is_err());
        assert!(decode::<Call>(r#"{"revision":{},"listResources":{}}"#).is_err());
        #[derive(Debug, PartialEq, Serialize, Deserialize)]
        enum Shape {
            Unit,
            Tuple(u8, u8),
            Newtype(u8),
        }
        for shape in [Shape::Unit, Shape::Tuple(1, 2), Shape::Newtype(3)] {
            let v = to_value(&shape).unwrap();
            assert_eq!(from_value::<Shape>(v).unwrap(), shape);
        }
        assert_eq!(
            encode(&to_value(&Shape::Tuple(1, 2)).unwrap(), &Limits::DEFAULT).unwrap(),
            br#"{"Tuple":[1,2]}"#
        );
        assert_eq!(decode::<Shape>(r#"{"Tuple":[1,"x"]}"#).unwrap_err().pointer(), "/Tuple/1");
        assert!(decode::<Shape>(r#"{"Newtype":[1]}"#).is_err());
        assert!(decode::<Shape>(r#""Newtype""#).is_err());
    }

    #[test]
    fn channel_messages_round_trip() {
        let request = DaemonMessage::Request(Request {
            id: 18446744073709551615,
            call: Call::Execute(ExecuteCall {
                action: String::from("document.text.replace"),
                input: json(r#"{"text":"a\nb","at":123456789012345678901234567890}"#).into(),
                expected_revision: Some(12),
                consent: None,
            }),
        });
        let bytes = encode(&to_value(&request).unwrap(), &Limits::DEFAULT).unwrap();
        assert_eq!(
            core::str::from_utf8(&bytes).unwrap(),
            r#"{"request":{"id":18446744073709551615,"call":{"execute":{"action":"document.text.replace","input":{"text":"a\nb","at":123456789012345678901234567890},"expectedRevision":12}}}}"#
        );
        let back: DaemonMessage = from_value(parse(&bytes, &Limits::DEFAULT).unwrap()).unwrap();
        assert_eq!(back, request);

        let cause =
            ActionError::new(Reason::SchemaViolation { pointer: String::from("/x") }, "bad x");
        let reply = AppMessage::Reply(Reply {
            id: 7,
            outcome: Outcome::Error(ActionError::new(
                Reason::BatchPreflight { index: 2, cause: Box::new(cause) },
                "call 2 failed preflight",
            )),
        });
        let v = to_value(&reply).unwrap();
        assert_eq!(
            v.get("reply")
                .unwrap()
                .get("outcome")
                .unwrap()
                .get("error")
                .unwrap()
                .get("code")
                .unwrap()
                .as_u64(),
            Some(1000)
        );
        assert_eq!(from_value::<AppMessage>(v).unwrap(), reply);

        let ok = AppMessage::Reply(Reply {
            id: 8,
            outcome: Outcome::Ok(CallResult::Batch {
                results: vec![crate::channel::BatchEntry {
                    index: 0,
                    outcome: BatchOutcome::Task(TaskSnapshot {
                        result: Some(json("1.50")),
                        ..TaskSnapshot::new("t1", TaskState::Running)
                    }),
                }],
                revision: 3,
            }),
        });
        let v = to_value(&ok).unwrap();
        let bytes = encode(&v, &Limits::DEFAULT).unwrap();
        assert!(bytes.windows(4).any(|w| w == b"1.50"));
        assert_eq!(from_value::<AppMessage>(parse(&bytes, &Limits::DEFAULT).unwrap()).unwrap(), ok);
    }

    #[test]
    fn foreign_deserializers_build_values_too() {
        let v: Value =
            serde_json::from_str(r#"{"a":[1.5,-2,18446744073709551615,null,"s"]}"#).unwrap();
        assert_eq!(v, json(r#"{"a":[1.5,-2,18446744073709551615,null,"s"]}"#));
        // serde_json lets a repeated key through to the visitor; the visitor refuses it.
        assert!(serde_json::from_str::<Value>(r#"{"a":1,"a":2}"#).is_err());
        // Foreign serializers see a number as its token string (documented in ser.rs).
        assert_eq!(serde_json::to_string(&json("[1.0]")).unwrap(), r#"["1.0"]"#);
    }
}
