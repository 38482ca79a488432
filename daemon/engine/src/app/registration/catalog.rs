//! An app's registered actions as the answers need them, built once when it registers, each
//! action held as one encoded `actions/describe` object and nothing else: re-encoding an
//! 800 KB input schema from its tree on every describe was what let one client pipelining
//! describes starve the others, and a second copy of every description (a separate list row,
//! a lower-cased search text) is what made a hostile registration cost three times its
//! declarations.
//!
//! The describe object starts with `name`, `description`, `kind`, `title?`, `confirm?` and
//! `inputSchema`, so the `actions/list` row `{name, description, kind, title?, confirm?}` is
//! that prefix closed, and so is the row with the input schema (a list with `describe:
//! true`); the description's text, for the search (`search.rs`), is read out of the same
//! bytes. The schema trees are not kept: nothing in the daemon reads them, only their
//! encoding.

use std::borrow::Cow;

use jfgui_proto::channel::ActionInfo;
use jfgui_proto::{ActionKind, Limits, Map, Payload, RawJson, Value, write_string};

/// Bounds for encoding one registered action on its own: none, because it arrived inside a
/// bounded registration frame; the bounds of an answer are checked where it is placed.
const WHOLE: Limits = Limits {
    max_bytes: usize::MAX,
    max_depth: usize::MAX,
    max_values: usize::MAX,
    max_members: usize::MAX,
    max_string_bytes: usize::MAX,
};

/// How every describe object starts (the name follows).
const NAME_AT: &[u8] = br#"{"name":""#;

/// One registered action.
#[derive(Debug)]
pub struct CatalogAction {
    /// Read or write.
    pub kind: ActionKind,
    /// Whether an external call needs the user's yes or a standing grant.
    pub confirm: bool,
    /// The `action` object of `actions/describe` (the whole registration entry).
    described: RawJson,
    /// Where the name's text ends in `described` (names are plain ASCII, never escaped).
    name_end: u32,
    /// Where the description's encoded text (between its quotes) starts and ends.
    description: (u32, u32),
    /// Where the row's last member (`kind`, `title` or `confirm`) ends: the row is
    /// `described[..row_end]` and `}`.
    row_end: u32,
    /// Where the `inputSchema` member ends: the row with it is `described[..schema_end]` and `}`.
    schema_end: u32,
}

impl CatalogAction {
    fn new(info: ActionInfo) -> CatalogAction {
        let action_kind = info.kind;
        let kind = kind_name(action_kind);
        let mut name = Vec::new();
        write_string(&info.name, &mut name);
        let mut description = Vec::new();
        write_string(&info.description, &mut description);
        // The row's members, encoded on their own only for the row's length: `ActionInfo`
        // serializes them first, in this order (title and confirm only when set).
        let mut row = Map::new();
        row.insert("name", info.name.as_str());
        row.insert("description", info.description.as_str());
        row.insert("kind", kind);
        if let Some(title) = &info.title {
            row.insert("title", title.as_str());
        }
        if info.confirm {
            row.insert("confirm", true);
        }
        let row_len = encode(&Value::from(row)).as_bytes().len();
        let schema_len = encode(&info.input_schema).as_bytes().len();
        let confirm = info.confirm;
        let described = encode(&describe_object(&info));
        drop(info);
        // `{"name":` NAME `,"description":` DESCRIPTION `,"kind":"KIND"` ...
        let name_end = NAME_AT.len() + name.len() - 2;
        let description_start = NAME_AT.len() - 1 + name.len() + br#","description":""#.len();
        let description_end = description_start + description.len() - 2;
        let row_end = row_len - 1;
        let schema_end = row_end + br#","inputSchema":"#.len() + schema_len;
        let offset =
            |at: usize| u32::try_from(at).expect("a registration frame is far below 4 GiB");
        CatalogAction {
            kind: action_kind,
            confirm,
            described,
            name_end: offset(name_end),
            description: (offset(description_start), offset(description_end)),
            row_end: offset(row_end),
            schema_end: offset(schema_end),
        }
    }

