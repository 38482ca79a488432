//! The action declarations an app in C, Python or JavaScript passes as JSON, and the
//! [`Registration`] built from them: `ActionSpec`s whose strings and schemas live in the
//! registration's own `Store` (`declare/store.rs`).
//!
//! The document is a JSON array with one object per action, in the shape of
//! `actions/describe` (camelCase), defaults as in `ActionSpec::write` / `ActionSpec::read`:
//!
//! ```json
//! [{"name": "counter.add", "description": "Add to the counter", "kind": "write",
//!   "inputSchema": {"type": "object", "properties": {"by": {"type": "integer"}},
//!                   "required": ["by"], "additionalProperties": false},
//!   "outputSchema": {"type": "object"}, "undo": true, "transaction": "counter",
//!   "capabilities": 0, "commandId": 7},
//!  {"name": "counter.reset", "description": "Set the counter to 0", "kind": "write",
//!   "title": "Reset the counter", "confirm": true}]
//! ```
//!
//! `name`, `description` and `kind` are required; `inputSchema` defaults to `{}`-only input
//! (an object with no members), `outputSchema` to any object, the rest to none / 0 / false.
//! `title` (1–64 characters) is what a prompt shows; `confirm: true` makes every external
//! call wait for the user's yes (the `confirm` callback asks).
//! This module only reads the document; the registration rules (names, duplicates,
//! `ui.render` a read, the action count) are checked by `Dispatcher::new`, the same code that
//! checks a Rust app.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use jfgui_proto::{ActionKind, ActionSpec, Limits, Value, from_value, parse, schema};
use serde::Deserialize;

mod schema_json;
mod store;

use store::Store;

/// Bounds for the declaration document: far above one client message (a large registration
/// is sent to the daemon in pages), still finite. The app itself is the author, but a broken
/// generator must get an error, not exhaust memory.
const DECLARATION_LIMITS: Limits = Limits {
    max_bytes: 64 * 1024 * 1024,
    max_depth: 64,
    max_values: 4 * 1024 * 1024,
    max_members: 65_536,
    max_string_bytes: 1024 * 1024,
};

/// One action as declared in JSON.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Declaration {
    name: String,
    description: String,
    kind: ActionKind,
    #[serde(default)]
    input_schema: Option<Value>,
    #[serde(default)]
    output_schema: Option<Value>,
    #[serde(default)]
    capabilities: u64,
    #[serde(default)]
    undo: bool,
    #[serde(default)]
    transaction: Option<String>,
    #[serde(default)]
    command_id: Option<u32>,
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    confirm: bool,
}

/// Why a declaration document was refused before the registration rules ran.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeclarationError {
    /// Not strict JSON within the bounds for a declaration document.
    Json(String),
    /// Valid JSON of the wrong shape, or a schema outside the supported subset; the message
    /// starts with a JSON pointer into the document.
    Shape(String),
}

/// Action specs declared at run time, with the storage they borrow from.
#[derive(Debug)]
pub struct Registration {
    /// Views into `_store`. Declared first so they are dropped before it (they need no drop,
    /// but the order states the invariant).
    specs: Vec<ActionSpec>,
    /// Only kept alive, never read: it owns what `specs` points to.
    _store: Store,
}

impl Registration {
    /// Reads a declaration document.
    pub fn from_json(document: &[u8]) -> Result<Registration, DeclarationError> {
        let value = parse(document, &DECLARATION_LIMITS).map_err(|e| {
            DeclarationError::Json(format!("the action declarations are not valid JSON: {e}"))
        })?;
        let declarations: Vec<Declaration> = from_value(value).map_err(|e| {
            DeclarationError::Shape(format!(
                "{}: {} (expected an array of {{name, description, kind, inputSchema?, outputSchema?, capabilities?, undo?, transaction?, commandId?, title?, confirm?}})",
                pointer_or_root(e.pointer()),
                e.message()
            ))
        })?;
        let mut store = Store::default();
        let mut specs = Vec::with_capacity(declarations.len());
        for (i, d) in declarations.iter().enumerate() {
            let schema_at = |key: &str, json: &Option<Value>, default, store: &mut Store| match json
            {
                None => Ok(default),
                // SAFETY: the schema is stored in `specs`, which lives beside `store` in the
                // returned registration and is dropped before it.
                Some(json) => unsafe { schema_json::parse(json, store, &format!("/{i}/{key}")) }
                    .map_err(|e| {
                        DeclarationError::Shape(format!(
                            "{}: {}",
                            pointer_or_root(&e.pointer),
                            e.message
                        ))
                    }),
            };
            let input =
                schema_at("inputSchema", &d.input_schema, &schema::EMPTY_OBJECT, &mut store)?;
            let output = schema_at("outputSchema", &d.output_schema, &schema::OBJECT, &mut store)?;
            // SAFETY: as above: the strings live in `store`, beside the specs that hold them.
            let text = |s: &str, store: &mut Store| unsafe { store.keep(String::from(s)) }.as_str();
            let name = text(&d.name, &mut store);
            let description = text(&d.description, &mut store);
            let transaction = d.transaction.as_deref().map(|t| text(t, &mut store));
            let title = d.title.as_deref().map(|t| text(t, &mut store));
            specs.push(ActionSpec {
                name,
                description,
                kind: d.kind,
                input,
                output,
                capabilities: d.capabilities,
                undo: d.undo,
                transaction,
                command_id: d.command_id,
                title,
                confirm: d.confirm,
            });
        }
        Ok(Registration { specs, _store: store })
    }

