//! Validation of a [`Value`] against a [`Schema`], reporting the first violation with a JSON
//! pointer into the value.

use alloc::string::String;
use core::fmt;

use super::Schema;
use crate::Value;

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
    /// Checks `value`; the first violation found (depth-first, document order) is returned.
    pub fn validate(&self, value: &Value) -> Result<(), SchemaViolation> {
        let _ = value;
        todo!("schema validation")
    }
}
