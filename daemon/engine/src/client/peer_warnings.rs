//! A rate limit for the warnings one client connection can trigger at will, such as a write
//! sent as a notification (an `actions/execute` without an `id`, dropped unexecuted): at most
//! [`BURST`] of them per [`WINDOW`] reach the log. The rest are counted; the count rides on the
//! next warning that is logged, or on one last line when the connection ends, so nothing goes
//! unreported. With the connection cap (`max_clients`) this bounds what any set of clients can
//! make the daemon write, and a client cannot bury everybody else's log lines under its own.

use std::time::Duration;

use tokio::time::Instant;

use crate::PeerInfo;

/// Warnings one connection may log per [`WINDOW`].
pub const BURST: u32 = 5;

/// The period [`BURST`] applies to.
pub const WINDOW: Duration = Duration::from_secs(60);

/// The rate limit of one connection (see the module docs).
#[derive(Debug)]
pub struct PeerWarnings {
    peer: PeerInfo,
    /// When the current window opened (`None` before the first warning).
    window_start: Option<Instant>,
    /// Warnings logged in the current window.
    logged: u32,
    /// Warnings suppressed since the last one logged.
    suppressed: u64,
}

impl PeerWarnings {
    /// The limit for a connection from `peer` (named in the closing summary).
    pub fn new(peer: PeerInfo) -> PeerWarnings {
        PeerWarnings { peer, window_start: None, logged: 0, suppressed: 0 }
    }

    /// Call before logging a warning: `Some(n)` means log it now and say that `n` earlier ones
    /// were suppressed; `None` means it is suppressed (and counted).
    pub fn admit(&mut self) -> Option<u64> {
        let now = Instant::now();
        if self.window_start.is_none_or(|start| now.duration_since(start) >= WINDOW) {
            self.window_start = Some(now);
            self.logged = 0;
        }
        if self.logged < BURST {
            self.logged += 1;
            Some(std::mem::take(&mut self.suppressed))
        } else {
            self.suppressed += 1;
            None
        }
    }
}

impl Drop for PeerWarnings {
    fn drop(&mut self) {
        if self.suppressed > 0 {
            tracing::warn!(
                peer = ?self.peer,
                suppressed = self.suppressed,
                "connection closed; further warnings it caused were suppressed (at most {BURST} \
                 per {}s per connection)",
                WINDOW.as_secs()
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_burst_per_window_then_counted_and_reported_with_the_next() {
        let mut w = PeerWarnings::new(PeerInfo::default());
        for _ in 0..BURST {
            assert_eq!(w.admit(), Some(0));
        }
        for _ in 0..7 {
            assert_eq!(w.admit(), None);
        }
        tokio::time::advance(WINDOW - Duration::from_millis(1)).await;
        assert_eq!(w.admit(), None, "the window has not passed yet");
        tokio::time::advance(Duration::from_millis(1)).await;
        assert_eq!(w.admit(), Some(8), "the next logged warning carries the count");
        assert_eq!(w.admit(), Some(0));
    }
}
