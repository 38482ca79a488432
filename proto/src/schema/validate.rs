//! Validation of a [`Value`] against a [`Schema`], reporting the first violation with a JSON
//! pointer into the value.
//!
//! # Why recursion is safe here
//!
//! The checker recurses, and every recursive step either descends one level into the *value*
//! (array element, object member) or into an [`Schema::AnyOf`] alternative. `AnyOf` holds its
//! alternatives by value in a `'static` slice, so a cycle through `AnyOf` alone would be a cycle
//! in constant evaluation, which the compiler rejects: `AnyOf` nesting is bounded by the
//! schema's source text. Schemas *may* be recursive through `Array::items` or a property (a
//! `static` may refer to itself), but each such step consumes one level of the value. Values
//! from the parser are at most [`Limits::max_depth`](crate::Limits::max_depth) deep (32 by
//! default), so the recursion depth is bounded by the value depth times the (static) `AnyOf`
//! nesting. For hand-built values, which the parser never saw, [`MAX_VALIDATION_DEPTH`] is a
//! hard stop that turns deeper nesting into a violation instead of a stack overflow.
//!
//! Time is bounded too: ambiguous alternatives (`AnyOf` of two schemas that both descend into
//! the same array) could otherwise retry a subtree once per alternative at every level, so
//! every check spends one step of [`MAX_VALIDATION_STEPS`].

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use super::Schema;
use crate::{Map, Value};

/// Value nesting beyond which validation reports a violation instead of descending further.
/// Far above the parser's default depth (32), so it only matters for hand-built values.
pub const MAX_VALIDATION_DEPTH: usize = 128;

/// Checks one validation may make (one per value per schema tried) before it gives up with a
/// violation. A value from the parser has at most 16384 values by default, so only schemas
/// with ambiguous `AnyOf` alternatives come near it.
pub const MAX_VALIDATION_STEPS: usize = 1 << 20;

/// Longest excerpt of a string, key or number token quoted in a message.
const EXCERPT: usize = 40;

/// Most `one_of` choices listed in a message.
const LISTED_CHOICES: usize = 8;

/// Where and why a value does not match its schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaViolation {
    /// JSON pointer (RFC 6901, `~0`/`~1` escaped) to the offending value; `""` for the root.
    pub pointer: String,
    /// One sentence, e.g. `expected integer >= 0, found string`.
    pub message: String,
}

impl fmt::Display for SchemaViolation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (at \"{}\")", self.message, self.pointer)
    }
}

#[cfg(feature = "std")]
impl std::error::Error for SchemaViolation {}

impl Schema {
    /// Checks `value`; the first violation found is returned.
    ///
    /// The walk is depth-first in document order, checking a container itself (type, length,
    /// missing required members) before its elements or members in order. For
    /// [`Schema::AnyOf`], when exactly one alternative matches the value's outer shape and fails
    /// deeper inside, that deeper violation is reported (it is the precise one); otherwise the
    /// violation is at the `AnyOf` itself and lists what was expected.
    ///
    /// ```
    /// # use jfgui_proto::{Map, Property, Schema, Value, schema};
    /// static INPUT: Schema = Schema::Object {
    ///     properties: &[Property { name: "count", schema: &schema::UNSIGNED, required: true }],
    ///     additional: false,
    /// };
    /// let mut m = Map::new();
    /// m.insert("count", -1i64);
    /// let err = INPUT.validate(&Value::Object(m)).unwrap_err();
    /// assert_eq!(err.pointer, "/count");
    /// assert_eq!(err.message, "expected integer >= 0, found -1");
    /// ```
    pub fn validate(&self, value: &Value) -> Result<(), SchemaViolation> {
        let mut path = Vec::new();
        let mut budget = MAX_VALIDATION_STEPS;
        check(self, value, &mut path, &mut budget)
            .map_err(|message| SchemaViolation { pointer: pointer(&path), message })
    }
}

/// One step of the path from the root to the value being checked.
#[derive(Debug, Clone, Copy)]
enum Step<'v> {
    Index(usize),
    Key(&'v str),
}

