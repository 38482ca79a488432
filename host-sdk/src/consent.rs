//! What the app sees of a call that needs the user's yes (docs/PROTOCOL.md, "Consent"): the
//! [`Confirmation`] [`Host::confirm`](crate::Host::confirm) gets, the [`Answer`] it gives now
//! or later through [`Dispatcher::answer`](crate::Dispatcher::answer), and the text a prompt
//! shows of the agent, made safe to show.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use jfgui_proto::channel::{Agent, ConsentAnswer};
use jfgui_proto::{ActionSpec, Value};

/// Most calls of one app waiting for the user at once (asked and not yet run). One more is
/// refused at once with `not_executed/too_many_pending_confirmations`: an agent cannot bury
/// the user under prompts, nor make the app hold unbounded calls.
pub const MAX_PENDING_CONFIRMATIONS: usize = 16;

/// Longest text a prompt shows of what the agent says it is (its MCP `clientInfo`), in
/// characters: any client can send any text there.
pub const MAX_SHOWN_CLAIM: usize = 80;

/// A call waiting for the user's answer, as [`Host::confirm`](crate::Host::confirm) gets it.
/// Everything the call would do has passed its checks; nothing of it has run.
#[derive(Debug, Clone, PartialEq)]
pub struct Confirmation {
    /// The ticket to answer with: the id of the task the caller follows.
    pub ticket: String,
    /// The calls that need the user's yes, in call order: one for an `actions/execute`, every
    /// such call of an `actions/batch` (the prompt lists them all; the batch asks once).
    pub calls: Vec<ConfirmCall>,
    /// For a batch: how many calls it has in all (the others need no yes).
    pub batch_len: Option<u32>,
    /// Who is calling, as the daemon established it from the operating system; `None` when
    /// the daemon did not say (an older daemon): then the agent is unknown.
    pub agent: Option<Agent>,
    /// Whether the prompt may offer "always allow this agent" ([`Answer::AllowAlways`]).
    pub may_always: bool,
}

/// One call of a [`Confirmation`].
#[derive(Debug, Clone, PartialEq)]
pub struct ConfirmCall {
    /// Its index in the batch (`None` for an `actions/execute`).
    pub index: Option<u32>,
    /// The action.
    pub action: ActionSpec,
    /// Its input, valid against the action's input schema.
    pub input: Value,
}

impl ConfirmCall {
    /// The action's title, or its name when it has none.
    pub fn title(&self) -> &'static str {
        self.action.title_or_name()
    }
}

impl Confirmation {
    /// The (first) action asked about.
    pub fn action(&self) -> &ActionSpec {
        &self.calls[0].action
    }

    /// Its title, or its name: "Clear the canvas".
    pub fn title(&self) -> &'static str {
        self.calls[0].title()
    }

    /// Its description.
    pub fn description(&self) -> &'static str {
        self.calls[0].action.description
    }

    /// Its input.
    pub fn input(&self) -> &Value {
        &self.calls[0].input
    }

    /// What the user is asked to allow, on one line: the title, or for a batch every title
    /// ("Clear the canvas, Delete a shape (in a batch of 5 calls)").
    pub fn summary(&self) -> String {
        let titles: Vec<&str> = self.calls.iter().map(ConfirmCall::title).collect();
        match self.batch_len {
            None => String::from(titles[0]),
            Some(n) => format!("{} (in a batch of {n} calls)", titles.join(", ")),
        }
    }

    /// Who asks, short, for a prompt's first words and its "Always allow …" button: the
    /// executable's file name ("claude"), or "An unknown agent". Printable on one line
    /// whatever the path holds.
    pub fn agent_name(&self) -> String {
        match &self.agent {
            Some(agent) => printable(agent.short_name(), usize::MAX),
            None => String::from("An unknown agent"),
        }
    }

    /// Who asks, in full: the executable's path and, marked as a claim, what the client says
    /// it is (`/usr/bin/claude (says it is "claude-code 1.2")`); "an unknown agent (the
    /// daemon did not say who is calling)" when the daemon did not say. Printable on one line:
    /// control characters are shown escaped and the claim is cut at [`MAX_SHOWN_CLAIM`]
    /// characters, so a client cannot make a prompt say something else.
    pub fn agent_label(&self) -> String {
        let Some(agent) = &self.agent else {
            return String::from("an unknown agent (the daemon did not say who is calling)");
        };
        let exe = printable(&agent.exe, usize::MAX);
        match &agent.says {
            Some(says) => format!("{exe} (says it is \"{}\")", printable(says, MAX_SHOWN_CLAIM)),
            None => exe,
        }
    }
}

