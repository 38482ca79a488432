//! Action names and action specs (SPEC S1).

use core::fmt;

use crate::Schema;
use crate::schema;

/// Longest action name (SPEC S1).
pub const MAX_ACTION_NAME: usize = 128;

/// Whether an action changes state. External `write` calls must carry `expectedRevision`
/// (SPEC S2); reads may.
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

/// A validated action name (SPEC S1).
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
