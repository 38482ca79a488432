//! The test app's `Host`: a persisted counter and text with a `state` transaction domain, a
//! deferred job, optionally a rendered view (`--render`), and the per-action fault knobs (and
//! the broken contracts of `--broken-rollback` and `--blob-total-lies`) applied around each
//! call.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use jfgui_host_sdk::{
    ActionError, ActionSpec, Context, Execution, Host, Map, Origin, Property, Reason,
    ResourceBytes, ResourceData, ResourceInfo, Schema, TaskTable, Value, host_error, schema,
};

use crate::knobs::{Faults, Knob};
use crate::store::{Entry, Ledger, State};

/// The transaction domain of the two mutations.
const DOMAIN: &str = "state";

/// The resource `--blob BYTES` offers.
pub const BLOB_URI: &str = "blob://data.bin";
const BLOB_MIME: &str = "application/octet-stream";

/// `huge-output` above this many bytes is split into strings of this size.
const HUGE_CHUNK: usize = 64 * 1024;

/// The PNG `ui.render` names (`--render`).
pub const VIEW_URI: &str = "render://view.png";

/// How much larger than the blob `--blob-total-lies` says it is.
const BLOB_LIE: u64 = 1024;

/// How long an `ignores-cancel` job runs at least: long enough for a cancel to be ignored.
const STUBBORN_JOB: Duration = Duration::from_secs(60);

static TAG: Property = Property { name: "tag", schema: &schema::STRING, required: false };
static ADD: Schema = Schema::Object {
    properties: &[
        Property {
            name: "by",
            schema: &Schema::Integer { min: Some(-1000), max: Some(1000) },
            required: true,
        },
        TAG,
    ],
    additional: false,
};
static APPEND: Schema = Schema::Object {
    properties: &[
        Property {
            name: "text",
            schema: &Schema::String { max_length: Some(4096), one_of: None },
            required: true,
        },
        TAG,
    ],
    additional: false,
};
static RENDERED: Schema = Schema::Object {
    properties: &[
        Property { name: "uri", schema: &schema::STRING, required: true },
        Property { name: "mimeType", schema: &schema::STRING, required: true },
    ],
    additional: false,
};
static JOB: Schema = Schema::Object {
    properties: &[Property {
        name: "ms",
        schema: &Schema::Integer { min: Some(0), max: Some(600_000) },
        required: true,
    }],
    additional: false,
};

/// Every action; all outputs are objects (so `huge-output` stays schema-valid and
/// `bad-output-schema`, a string, never is).
pub static ACTIONS: &[ActionSpec] = &[
    ActionSpec {
        transaction: Some(DOMAIN),
        ..ActionSpec::write(
            "counter.add",
            "Add `by` to the counter. Optional `tag` names the call in the ledger.",
        )
        .schemas(&ADD, &schema::OBJECT)
    },
    ActionSpec {
        transaction: Some(DOMAIN),
        ..ActionSpec::write(
            "text.append",
            "Append `text`. Optional `tag` names the call in the ledger.",
        )
        .schemas(&APPEND, &schema::OBJECT)
    },
    ActionSpec::read("state.get", "Read the counter and the text.")
        .schemas(&schema::EMPTY_OBJECT, &schema::OBJECT),
    ActionSpec {
        transaction: Some(DOMAIN),
        ..ActionSpec::write(
            "job.run",
            "Start a task that completes after `ms` milliseconds unless cancelled.",
        )
        .schemas(&JOB, &schema::OBJECT)
    },
];

/// `ui.render`, registered with `--render`.
static RENDER: ActionSpec = ActionSpec::read(
    "ui.render",
    "Render the counter as the PNG resource render://view.png and name it.",
)
.schemas(&schema::EMPTY_OBJECT, &RENDERED);

/// The app.
#[derive(Debug)]
pub struct TestApp {
    state: State,
    state_path: Option<PathBuf>,
    ledger: Ledger,
    faults: Faults,
    transaction: Option<(State, Vec<Entry>)>,
    /// Running jobs: id, deadline, and whether it ignores cancel requests.
    jobs: Vec<(String, Instant, bool)>,
    next_job: u64,
    /// `--blob`: the bytes of [`BLOB_URI`] (none offered when empty).
    blob: Vec<u8>,
    /// `--blob-total-lies`: reads of the blob claim [`BLOB_LIE`] more bytes than they serve.
    blob_lies: bool,
    /// `--broken-rollback`: a rollback restores the counter and text but not the revision.
    broken_rollback: bool,
    /// `--render`: the bytes `ui.render` last produced.
    view: Option<Vec<u8>>,
    /// [`ACTIONS`], or those plus the hostile ones (`hostile.rs`).
    actions: &'static [ActionSpec],
}

