//! The lower-cased search text of an app's actions, built once when it registers, so an
//! `actions/list` query (a case-insensitive substring of name or description) costs one substring
//! scan per action instead of lower-casing every description on every request (4096 long
//! descriptions made each query milliseconds of allocation).

use jfgui_proto::channel::ActionInfo;

/// See the module docs. Entry `i` belongs to the app's action `i`.
#[derive(Debug, Default)]
pub struct SearchText {
    /// Lower-cased name and description of each action (kept apart, so a query never matches
    /// across the two).
    entries: Vec<(Box<str>, Box<str>)>,
}

impl SearchText {
    /// The search text of `actions`, in registration order.
    pub fn new(actions: &[ActionInfo]) -> SearchText {
        let entries = actions
            .iter()
            .map(|a| (a.name.to_lowercase().into(), a.description.to_lowercase().into()))
            .collect();
        SearchText { entries }
    }

    /// Whether action `i` matches `needle` (already lower-cased), and the bytes looked at.
    pub fn matches(&self, i: usize, needle: &str) -> (bool, usize) {
        match self.entries.get(i) {
            Some((name, description)) => (
                name.contains(needle) || description.contains(needle),
                name.len() + description.len(),
            ),
            None => (false, 0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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
        let text = SearchText::new(&[info("Document.Get", "Read the WHOLE Ünïcode text")]);
        assert!(text.matches(0, "document.get").0);
        assert!(text.matches(0, "whole ünïcode").0);
        assert!(!text.matches(0, "get read").0, "never across name and description");
        assert_eq!(
            text.matches(0, "x").1,
            "document.get".len() + "read the whole ünïcode text".len()
        );
        assert_eq!(text.matches(1, "x"), (false, 0));
    }
}