/// Checks `value` at `path`. On failure `path` is left pointing at the offending value and the
/// message is returned; on success `path` is as it was on entry.
fn check<'v>(
    schema: &Schema,
    value: &'v Value,
    path: &mut Vec<Step<'v>>,
    budget: &mut usize,
) -> Result<(), String> {
    if *budget == 0 {
        return Err(format!(
            "value too complex to validate against this schema (over {MAX_VALIDATION_STEPS} checks)"
        ));
    }
    *budget -= 1;
    match (schema, value) {
        (Schema::Any, _) | (Schema::Null, Value::Null) | (Schema::Boolean, Value::Bool(_)) => {
            Ok(())
        }
        (Schema::Number, Value::Number(_)) => Ok(()),
        (Schema::Integer { min, max }, Value::Number(n)) => {
            let Some(i) = n.to_i64() else {
                return Err(format!(
                    "expected {}, found {} (not an integer in the 64-bit signed range)",
                    expected(schema),
                    excerpt(n.as_str()),
                ));
            };
            if min.is_some_and(|m| i < m) || max.is_some_and(|m| i > m) {
                return Err(format!("expected {}, found {i}", expected(schema)));
            }
            Ok(())
        }
        (Schema::String { max_length, one_of }, Value::String(s)) => {
            if let Some(choices) = one_of
                && !choices.contains(&s.as_str())
            {
                return Err(format!(
                    "expected one of {}, found \"{}\"",
                    list_choices(choices),
                    excerpt(s)
                ));
            }
            if let Some(max) = max_length {
                // Count Unicode scalar values, stopping early: the answer only needs "> max".
                let limit = *max as usize;
                let count = s.chars().take(limit.saturating_add(1)).count();
                if count > limit {
                    return Err(format!(
                        "expected a string of at most {max} characters, found {}",
                        s.chars().count()
                    ));
                }
            }
            Ok(())
        }
        (Schema::Array { items, max_items }, Value::Array(elements)) => {
            if let Some(max) = max_items
                && elements.len() > *max as usize
            {
                return Err(format!(
                    "expected an array of at most {max} items, found {}",
                    elements.len()
                ));
            }
            for (i, element) in elements.iter().enumerate() {
                descend(items, element, Step::Index(i), path, budget)?;
            }
            Ok(())
        }
        (Schema::Object { properties, additional }, Value::Object(members)) => {
            if let Some(missing) =
                properties.iter().find(|p| p.required && !members.contains_key(p.name))
            {
                return Err(format!("missing required member \"{}\"", missing.name));
            }
            check_members(properties, *additional, members, path, budget)
        }
        (Schema::AnyOf(alternatives), _) => check_any_of(alternatives, value, path, budget),
        _ => Err(format!("expected {}, found {}", expected(schema), found(value))),
    }
}

fn check_members<'v>(
    properties: &[super::Property],
    additional: bool,
    members: &'v Map,
    path: &mut Vec<Step<'v>>,
    budget: &mut usize,
) -> Result<(), String> {
    for (key, member) in members.iter() {
        match properties.iter().find(|p| p.name == key) {
            Some(property) => descend(property.schema, member, Step::Key(key), path, budget)?,
            None if additional => {}
            None => {
                path.push(Step::Key(key));
                return Err(format!("unknown member \"{}\" is not allowed here", excerpt(key)));
            }
        }
    }
    Ok(())
}

/// Checks a child value one level down, enforcing [`MAX_VALIDATION_DEPTH`].
fn descend<'v>(
    schema: &Schema,
    value: &'v Value,
    step: Step<'v>,
    path: &mut Vec<Step<'v>>,
    budget: &mut usize,
) -> Result<(), String> {
    path.push(step);
    if path.len() > MAX_VALIDATION_DEPTH {
        return Err(format!("value nested deeper than {MAX_VALIDATION_DEPTH} levels"));
    }
    check(schema, value, path, budget)?;
    path.pop();
    Ok(())
}

