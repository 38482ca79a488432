//! Instances generated from a schema in its JSON Schema form (what `actions/describe` shows and
//! [`Schema::to_json_schema`](super::Schema::to_json_schema) writes): a minimal value that
//! matches it, and a value that does not. `jfgui-agent check` and host-sdk's `testing` call an
//! app's actions with them, so they work on the rendered form that both a client and an app see.
//!
//! # What "minimal" means
//!
//! The fewest members and elements: only required members, empty arrays, the first matching
//! alternative of `anyOf`. Scalars are the simplest value within the bounds: `null`, `false`,
//! `0` (or the bound nearest to it), and for strings the first `enum` value that fits, else
//! `"x"` (`""` only when `maxLength` is 0), because an empty string makes most writes change
//! nothing, and a check needs a write that does.
//!
//! # Which schemas
//!
//! Exactly the draft 2020-12 subset the renderer writes: `{}`, `type` with `minimum`,
//! `maximum`, `maxLength`, `enum`, `items`, `maxItems`, `properties`, `required`,
//! `additionalProperties`, plus `anyOf` and `$ref` (a JSON pointer into the same document, for
//! recursion). Any other keyword is reported, never ignored: a constraint the generator does
//! not understand could make its value invalid.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use crate::{Map, Number, Value};

/// `$ref` hops followed on one path before giving up (the renderer's refs point at enclosing
/// schemas, so a longer chain means a cycle that never reaches a value).
const MAX_REF_HOPS: usize = 64;

/// Why no value can be generated: where in the schema (a JSON pointer) and what is wrong, e.g.
/// `/properties/by`: `minimum 5 is above maximum 3`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoInstance {
    /// JSON pointer into the schema; `""` for its root.
    pub pointer: String,
    /// One sentence.
    pub message: String,
}

impl fmt::Display for NoInstance {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = if self.pointer.is_empty() { "the root" } else { self.pointer.as_str() };
        write!(f, "no value matches the schema at {at}: {}", self.message)
    }
}

#[cfg(feature = "std")]
impl std::error::Error for NoInstance {}

/// A minimal value that `schema` (JSON Schema, the subset above) accepts, or why none exists
/// (an impossible bound, an empty `enum`, an `anyOf` with no satisfiable alternative, a
/// required member that recurses forever, an unsupported keyword).
///
/// ```
/// # use jfgui_proto::{Property, Schema, Value, schema};
/// static ADD: Schema = Schema::Object {
///     properties: &[
///         Property { name: "by", schema: &Schema::Integer { min: Some(1), max: None }, required: true },
///         Property { name: "tag", schema: &schema::STRING, required: false },
///     ],
///     additional: false,
/// };
/// let input = schema::minimal_instance(&ADD.to_json_schema()).unwrap();
/// assert_eq!(input.get("by").and_then(Value::as_i64), Some(1));
/// assert!(input.get("tag").is_none());
/// assert!(ADD.validate(&input).is_ok());
///
/// static NONE: Schema = Schema::Integer { min: Some(5), max: Some(3) };
/// let e = schema::minimal_instance(&NONE.to_json_schema()).unwrap_err();
/// assert_eq!(e.message, "minimum 5 is above maximum 3");
/// ```
pub fn minimal_instance(schema: &Value) -> Result<Value, NoInstance> {
    let mut walk = Walk { root: schema, pointer: String::new(), expanding: Vec::new() };
    walk.minimal(schema)
}

/// A value that `schema` refuses, for probing that an app refuses it too; `None` when the
/// schema accepts every value (`{}`, or an `anyOf` that admits every JSON type) or is not in
/// the subset above.
///
/// Objects get the most telling violation: an unknown member where additional members are
/// refused, else a missing required member; everything else a value of the wrong type.
///
/// ```
/// # use jfgui_proto::{Property, Schema, schema};
/// static INSERT: Schema = Schema::Object {
///     properties: &[Property { name: "text", schema: &schema::STRING, required: true }],
///     additional: false,
/// };
/// let bad = schema::violating_instance(&INSERT.to_json_schema()).unwrap();
/// assert_eq!(INSERT.validate(&bad).unwrap_err().pointer, "/unexpectedMember");
/// assert_eq!(schema::violating_instance(&schema::ANY.to_json_schema()), None);
/// ```
pub fn violating_instance(schema: &Value) -> Option<Value> {
    let mut walk = Walk { root: schema, pointer: String::new(), expanding: Vec::new() };
    walk.violating(schema)
}

