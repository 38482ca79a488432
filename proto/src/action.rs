//! Action names and action specs: a name is 1–128 ASCII letters, digits, `.`, `_` or `-`;
//! names and command ids are unique within an app.

use alloc::collections::BTreeMap;
use alloc::string::{String, ToString};
use core::fmt;

use crate::Schema;
use crate::schema;

/// Longest action name, in bytes (names are ASCII).
pub const MAX_ACTION_NAME: usize = 128;

/// Longest action title, in characters: a title is shown on one line of a prompt ("claude
/// wants to: Clear the canvas"), in activity notices and in the audit table.
pub const MAX_ACTION_TITLE: usize = 64;

/// Whether an action changes state. External `write` calls must carry `expectedRevision`
/// (checked before the host runs); reads may.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ActionKind {
    /// Reads state only.
    Read,
    /// Changes state.
    Write,
}

/// One action an app offers, declarable as a `static` with `const fn` builders:
///
/// ```
/// use jfgui_proto::{ActionSpec, Property, Schema, schema};
/// static INSERT: Schema = Schema::Object {
///     properties: &[Property { name: "text", schema: &schema::STRING, required: true }],
///     additional: false,
/// };
/// static ACTIONS: &[ActionSpec] = &[ActionSpec {
///     capabilities: 0, undo: true, transaction: Some("document"), command_id: Some(100),
///     ..ActionSpec::write("document.text.insert", "Insert text at the selection")
///         .schemas(&INSERT, &schema::OBJECT)
/// }];
/// assert_eq!(ACTIONS[0].name, "document.text.insert");
/// ```
///
/// An action that only runs once the user said yes (docs/PROTOCOL.md, "Consent") has a title
/// for the prompt and `confirm`:
///
/// ```
/// use jfgui_proto::ActionSpec;
/// static CLEAR: ActionSpec =
///     ActionSpec::write("canvas.clear", "Delete every shape").titled("Clear the canvas").confirmed();
/// assert_eq!((CLEAR.title, CLEAR.confirm), (Some("Clear the canvas"), true));
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ActionSpec {
    /// 1–128 ASCII letters, digits, `.`, `_`, `-`; unique within the app.
    pub name: &'static str,
    /// One or two sentences for people and models.
    pub description: &'static str,
    /// Read or write.
    pub kind: ActionKind,
    /// Schema of the call's `input` (checked before the host runs).
    pub input: &'static Schema,
    /// Schema of the host's output (checked after; a violation is the host's bug).
    pub output: &'static Schema,
    /// Capability bits the caller must hold; opaque to us, they come from the platform layer.
    pub capabilities: u64,
    /// Whether a successful call adds an undo step.
    pub undo: bool,
    /// Transaction domain, needed for the action to take part in atomic batches.
    pub transaction: Option<&'static str>,
    /// Numeric GUI command ID for `execute_command`, unique within the app.
    pub command_id: Option<u32>,
    /// A short human name (1–64 characters, no control characters), e.g. "Clear the canvas":
    /// what a prompt, an activity notice and the audit table show instead of the name.
    pub title: Option<&'static str>,
    /// Whether every external call needs the user's yes (or a standing grant) before it runs.
    /// Trusted local calls (`execute_local`, `execute_command`) never ask.
    pub confirm: bool,
}

impl ActionSpec {
    /// A write action with `{}` input and any-object output, no capabilities, no undo.
    pub const fn write(name: &'static str, description: &'static str) -> Self {
        ActionSpec {
            name,
            description,
            kind: ActionKind::Write,
            input: &schema::EMPTY_OBJECT,
            output: &schema::OBJECT,
            capabilities: 0,
            undo: false,
            transaction: None,
            command_id: None,
            title: None,
            confirm: false,
        }
    }

    /// A read action with `{}` input and any-object output.
    pub const fn read(name: &'static str, description: &'static str) -> Self {
        ActionSpec { kind: ActionKind::Read, ..ActionSpec::write(name, description) }
    }

    /// Sets the input and output schemas.
    pub const fn schemas(self, input: &'static Schema, output: &'static Schema) -> Self {
        ActionSpec { input, output, ..self }
    }

    /// Sets the title (1–64 characters, checked at registration).
    pub const fn titled(self, title: &'static str) -> Self {
        ActionSpec { title: Some(title), ..self }
    }

