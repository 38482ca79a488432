//! Typed encoding: a `serde::Serializer` that builds a [`Value`], and `Serialize` for [`Value`].
//!
//! Integers become their exact decimal token, floats the shortest token that reads back as the
//! same float, enums are externally tagged (`"unit"`, `{"variant": content}`), and the
//! [`NUMBER_TOKEN`] newtype written by `Serialize for Value` is turned back into the exact
//! [`Number`], so a [`Value`] inside a typed message survives unchanged.

use alloc::string::String;
use alloc::vec::Vec;

use serde::ser::{self, Impossible, Serialize};

use super::de::Error;
use super::value::first_duplicate;
use super::{DecodeError, Map, Number, Value};

/// Converts a typed message into a [`Value`] (then [`encode`](super::encode) it).
/// Fails only for shapes JSON cannot hold (non-string map keys, non-finite floats, a key
/// written twice); the error's pointer names where.
pub fn to_value<T: serde::Serialize + ?Sized>(value: &T) -> Result<Value, DecodeError> {
    value.serialize(ValueSerializer).map_err(DecodeError::from)
}

/// Name of the newtype struct that carries an exact number token through serde. Our
/// [`to_value`] serializer and `from_value` deserializer recognise it; foreign serializers see
/// a plain string.
pub(crate) const NUMBER_TOKEN: &str = "$jfgui_proto::Number";

impl serde::Serialize for Value {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Value::Null => serializer.serialize_unit(),
            Value::Bool(b) => serializer.serialize_bool(*b),
            Value::Number(n) => serializer.serialize_newtype_struct(NUMBER_TOKEN, n.as_str()),
            Value::String(s) => serializer.serialize_str(s),
            Value::Array(a) => a.serialize(serializer),
            Value::Object(m) => m.serialize(serializer),
        }
    }
}