impl TestApp {
    /// Loads the persisted state (if any) and opens the ledger.
    pub fn new(
        state_path: Option<PathBuf>,
        ledger: Ledger,
        faults: Faults,
    ) -> std::io::Result<TestApp> {
        let state = State::load(state_path.as_deref())?;
        Ok(TestApp {
            state,
            state_path,
            ledger,
            faults,
            transaction: None,
            jobs: Vec::new(),
            next_job: 1,
            blob: Vec::new(),
            blob_lies: false,
            broken_rollback: false,
            view: None,
            actions: ACTIONS,
        })
    }

    /// `--blob-total-lies`.
    pub fn with_blob_lies(mut self, lies: bool) -> TestApp {
        self.blob_lies = lies;
        self
    }

    /// `--broken-rollback`.
    pub fn with_broken_rollback(mut self, broken: bool) -> TestApp {
        self.broken_rollback = broken;
        self
    }

    /// `--render`: registers [`RENDER`] too. Leaked like the hostile registrations: the app
    /// registers once per process.
    pub fn with_render(mut self, render: bool) -> TestApp {
        if render {
            let mut all = self.actions.to_vec();
            all.push(RENDER);
            self.actions = Vec::leak(all);
        }
        self
    }

    /// The counter drawn as a small grey PNG (its shade follows the counter), or for
    /// `not-png` bytes that are not one.
    fn render(&self, not_png: bool) -> Result<Vec<u8>, ActionError> {
        if not_png {
            return Ok(b"GIF89a: a view that is not a PNG".to_vec());
        }
        let shade = self.state.counter.rem_euclid(256) as u8;
        let mut out = Vec::new();
        let mut encoder = png::Encoder::new(&mut out, 8, 8);
        encoder.set_color(png::ColorType::Grayscale);
        let encoded = encoder
            .write_header()
            .and_then(|mut w| w.write_image_data(&[shade; 64]).and_then(|()| w.finish()));
        encoded.map_err(|e| host_error("render", &format!("cannot encode the view: {e}")))?;
        Ok(out)
    }

    /// Offers `bytes` as the resource [`BLOB_URI`].
    pub fn with_blob(mut self, bytes: Vec<u8>) -> TestApp {
        self.blob = bytes;
        self
    }

    /// Registers `actions` instead of [`ACTIONS`] (a superset: the hostile registrations).
    pub fn with_actions(mut self, actions: &'static [ActionSpec]) -> TestApp {
        self.actions = actions;
        self
    }

    fn output(&self) -> Value {
        let mut m = Map::new();
        m.insert("counter", self.state.counter);
        m.insert("text", self.state.text.as_str());
        Value::Object(m)
    }

    /// Applies one mutation; outside a transaction it is persisted and journalled at once.
    fn mutate(&mut self, cx: &Context<'_>, action: &str, input: &Value) -> Result<(), ActionError> {
        let before = self.state.revision;
        match action {
            "counter.add" => {
                self.state.counter += input.get("by").and_then(Value::as_i64).unwrap_or(0)
            }
            _ => self.state.text.push_str(input.get("text").and_then(Value::as_str).unwrap_or("")),
        }
        self.state.revision += 1;
        let request =
            match (input.get("tag").and_then(Value::as_str), cx.origin(), cx.batch_index()) {
                (Some(tag), _, _) => tag.to_string(),
                (None, Origin::External { request }, Some(i)) => format!("d{request}.{i}"),
                (None, Origin::External { request }, None) => format!("d{request}"),
                (None, Origin::Local, _) => "local".to_string(),
            };
        let entry =
            Entry { request, action: action.to_string(), before, after: self.state.revision };
        match &mut self.transaction {
            Some((_, entries)) => entries.push(entry),
            None => self.persist(&[entry])?,
        }
        Ok(())
    }

    fn persist(&mut self, entries: &[Entry]) -> Result<(), ActionError> {
        let io = |e: std::io::Error| host_error("io", &format!("cannot persist: {e}"));
        if let Some(path) = &self.state_path {
            self.state.save(path).map_err(io)?;
        }
        self.ledger.write(entries, "committed").map_err(io)
    }
}

/// `{"data": "x" × bytes}`; one string stays within the 256 KiB string bound, so beyond
/// 64 KiB the x's come as an array of 64 KiB strings instead.
pub fn huge_value(bytes: usize) -> Value {
    let mut m = Map::new();
    if bytes <= HUGE_CHUNK {
        m.insert("data", "x".repeat(bytes));
    } else {
        let chunks = (0..bytes.div_ceil(HUGE_CHUNK))
            .map(|i| Value::from("x".repeat(HUGE_CHUNK.min(bytes - i * HUGE_CHUNK))))
            .collect();
        m.insert("data", Value::Array(chunks));
    }
    Value::Object(m)
}

fn hang() -> ! {
    loop {
        std::thread::park();
    }
}