    /// Makes every external call wait for the user's yes or a standing grant.
    pub const fn confirmed(self) -> Self {
        ActionSpec { confirm: true, ..self }
    }

    /// The title, or the name when there is none: what a prompt calls the action.
    pub fn title_or_name(&self) -> &'static str {
        self.title.unwrap_or(self.name)
    }
}

/// Checks an app's whole action list: every name and title valid, names unique, command ids
/// unique. The first problem in list order is reported, naming the offending name or id.
///
/// `host-sdk`'s `Dispatcher` calls this before it accepts a host; the daemon runs the same
/// rule over the received [`ActionInfo`](crate::channel::ActionInfo)s with
/// [`validate_action_infos`](crate::validate_action_infos).
///
/// ```
/// # use jfgui_proto::{ActionSpec, RegistrationError, validate_registration};
/// let ok = [ActionSpec::read("a", "A"), ActionSpec::read("b", "B")];
/// assert_eq!(validate_registration(&ok), Ok(()));
/// let dup = [ActionSpec::read("a", "A"), ActionSpec::write("a", "again")];
/// assert_eq!(validate_registration(&dup), Err(RegistrationError::DuplicateName("a".into())));
/// ```
pub fn validate_registration(specs: &[ActionSpec]) -> Result<(), RegistrationError> {
    check_registration(specs.iter().map(|s| (s.name, s.command_id, s.title)))
}

/// One action's own rules: its name, and its title when it has one.
pub(crate) fn check_action(name: &str, title: Option<&str>) -> Result<(), RegistrationError> {
    ActionName::try_from(name)
        .map_err(|error| RegistrationError::InvalidName { name: name.to_string(), error })?;
    if let Some(title) = title {
        check_title(title)
            .map_err(|error| RegistrationError::InvalidTitle { name: name.to_string(), error })?;
    }
    Ok(())
}

/// 1–[`MAX_ACTION_TITLE`] characters, none of them a control character: a title is shown on
/// one line, and a line break or an escape sequence in it could make a prompt say something
/// else.
fn check_title(title: &str) -> Result<(), TitleError> {
    let mut count = 0;
    for (i, c) in title.char_indices() {
        if c.is_control() {
            return Err(TitleError::Control(i));
        }
        count += 1;
    }
    if count == 0 || count > MAX_ACTION_TITLE {
        return Err(TitleError::Length);
    }
    Ok(())
}

/// One pass with ordered sets, so a registration of any size costs `O(n log n)`.
pub(crate) fn check_registration<'a>(
    actions: impl Iterator<Item = (&'a str, Option<u32>, Option<&'a str>)>,
) -> Result<(), RegistrationError> {
    let mut names = BTreeMap::new();
    let mut command_ids: BTreeMap<u32, &str> = BTreeMap::new();
    for (name, command_id, title) in actions {
        check_action(name, title)?;
        if names.insert(name, ()).is_some() {
            return Err(RegistrationError::DuplicateName(name.to_string()));
        }
        if let Some(id) = command_id
            && let Some(first) = command_ids.insert(id, name)
        {
            return Err(RegistrationError::DuplicateCommandId {
                command_id: id,
                first: first.to_string(),
                second: name.to_string(),
            });
        }
    }
    Ok(())
}

/// Why an action list was refused.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RegistrationError {
    /// A name is not 1–128 ASCII letters, digits, `.`, `_` or `-`.
    InvalidName {
        /// The name as given.
        name: String,
        /// What is wrong with it.
        error: NameError,
    },
    /// A title is empty, longer than [`MAX_ACTION_TITLE`] characters, or holds a control
    /// character.
    InvalidTitle {
        /// The action's name.
        name: String,
        /// What is wrong with its title.
        error: TitleError,
    },
    /// Two actions share this name.
    DuplicateName(String),
    /// Two actions share a GUI command id.
    DuplicateCommandId {
        /// The shared id.
        command_id: u32,
        /// The action that has it first.
        first: String,
        /// The later action that repeats it.
        second: String,
    },
}

impl fmt::Display for RegistrationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RegistrationError::InvalidName { name, error } => {
                write!(f, "invalid action name {name:?}: {error}")
            }
            RegistrationError::InvalidTitle { name, error } => {
                write!(f, "invalid title of action {name:?}: {error}")
            }
            RegistrationError::DuplicateName(name) => {
                write!(f, "duplicate action name {name:?}")
            }
            RegistrationError::DuplicateCommandId { command_id, first, second } => {
                write!(f, "duplicate command id {command_id}: used by {first:?} and {second:?}")
            }
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for RegistrationError {}