fn check_any_of<'v>(
    alternatives: &[Schema],
    value: &'v Value,
    path: &mut Vec<Step<'v>>,
    budget: &mut usize,
) -> Result<(), String> {
    let depth = path.len();
    // The one alternative that failed below this level, if exactly one did.
    let mut deeper: Option<(Vec<Step<'v>>, String)> = None;
    let mut deeper_count = 0;
    for alternative in alternatives {
        let mut attempt = path.clone();
        match check(alternative, value, &mut attempt, budget) {
            Ok(()) => return Ok(()),
            // Out of steps: report that, wherever it happened, instead of trying on.
            Err(message) if *budget == 0 => {
                *path = attempt;
                return Err(message);
            }
            Err(message) if attempt.len() > depth => {
                deeper_count += 1;
                deeper = Some((attempt, message));
            }
            Err(_) => {}
        }
    }
    if let (1, Some((attempt, message))) = (deeper_count, deeper) {
        *path = attempt;
        return Err(message);
    }
    let mut wanted = String::new();
    for (i, alternative) in alternatives.iter().enumerate() {
        if i > 0 {
            wanted.push_str(", ");
        }
        wanted.push_str(&expected(alternative));
    }
    Err(format!("expected any of ({wanted}), found {}", found(value)))
}

/// What a schema accepts, in a few words, for messages.
fn expected(schema: &Schema) -> String {
    match schema {
        Schema::Null => "null".into(),
        Schema::Boolean => "boolean".into(),
        Schema::Integer { min: None, max: None } => "integer".into(),
        Schema::Integer { min: Some(lo), max: None } => format!("integer >= {lo}"),
        Schema::Integer { min: None, max: Some(hi) } => format!("integer <= {hi}"),
        Schema::Integer { min: Some(lo), max: Some(hi) } => format!("integer in {lo}..={hi}"),
        Schema::Number => "number".into(),
        Schema::String { .. } => "string".into(),
        Schema::Array { .. } => "array".into(),
        Schema::Object { .. } => "object".into(),
        Schema::AnyOf(_) => "one of several schemas".into(),
        Schema::Any => "anything".into(),
    }
}

/// What a value is, in a few words, for messages: the type, and the value itself for numbers
/// (so `-1` against `integer >= 0` reads naturally).
fn found(value: &Value) -> String {
    match value {
        Value::Number(n) => format!("number {}", excerpt(n.as_str())),
        other => other.type_name().into(),
    }
}

/// `s`, cut to [`EXCERPT`] characters with an ellipsis, so messages stay short whatever the
/// input.
fn excerpt(s: &str) -> String {
    match s.char_indices().nth(EXCERPT) {
        Some((cut, _)) => format!("{}…", &s[..cut]),
        None => s.into(),
    }
}

fn list_choices(choices: &[&str]) -> String {
    let mut out = String::new();
    for (i, choice) in choices.iter().take(LISTED_CHOICES).enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        out.push('"');
        out.push_str(&excerpt(choice));
        out.push('"');
    }
    if choices.len() > LISTED_CHOICES {
        out.push_str(&format!(", … ({} in all)", choices.len()));
    }
    out
}

