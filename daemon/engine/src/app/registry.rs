//! The registry: the one owner of which apps exist (ids, endpoint slugs, the app cap, the
//! registration budget), whether each is enabled, and the endpoint events the OS layer binds and unbinds sockets
//! from. Registration, enable/disable and removal all change state and send their event under
//! one lock, so the events for a slug come in the order the states did. Every such change also
//! moves a watch, for those who wait for an app whether or not it has an endpoint (activation:
//! an app may register with agent access off).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};

use jfgui_proto::launch::base_slug;

use tokio::sync::watch;

use super::App;
use super::registration::Declared;
use crate::backlog::{self, RecvError};
use crate::{AppSummary, EndpointEvent};

/// Endpoint events a slow subscriber may fall behind; one that lags further resynchronises
/// (see [`EndpointEvents`]). Only the events not yet received are held.
const EVENT_BACKLOG: usize = 1024;

/// Why an app could not be added.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotAdmitted {
    /// The registry holds its maximum of apps.
    Full,
    /// The app's registration (`size` bytes) would take the bytes held for all registrations
    /// (`used` now) past the `budget`.
    OverBudget { size: usize, used: usize, budget: usize },
}

/// The bytes held for all registrations, and their budget (`daemon/status`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BudgetUse {
    /// Held now.
    pub used: usize,
    /// The most that may be held.
    pub budget: usize,
}

/// See the module docs.
#[derive(Debug)]
pub struct Registry {
    max_apps: usize,
    max_slug: usize,
    /// Most bytes held for all registrations together ([`Declared::held_bytes`]).
    budget: usize,
    state: Mutex<State>,
    events: backlog::Sender<EndpointEvent>,
    /// Moved on every registration, removal and enable/disable.
    changed: watch::Sender<()>,
}

#[derive(Debug)]
struct State {
    /// By id, so iteration is registration order.
    apps: BTreeMap<u64, App>,
    /// The id of the next registration (ids are never reused).
    next_id: u64,
    /// The sum of the registered apps' [`Declared::held_bytes`].
    held_bytes: usize,
}

