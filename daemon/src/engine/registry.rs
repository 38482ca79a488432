//! The registry of connected apps: endpoint slugs (SPEC S8 slug rule), lookup by slug, the app
//! cap, and the endpoint lifecycle events the OS layer binds and unbinds sockets from.

use std::collections::BTreeMap;
use std::sync::Mutex;

use tokio::sync::broadcast;

use super::app_link::AppHandle;
use super::{AppSummary, EndpointEvent};

/// Room for endpoint events not yet received by a slow subscriber; a subscriber that lags
/// further gets `RecvError::Lagged` and resynchronises from [`super::Engine::apps`].
const EVENT_BACKLOG: usize = 1024;

/// Why an app could not be added.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RegistryFull;

/// See the module docs.
#[derive(Debug)]
pub struct Registry {
    max_apps: usize,
    max_slug: usize,
    apps: Mutex<BTreeMap<u64, AppHandle>>,
    events: broadcast::Sender<EndpointEvent>,
}

impl Registry {
    /// An empty registry of at most `max_apps` apps with slugs of at most `max_slug` bytes.
    pub fn new(max_apps: usize, max_slug: usize) -> Self {
        let (events, _) = broadcast::channel(EVENT_BACKLOG);
        Registry { max_apps, max_slug: max_slug.max(3), apps: Mutex::new(BTreeMap::new()), events }
    }

    /// A receiver of future endpoint events.
    pub fn subscribe(&self) -> broadcast::Receiver<EndpointEvent> {
        self.events.subscribe()
    }

    /// Adds an app, allocating its slug inside the lock so two registrations cannot get the
    /// same one. `make` builds the handle once the slug is known.
    pub fn insert(
        &self,
        display_name: &str,
        make: impl FnOnce(String) -> AppHandle,
    ) -> Result<AppHandle, RegistryFull> {
        let mut apps = self.apps.lock().unwrap_or_else(|e| e.into_inner());
        if apps.len() >= self.max_apps {
            return Err(RegistryFull);
        }
        let slug =
            allocate_slug(display_name, self.max_slug, |s| apps.values().any(|a| a.slug() == s));
        let app = make(slug);
        apps.insert(app.id(), app.clone());
        if app.is_enabled() {
            let _ = self.events.send(EndpointEvent::Up { slug: app.slug().to_string() });
        }
        Ok(app)
    }

    /// Removes an app (it disconnected) and announces its endpoint gone if it had one.
    pub fn remove(&self, app: &AppHandle) {
        let mut apps = self.apps.lock().unwrap_or_else(|e| e.into_inner());
        if apps.remove(&app.id()).is_some() && app.is_enabled() {
            let _ = self.events.send(EndpointEvent::Down { slug: app.slug().to_string() });
        }
    }

    /// Announces an enable/disable change of a registered app. Called with the new state
    /// already stored in the handle.
    pub fn announce(&self, app: &AppHandle, enabled: bool) {
        let apps = self.apps.lock().unwrap_or_else(|e| e.into_inner());
        if apps.contains_key(&app.id()) {
            let slug = app.slug().to_string();
            let event =
                if enabled { EndpointEvent::Up { slug } } else { EndpointEvent::Down { slug } };
            let _ = self.events.send(event);
        }
    }

    /// The app whose slug is `slug`.
    pub fn get(&self, slug: &str) -> Option<AppHandle> {
        let apps = self.apps.lock().unwrap_or_else(|e| e.into_inner());
        apps.values().find(|a| a.slug() == slug).cloned()
    }

    /// Every registered app, in registration order.
    pub fn all(&self) -> Vec<AppHandle> {
        let apps = self.apps.lock().unwrap_or_else(|e| e.into_inner());
        apps.values().cloned().collect()
    }

    /// Summaries for listings.
    pub fn summaries(&self) -> Vec<AppSummary> {
        self.all().iter().map(AppHandle::summary).collect()
    }
}

/// The slug of `display_name` (SPEC S8): lower-cased, every run of characters other than ASCII
/// letters and digits turned into one `-`, trimmed of `-`, `app` if empty, cut to `max` and
/// trimmed again; on a clash (`taken`) `-2`, `-3`, … with the base cut further so the whole
/// slug stays within `max`.
pub fn allocate_slug(display_name: &str, max: usize, taken: impl Fn(&str) -> bool) -> String {
    let mut base = String::new();
    let mut pending_dash = false;
    for c in display_name.chars() {
        if c.is_ascii_alphanumeric() {
            if pending_dash && !base.is_empty() {
                base.push('-');
            }
            pending_dash = false;
            base.push(c.to_ascii_lowercase());
        } else {
            pending_dash = true;
        }
    }
    if base.is_empty() {
        base.push_str("app");
    }
    let base = cut(&base, max);
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
