//! The user's standing grants: (agent executable, app display name, action) triples that let a
//! call of a `confirm` action run without asking. The book lives in memory; every change is
//! handed, encoded, to the OS layer's [`GrantStore`] (which writes `grants.json` atomically
//! under the state dir's ownership rule), and a failed write is logged, never fatal: the grant
//! holds for this run.
//!
//! A grant names a path, like a firewall rule: a different binary later installed at the same
//! path matches it too (`jfgui-agent grants` shows the path).

use std::sync::{Arc, Mutex, MutexGuard};

use jfgui_proto::{Limits, Value};
use serde::{Deserialize, Serialize};

use crate::audit::time;

/// Most grants kept: a file beyond this many is refused as a whole, and `allow` beyond it
/// fails (revoke some first).
pub const MAX_GRANTS: usize = 1024;

/// Largest grants file read, in bytes: [`MAX_GRANTS`] grants of the longest texts fit.
pub const MAX_FILE_BYTES: usize = 4 << 20;

/// Longest agent path, app name or action of a grant, in bytes (`PATH_MAX` is 4096 on Linux).
const MAX_TEXT: usize = 1024;

/// The JSON bounds of the file, read and written.
const FILE_LIMITS: Limits = Limits { max_bytes: MAX_FILE_BYTES, ..Limits::DEFAULT };

/// One standing grant.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Grant {
    /// Its id (`grants revoke ID`), unique in the book, never reused within it.
    pub id: u64,
    /// The agent's executable path, as the OS named it when the user allowed.
    pub agent: String,
    /// The app's display name.
    pub app: String,
    /// The action.
    pub action: String,
    /// When it was made (RFC 3339, UTC).
    pub created: String,
    /// How: `prompt` (the user chose "always" in the app) or `cli` (`grants allow`).
    pub by: String,
}

/// The file's shape: `{"grants": [...]}`.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    grants: Vec<Grant>,
}

/// Why a grants file was not trusted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unreadable(pub String);

/// The grants of a `grants.json`: strict JSON (duplicate members refused), at most
/// [`MAX_GRANTS`] entries, unique ids, bounded texts.
pub fn parse(bytes: &[u8]) -> Result<Vec<Grant>, Unreadable> {
    if bytes.len() > MAX_FILE_BYTES {
        return Err(Unreadable(format!("larger than {MAX_FILE_BYTES} bytes")));
    }
    let value = jfgui_proto::parse(bytes, &FILE_LIMITS).map_err(|e| Unreadable(e.to_string()))?;
    let file: File = jfgui_proto::from_value(value).map_err(|e| Unreadable(e.to_string()))?;
    if file.grants.len() > MAX_GRANTS {
        return Err(Unreadable(format!("more than {MAX_GRANTS} grants")));
    }
    let mut ids: Vec<u64> = file.grants.iter().map(|g| g.id).collect();
    ids.sort_unstable();
    if ids.windows(2).any(|w| w[0] == w[1]) {
        return Err(Unreadable("two grants share an id".into()));
    }
    if file.grants.iter().any(|g| [&g.agent, &g.app, &g.action].iter().any(|t| t.len() > MAX_TEXT))
    {
        return Err(Unreadable(format!("a text longer than {MAX_TEXT} bytes")));
    }
    Ok(file.grants)
}

/// How the OS layer writes the whole encoded book.
type Save = dyn Fn(&[u8]) -> std::io::Result<()> + Send + Sync;

/// Writes the encoded book (the whole `grants.json`) where the OS layer keeps it.
#[derive(Clone)]
pub struct GrantStore(Arc<Save>);

impl GrantStore {
    /// A store that writes with `save`.
    pub fn new(save: impl Fn(&[u8]) -> std::io::Result<()> + Send + Sync + 'static) -> GrantStore {
        GrantStore(Arc::new(save))
    }
}

impl std::fmt::Debug for GrantStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("GrantStore").finish_non_exhaustive()
    }
}

/// Why a grant could not be added.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AddError {
    /// The book holds [`MAX_GRANTS`].
    Full,
    /// A text is empty or too long.
    Invalid(&'static str),
}

/// The grants book (see the module docs). Cheap to clone; clones share it.
#[derive(Debug, Clone, Default)]
pub struct Grants(Arc<Book>);

#[derive(Debug, Default)]
struct Book {
    grants: Mutex<Vec<Grant>>,
    store: Option<GrantStore>,
}

impl Grants {
    /// A book holding `grants`, saved through `store` (`None`: kept in memory only).
    pub fn new(grants: Vec<Grant>, store: Option<GrantStore>) -> Grants {
        Grants(Arc::new(Book { grants: Mutex::new(grants), store }))
    }

