//! Activation: the daemon starting an installed app (one whose user let agents start it) when
//! a call names it while it is not running (docs/PROTOCOL.md, "Installed apps and
//! activation").
//!
//! The engine has no OS code: the OS layer gives it a [`Launcher`] (in
//! [`EngineConfig::activation`](crate::EngineConfig)) that lists the installed apps and spawns
//! one. The engine owns the rest, the same on every platform:
//! - concurrent calls share one start: the first call's start runs in a task of its own (a
//!   caller that goes away does not cancel it), the others wait for its outcome;
//! - a start succeeds when an app of that display name registers with agent access on; it
//!   fails when the process ends first, cannot be spawned, or does not register within the
//!   deadline (the process is then stopped, so a late registration cannot double it);
//! - a failed start answers `not_executed/activation_failed` with the exit status and the
//!   tail of its stderr, and the next start waits the backoff (doubling after each failure
//!   in a row, up to [`MAX_BACKOFF`]); until then calls get the same error at once, with
//!   `retryAfterMs`.

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use jfgui_proto::resolve::Candidate;
use jfgui_proto::{ActionError, Reason};
use tokio::sync::watch;

use crate::Engine;

/// The longest wait between two starts of an app whose starts keep failing.
pub const MAX_BACKOFF: Duration = Duration::from_secs(300);

/// An installed app: a trusted launch file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Installed {
    /// The launch file's slug (what a call names it by until it runs).
    pub slug: String,
    /// The display name it registers with.
    pub display_name: String,
}

/// An installed app that is not running resolves like an enabled one: a call may name it.
impl Candidate for Installed {
    fn slug(&self) -> &str {
        &self.slug
    }
    fn display_name(&self) -> &str {
        &self.display_name
    }
    fn enabled(&self) -> bool {
        true
    }
}

/// How a started process ended, or what it left behind.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Exit {
    /// `exit status 3`, `signal 9`, when it ended.
    pub status: Option<String>,
    /// The last KiB of its stderr.
    pub stderr: String,
}

/// A boxed future a [`Started`] returns.
pub type ExitFuture<'a> = Pin<Box<dyn Future<Output = Exit> + Send + 'a>>;

/// One process the OS layer started for an activation.
pub trait Started: Send {
    /// Resolves when the process ends (and is reaped).
    fn ended(&mut self) -> ExitFuture<'_>;
    /// Stops it (it did not register in time) and resolves once it is reaped.
    fn stop(&mut self) -> ExitFuture<'_>;
    /// It registered: it is the user's app now; the OS layer only reaps it when it ends.
    fn release(self: Box<Self>);
}

/// What the OS layer offers for activation.
pub trait Launcher: Send + Sync {
    /// The installed apps now (untrusted launch files are left out, and logged, by the OS
    /// layer).
    fn installed(&self) -> Vec<Installed>;
    /// Starts installed app `slug` for the client process `requester` (whose environment
    /// may give the display), or says why it cannot.
    fn start(&self, slug: &str, requester: Option<u32>) -> Result<Box<dyn Started>, Exit>;
}

/// The OS layer's [`Launcher`], for [`EngineConfig`](crate::EngineConfig): cheap to clone.
#[derive(Clone)]
pub struct Activation {
    launcher: Arc<dyn Launcher>,
    /// How long a started app has to register (15 s).
    pub deadline: Duration,
    /// The wait before the start after a failed one (10 s), doubling with each failure in
    /// a row up to [`MAX_BACKOFF`].
    pub backoff: Duration,
}

impl Activation {
    /// Activation through `launcher` with the shipped deadline and backoff.
    pub fn new(launcher: Arc<dyn Launcher>) -> Activation {
        Activation { launcher, deadline: Duration::from_secs(15), backoff: Duration::from_secs(10) }
    }

    /// The installed apps now.
    pub fn installed(&self) -> Vec<Installed> {
        self.launcher.installed()
    }
}

impl fmt::Debug for Activation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Activation")
            .field("deadline", &self.deadline)
            .field("backoff", &self.backoff)
            .finish_non_exhaustive()
    }
}

/// What a start came to: `Ok` once the app registered.
type Outcome = Result<(), ActionError>;

/// The engine's starts, by slug.
#[derive(Debug, Default)]
pub(crate) struct Starts(Mutex<HashMap<String, Slot>>);

#[derive(Debug)]
enum Slot {
    /// A start is under way; its outcome comes through here.
    Starting(watch::Receiver<Option<Outcome>>),
    /// The last `failures` starts failed; the next is not before `retry_at`.
    Failed { failures: u32, retry_at: Instant, exit: Exit },
}