/// A schema read into the keywords the renderer writes.
enum Shape<'s> {
    Any,
    Null,
    Boolean,
    Integer { min: Option<i64>, max: Option<i64> },
    Number,
    String { max_length: Option<u64>, one_of: Option<&'s [Value]> },
    Array,
    Object { properties: &'s Map, required: Vec<&'s str>, additional: bool },
    AnyOf(&'s [Value]),
    Ref(&'s str),
}

/// The JSON types a value can have, with a non-integral number apart from an integral one
/// (`integer` admits only the latter).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Null,
    Boolean,
    Integral,
    Fraction,
    String,
    Array,
    Object,
}

const KINDS: [Kind; 7] = [
    Kind::Null,
    Kind::Boolean,
    Kind::Integral,
    Kind::Fraction,
    Kind::String,
    Kind::Array,
    Kind::Object,
];

impl Kind {
    fn example(self) -> Value {
        match self {
            Kind::Null => Value::Null,
            Kind::Boolean => Value::Bool(false),
            Kind::Integral => Value::from(0i64),
            Kind::Fraction => Value::Number(Number::from_token("0.5").expect("a number token")),
            Kind::String => Value::from("x"),
            Kind::Array => Value::Array(Vec::new()),
            Kind::Object => Value::Object(Map::new()),
        }
    }
}

/// One traversal: the document root (for `$ref`), the pointer of the schema being read, and
/// the `$ref` targets being expanded on the current path (a cycle among them has no finite
/// instance).
struct Walk<'s> {
    root: &'s Value,
    pointer: String,
    expanding: Vec<&'s str>,
}

impl<'s> Walk<'s> {
    fn fail<T>(&self, message: impl Into<String>) -> Result<T, NoInstance> {
        Err(NoInstance { pointer: self.pointer.clone(), message: message.into() })
    }

    /// Runs `f` with the pointer extended by `steps` (RFC 6901 escaped).
    fn at<T>(&mut self, steps: &[&str], f: impl FnOnce(&mut Self) -> T) -> T {
        let len = self.pointer.len();
        for step in steps {
            self.pointer.push('/');
            for c in step.chars() {
                match c {
                    '~' => self.pointer.push_str("~0"),
                    '/' => self.pointer.push_str("~1"),
                    c => self.pointer.push(c),
                }
            }
        }
        let result = f(self);
        self.pointer.truncate(len);
        result
    }

    fn minimal(&mut self, schema: &'s Value) -> Result<Value, NoInstance> {
        match self.shape(schema)? {
            Shape::Any | Shape::Null => Ok(Value::Null),
            Shape::Boolean => Ok(Value::Bool(false)),
            Shape::Integer { min: Some(lo), max: Some(hi) } if lo > hi => {
                self.fail(format!("minimum {lo} is above maximum {hi}"))
            }
            Shape::Integer { min, max } => {
                Ok(Value::from(0i64.max(min.unwrap_or(i64::MIN)).min(max.unwrap_or(i64::MAX))))
            }
            Shape::Number => Ok(Value::from(0i64)),
            Shape::String { max_length, one_of: Some(choices) } => {
                let fits = |s: &&str| max_length.is_none_or(|m| s.chars().count() as u64 <= m);
                match choices.iter().filter_map(Value::as_str).find(fits) {
                    Some(choice) => Ok(Value::from(choice)),
                    None if choices.is_empty() => self.fail("the enum is empty"),
                    None => self.fail(format!(
                        "no enum value is at most {} characters long",
                        max_length.unwrap_or(0)
                    )),
                }
            }
            Shape::String { max_length: Some(0), one_of: None } => Ok(Value::from("")),
            Shape::String { .. } => Ok(Value::from("x")),
            Shape::Array => Ok(Value::Array(Vec::new())),
            Shape::Object { properties, required, additional } => {
                let mut out = Map::with_capacity(required.len());
                for name in required {
                    let value = match properties.get(name) {
                        Some(member) => self.at(&["properties", name], |w| w.minimal(member))?,
                        // Not described, so anything goes if unknown members are allowed.
                        None if additional => Value::Null,
                        None => {
                            return self.fail(format!(
                                "required member \"{name}\" is not among the properties, and other members are refused"
                            ));
                        }
                    };
                    out.insert(name, value);
                }
                Ok(Value::Object(out))
            }
            Shape::AnyOf(alternatives) => {
                let mut first_error = None;
                for (i, alternative) in alternatives.iter().enumerate() {
                    let index = format!("{i}");
                    match self.at(&["anyOf", &index], |w| w.minimal(alternative)) {
                        Ok(value) => return Ok(value),
                        Err(e) => {
                            first_error.get_or_insert(e);
                        }
                    }
                }
                match first_error {
                    Some(e) if alternatives.len() == 1 => Err(e),
                    Some(e) => self.fail(format!(
                        "no alternative of anyOf has a value (the first: {})",
                        e.message
                    )),
                    None => self.fail("anyOf has no alternatives"),
                }
            }
            Shape::Ref(target) => self.follow(target, |w, schema| w.minimal(schema)),
        }
    }

