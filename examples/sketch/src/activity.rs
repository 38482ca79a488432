//! What agents did, as the window shows it ("Last agent action (claude-code 1.2 via
//! endpoint): shape.add — 2 s ago").
//!
//! The one source is the daemon's `activity` notice (`Host::activity`): sent after each call
//! its audit log records, it names the client, which the app cannot know itself, and counts
//! exactly the calls the user can later find with `jfgui-agent log`.

use std::time::{Duration, Instant};

use jfgui_host_sdk::{Map, Value};

/// One agent call, as the daemon reported it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Activity {
    /// The action (`shape.add`), a batch (`batch(a, b)`) or `tasks/cancel ID`.
    pub action: String,
    /// Who called, in a few words.
    pub client: String,
    /// `ok`, `refused`, `failed` or `unknown`.
    pub outcome: String,
    /// The reason when not `ok`.
    pub reason: Option<String>,
    /// When the notice arrived.
    pub at: Instant,
}

impl Activity {
    /// The notice as the daemon sent it, arrived `at`.
    pub fn from_notice(notice: &jfgui_host_sdk::Activity, at: Instant) -> Activity {
        Activity {
            action: notice.action.clone(),
            client: notice.client.clone(),
            outcome: notice.outcome.clone(),
            reason: notice.reason.clone(),
            at,
        }
    }
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

    /// The most recent call for `state/inspect`: `{client, action, outcome, reason?, count}`.
    pub fn value(&self) -> Option<Value> {
        let a = self.last.as_ref()?;
        let mut m = Map::new();
        m.insert("client", a.client.as_str());
        m.insert("action", a.action.as_str());
        m.insert("outcome", a.outcome.as_str());
        if let Some(reason) = &a.reason {
            m.insert("reason", reason.as_str());
        }
        m.insert("count", self.count);
        Some(Value::Object(m))
    }

    /// The status line for `now`, and when it next changes (the age shown coarsens: seconds
    /// for a minute, then minutes for an hour, then it stops changing, so an idle window stops
    /// repainting for it).
    pub fn describe(&self, now: Instant) -> (String, Option<Duration>) {
        let Some(a) = &self.last else {
            return ("No agent action yet".to_string(), None);
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
        let how = match (a.outcome.as_str(), &a.reason) {
            ("ok", _) => String::new(),
            (outcome, Some(reason)) => format!(", {outcome}: {reason}"),
            (outcome, None) => format!(", {outcome}"),
        };
        (format!("Last agent action ({}): {}{how} — {ago}", a.client, a.action), next)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn activity(action: &str, outcome: &str, reason: Option<&str>, at: Instant) -> Activity {
        Activity {
            action: action.into(),
            client: "claude-code 1.2 via endpoint".into(),
            outcome: outcome.into(),
            reason: reason.map(Into::into),
            at,
        }
    }

    #[test]
    fn the_line_names_the_client_the_action_and_its_age() {
        let mut feed = ActivityFeed::default();
        let t0 = Instant::now();
        assert_eq!(feed.describe(t0), ("No agent action yet".to_string(), None));
        assert_eq!(feed.value(), None);
        feed.record(activity("shape.add", "ok", None, t0));
        let (line, next) = feed.describe(t0 + Duration::from_millis(2300));
        assert_eq!(line, "Last agent action (claude-code 1.2 via endpoint): shape.add — 2 s ago");
        assert_eq!(next, Some(Duration::from_millis(700)), "the label changes at 3 s");
        let (line, next) = feed.describe(t0 + Duration::from_secs(150));
        assert!(line.ends_with("shape.add — 2 min ago"), "{line}");
        assert_eq!(next, Some(Duration::from_secs(30)));
        assert_eq!(feed.describe(t0 + Duration::from_secs(4000)).1, None, "no more repaints");
        feed.record(activity("shape.delete", "failed", Some("no_such_shape"), t0));
        assert_eq!(
            feed.describe(t0).0,
            "Last agent action (claude-code 1.2 via endpoint): shape.delete, failed: no_such_shape — 0 s ago"
        );
        assert_eq!(feed.count(), 2);
        let v = feed.value().unwrap();
        assert_eq!(v.get("reason").and_then(Value::as_str), Some("no_such_shape"));
        assert_eq!(v.get("count").and_then(Value::as_u64), Some(2));
    }
}
