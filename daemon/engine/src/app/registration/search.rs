//! The `actions/list` query: a case-insensitive substring of an action's name or description.
//! Nothing is kept per action for it (a lower-cased copy of every description doubled what a
//! registration costs); each text is folded into one buffer the query reuses, so a query
//! against 4096 long descriptions costs one pass over them and no allocation per action.

use super::catalog::CatalogAction;

/// One query, folded once, with its buffer.
#[derive(Debug)]
pub struct Query {
    needle: String,
    folded: String,
}

impl Query {
    /// The query for `text` (any case).
    pub fn new(text: &str) -> Query {
        let mut needle = String::new();
        fold_into(text, &mut needle);
        Query { needle, folded: String::new() }
    }

    /// Whether `action`'s name or description (each on its own, never across the two) holds
    /// the query, and the bytes looked at.
    pub fn matches(&mut self, action: &CatalogAction) -> (bool, usize) {
        let name = action.name();
        let description = action.description();
        let cost = name.len() + description.len();
        (self.holds(name) || self.holds(&description), cost)
    }

    fn holds(&mut self, text: &str) -> bool {
        self.folded.clear();
        fold_into(text, &mut self.folded);
        self.folded.contains(self.needle.as_str())
    }
}

/// Appends `text` lower-cased, character by character, the same way for the query and the
/// texts it is looked for in.
fn fold_into(text: &str, out: &mut String) {
    if text.is_ascii() {
        let start = out.len();
        out.push_str(text);
        out[start..].make_ascii_lowercase();
    } else {
        out.extend(text.chars().flat_map(char::to_lowercase));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::registration::catalog::Catalog;
    use jfgui_proto::channel::ActionInfo;
    use jfgui_proto::{ActionKind, Value};

    fn info(name: &str, description: &str) -> ActionInfo {
        ActionInfo {
            name: name.into(),
            description: description.into(),
            kind: ActionKind::Read,
            input_schema: Value::Null,
            output_schema: Value::Null,
            capabilities: 0,
            undo: false,
            transaction: None,
            command_id: None,
            confirm: false,
            title: None,
        }
    }

    #[test]
    fn case_insensitive_per_field() {
        let catalog = Catalog::new(vec![info("Document.Get", "Read the WHOLE Ünïcode \"text\"")]);
        let action = &catalog.actions()[0];
        let hit = |q: &str| Query::new(q).matches(action).0;
        assert!(hit("document.get"));
        assert!(hit("DOCUMENT.get"));
        assert!(hit("whole ünïcode"));
        assert!(hit("WHOLE ÜNÏCODE"));
        assert!(hit("\"text\""), "escaped characters match as themselves");
        assert!(!hit("get read"), "never across name and description");
        assert!(!hit("\\\"text"), "the escape itself is not text");
        assert_eq!(
            Query::new("x").matches(action).1,
            "Document.Get".len() + "Read the WHOLE Ünïcode \"text\"".len()
        );
    }
}
