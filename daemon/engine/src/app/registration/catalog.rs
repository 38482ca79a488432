//! An app's registered actions as the answers need them, built once when it registers: each
//! action's `actions/describe` object, `actions/list` row and the row with its input
//! schema (for a list with `describe: true`) are encoded once and spliced
//! verbatim into every answer ([`Payload::Raw`]), where the encoder still enforces the message
//! bounds on the whole answer. Re-encoding an 800 KB input schema from its tree on every
//! describe was what let one client pipelining describes starve the others.
//!
//! The schema trees are not kept: nothing in the daemon reads them, only their encoding.

use std::collections::HashMap;

use jfgui_proto::channel::ActionInfo;
use jfgui_proto::{ActionKind, Limits, Map, Payload, RawJson, Value};

/// Bounds for encoding one registered action on its own: none, because it arrived inside a
/// bounded registration frame; the bounds of an answer are checked where it is placed.
const WHOLE: Limits = Limits {
    max_bytes: usize::MAX,
    max_depth: usize::MAX,
    max_values: usize::MAX,
    max_members: usize::MAX,
    max_string_bytes: usize::MAX,
};

/// One registered action.
#[derive(Debug)]
pub struct CatalogAction {
    /// Its name.
    pub name: String,
    /// Read or write.
    pub kind: ActionKind,
    /// Whether an external call needs the user's yes or a standing grant.
    pub confirm: bool,
    /// The `action` object of `actions/describe` (the whole registration entry).
    described: RawJson,
    /// The `actions/list` row `{name, description, kind, title?, confirm?}`.
    row: RawJson,
    /// The row with the input schema, for a list with `describe: true`.
    described_row: Payload,
}

impl CatalogAction {
    fn new(info: &ActionInfo) -> CatalogAction {
        let mut row = Map::with_capacity(5);
        row.insert("name", info.name.as_str());
        row.insert("description", info.description.as_str());
        row.insert("kind", kind_name(info.kind));
        // Left out when not set, as in `actions/describe`: most rows keep their shape.
        if let Some(title) = &info.title {
            row.insert("title", title.as_str());
        }
        if info.confirm {
            row.insert("confirm", true);
        }
        CatalogAction {
            name: info.name.clone(),
            kind: info.kind,
            confirm: info.confirm,
            described: encode(&describe_object(info)),
            row: encode(&Value::from(row.clone())),
            described_row: {
                let mut described = Payload::from(row);
                described.insert("inputSchema", Payload::Raw(encode(&info.input_schema)));
                described
            },
        }
    }

    /// The `actions/describe` object, encoded.
    pub fn described(&self) -> Payload {
        Payload::Raw(self.described.clone())
    }

    /// The `actions/list` row, encoded.
    pub fn row(&self) -> Payload {
        Payload::Raw(self.row.clone())
    }

    /// The `actions/list` row with the input schema: `{name, description, kind, inputSchema}`.
    pub fn described_row(&self) -> Payload {
        self.described_row.clone()
    }
}

/// The registered actions in registration order, and by name (every call looks its action
/// up: an app may register thousands); see the module docs.
#[derive(Debug)]
pub struct Catalog {
    actions: Vec<CatalogAction>,
    by_name: HashMap<String, usize>,
}

impl Catalog {
    /// The catalog of `actions`, in registration order.
    pub fn new(actions: &[ActionInfo]) -> Catalog {
        let actions: Vec<CatalogAction> = actions.iter().map(CatalogAction::new).collect();
        // Registration refuses duplicate names; were one to slip through, the first wins, as
        // a scan in registration order would find it.
        let mut by_name = HashMap::with_capacity(actions.len());
        for (i, a) in actions.iter().enumerate() {
            by_name.entry(a.name.clone()).or_insert(i);
        }
        Catalog { actions, by_name }
    }

    /// The actions in registration order.
    pub fn actions(&self) -> &[CatalogAction] {
        &self.actions
    }

    /// The action registered as `name`.
    pub fn action(&self, name: &str) -> Option<&CatalogAction> {
        self.by_name.get(name).map(|&i| &self.actions[i])
    }
}

fn describe_object(info: &ActionInfo) -> Value {
    // A struct of strings, numbers and values always maps onto a JSON value.
    jfgui_proto::to_value(info).expect("an action registration maps onto a JSON value")
}

fn encode(value: &Value) -> RawJson {
    RawJson::encode(value, &WHOLE).expect("nothing is out of bounds without bounds")
}

fn kind_name(kind: ActionKind) -> &'static str {
    match kind {
        ActionKind::Read => "read",
        ActionKind::Write => "write",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use jfgui_proto::encode as encode_tree;

    fn info() -> ActionInfo {
        let mut schema = Map::new();
        schema.insert("type", "object");
        schema.insert("description", "line\nbreak \u{2028} and \"quotes\"");
        ActionInfo {
            name: "document.set".into(),
            description: "Replace the text".into(),
            kind: ActionKind::Write,
            input_schema: schema.into(),
            output_schema: Value::Null,
            capabilities: 3,
            undo: true,
            transaction: Some("doc".into()),
            command_id: None,
            confirm: false,
            title: None,
        }
    }

    #[test]
    fn cached_bytes_are_the_encoding_of_the_answer_objects() {
        let catalog = Catalog::new(&[info()]);
        let action = &catalog.actions()[0];
        assert_eq!((action.name.as_str(), action.kind), ("document.set", ActionKind::Write));
        let d = Limits::DEFAULT;
        let expected = encode_tree(&jfgui_proto::to_value(&info()).unwrap(), &d).unwrap();
        assert_eq!(encode_tree(&action.described(), &d).unwrap(), expected);
        assert_eq!(
            encode_tree(&action.row(), &d).unwrap(),
            br#"{"name":"document.set","description":"Replace the text","kind":"write"}"#
        );
    }
}
