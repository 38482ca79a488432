//! Per-app endpoint sockets (SPEC S8): `apps/SLUG.sock` exists exactly while the engine says
//! the app is connected and enabled. Up → bind (0600, stale socket removed, planted
//! non-socket refused and logged) and accept; Down → stop accepting and unlink.

use std::collections::HashMap;
use std::sync::Arc;

use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::runtime_dir::{RuntimeDir, remove_stale_socket};
use crate::server::accept::accept_loop;
use crate::server::gate::{Class, Gate};
use crate::server::sessions::{EndpointChange, EndpointFeed, Sessions};
use crate::transport::Listener;

/// The socket name of `slug`, relative to the runtime dir, or `None` for a slug that could
/// escape `apps/` or is not in the engine's alphabet (defence in depth: the engine only
/// makes `[a-z0-9-]` slugs).
pub fn endpoint_name(slug: &str) -> Option<String> {
    let ok = !slug.is_empty()
        && !slug.starts_with('-')
        && slug.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
    ok.then(|| {
        format!(
            "{}/{slug}{}",
            jfgui_proto::locations::APPS_DIR,
            jfgui_proto::locations::ENDPOINT_SUFFIX
        )
    })
}

/// Removes endpoint sockets a previous daemon left in `apps/` (run under the lock, before
/// binding). Only sockets are removed; anything else is left alone with a warning.
pub fn remove_stale(rt: &RuntimeDir) {
    let Ok(entries) = std::fs::read_dir(jfgui_proto::locations::APPS_DIR) else { return };
    for entry in entries.flatten() {
        let name =
            format!("{}/{}", jfgui_proto::locations::APPS_DIR, entry.file_name().to_string_lossy());
        if let Err(e) = remove_stale_socket(rt, &name) {
            tracing::warn!("{e}");
        }
    }
}

/// Keeps the endpoint sockets in step with the engine until `stop` turns true or the feed
/// ends; then removes every endpoint it made.
pub async fn run<S: Sessions>(
    sessions: S,
    rt: Arc<RuntimeDir>,
    gate: Gate,
    mut stop: watch::Receiver<bool>,
) {
    let mut feed = sessions.endpoint_changes();
    let mut set = Endpoints { bound: HashMap::new(), rt, gate, sessions };
    loop {
        tokio::select! {
            change = feed.next() => match change {
                Some(EndpointChange::Up(slug)) => set.up(slug),
                Some(EndpointChange::Down(slug)) => set.down(&slug),
                Some(EndpointChange::Resync(slugs)) => set.resync(slugs),
                None => break,
            },
            _ = stop.wait_for(|s| *s) => break,
        }
    }
    set.resync(Vec::new());
}

struct Endpoints<S> {
    bound: HashMap<String, JoinHandle<()>>,
    rt: Arc<RuntimeDir>,
    gate: Gate,
    sessions: S,
}

impl<S: Sessions> Endpoints<S> {
    fn up(&mut self, slug: String) {
        if self.bound.contains_key(&slug) {
            return;
        }
        let Some(name) = endpoint_name(&slug) else {
            tracing::error!(slug, "not binding an endpoint for an unsafe slug");
            return;
        };
        let listener = match Listener::bind(&self.rt, &name) {
            Ok(l) => l,
            Err(e) => {
                tracing::error!(slug, error = %e, "cannot create the app's endpoint; it stays unreachable");
                return;
            }
        };
        tracing::info!(slug, endpoint = %listener.path().display(), "endpoint up");
        let sessions = self.sessions.clone();
        let served = slug.clone();
        let task = tokio::spawn(accept_loop(
            listener,
            self.gate.clone(),
            Class::Client,
            move |stream, peer| sessions.clone().serve_client(stream, served.clone(), peer),
        ));
        self.bound.insert(slug, task);
    }

    fn down(&mut self, slug: &str) {
        let Some(task) = self.bound.remove(slug) else { return };
        task.abort();
        if let Some(name) = endpoint_name(slug) {
            if let Err(e) = remove_stale_socket(&self.rt, &name) {
                tracing::warn!(slug, error = %e, "could not remove the endpoint socket");
            }
        }
        tracing::info!(slug, "endpoint down");
    }

    fn resync(&mut self, slugs: Vec<String>) {
        let gone: Vec<String> = self.bound.keys().filter(|s| !slugs.contains(s)).cloned().collect();
        for slug in gone {
            self.down(&slug);
        }
        for slug in slugs {
            self.up(slug);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoint_names_stay_inside_apps() {
        assert_eq!(endpoint_name("notepad-2").as_deref(), Some("apps/notepad-2.sock"));
        for bad in ["", "../x", "a/b", ".", "-x", "é", "a b", "a.sock"] {
            assert_eq!(endpoint_name(bad), None, "{bad:?}");
        }
    }
}
