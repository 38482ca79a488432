//! Buffered partial input, in total and in time: every client line and host-channel frame not yet
//! complete is held against one daemon-wide budget (`max_partial_bytes`, 64 MiB) beside the
//! per-message bound, and must complete within the partial deadline counted from its first byte, so
//! neither many connections holding large partial messages nor one trickling a byte at a time can
//! hold memory or a connection slot for long.
//!
//! The line and frame readers (`lines.rs`, `link/io.rs`) report what their decoder holds after
//! every read ([`Partial::track`]); the connection ends when the budget or the deadline says so.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::time::Instant;

/// The daemon-wide budget: bytes held by all connections' partial messages.
#[derive(Debug)]
pub struct PartialBudget {
    used: AtomicUsize,
    max: usize,
}

impl PartialBudget {
    /// A budget of `max` bytes.
    pub fn new(max: usize) -> Arc<PartialBudget> {
        Arc::new(PartialBudget { used: AtomicUsize::new(0), max })
    }

    /// Bytes held now.
    #[cfg(test)]
    pub fn used(&self) -> usize {
        self.used.load(Ordering::Relaxed)
    }
}

/// Why a partial message ended its connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PartialError {
    /// It did not complete within the deadline from its first byte.
    Deadline,
    /// Holding it would exceed the daemon-wide budget.
    OverBudget,
}

impl std::fmt::Display for PartialError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            PartialError::Deadline => "a partial message did not complete within its deadline",
            PartialError::OverBudget => {
                "the daemon-wide budget for buffered partial input is used up"
            }
        })
    }
}

/// One connection's share of the budget and the deadline of its current partial message.
/// Dropping it gives the share back.
#[derive(Debug)]
pub struct Partial {
    budget: Arc<PartialBudget>,
    held: usize,
    deadline: Duration,
    /// When the first byte of the current partial message arrived.
    since: Option<Instant>,
    /// When the last read arrived (the earliest a message begun in it can have started).
    last_read: Instant,
}

impl Partial {
    /// A connection's tracker against `budget`, with messages due `deadline` after their first
    /// byte.
    pub fn new(budget: Arc<PartialBudget>, deadline: Duration) -> Partial {
        Partial { budget, held: 0, deadline, since: None, last_read: Instant::now() }
    }

    /// After a read: the decoder now holds `buffered` bytes, and `partial` tells whether a
    /// message is under way. Takes or gives back budget; refuses what does not fit.
    pub fn track(&mut self, buffered: usize, partial: bool) -> Result<(), PartialError> {
        self.last_read = Instant::now();
        if partial && self.since.is_none() {
            self.since = Some(self.last_read);
        } else if !partial {
            self.since = None;
        }
        self.hold(buffered)
    }

    /// A complete message was taken out of the decoder, which now holds `buffered` bytes: the
    /// next message (if one is under way) began no earlier than the last read.
    pub fn message_taken(&mut self, buffered: usize, partial: bool) {
        self.since = partial.then_some(self.last_read);
        // Less is held than before: cannot exceed the budget.
        let _ = self.hold(buffered);
    }

    /// When the current partial message is due, if one is under way.
    pub fn due(&self) -> Option<Instant> {
        self.since.map(|since| since + self.deadline)
    }

    fn hold(&mut self, buffered: usize) -> Result<(), PartialError> {
        let used = &self.budget.used;
        if buffered <= self.held {
            used.fetch_sub(self.held - buffered, Ordering::Relaxed);
            self.held = buffered;
            return Ok(());
        }
        let more = buffered - self.held;
        let before = used.fetch_add(more, Ordering::Relaxed);
        if before + more > self.budget.max {
            used.fetch_sub(more, Ordering::Relaxed);
            return Err(PartialError::OverBudget);
        }
        self.held = buffered;
        Ok(())
    }
}

impl Drop for Partial {
    fn drop(&mut self) {
        self.budget.used.fetch_sub(self.held, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_are_taken_refused_and_given_back() {
        let budget = PartialBudget::new(100);
        let mut a = Partial::new(budget.clone(), Duration::from_secs(1));
        let mut b = Partial::new(budget.clone(), Duration::from_secs(1));
        a.track(60, true).unwrap();
        assert_eq!(b.track(50, true), Err(PartialError::OverBudget));
        assert_eq!(budget.used(), 60);
        b.track(40, true).unwrap();
        a.message_taken(10, true);
        assert_eq!(budget.used(), 50);
        drop(b);
        assert_eq!(budget.used(), 10);
        a.track(0, false).unwrap();
        assert_eq!(budget.used(), 0);
        assert!(a.due().is_none());
    }

    #[tokio::test(start_paused = true)]
    async fn the_deadline_counts_from_the_first_byte() {
        let mut p = Partial::new(PartialBudget::new(100), Duration::from_secs(30));
        p.track(1, true).unwrap();
        let due = p.due().unwrap();
        tokio::time::advance(Duration::from_secs(5)).await;
        p.track(2, true).unwrap();
        assert_eq!(p.due(), Some(due), "more bytes do not move the deadline");
        p.message_taken(1, true);
        assert!(p.due().unwrap() > due, "the next message starts its own clock");
    }
}
