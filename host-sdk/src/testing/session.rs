//! One run of the checks against a [`Target`]: the findings so far, and the probes every check
//! shares (a snapshot of revision and state, one action call, a resource read to its end).

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use base64::Engine as _;
use jfgui_proto::channel::{Call, CallResult, ExecuteCall, ReadResource};
use jfgui_proto::{Limits, Value};

use super::report::{Check, Finding, Level, Subject};
use super::target::{Reply, Target};

/// Bytes asked for per `resources/read`: small enough that a resource of a few KiB (a
/// rendered view) already takes several chunks, so their sizes are really added up.
pub(crate) const CHUNK: u32 = 8 * 1024;

/// Largest resource read to its end; a bigger one is not read (it would take a check minutes).
pub(crate) const MAX_CHECKED_RESOURCE: u64 = 64 * 1024 * 1024;

/// Longest excerpt of a value quoted in a finding.
const SHOWN: usize = 80;

/// The revision and the state the app shows (`state/inspect` with no input, when it answers).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Snapshot {
    pub(crate) revision: u64,
    pub(crate) state: Option<Value>,
}

/// What differs between two snapshots: the revisions, and which members of the state changed
/// (top-level members; the whole state as `""` when it is not an object), leaving out members
/// the run has seen change on refused calls (presentation: view geometry, an activity line).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Change {
    pub(crate) from: u64,
    pub(crate) to: u64,
    pub(crate) members: Vec<String>,
}

impl Change {
    pub(crate) fn revision_moved(&self) -> bool {
        self.from != self.to
    }

    pub(crate) fn is_none(&self) -> bool {
        !self.revision_moved() && self.members.is_empty()
    }

    /// The changed members, e.g. `canvas, text`.
    pub(crate) fn members(&self) -> String {
        let named: Vec<&str> =
            self.members.iter().map(String::as_str).filter(|m| !m.is_empty()).collect();
        named.join(", ")
    }

    /// In words, e.g. `the state (text) changed and the revision moved from 3 to 4`.
    pub(crate) fn describe(&self) -> String {
        let state = match self.members() {
            named if named.is_empty() => String::from("the state changed"),
            named => format!("the state ({named}) changed"),
        };
        match (self.members.is_empty(), self.revision_moved()) {
            (true, true) => format!("the revision moved from {} to {}", self.from, self.to),
            (false, true) => {
                format!("{state} and the revision moved from {} to {}", self.from, self.to)
            }
            (false, false) => format!("{state} while the revision stayed {}", self.from),
            (true, false) => String::from("nothing changed"),
        }
    }
}

/// The top-level members that differ between two states (`""` for the whole of a state that
/// is not an object).
fn differing(before: &Value, after: &Value) -> Vec<String> {
    match (before, after) {
        (Value::Object(a), Value::Object(b)) => {
            let mut out: Vec<String> = a
                .iter()
                .filter(|(k, v)| b.get(k) != Some(v))
                .map(|(k, _)| String::from(k))
                .collect();
            out.extend(b.keys().filter(|k| !a.contains_key(k)).map(String::from));
            out
        }
        (a, b) if a == b => Vec::new(),
        _ => alloc::vec![String::new()],
    }
}

/// Why a resource was not read to its end.
#[derive(Debug)]
pub(crate) enum ReadProblem {
    /// Bigger than [`MAX_CHECKED_RESOURCE`]: not read (not a broken contract).
    TooLarge(u64),
    /// The chunks do not add up, or a read failed: what was seen.
    Broken(String),
}

impl ReadProblem {
    /// In words.
    pub(crate) fn why(&self) -> String {
        match self {
            ReadProblem::TooLarge(size) => {
                format!("totalSize {size} is over the {MAX_CHECKED_RESOURCE} bytes a check reads")
            }
            ReadProblem::Broken(why) => why.clone(),
        }
    }
}

/// A resource read to its end.
#[derive(Debug)]
pub(crate) struct Download {
    pub(crate) mime_type: String,
    pub(crate) bytes: Vec<u8>,
    pub(crate) chunks: usize,
}

/// The run: the target, the findings in the order the checks made them, and the state members
/// taken for presentation.
pub(crate) struct Session<'t, T: Target> {
    pub(crate) target: &'t mut T,
    pub(crate) findings: Vec<Finding>,
    /// Members of the inspected state seen changing on a refused call at an unchanged
    /// revision: presentation (view geometry, frame counters, an activity line), not the
    /// document, so they are left out of every later comparison.
    pub(crate) presentation: Vec<String>,
}

