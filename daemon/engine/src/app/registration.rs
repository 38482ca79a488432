//! What an app registered, held once while it is connected: its identity (registry id,
//! endpoint slug, display name, pid, whether it wants `activity` notices) and its actions as
//! the answers need them (`registration/catalog.rs`: each action's `actions/describe` object
//! encoded once, the `actions/list` row a prefix of it, the description read out of it by the
//! `actions/list` query, `registration/search.rs`). [`Declared`] is built from the handshake
//! before the registry's lock is taken (it is what the registration budget weighs); the
//! registry makes it the [`Registration`] when it admits the app, and nothing changes it
//! afterwards, so every client connection of the app shares it.

mod catalog;
mod search;

use super::link::Announced;
use crate::AppSummary;

pub use catalog::CatalogAction;
pub use search::Query;

use catalog::Catalog;

/// What an app announced in its handshake, its actions made into their catalog (the action
/// trees are gone by then); see the module docs.
#[derive(Debug)]
pub struct Declared {
    display_name: String,
    display_name_truncated: bool,
    pid: u32,
    enabled: bool,
    activity: bool,
    catalog: Catalog,
}

impl Declared {
    /// The declaration of the app the handshake `announced`.
    pub fn new(announced: Announced) -> Declared {
        Declared {
            display_name: announced.display_name,
            display_name_truncated: announced.display_name_truncated,
            pid: announced.pid,
            enabled: announced.enabled,
            activity: announced.activity,
            catalog: Catalog::new(announced.actions),
        }
    }

    /// The display name, cut to 1024 bytes.
    pub fn display_name(&self) -> &str {
        &self.display_name
    }

    /// Whether its dispatcher starts enabled.
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// What the daemon holds for it, as the registration budget counts: the encoded actions
    /// and the display name.
    pub fn held_bytes(&self) -> usize {
        self.catalog.held_bytes() + self.display_name.len()
    }
}

/// See the module docs.
#[derive(Debug)]
pub struct Registration {
    id: u64,
    slug: String,
    display_name: String,
    display_name_truncated: bool,
    pid: u32,
    /// Whether the app asked for `activity` notices in its hello.
    activity: bool,
    catalog: Catalog,
    /// [`Declared::held_bytes`], given back to the budget when the app leaves.
    held_bytes: usize,
}

impl Registration {
    /// The registration of the app that `declared` itself, under registry id `id` and
    /// endpoint `slug`.
    pub fn new(id: u64, slug: String, declared: Declared) -> Registration {
        let held_bytes = declared.held_bytes();
        Registration {
            id,
            slug,
            display_name: declared.display_name,
            display_name_truncated: declared.display_name_truncated,
            pid: declared.pid,
            activity: declared.activity,
            catalog: declared.catalog,
            held_bytes,
        }
    }

    /// The registry id (unique for the daemon's lifetime; a reconnecting app gets a new one).
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The endpoint slug.
    pub fn slug(&self) -> &str {
        &self.slug
    }

    /// The display name as the app sent it, cut to 1024 bytes.
    pub fn display_name(&self) -> &str {
        &self.display_name
    }

    /// Whether the display name was cut.
    pub fn display_name_truncated(&self) -> bool {
        self.display_name_truncated
    }

    /// The pid the app announced.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// Whether the app asked for `activity` notices in its hello.
    pub fn wants_activity(&self) -> bool {
        self.activity
    }

    /// The registered actions, in registration order.
    pub fn actions(&self) -> &[CatalogAction] {
        self.catalog.actions()
    }

    /// The action registered as `name`.
    pub fn action(&self, name: &str) -> Option<&CatalogAction> {
        self.catalog.action(name)
    }

    /// What the registration budget counts for this app ([`Declared::held_bytes`]).
    pub fn held_bytes(&self) -> usize {
        self.held_bytes
    }

    /// A listing row, with whether the app is `enabled` now.
    pub fn summary(&self, enabled: bool) -> AppSummary {
        AppSummary {
            slug: self.slug.clone(),
            display_name: self.display_name.clone(),
            display_name_truncated: self.display_name_truncated,
            pid: self.pid,
            enabled,
            action_count: self.actions().len(),
        }
    }
}