impl Registry {
    /// An empty registry of at most `max_apps` apps with slugs of at most `max_slug` bytes,
    /// holding at most `budget` bytes of registrations.
    pub fn new(max_apps: usize, max_slug: usize, budget: usize) -> Self {
        let events = backlog::Sender::new(EVENT_BACKLOG);
        Registry {
            max_apps,
            max_slug: max_slug.max(3),
            budget,
            state: Mutex::new(State { apps: BTreeMap::new(), next_id: 1, held_bytes: 0 }),
            events,
            changed: watch::Sender::new(()),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Endpoint events from now on, starting with the endpoints that exist now.
    pub fn subscribe(self: &Arc<Self>) -> EndpointEvents {
        // Under the lock, so no event falls between the snapshot and the subscription.
        let state = self.lock();
        let receiver = self.events.subscribe();
        let first = Some(EndpointEvent::Resync { slugs: enabled_slugs(&state) });
        EndpointEvents { registry: Arc::clone(self), receiver, first }
    }

    /// A watch that moves on every change of the registered apps (see the module docs).
    pub fn changes(&self) -> watch::Receiver<()> {
        self.changed.subscribe()
    }

    /// Adds the app that `declared` itself, when the app cap and the registration budget
    /// allow, giving it an id and a slug inside the lock so two registrations cannot get the
    /// same one; `make` builds the app from them. Announces its endpoint if enabled.
    pub fn insert(
        &self,
        declared: Declared,
        make: impl FnOnce(u64, String, Declared) -> App,
    ) -> Result<App, NotAdmitted> {
        let mut state = self.lock();
        if state.apps.len() >= self.max_apps {
            return Err(NotAdmitted::Full);
        }
        let size = declared.held_bytes();
        let used = state.held_bytes;
        if used.saturating_add(size) > self.budget {
            return Err(NotAdmitted::OverBudget { size, used, budget: self.budget });
        }
        let apps = &state.apps;
        let slug = allocate_slug(declared.display_name(), self.max_slug, |s| {
            apps.values().any(|a| a.registration().slug() == s)
        });
        let id = state.next_id;
        state.next_id += 1;
        state.held_bytes += size;
        let app = make(id, slug, declared);
        state.apps.insert(app.registration().id(), app.clone());
        if app.is_enabled() {
            self.events.send(EndpointEvent::Up { slug: app.registration().slug().to_string() });
        }
        self.changed.send_replace(());
        Ok(app)
    }

    /// Removes an app (it disconnected) and announces its endpoint gone if it had one.
    pub fn remove(&self, app: &App) {
        let mut state = self.lock();
        if state.apps.remove(&app.registration().id()).is_none() {
            return;
        }
        state.held_bytes -= app.registration().held_bytes();
        if app.is_enabled() {
            self.events.send(EndpointEvent::Down { slug: app.registration().slug().to_string() });
        }
        self.changed.send_replace(());
    }

    /// The app enabled or disabled its dispatcher: its call gate follows (disabling fails the
    /// calls not yet written and closes the client connections), and the endpoint event is
    /// announced, both under the lock.
    pub fn set_enabled(&self, app: &App, enabled: bool) {
        let state = self.lock();
        if !app.set_enabled(enabled) {
            return;
        }
        let registration = app.registration();
        tracing::info!(app = %registration.slug(), enabled, "app dispatcher state changed");
        if state.apps.contains_key(&registration.id()) {
            let slug = registration.slug().to_string();
            let event =
                if enabled { EndpointEvent::Up { slug } } else { EndpointEvent::Down { slug } };
            self.events.send(event);
            self.changed.send_replace(());
        }
    }

    /// The bytes held for all registrations, and their budget.
    pub fn budget_use(&self) -> BudgetUse {
        BudgetUse { used: self.lock().held_bytes, budget: self.budget }
    }

    /// The app whose slug is `slug`.
    pub fn get(&self, slug: &str) -> Option<App> {
        self.lock().apps.values().find(|a| a.registration().slug() == slug).cloned()
    }

    /// Summaries for listings, in registration order.
    pub fn summaries(&self) -> Vec<AppSummary> {
        self.lock().apps.values().map(App::summary).collect()
    }

    /// At most `limit` summaries of the apps whose id is `from` or later, in registration
    /// order, and the id to continue from when more follow. Ids are never reused, so a
    /// position stays meaningful while apps come and go.
    pub fn page(&self, from: u64, limit: usize) -> (Vec<AppSummary>, Option<u64>) {
        let state = self.lock();
        let mut rest = state.apps.range(from..);
        let page = rest.by_ref().take(limit).map(|(_, a)| a.summary()).collect();
        (page, rest.next().map(|(id, _)| *id))
    }
}

fn enabled_slugs(state: &State) -> Vec<String> {
    state
        .apps
        .values()
        .filter(|a| a.is_enabled())
        .map(|a| a.registration().slug().to_string())
        .collect()
}

/// A subscription to endpoint events: first a [`EndpointEvent::Resync`] with the endpoints
/// that exist, then every change. A subscriber that falls more than the backlog behind gets
/// a fresh `Resync` instead of the events it missed.
#[derive(Debug)]
pub struct EndpointEvents {
    registry: Arc<Registry>,
    receiver: backlog::Receiver<EndpointEvent>,
    /// The snapshot taken at subscription, not yet received.
    first: Option<EndpointEvent>,
}

impl EndpointEvents {
    /// The next event; `None` once the engine is gone.
    pub async fn next(&mut self) -> Option<EndpointEvent> {
        if let Some(first) = self.first.take() {
            return Some(first);
        }
        match self.receiver.recv().await {
            Ok(event) => Some(event),
            Err(RecvError::Lagged(missed)) => {
                tracing::warn!(missed, "missed endpoint events; resynchronising");
                // A fresh subscription and snapshot under the lock, as in `subscribe`.
                let state = self.registry.lock();
                self.receiver = self.receiver.resubscribe();
                Some(EndpointEvent::Resync { slugs: enabled_slugs(&state) })
            }
            Err(RecvError::Closed) => None,
        }
    }
}

/// The slug of `display_name` (proto's [`base_slug`], the rule launch files are named by) cut
/// to `max`; on a clash (`taken`) `-2`, `-3`, … with the base cut further so the whole slug
/// stays within `max`.
pub fn allocate_slug(display_name: &str, max: usize, taken: impl Fn(&str) -> bool) -> String {
    let base = base_slug(display_name, max);
    let base = base.as_str();
    if !taken(base) {
        return base.to_string();
    }
    (2u64..)
        .map(|n| {
            let suffix = format!("-{n}");
            let stem = cut(base, max.saturating_sub(suffix.len()));
            // A stem cut to nothing still needs a letter in front of the number.
            let stem = if stem.is_empty() { "a" } else { stem };
            format!("{stem}{suffix}")
        })
        .find(|candidate| !taken(candidate))
        .unwrap_or_else(|| unreachable!("the counter is unbounded"))
}

/// `s` (ASCII) cut to `max` bytes and trimmed of trailing `-`.
fn cut(s: &str, max: usize) -> &str {
    s[..s.len().min(max)].trim_end_matches('-')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slug(name: &str) -> String {
        allocate_slug(name, 48, |_| false)
    }

    #[test]
    fn slug_rule_of_the_spec() {
        assert_eq!(slug("Notepad"), "notepad");
        assert_eq!(slug("  My  Notes — Ünïcode 2!  "), "my-notes-n-code-2");
        assert_eq!(slug("日本語"), "app");
        assert_eq!(slug(""), "app");
        assert_eq!(slug("--a--b--"), "a-b");
        let long = format!("{}-{}", "a".repeat(47), "b".repeat(10));
        let s = slug(&long);
        assert_eq!(s, "a".repeat(47), "cut to 48 then trimmed of the dash");
        assert!(s.len() <= 48);
    }

    #[test]
    fn clashes_get_numbered_within_the_bound() {
        let taken = ["notepad", "notepad-2"];
        assert_eq!(allocate_slug("Notepad", 48, |s| taken.contains(&s)), "notepad-3");
        let long = "x".repeat(60);
        let base = "x".repeat(48);
        let s = allocate_slug(&long, 48, |s| s == base);
        assert_eq!(s, format!("{}-2", "x".repeat(46)));
        assert_eq!(s.len(), 48);
        // A base that ends in a dash after the further cut is trimmed again.
        let name = format!("{}-yy", "z".repeat(45));
        let first = allocate_slug(&name, 48, |_| false);
        assert_eq!(first, name);
        assert_eq!(allocate_slug(&name, 48, |s| s == first), format!("{}-2", "z".repeat(45)));
    }

    #[test]
    fn many_instances_stay_unique_and_bounded() {
        let mut seen: Vec<String> = Vec::new();
        for _ in 0..300 {
            let s =
                allocate_slug("Ünïcode window title that is very long indeed, really", 48, |c| {
                    seen.iter().any(|t| t == c)
                });
            assert!(s.len() <= 48 && s.is_ascii());
            assert!(!seen.contains(&s));
            seen.push(s);
        }
    }
}
