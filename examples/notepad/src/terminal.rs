//! How `jfgui-notepad` answers a call that needs the user's yes (`--confirm`): `allow` and
//! `deny` answer at once (for tests); `ask` asks on the terminal, one prompt at a time on
//! stderr, answered with a line on stdin (`y` once, `a` always for this agent when that may
//! be offered, `n` no), while the app keeps serving. Without a terminal (stdin or stderr is
//! not one, or the host channel itself is on stdio) nobody can be asked and nothing such runs.

use std::collections::VecDeque;
use std::io::{BufRead, IsTerminal, Write};
use std::sync::{Arc, Mutex, MutexGuard};

use jfgui_example_notepad::Prompter;
use jfgui_host_sdk::{Answer, Confirmation};

use crate::args::Confirm;

/// The prompter for `mode`, and the answers typed on the terminal when it asks there.
pub fn prompter(mode: Confirm, headless: bool) -> (Box<dyn Prompter>, Option<Typed>) {
    match mode {
        Confirm::Allow => (Box::new(AtOnce(Answer::Allow)), None),
        Confirm::Deny => (Box::new(AtOnce(Answer::Deny)), None),
        Confirm::Ask if headless || !std::io::stdin().is_terminal() => {
            (Box::new(AtOnce(Answer::NoUi)), None)
        }
        Confirm::Ask if !std::io::stderr().is_terminal() => (Box::new(AtOnce(Answer::NoUi)), None),
        Confirm::Ask => {
            let prompts = Arc::new(Mutex::new(Prompts::new(Box::new(say))));
            let reader = Arc::clone(&prompts);
            // Reads the terminal for as long as the process lives; ends at stdin's EOF.
            std::thread::spawn(move || {
                for line in std::io::stdin().lock().lines() {
                    let Ok(line) = line else { return };
                    lock(&reader).typed(&line);
                }
            });
            (Box::new(OnTerminal(Arc::clone(&prompts))), Some(Typed(prompts)))
        }
    }
}

/// The answers the user typed, for the main loop to hand to the endpoint.
#[derive(Debug, Clone)]
pub struct Typed(Arc<Mutex<Prompts>>);

impl Typed {
    /// The answers typed since the last call, with their tickets, oldest first.
    pub fn take(&self) -> Vec<(String, Answer)> {
        std::mem::take(&mut lock(&self.0).answered)
    }

    /// Whether a prompt is open (then the loop looks for answers every so often).
    pub fn asking(&self) -> bool {
        !lock(&self.0).open.is_empty()
    }
}

/// `--confirm allow|deny`, or `ask` without a terminal.
#[derive(Debug)]
struct AtOnce(Answer);

impl Prompter for AtOnce {
    fn ask(&mut self, _: &Confirmation) -> Option<Answer> {
        Some(self.0)
    }
    fn withdraw(&mut self, _: &str) {}
}

/// `--confirm ask` on a terminal.
#[derive(Debug)]
struct OnTerminal(Arc<Mutex<Prompts>>);

impl Prompter for OnTerminal {
    fn ask(&mut self, confirmation: &Confirmation) -> Option<Answer> {
        lock(&self.0).open(confirmation);
        None
    }
    fn withdraw(&mut self, ticket: &str) {
        lock(&self.0).withdraw(ticket);
    }
}

/// The prompts not yet answered (the first is the one shown), the answers typed, and where
/// the prompts are shown (stderr; the tests keep them).
struct Prompts {
    open: VecDeque<Open>,
    answered: Vec<(String, Answer)>,
    show_text: Box<dyn FnMut(&str) + Send>,
}

impl std::fmt::Debug for Prompts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Prompts")
            .field("open", &self.open)
            .field("answered", &self.answered)
            .finish()
    }
}

#[derive(Debug)]
struct Open {
    ticket: String,
    /// What the prompt says, ready to print.
    text: String,
    may_always: bool,
    agent: String,
}

impl Prompts {
    fn new(show_text: Box<dyn FnMut(&str) + Send>) -> Prompts {
        Prompts { open: VecDeque::new(), answered: Vec::new(), show_text }
    }

    fn open(&mut self, c: &Confirmation) {
        let agent = c.agent_name();
        let always = if c.may_always { format!(", [a]lways allow {agent}") } else { String::new() };
        let text = format!(
            "jfgui-notepad: {agent} wants to: {}\n    who: {}\n    allow? [y]es once{always}, [n]o > ",
            c.summary(),
            c.agent_label()
        );
        self.open.push_back(Open {
            ticket: c.ticket.clone(),
            text,
            may_always: c.may_always,
            agent,
        });
        if self.open.len() == 1 {
            self.show();
        }
    }

