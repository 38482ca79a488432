//! What a check run found: one [`Finding`] per check and subject (PASS, WARN or FAIL, one line
//! of why and one of how to fix), printed as a table for people and as JSON for scripts.

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use jfgui_proto::{Map, Value};

/// How a check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    /// The contract holds.
    Pass,
    /// Not a broken contract, but worth fixing, or a check that could not be made.
    Warn,
    /// A broken contract: an agent relying on it would corrupt the user's document.
    Fail,
}

impl Level {
    /// `PASS`, `WARN` or `FAIL`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Level::Pass => "PASS",
            Level::Warn => "WARN",
            Level::Fail => "FAIL",
        }
    }
}

/// Which check a finding belongs to; the names are stable (scripts match on them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Check {
    /// The declaration: description, input and output schemas, name.
    Lint,
    /// `state/inspect` twice answers the same revision.
    Inspect,
    /// A read action with a generated input leaves the revision unchanged.
    Read,
    /// `view/render` answers a decodable PNG.
    Render,
    /// A listed resource reads to its end in chunks whose sizes add up.
    Resource,
    /// A write with a stale `expectedRevision` is refused and changes nothing.
    StaleWrite,
    /// A write whose input violates its schema is refused and changes nothing.
    InvalidWrite,
    /// A write with a generated valid input moves the revision.
    ValidWrite,
    /// An atomic batch of a valid and an invalid call is refused with state and revision
    /// restored.
    AtomicBatch,
    /// A deferred action's task goes `cancelling` → `cancelled` when cancelled.
    TaskCancel,
}

impl Check {
    /// The check's name in tables and JSON, e.g. `stale_write`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Check::Lint => "lint",
            Check::Inspect => "inspect",
            Check::Read => "read",
            Check::Render => "render",
            Check::Resource => "resource",
            Check::StaleWrite => "stale_write",
            Check::InvalidWrite => "invalid_write",
            Check::ValidWrite => "valid_write",
            Check::AtomicBatch => "atomic_batch",
            Check::TaskCancel => "task_cancel",
        }
    }
}

/// What a finding is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Subject {
    /// The app as a whole (inspection, batches).
    App,
    /// One action, by name.
    Action(String),
    /// One resource, by URI.
    Resource(String),
}

/// One check's verdict on one subject.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// PASS, WARN or FAIL.
    pub level: Level,
    /// Which check.
    pub check: Check,
    /// What it checked.
    pub subject: Subject,
    /// What was seen, in one line.
    pub why: String,
    /// How to fix it, in one line (empty for a PASS).
    pub fix: String,
}

/// Every finding of one run, in the order the checks ran.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Report {
    /// Whether the state-changing checks ran.
    pub mutate: bool,
    /// The findings.
    pub findings: Vec<Finding>,
}

impl Report {
    /// How many findings have `level`.
    pub fn count(&self, level: Level) -> usize {
        self.findings.iter().filter(|f| f.level == level).count()
    }

    /// True when nothing FAILed (WARNs allowed): what `jfgui-agent check` exits 0 on.
    pub fn passed(&self) -> bool {
        self.count(Level::Fail) == 0
    }

    /// The FAIL findings.
    pub fn failures(&self) -> impl Iterator<Item = &Finding> {
        self.findings.iter().filter(|f| f.level == Level::Fail)
    }

    /// Panics with the table when anything FAILed; for an app's own tests.
    #[track_caller]
    pub fn assert_passed(&self) {
        assert!(self.passed(), "the app breaks a contract:\n{self}");
    }

    /// The report as JSON: `{"mutate", "passed", "counts": {"pass","warn","fail"},
    /// "findings": [{"level", "check", "action" | "resource", "why", "fix"}]}` (`action` or
    /// `resource` absent for findings about the whole app, `fix` absent for a PASS).
    pub fn to_json(&self) -> Value {
        let mut counts = Map::with_capacity(3);
        counts.insert("pass", self.count(Level::Pass) as u64);
        counts.insert("warn", self.count(Level::Warn) as u64);
        counts.insert("fail", self.count(Level::Fail) as u64);
        let findings = self
            .findings
            .iter()
            .map(|f| {
                let mut m = Map::with_capacity(5);
                m.insert("level", f.level.as_str());
                m.insert("check", f.check.as_str());
                match &f.subject {
                    Subject::App => {}
                    Subject::Action(name) => {
                        m.insert("action", name.as_str());
                    }
                    Subject::Resource(uri) => {
                        m.insert("resource", uri.as_str());
                    }
                }
                m.insert("why", f.why.as_str());
                if !f.fix.is_empty() {
                    m.insert("fix", f.fix.as_str());
                }
                Value::Object(m)
            })
            .collect::<Vec<_>>();
        let mut out = Map::with_capacity(4);
        out.insert("mutate", self.mutate);
        out.insert("passed", self.passed());
        out.insert("counts", counts);
        out.insert("findings", findings);
        Value::Object(out)
    }
}