/// Why a name or a registration was refused.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NameError {
    /// Empty or longer than [`MAX_ACTION_NAME`].
    Length,
    /// A character other than ASCII letters, digits, `.`, `_`, `-`, at this byte index.
    Character(usize),
}

impl fmt::Display for NameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NameError::Length => write!(f, "action names are 1 to {MAX_ACTION_NAME} characters"),
            NameError::Character(i) => write!(
                f,
                "action names use only ASCII letters, digits, '.', '_' and '-' (bad character at byte {i})"
            ),
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for NameError {}

/// Why an action's title was refused.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TitleError {
    /// Empty or longer than [`MAX_ACTION_TITLE`] characters.
    Length,
    /// A control character (a line break, an escape) at this byte index.
    Control(usize),
}

impl fmt::Display for TitleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TitleError::Length => write!(f, "titles are 1 to {MAX_ACTION_TITLE} characters"),
            TitleError::Control(i) => {
                write!(f, "titles hold no control characters (one at byte {i})")
            }
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for TitleError {}

/// A validated action name: 1–128 ASCII letters, digits, `.`, `_` or `-`.
///
/// ```
/// # use jfgui_proto::ActionName;
/// assert!(ActionName::try_from("document.text.insert").is_ok());
/// assert!(ActionName::try_from("").is_err());
/// assert!(ActionName::try_from("has space").is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ActionName<'a>(&'a str);

impl<'a> ActionName<'a> {
    /// The name.
    pub fn as_str(&self) -> &'a str {
        self.0
    }
}

