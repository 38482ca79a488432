//! Rendering a [`Schema`] as JSON Schema (draft 2020-12 subset).

use super::Schema;
use crate::Value;

impl Schema {
    /// The JSON Schema for this schema, e.g. `{"type":"object","properties":{...},
    /// "required":[...],"additionalProperties":false}`. MCP requires object roots for tool
    /// schemas; that is the caller's concern.
    pub fn to_json_schema(&self) -> Value {
        todo!("render JSON Schema")
    }
}