    /// Its name.
    pub fn name(&self) -> &str {
        self.text(NAME_AT.len(), self.name_end as usize)
    }

    /// Its name's bytes. Lookups compare these: byte order is `str`'s order, and checking the
    /// name is UTF-8 on every probe was a twentieth of a call's instructions.
    fn name_bytes(&self) -> &[u8] {
        self.bytes(NAME_AT.len(), self.name_end as usize)
    }

    /// Its description, unescaped: borrowed from the encoding unless it holds an escape.
    pub fn description(&self) -> Cow<'_, str> {
        let (start, end) = (self.description.0 as usize, self.description.1 as usize);
        let bytes = self.described.as_bytes();
        if !bytes[start..end].contains(&b'\\') {
            return Cow::Borrowed(self.text(start, end));
        }
        // The quotes around it make it a JSON string of our own encoder's form.
        match jfgui_proto::parse(&bytes[start - 1..end + 1], &WHOLE) {
            Ok(Value::String(s)) => Cow::Owned(s),
            _ => unreachable!("the encoder wrote a string there"),
        }
    }

    /// The `actions/describe` object, encoded.
    pub fn described(&self) -> Payload {
        Payload::Raw(self.described.clone())
    }

    /// The `actions/list` row `{name, description, kind, title?, confirm?}`, encoded.
    pub fn row(&self) -> Payload {
        self.prefix(self.row_end)
    }

    /// The `actions/list` row with the input schema, for a list with `describe: true`.
    pub fn described_row(&self) -> Payload {
        self.prefix(self.schema_end)
    }

    /// `described[..end]` closed: an object of the members before `end`.
    fn prefix(&self, end: u32) -> Payload {
        let mut row = Vec::with_capacity(end as usize + 1);
        row.extend_from_slice(&self.described.as_bytes()[..end as usize]);
        row.push(b'}');
        let raw = RawJson::parse(&row, &WHOLE).expect("a prefix of the encoder's object, closed");
        Payload::Raw(raw)
    }

    /// The bytes the daemon holds for this action.
    pub fn held_bytes(&self) -> usize {
        self.described.heap_bytes() + std::mem::size_of::<CatalogAction>()
    }

    fn text(&self, start: usize, end: usize) -> &str {
        // The encoder writes UTF-8 and the range lies between a quote and the next one.
        std::str::from_utf8(self.bytes(start, end)).unwrap_or_default()
    }

    fn bytes(&self, start: usize, end: usize) -> &[u8] {
        self.described.as_bytes().get(start..end).unwrap_or_default()
    }
}

/// The registered actions in registration order, and by name (every call looks its action
/// up: an app may register thousands); see the module docs.
#[derive(Debug)]
pub struct Catalog {
    actions: Box<[CatalogAction]>,
    /// Indices into `actions`, ordered by name (then index), for a binary search.
    by_name: Box<[u32]>,
}

impl Catalog {
    /// The catalog of `actions`, in registration order.
    pub fn new(actions: Vec<ActionInfo>) -> Catalog {
        // Collected into a fresh allocation of their own size: collecting in place would keep
        // the allocation of the registration's `ActionInfo`s, almost six times larger.
        let mut catalog = Vec::with_capacity(actions.len());
        catalog.extend(actions.into_iter().map(CatalogAction::new));
        let actions = catalog.into_boxed_slice();
        let mut by_name: Vec<u32> = (0..actions.len())
            .map(|i| u32::try_from(i).expect("an app registers at most a few thousand actions"))
            .collect();
        by_name.sort_by(|&a, &b| {
            actions[a as usize].name_bytes().cmp(actions[b as usize].name_bytes())
        });
        Catalog { actions, by_name: by_name.into() }
    }

    /// The actions in registration order.
    pub fn actions(&self) -> &[CatalogAction] {
        &self.actions
    }

