//! Rendering a [`Schema`] as JSON Schema (draft 2020-12 subset).
//!
//! Keywords used: `type`, `minimum`, `maximum`, `maxLength`, `enum`, `items`, `maxItems`,
//! `properties`, `required`, `additionalProperties`, `anyOf`, and `$ref` for recursion; `{}`
//! stands for [`Schema::Any`]. Members always come in that order, so equal schemas render to
//! equal bytes.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use super::Schema;
use crate::{Map, Value};

impl Schema {
    /// The JSON Schema for this schema, e.g.
    /// `{"type":"object","properties":{"text":{"type":"string"}},"required":["text"],
    /// "additionalProperties":false}`.
    ///
    /// A schema that contains itself (a `static` whose `items` or a property refers back to
    /// it) renders the repeated occurrence as `{"$ref":"#/json/pointer"}` to the enclosing
    /// occurrence, which is how draft 2020-12 expresses recursion; the output is finite for
    /// every schema.
    ///
    /// ```
    /// # use jfgui_proto::{Property, Schema, encode, Limits, schema};
    /// static INSERT: Schema = Schema::Object {
    ///     properties: &[Property { name: "text", schema: &schema::STRING, required: true }],
    ///     additional: false,
    /// };
    /// let json = encode(&INSERT.to_json_schema(), &Limits::DEFAULT).unwrap();
    /// assert_eq!(
    ///     json,
    ///     br#"{"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false}"#
    /// );
    /// ```
    pub fn to_json_schema(&self) -> Value {
        let mut ancestors = Vec::new();
        render(self, &mut ancestors, &mut String::new())
    }

    /// True when the schema's root is an object, as MCP requires of a tool's `inputSchema`
    /// and `outputSchema`.
    pub const fn has_object_root(&self) -> bool {
        matches!(self, Schema::Object { .. })
    }
}

/// Renders `schema` located at the JSON pointer `here` of the output. `ancestors` holds the
/// schemas currently being rendered (by address) with their pointers, for `$ref`.
fn render<'s>(
    schema: &'s Schema,
    ancestors: &mut Vec<(&'s Schema, String)>,
    here: &mut String,
) -> Value {
    if let Some((_, at)) = ancestors.iter().find(|(s, _)| core::ptr::eq(*s, schema)) {
        let mut m = Map::with_capacity(1);
        m.insert("$ref", format!("#{at}"));
        return Value::Object(m);
    }
    ancestors.push((schema, here.clone()));
    let mut m = Map::new();
    match schema {
        Schema::Null => typed(&mut m, "null"),
        Schema::Boolean => typed(&mut m, "boolean"),
        Schema::Integer { min, max } => {
            typed(&mut m, "integer");
            if let Some(min) = min {
                m.insert("minimum", *min);
            }
            if let Some(max) = max {
                m.insert("maximum", *max);
            }
        }
        Schema::Number => typed(&mut m, "number"),
        Schema::String { max_length, one_of } => {
            typed(&mut m, "string");
            if let Some(max) = max_length {
                m.insert("maxLength", *max);
            }
            if let Some(choices) = one_of {
                m.insert("enum", choices.iter().map(|c| Value::from(*c)).collect::<Vec<_>>());
            }
        }
        Schema::Array { items, max_items } => {
            typed(&mut m, "array");
            m.insert("items", nested(items, ancestors, here, &["items"]));
            if let Some(max) = max_items {
                m.insert("maxItems", *max);
            }
        }
        Schema::Object { properties, additional } => {
            typed(&mut m, "object");
            let mut props = Map::with_capacity(properties.len());
            for p in properties.iter() {
                // A repeated name would make a duplicate key; the first one is the one the
                // validator uses, so it is the one rendered.
                if !props.contains_key(p.name) {
                    props
                        .insert(p.name, nested(p.schema, ancestors, here, &["properties", p.name]));
                }
            }
            m.insert("properties", props);
            let mut required: Vec<Value> = Vec::new();
            for p in properties.iter().filter(|p| p.required) {
                let name = Value::from(p.name);
                if !required.contains(&name) {
                    required.push(name);
                }
            }
            if !required.is_empty() {
                m.insert("required", required);
            }
            if !additional {
                m.insert("additionalProperties", false);
            }
        }
        Schema::AnyOf(alternatives) => {
            let mut rendered = Vec::with_capacity(alternatives.len());
            for (i, alternative) in alternatives.iter().enumerate() {
                let index = format!("{i}");
                rendered.push(nested(alternative, ancestors, here, &["anyOf", &index]));
            }
            m.insert("anyOf", rendered);
        }
        Schema::Any => {}
    }
    ancestors.pop();
    Value::Object(m)
}

fn typed(m: &mut Map, name: &str) {
    m.insert("type", name);
}

/// Renders a child schema at `here` + `steps` (each step escaped per RFC 6901).
fn nested<'s>(
    schema: &'s Schema,
    ancestors: &mut Vec<(&'s Schema, String)>,
    here: &mut String,
    steps: &[&str],
) -> Value {
    let len = here.len();
    for step in steps {
        here.push('/');
        for c in step.chars() {
            match c {
                '~' => here.push_str("~0"),
                '/' => here.push_str("~1"),
                c => here.push(c),
            }
        }
    }
    let value = render(schema, ancestors, here);
    here.truncate(len);
    value
}

