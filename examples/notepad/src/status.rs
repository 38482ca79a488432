//! Notepad's "last agent action" display, refreshed at a bounded rate as a window repaints per
//! frame, not per event: the daemon's `activity` notices are kept as they come (copied into
//! reused slots, nothing formatted), and the text to show is made at most once per
//! [`REFRESH_INTERVAL`]. A refresh shows each action since the last one on its own line when
//! there were at most [`MAX_LINES`], else the latest with how many there were. Nothing is ever
//! left unshown: a notice that comes while the display is fresh is shown when the interval
//! ends ([`AgentStatus::due_in`] is the host's next tick), and one that comes to an idle
//! display is shown at once.
//!
//! The app writes the text where it shows it (Notepad: stderr, one write per refresh).

use std::fmt::Write as _;
use std::time::Duration;

use jfgui_host_sdk::Activity;

/// Least time between two refreshes of the display.
pub const REFRESH_INTERVAL: Duration = Duration::from_millis(100);

/// Most actions a refresh shows one line each; more since the last refresh are summed up in
/// one line naming the latest.
pub const MAX_LINES: usize = 8;

/// What every line starts with (tests and scripts read Notepad's stderr for it).
const PREFIX: &str = "jfgui-notepad: last agent action: ";

/// The actions not shown yet and when the display was last refreshed. See the module docs.
#[derive(Debug, Default)]
pub struct AgentStatus {
    /// The latest actions not shown yet, the `n`th since the last refresh in slot
    /// `n % MAX_LINES`; slots are overwritten in place, so a warm display allocates nothing
    /// per notice.
    slots: Vec<Activity>,
    /// Actions since the last refresh.
    pending: u64,
    /// When the display was last refreshed (`None`: never).
    refreshed_at: Option<Duration>,
    /// The text of the last refresh (its buffer is reused).
    text: String,
}

impl AgentStatus {
    /// Keeps `activity` for the next refresh.
    pub fn record(&mut self, activity: &Activity) {
        let slot = (self.pending % MAX_LINES as u64) as usize;
        match self.slots.get_mut(slot) {
            Some(kept) => {
                kept.client.clone_from(&activity.client);
                kept.action.clone_from(&activity.action);
                kept.outcome.clone_from(&activity.outcome);
                kept.reason.clone_from(&activity.reason);
            }
            None => self.slots.push(activity.clone()),
        }
        self.pending += 1;
    }

    /// How long until the display should be refreshed at `now` (zero: now); `None` when
    /// nothing waits to be shown.
    pub fn due_in(&self, now: Duration) -> Option<Duration> {
        if self.pending == 0 {
            return None;
        }
        Some(
            self.refreshed_at
                .map_or(Duration::ZERO, |at| (at + REFRESH_INTERVAL).saturating_sub(now)),
        )
    }

    /// The text to show at `now` when a refresh is due (whole lines, each ending in `\n`),
    /// and the actions in it count as shown; `None` when none is due.
    pub fn refresh(&mut self, now: Duration) -> Option<&str> {
        if self.due_in(now) != Some(Duration::ZERO) {
            return None;
        }
        self.text.clear();
        let pending = self.pending;
        if pending <= MAX_LINES as u64 {
            for activity in &self.slots[..pending as usize] {
                push_line(&mut self.text, activity, None);
            }
        } else {
            let latest = &self.slots[((pending - 1) % MAX_LINES as u64) as usize];
            push_line(&mut self.text, latest, Some(pending));
        }
        self.pending = 0;
        self.refreshed_at = Some(now);
        Some(&self.text)
    }
}

/// `PREFIX CLIENT: ACTION -> OUTCOME[ (REASON)][ (N agent actions since the last line)]`.
fn push_line(text: &mut String, a: &Activity, since: Option<u64>) {
    text.push_str(PREFIX);
    text.push_str(&a.client);
    text.push_str(": ");
    text.push_str(&a.action);
    text.push_str(" -> ");
    text.push_str(&a.outcome);
    if let Some(reason) = &a.reason {
        text.push_str(" (");
        text.push_str(reason);
        text.push(')');
    }
    if let Some(n) = since {
        // Writing into a `String` cannot fail.
        let _ = write!(text, " ({n} agent actions since the last line)");
    }
    text.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn activity(n: u64, reason: Option<&str>) -> Activity {
        Activity {
            client: format!("agent[{n}] via endpoint"),
            action: "document.text.insert".into(),
            outcome: if reason.is_some() { "refused" } else { "ok" }.into(),
            reason: reason.map(String::from),
        }
    }

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn an_idle_display_shows_a_notice_at_once() {
        let mut s = AgentStatus::default();
        assert_eq!(s.due_in(ms(0)), None);
        assert_eq!(s.refresh(ms(0)), None);
        s.record(&activity(1, Some("stale_revision")));
        assert_eq!(s.due_in(ms(5)), Some(Duration::ZERO));
        assert_eq!(
            s.refresh(ms(5)),
            Some(
                "jfgui-notepad: last agent action: agent[1] via endpoint: document.text.insert \
                 -> refused (stale_revision)\n"
            )
        );
        assert_eq!(s.due_in(ms(5)), None);
        // Long after, the display is idle again: the next one shows at once too.
        s.record(&activity(2, None));
        assert_eq!(s.due_in(ms(500)), Some(Duration::ZERO));
        assert_eq!(
            s.refresh(ms(500)),
            Some(
                "jfgui-notepad: last agent action: agent[2] via endpoint: document.text.insert -> ok\n"
            )
        );
    }

    #[test]
    fn notices_within_the_interval_wait_for_its_end_and_none_is_lost() {
        let mut s = AgentStatus::default();
        s.record(&activity(0, None));
        assert!(s.refresh(ms(1000)).is_some());
        for n in 1..=3 {
            s.record(&activity(n, None));
        }
        assert_eq!(s.due_in(ms(1030)), Some(ms(70)));
        assert_eq!(s.refresh(ms(1030)), None);
        let text = s.refresh(ms(1100)).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3, "{text}");
        for (n, line) in (1..=3).zip(&lines) {
            assert!(line.starts_with(&format!("{PREFIX}agent[{n}] via")), "{line}");
            assert!(line.ends_with("-> ok"), "{line}");
        }
        assert_eq!(s.due_in(ms(1100)), None);
    }

    #[test]
    fn more_than_max_lines_are_summed_up_in_one_line_naming_the_latest() {
        let mut s = AgentStatus::default();
        s.record(&activity(0, None));
        s.refresh(ms(0));
        for round in 0..3u64 {
            let count = MAX_LINES as u64 * 3 + round;
            for n in 0..count {
                s.record(&activity(n, (n % 2 == 1).then_some("why")));
            }
            let now = ms(200 * (round + 1));
            let text = s.refresh(now).unwrap().to_owned();
            let last = count - 1;
            let reason = if last % 2 == 1 { "refused (why)" } else { "ok" };
            assert_eq!(
                text,
                format!(
                    "{PREFIX}agent[{last}] via endpoint: document.text.insert -> {reason} \
                     ({count} agent actions since the last line)\n"
                )
            );
        }
        // Exactly MAX_LINES still get a line each, in order.
        for n in 0..MAX_LINES as u64 {
            s.record(&activity(n, None));
        }
        let text = s.refresh(ms(5000)).unwrap();
        assert_eq!(text.lines().count(), MAX_LINES);
        assert!(text.lines().last().unwrap().contains(&format!("agent[{}]", MAX_LINES - 1)));
    }
}
