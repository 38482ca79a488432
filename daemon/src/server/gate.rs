//! Connection caps and the live-connection count (a flood of connections is refused at the cap, and
//! `--idle-exit` counts from the last one closing): every accepted stream holds a [`Ticket`] for as
//! long as it is served.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::watch;

/// Extra host-socket connections beyond `max_apps`, so an app over the app cap still completes
/// its hello and gets the engine's `refused` instead of a bare close, while a flood of
/// connections that never speak stays bounded.
pub const HANDSHAKE_HEADROOM: usize = 64;

/// Which cap a connection counts against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// `agentd.sock` and `apps/SLUG.sock`: `--max-clients`.
    Client,
    /// `host.sock`: `--max-apps` + [`HANDSHAKE_HEADROOM`].
    App,
}

#[derive(Debug)]
struct Inner {
    clients: AtomicUsize,
    apps: AtomicUsize,
    max_clients: usize,
    max_apps: usize,
    total: watch::Sender<usize>,
}

/// Shared by all accept loops.
#[derive(Debug, Clone)]
pub struct Gate(Arc<Inner>);

/// Proof of one admitted connection; dropping it frees the slot.
#[derive(Debug)]
pub struct Ticket {
    gate: Gate,
    class: Class,
}

impl Gate {
    /// A gate with `max_clients` client and `max_apps` (+ headroom) app connections.
    pub fn new(max_clients: usize, max_apps: usize) -> Gate {
        Gate(Arc::new(Inner {
            clients: AtomicUsize::new(0),
            apps: AtomicUsize::new(0),
            max_clients,
            max_apps: max_apps.saturating_add(HANDSHAKE_HEADROOM),
            total: watch::channel(0).0,
        }))
    }

    /// A slot for one more connection of `class`, or `None` at the cap.
    pub fn enter(&self, class: Class) -> Option<Ticket> {
        let (count, max) = self.counter(class);
        count
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| (n < max).then_some(n + 1))
            .ok()?;
        self.0.total.send_modify(|t| *t += 1);
        Some(Ticket { gate: self.clone(), class })
    }

    /// The cap of `class`, for messages.
    pub fn cap(&self, class: Class) -> usize {
        self.counter(class).1
    }

    /// Watches the number of live connections of both classes (idle exit).
    pub fn live(&self) -> watch::Receiver<usize> {
        self.0.total.subscribe()
    }

    fn counter(&self, class: Class) -> (&AtomicUsize, usize) {
        match class {
            Class::Client => (&self.0.clients, self.0.max_clients),
            Class::App => (&self.0.apps, self.0.max_apps),
        }
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        self.gate.counter(self.class).0.fetch_sub(1, Ordering::AcqRel);
        self.gate.0.total.send_modify(|t| *t -= 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caps_are_per_class_and_freed_on_drop() {
        let gate = Gate::new(2, 1);
        let live = gate.live();
        let a = gate.enter(Class::Client).unwrap();
        let b = gate.enter(Class::Client).unwrap();
        assert!(gate.enter(Class::Client).is_none());
        let apps: Vec<_> =
            (0..1 + HANDSHAKE_HEADROOM).map(|_| gate.enter(Class::App).unwrap()).collect();
        assert!(gate.enter(Class::App).is_none());
        assert_eq!(*live.borrow(), 3 + HANDSHAKE_HEADROOM);
        drop(a);
        assert!(gate.enter(Class::Client).is_some());
        drop((b, apps));
        assert_eq!(*live.borrow(), 0);
    }
}