impl Host for TestApp {
    fn actions(&self) -> &[ActionSpec] {
        self.actions
    }

    fn revision(&self) -> u64 {
        self.state.revision
    }

    fn capabilities(&self) -> u64 {
        0
    }

    fn execute(
        &mut self,
        cx: &mut Context<'_>,
        action: &ActionSpec,
        input: &Value,
    ) -> Result<Execution, ActionError> {
        let knobs: Vec<Knob> = self.faults.of(action.name).collect();
        for knob in &knobs {
            match *knob {
                Knob::Hang => hang(),
                Knob::Sleep(d) => std::thread::sleep(d),
                Knob::AbortBeforeApply => std::process::abort(),
                Knob::FailInBatchAt(n) if cx.batch_index() == Some(n) => {
                    return Err(host_error(
                        "injected",
                        &format!("injected failure at batch call {n}"),
                    ));
                }
                _ => {}
            }
        }
        let mut result = match action.name {
            "counter.add" | "text.append" => {
                self.mutate(cx, action.name, input)?;
                Execution::Output(self.output())
            }
            "state.get" => {
                if knobs.contains(&Knob::MovesRevision) {
                    self.state.revision += 1;
                }
                Execution::Output(self.output())
            }
            "job.run" => {
                let ms = input.get("ms").and_then(Value::as_u64).unwrap_or(0);
                let stubborn = knobs.contains(&Knob::IgnoresCancel);
                let mut runs = Duration::from_millis(ms);
                if stubborn {
                    runs = runs.max(STUBBORN_JOB);
                }
                let id = format!("job-{}", self.next_job);
                cx.tasks().start(id.clone())?;
                self.next_job += 1;
                self.jobs.push((id.clone(), Instant::now() + runs, stubborn));
                Execution::Deferred(id)
            }
            "ui.render" => {
                self.view = Some(self.render(knobs.contains(&Knob::NotPng))?);
                let mut m = Map::new();
                m.insert("uri", VIEW_URI);
                m.insert("mimeType", "image/png");
                Execution::Output(Value::Object(m))
            }
            // The hostile registrations' actions (`hostile.rs`) do nothing.
            _ => Execution::Output(Value::Object(Map::new())),
        };
        for knob in &knobs {
            match *knob {
                Knob::AbortAfterApply => std::process::abort(),
                Knob::AbortInBatchAfter(n)
                    if cx.in_transaction() && cx.batch_index().map(|i| i + 1) == Some(n) =>
                {
                    std::process::abort()
                }
                Knob::HugeOutput(bytes) => result = Execution::Output(huge_value(bytes)),
                Knob::BadOutputSchema => result = Execution::Output(Value::from("not an object")),
                _ => {}
            }
        }
        Ok(result)
    }

    fn supports_transaction(&self, domain: &str) -> bool {
        domain == DOMAIN
    }

    fn begin_transaction(&mut self, _domains: &[&str]) -> Result<(), ActionError> {
        self.transaction = Some((self.state.clone(), Vec::new()));
        Ok(())
    }

    fn commit_transaction(&mut self) {
        if let Some((_, entries)) = self.transaction.take()
            && let Err(e) = self.persist(&entries)
        {
            // The batch is already applied in memory; the harness sees the missing lines.
            eprintln!("jfgui-testapp: commit not persisted: {}", e.message);
        }
    }

    fn rollback_transaction(&mut self) {
        if let Some((saved, entries)) = self.transaction.take() {
            let revision = self.state.revision;
            self.state = saved;
            if self.broken_rollback {
                self.state.revision = revision;
            }
            if let Err(e) = self.ledger.write(&entries, "rolled-back") {
                eprintln!("jfgui-testapp: ledger: {e}");
            }
        }
    }

    fn resources(&mut self) -> Vec<ResourceInfo> {
        let mut out = Vec::new();
        if !self.blob.is_empty() {
            out.push(ResourceInfo {
                uri: BLOB_URI.into(),
                name: "data.bin".into(),
                mime_type: BLOB_MIME.into(),
                size: Some(self.blob.len() as u64),
            });
        }
        if let Some(view) = &self.view {
            out.push(ResourceInfo {
                uri: VIEW_URI.into(),
                name: "view.png".into(),
                mime_type: "image/png".into(),
                size: Some(view.len() as u64),
            });
        }
        out
    }

