//! Schemas of action inputs and outputs: the kinds, validation with JSON-pointer
//! errors, rendering to JSON Schema (draft 2020-12 subset) for describe and MCP, and instances
//! generated from that rendering (a minimal valid value, a refused one) for contract checks.

mod instance;
mod render;
mod validate;

pub use instance::{NoInstance, minimal_instance, violating_instance};
pub use validate::{MAX_VALIDATION_DEPTH, MAX_VALIDATION_STEPS, SchemaViolation};

/// A schema, declarable as a `static`. See the module docs of [`crate`] for an example.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Schema {
    /// `null`.
    Null,
    /// `true` / `false`.
    Boolean,
    /// An integral number (exact: `1.0` is an integer, `1.5` is not) within optional bounds.
    Integer {
        /// Smallest allowed value.
        min: Option<i64>,
        /// Largest allowed value.
        max: Option<i64>,
    },
    /// Any number.
    Number,
    /// A string, optionally bounded in length (Unicode scalar values) and/or one of a set.
    String {
        /// Longest allowed length in characters.
        max_length: Option<u32>,
        /// The allowed values, if restricted.
        one_of: Option<&'static [&'static str]>,
    },
    /// An array of `items`, optionally bounded in length.
    Array {
        /// Schema of every element.
        items: &'static Schema,
        /// Most elements allowed.
        max_items: Option<u32>,
    },
    /// An object with known properties; `additional: false` rejects any other member.
    Object {
        /// Known members.
        properties: &'static [Property],
        /// Whether members not listed are allowed (and then unchecked).
        additional: bool,
    },
    /// Valid when at least one alternative is.
    AnyOf(&'static [Schema]),
    /// Anything.
    Any,
}

/// One member of a [`Schema::Object`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Property {
    /// Member name.
    pub name: &'static str,
    /// Its schema.
    pub schema: &'static Schema,
    /// Whether the member must be present.
    pub required: bool,
}

/// `null`.
pub static NULL: Schema = Schema::Null;
/// Any boolean.
pub static BOOLEAN: Schema = Schema::Boolean;
/// Any integer.
pub static INTEGER: Schema = Schema::Integer { min: None, max: None };
/// Any non-negative integer.
pub static UNSIGNED: Schema = Schema::Integer { min: Some(0), max: None };
/// Any number.
pub static NUMBER: Schema = Schema::Number;
/// Any string.
pub static STRING: Schema = Schema::String { max_length: None, one_of: None };
/// Any object.
pub static OBJECT: Schema = Schema::Object { properties: &[], additional: true };
/// Exactly `{}`: the input of actions that take no arguments.
pub static EMPTY_OBJECT: Schema = Schema::Object { properties: &[], additional: false };
/// Anything.
pub static ANY: Schema = Schema::Any;
