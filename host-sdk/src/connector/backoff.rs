//! Capped, jittered exponential backoff for reconnecting to a daemon that went away.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// First delay after a failed connect: short, so a daemon restart is noticed quickly.
pub const INITIAL_DELAY: Duration = Duration::from_millis(50);

/// Longest delay between attempts. One `connect(2)` every two seconds costs nothing
/// measurable, and a restarted daemon sees every app again within the cap plus a moment
/// (the daemon-restart tests allow the cap plus 1 s).
pub const MAX_DELAY: Duration = Duration::from_secs(2);

/// Delays double from [`INITIAL_DELAY`] up to [`MAX_DELAY`]; each one is drawn uniformly from
/// its upper half ("equal jitter"), so apps restarted together by a daemon crash do not
/// reconnect in lockstep.
#[derive(Debug, Clone)]
pub struct Backoff {
    next: Duration,
    rng: u64,
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff::new()
    }
}

impl Backoff {
    /// A fresh backoff seeded from the clock and the process id.
    pub fn new() -> Self {
        let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
        let seed = nanos ^ (u64::from(std::process::id()) << 32) ^ 0x9E37_79B9_7F4A_7C15;
        Backoff { next: INITIAL_DELAY, rng: seed | 1 }
    }

    /// The delay before the next attempt; the one after it is twice as long (capped).
    pub fn next_delay(&mut self) -> Duration {
        let full = self.next;
        self.next = (self.next * 2).min(MAX_DELAY);
        let half = full / 2;
        let span = (full - half).as_nanos() as u64;
        half + Duration::from_nanos(if span == 0 { 0 } else { self.random() % (span + 1) })
    }

    /// After a successful registration the next failure starts from the short delay again.
    pub fn reset(&mut self) {
        self.next = INITIAL_DELAY;
    }

    fn random(&mut self) -> u64 {
        // xorshift64: plenty for jitter, no dependency.
        let mut x = self.rng;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.rng = x;
        x
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles_with_jitter_up_to_the_cap() {
        let mut b = Backoff::new();
        let mut full = INITIAL_DELAY;
        for _ in 0..12 {
            let d = b.next_delay();
            assert!(d >= full / 2 && d <= full, "{d:?} outside [{:?}, {full:?}]", full / 2);
            full = (full * 2).min(MAX_DELAY);
        }
        assert!(b.next_delay() <= MAX_DELAY);
        b.reset();
        assert!(b.next_delay() <= INITIAL_DELAY);
    }
}