    fn withdraw(&mut self, ticket: &str) {
        let Some(i) = self.open.iter().position(|o| o.ticket == ticket) else { return };
        let gone = self.open.remove(i).map(|o| o.agent).unwrap_or_default();
        if i == 0 {
            (self.show_text)(&format!("\njfgui-notepad: {gone} no longer waits for that answer\n"));
            self.show();
        }
    }

    /// A line the user typed: the answer to the prompt shown, or the prompt again.
    fn typed(&mut self, line: &str) {
        let Some(shown) = self.open.front() else { return };
        let answer = match line.trim().to_ascii_lowercase().as_str() {
            "y" | "yes" => Answer::Allow,
            "a" | "always" if shown.may_always => Answer::AllowAlways,
            "n" | "no" => Answer::Deny,
            _ => {
                let or = if shown.may_always { ", n or a" } else { " or n" };
                (self.show_text)(&format!("jfgui-notepad: answer y{or}\n"));
                self.show();
                return;
            }
        };
        if let Some(open) = self.open.pop_front() {
            self.answered.push((open.ticket, answer));
        }
        self.show();
    }

    fn show(&mut self) {
        if let Some(first) = self.open.front() {
            (self.show_text)(&first.text);
        }
    }
}

/// One write to stderr (unbuffered), so a prompt is never torn by another line.
fn say(text: &str) {
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
}

/// The prompts, even after a thread panicked while holding them (their state stays whole:
/// every change is one push or pop).
fn lock(prompts: &Mutex<Prompts>) -> MutexGuard<'_, Prompts> {
    prompts.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use jfgui_host_sdk::{ActionSpec, Agent, ConfirmCall, Value};

    use super::*;

    fn confirmation(ticket: &str, may_always: bool) -> Confirmation {
        Confirmation {
            ticket: ticket.into(),
            calls: vec![ConfirmCall {
                index: None,
                action: ActionSpec::write("document.clear", "").titled("Clear the document"),
                input: Value::Null,
            }],
            batch_len: None,
            agent: Some(Agent {
                exe: "/usr/bin/claude".into(),
                pid: None,
                says: None,
                transport: "endpoint".into(),
            }),
            may_always,
        }
    }

    /// Prompts that keep what they show.
    fn prompts() -> (Prompts, Arc<Mutex<String>>) {
        let shown = Arc::new(Mutex::new(String::new()));
        let keep = Arc::clone(&shown);
        (Prompts::new(Box::new(move |t| keep.lock().unwrap().push_str(t))), shown)
    }

    #[test]
    fn one_prompt_at_a_time_answered_in_order() {
        let (mut p, shown) = prompts();
        p.open(&confirmation("confirm-1", true));
        p.open(&confirmation("confirm-2", false));
        assert!(p.open[0].text.contains("claude wants to: Clear the document"));
        assert!(p.open[0].text.contains("[a]lways allow claude"));
        assert!(!p.open[1].text.contains("[a]lways"), "always only when it may be offered");
        assert_eq!(shown.lock().unwrap().matches("wants to").count(), 1, "one prompt at a time");
        p.typed("maybe");
        assert!(shown.lock().unwrap().contains("answer y, n or a"));
        assert!(p.answered.is_empty());
        p.typed(" A \n");
        p.typed("a");
        assert_eq!(
            p.answered,
            [("confirm-1".into(), Answer::AllowAlways)],
            "no always for the second"
        );
        p.typed("no");
        assert_eq!(p.answered[1], ("confirm-2".into(), Answer::Deny));
        p.typed("y");
        assert_eq!(p.answered.len(), 2, "nothing is asked any more");
    }

    #[test]
    fn a_withdrawn_prompt_is_not_answered() {
        let (mut p, shown) = prompts();
        p.open(&confirmation("confirm-1", false));
        p.open(&confirmation("confirm-2", false));
        p.withdraw("confirm-1");
        p.withdraw("confirm-9");
        assert!(shown.lock().unwrap().contains("claude no longer waits for that answer"));
        p.typed("y");
        assert_eq!(p.answered, [("confirm-2".into(), Answer::Allow)]);
    }
}
