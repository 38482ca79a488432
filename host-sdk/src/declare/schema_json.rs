//! JSON Schema → [`Schema`]: the inverse of proto's rendering (`Schema::to_json_schema`), so an
//! app in C, Python or JavaScript declares its schemas in the same JSON that `actions/describe` shows.
//!
//! Accepted: exactly the draft 2020-12 subset the renderer writes. `{}` is any value;
//! `{"type": T}` with T one of `null`, `boolean`, `integer` (+ `minimum`, `maximum`),
//! `number`, `string` (+ `maxLength`, `enum` of strings), `array` (+ `items`, `maxItems`),
//! `object` (+ `properties`, `required`, `additionalProperties` as a boolean); `{"anyOf":
//! [...]}`. Every other keyword (`minLength`, `pattern`, `$ref`, `description`, a `type`
//! array, ...) is refused with its JSON pointer: a check the dispatcher would not run must not
//! look declared.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use jfgui_proto::{Map, Property, Schema, Value, schema};

use super::store::Store;

/// Why a schema was refused: where (a JSON pointer) and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct SchemaError {
    pub(super) pointer: String,
    pub(super) message: String,
}

/// Builds the [`Schema`] that `json` describes, its pieces kept in `store`.
///
/// # Safety
///
/// The returned schema borrows from `store`: it must not outlive it (see [`Store::keep`]).
pub(super) unsafe fn parse(
    json: &Value,
    store: &mut Store,
    pointer: &str,
) -> Result<&'static Schema, SchemaError> {
    let mut p = Parser { store, pointer: String::from(pointer) };
    p.schema(json)
}

struct Parser<'a> {
    store: &'a mut Store,
    /// JSON pointer of the value being read.
    pointer: String,
}

