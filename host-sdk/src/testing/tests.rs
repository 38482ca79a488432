//! The in-process checks against a small counter app, healthy and with one broken contract at
//! a time: each defect is reported as FAIL by the check that claims to catch it, naming the
//! action, and by nothing else.

use alloc::string::{String, ToString};
use alloc::vec;
use alloc::vec::Vec;
use core::cell::Cell;
use core::time::Duration;

use jfgui_proto::channel::ResourceInfo;
use jfgui_proto::{ActionError, ActionSpec, Map, Property, Schema, Value, schema};

use super::{Check, Level, Options, Report, Subject, check};
use crate::{
    Availability, Context, Dispatcher, Execution, Host, ResourceData, TaskTable, host_error,
};

const DOMAIN: &str = "counter";
const VIEW: &str = "render://view.png";
const BLOB: &str = "blob://data.bin";
/// Several chunks' worth, so the chunk sizes really have to add up.
const BLOB_LEN: usize = 20_000;

static ADD: Schema = Schema::Object {
    properties: &[Property {
        name: "by",
        schema: &Schema::Integer { min: Some(1), max: Some(100) },
        required: true,
    }],
    additional: false,
};
static VALUE: Schema = Schema::Object {
    properties: &[Property { name: "value", schema: &schema::INTEGER, required: true }],
    additional: false,
};
static RENDERED: Schema = Schema::Object {
    properties: &[
        Property { name: "uri", schema: &schema::STRING, required: true },
        Property { name: "mimeType", schema: &schema::STRING, required: true },
    ],
    additional: false,
};
static TASK: Schema = Schema::Object {
    properties: &[Property { name: "task", schema: &schema::STRING, required: true }],
    additional: false,
};

static ACTIONS: &[ActionSpec] = &[
    ActionSpec {
        transaction: Some(DOMAIN),
        ..ActionSpec::write("counter.add", "Add `by` (1 to 100) to the counter.")
            .schemas(&ADD, &VALUE)
    },
    ActionSpec::read("counter.get", "Read the counter's value.")
        .schemas(&schema::EMPTY_OBJECT, &VALUE),
    ActionSpec {
        transaction: Some(DOMAIN),
        ..ActionSpec::write("counter.export", "Export the counter as a task that can be cancelled.")
            .schemas(&schema::EMPTY_OBJECT, &TASK)
    },
    ActionSpec::read("ui.render", "Render the counter into the PNG resource render://view.png.")
        .schemas(&schema::EMPTY_OBJECT, &RENDERED),
];

/// One broken contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Defect {
    /// `counter.get` moves the revision.
    ReadMovesRevision,
    /// `availability()` applies a pending change, so a write refused as stale still changes
    /// the state (the only way a stale write can have effects behind host-sdk's dispatcher).
    AppliesBeforeRevisionCheck,
    /// `rollback_transaction` restores the value but not the revision.
    RollbackKeepsRevision,
    /// `counter.get` answers a string, which its output schema refuses.
    OutputViolatesSchema,
    /// `ui.render` names a resource that is not a PNG.
    RenderNotPng,
    /// The blob's chunks claim a `totalSize` larger than the bytes served.
    ChunksDoNotAddUp,
    /// The export task never honours a cancel request.
    IgnoresCancel,
}

#[derive(Debug)]
struct Counter {
    defect: Option<Defect>,
    /// When set, `state/inspect` also shows how often it was asked (presentation, not
    /// state: it changes while the revision stays).
    looks: Option<Cell<u64>>,
    value: Cell<i64>,
    revision: Cell<u64>,
    saved: Option<(i64, u64)>,
    exports: Vec<String>,
    next_export: u32,
    png: Vec<u8>,
    blob: Vec<u8>,
}

impl Counter {
    fn new(defect: Option<Defect>) -> Counter {
        let png = if defect == Some(Defect::RenderNotPng) {
            b"GIF89a, not a PNG".to_vec()
        } else {
            super::png::tests::tiny_png()
        };
        Counter {
            defect,
            looks: None,
            value: Cell::new(0),
            revision: Cell::new(1),
            saved: None,
            exports: Vec::new(),
            next_export: 1,
            png,
            blob: (0..BLOB_LEN).map(|i| i as u8).collect(),
        }
    }

    fn bump(&self, by: i64) {
        self.value.set(self.value.get() + by);
        self.revision.set(self.revision.get() + 1);
    }