/// Widest subject column before it is cut (long names and URIs would push every line off a
/// terminal).
const SUBJECT_WIDTH: usize = 32;

fn subject(s: &Subject) -> &str {
    match s {
        Subject::App => "-",
        Subject::Action(name) => name,
        Subject::Resource(uri) => uri,
    }
}

/// `s` cut to `width` characters with an ellipsis.
fn cut(s: &str, width: usize) -> String {
    match s.char_indices().nth(width.saturating_sub(1)) {
        Some((at, _)) if s.chars().count() > width => {
            let mut out = String::from(&s[..at]);
            out.push('…');
            out
        }
        _ => String::from(s),
    }
}

/// The table: `RESULT  CHECK  ACTION  WHY` (the fix after `→ fix:`), one line per finding,
/// then the counts.
impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let check_width = self.findings.iter().map(|x| x.check.as_str().len()).max().unwrap_or(5);
        let subject_width = self
            .findings
            .iter()
            .map(|x| subject(&x.subject).chars().count().min(SUBJECT_WIDTH))
            .chain([6])
            .max()
            .unwrap_or(6);
        writeln!(
            f,
            "{:<6}  {:<cw$}  {:<sw$}  WHY",
            "RESULT",
            "CHECK",
            "ACTION",
            cw = check_width,
            sw = subject_width
        )?;
        for x in &self.findings {
            let name = cut(subject(&x.subject), SUBJECT_WIDTH);
            write!(
                f,
                "{:<6}  {:<cw$}  {:<sw$}  {}",
                x.level.as_str(),
                x.check.as_str(),
                name,
                x.why,
                cw = check_width,
                sw = subject_width
            )?;
            if !x.fix.is_empty() {
                write!(f, " → fix: {}", x.fix)?;
            }
            writeln!(f)?;
        }
        write!(
            f,
            "{} PASS, {} WARN, {} FAIL{}",
            self.count(Level::Pass),
            self.count(Level::Warn),
            self.count(Level::Fail),
            if self.mutate { "" } else { " (read-only; --mutate adds the write checks)" }
        )
    }
}

#[cfg(test)]
mod tests {
    use alloc::format;
    use alloc::string::ToString;
    use alloc::vec;

    use super::*;

    fn report() -> Report {
        Report {
            mutate: true,
            findings: vec![
                Finding {
                    level: Level::Pass,
                    check: Check::Inspect,
                    subject: Subject::App,
                    why: "revision 3 both times".to_string(),
                    fix: String::new(),
                },
                Finding {
                    level: Level::Fail,
                    check: Check::StaleWrite,
                    subject: Subject::Action("counter.add".to_string()),
                    why: "applied".to_string(),
                    fix: "check it".to_string(),
                },
                Finding {
                    level: Level::Warn,
                    check: Check::Resource,
                    subject: Subject::Resource("blob://".to_string() + &"x".repeat(40)),
                    why: "big".to_string(),
                    fix: "smaller".to_string(),
                },
            ],
        }
    }

    #[test]
    fn the_table_has_one_line_per_finding_and_the_counts() {
        let text = format!("{}", report());
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 5, "{text}");
        assert!(lines[0].starts_with("RESULT"), "{text}");
        assert!(lines[1].starts_with("PASS    inspect      -"), "{text}");
        assert!(lines[2].contains("counter.add") && lines[2].ends_with("applied → fix: check it"));
        assert!(lines[3].contains("blob://xxx") && lines[3].contains('…'), "{text}");
        assert_eq!(lines[4], "1 PASS, 1 WARN, 1 FAIL");
        assert!(!report().passed());
    }

    #[test]
    fn json_names_the_subject_and_omits_an_empty_fix() {
        let json = report().to_json();
        assert_eq!(json.get("passed"), Some(&Value::Bool(false)));
        let findings = json.get("findings").and_then(Value::as_array).unwrap();
        assert_eq!(findings[0].get("action"), None);
        assert_eq!(findings[0].get("fix"), None);
        assert_eq!(findings[1].get("action").and_then(Value::as_str), Some("counter.add"));
        assert_eq!(findings[1].get("level").and_then(Value::as_str), Some("FAIL"));
        assert!(findings[2].get("resource").is_some());
        assert_eq!(json.get("counts").and_then(|c| c.get("fail")).and_then(Value::as_u64), Some(1));
    }
}
