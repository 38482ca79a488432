//! What the host channel costs the UI thread: per frame, the time spent pumping the channel
//! (`Connector::poll` and re-arming the waker) beside the time of the whole `update` (building
//! the UI, pump included). Reported by `state/inspect` as `view.frames`, so the GUI suite can
//! print it next to the idle wake-ups.

use std::collections::VecDeque;
use std::time::Duration;

use jfgui_host_sdk::{Map, Value};

/// Frames whose timings are kept for the quantiles.
const KEPT: usize = 512;

/// Recent frame timings.
#[derive(Debug, Default)]
pub struct FrameStats {
    /// (pump, whole update) of the most recent frames.
    recent: VecDeque<(Duration, Duration)>,
    count: u64,
    pump_max: Duration,
}

impl FrameStats {
    /// Records one frame.
    pub fn record(&mut self, pump: Duration, update: Duration) {
        if self.recent.len() == KEPT {
            self.recent.pop_front();
        }
        self.recent.push_back((pump, update));
        self.count += 1;
        self.pump_max = self.pump_max.max(pump);
    }

    /// `{count, pumpMedianUs, pumpP99Us, pumpMaxUs, updateMedianUs}`, or `None` before the first
    /// frame.
    pub fn value(&self) -> Option<Value> {
        if self.recent.is_empty() {
            return None;
        }
        let mut pumps: Vec<Duration> = self.recent.iter().map(|f| f.0).collect();
        let mut updates: Vec<Duration> = self.recent.iter().map(|f| f.1).collect();
        pumps.sort();
        updates.sort();
        let at = |v: &[Duration], q: f64| v[((v.len() - 1) as f64 * q).round() as usize];
        let us = |d: Duration| d.as_micros() as u64;
        let mut m = Map::new();
        m.insert("count", self.count);
        m.insert("pumpMedianUs", us(at(&pumps, 0.5)));
        m.insert("pumpP99Us", us(at(&pumps, 0.99)));
        m.insert("pumpMaxUs", us(self.pump_max));
        m.insert("updateMedianUs", us(at(&updates, 0.5)));
        Some(Value::Object(m))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_over_the_kept_frames() {
        let mut s = FrameStats::default();
        assert!(s.value().is_none());
        for i in 1..=100u64 {
            s.record(Duration::from_micros(i), Duration::from_micros(10 * i));
        }
        let v = s.value().unwrap();
        let get = |k: &str| v.get(k).and_then(Value::as_u64);
        assert_eq!(get("count"), Some(100));
        assert_eq!(
            (get("pumpMedianUs"), get("pumpP99Us"), get("pumpMaxUs")),
            (Some(51), Some(99), Some(100))
        );
        assert_eq!(get("updateMedianUs"), Some(510));
        for _ in 0..KEPT {
            s.record(Duration::from_micros(1), Duration::from_micros(1));
        }
        let v = s.value().unwrap();
        assert_eq!(v.get("pumpMedianUs").and_then(Value::as_u64), Some(1), "old frames age out");
        assert_eq!(v.get("pumpMaxUs").and_then(Value::as_u64), Some(100), "the maximum stays");
    }
}