    fn value(&self) -> Value {
        let mut m = Map::new();
        m.insert("value", self.value.get());
        Value::Object(m)
    }

    fn has(&self, defect: Defect) -> bool {
        self.defect == Some(defect)
    }
}

impl Host for Counter {
    fn actions(&self) -> &[ActionSpec] {
        ACTIONS
    }

    fn revision(&self) -> u64 {
        self.revision.get()
    }

    fn capabilities(&self) -> u64 {
        0
    }

    fn availability(&self, action: &ActionSpec) -> Availability {
        if self.has(Defect::AppliesBeforeRevisionCheck) && action.name == "counter.add" {
            self.bump(1);
        }
        Availability::Available
    }

    fn execute(
        &mut self,
        cx: &mut Context<'_>,
        action: &ActionSpec,
        input: &Value,
    ) -> Result<Execution, ActionError> {
        match action.name {
            "counter.add" => {
                self.bump(input.get("by").and_then(Value::as_i64).unwrap_or(0));
                Ok(Execution::Output(self.value()))
            }
            "counter.get" if self.has(Defect::OutputViolatesSchema) => {
                Ok(Execution::Output(Value::from("not an object")))
            }
            "counter.get" => {
                if self.has(Defect::ReadMovesRevision) {
                    self.revision.set(self.revision.get() + 1);
                }
                Ok(Execution::Output(self.value()))
            }
            "counter.export" => {
                let id = alloc::format!("export-{}", self.next_export);
                self.next_export += 1;
                cx.tasks().start(id.clone())?;
                self.exports.push(id.clone());
                Ok(Execution::Deferred(id))
            }
            "ui.render" => {
                let mut m = Map::new();
                m.insert("uri", VIEW);
                m.insert("mimeType", "image/png");
                Ok(Execution::Output(Value::Object(m)))
            }
            other => Err(host_error("unknown", other)),
        }
    }

    fn inspect(&mut self, _input: &Value) -> Result<Value, ActionError> {
        let mut state = self.value();
        if let (Some(looks), Value::Object(m)) = (&self.looks, &mut state) {
            looks.set(looks.get() + 1);
            m.insert("looks", looks.get());
        }
        Ok(state)
    }

    fn supports_transaction(&self, domain: &str) -> bool {
        domain == DOMAIN
    }

    fn begin_transaction(&mut self, _domains: &[&str]) -> Result<(), ActionError> {
        self.saved = Some((self.value.get(), self.revision.get()));
        Ok(())
    }

    fn commit_transaction(&mut self) {
        self.saved = None;
    }

    fn rollback_transaction(&mut self) {
        if let Some((value, revision)) = self.saved.take() {
            self.value.set(value);
            if !self.has(Defect::RollbackKeepsRevision) {
                self.revision.set(revision);
            }
        }
    }

    fn resources(&mut self) -> Vec<ResourceInfo> {
        let info = |uri: &str, mime: &str, size: usize| ResourceInfo {
            uri: uri.to_string(),
            name: uri.to_string(),
            mime_type: mime.to_string(),
            size: Some(size as u64),
        };
        vec![
            info(VIEW, "image/png", self.png.len()),
            info(BLOB, "application/octet-stream", BLOB_LEN),
        ]
    }

    fn read_resource(
        &mut self,
        uri: &str,
        offset: u64,
        limit: u32,
    ) -> Result<ResourceData, ActionError> {
        let (mime, bytes) = match uri {
            VIEW => ("image/png", &self.png),
            BLOB => ("application/octet-stream", &self.blob),
            _ => return Err(host_error("no_such_resource", uri)),
        };
        let start = (offset as usize).min(bytes.len());
        let end = start.saturating_add(limit as usize).min(bytes.len());
        let lie = if uri == BLOB && self.has(Defect::ChunksDoNotAddUp) { 100 } else { 0 };
        Ok(ResourceData {
            mime_type: mime.to_string(),
            total_size: bytes.len() as u64 + lie,
            bytes: bytes[start..end].to_vec(),
        })
    }

    fn tick(&mut self, tasks: &mut TaskTable) -> Option<Duration> {
        let honours = !self.has(Defect::IgnoresCancel);
        // A task the dispatcher discarded (inside a rolled-back batch) is gone from the table.
        self.exports.retain(|id| {
            if honours && tasks.is_cancel_requested(id) {
                let _ = tasks.cancelled(id);
            }
            tasks.state(id).is_some_and(|s| !s.is_final())
        });
        None
    }
}

