//! The app's calls that wait for the user: kept from the deferred reply that says so
//! (`awaiting: "confirmation"`, read on the link's reading side, so no task update can overtake
//! it) until a task update says the wait is over. Meanwhile the daemon withdraws the prompt at
//! the confirmation deadline and when the calling connection goes away; on "always" it records
//! a grant for the agent *it* saw calling. An allowed call may start a task of its own, which
//! the app announces by its first `task` message: such updates are taken as new tasks while an
//! allowed call of the app runs.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Weak};

use jfgui_proto::channel::{Awaiting, ConsentAnswer, TaskSnapshot, Withdraw, WithdrawReason};

use super::{App, Inner};
use crate::consent::{Asking, Prompter};

/// The prompts of one app.
#[derive(Debug, Default)]
pub struct Prompts {
    /// Waiting tasks (at most the app's 16, which it enforces), by task id.
    waiting: HashMap<String, Arc<Asking>>,
    /// Tasks allowed and still running.
    allowed: HashSet<String>,
}

impl App {
    /// A deferred reply to a call that carried `asking`: when its task waits for the user, the
    /// prompt is kept, its deadline armed, and its connection told.
    pub(super) fn asked(&self, task: &TaskSnapshot, asking: &Arc<Asking>) {
        if task.awaiting != Some(Awaiting::Confirmation) || task.state.is_final() {
            return;
        }
        let id = task.id.clone();
        self.prompts().waiting.insert(id.clone(), asking.clone());
        let prompter: Weak<dyn Prompter> = Arc::downgrade(&self.0) as Weak<dyn Prompter>;
        match asking.asker.upgrade() {
            Some(asker) => asker.waits(prompter.clone(), id.clone()),
            // The client left before its call was answered.
            None => self.0.withdraw(&id, WithdrawReason::ClientGone),
        }
        let timeout = self.config().consent.timeout;
        tokio::spawn(async move {
            tokio::time::sleep(timeout).await;
            if let Some(app) = prompter.upgrade() {
                app.withdraw(&id, WithdrawReason::ConfirmationTimeout);
            }
        });
    }

    /// A task update, before it is recorded: ends the wait of a prompt the update answers (a
    /// grant made on "always"). Returns whether an unknown task id is to be taken as a task an
    /// allowed call started.
    pub(super) fn prompt_update(&self, snapshot: &TaskSnapshot) -> bool {
        let mut prompts = self.prompts();
        let done = snapshot.awaiting.is_none() || snapshot.state.is_final();
        if done && let Some(asking) = prompts.waiting.remove(&snapshot.id) {
            let answer = snapshot.consent.map(|c| c.answer);
            let allowed = matches!(answer, Some(ConsentAnswer::Allow | ConsentAnswer::AllowAlways));
            if allowed && !snapshot.state.is_final() {
                prompts.allowed.insert(snapshot.id.clone());
            }
            drop(prompts);
            let grant = match answer {
                Some(ConsentAnswer::AllowAlways) if asking.may_grant => self.grant(&asking),
                _ => None,
            };
            if let (Some(decided), Some(answer)) = (&asking.decided, answer) {
                decided(answer, grant);
            }
            return false;
        }
        if snapshot.state.is_final() {
            prompts.allowed.remove(&snapshot.id);
            return false;
        }
        !prompts.allowed.is_empty() && !prompts.waiting.contains_key(&snapshot.id)
    }

    /// Records the grants of an "always" answer; the id of the first.
    fn grant(&self, asking: &Asking) -> Option<u64> {
        let grants = &self.config().consent.grants;
        let app = self.registration().display_name();
        let mut first = None;
        for action in &asking.actions {
            match grants.add(&asking.agent, app, action, "prompt") {
                Ok(grant) => {
                    tracing::info!(agent = %asking.agent, app, action, id = grant.id, "grant recorded: the user allowed it always");
                    first = first.or(Some(grant.id));
                }
                Err(e) => {
                    tracing::warn!(agent = %asking.agent, app, action, "grant not recorded: {e:?}")
                }
            }
        }
        first
    }

    /// The app went away: no prompt of it waits any more.
    pub(super) fn prompts_gone(&self) {
        let mut prompts = self.prompts();
        prompts.waiting.clear();
        prompts.allowed.clear();
    }

    fn prompts(&self) -> std::sync::MutexGuard<'_, Prompts> {
        self.0.prompts.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Prompter for Inner {
    fn withdraw(&self, task: &str, reason: WithdrawReason) {
        if self.waits(task) {
            tracing::info!(app = self.registration.slug(), task, ?reason, "prompt withdrawn");
            self.link.withdraw(Withdraw { task: task.to_owned(), reason });
        }
    }

    fn waits(&self, task: &str) -> bool {
        self.prompts.lock().unwrap_or_else(|e| e.into_inner()).waiting.contains_key(task)
    }
}