impl serde::Serialize for super::Map {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(Some(self.len()))?;
        for (k, v) in self.iter() {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

/// Builds a [`Value`].
struct ValueSerializer;

fn float(number: Option<Number>) -> Result<Value, Error> {
    number.map(Value::Number).ok_or_else(|| Error::message("NaN and infinity are not JSON numbers"))
}

/// An object under construction; `end` refuses a key written twice.
fn object(entries: Vec<(String, Value)>) -> Result<Value, Error> {
    match first_duplicate(&entries) {
        Some(i) => Err(Error::message("duplicate key").at(&entries[i].0)),
        None => Ok(Value::Object(Map::from_unique_entries(entries))),
    }
}

/// `{"variant": content}`.
fn variant(name: &str, content: Value) -> Value {
    Value::Object(Map::from_unique_entries(alloc::vec![(String::from(name), content)]))
}

/// Hints come from the value being serialized; cap them anyway so a lying `len` costs little.
fn capacity(hint: Option<usize>) -> usize {
    hint.unwrap_or(0).min(4096)
}

impl ser::Serializer for ValueSerializer {
    type Ok = Value;
    type Error = Error;
    type SerializeSeq = SeqSerializer;
    type SerializeTuple = SeqSerializer;
    type SerializeTupleStruct = SeqSerializer;
    type SerializeTupleVariant = VariantSerializer<SeqSerializer>;
    type SerializeMap = MapSerializer;
    type SerializeStruct = MapSerializer;
    type SerializeStructVariant = VariantSerializer<MapSerializer>;

    fn serialize_bool(self, v: bool) -> Result<Value, Error> {
        Ok(Value::Bool(v))
    }
    fn serialize_i8(self, v: i8) -> Result<Value, Error> {
        self.serialize_i64(i64::from(v))
    }
    fn serialize_i16(self, v: i16) -> Result<Value, Error> {
        self.serialize_i64(i64::from(v))
    }
    fn serialize_i32(self, v: i32) -> Result<Value, Error> {
        self.serialize_i64(i64::from(v))
    }
    fn serialize_i64(self, v: i64) -> Result<Value, Error> {
        Ok(Value::Number(Number::from(v)))
    }
    fn serialize_i128(self, v: i128) -> Result<Value, Error> {
        Ok(Value::Number(Number::from_i128(v)))
    }
    fn serialize_u8(self, v: u8) -> Result<Value, Error> {
        self.serialize_u64(u64::from(v))
    }
    fn serialize_u16(self, v: u16) -> Result<Value, Error> {
        self.serialize_u64(u64::from(v))
    }
    fn serialize_u32(self, v: u32) -> Result<Value, Error> {
        self.serialize_u64(u64::from(v))
    }
    fn serialize_u64(self, v: u64) -> Result<Value, Error> {
        Ok(Value::Number(Number::from(v)))
    }
    fn serialize_u128(self, v: u128) -> Result<Value, Error> {
        Ok(Value::Number(Number::from_u128(v)))
    }
    fn serialize_f32(self, v: f32) -> Result<Value, Error> {
        float(Number::from_f32(v))
    }
    fn serialize_f64(self, v: f64) -> Result<Value, Error> {
        float(Number::from_f64(v))
    }
    fn serialize_char(self, v: char) -> Result<Value, Error> {
        let mut s = String::new();
        s.push(v);
        Ok(Value::String(s))
    }
    fn serialize_str(self, v: &str) -> Result<Value, Error> {
        Ok(Value::String(String::from(v)))
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<Value, Error> {
        Ok(Value::Array(v.iter().map(|&b| Value::Number(Number::from(u64::from(b)))).collect()))
    }
    fn serialize_none(self) -> Result<Value, Error> {
        Ok(Value::Null)
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<Value, Error> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<Value, Error> {
        Ok(Value::Null)
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<Value, Error> {
        Ok(Value::Null)
    }
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<Value, Error> {
        Ok(Value::String(String::from(variant)))
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        name: &'static str,
        value: &T,
    ) -> Result<Value, Error> {
        let inner = value.serialize(self)?;
        if name != NUMBER_TOKEN {
            return Ok(inner);
        }
        match inner {
            Value::String(token) => Number::from_token(&token)
                .map(Value::Number)
                .map_err(|_| Error::message("invalid number token")),
            _ => Err(Error::message("a number token must be a string")),
        }
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        name: &'static str,
        value: &T,
    ) -> Result<Value, Error> {
        let content = value.serialize(self).map_err(|e| e.at(name))?;
        Ok(variant(name, content))
    }
    fn serialize_seq(self, len: Option<usize>) -> Result<SeqSerializer, Error> {
        Ok(SeqSerializer { items: Vec::with_capacity(capacity(len)) })
    }
    fn serialize_tuple(self, len: usize) -> Result<SeqSerializer, Error> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        len: usize,
    ) -> Result<SeqSerializer, Error> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        name: &'static str,
        len: usize,
    ) -> Result<VariantSerializer<SeqSerializer>, Error> {
        Ok(VariantSerializer { name, inner: self.serialize_seq(Some(len))? })
    }
    fn serialize_map(self, len: Option<usize>) -> Result<MapSerializer, Error> {
        Ok(MapSerializer { entries: Vec::with_capacity(capacity(len)), key: None })
    }
    fn serialize_struct(self, _name: &'static str, len: usize) -> Result<MapSerializer, Error> {
        self.serialize_map(Some(len))
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        name: &'static str,
        len: usize,
    ) -> Result<VariantSerializer<MapSerializer>, Error> {
        Ok(VariantSerializer { name, inner: self.serialize_map(Some(len))? })
    }
}

struct SeqSerializer {
    items: Vec<Value>,
}

impl SeqSerializer {
    fn push<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        let index = self.items.len();
        self.items.push(value.serialize(ValueSerializer).map_err(|e| e.at_index(index))?);
        Ok(())
    }
}

impl ser::SerializeSeq for SeqSerializer {
    type Ok = Value;
    type Error = Error;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.push(value)
    }
    fn end(self) -> Result<Value, Error> {
        Ok(Value::Array(self.items))
    }
}

impl ser::SerializeTuple for SeqSerializer {
    type Ok = Value;
    type Error = Error;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.push(value)
    }
    fn end(self) -> Result<Value, Error> {
        Ok(Value::Array(self.items))
    }
}

impl ser::SerializeTupleStruct for SeqSerializer {
    type Ok = Value;
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.push(value)
    }
    fn end(self) -> Result<Value, Error> {
        Ok(Value::Array(self.items))
    }
}

struct MapSerializer {
    entries: Vec<(String, Value)>,
    /// The key written by `serialize_key`, waiting for its value.
    key: Option<String>,
}

