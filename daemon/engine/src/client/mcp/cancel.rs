//! MCP requests in flight on one connection, and `notifications/cancelled`.
//!
//! A cancelled request's host call runs on (a mutation cannot be recalled, and the app's own
//! contract decides what a half-done call means); only its response is suppressed, as both
//! revisions require ("MUST NOT send anything more for that request"), and the event is logged.
//! Deferred work is cancelled through `jfgui_tasks_cancel`, not here.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use super::rpc::IdKey;

/// The table of one connection: id → cancelled?
#[derive(Debug, Clone, Default)]
pub(crate) struct InFlight {
    table: Arc<Mutex<HashMap<IdKey, bool>>>,
}

/// Proof that a request is registered; consumed by [`Ticket::finish`]. Dropping it (the request
/// future was dropped, e.g. at shutdown) also removes the entry.
#[derive(Debug)]
pub(crate) struct Ticket {
    table: Arc<Mutex<HashMap<IdKey, bool>>>,
    key: Option<IdKey>,
}

/// What [`InFlight::cancel`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CancelOutcome {
    /// The request is in flight; its response will be suppressed.
    Suppressed,
    /// No such request in flight (already answered, never sent, or answered synchronously):
    /// cancelling it has no effect.
    NotInFlight,
}

impl InFlight {
    /// Registers a request; `None` when a request with the same id is still in flight (ids must
    /// not be reused while in flight, and two responses with one id could not be told apart).
    pub fn begin(&self, key: IdKey) -> Option<Ticket> {
        let mut table = self.table.lock().unwrap_or_else(PoisonError::into_inner);
        if table.contains_key(&key) {
            return None;
        }
        table.insert(key.clone(), false);
        Some(Ticket { table: Arc::clone(&self.table), key: Some(key) })
    }

    /// Marks a request cancelled.
    pub fn cancel(&self, key: &IdKey) -> CancelOutcome {
        let mut table = self.table.lock().unwrap_or_else(PoisonError::into_inner);
        match table.get_mut(key) {
            Some(cancelled) => {
                *cancelled = true;
                CancelOutcome::Suppressed
            }
            None => CancelOutcome::NotInFlight,
        }
    }

    /// Number of requests in flight.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.table.lock().unwrap_or_else(PoisonError::into_inner).len()
    }
}

impl Ticket {
    /// The request id.
    pub fn key(&self) -> &IdKey {
        self.key.as_ref().expect("a ticket holds its key until finished")
    }

    /// Removes the request from the table; true when its response may be sent, false when the
    /// client cancelled it meanwhile.
    pub fn finish(mut self) -> bool {
        let key = self.key.take().expect("a ticket is finished once");
        let mut table = self.table.lock().unwrap_or_else(PoisonError::into_inner);
        !table.remove(&key).unwrap_or(false)
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        if let Some(key) = self.key.take() {
            self.table.lock().unwrap_or_else(PoisonError::into_inner).remove(&key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(n: &str) -> IdKey {
        IdKey::Number(n.to_owned())
    }

    #[test]
    fn a_finished_request_is_sent_and_leaves_the_table() {
        let inflight = InFlight::default();
        let ticket = inflight.begin(key("1")).unwrap();
        assert_eq!(inflight.len(), 1);
        assert!(ticket.finish());
        assert_eq!(inflight.len(), 0);
        assert_eq!(inflight.cancel(&key("1")), CancelOutcome::NotInFlight);
    }

    #[test]
    fn a_cancelled_request_is_suppressed() {
        let inflight = InFlight::default();
        let ticket = inflight.begin(key("7")).unwrap();
        assert_eq!(inflight.cancel(&key("7")), CancelOutcome::Suppressed);
        assert!(!ticket.finish());
        assert_eq!(inflight.len(), 0);
    }

    #[test]
    fn string_and_number_ids_are_distinct() {
        let inflight = InFlight::default();
        let _n = inflight.begin(key("1")).unwrap();
        let s = inflight.begin(IdKey::String("1".into())).unwrap();
        assert_eq!(inflight.cancel(&IdKey::String("1".into())), CancelOutcome::Suppressed);
        assert!(!s.finish());
        assert_eq!(inflight.len(), 1);
    }

    #[test]
    fn an_id_in_flight_cannot_be_reused_and_a_dropped_ticket_frees_it() {
        let inflight = InFlight::default();
        let ticket = inflight.begin(key("3")).unwrap();
        assert!(inflight.begin(key("3")).is_none());
        drop(ticket);
        assert!(inflight.begin(key("3")).is_some());
    }
}