impl Parser<'_> {
    fn error(&self, message: impl Into<String>) -> SchemaError {
        self.error_at(&[], message)
    }

    /// An error at the current pointer extended by `steps`.
    fn error_at(&self, steps: &[&str], message: impl Into<String>) -> SchemaError {
        let mut pointer = self.pointer.clone();
        for step in steps {
            push_step(&mut pointer, step);
        }
        SchemaError { pointer, message: message.into() }
    }

    /// Reads the member `key` of the current object with `pointer` extended while `f` runs.
    fn at<T>(
        &mut self,
        step: &str,
        f: impl FnOnce(&mut Self) -> Result<T, SchemaError>,
    ) -> Result<T, SchemaError> {
        let len = self.pointer.len();
        push_step(&mut self.pointer, step);
        let result = f(self);
        self.pointer.truncate(len);
        result
    }

    fn keep_str(&mut self, s: &str) -> &'static str {
        // SAFETY: the schema being built, which holds this string, is returned to `parse`'s
        // caller under the same contract as `Store::keep`.
        unsafe { self.store.keep(String::from(s)) }.as_str()
    }

    fn keep<T: 'static>(&mut self, value: T) -> &'static T {
        // SAFETY: as for `keep_str`.
        unsafe { self.store.keep(value) }
    }

    fn schema(&mut self, json: &Value) -> Result<&'static Schema, SchemaError> {
        let Some(m) = json.as_object() else {
            return Err(self.error(format!("a schema is a JSON object, not {}", json.type_name())));
        };
        let schema = match (m.get("type"), m.get("anyOf")) {
            (None, None) => {
                self.only(m, &[])?;
                return Ok(&schema::ANY);
            }
            (Some(_), Some(_)) => {
                return Err(self.error("\"anyOf\" cannot be combined with \"type\""));
            }
            (None, Some(alternatives)) => {
                self.only(m, &["anyOf"])?;
                self.any_of(alternatives)?
            }
            (Some(t), None) => self.typed(m, t)?,
        };
        Ok(self.keep(schema))
    }

    fn typed(&mut self, m: &Map, t: &Value) -> Result<Schema, SchemaError> {
        let Some(t) = t.as_str() else {
            return Err(self
                .error_at(&["type"], "\"type\" must be one string (use anyOf for alternatives)"));
        };
        Ok(match t {
            "null" => self.only(m, &["type"]).map(|()| Schema::Null)?,
            "boolean" => self.only(m, &["type"]).map(|()| Schema::Boolean)?,
            "number" => self.only(m, &["type"]).map(|()| Schema::Number)?,
            "integer" => {
                self.only(m, &["type", "minimum", "maximum"])?;
                Schema::Integer {
                    min: self.i64_member(m, "minimum")?,
                    max: self.i64_member(m, "maximum")?,
                }
            }
            "string" => {
                self.only(m, &["type", "maxLength", "enum"])?;
                let max_length = self.u32_member(m, "maxLength")?;
                let one_of = match m.get("enum") {
                    None => None,
                    Some(v) => Some(self.at("enum", |p| p.string_enum(v))?),
                };
                Schema::String { max_length, one_of }
            }
            "array" => {
                self.only(m, &["type", "items", "maxItems"])?;
                let items = match m.get("items") {
                    None => &schema::ANY,
                    Some(v) => self.at("items", |p| p.schema(v))?,
                };
                Schema::Array { items, max_items: self.u32_member(m, "maxItems")? }
            }
            "object" => {
                self.only(m, &["type", "properties", "required", "additionalProperties"])?;
                self.object(m)?
            }
            other => {
                return Err(self.error_at(&["type"], format!("unknown type {other:?}")));
            }
        })
    }

    fn object(&mut self, m: &Map) -> Result<Schema, SchemaError> {
        let required: Vec<&str> = match m.get("required") {
            None => Vec::new(),
            Some(v) => self.at("required", |p| {
                let Some(items) = v.as_array() else {
                    return Err(p.error("\"required\" must be an array of property names"));
                };
                let mut names = Vec::with_capacity(items.len());
                for (i, item) in items.iter().enumerate() {
                    let name = p.at(&i.to_string(), |p| {
                        item.as_str().ok_or_else(|| p.error("a property name must be a string"))
                    })?;
                    names.push(name);
                }
                Ok(names)
            })?,
        };
        let mut properties = Vec::new();
        if let Some(v) = m.get("properties") {
            self.at("properties", |p| {
                let Some(props) = v.as_object() else {
                    return Err(p.error("\"properties\" must be an object"));
                };
                for (name, schema) in props.iter() {
                    let schema = p.at(name, |p| p.schema(schema))?;
                    let name = p.keep_str(name);
                    properties.push(Property { name, schema, required: required.contains(&name) });
                }
                Ok(())
            })?;
        }
        if let Some((i, missing)) =
            required.iter().enumerate().find(|(_, r)| !properties.iter().any(|p| p.name == **r))
        {
            return Err(self.error_at(
                &["required", &i.to_string()],
                format!("required property {missing:?} is not declared in \"properties\""),
            ));
        }
        let additional = match m.get("additionalProperties") {
            None => true,
            Some(v) => self.at("additionalProperties", |p| {
                v.as_bool().ok_or_else(|| {
                    p.error("\"additionalProperties\" must be true or false (schemas are not supported)")
                })
            })?,
        };
        Ok(Schema::Object { properties: self.keep(properties).as_slice(), additional })
    }

    fn any_of(&mut self, v: &Value) -> Result<Schema, SchemaError> {
        self.at("anyOf", |p| {
            let Some(items) = v.as_array().filter(|a| !a.is_empty()) else {
                return Err(p.error("\"anyOf\" must be a non-empty array of schemas"));
            };
            let mut alternatives = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                alternatives.push(*p.at(&i.to_string(), |p| p.schema(item))?);
            }
            Ok(Schema::AnyOf(p.keep(alternatives).as_slice()))
        })
    }

    fn string_enum(&mut self, v: &Value) -> Result<&'static [&'static str], SchemaError> {
        let Some(items) = v.as_array() else {
            return Err(self.error("\"enum\" must be an array of strings"));
        };
        let mut choices = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let choice = self.at(&i.to_string(), |p| {
                item.as_str().ok_or_else(|| p.error("only string enums are supported"))
            })?;
            choices.push(self.keep_str(choice));
        }
        Ok(self.keep(choices).as_slice())
    }

    /// Refuses any member of `m` not in `allowed`.
    fn only(&self, m: &Map, allowed: &[&str]) -> Result<(), SchemaError> {
        match m.keys().find(|k| !allowed.contains(k)) {
            None => Ok(()),
            Some(k) => {
                let what = match m.get("type").and_then(Value::as_str) {
                    Some(t) => format!("for type {t:?}"),
                    None if allowed.is_empty() => String::from("in {} (any value)"),
                    None => String::from("beside \"anyOf\""),
                };
                Err(self.error_at(
                    &[k],
                    format!("unsupported keyword {k:?} {what}; supported: {allowed:?}"),
                ))
            }
        }
    }

    fn i64_member(&mut self, m: &Map, key: &str) -> Result<Option<i64>, SchemaError> {
        match m.get(key) {
            None => Ok(None),
            Some(v) => self.at(key, |p| {
                v.as_i64().map(Some).ok_or_else(|| p.error("expected an integer in the i64 range"))
            }),
        }
    }

    fn u32_member(&mut self, m: &Map, key: &str) -> Result<Option<u32>, SchemaError> {
        match m.get(key) {
            None => Ok(None),
            Some(v) => self.at(key, |p| {
                v.as_u64()
                    .and_then(|n| u32::try_from(n).ok())
                    .map(Some)
                    .ok_or_else(|| p.error("expected an integer from 0 to 4294967295"))
            }),
        }
    }
}