fn run(defect: Option<Defect>) -> Report {
    check_counter(Counter::new(defect))
}

fn check_counter(mut app: Counter) -> Report {
    let mut dispatcher = Dispatcher::new(&app).unwrap();
    let options = Options { cancel_patience: Duration::from_millis(300), ..Options::mutate() };
    let report = check(&mut dispatcher, &mut app, &options);
    assert!(!dispatcher.is_enabled(), "the dispatcher is put back as it was");
    report
}

/// The FAIL findings as `(check, subject)`.
fn failures(report: &Report) -> Vec<(Check, String)> {
    report
        .failures()
        .map(|f| {
            let subject = match &f.subject {
                Subject::App => String::from("-"),
                Subject::Action(s) | Subject::Resource(s) => s.clone(),
            };
            (f.check, subject)
        })
        .collect()
}

fn assert_fails(defect: Defect, expected: &[(Check, &str)]) {
    let report = run(Some(defect));
    let expected: Vec<(Check, String)> =
        expected.iter().map(|(c, s)| (*c, String::from(*s))).collect();
    assert_eq!(failures(&report), expected, "{defect:?}:\n{report}");
}

#[test]
fn a_healthy_app_passes_every_check() {
    let report = run(None);
    assert!(report.passed(), "{report}");
    assert_eq!(report.count(Level::Warn), 0, "{report}");
    let checks: Vec<Check> = report.findings.iter().map(|f| f.check).collect();
    for c in [
        Check::Lint,
        Check::Inspect,
        Check::Read,
        Check::Render,
        Check::Resource,
        Check::StaleWrite,
        Check::InvalidWrite,
        Check::ValidWrite,
        Check::TaskCancel,
        Check::AtomicBatch,
    ] {
        assert!(checks.contains(&c), "{c:?} ran:\n{report}");
    }
    let batch = report.findings.iter().find(|f| f.check == Check::AtomicBatch).unwrap();
    assert!(
        batch.why.contains("counter.export (deferred"),
        "the app's own rollback ran: {}",
        batch.why
    );
}

#[test]
fn presentation_in_the_inspected_state_is_told_once_not_failed() {
    let report = check_counter(Counter { looks: Some(Cell::new(0)), ..Counter::new(None) });
    assert!(report.passed(), "{report}");
    let warned: Vec<&str> =
        report.findings.iter().filter(|f| f.level == Level::Warn).map(|f| f.why.as_str()).collect();
    assert_eq!(warned.len(), 1, "{report}");
    assert!(warned[0].contains("the state (looks) changed while the revision stayed"), "{report}");
}

#[test]
fn read_only_changes_nothing() {
    let mut app = Counter::new(None);
    let mut dispatcher = Dispatcher::new(&app).unwrap();
    let report = check(&mut dispatcher, &mut app, &Options::read_only());
    assert!(report.passed(), "{report}");
    assert_eq!((app.value.get(), app.revision.get()), (0, 1));
    assert!(report.findings.iter().all(|f| f.check != Check::ValidWrite));
}

#[test]
fn a_read_that_moves_the_revision() {
    assert_fails(Defect::ReadMovesRevision, &[(Check::Read, "counter.get")]);
}

#[test]
fn a_stale_write_with_effects() {
    assert_fails(Defect::AppliesBeforeRevisionCheck, &[(Check::StaleWrite, "counter.add")]);
}

#[test]
fn a_rollback_that_restores_the_state_but_not_the_revision() {
    assert_fails(Defect::RollbackKeepsRevision, &[(Check::AtomicBatch, "-")]);
    let report = run(Some(Defect::RollbackKeepsRevision));
    let batch = report.failures().next().unwrap();
    assert!(batch.why.contains("the state restored, but the revision moved"), "{}", batch.why);
}

#[test]
fn an_output_that_violates_its_schema() {
    assert_fails(Defect::OutputViolatesSchema, &[(Check::Read, "counter.get")]);
}

#[test]
fn a_render_that_is_not_a_png() {
    assert_fails(Defect::RenderNotPng, &[(Check::Render, "ui.render")]);
}

#[test]
fn chunks_that_do_not_add_up() {
    assert_fails(Defect::ChunksDoNotAddUp, &[(Check::Resource, BLOB)]);
}

#[test]
fn a_task_that_ignores_cancel() {
    assert_fails(Defect::IgnoresCancel, &[(Check::TaskCancel, "counter.export")]);
}