impl<T: Target> Session<'_, T> {
    /// What changed from `before` to `after`, presentation left out.
    pub(crate) fn change(&self, before: &Snapshot, after: &Snapshot) -> Change {
        let members = match (&before.state, &after.state) {
            (Some(a), Some(b)) => {
                differing(a, b).into_iter().filter(|m| !self.presentation.contains(m)).collect()
            }
            _ => Vec::new(),
        };
        Change { from: before.revision, to: after.revision, members }
    }

    /// Takes the members `change` names for presentation from now on.
    pub(crate) fn learn_presentation(&mut self, change: &Change) {
        for member in &change.members {
            if !self.presentation.contains(member) {
                self.presentation.push(member.clone());
            }
        }
    }

    pub(crate) fn push(
        &mut self,
        level: Level,
        check: Check,
        subject: &Subject,
        why: impl Into<String>,
        fix: impl Into<String>,
    ) {
        let fix = if level == Level::Pass { String::new() } else { fix.into() };
        self.findings.push(Finding {
            level,
            check,
            subject: subject.clone(),
            why: why.into(),
            fix,
        });
    }

    pub(crate) fn pass(&mut self, check: Check, subject: &Subject, why: impl Into<String>) {
        self.push(Level::Pass, check, subject, why, "");
    }

    /// The revision alone (`agent/info` over the wire).
    pub(crate) fn revision(&mut self) -> Result<Reply<u64>, T::Error> {
        Ok(self.target.call(&Call::Revision {})?.and_then(|r| match r {
            CallResult::Revision { revision } => Ok(revision),
            other => Err(unexpected("a revision", &other)),
        }))
    }

    /// The state and revision; the state is left out when `state/inspect` refuses `{}`.
    pub(crate) fn snapshot(&mut self) -> Result<Reply<Snapshot>, T::Error> {
        let inspect = Call::Inspect { input: Value::Object(jfgui_proto::Map::new()) };
        if let Ok(CallResult::Inspected { revision, state }) = self.target.call(&inspect)? {
            return Ok(Ok(Snapshot { revision, state: Some(state) }));
        }
        Ok(self.revision()?.map(|revision| Snapshot { revision, state: None }))
    }

    /// `actions/execute`.
    pub(crate) fn execute(
        &mut self,
        action: &str,
        input: &Value,
        expected_revision: Option<u64>,
    ) -> Result<Reply<CallResult>, T::Error> {
        self.target.call(&Call::Execute(ExecuteCall {
            action: String::from(action),
            input: input.clone().into(),
            expected_revision,
            consent: None,
        }))
    }

    /// Reads `uri` from offset 0 to its end in [`CHUNK`]-byte chunks, checking that every
    /// chunk is where it was asked for, no longer than asked, and that sizes, `totalSize`,
    /// `eof` and the MIME type agree.
    pub(crate) fn read_all(
        &mut self,
        uri: &str,
    ) -> Result<Result<Download, ReadProblem>, T::Error> {
        let broken = |why: String| Ok(Err(ReadProblem::Broken(why)));
        let mut bytes: Vec<u8> = Vec::new();
        let mut first_total: Option<u64> = None;
        let mut mime: Option<String> = None;
        let mut chunks = 0usize;
        loop {
            let offset = bytes.len() as u64;
            let read = ReadResource { uri: String::from(uri), offset, limit: CHUNK };
            let chunk = match self.target.call(&Call::ReadResource(read))? {
                Ok(CallResult::Chunk(chunk)) => chunk,
                Ok(other) => return broken(unexpected("a chunk", &other).message),
                Err(e) => {
                    return broken(format!("resources/read at offset {offset} failed: {e}"));
                }
            };
            chunks += 1;
            if chunk.offset != offset {
                return broken(format!(
                    "asked for offset {offset}, got a chunk at offset {}",
                    chunk.offset
                ));
            }
            let Ok(data) = base64::engine::general_purpose::STANDARD.decode(&chunk.data) else {
                return broken(format!("the chunk at offset {offset} is not base64"));
            };
            if data.len() > CHUNK as usize {
                return broken(format!(
                    "asked for at most {CHUNK} bytes at offset {offset}, got {}",
                    data.len()
                ));
            }
            match first_total {
                None if chunk.total_size > MAX_CHECKED_RESOURCE => {
                    return Ok(Err(ReadProblem::TooLarge(chunk.total_size)));
                }
                None => first_total = Some(chunk.total_size),
                Some(t) if t != chunk.total_size => {
                    return broken(format!(
                        "totalSize changed from {t} to {} at offset {offset}",
                        chunk.total_size
                    ));
                }
                Some(_) => {}
            }
            match &mime {
                None => mime = Some(chunk.mime_type.clone()),
                Some(m) if *m != chunk.mime_type => {
                    return broken(format!(
                        "mimeType changed from {m} to {} at offset {offset}",
                        chunk.mime_type
                    ));
                }
                Some(_) => {}
            }
            let total = chunk.total_size;
            let end = offset + data.len() as u64;
            if end > total {
                return broken(format!(
                    "the chunk at offset {offset} ends at byte {end}, past totalSize {total}"
                ));
            }
            if chunk.eof != (end == total) {
                return broken(format!("eof is {} at byte {end} of totalSize {total}", chunk.eof));
            }
            bytes.extend_from_slice(&data);
            if chunk.eof {
                return Ok(Ok(Download { mime_type: chunk.mime_type, bytes, chunks }));
            }
            if data.is_empty() {
                return broken(format!(
                    "an empty chunk at offset {offset}, before the end (totalSize {total})"
                ));
            }
        }
    }
}

/// The error for an answer of the wrong kind (a bug in whatever answered).
pub(crate) fn unexpected(wanted: &str, got: &CallResult) -> jfgui_proto::ActionError {
    jfgui_proto::ActionError::new(
        jfgui_proto::Reason::InvalidReply,
        format!("expected {wanted}, got {}", kind(got)),
    )
}

fn kind(r: &CallResult) -> &'static str {
    match r {
        CallResult::Executed { .. } => "an output",
        CallResult::Deferred { .. } => "a task",
        CallResult::Batch { .. } => "batch results",
        CallResult::Revision { .. } => "a revision",
        CallResult::Inspected { .. } => "an inspection",
        CallResult::Resources { .. } => "a resource list",
        CallResult::Chunk(_) => "a chunk",
        CallResult::Rendered { .. } => "a rendering",
        CallResult::Task(_) => "a task state",
    }
}

/// `value` as compact JSON, cut to a length that fits in a finding.
pub(crate) fn show(value: &Value) -> String {
    let text = jfgui_proto::encode(value, &Limits::DEFAULT)
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_else(|_| format!("<{}>", value.type_name()));
    match text.char_indices().nth(SHOWN) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text,
    }
}