    /// Whether grants made now outlive the process.
    pub fn is_stored(&self) -> bool {
        self.0.store.is_some()
    }

    /// The grant that covers `agent` calling `action` of `app`.
    pub fn find(&self, agent: &str, app: &str, action: &str) -> Option<u64> {
        self.lock()
            .iter()
            .find(|g| g.agent == agent && g.app == app && g.action == action)
            .map(|g| g.id)
    }

    /// Every grant, oldest first.
    pub fn list(&self) -> Vec<Grant> {
        self.lock().clone()
    }

    /// Adds a grant (or returns the one that already covers the triple) and saves the book.
    pub fn add(&self, agent: &str, app: &str, action: &str, by: &str) -> Result<Grant, AddError> {
        for (text, what) in [(agent, "agent"), (app, "app"), (action, "action")] {
            if text.is_empty() || text.len() > MAX_TEXT {
                return Err(AddError::Invalid(what));
            }
        }
        let mut grants = self.lock();
        if let Some(g) =
            grants.iter().find(|g| g.agent == agent && g.app == app && g.action == action)
        {
            return Ok(g.clone());
        }
        if grants.len() >= MAX_GRANTS {
            return Err(AddError::Full);
        }
        let grant = Grant {
            id: grants.iter().map(|g| g.id).max().unwrap_or(0) + 1,
            agent: agent.into(),
            app: app.into(),
            action: action.into(),
            created: time::format_ms(time::now_ms()),
            by: by.into(),
        };
        grants.push(grant.clone());
        self.save(&grants);
        Ok(grant)
    }

    /// Removes the grants `which` selects (`None`: all); returns the removed ones.
    pub fn revoke(&self, which: Option<u64>) -> Vec<Grant> {
        let mut grants = self.lock();
        let (gone, kept) = std::mem::take(&mut *grants)
            .into_iter()
            .partition(|g| which.is_none_or(|id| g.id == id));
        *grants = kept;
        if !gone.is_empty() {
            self.save(&grants);
        }
        gone
    }

    /// The book as `grants.json` holds it.
    pub fn encode(grants: &[Grant]) -> Vec<u8> {
        let file = File { grants: grants.to_vec() };
        let value: Value =
            jfgui_proto::to_value(&file).expect("grants are strings and numbers: a JSON value");
        let mut bytes = jfgui_proto::encode(&value, &FILE_LIMITS)
            .expect("at most MAX_GRANTS grants of bounded texts fit the file's bounds");
        bytes.push(b'\n');
        bytes
    }

    fn save(&self, grants: &[Grant]) {
        if let Some(store) = &self.0.store
            && let Err(e) = (store.0)(&Self::encode(grants))
        {
            tracing::error!(error = %e, "grants: could not write the grants file; the change holds until the daemon exits");
        }
    }

    fn lock(&self) -> MutexGuard<'_, Vec<Grant>> {
        self.0.grants.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_book_round_trips_through_its_file() {
        let book = Grants::new(Vec::new(), None);
        let a = book.add("/usr/bin/claude", "Notepad", "document.clear", "prompt").unwrap();
        let again = book.add("/usr/bin/claude", "Notepad", "document.clear", "cli").unwrap();
        assert_eq!(a, again, "one grant per triple");
        let b = book.add("/usr/bin/other", "Notepad", "document.clear", "cli").unwrap();
        assert_eq!((a.id, b.id), (1, 2));
        let parsed = parse(&Grants::encode(&book.list())).unwrap();
        assert_eq!(parsed, book.list());
        assert_eq!(book.find("/usr/bin/other", "Notepad", "document.clear"), Some(2));
        assert_eq!(book.find("/usr/bin/other", "Sketch", "document.clear"), None);
        assert_eq!(book.revoke(Some(1)), vec![a]);
        assert_eq!(book.find("/usr/bin/claude", "Notepad", "document.clear"), None);
        assert_eq!(book.revoke(None).len(), 1);
        assert!(book.list().is_empty());
    }

    #[test]
    fn untrusted_shapes_are_refused() {
        let one = r#"{"id":1,"agent":"/a","app":"A","action":"x","created":"t","by":"cli"}"#;
        for bad in [
            "".to_string(),
            "{\"grants\":[".to_string(),
            format!("{{\"grants\":[{one}],\"grants\":[]}}"),
            format!("{{\"grants\":[{one},{one}]}}"),
            r#"{"grants":[{"id":1}]}"#.to_string(),
            format!("{{\"grants\":[{one}],\"extra\":1}}"),
            " ".repeat(MAX_FILE_BYTES + 1),
        ] {
            assert!(parse(bad.as_bytes()).is_err(), "{bad:.80}");
        }
        assert_eq!(parse(format!("{{\"grants\":[{one}]}}").as_bytes()).unwrap().len(), 1);
    }
}