    fn resource(&mut self, uri: &str) -> Option<ResourceBytes<'_>> {
        match uri {
            BLOB_URI if !self.blob.is_empty() => {
                Some(ResourceBytes { mime_type: BLOB_MIME, bytes: &self.blob })
            }
            VIEW_URI => {
                self.view.as_deref().map(|b| ResourceBytes { mime_type: "image/png", bytes: b })
            }
            _ => None,
        }
    }

    fn read_resource(
        &mut self,
        uri: &str,
        offset: u64,
        limit: u32,
    ) -> Result<ResourceData, ActionError> {
        let lie = if uri == BLOB_URI && self.blob_lies { BLOB_LIE } else { 0 };
        let Some(res) = self.resource(uri) else {
            return Err(ActionError::new(
                Reason::Resource { resource: uri.into() },
                "no such resource",
            ));
        };
        let start = usize::try_from(offset).unwrap_or(usize::MAX).min(res.bytes.len());
        let end = start.saturating_add(limit as usize).min(res.bytes.len());
        Ok(ResourceData {
            mime_type: res.mime_type.into(),
            total_size: res.bytes.len() as u64 + lie,
            bytes: res.bytes[start..end].to_vec(),
        })
    }

    fn tick(&mut self, tasks: &mut TaskTable) -> Option<Duration> {
        let now = Instant::now();
        self.jobs.retain(|(id, due, stubborn)| {
            if tasks.state(id).is_none() {
                // Discarded: started inside an atomic batch that was rolled back.
                false
            } else if !*stubborn && tasks.is_cancel_requested(id) {
                let _ = tasks.cancelled(id);
                false
            } else if now >= *due {
                let _ = tasks.complete(id, Value::Object(Map::new()));
                false
            } else {
                true
            }
        });
        self.jobs.iter().map(|(_, due, _)| due.saturating_duration_since(now)).min()
    }
}

#[cfg(test)]
mod tests {
    use jfgui_host_sdk::{Dispatcher, ErrorClass, Reason};
    use jfgui_proto::channel::{BatchCall, Call, ExecuteCall};

    use super::*;

    fn temp(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("jfgui-testapp-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn add(by: i64, tag: &str, expected: Option<u64>) -> ExecuteCall {
        let mut m = Map::new();
        m.insert("by", by);
        m.insert("tag", tag);
        ExecuteCall {
            action: "counter.add".into(),
            input: Value::Object(m).into(),
            expected_revision: expected,
            consent: None,
        }
    }

    fn app(dir: &std::path::Path, faults: &[&str]) -> (Dispatcher, TestApp) {
        let mut f = Faults::default();
        for spec in faults {
            f.add(spec).unwrap();
        }
        let ledger = Ledger::open(Some(&dir.join("ledger"))).unwrap();
        let app = TestApp::new(Some(dir.join("state.json")), ledger, f).unwrap();
        let mut d = Dispatcher::new(&app).unwrap();
        d.set_enabled(true);
        (d, app)
    }

    #[test]
    fn ledger_and_state_follow_commits_and_rollbacks() {
        let dir = temp("ledger");
        let (mut d, mut a) = app(&dir, &["counter.add:fail-in-batch-at=2"]);
        d.execute(&mut a, 7, &add(5, "one", Some(0))).unwrap();
        let batch = |calls| {
            Call::Batch(BatchCall { calls, atomic: true, stop_on_error: true, consent: None })
        };
        d.handle(&mut a, 8, &batch(vec![add(1, "b0", Some(1)), add(1, "b1", Some(1))])).unwrap();
        let e = d
            .handle(
                &mut a,
                9,
                &batch(vec![add(1, "c0", Some(3)), add(1, "c1", Some(3)), add(1, "c2", Some(3))]),
            )
            .unwrap_err();
        assert!(matches!(e.reason, Reason::RolledBack { index: 2, .. }), "{e:?}");
        assert_eq!(
            std::fs::read_to_string(dir.join("ledger")).unwrap(),
            "one counter.add 0 1 committed\nb0 counter.add 1 2 committed\nb1 counter.add 2 3 committed\n\
             c0 counter.add 3 4 rolled-back\nc1 counter.add 4 5 rolled-back\n"
        );
        // A restart shows exactly what was committed.
        let (_, restarted) = app(&dir, &[]);
        assert_eq!((restarted.state.counter, restarted.state.revision), (7, 3));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn output_knobs() {
        let dir = temp("output");
        let (mut d, mut a) =
            app(&dir, &["state.get:huge-output=100", "text.append:bad-output-schema"]);
        let get = ExecuteCall {
            action: "state.get".into(),
            input: Value::Object(Map::new()).into(),
            expected_revision: None,
            consent: None,
        };
        match d.execute(&mut a, 1, &get).unwrap() {
            jfgui_proto::channel::CallResult::Executed { output, .. } => {
                assert_eq!(output.get("data").and_then(Value::as_str).map(str::len), Some(100));
            }
            other => panic!("{other:?}"),
        }
        let mut m = Map::new();
        m.insert("text", "x");
        let append = ExecuteCall {
            action: "text.append".into(),
            input: Value::Object(m).into(),
            expected_revision: Some(0),
            consent: None,
        };
        let e = d.execute(&mut a, 2, &append).unwrap_err();
        assert_eq!(e.class(), ErrorClass::Internal);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
