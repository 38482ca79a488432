//! Typed encoding: a `serde::Serializer` that builds a [`Value`], and `Serialize` for [`Value`].

use super::{DecodeError, Value};

/// Converts a typed message into a [`Value`] (then [`encode`](super::encode) it).
/// Fails only for shapes JSON cannot hold (non-string map keys, non-finite floats).
pub fn to_value<T: serde::Serialize + ?Sized>(value: &T) -> Result<Value, DecodeError> {
    let _ = value;
    todo!("serde Serializer into Value")
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
