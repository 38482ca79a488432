//! Per-app endpoints: an endpoint exists exactly while the engine says the app is
//! connected and enabled. Up → bind and accept; Down → stop accepting and remove it.
//!
//! Where endpoints live is an [`EndpointSpace`]: on Unix the runtime dir (`apps/SLUG.sock`,
//! 0600, stale socket removed, a planted non-socket refused and logged); on Windows the
//! user's named-pipe namespace (`transport::windows`).

use std::collections::HashMap;
use std::sync::Arc;

use jfgui_engine::{EndpointEvent, EndpointNaming};
use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::Service;
use super::accept::{TurnAway, accept_loop};
use super::gate::{Class, Gate};
#[cfg(unix)]
use crate::runtime_dir::{RuntimeDir, remove_stale_socket};
use crate::transport::Listener;

/// Where endpoint listeners are created and removed.
pub trait EndpointSpace: Send + Sync + 'static {
    /// Creates the listener of `slug` (already checked by [`valid_slug`]).
    fn bind(&self, slug: &str) -> Result<Listener, String>;
    /// Removes what [`EndpointSpace::bind`] created, after its listener was dropped.
    fn unbind(&self, slug: &str);
    /// The rule naming what [`EndpointSpace::bind`] creates, for the engine's `apps/list`.
    fn naming(&self) -> EndpointNaming;
}

/// A slug that cannot escape its directory or namespace and is in the engine's alphabet
/// (defence in depth: the engine only makes `[a-z0-9-]` slugs).
pub fn valid_slug(slug: &str) -> bool {
    !slug.is_empty()
        && !slug.starts_with('-')
        && slug.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
}

/// The socket name of `slug`, relative to the runtime dir, or `None` for an invalid slug.
#[cfg(unix)]
pub fn endpoint_name(slug: &str) -> Option<String> {
    valid_slug(slug).then(|| {
        format!(
            "{}/{slug}{}",
            jfgui_proto::locations::APPS_DIR,
            jfgui_proto::locations::ENDPOINT_SUFFIX
        )
    })
}

#[cfg(unix)]
impl EndpointSpace for RuntimeDir {
    fn bind(&self, slug: &str) -> Result<Listener, String> {
        let name = endpoint_name(slug).ok_or_else(|| format!("unsafe slug {slug:?}"))?;
        Listener::bind(self, &name).map_err(|e| e.to_string())
    }

    fn unbind(&self, slug: &str) {
        if let Some(name) = endpoint_name(slug)
            && let Err(e) = remove_stale_socket(self, &name)
        {
            tracing::warn!(slug, error = %e, "could not remove the endpoint socket");
        }
    }

    fn naming(&self) -> EndpointNaming {
        let apps = self.path().join(jfgui_proto::locations::APPS_DIR);
        EndpointNaming::new(move |slug| {
            apps.join(format!("{slug}{}", jfgui_proto::locations::ENDPOINT_SUFFIX))
                .to_string_lossy()
                .into_owned()
        })
    }
}

/// On Windows an endpoint is the pipe `app-SLUG` (the prefix keeps a slug from ever naming
/// the `control` or `host` pipe); a pipe disappears with its last instance, so unbinding
/// needs nothing beyond dropping the listener.
#[cfg(windows)]
impl EndpointSpace for crate::transport::PipeSpace {
    fn bind(&self, slug: &str) -> Result<Listener, String> {
        let pipe = jfgui_proto::locations::Pipe::App(slug);
        Listener::bind(self, pipe).map_err(|e| format!("{}: {e}", self.pipe_name(pipe)))
    }

    fn unbind(&self, _slug: &str) {}

    fn naming(&self) -> EndpointNaming {
        let space = self.clone();
        EndpointNaming::new(move |slug| space.pipe_name(jfgui_proto::locations::Pipe::App(slug)))
    }
}

/// Removes endpoint sockets a previous daemon left in `apps/` (run under the lock, before
/// binding). Only sockets are removed; anything else is left alone with a warning.
#[cfg(unix)]
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

/// Keeps the endpoint sockets in step with the engine until `stop` turns true or the engine's
/// events end; then removes every endpoint it made.
pub async fn run<P: EndpointSpace>(
    engine: Service,
    space: Arc<P>,
    gate: Gate,
    mut stop: watch::Receiver<bool>,
) {
    let mut events = engine.endpoint_events();
    let mut set = Endpoints { bound: HashMap::new(), space, gate, engine };
    loop {
        tokio::select! {
            change = events.next() => match change {
                Some(EndpointEvent::Up { slug }) => set.up(slug),
                Some(EndpointEvent::Down { slug }) => set.down(&slug),
                Some(EndpointEvent::Resync { slugs }) => set.resync(slugs),
                None => break,
            },
            _ = stop.wait_for(|s| *s) => break,
        }
    }
    set.resync(Vec::new());
}

struct Endpoints<P> {
    bound: HashMap<String, JoinHandle<()>>,
    space: Arc<P>,
    gate: Gate,
    engine: Service,
}

impl<P: EndpointSpace> Endpoints<P> {
    fn up(&mut self, slug: String) {
        if self.bound.contains_key(&slug) {
            return;
        }
        if !valid_slug(&slug) {
            tracing::error!(slug, "not binding an endpoint for an unsafe slug");
            return;
        }
        let listener = match self.space.bind(&slug) {
            Ok(l) => l,
            Err(e) => {
                tracing::error!(slug, error = %e, "cannot create the app's endpoint; it stays unreachable");
                return;
            }
        };
        tracing::info!(slug, endpoint = %listener.path().display(), "endpoint up");
        let engine = self.engine.clone();
        let served = slug.clone();
        let task = tokio::spawn(accept_loop(
            listener,
            self.gate.clone(),
            Class::Client,
            TurnAway::JsonRpc,
            move |stream, peer| engine.clone().serve_client(stream, served.clone(), peer),
        ));
        self.bound.insert(slug, task);
    }

    fn down(&mut self, slug: &str) {
        let Some(task) = self.bound.remove(slug) else { return };
        task.abort();
        self.space.unbind(slug);
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

#[cfg(all(test, unix))]
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