impl Starts {
    fn lock(&self) -> MutexGuard<'_, HashMap<String, Slot>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The installed apps that are not registered now (no app of that display name).
pub(crate) fn not_running(engine: &Engine) -> Vec<Installed> {
    let Some(activation) = &engine.config().activation else { return Vec::new() };
    let apps = engine.apps();
    activation
        .installed()
        .into_iter()
        .filter(|i| !apps.iter().any(|a| a.display_name == i.display_name))
        .collect()
}

/// Starts installed app `app` for `requester` and waits until it registered, sharing a start
/// under way. `Ok` means an app of its display name was registered then.
async fn activate(
    engine: &Engine,
    app: &Installed,
    requester: Option<u32>,
) -> Result<(), ActionError> {
    let Some(activation) = engine.config().activation.clone() else {
        return Err(failed(&app.slug, Exit::default(), Duration::ZERO, "activation is off"));
    };
    let mut outcome = {
        let mut starts = engine.0.starts.lock();
        let failures = match starts.get(&app.slug) {
            Some(Slot::Starting(rx)) => Some(rx.clone()),
            Some(Slot::Failed { retry_at, exit, .. }) if Instant::now() < *retry_at => {
                let wait = retry_at.saturating_duration_since(Instant::now());
                let message = "its last start failed; the next is not due yet";
                return Err(failed(&app.slug, exit.clone(), wait, message));
            }
            _ => None,
        };
        match failures {
            Some(rx) => rx,
            None => {
                let failures = match starts.get(&app.slug) {
                    Some(Slot::Failed { failures, .. }) => *failures,
                    _ => 0,
                };
                let (tx, rx) = watch::channel(None);
                starts.insert(app.slug.clone(), Slot::Starting(rx.clone()));
                let engine = engine.clone();
                let app = app.clone();
                tokio::spawn(async move {
                    let result = start(&engine, &activation, &app, requester, failures).await;
                    let _ = tx.send(Some(result));
                });
                rx
            }
        }
    };
    match outcome.wait_for(Option::is_some).await {
        Ok(result) => result.clone().unwrap_or(Ok(())),
        Err(_) => Err(failed(&app.slug, Exit::default(), Duration::ZERO, "the start was lost")),
    }
}

/// [`activate`], then the slug of the enabled app of that display name: a call goes there.
/// One registered with access off (the user turned it off at once) is
/// `not_executed/app_disabled`.
pub(crate) async fn activate_and_find(
    engine: &Engine,
    app: &Installed,
    requester: Option<u32>,
) -> Result<String, ActionError> {
    activate(engine, app, requester).await?;
    let apps = engine.apps();
    let named: Vec<_> = apps.iter().filter(|a| a.display_name == app.display_name).collect();
    if let Some(running) = named.iter().find(|a| a.enabled) {
        return Ok(running.slug.clone());
    }
    Err(match named.first() {
        Some(off) => ActionError::new(
            Reason::AppDisabled { app: off.slug.clone() },
            format!(
                "{} started, but its user turned agent access off: ask the user to turn it on in the application and try again.",
                app.display_name
            ),
        ),
        None => ActionError::new(
            Reason::AppDisconnected,
            format!("{} started and registered, then left.", app.display_name),
        ),
    })
}

/// One start of `app`; records its outcome in the engine's starts before returning it.
async fn start(
    engine: &Engine,
    activation: &Activation,
    app: &Installed,
    requester: Option<u32>,
    failures: u32,
) -> Outcome {
    // Subscribed before the spawn, so a quick registration is not missed.
    let mut changes = engine.0.registry.changes();
    let result = match activation.launcher.start(&app.slug, requester) {
        Err(exit) => Err((exit, "it could not be started")),
        Ok(mut started) => {
            tracing::info!(app = %app.slug, "starting an installed app for an agent");
            // Any app of its display name, with access on or off: one the user turned off at
            // once is theirs to keep, and the calls learn it is disabled.
            let registered = async {
                loop {
                    if engine.apps().iter().any(|a| a.display_name == app.display_name) {
                        return true;
                    }
                    if changes.changed().await.is_err() {
                        return false;
                    }
                }
            };
            tokio::select! {
                true = registered => {
                    started.release();
                    Ok(())
                }
                exit = started.ended() => Err((exit, "it exited before it registered")),
                () = tokio::time::sleep(activation.deadline) => {
                    let mut exit = started.stop().await;
                    exit.status = None;
                    Err((exit, "it did not register in time; it was stopped"))
                }
            }
        }
    };
    let mut starts = engine.0.starts.lock();
    match result {
        Ok(()) => {
            tracing::info!(app = %app.slug, "installed app started and registered");
            starts.remove(&app.slug);
            Ok(())
        }
        Err((exit, why)) => {
            let wait = activation.backoff.saturating_mul(1 << failures.min(16)).min(MAX_BACKOFF);
            tracing::warn!(app = %app.slug, status = ?exit.status, why, "starting an installed app failed");
            let error = failed(&app.slug, exit.clone(), wait, why);
            let failures = failures.saturating_add(1);
            starts.insert(
                app.slug.clone(),
                Slot::Failed { failures, retry_at: Instant::now() + wait, exit },
            );
            Err(error)
        }
    }
}

/// `not_executed/activation_failed` for `slug`.
fn failed(slug: &str, exit: Exit, retry_after: Duration, why: &str) -> ActionError {
    let status = exit.status.as_deref().map(|s| format!(" ({s})")).unwrap_or_default();
    ActionError::new(
        Reason::ActivationFailed {
            app: slug.to_owned(),
            exit_status: exit.status.clone(),
            stderr: exit.stderr,
            retry_after_ms: u64::try_from(retry_after.as_millis()).unwrap_or(u64::MAX),
        },
        format!("The installed app {slug:?} could not be started: {why}{status}."),
    )
}