impl MapSerializer {
    fn member<T: Serialize + ?Sized>(&mut self, key: String, value: &T) -> Result<(), Error> {
        let value = value.serialize(ValueSerializer).map_err(|e| e.at(&key))?;
        self.entries.push((key, value));
        Ok(())
    }
}

impl ser::SerializeMap for MapSerializer {
    type Ok = Value;
    type Error = Error;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Error> {
        self.key = Some(key.serialize(KeySerializer)?);
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        let key = self.key.take().ok_or_else(|| Error::message("map value without a key"))?;
        self.member(key, value)
    }
    fn end(self) -> Result<Value, Error> {
        object(self.entries)
    }
}

impl ser::SerializeStruct for MapSerializer {
    type Ok = Value;
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        self.member(String::from(key), value)
    }
    fn end(self) -> Result<Value, Error> {
        object(self.entries)
    }
}

/// A tuple or struct variant: the content, wrapped as `{"variant": content}` at the end.
struct VariantSerializer<T> {
    name: &'static str,
    inner: T,
}

impl ser::SerializeTupleVariant for VariantSerializer<SeqSerializer> {
    type Ok = Value;
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.inner.push(value).map_err(|e| e.at(self.name))
    }
    fn end(self) -> Result<Value, Error> {
        Ok(variant(self.name, Value::Array(self.inner.items)))
    }
}

impl ser::SerializeStructVariant for VariantSerializer<MapSerializer> {
    type Ok = Value;
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        self.inner.member(String::from(key), value).map_err(|e| e.at(self.name))
    }
    fn end(self) -> Result<Value, Error> {
        let content = object(self.inner.entries).map_err(|e| e.at(self.name))?;
        Ok(variant(self.name, content))
    }
}

/// Object keys: strings, and what serializes as one (chars, unit variants, newtypes of those).
struct KeySerializer;

fn non_string_key() -> Error {
    Error::message("object keys must be strings")
}

macro_rules! reject_key {
    ($($method:ident($ty:ty),)*) => {$(
        fn $method(self, _v: $ty) -> Result<String, Error> {
            Err(non_string_key())
        }
    )*};
}

impl ser::Serializer for KeySerializer {
    type Ok = String;
    type Error = Error;
    type SerializeSeq = Impossible<String, Error>;
    type SerializeTuple = Impossible<String, Error>;
    type SerializeTupleStruct = Impossible<String, Error>;
    type SerializeTupleVariant = Impossible<String, Error>;
    type SerializeMap = Impossible<String, Error>;
    type SerializeStruct = Impossible<String, Error>;
    type SerializeStructVariant = Impossible<String, Error>;

    reject_key! {
        serialize_bool(bool), serialize_i8(i8), serialize_i16(i16), serialize_i32(i32),
        serialize_i64(i64), serialize_i128(i128), serialize_u8(u8), serialize_u16(u16),
        serialize_u32(u32), serialize_u64(u64), serialize_u128(u128), serialize_f32(f32),
        serialize_f64(f64), serialize_bytes(&[u8]),
    }

