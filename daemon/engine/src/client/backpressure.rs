//! What a client connection's next request must wait for: a free in-flight slot
//! (`max_in_flight_per_client`), room in the output buffer, and its share of the bytes the
//! running calls may bring back ([`Admission`]). A connection stops reading while any is
//! missing, so a client that pipelines and never reads costs a few maximum-size responses of
//! memory, never `max_in_flight_per_client` of them.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::EngineConfig;
use crate::output::Output;

/// What a connection's next request must wait for: a free in-flight slot, room in the output
/// buffer, and its share of the response-byte budget ([`Admission`]).
pub(crate) struct Backpressure {
    in_flight: Arc<Semaphore>,
    admission: Admission,
}

impl Backpressure {
    pub(crate) fn new(config: &EngineConfig) -> Backpressure {
        Backpressure {
            in_flight: Arc::new(Semaphore::new(config.max_in_flight_per_client.max(1))),
            admission: Admission::new(config.json.max_bytes, config.max_in_flight_per_client),
        }
    }

    /// Waits until the next request may be read; an error means the connection is closing.
    pub(crate) async fn permit(
        &self,
        output: &Output,
    ) -> Result<CallPermit, tokio::sync::AcquireError> {
        let count = self.in_flight.clone().acquire_owned().await?;
        output.wait_room().await;
        let bytes = self.admission.acquire().await?;
        Ok(CallPermit { _count: count, bytes })
    }
}

/// What a running call holds: an in-flight slot and its share of the response-byte budget.
pub(crate) struct CallPermit {
    _count: OwnedSemaphorePermit,
    bytes: BytesPermit,
}

impl CallPermit {
    /// Feeds the size of the call's response into the admission estimate.
    pub(crate) fn observe(&self, len: usize) {
        self.bytes.observe(len);
    }
}

/// Maximum-size responses a connection's running calls may bring back at once (beyond the
/// one buffered for writing). With 1 MiB lines this bounds a client that stops reading to
/// about 4 MiB of waiting responses plus the buffered one, instead of 64 MiB.
const RESPONSES_IN_FLIGHT: usize = 4;

/// Admission of calls by the response bytes they are expected to bring back.
///
/// A response's size is unknown until the app answers, so each call reserves the connection's
/// current estimate from a budget of [`RESPONSES_IN_FLIGHT`] maximum-size responses. The
/// estimate starts at the maximum (a new connection gets a few calls at once, like TCP slow
/// start), follows every response up at once, and halves per smaller response, so after a
/// handful of small responses pipelined calls run `max_in_flight_per_client` at a time. A client that first
/// drives the estimate down with small responses and then pipelines large ones can still have
/// up to `max_in_flight_per_client` large responses running: the count bound stays the backstop.
#[derive(Clone)]
struct Admission {
    budget: Arc<Semaphore>,
    estimate: Arc<AtomicUsize>,
    floor: usize,
    ceiling: usize,
}

impl Admission {
    fn new(max_line: usize, max_in_flight: usize) -> Admission {
        let ceiling = max_line.clamp(1, u32::MAX as usize / RESPONSES_IN_FLIGHT);
        let total = ceiling * RESPONSES_IN_FLIGHT;
        Admission {
            budget: Arc::new(Semaphore::new(total)),
            estimate: Arc::new(AtomicUsize::new(ceiling)),
            // Small responses: the in-flight count, not the bytes, is the bound.
            floor: (total / max_in_flight.max(1)).max(1),
            ceiling,
        }
    }

    async fn acquire(&self) -> Result<BytesPermit, tokio::sync::AcquireError> {
        let want = self.estimate.load(Ordering::Relaxed).clamp(self.floor, self.ceiling);
        let permit = self.budget.clone().acquire_many_owned(want as u32).await?;
        Ok(BytesPermit { _permit: permit, admission: self.clone() })
    }
}

/// A call's reservation from the [`Admission`] budget, released when its response is queued.
struct BytesPermit {
    _permit: OwnedSemaphorePermit,
    admission: Admission,
}

impl BytesPermit {
    /// Feeds a response's size into the estimate.
    fn observe(&self, len: usize) {
        let _ = self
            .admission
            .estimate
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |e| Some(len.max(e / 2)));
    }
}