    /// The action registered as `name`. Registration refuses duplicate names; were one to
    /// slip through, the first wins, as a scan in registration order would find it (the sort
    /// is stable).
    pub fn action(&self, name: &str) -> Option<&CatalogAction> {
        let name = name.as_bytes();
        let name_of = |i: &u32| self.actions[*i as usize].name_bytes();
        let at = self.by_name.partition_point(|i| name_of(i) < name);
        let i = *self.by_name.get(at)?;
        let action = &self.actions[i as usize];
        (action.name_bytes() == name).then_some(action)
    }

    /// The bytes the daemon holds for these actions (what the registration budget counts).
    pub fn held_bytes(&self) -> usize {
        let per_action = self.actions.iter().map(CatalogAction::held_bytes).sum::<usize>();
        per_action + self.by_name.len() * std::mem::size_of::<u32>()
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

    fn info(name: &str, description: &str) -> ActionInfo {
        let mut schema = Map::new();
        schema.insert("type", "object");
        schema.insert("description", "line\nbreak \u{2028} and \"quotes\"");
        ActionInfo {
            name: name.into(),
            description: description.into(),
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
        let d = Limits::DEFAULT;
        for description in ["Replace the text", "Ünïcode \"quoted\"\n\u{2028}\\ end", ""] {
            let catalog = Catalog::new(vec![info("document.set", description)]);
            let action = &catalog.actions()[0];
            assert_eq!((action.name(), action.kind), ("document.set", ActionKind::Write));
            assert_eq!(action.description(), description);
            let whole = jfgui_proto::to_value(&info("document.set", description)).unwrap();
            let expected = encode_tree(&whole, &d).unwrap();
            assert_eq!(encode_tree(&action.described(), &d).unwrap(), expected);
            let mut row = Map::new();
            row.insert("name", "document.set");
            row.insert("description", description);
            row.insert("kind", "write");
            let row_bytes = encode_tree(&Value::from(row.clone()), &d).unwrap();
            assert_eq!(encode_tree(&action.row(), &d).unwrap(), row_bytes);
            row.insert(
                "inputSchema",
                whole.as_object().unwrap().get("inputSchema").unwrap().clone(),
            );
            let described_row = encode_tree(&Value::from(row), &d).unwrap();
            assert_eq!(encode_tree(&action.described_row(), &d).unwrap(), described_row);
        }
    }

    #[test]
    fn a_title_and_confirm_are_in_the_row_as_in_the_describe_object() {
        let d = Limits::DEFAULT;
        let mut asking = info("canvas.clear", "Remove every shape");
        asking.title = Some("Clear the \"canvas\"".into());
        asking.confirm = true;
        let catalog = Catalog::new(vec![asking.clone()]);
        let action = &catalog.actions()[0];
        assert!(action.confirm);
        assert_eq!(action.description(), "Remove every shape");
        let whole = jfgui_proto::to_value(&asking).unwrap();
        assert_eq!(encode_tree(&action.described(), &d).unwrap(), encode_tree(&whole, &d).unwrap());
        let mut row = Map::new();
        row.insert("name", "canvas.clear");
        row.insert("description", "Remove every shape");
        row.insert("kind", "write");
        row.insert("title", "Clear the \"canvas\"");
        row.insert("confirm", true);
        assert_eq!(
            encode_tree(&action.row(), &d).unwrap(),
            encode_tree(&Value::from(row.clone()), &d).unwrap()
        );
        row.insert("inputSchema", whole.as_object().unwrap().get("inputSchema").unwrap().clone());
        assert_eq!(
            encode_tree(&action.described_row(), &d).unwrap(),
            encode_tree(&Value::from(row), &d).unwrap()
        );
    }

    #[test]
    fn lookup_by_name_finds_the_first_of_a_name() {
        let catalog = Catalog::new(vec![
            info("b.get", "first b"),
            info("a.get", "a"),
            info("b.get", "second b"),
            info("c", "c"),
        ]);
        assert_eq!(catalog.action("b.get").unwrap().description(), "first b");
        assert_eq!(catalog.action("a.get").unwrap().description(), "a");
        assert_eq!(catalog.action("c").unwrap().name(), "c");
        assert!(catalog.action("b").is_none());
        assert!(catalog.action("d").is_none());
        assert!(catalog.action("").is_none());
    }
}