    fn serialize_char(self, v: char) -> Result<String, Error> {
        let mut s = String::new();
        s.push(v);
        Ok(s)
    }
    fn serialize_str(self, v: &str) -> Result<String, Error> {
        Ok(String::from(v))
    }
    fn serialize_none(self) -> Result<String, Error> {
        Err(non_string_key())
    }
    fn serialize_some<T: Serialize + ?Sized>(self, _value: &T) -> Result<String, Error> {
        Err(non_string_key())
    }
    fn serialize_unit(self) -> Result<String, Error> {
        Err(non_string_key())
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<String, Error> {
        Err(non_string_key())
    }
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<String, Error> {
        Ok(String::from(variant))
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<String, Error> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _value: &T,
    ) -> Result<String, Error> {
        Err(non_string_key())
    }
    fn serialize_seq(self, _len: Option<usize>) -> Result<Impossible<String, Error>, Error> {
        Err(non_string_key())
    }
    fn serialize_tuple(self, _len: usize) -> Result<Impossible<String, Error>, Error> {
        Err(non_string_key())
    }
    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        _len: usize,
    ) -> Result<Impossible<String, Error>, Error> {
        Err(non_string_key())
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Impossible<String, Error>, Error> {
        Err(non_string_key())
    }
    fn serialize_map(self, _len: Option<usize>) -> Result<Impossible<String, Error>, Error> {
        Err(non_string_key())
    }
    fn serialize_struct(
        self,
        _name: &'static str,
        _len: usize,
    ) -> Result<Impossible<String, Error>, Error> {
        Err(non_string_key())
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Impossible<String, Error>, Error> {
        Err(non_string_key())
    }
}

#[cfg(test)]
mod tests {
    use alloc::collections::BTreeMap;
    use alloc::string::String;
    use alloc::vec;

    use serde::Serialize;

    use super::*;
    use crate::{Limits, encode, from_value, parse};

    fn text(v: &impl Serialize) -> String {
        String::from_utf8(encode(&to_value(v).unwrap(), &Limits::DEFAULT).unwrap()).unwrap()
    }

    #[test]
    fn scalars_become_exact_tokens() {
        assert_eq!(text(&u64::MAX), "18446744073709551615");
        assert_eq!(text(&i64::MIN), "-9223372036854775808");
        assert_eq!(text(&u128::MAX), "340282366920938463463374607431768211455");
        assert_eq!(text(&i128::MIN), "-170141183460469231731687303715884105728");
        assert_eq!(text(&0.1f64), "0.1");
        assert_eq!(text(&0.1f32), "0.1");
        assert_eq!(text(&2.0f64), "2.0");
        assert_eq!(text(&1e300f64), "1e300");
        assert_eq!(text(&'x'), "\"x\"");
        assert_eq!(text(&Option::<u8>::None), "null");
        assert_eq!(text(&Some(1u8)), "1");
        assert_eq!(text(&()), "null");
        assert_eq!(text(&serde_bytes_like()), "[1,2]");
        #[derive(Serialize)]
        struct Unit;
        assert_eq!(text(&Unit), "null");
        #[derive(Serialize)]
        struct Wrapper(u8);
        assert_eq!(text(&Wrapper(4)), "4");
    }

    fn serde_bytes_like() -> impl Serialize {
        struct Bytes;
        impl Serialize for Bytes {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_bytes(&[1, 2])
            }
        }
        Bytes
    }

    #[test]
    fn non_finite_floats_are_errors() {
        assert!(to_value(&f64::NAN).is_err());
        assert!(to_value(&f32::INFINITY).is_err());
        let e = to_value(&vec![1.0, f64::NEG_INFINITY]).unwrap_err();
        assert_eq!(e.pointer(), "/1");
    }

    #[test]
    fn map_keys_must_be_strings() {
        let mut m = BTreeMap::new();
        m.insert(1u8, 2u8);
        assert!(to_value(&m).is_err());
        let mut m = BTreeMap::new();
        m.insert('k', 2u8);
        assert_eq!(text(&m), r#"{"k":2}"#);
        #[derive(Serialize, PartialEq, Eq, PartialOrd, Ord)]
        enum Key {
            Left,
        }
        let mut m = BTreeMap::new();
        m.insert(Key::Left, 1u8);
        assert_eq!(text(&m), r#"{"Left":1}"#);
    }

    #[test]
    fn a_key_written_twice_is_an_error() {
        struct Twice;
        impl Serialize for Twice {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                use serde::ser::SerializeMap;
                let mut m = s.serialize_map(None)?;
                m.serialize_entry("a", &1)?;
                m.serialize_entry("a", &2)?;
                m.end()
            }
        }
        let e = to_value(&Twice).unwrap_err();
        assert_eq!(e.pointer(), "/a");
    }

    #[test]
    fn values_serialize_losslessly() {
        let v =
            parse(br#"{"a":[1e400,-0,1.0,{"b":null}],"c":"\u2028"}"#, &Limits::DEFAULT).unwrap();
        assert_eq!(to_value(&v).unwrap(), v);
        assert_eq!(from_value::<Value>(to_value(&v).unwrap()).unwrap(), v);
    }

    #[test]
    fn struct_variant_errors_carry_the_variant() {
        #[derive(Serialize)]
        enum E {
            S { f: f64 },
        }
        let e = to_value(&E::S { f: f64::NAN }).unwrap_err();
        assert_eq!(e.pointer(), "/S/f");
        assert_eq!(text(&E::S { f: 1.5 }), r#"{"S":{"f":1.5}}"#);
    }
}
