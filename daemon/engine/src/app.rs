//! The app side: the apps that register over the host channel, each held as one [`App`] while
//! it is connected. Nothing here knows a client protocol; the client side (`client/`) uses
//! [`App`] and never the reverse.
//!
//! | part | file |
//! |---|---|
//! | one app connection from `hello` to its end | `app/connection.rs` |
//! | the link: requests out, replies matched back (correlation only) | `app/link.rs`, `app/link/` |
//! | who the app is and what it registered (identity, catalog, the `actions/list` query) | `app/registration.rs`, `app/registration/` |
//! | which apps exist, whether each is enabled, the endpoint events | `app/registry.rs` |
//! | what replies and task updates mean (tasks recorded, revisions bounded) | `app/replies.rs` |
//! | `activity` notices held for the next write | `app/notices.rs` |
//! | the calls waiting for the user: deadlines, withdraws, grants on "always" | `app/prompts.rs` |
//!
//! The task records (`tasks.rs`) are written only here, from what the app reports; the client
//! side reads them.

mod connection;
mod link;
mod notices;
mod prompts;
mod registration;
mod registry;
mod replies;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use jfgui_proto::channel::{Activity, Call, CallResult, TaskSnapshot};
use jfgui_proto::{ActionError, Reason};
use tokio::sync::watch;

pub(crate) use connection::serve;
pub use registration::{Query, Registration};
pub(crate) use registry::Registry;
pub use registry::{BudgetUse, EndpointEvents};

use link::Link;

use crate::consent::Asking;
use crate::tasks::{Refused, TaskRecords};
use crate::{AppSummary, EngineConfig};

/// Where an app stands, as its client connections see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Connected and enabled: its endpoint exists.
    Enabled,
    /// Connected, dispatcher disabled: no endpoint, client connections closed.
    Disabled,
    /// Disconnected (or the daemon is shutting down).
    Gone,
}

/// One registered app: its registration, its link, its call gate and the task records its
/// replies feed. Cheap to clone; every clone is the same app.
#[derive(Clone)]
pub struct App(Arc<Inner>);

struct Inner {
    registration: Registration,
    link: Link,
    /// Whether calls may be sent; changed only by the registry ([`Registry::set_enabled`]), so
    /// the gate and the endpoint events always agree.
    enabled: AtomicBool,
    status: watch::Sender<Status>,
    tasks: Arc<Mutex<TaskRecords>>,
    /// Task updates refused so far (for a log that cannot be flooded; `replies.rs`).
    dropped_updates: AtomicU64,
    /// The calls waiting for the user (`prompts.rs`).
    prompts: Mutex<prompts::Prompts>,
}

impl std::fmt::Debug for App {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("App").field("registration", &self.0.registration).finish_non_exhaustive()
    }
}

impl App {
    fn new(
        registration: Registration,
        link: Link,
        enabled: bool,
        tasks: Arc<Mutex<TaskRecords>>,
    ) -> App {
        let status = if enabled { Status::Enabled } else { Status::Disabled };
        App(Arc::new(Inner {
            registration,
            link,
            enabled: AtomicBool::new(enabled),
            status: watch::Sender::new(status),
            tasks,
            dropped_updates: AtomicU64::new(0),
            prompts: Mutex::default(),
        }))
    }

    /// Who the app is and what it registered.
    pub fn registration(&self) -> &Registration {
        &self.0.registration
    }

    /// The engine configuration (the bounds the client side needs).
    pub fn config(&self) -> &EngineConfig {
        self.0.link.config()
    }

    /// Whether the app's dispatcher is enabled.
    pub fn is_enabled(&self) -> bool {
        self.0.enabled.load(Ordering::SeqCst)
    }

    /// Watches the app: client connections close when it leaves [`Status::Enabled`].
    pub fn status(&self) -> watch::Receiver<Status> {
        self.0.status.subscribe()
    }

    /// A listing row.
    pub fn summary(&self) -> AppSummary {
        self.0.registration.summary(self.is_enabled())
    }

    /// Sends `call` and waits for the reply, read as `replies.rs` says: the link's errors, the
    /// app's own error, or its result with every revision within the protocol's bound. Refused
    /// `not_executed/disabled` at once while the app is disabled.
    pub async fn call(&self, call: Call) -> Result<CallResult, ActionError> {
        self.ask(call, None).await
    }

    /// [`App::call`] of a call that names a `confirm` action: `asking` keeps its prompt, if
    /// the app asks (`prompts.rs`).
    pub async fn ask(
        &self,
        call: Call,
        asking: Option<Arc<Asking>>,
    ) -> Result<CallResult, ActionError> {
        if !self.is_enabled() {
            return Err(ActionError::new(
                Reason::Disabled,
                "The app's agent access is disabled; nothing was executed.",
            ));
        }
        let outcome = self.0.link.request(call, asking).await;
        self.bounded(outcome)
    }

    /// Asks the app to cancel its task `id`, which is marked `cancelling` first (the request is
    /// on its way); the reply is recorded like any other.
    pub async fn cancel_task(&self, id: String) -> Result<CallResult, ActionError> {
        self.tasks().mark_cancelling(self.0.registration.id(), &id);
        self.call(Call::CancelTask { id }).await
    }

    /// Holds an `activity` notice for the app's next write, when it asked for notices in its
    /// hello. False when it was not held (not asked for, or no room: the caller counts it).
    pub fn notify(&self, activity: &Activity) -> bool {
        self.0.registration.wants_activity() && self.0.link.notify(activity)
    }

    /// The last known state of this app's task `id`, else of a departed app's of the same
    /// display name.
    pub fn task(&self, id: &str) -> Option<TaskSnapshot> {
        let registration = &self.0.registration;
        self.tasks().get(registration.id(), registration.display_name(), id)
    }

    /// Whether the task records have room for a task this app may start.
    pub fn task_room(&self) -> Result<(), Refused> {
        self.tasks().has_room(self.0.registration.id())
    }

    /// Opens or shuts the call gate; returns whether the state changed. Disabling fails the
    /// calls not yet written (`not_executed/disabled`) and tells the client connections. Only
    /// the registry calls this, under its lock.
    fn set_enabled(&self, enabled: bool) -> bool {
        if self.0.enabled.swap(enabled, Ordering::SeqCst) == enabled {
            return false;
        }
        if !enabled {
            self.0.link.fail_unsent();
        }
        self.0.status.send_replace(if enabled { Status::Enabled } else { Status::Disabled });
        true
    }

    /// The connection ended: no new calls, client connections told, every outstanding call
    /// failed with `reason` now rather than at its deadline.
    fn close(&self, reason: &Reason) {
        self.0.link.stop_calls(reason.clone());
        self.0.status.send_replace(Status::Gone);
        self.0.link.close(reason);
    }

    fn link(&self) -> &Link {
        &self.0.link
    }

    fn tasks(&self) -> MutexGuard<'_, TaskRecords> {
        self.0.tasks.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Requests queued or awaiting their reply.
    #[cfg(test)]
    pub(crate) fn outstanding(&self) -> usize {
        self.0.link.outstanding()
    }
}