    /// The specs, in declaration order.
    ///
    /// # Safety
    ///
    /// The specs borrow the registration's storage under a `'static` lifetime they do not
    /// have: nothing copied out of them (a [`Dispatcher`](crate::Dispatcher) built from a
    /// host that returns them, an `ActionSpec` or one of its strings) may be used after the
    /// registration is dropped.
    pub unsafe fn specs(&self) -> &[ActionSpec] {
        &self.specs
    }
}

fn pointer_or_root(pointer: &str) -> &str {
    if pointer.is_empty() { "(document)" } else { pointer }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape_error(text: &str) -> String {
        match Registration::from_json(text.as_bytes()).unwrap_err() {
            DeclarationError::Shape(m) => m,
            other => panic!("{text}: {other:?}"),
        }
    }

    #[test]
    fn fields_and_defaults() {
        let r = Registration::from_json(
            br#"[{"name":"counter.get","description":"Read","kind":"read"},
                 {"name":"counter.add","description":"Add","kind":"write","undo":true,
                  "transaction":"counter","capabilities":6,"commandId":7,
                  "inputSchema":{"type":"object","properties":{"by":{"type":"integer"}},"required":["by"]},
                  "outputSchema":{}}]"#,
        )
        .unwrap();
        // SAFETY: the specs are used only while `r` lives.
        let [get, add] = (unsafe { r.specs() }) else { panic!("two specs") };
        assert_eq!(*get, ActionSpec::read("counter.get", "Read"));
        assert_eq!(add.name, "counter.add");
        assert_eq!(add.kind, ActionKind::Write);
        assert!(add.undo);
        assert_eq!(add.transaction, Some("counter"));
        assert_eq!((add.capabilities, add.command_id), (6, Some(7)));
        assert_eq!(add.output, &schema::ANY);
        assert!(
            matches!(add.input, jfgui_proto::Schema::Object { properties, .. } if properties.len() == 1)
        );
        assert_eq!((get.title, get.confirm), (None, false));
    }

    #[test]
    fn titles_and_confirm() {
        let r = Registration::from_json(
            br#"[{"name":"counter.reset","description":"Reset","kind":"write","title":"Reset the counter","confirm":true}]"#,
        )
        .unwrap();
        assert_eq!(
            (unsafe { r.specs() })[0],
            ActionSpec::write("counter.reset", "Reset").titled("Reset the counter").confirmed()
        );
        assert!(
            shape_error(r#"[{"name":"x","description":"","kind":"read","confirm":"yes"}]"#)
                .starts_with("/0/confirm")
        );
        assert!(
            shape_error(r#"[{"name":"x","description":"","kind":"read","title":7}]"#)
                .starts_with("/0/title")
        );
    }

    #[test]
    fn bad_documents_say_where() {
        assert!(matches!(
            Registration::from_json(b"[{\"name\":1"),
            Err(DeclarationError::Json(m)) if m.contains("not valid JSON")
        ));
        assert!(shape_error(r#"{"name":"x"}"#).starts_with("(document): "));
        assert!(
            shape_error(r#"[{"name":"x","description":"","kind":"maybe"}]"#).starts_with("/0/kind")
        );
        assert!(
            shape_error(r#"[{"name":"x","description":"","kind":"read","colour":1}]"#)
                .contains("colour")
        );
        assert!(shape_error(r#"[{"name":"x","kind":"read"}]"#).contains("description"));
        let e = shape_error(
            r#"[{"name":"a","description":"","kind":"read"},
                {"name":"b","description":"","kind":"read","inputSchema":{"type":"string","pattern":"x"}}]"#,
        );
        assert!(e.starts_with("/1/inputSchema/pattern: unsupported keyword"), "{e}");
    }
}