/// Appends one RFC 6901 reference token.
fn push_step(pointer: &mut String, step: &str) {
    pointer.push('/');
    for c in step.chars() {
        match c {
            '~' => pointer.push_str("~0"),
            '/' => pointer.push_str("~1"),
            c => pointer.push(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use jfgui_proto::{Limits, encode};

    fn json(text: &str) -> Value {
        jfgui_proto::parse(text.as_bytes(), &Limits::DEFAULT).unwrap()
    }

    /// Parses `text` and renders the result back (the store lives for the whole check).
    fn round_trip(text: &str) -> Result<String, SchemaError> {
        let mut store = Store::default();
        // SAFETY: the schema is used and dropped before the store.
        let schema = unsafe { parse(&json(text), &mut store, "") }?;
        let rendered = encode(&schema.to_json_schema(), &Limits::DEFAULT).unwrap();
        Ok(String::from_utf8(rendered).unwrap())
    }

    #[test]
    fn everything_the_renderer_writes_parses_back_to_the_same_bytes() {
        for text in [
            "{}",
            r#"{"type":"null"}"#,
            r#"{"type":"boolean"}"#,
            r#"{"type":"integer"}"#,
            r#"{"type":"integer","minimum":-5,"maximum":9223372036854775807}"#,
            r#"{"type":"number"}"#,
            r#"{"type":"string","maxLength":8,"enum":["a\"","b"]}"#,
            r#"{"type":"array","items":{"type":"string"},"maxItems":4}"#,
            r#"{"type":"object","properties":{}}"#,
            r#"{"type":"object","properties":{},"additionalProperties":false}"#,
            r#"{"type":"object","properties":{"b":{},"a/~":{"type":"array","items":{"type":"string"},"maxItems":4}},"required":["a/~"]}"#,
            r#"{"anyOf":[{"type":"null"},{"type":"number"}]}"#,
        ] {
            assert_eq!(round_trip(text).as_deref(), Ok(text));
        }
    }

    #[test]
    fn defaults_are_filled_in() {
        assert_eq!(
            round_trip(r#"{"type":"object"}"#).unwrap(),
            r#"{"type":"object","properties":{}}"#
        );
        assert_eq!(round_trip(r#"{"type":"array"}"#).unwrap(), r#"{"type":"array","items":{}}"#);
    }

    #[test]
    fn parsed_schemas_validate_like_static_ones() {
        let mut store = Store::default();
        let text = r#"{"type":"object","properties":{"by":{"type":"integer","minimum":-10,"maximum":10}},"required":["by"],"additionalProperties":false}"#;
        // SAFETY: the schema is used and dropped before the store.
        let schema = unsafe { parse(&json(text), &mut store, "") }.unwrap();
        assert!(schema.validate(&json(r#"{"by":3}"#)).is_ok());
        assert_eq!(schema.validate(&json(r#"{"by":11}"#)).unwrap_err().pointer, "/by");
        assert_eq!(schema.validate(&json(r#"{}"#)).unwrap_err().pointer, "");
        assert_eq!(schema.validate(&json(r#"{"by":1,"x":1}"#)).unwrap_err().pointer, "/x");
    }

    #[test]
    fn unsupported_keywords_are_refused_with_their_pointer() {
        let cases = [
            (
                r#"{"type":"string","minLength":1}"#,
                "/minLength",
                "unsupported keyword \"minLength\"",
            ),
            (r##"{"$ref":"#"}"##, "/$ref", "unsupported keyword \"$ref\" in {}"),
            (r#"{"type":"number","minimum":1}"#, "/minimum", "for type \"number\""),
            (r#"{"type":["string","null"]}"#, "/type", "must be one string"),
            (r#"{"type":"date"}"#, "/type", "unknown type \"date\""),
            (
                r#"{"type":"object","properties":{"a":{"type":"integer","maximum":1.5}}}"#,
                "/properties/a/maximum",
                "i64",
            ),
            (
                r#"{"type":"object","properties":{"a/b":{"description":"x"}}}"#,
                "/properties/a~1b/description",
                "unsupported keyword",
            ),
            (r#"{"type":"object","required":["x"]}"#, "/required/0", "not declared"),
            (
                r#"{"type":"object","additionalProperties":{}}"#,
                "/additionalProperties",
                "true or false",
            ),
            (r#"{"type":"string","enum":[1]}"#, "/enum/0", "string enums"),
            (r#"{"type":"string","maxLength":-1}"#, "/maxLength", "0 to"),
            (r#"{"anyOf":[]}"#, "/anyOf", "non-empty"),
            (r#"{"anyOf":[{}],"type":"null"}"#, "", "cannot be combined"),
            (r#"{"anyOf":[{"type":"null"}],"title":"t"}"#, "/title", "beside \"anyOf\""),
            ("[]", "", "a schema is a JSON object"),
        ];
        for (text, pointer, message) in cases {
            let e = round_trip(text).unwrap_err();
            assert_eq!(e.pointer, pointer, "{text}: {e:?}");
            assert!(e.message.contains(message), "{text}: {e:?}");
        }
    }
}
