//! What an app registered, held once while it is connected: its identity (registry id,
//! endpoint slug, display name, pid, whether it wants `activity` notices), its actions as the
//! answers need them (`registration/catalog.rs`: each action's `actions/describe` object
//! encoded once, the `actions/list` row a prefix of it) and their search text
//! (`registration/search.rs`). The registry builds it when it admits the app; nothing changes
//! it afterwards, so every client connection of the app shares it.

mod catalog;
mod search;

use super::link::Announced;
use crate::AppSummary;

pub use catalog::CatalogAction;
pub use search::SearchText;

use catalog::Catalog;

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
    search: SearchText,
}

impl Registration {
    /// The registration of the app the handshake `announced`, under registry id `id` and
    /// endpoint `slug`.
    pub fn new(id: u64, slug: String, announced: &Announced) -> Registration {
        Registration {
            id,
            slug,
            display_name: announced.display_name.clone(),
            display_name_truncated: announced.display_name_truncated,
            pid: announced.pid,
            activity: announced.activity,
            catalog: Catalog::new(&announced.actions),
            search: SearchText::new(&announced.actions),
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

    /// The lower-cased search text of [`Registration::actions`].
    pub fn search_text(&self) -> &SearchText {
        &self.search
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
