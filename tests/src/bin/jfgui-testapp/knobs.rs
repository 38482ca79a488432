//! Fault knobs: parsed from `--fault ACTION:KNOB` flags, looked up per action.

use std::time::Duration;

/// One injected fault.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Knob {
    /// Never reply: the app's only thread blocks forever inside the call.
    Hang,
    /// Sleep this long before applying.
    Sleep(Duration),
    /// `abort()` before applying anything.
    AbortBeforeApply,
    /// Apply, persist, write the ledger line, then `abort()` before replying.
    AbortAfterApply,
    /// Inside an atomic batch: `abort()` once this many calls of the batch were applied.
    AbortInBatchAfter(u32),
    /// Fail with `host_error{code:"injected"}` when running as call N of a batch.
    FailInBatchAt(u32),
    /// Output `{"data": "x" × BYTES}` instead of the real output.
    HugeOutput(usize),
    /// Output a string, which breaks every action's output schema (an object).
    BadOutputSchema,
    /// Send the reply frame twice.
    ReplyTwice,
    /// Send the reply under an id the daemon never used.
    ReplyUnknownId,
    /// After a deferred reply, send a `running` update of its task with a result of BYTES.
    RunningResult(usize),
    /// A read that moves the revision (a broken read contract, for `check`).
    MovesRevision,
    /// The call's `expectedRevision` is replaced by the current revision before the
    /// dispatcher sees it, as by an app that never compares revisions: a stale write applies.
    IgnoresRevision,
    /// `job.run`: the task never honours a cancel request and runs for at least a minute, so
    /// there is a cancel to ignore.
    IgnoresCancel,
    /// `ui.render` (with `--render`): the resource it names holds bytes that are not a PNG.
    NotPng,
}

impl Knob {
    /// Parses `hang`, `sleep=MS`, `abort-in-batch-after=N`, ...
    pub fn parse(text: &str) -> Result<Knob, String> {
        let (name, value) = match text.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (text, None),
        };
        let number = |what: &str| -> Result<u64, String> {
            value
                .ok_or_else(|| format!("{name} needs ={what}"))?
                .parse()
                .map_err(|_| format!("{name}: {what} must be a non-negative integer"))
        };
        let knob = match name {
            "hang" => Knob::Hang,
            "sleep" => Knob::Sleep(Duration::from_millis(number("MS")?)),
            "abort-before-apply" => Knob::AbortBeforeApply,
            "abort-after-apply" => Knob::AbortAfterApply,
            "abort-in-batch-after" => Knob::AbortInBatchAfter(number("N")? as u32),
            "fail-in-batch-at" => Knob::FailInBatchAt(number("N")? as u32),
            "huge-output" => Knob::HugeOutput(number("BYTES")? as usize),
            "bad-output-schema" => Knob::BadOutputSchema,
            "reply-twice" => Knob::ReplyTwice,
            "reply-unknown-id" => Knob::ReplyUnknownId,
            "running-result" => Knob::RunningResult(number("BYTES")? as usize),
            "moves-revision" => Knob::MovesRevision,
            "ignores-revision" => Knob::IgnoresRevision,
            "ignores-cancel" => Knob::IgnoresCancel,
            "not-png" => Knob::NotPng,
            other => return Err(format!("unknown knob {other:?}")),
        };
        let takes_value = matches!(
            knob,
            Knob::Sleep(_)
                | Knob::AbortInBatchAfter(_)
                | Knob::FailInBatchAt(_)
                | Knob::HugeOutput(_)
                | Knob::RunningResult(_)
        );
        if value.is_some() && !takes_value {
            return Err(format!("{name} takes no value"));
        }
        Ok(knob)
    }
}

/// The knobs of every action.
#[derive(Debug, Clone, Default)]
pub struct Faults {
    entries: Vec<(String, Knob)>,
}

impl Faults {
    /// Adds `ACTION:KNOB`.
    pub fn add(&mut self, spec: &str) -> Result<(), String> {
        let (action, knob) = spec
            .split_once(':')
            .ok_or_else(|| format!("--fault takes ACTION:KNOB, not {spec:?}"))?;
        self.entries.push((action.to_string(), Knob::parse(knob)?));
        Ok(())
    }

    /// The knobs set for `action`, in flag order.
    pub fn of<'a>(&'a self, action: &'a str) -> impl Iterator<Item = Knob> + 'a {
        self.entries.iter().filter(move |(a, _)| a == action).map(|(_, k)| *k)
    }

    /// True when some action rewrites its reply frames (the transport must inspect them).
    pub fn rewrites_replies(&self) -> bool {
        self.entries.iter().any(|(_, k)| {
            matches!(k, Knob::ReplyTwice | Knob::ReplyUnknownId | Knob::RunningResult(_))
        })
    }

    /// True when some action rewrites its request frames (`ignores-revision`).
    pub fn rewrites_requests(&self) -> bool {
        self.entries.iter().any(|(_, k)| *k == Knob::IgnoresRevision)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_knob() {
        assert_eq!(Knob::parse("hang"), Ok(Knob::Hang));
        assert_eq!(Knob::parse("sleep=250"), Ok(Knob::Sleep(Duration::from_millis(250))));
        assert_eq!(Knob::parse("abort-in-batch-after=3"), Ok(Knob::AbortInBatchAfter(3)));
        assert_eq!(Knob::parse("fail-in-batch-at=4"), Ok(Knob::FailInBatchAt(4)));
        assert_eq!(Knob::parse("huge-output=1048577"), Ok(Knob::HugeOutput(1_048_577)));
        assert_eq!(Knob::parse("running-result=10"), Ok(Knob::RunningResult(10)));
        for k in [
            "abort-before-apply",
            "abort-after-apply",
            "bad-output-schema",
            "reply-twice",
            "reply-unknown-id",
            "moves-revision",
            "ignores-revision",
            "ignores-cancel",
            "not-png",
        ] {
            assert!(Knob::parse(k).is_ok(), "{k}");
        }
        assert!(Knob::parse("sleep").is_err());
        assert!(Knob::parse("hang=1").is_err());
        assert!(Knob::parse("explode").is_err());
        let mut f = Faults::default();
        f.add("counter.add:sleep=5").unwrap();
        f.add("counter.add:reply-twice").unwrap();
        assert_eq!(f.of("counter.add").count(), 2);
        assert!(f.rewrites_replies());
        assert!(f.add("no-colon").is_err());
    }
}