    fn violating(&mut self, schema: &'s Value) -> Option<Value> {
        match self.shape(schema).ok()? {
            Shape::Any => None,
            Shape::Null => Some(Value::Bool(false)),
            Shape::Object { properties, additional: false, .. } => {
                let Ok(Value::Object(mut valid)) = self.minimal(schema) else {
                    return Some(Value::Null);
                };
                let mut name = String::from("unexpectedMember");
                while properties.contains_key(&name) {
                    name.push('_');
                }
                valid.insert(name, true);
                Some(Value::Object(valid))
            }
            Shape::Object { required, .. } if !required.is_empty() => match self.minimal(schema) {
                Ok(Value::Object(mut valid)) => {
                    valid.remove(required[0]);
                    Some(Value::Object(valid))
                }
                _ => Some(Value::Null),
            },
            Shape::AnyOf(alternatives) => {
                let admitted = |w: &mut Self, kind| {
                    alternatives.iter().any(|alternative| w.admits(alternative, kind))
                };
                KINDS.into_iter().find(|&kind| !admitted(self, kind)).map(Kind::example)
            }
            Shape::Ref(target) => self.follow(target, |w, schema| Ok(w.violating(schema))).ok()?,
            _ => Some(Value::Null),
        }
    }

    /// Whether some value of `kind` may match `schema` (true when unsure: the caller only
    /// trusts a `false`).
    fn admits(&mut self, schema: &'s Value, kind: Kind) -> bool {
        match self.shape(schema) {
            Err(_) | Ok(Shape::Any) => true,
            Ok(Shape::Null) => kind == Kind::Null,
            Ok(Shape::Boolean) => kind == Kind::Boolean,
            Ok(Shape::Integer { .. }) => kind == Kind::Integral,
            Ok(Shape::Number) => matches!(kind, Kind::Integral | Kind::Fraction),
            Ok(Shape::String { .. }) => kind == Kind::String,
            Ok(Shape::Array) => kind == Kind::Array,
            Ok(Shape::Object { .. }) => kind == Kind::Object,
            Ok(Shape::AnyOf(alternatives)) => alternatives.iter().any(|a| self.admits(a, kind)),
            Ok(Shape::Ref(target)) => {
                self.follow(target, |w, schema| Ok(w.admits(schema, kind))).unwrap_or(true)
            }
        }
    }