#[cfg(test)]
mod tests {
    use alloc::vec;

    use super::*;
    use crate::Limits;
    use crate::schema::{self, Property};

    fn json(schema: &Schema) -> String {
        String::from_utf8(crate::encode(&schema.to_json_schema(), &Limits::DEFAULT).unwrap())
            .unwrap()
    }

    #[test]
    fn scalars() {
        assert_eq!(json(&schema::NULL), r#"{"type":"null"}"#);
        assert_eq!(json(&schema::BOOLEAN), r#"{"type":"boolean"}"#);
        assert_eq!(json(&schema::INTEGER), r#"{"type":"integer"}"#);
        assert_eq!(json(&schema::UNSIGNED), r#"{"type":"integer","minimum":0}"#);
        assert_eq!(
            json(&Schema::Integer { min: Some(-5), max: Some(i64::MAX) }),
            r#"{"type":"integer","minimum":-5,"maximum":9223372036854775807}"#
        );
        assert_eq!(json(&schema::NUMBER), r#"{"type":"number"}"#);
        assert_eq!(json(&schema::STRING), r#"{"type":"string"}"#);
        assert_eq!(
            json(&Schema::String { max_length: Some(8), one_of: Some(&["a\"", "b"]) }),
            r#"{"type":"string","maxLength":8,"enum":["a\"","b"]}"#
        );
        assert_eq!(json(&schema::ANY), "{}");
    }

    #[test]
    fn containers() {
        static LIST: Schema = Schema::Array { items: &schema::STRING, max_items: Some(4) };
        assert_eq!(json(&LIST), r#"{"type":"array","items":{"type":"string"},"maxItems":4}"#);
        assert_eq!(json(&schema::OBJECT), r#"{"type":"object","properties":{}}"#);
        assert_eq!(
            json(&schema::EMPTY_OBJECT),
            r#"{"type":"object","properties":{},"additionalProperties":false}"#
        );
        static OPT: Schema = Schema::Object {
            properties: &[
                Property { name: "b", schema: &schema::ANY, required: false },
                Property { name: "a", schema: &LIST, required: true },
            ],
            additional: true,
        };
        assert_eq!(
            json(&OPT),
            r#"{"type":"object","properties":{"b":{},"a":{"type":"array","items":{"type":"string"},"maxItems":4}},"required":["a"]}"#
        );
        static EITHER: Schema = Schema::AnyOf(&[Schema::Null, Schema::Number]);
        assert_eq!(json(&EITHER), r#"{"anyOf":[{"type":"null"},{"type":"number"}]}"#);
    }

    #[test]
    fn recursion_renders_as_ref_to_the_enclosing_occurrence() {
        static NODE: Schema = Schema::Object {
            properties: &[
                Property { name: "name", schema: &schema::STRING, required: true },
                Property { name: "kids/all", schema: &KIDS, required: false },
            ],
            additional: false,
        };
        static KIDS: Schema = Schema::Array { items: &NODE, max_items: None };
        assert_eq!(
            json(&NODE),
            r##"{"type":"object","properties":{"name":{"type":"string"},"kids/all":{"type":"array","items":{"$ref":"#"}}},"required":["name"],"additionalProperties":false}"##
        );
        assert_eq!(
            json(&KIDS),
            r##"{"type":"array","items":{"type":"object","properties":{"name":{"type":"string"},"kids/all":{"$ref":"#"}},"required":["name"],"additionalProperties":false}}"##
        );
        static WRAP: Schema =
            Schema::AnyOf(&[Schema::Null, Schema::Array { items: &NODE, max_items: None }]);
        let out = json(&WRAP);
        assert!(out.contains(r##""items":{"$ref":"#/anyOf/1/items"}"##), "{out}");
    }

    #[test]
    fn shared_but_acyclic_schemas_are_rendered_in_full_each_time() {
        static PAIR: Schema = Schema::Object {
            properties: &[
                Property { name: "a", schema: &schema::UNSIGNED, required: true },
                Property { name: "b", schema: &schema::UNSIGNED, required: true },
            ],
            additional: false,
        };
        let v = PAIR.to_json_schema();
        let props = v.get("properties").unwrap();
        assert_eq!(props.get("a"), props.get("b"));
        assert_eq!(props.get("a").unwrap().get("minimum").and_then(Value::as_u64), Some(0));
        assert_eq!(v.get("required"), Some(&Value::Array(vec!["a".into(), "b".into()])));
    }

    #[test]
    fn repeated_property_names_render_once() {
        static DUP: Schema = Schema::Object {
            properties: &[
                Property { name: "a", schema: &schema::STRING, required: true },
                Property { name: "a", schema: &schema::NUMBER, required: true },
            ],
            additional: false,
        };
        assert_eq!(
            json(&DUP),
            r#"{"type":"object","properties":{"a":{"type":"string"}},"required":["a"],"additionalProperties":false}"#
        );
    }

    #[test]
    fn object_root_check() {
        assert!(schema::EMPTY_OBJECT.has_object_root());
        assert!(!schema::ANY.has_object_root());
    }
}