impl<'a> TryFrom<&'a str> for ActionName<'a> {
    type Error = NameError;
    fn try_from(name: &'a str) -> Result<Self, NameError> {
        if name.is_empty() || name.len() > MAX_ACTION_NAME {
            return Err(NameError::Length);
        }
        match name
            .bytes()
            .position(|b| !(b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-')))
        {
            Some(i) => Err(NameError::Character(i)),
            None => Ok(ActionName(name)),
        }
    }
}

#[cfg(test)]
mod tests {
    use alloc::format;

    use super::*;
    use crate::{Property, validate_action_infos};

    static INPUT: Schema = Schema::Object {
        properties: &[Property { name: "text", schema: &schema::STRING, required: true }],
        additional: false,
    };

    #[test]
    fn name_rule_bounds() {
        let max: String = core::iter::repeat_n('a', MAX_ACTION_NAME).collect();
        assert!(ActionName::try_from(max.as_str()).is_ok());
        let over = format!("{max}a");
        assert_eq!(ActionName::try_from(over.as_str()), Err(NameError::Length));
        assert_eq!(ActionName::try_from(""), Err(NameError::Length));
        assert!(ActionName::try_from("A-z_0.9").is_ok());
        assert_eq!(ActionName::try_from("a/b"), Err(NameError::Character(1)));
        assert_eq!(ActionName::try_from("aé"), Err(NameError::Character(1)));
    }

    #[test]
    fn builders() {
        let r = ActionSpec::read("document.get", "Read it");
        assert_eq!(r.kind, ActionKind::Read);
        assert_eq!(r.input, &schema::EMPTY_OBJECT);
        assert_eq!(r.output, &schema::OBJECT);
        assert!(!r.undo && r.capabilities == 0 && r.transaction.is_none());
        assert!(r.title.is_none() && !r.confirm, "asking is opt-in");
        assert_eq!(r.title_or_name(), "document.get");
        let c = ActionSpec::write("canvas.clear", "Clear").titled("Clear the canvas").confirmed();
        assert_eq!(
            (c.title, c.confirm, c.title_or_name()),
            (Some("Clear the canvas"), true, "Clear the canvas")
        );
        assert_eq!(c.kind, ActionKind::Write);
        let w = ActionSpec::write("x", "X").schemas(&INPUT, &schema::ANY);
        assert_eq!(w.kind, ActionKind::Write);
        assert_eq!(w.input, &INPUT);
        assert_eq!(w.output, &schema::ANY);
    }

    #[test]
    fn info_renders_schemas_and_copies_every_field() {
        let spec = ActionSpec {
            capabilities: 6,
            undo: true,
            transaction: Some("document"),
            command_id: Some(100),
            ..ActionSpec::write("document.text.insert", "Insert")
                .schemas(&INPUT, &schema::ANY)
                .titled("Insert text")
                .confirmed()
        };
        let info = spec.info().unwrap();
        assert_eq!(info.name, "document.text.insert");
        assert_eq!(info.description, "Insert");
        assert_eq!(info.kind, ActionKind::Write);
        assert_eq!(info.input_schema, INPUT.to_json_schema());
        assert_eq!(info.output_schema, schema::ANY.to_json_schema());
        assert_eq!(info.capabilities, 6);
        assert!(info.undo);
        assert_eq!(info.transaction.as_deref(), Some("document"));
        assert_eq!(info.command_id, Some(100));
        assert_eq!(info.title.as_deref(), Some("Insert text"));
        assert!(info.confirm);
        let bad = ActionSpec::read("no spaces", "x");
        assert_eq!(
            bad.info(),
            Err(RegistrationError::InvalidName {
                name: "no spaces".into(),
                error: NameError::Character(2)
            })
        );
    }

    #[test]
    fn registration_rules_name_the_culprit() {
        let with_id = |name, id| ActionSpec { command_id: Some(id), ..ActionSpec::read(name, "") };
        assert_eq!(validate_registration(&[]), Ok(()));
        assert_eq!(validate_registration(&[with_id("a", 1), with_id("b", 2)]), Ok(()));
        assert_eq!(
            validate_registration(&[ActionSpec::read("a", ""), ActionSpec::read("", "")]),
            Err(RegistrationError::InvalidName { name: "".into(), error: NameError::Length })
        );
        let dup = [with_id("a", 1), with_id("b", 2), with_id("a", 3)];
        let err = validate_registration(&dup).unwrap_err();
        assert_eq!(err, RegistrationError::DuplicateName("a".into()));
        assert_eq!(format!("{err}"), "duplicate action name \"a\"");
        let dup = [with_id("a", 1), with_id("b", 2), with_id("c", 1)];
        let err = validate_registration(&dup).unwrap_err();
        assert_eq!(
            err,
            RegistrationError::DuplicateCommandId {
                command_id: 1,
                first: "a".into(),
                second: "c".into()
            }
        );
        assert_eq!(format!("{err}"), "duplicate command id 1: used by \"a\" and \"c\"");
    }

    #[test]
    fn titles_are_one_line_of_at_most_64_characters() {
        let titled = |title| ActionSpec::write("a", "").titled(title);
        let max: String = core::iter::repeat_n('é', MAX_ACTION_TITLE).collect();
        assert_eq!(validate_registration(&[titled(leak(max.clone()))]), Ok(()));
        let over = leak(format!("{max}x"));
        let err = |error| RegistrationError::InvalidTitle { name: "a".into(), error };
        assert_eq!(validate_registration(&[titled(over)]), Err(err(TitleError::Length)));
        assert_eq!(validate_registration(&[titled("")]), Err(err(TitleError::Length)));
        for (title, at) in
            [("two\nlines", 3), ("\u{1b}[2Jallowed", 0), ("tab\there", 3), ("nel\u{85}", 3)]
        {
            assert_eq!(
                validate_registration(&[titled(title)]),
                Err(err(TitleError::Control(at))),
                "{title:?}"
            );
        }
        let e = validate_registration(&[titled("")]).unwrap_err();
        assert_eq!(format!("{e}"), "invalid title of action \"a\": titles are 1 to 64 characters");
        assert!(titled("x\ny").info().is_err(), "info checks the title as registration does");
        let mut info = ActionSpec::write("a", "").info().unwrap();
        info.title = Some("bad\rtitle".into());
        assert!(matches!(
            validate_action_infos(&[info]),
            Err(RegistrationError::InvalidTitle { .. })
        ));
    }

    fn leak(s: String) -> &'static str {
        alloc::boxed::Box::leak(s.into_boxed_str())
    }

    #[test]
    fn infos_follow_the_same_rules() {
        let infos =
            [ActionSpec::read("a", "").info().unwrap(), ActionSpec::read("a", "").info().unwrap()];
        assert_eq!(
            validate_action_infos(&infos),
            Err(RegistrationError::DuplicateName("a".into()))
        );
        let mut bad = ActionSpec::read("ok", "").info().unwrap();
        bad.name = "not ok".into();
        assert!(matches!(
            validate_action_infos(&[bad]),
            Err(RegistrationError::InvalidName { .. })
        ));
    }
}