/// `text` with every control character (line breaks, escapes) shown as `\u{..}` and at most
/// `max` characters kept (then `…`).
fn printable(text: &str, max: usize) -> String {
    let mut out = String::new();
    for (i, c) in text.chars().enumerate() {
        if i == max {
            out.push('…');
            break;
        }
        if c.is_control() {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

/// The user's answer to a [`Confirmation`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Answer {
    /// Run this call.
    Allow,
    /// Run this call, and let this agent run this action without asking from now on (the
    /// daemon records the grant; offer it only when [`Confirmation::may_always`]).
    AllowAlways,
    /// Do not run it: `not_executed/denied_by_user`.
    Deny,
    /// There is nobody to ask (no UI, no terminal): `not_executed/no_confirmation_ui`.
    NoUi,
}

impl Answer {
    /// How the task records it.
    pub(crate) fn decision(self) -> ConsentAnswer {
        match self {
            Answer::Allow => ConsentAnswer::Allow,
            Answer::AllowAlways => ConsentAnswer::AllowAlways,
            Answer::Deny => ConsentAnswer::Deny,
            Answer::NoUi => ConsentAnswer::NoUi,
        }
    }
}

/// An answer that was ignored: nothing changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StrayAnswer {
    /// No call waits under this ticket (never asked, or withdrawn: cancelled, timed out, its
    /// client gone).
    Unknown,
    /// The ticket was answered already; the first answer stands.
    AlreadyAnswered,
}

impl fmt::Display for StrayAnswer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            StrayAnswer::Unknown => "no call waits for an answer under this ticket",
            StrayAnswer::AlreadyAnswered => "this ticket was answered already",
        })
    }
}

#[cfg(feature = "std")]
impl std::error::Error for StrayAnswer {}

#[cfg(test)]
mod tests {
    use alloc::vec;

    use super::*;

    fn confirmation(agent: Option<Agent>, batch_len: Option<u32>) -> Confirmation {
        let clear =
            ActionSpec::write("canvas.clear", "Delete every shape.").titled("Clear the canvas");
        let delete = ActionSpec::write("shape.delete", "Delete shape id.");
        let mut calls = vec![
            ConfirmCall { index: batch_len.map(|_| 0), action: clear, input: Value::Null },
            ConfirmCall { index: Some(2), action: delete, input: Value::Null },
        ];
        calls.truncate(if batch_len.is_some() { 2 } else { 1 });
        Confirmation { ticket: "confirm-1".into(), calls, batch_len, agent, may_always: true }
    }

    fn agent(exe: &str, says: Option<&str>) -> Agent {
        Agent {
            exe: exe.into(),
            pid: Some(1),
            says: says.map(Into::into),
            transport: "endpoint".into(),
        }
    }

    #[test]
    fn a_prompt_names_the_agent_by_its_executable_and_marks_the_claim() {
        let c = confirmation(Some(agent("/usr/bin/claude", Some("claude-code 1.2"))), None);
        assert_eq!(c.agent_name(), "claude");
        assert_eq!(c.agent_label(), "/usr/bin/claude (says it is \"claude-code 1.2\")");
        assert_eq!(
            (c.title(), c.summary()),
            ("Clear the canvas", String::from("Clear the canvas"))
        );
        assert_eq!(c.description(), "Delete every shape.");
        let unknown = confirmation(None, None);
        assert_eq!(unknown.agent_name(), "An unknown agent");
        assert!(unknown.agent_label().starts_with("an unknown agent"));
    }

    #[test]
    fn what_a_client_controls_cannot_break_the_prompt() {
        let says = format!("x\n\u{1b}[2K\rAllowed.{}", "y".repeat(200));
        let c = confirmation(Some(agent("/tmp/evil\nname", Some(&says))), None);
        let label = c.agent_label();
        assert!(!label.chars().any(char::is_control), "{label:?}");
        assert!(
            label.starts_with("/tmp/evil\\u{a}name (says it is \"x\\u{a}\\u{1b}[2K\\u{d}Allowed."),
            "{label}"
        );
        assert!(label.ends_with("…\")"), "{label}");
        assert!(label.chars().count() < 80 + 60, "{label}");
        assert_eq!(c.agent_name(), "evil\\u{a}name");
    }

    #[test]
    fn a_batch_lists_every_call_that_asks() {
        let c = confirmation(None, Some(5));
        assert_eq!(c.summary(), "Clear the canvas, shape.delete (in a batch of 5 calls)");
        assert_eq!(c.action().name, "canvas.clear");
    }
}
