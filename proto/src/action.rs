//! Action names and action specs: a name is 1–128 ASCII letters, digits, `.`, `_` or `-`;
//! names and command ids are unique within an app.

use alloc::collections::BTreeMap;
use alloc::string::{String, ToString};
use core::fmt;

use crate::Schema;
use crate::schema;

/// Longest action name, in bytes (names are ASCII).
pub const MAX_ACTION_NAME: usize = 128;

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
}

/// Checks an app's whole action list: every name valid, names unique, command ids
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
    check_registration(specs.iter().map(|s| (s.name, s.command_id)))
}

/// One pass with ordered sets, so a registration of any size costs `O(n log n)`.
pub(crate) fn check_registration<'a>(
    actions: impl Iterator<Item = (&'a str, Option<u32>)>,
) -> Result<(), RegistrationError> {
    let mut names = BTreeMap::new();
    let mut command_ids: BTreeMap<u32, &str> = BTreeMap::new();
    for (name, command_id) in actions {
        ActionName::try_from(name)
            .map_err(|error| RegistrationError::InvalidName { name: name.to_string(), error })?;
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
            ..ActionSpec::write("document.text.insert", "Insert").schemas(&INPUT, &schema::ANY)
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