/// RFC 6901: `~` becomes `~0` and `/` becomes `~1`; the root is `""`.
fn pointer(path: &[Step<'_>]) -> String {
    let mut out = String::new();
    for step in path {
        out.push('/');
        match step {
            Step::Index(i) => out.push_str(&format!("{i}")),
            Step::Key(key) => {
                for c in key.chars() {
                    match c {
                        '~' => out.push_str("~0"),
                        '/' => out.push_str("~1"),
                        c => out.push(c),
                    }
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use alloc::vec;

    use super::*;
    use crate::schema::{self, Property};
    use crate::{Number, Value};

    fn num(token: &str) -> Value {
        Value::Number(Number::from_token(token).unwrap())
    }

    fn obj(members: &[(&str, Value)]) -> Value {
        let mut m = Map::new();
        for (k, v) in members {
            m.insert(*k, v.clone());
        }
        Value::Object(m)
    }

    fn violation(schema: &Schema, value: &Value) -> (String, String) {
        let v = schema.validate(value).unwrap_err();
        (v.pointer, v.message)
    }

    #[test]
    fn scalars_accept_their_own_type_only() {
        assert!(schema::NULL.validate(&Value::Null).is_ok());
        assert!(schema::BOOLEAN.validate(&Value::Bool(true)).is_ok());
        assert!(schema::NUMBER.validate(&num("1.5e300")).is_ok());
        assert!(schema::STRING.validate(&"x".into()).is_ok());
        assert_eq!(
            violation(&schema::NULL, &Value::Bool(false)),
            ("".into(), "expected null, found boolean".into())
        );
        assert_eq!(
            violation(&schema::STRING, &num("3")),
            ("".into(), "expected string, found number 3".into())
        );
        assert_eq!(violation(&schema::NUMBER, &"3".into()).1, "expected number, found string");
    }

    #[test]
    fn any_accepts_everything() {
        for v in [Value::Null, num("1"), "s".into(), Value::Array(vec![]), obj(&[])] {
            assert!(schema::ANY.validate(&v).is_ok());
        }
    }

    #[test]
    fn integers_convert_exactly() {
        for ok in ["0", "-0", "1.0", "1e3", "100E-2", "9223372036854775807", "-9223372036854775808"]
        {
            assert!(schema::INTEGER.validate(&num(ok)).is_ok(), "{ok}");
        }
        for bad in ["1.5", "12E-1", "9223372036854775808", "-9223372036854775809", "1e400"] {
            let (p, m) = violation(&schema::INTEGER, &num(bad));
            assert_eq!(p, "");
            assert!(m.starts_with("expected integer, found "), "{bad}: {m}");
            assert!(m.contains(bad), "{m}");
        }
    }

    #[test]
    fn integer_bounds_are_inclusive() {
        static RANGE: Schema = Schema::Integer { min: Some(-2), max: Some(5) };
        assert!(RANGE.validate(&num("-2")).is_ok());
        assert!(RANGE.validate(&num("5.0")).is_ok());
        assert_eq!(violation(&RANGE, &num("-3")).1, "expected integer in -2..=5, found -3");
        assert_eq!(violation(&RANGE, &num("6")).1, "expected integer in -2..=5, found 6");
        assert_eq!(violation(&schema::UNSIGNED, &num("-1")).1, "expected integer >= 0, found -1");
        static AT_MOST: Schema = Schema::Integer { min: None, max: Some(0) };
        assert_eq!(violation(&AT_MOST, &num("1")).1, "expected integer <= 0, found 1");
    }

    #[test]
    fn string_length_counts_scalar_values() {
        static SHORT: Schema = Schema::String { max_length: Some(3), one_of: None };
        assert!(SHORT.validate(&"äöü".into()).is_ok()); // 6 bytes, 3 characters
        assert!(SHORT.validate(&"𝄞𝄞𝄞".into()).is_ok()); // 12 bytes
        assert!(SHORT.validate(&"".into()).is_ok());
        assert_eq!(
            violation(&SHORT, &"abcd".into()).1,
            "expected a string of at most 3 characters, found 4"
        );
        static NONE: Schema = Schema::String { max_length: Some(0), one_of: None };
        assert!(NONE.validate(&"".into()).is_ok());
        assert!(NONE.validate(&"a".into()).is_err());
    }

    #[test]
    fn string_one_of() {
        static MODE: Schema = Schema::String { max_length: None, one_of: Some(&["a", "b"]) };
        assert!(MODE.validate(&"b".into()).is_ok());
        assert_eq!(violation(&MODE, &"c".into()).1, "expected one of \"a\", \"b\", found \"c\"");
        static MANY: Schema = Schema::String {
            max_length: None,
            one_of: Some(&["0", "1", "2", "3", "4", "5", "6", "7", "8", "9"]),
        };
        let m = violation(&MANY, &"x".into()).1;
        assert!(m.contains("\"7\", … (10 in all)"), "{m}");
        assert!(!m.contains("\"8\""), "{m}");
    }

    #[test]
    fn long_inputs_are_excerpted_in_messages() {
        static MODE: Schema = Schema::String { max_length: None, one_of: Some(&["a"]) };
        let long: String = core::iter::repeat_n('x', 10_000).collect();
        let m = violation(&MODE, &long.as_str().into()).1;
        assert!(m.len() < 100, "{m}");
        assert!(m.ends_with("x…\""), "{m}");
    }

    #[test]
    fn arrays_check_length_then_items_in_order() {
        static LIST: Schema = Schema::Array { items: &schema::UNSIGNED, max_items: Some(3) };
        assert!(LIST.validate(&Value::Array(vec![])).is_ok());
        assert!(LIST.validate(&Value::Array(vec![num("1"), num("2"), num("3")])).is_ok());
        let four = Value::Array(vec![num("1"), "x".into(), num("3"), num("4")]);
        assert_eq!(
            violation(&LIST, &four),
            ("".into(), "expected an array of at most 3 items, found 4".into())
        );
        let bad = Value::Array(vec![num("1"), "x".into(), num("-1")]);
        assert_eq!(
            violation(&LIST, &bad),
            ("/1".into(), "expected integer >= 0, found string".into())
        );
    }

    static POINT: Schema = Schema::Object {
        properties: &[
            Property { name: "x", schema: &schema::INTEGER, required: true },
            Property { name: "y", schema: &schema::INTEGER, required: true },
            Property { name: "label", schema: &schema::STRING, required: false },
        ],
        additional: false,
    };

    #[test]
    fn objects_required_and_optional_members() {
        assert!(POINT.validate(&obj(&[("x", num("1")), ("y", num("2"))])).is_ok());
        assert!(
            POINT
                .validate(&obj(&[("y", num("2")), ("label", "p".into()), ("x", num("1"))]))
                .is_ok()
        );
        assert_eq!(
            violation(&POINT, &obj(&[("x", num("1"))])),
            ("".into(), "missing required member \"y\"".into())
        );
        assert_eq!(
            violation(&POINT, &obj(&[("x", num("1")), ("y", num("2")), ("label", Value::Null)])),
            ("/label".into(), "expected string, found null".into())
        );
    }

    #[test]
    fn additional_false_points_at_the_unknown_member() {
        let v = obj(&[("x", num("1")), ("a/b~c", Value::Null), ("y", num("2"))]);
        assert_eq!(
            violation(&POINT, &v),
            ("/a~1b~0c".into(), "unknown member \"a/b~c\" is not allowed here".into())
        );
        assert_eq!(violation(&schema::EMPTY_OBJECT, &obj(&[("k", Value::Null)])).0, "/k");
        assert!(schema::OBJECT.validate(&obj(&[("k", Value::Null)])).is_ok());
    }

    #[test]
    fn first_violation_in_document_order() {
        // Two bad members: the first in the document is reported, not the first in the schema.
        let v = obj(&[("y", "no".into()), ("x", "no".into())]);
        assert_eq!(violation(&POINT, &v).0, "/y");
        static NESTED: Schema = Schema::Array { items: &POINT, max_items: None };
        let v = Value::Array(vec![
            obj(&[("x", num("1")), ("y", num("2"))]),
            obj(&[("x", num("1")), ("y", num("1.5"))]),
            obj(&[("x", "bad".into()), ("y", num("2"))]),
        ]);
        assert_eq!(violation(&NESTED, &v).0, "/1/y");
    }

    #[test]
    fn any_of_picks_the_precise_violation_when_only_one_shape_fits() {
        static MAYBE_POINT: Schema = Schema::AnyOf(&[Schema::Null, POINT]);
        assert!(MAYBE_POINT.validate(&Value::Null).is_ok());
        assert!(MAYBE_POINT.validate(&obj(&[("x", num("1")), ("y", num("2"))])).is_ok());
        assert_eq!(
            violation(&MAYBE_POINT, &obj(&[("x", num("1")), ("y", Value::Null)])),
            ("/y".into(), "expected integer, found null".into())
        );
        assert_eq!(
            violation(&MAYBE_POINT, &"s".into()),
            ("".into(), "expected any of (null, object), found string".into())
        );
        static NONE: Schema = Schema::AnyOf(&[]);
        assert!(NONE.validate(&Value::Null).is_err());
    }

    #[test]
    fn pointer_escaping_follows_rfc_6901() {
        let path = [Step::Key(""), Step::Key("~/"), Step::Index(7), Step::Key("é")];
        assert_eq!(pointer(&path), "//~0~1/7/é");
        assert_eq!(pointer(&[]), "");
    }

    #[test]
    fn ambiguous_alternatives_are_bounded_in_time() {
        // Both alternatives descend into every array, so a naive search takes 2^depth steps.
        static TWICE: Schema = Schema::AnyOf(&[
            Schema::Array { items: &TWICE, max_items: None },
            Schema::Array { items: &TWICE, max_items: None },
        ]);
        let mut v = Value::Null;
        for _ in 0..40 {
            v = Value::Array(vec![v]);
        }
        let (_, m) = violation(&TWICE, &v);
        assert_eq!(m, "value too complex to validate against this schema (over 1048576 checks)");
        let mut shallow = Value::Array(vec![]);
        for _ in 0..5 {
            shallow = Value::Array(vec![shallow]);
        }
        assert!(TWICE.validate(&shallow).is_ok());
    }

    #[test]
    fn recursive_schemas_are_bounded_by_the_value() {
        static TREE: Schema = Schema::Array { items: &TREE, max_items: None };
        let mut v = Value::Array(vec![]);
        for _ in 0..MAX_VALIDATION_DEPTH {
            v = Value::Array(vec![v]);
        }
        assert!(TREE.validate(&v).is_ok());
        let deeper = Value::Array(vec![v]);
        let (p, m) = violation(&TREE, &deeper);
        assert_eq!(m, "value nested deeper than 128 levels");
        assert_eq!(p.matches('/').count(), MAX_VALIDATION_DEPTH + 1);
    }
}
