//! What agents did, as the window shows it ("Agent: shape.add — 2 s ago").
//!
//! The feed does not care where an [`Activity`] comes from. Today the app records each call it
//! executes for an external request (`Origin::External` in `Host::execute`); when the daemon
//! sends its `activity{client, action, outcome}` notice (the audit log's), that notice becomes
//! an [`Activity`] with the client filled in and goes through the same [`ActivityFeed::record`].

use std::time::{Duration, Instant};

/// How an agent's call ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// It ran.
    Ok,
    /// The app refused or could not apply it; the reason code.
    Failed(String),
}

/// One agent call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Activity {
    /// The action (`shape.add`) or protocol method (`state/inspect`).
    pub action: String,
    /// Who called, when the source knows.
    pub client: Option<String>,
    /// How it ended.
    pub outcome: Outcome,
    /// When it happened.
    pub at: Instant,
}

/// The last agent call and how many there were.
#[derive(Debug, Default)]
pub struct ActivityFeed {
    last: Option<Activity>,
    count: u64,
}

impl ActivityFeed {
    /// Records a call.
    pub fn record(&mut self, activity: Activity) {
        self.last = Some(activity);
        self.count += 1;
    }

    /// The most recent call.
    #[cfg(test)]
    pub fn last(&self) -> Option<&Activity> {
        self.last.as_ref()
    }

    /// Calls recorded so far.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The status line for `now`, and when it next changes (the age shown coarsens: seconds
    /// for a minute, then minutes for an hour, then it stops changing, so an idle window stops
    /// repainting for it).
    pub fn describe(&self, now: Instant) -> (String, Option<Duration>) {
        let Some(a) = &self.last else {
            return ("Agent: no calls yet".to_string(), None);
        };
        let age = now.saturating_duration_since(a.at);
        let secs = age.as_secs();
        let (ago, step) = match secs {
            0..60 => (format!("{secs} s ago"), Some(1)),
            60..3600 => (format!("{} min ago", secs / 60), Some(60)),
            _ => ("over an hour ago".to_string(), None),
        };
        let next = step.map(|s| {
            Duration::from_secs(s - secs % s) - Duration::from_nanos(u64::from(age.subsec_nanos()))
        });
        let who = a.client.as_deref().map(|c| format!(" ({c})")).unwrap_or_default();
        let failed = match &a.outcome {
            Outcome::Ok => String::new(),
            Outcome::Failed(code) => format!(", failed: {code}"),
        };
        (format!("Agent{who}: {}{failed} — {ago}", a.action), next)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_names_the_action_and_its_age() {
        let mut feed = ActivityFeed::default();
        let t0 = Instant::now();
        assert_eq!(feed.describe(t0), ("Agent: no calls yet".to_string(), None));
        feed.record(Activity {
            action: "shape.add".into(),
            client: None,
            outcome: Outcome::Ok,
            at: t0,
        });
        let (line, next) = feed.describe(t0 + Duration::from_millis(2300));
        assert_eq!(line, "Agent: shape.add — 2 s ago");
        assert_eq!(next, Some(Duration::from_millis(700)), "the label changes at 3 s");
        let (line, next) = feed.describe(t0 + Duration::from_secs(150));
        assert_eq!(
            (line.as_str(), next),
            ("Agent: shape.add — 2 min ago", Some(Duration::from_secs(30)))
        );
        assert_eq!(feed.describe(t0 + Duration::from_secs(4000)).1, None, "no more repaints");
        feed.record(Activity {
            action: "shape.delete".into(),
            client: Some("claude-code".into()),
            outcome: Outcome::Failed("no_such_shape".into()),
            at: t0,
        });
        assert_eq!(
            feed.describe(t0).0,
            "Agent (claude-code): shape.delete, failed: no_such_shape — 0 s ago"
        );
        assert_eq!(feed.count(), 2);
    }
}
