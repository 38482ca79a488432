//! `activity` notices held for an app's next write: a notice is not written the moment its
//! call ends (an extra write, and the app woken just as the client's next request arrives);
//! it rides in the next write the link makes, after that write's requests. So that an idle app
//! still gets its notices promptly, the link's timer flushes them at most [`NOTICE_FLUSH`]
//! after the first one was held; while writes keep taking them it fires once per
//! [`NOTICE_FLUSH`], and with nothing held it is not armed at all. A notice is made after the
//! reply of the call it reports arrived, so it always reaches the app after that reply.

use std::time::Duration;

use tokio::time::Instant;

/// `activity` notices held for an app at most; beyond that they are dropped (and counted).
pub const NOTICE_SLOTS: usize = 16;

/// The longest a held `activity` notice waits for a write to ride in.
pub const NOTICE_FLUSH: Duration = Duration::from_millis(50);

/// Encoded `activity` frames held for the next write (see the module docs).
#[derive(Debug, Default)]
pub struct Notices {
    /// The frames, in order.
    frames: Vec<u8>,
    /// How many frames `frames` holds (at most [`NOTICE_SLOTS`]).
    count: usize,
    /// When the link's timer looks at the held notices again (and has the writer write them
    /// if no write took them meanwhile); `None`: not armed.
    flush_at: Option<Instant>,
}

impl Notices {
    /// Holds `frame`; `None` when every slot is taken (the notice is dropped), else whether the
    /// flush was armed by it (the link's timer must look again).
    pub fn hold(&mut self, frame: &[u8], now: Instant) -> Option<bool> {
        if self.count >= NOTICE_SLOTS {
            return None;
        }
        Some(self.hold_always(frame, now))
    }

    /// Holds `frame` outside the notice slots (a `withdraw`, which must not be dropped); whether
    /// the flush was armed by it.
    pub fn hold_always(&mut self, frame: &[u8], now: Instant) -> bool {
        self.frames.extend_from_slice(frame);
        self.count += 1;
        let arm = self.flush_at.is_none();
        if arm {
            self.flush_at = Some(now + NOTICE_FLUSH);
        }
        arm
    }

    /// Moves the held notices to the end of `batch` (a write about to be made).
    pub fn take(&mut self, batch: &mut Vec<u8>) {
        if self.count > 0 {
            batch.append(&mut self.frames);
            self.count = 0;
        }
    }

    /// At `now`: whether held notices are due to be written on their own, and when to look
    /// again (`None`: not armed). A due flush disarms; the next notice held arms it again.
    pub fn due(&mut self, now: Instant) -> (bool, Option<Instant>) {
        let due = self.flush_at.is_some_and(|at| at <= now);
        if due {
            self.flush_at = None;
        }
        (due && self.count > 0, self.flush_at)
    }
}
