//! Validation of an app's registration: valid names and titles, unique names and command ids,
//! and a `ui.render` that answers at once.

use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use jfgui_proto::{ActionKind, ActionSpec, RegistrationError as SpecError, validate_registration};

/// The name of the action `view/render` runs.
pub const RENDER_ACTION: &str = "ui.render";

/// Most actions one app may register: the `ready{actionCount}` count is a `u32`, and the
/// daemon caches every spec, so a runaway registration is refused here rather than there.
pub const MAX_ACTIONS: usize = 65_536;

/// Why a registration was refused; every variant names the offending action.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RegistrationError {
    /// An invalid name, a duplicate name or a duplicate command id, as
    /// [`jfgui_proto::validate_registration`] reports it (the daemon checks the same way).
    Spec(SpecError),
    /// `ui.render` must be a read action (`view/render` is not a mutation).
    RenderNotRead,
    /// `ui.render` cannot ask for the user's yes: `view/render` answers at once.
    RenderConfirms,
    /// More than [`MAX_ACTIONS`] actions.
    TooMany {
        /// How many were given.
        count: usize,
    },
}

impl fmt::Display for RegistrationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RegistrationError::Spec(e) => e.fmt(f),
            RegistrationError::RenderNotRead => {
                write!(f, "action {RENDER_ACTION:?} must be a read action")
            }
            RegistrationError::RenderConfirms => {
                write!(
                    f,
                    "action {RENDER_ACTION:?} cannot ask for confirmation: view/render answers at once"
                )
            }
            RegistrationError::TooMany { count } => {
                write!(f, "{count} actions registered; at most {MAX_ACTIONS} are allowed")
            }
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for RegistrationError {}

/// The validated registration with its lookup indexes.
#[derive(Debug, Clone)]
pub(crate) struct Registry {
    pub(crate) specs: Vec<ActionSpec>,
    by_name: BTreeMap<&'static str, usize>,
    by_command: BTreeMap<u32, usize>,
}

impl Registry {
    pub(crate) fn new(specs: &[ActionSpec]) -> Result<Registry, RegistrationError> {
        if specs.len() > MAX_ACTIONS {
            return Err(RegistrationError::TooMany { count: specs.len() });
        }
        validate_registration(specs).map_err(RegistrationError::Spec)?;
        let mut by_name = BTreeMap::new();
        let mut by_command = BTreeMap::new();
        for (i, spec) in specs.iter().enumerate() {
            if spec.name == RENDER_ACTION && spec.kind != ActionKind::Read {
                return Err(RegistrationError::RenderNotRead);
            }
            if spec.name == RENDER_ACTION && spec.confirm {
                return Err(RegistrationError::RenderConfirms);
            }
            by_name.insert(spec.name, i);
            if let Some(id) = spec.command_id {
                by_command.insert(id, i);
            }
        }
        Ok(Registry { specs: specs.to_vec(), by_name, by_command })
    }

    pub(crate) fn by_name(&self, name: &str) -> Option<&ActionSpec> {
        self.by_name.get(name).map(|&i| &self.specs[i])
    }

    /// The registered names nearest to `name`, for an unknown action's "did you mean".
    pub(crate) fn nearest(&self, name: &str) -> Vec<String> {
        let names = self.specs.iter().map(|s| s.name);
        jfgui_proto::resolve::nearest(name, names).into_iter().map(String::from).collect()
    }

    pub(crate) fn by_command(&self, id: u32) -> Option<&ActionSpec> {
        self.by_command.get(&id).map(|&i| &self.specs[i])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duplicates_are_named() {
        let a = ActionSpec::write("a", "A");
        let b = ActionSpec { command_id: Some(7), ..ActionSpec::write("b", "B") };
        let c = ActionSpec { command_id: Some(7), ..ActionSpec::write("c", "C") };
        assert_eq!(
            Registry::new(&[a, b, a]).unwrap_err(),
            RegistrationError::Spec(SpecError::DuplicateName("a".into()))
        );
        let e = Registry::new(&[a, b, c]).unwrap_err();
        assert_eq!(
            e,
            RegistrationError::Spec(SpecError::DuplicateCommandId {
                command_id: 7,
                first: "b".into(),
                second: "c".into()
            })
        );
        assert!(alloc::format!("{e}").contains("\"c\""));
        let r = Registry::new(&[a, b]).unwrap();
        assert_eq!(r.by_command(7).unwrap().name, "b");
        assert!(r.by_name("zz").is_none());
    }

    #[test]
    fn names_follow_s1() {
        let bad = ActionSpec::write("has space", "x");
        assert!(matches!(
            Registry::new(&[bad]),
            Err(RegistrationError::Spec(SpecError::InvalidName { ref name, .. })) if name == "has space"
        ));
        let empty = ActionSpec::write("", "x");
        assert!(Registry::new(&[empty]).is_err());
        let render = ActionSpec::write(RENDER_ACTION, "x");
        assert_eq!(Registry::new(&[render]).unwrap_err(), RegistrationError::RenderNotRead);
        let asking = ActionSpec::read(RENDER_ACTION, "x").confirmed();
        assert_eq!(Registry::new(&[asking]).unwrap_err(), RegistrationError::RenderConfirms);
        let long = ActionSpec::write("a", "x")
            .titled("this title is longer than sixty-four characters, which a prompt cannot show");
        assert!(matches!(
            Registry::new(&[long]),
            Err(RegistrationError::Spec(SpecError::InvalidTitle { ref name, .. })) if name == "a"
        ));
    }
}