    /// Runs `f` on the schema a `$ref` points at, refusing a cycle.
    fn follow<T>(
        &mut self,
        target: &'s str,
        f: impl FnOnce(&mut Self, &'s Value) -> Result<T, NoInstance>,
    ) -> Result<T, NoInstance> {
        if self.expanding.contains(&target) || self.expanding.len() >= MAX_REF_HOPS {
            return self.fail(format!(
                "\"$ref\": \"{target}\" recurses without reaching a value (a required member or the only alternative contains itself)"
            ));
        }
        let Some(schema) = resolve(self.root, target) else {
            return self.fail(format!("\"$ref\": \"{target}\" points at nothing in the document"));
        };
        // Inside the target, pointers are the target's own.
        let from = core::mem::replace(&mut self.pointer, String::from(target));
        self.expanding.push(target);
        let result = f(self, schema);
        self.expanding.pop();
        self.pointer = from;
        result
    }

    /// Reads `schema`'s keywords, refusing any the renderer never writes.
    fn shape(&self, schema: &'s Value) -> Result<Shape<'s>, NoInstance> {
        let Some(m) = schema.as_object() else {
            return self.fail(format!("a schema is an object, not {}", schema.type_name()));
        };
        if let Some(target) = m.get("$ref") {
            self.only(m, &["$ref"])?;
            return match target.as_str().and_then(|t| t.strip_prefix('#')) {
                Some(pointer) => Ok(Shape::Ref(pointer)),
                None => self.fail("\"$ref\" must be a pointer into this document (\"#/...\")"),
            };
        }
        if let Some(alternatives) = m.get("anyOf") {
            self.only(m, &["anyOf"])?;
            return match alternatives.as_array() {
                Some(list) => Ok(Shape::AnyOf(list)),
                None => self.fail("\"anyOf\" must be an array"),
            };
        }
        let Some(t) = m.get("type") else {
            self.only(m, &[])?;
            return Ok(Shape::Any);
        };
        let shape = match t.as_str() {
            Some("null") => self.only(m, &["type"]).map(|()| Shape::Null)?,
            Some("boolean") => self.only(m, &["type"]).map(|()| Shape::Boolean)?,
            Some("number") => self.only(m, &["type"]).map(|()| Shape::Number)?,
            Some("integer") => {
                self.only(m, &["type", "minimum", "maximum"])?;
                Shape::Integer { min: self.int(m, "minimum")?, max: self.int(m, "maximum")? }
            }
            Some("string") => {
                self.only(m, &["type", "maxLength", "enum"])?;
                let one_of = match m.get("enum") {
                    None => None,
                    Some(Value::Array(list)) if list.iter().all(|v| v.as_str().is_some()) => {
                        Some(list.as_slice())
                    }
                    Some(_) => return self.fail("\"enum\" must be an array of strings"),
                };
                Shape::String { max_length: self.count(m, "maxLength")?, one_of }
            }
            Some("array") => {
                self.only(m, &["type", "items", "maxItems"])?;
                self.count(m, "maxItems")?;
                Shape::Array
            }
            Some("object") => {
                self.only(m, &["type", "properties", "required", "additionalProperties"])?;
                static NONE: Map = Map::new();
                let properties = match m.get("properties") {
                    None => &NONE,
                    Some(Value::Object(p)) => p,
                    Some(_) => return self.fail("\"properties\" must be an object"),
                };
                let required = match m.get("required") {
                    None => Vec::new(),
                    Some(Value::Array(names)) => match names.iter().map(Value::as_str).collect() {
                        Some(names) => names,
                        None => return self.fail("\"required\" must be an array of strings"),
                    },
                    Some(_) => return self.fail("\"required\" must be an array of strings"),
                };
                let additional = match m.get("additionalProperties") {
                    None => true,
                    Some(Value::Bool(b)) => *b,
                    Some(_) => return self.fail("\"additionalProperties\" must be a boolean"),
                };
                Shape::Object { properties, required, additional }
            }
            _ => return self.fail("\"type\" must be one of the seven JSON Schema type names"),
        };
        Ok(shape)
    }

    fn only(&self, m: &Map, allowed: &[&str]) -> Result<(), NoInstance> {
        match m.keys().find(|k| !allowed.contains(k)) {
            Some(k) => {
                self.fail(format!("keyword \"{k}\" is not in the schema subset jfgui renders"))
            }
            None => Ok(()),
        }
    }

    fn int(&self, m: &Map, key: &str) -> Result<Option<i64>, NoInstance> {
        match m.get(key) {
            None => Ok(None),
            Some(v) => match v.as_i64() {
                Some(i) => Ok(Some(i)),
                None => self.fail(format!("\"{key}\" must be a 64-bit integer")),
            },
        }
    }

    fn count(&self, m: &Map, key: &str) -> Result<Option<u64>, NoInstance> {
        match m.get(key) {
            None => Ok(None),
            Some(v) => match v.as_u64() {
                Some(n) => Ok(Some(n)),
                None => self.fail(format!("\"{key}\" must be a non-negative integer")),
            },
        }
    }
}

/// The value at JSON pointer `pointer` (RFC 6901, `""` for the root) in `root`.
fn resolve<'s>(root: &'s Value, pointer: &str) -> Option<&'s Value> {
    if pointer.is_empty() {
        return Some(root);
    }
    let mut here = root;
    for raw in pointer.strip_prefix('/')?.split('/') {
        let step = raw.replace("~1", "/").replace("~0", "~");
        here = match here {
            Value::Object(m) => m.get(&step)?,
            Value::Array(items) => items.get(step.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(here)
}

#[cfg(test)]
mod tests {
    use alloc::string::ToString;

    use super::*;
    use crate::schema::{self, Property, Schema};

    fn minimal(schema: &Schema) -> Result<Value, NoInstance> {
        let v = minimal_instance(&schema.to_json_schema());
        if let Ok(value) = &v {
            assert_eq!(schema.validate(value), Ok(()), "{value:?}");
        }
        v
    }

    fn violating(schema: &Schema) -> Option<Value> {
        let v = violating_instance(&schema.to_json_schema());
        if let Some(value) = &v {
            assert!(schema.validate(value).is_err(), "{value:?} should be refused");
        }
        v
    }

    #[test]
    fn scalars_are_the_simplest_value_within_bounds() {
        assert_eq!(minimal(&schema::NULL), Ok(Value::Null));
        assert_eq!(minimal(&schema::BOOLEAN), Ok(Value::Bool(false)));
        assert_eq!(minimal(&schema::INTEGER), Ok(Value::from(0i64)));
        assert_eq!(minimal(&Schema::Integer { min: Some(3), max: None }), Ok(Value::from(3i64)));
        assert_eq!(minimal(&Schema::Integer { min: None, max: Some(-7) }), Ok(Value::from(-7i64)));
        assert_eq!(minimal(&schema::NUMBER), Ok(Value::from(0i64)));
        assert_eq!(minimal(&schema::STRING), Ok(Value::from("x")));
        assert_eq!(minimal(&Schema::String { max_length: Some(0), one_of: None }), Ok("".into()));
        static MODE: Schema =
            Schema::String { max_length: Some(3), one_of: Some(&["long", "abc", "b"]) };
        assert_eq!(minimal(&MODE), Ok(Value::from("abc")));
        assert_eq!(minimal(&schema::ANY), Ok(Value::Null));
    }

    #[test]
    fn containers_hold_only_what_is_required() {
        static LIST: Schema = Schema::Array { items: &Schema::AnyOf(&[]), max_items: Some(0) };
        assert_eq!(minimal(&LIST), Ok(Value::Array(Vec::new())), "an empty array needs no item");
        static POINT: Schema = Schema::Object {
            properties: &[
                Property { name: "x", schema: &schema::UNSIGNED, required: true },
                Property { name: "label", schema: &schema::STRING, required: false },
                Property { name: "y", schema: &schema::INTEGER, required: true },
            ],
            additional: false,
        };
        let p = minimal(&POINT).unwrap();
        assert_eq!(p.as_object().unwrap().keys().collect::<Vec<_>>(), ["x", "y"]);
        static EITHER: Schema =
            Schema::AnyOf(&[Schema::Integer { min: Some(2), max: Some(1) }, Schema::Boolean]);
        assert_eq!(minimal(&EITHER), Ok(Value::Bool(false)));
    }

    #[test]
    fn impossible_schemas_are_reported_where_they_are_impossible() {
        static BOUNDS: Schema = Schema::Object {
            properties: &[Property {
                name: "by",
                schema: &Schema::Integer { min: Some(5), max: Some(3) },
                required: true,
            }],
            additional: false,
        };
        let e = minimal(&BOUNDS).unwrap_err();
        assert_eq!(
            (e.pointer.as_str(), e.message.as_str()),
            ("/properties/by", "minimum 5 is above maximum 3")
        );
        assert_eq!(
            e.to_string(),
            "no value matches the schema at /properties/by: minimum 5 is above maximum 3"
        );
        let e = minimal(&Schema::String { max_length: None, one_of: Some(&[]) }).unwrap_err();
        assert_eq!(e.message, "the enum is empty");
        let e =
            minimal(&Schema::String { max_length: Some(1), one_of: Some(&["ab"]) }).unwrap_err();
        assert_eq!(e.message, "no enum value is at most 1 characters long");
        let e = minimal(&Schema::AnyOf(&[])).unwrap_err();
        assert_eq!(e.message, "anyOf has no alternatives");
        static NEITHER: Schema = Schema::AnyOf(&[
            Schema::Integer { min: Some(2), max: Some(1) },
            Schema::String { max_length: None, one_of: Some(&[]) },
        ]);
        let e = minimal(&NEITHER).unwrap_err();
        assert_eq!(e.pointer, "");
        assert!(e.message.starts_with("no alternative of anyOf has a value"), "{e}");
        // An optional impossible member does not matter.
        static OPTIONAL: Schema = Schema::Object {
            properties: &[Property { name: "n", schema: &Schema::AnyOf(&[]), required: false }],
            additional: false,
        };
        assert_eq!(minimal(&OPTIONAL), Ok(Value::Object(Map::new())));
    }

    #[test]
    fn recursion_needs_a_base_case() {
        // A tree whose children are optional: the minimal node has none.
        static NODE: Schema = Schema::Object {
            properties: &[
                Property { name: "name", schema: &schema::STRING, required: true },
                Property { name: "kids", schema: &KIDS, required: false },
            ],
            additional: false,
        };
        static KIDS: Schema = Schema::Array { items: &NODE, max_items: None };
        assert!(minimal(&NODE).is_ok());
        // A list that must contain itself: no finite value.
        static FOREVER: Schema = Schema::Object {
            properties: &[Property { name: "next", schema: &FOREVER, required: true }],
            additional: false,
        };
        let e = minimal(&FOREVER).unwrap_err();
        assert_eq!(e.pointer, "/properties/next");
        assert!(e.message.contains("recurses without reaching a value"), "{e}");
        // ... unless an alternative ends it.
        static LINKED: Schema = Schema::AnyOf(&[
            Schema::Object {
                properties: &[Property { name: "next", schema: &LINKED, required: true }],
                additional: false,
            },
            Schema::Null,
        ]);
        let v = minimal(&LINKED).unwrap();
        assert_eq!(v.get("next"), Some(&Value::Null));
    }

    #[test]
    fn unsupported_keywords_are_reported_not_ignored() {
        let schema =
            crate::parse(br#"{"type":"string","minLength":3}"#, &crate::Limits::DEFAULT).unwrap();
        let e = minimal_instance(&schema).unwrap_err();
        assert_eq!(e.message, "keyword \"minLength\" is not in the schema subset jfgui renders");
        assert_eq!(violating_instance(&schema), None);
        let e = minimal_instance(&Value::Bool(true)).unwrap_err();
        assert_eq!(e.message, "a schema is an object, not boolean");
        let dangling = crate::parse(br##"{"$ref":"#/nowhere"}"##, &crate::Limits::DEFAULT).unwrap();
        assert!(minimal_instance(&dangling).unwrap_err().message.contains("points at nothing"));
    }

    #[test]
    fn violations_pick_the_most_telling_mistake() {
        static STRICT: Schema = Schema::Object {
            properties: &[Property {
                name: "unexpectedMember",
                schema: &schema::STRING,
                required: true,
            }],
            additional: false,
        };
        let v = violating(&STRICT).unwrap();
        assert_eq!(STRICT.validate(&v).unwrap_err().pointer, "/unexpectedMember_");
        static OPEN: Schema = Schema::Object {
            properties: &[Property { name: "text", schema: &schema::STRING, required: true }],
            additional: true,
        };
        let v = violating(&OPEN).unwrap();
        assert_eq!(OPEN.validate(&v).unwrap_err().message, "missing required member \"text\"");
        assert_eq!(violating(&schema::OBJECT), Some(Value::Null));
        assert_eq!(violating(&schema::NULL), Some(Value::Bool(false)));
        assert_eq!(violating(&schema::UNSIGNED), Some(Value::Null));
        assert_eq!(violating(&schema::ANY), None);
        static NUMBERS: Schema = Schema::AnyOf(&[Schema::Null, Schema::Boolean, schema::INTEGER]);
        assert_eq!(
            violating(&NUMBERS).as_ref().and_then(Value::as_number).map(Number::as_str),
            Some("0.5")
        );
        static EVERYTHING: Schema = Schema::AnyOf(&[
            Schema::Null,
            Schema::Boolean,
            Schema::Number,
            schema::STRING,
            Schema::Array { items: &schema::ANY, max_items: None },
            schema::OBJECT,
        ]);
        assert_eq!(violating(&EVERYTHING), None);
    }

    #[test]
    fn pointers_resolve_with_escapes() {
        let doc = crate::parse(br#"{"a/b":{"~":[1,{"k":2}]}}"#, &crate::Limits::DEFAULT).unwrap();
        assert_eq!(resolve(&doc, "/a~1b/~0/1/k").and_then(Value::as_u64), Some(2));
        assert_eq!(resolve(&doc, ""), Some(&doc));
        assert_eq!(resolve(&doc, "/a~1b/~0/9"), None);
        assert_eq!(resolve(&doc, "nope"), None);
    }
}
