//! Contract tests of the dispatcher with an in-memory host that counts mutations.

use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

use jfgui_proto::channel::{
    BatchCall, BatchOutcome, Call, CallResult, ExecuteCall, ReadResource, TaskState,
};
use jfgui_proto::{
    ActionError, ActionSpec, ErrorClass, Map, Property, Reason, Schema, Value, schema,
};

use crate::test_support::{Registers, call, empty};
use crate::{
    Availability, Context, Dispatcher, Execution, Host, RegistrationError, ResourceBytes,
    TaskTable, host_error,
};

static ADD_INPUT: Schema = Schema::Object {
    properties: &[Property {
        name: "by",
        schema: &Schema::Integer { min: Some(-100), max: Some(100) },
        required: true,
    }],
    additional: false,
};
static VALUE_OUTPUT: Schema = Schema::Object {
    properties: &[Property { name: "value", schema: &schema::INTEGER, required: true }],
    additional: false,
};

const CAP_SPECIAL: u64 = 0b100;

static ACTIONS: &[ActionSpec] = &[
    ActionSpec {
        undo: true,
        transaction: Some("counter"),
        command_id: Some(1),
        ..ActionSpec::write("counter.add", "Add to the counter.").schemas(&ADD_INPUT, &VALUE_OUTPUT)
    },
    ActionSpec::read("counter.get", "Read the counter.")
        .schemas(&schema::EMPTY_OBJECT, &VALUE_OUTPUT),
    ActionSpec {
        capabilities: CAP_SPECIAL,
        transaction: Some("counter"),
        ..ActionSpec::write("counter.special", "Needs a capability.")
            .schemas(&ADD_INPUT, &VALUE_OUTPUT)
    },
    ActionSpec {
        transaction: Some("counter"),
        ..ActionSpec::write("counter.fail", "Always fails after changing the counter.")
    },
    ActionSpec::read("bad.output", "Returns output that breaks its schema.")
        .schemas(&schema::EMPTY_OBJECT, &VALUE_OUTPUT),
    ActionSpec {
        transaction: Some("counter"),
        ..ActionSpec::write("task.start", "Starts a task.")
    },
    ActionSpec {
        transaction: Some("other"),
        ..ActionSpec::write("other.write", "A domain without rollback.")
    },
    ActionSpec::write("plain.write", "A write without a domain."),
    ActionSpec::read("ui.render", "Renders."),
];

#[derive(Debug, Clone, PartialEq)]
struct State {
    value: i64,
    revision: u64,
    undo: Vec<i64>,
}

#[derive(Debug)]
struct Counter {
    state: State,
    saved: Option<State>,
    mutations: usize,
    calls: usize,
    begins: usize,
    modal: bool,
    tasks_started: u32,
}

impl Counter {
    fn new() -> Counter {
        Counter {
            state: State { value: 0, revision: 1, undo: Vec::new() },
            saved: None,
            mutations: 0,
            calls: 0,
            begins: 0,
            modal: false,
            tasks_started: 0,
        }
    }

    fn add(&mut self, by: i64, in_tx: bool) {
        if by == 0 {
            return; // no change, no new revision
        }
        if !in_tx {
            self.state.undo.push(self.state.value);
        }
        self.state.value += by;
        self.state.revision += 1;
        self.mutations += 1;
    }
}

fn value_output(v: i64) -> Value {
    let mut m = Map::new();
    m.insert("value", v);
    Value::Object(m)
}

impl Host for Counter {
    fn actions(&self) -> &[ActionSpec] {
        ACTIONS
    }
    fn revision(&self) -> u64 {
        self.state.revision
    }
    fn capabilities(&self) -> u64 {
        0b011
    }
    fn execute(
        &mut self,
        cx: &mut Context<'_>,
        action: &ActionSpec,
        input: &Value,
    ) -> Result<Execution, ActionError> {
        self.calls += 1;
        let by = input.get("by").and_then(Value::as_i64).unwrap_or(0);
        match action.name {
            "counter.add" | "counter.special" => {
                self.add(by, cx.in_transaction());
                Ok(Execution::Output(value_output(self.state.value)))
            }
            "counter.get" => Ok(Execution::Output(value_output(self.state.value))),
            "counter.fail" => {
                self.add(1000, cx.in_transaction());
                Err(host_error("boom", "the counter exploded"))
            }
            "bad.output" => Ok(Execution::Output(Value::from("not an object"))),
            "task.start" => {
                self.tasks_started += 1;
                let id = alloc::format!("t{}", self.tasks_started);
                cx.tasks().start(id.clone())?;
                Ok(Execution::Deferred(id))
            }
            "ui.render" => {
                let mut m = Map::new();
                m.insert("uri", "render://x.png");
                Ok(Execution::Output(Value::Object(m)))
            }
            _ => {
                self.add(1, cx.in_transaction());
                Ok(Execution::Output(Value::Object(Map::new())))
            }
        }
    }
    fn availability(&self, action: &ActionSpec) -> Availability {
        if self.modal && action.kind == jfgui_proto::ActionKind::Write {
            Availability::Unavailable {
                code: "modal_dialog_open".into(),
                explanation: "a dialog is open".into(),
            }
        } else {
            Availability::Available
        }
    }
    fn supports_transaction(&self, domain: &str) -> bool {
        domain == "counter"
    }
    fn begin_transaction(&mut self, domains: &[&str]) -> Result<(), ActionError> {
        assert_eq!(domains, ["counter"]);
        self.begins += 1;
        self.saved = Some(self.state.clone());
        Ok(())
    }
    fn commit_transaction(&mut self) {
        let before = self.saved.take().unwrap();
        if before.revision != self.state.revision {
            self.state.undo.push(before.value);
        }
    }
    fn rollback_transaction(&mut self) {
        self.state = self.saved.take().unwrap();
    }
    fn resource(&mut self, uri: &str) -> Option<ResourceBytes<'_>> {
        (uri == "mem://abc").then_some(ResourceBytes { mime_type: "text/plain", bytes: b"abcdefg" })
    }
    fn tick(&mut self, tasks: &mut TaskTable) -> Option<core::time::Duration> {
        let cancelling: Vec<String> = tasks
            .active_ids()
            .filter(|id| tasks.is_cancel_requested(id))
            .map(String::from)
            .collect();
        for id in cancelling {
            tasks.cancelled(&id).unwrap();
        }
        None
    }
}

fn add(by: i64) -> Value {
    let mut m = Map::new();
    m.insert("by", by);
    Value::Object(m)
}

fn enabled() -> (Dispatcher, Counter) {
    let host = Counter::new();
    let mut d = Dispatcher::new(&host).unwrap();
    d.set_enabled(true);
    (d, host)
}

fn reason(r: Result<CallResult, ActionError>) -> Reason {
    r.unwrap_err().reason
}

/// Runs `f` and asserts that it changed neither the state nor the revision nor called the host.
fn untouched(
    host: &mut Counter,
    d: &mut Dispatcher,
    f: impl FnOnce(&mut Dispatcher, &mut Counter) -> Reason,
) -> Reason {
    let before = host.state.clone();
    let calls = host.calls;
    let r = f(d, host);
    assert_eq!(host.state, before, "state changed for {r:?}");
    assert_eq!(host.calls, calls, "host was called for {r:?}");
    r
}

#[test]
fn disabled_rejects_immediately() {
    let mut host = Counter::new();
    let mut d = Dispatcher::new(&host).unwrap();
    assert!(!d.is_enabled(), "a dispatcher starts disabled");
    let r = untouched(&mut host, &mut d, |d, h| {
        reason(d.execute(h, 1, &call("counter.add", add(1), Some(1))))
    });
    assert_eq!(r, Reason::Disabled);
    assert_eq!(r.class(), ErrorClass::NotExecuted);
    // Disabled wins over every later check, e.g. an unknown action with bad input.
    let r = untouched(&mut host, &mut d, |d, h| {
        reason(d.execute(h, 1, &call("nope", Value::Null, None)))
    });
    assert_eq!(r, Reason::Disabled);
    for c in [
        Call::Revision {},
        Call::Inspect { input: empty() },
        Call::ListResources {},
        Call::Render { input: empty() },
        Call::CancelTask { id: "t".into() },
        Call::Batch(BatchCall {
            calls: vec![call("counter.get", empty(), None)],
            atomic: false,
            stop_on_error: true,
            consent: None,
        }),
    ] {
        assert_eq!(
            untouched(&mut host, &mut d, |d, h| reason(d.handle(h, 1, &c))),
            Reason::Disabled
        );
    }
    assert!(d.set_enabled(true));
    assert!(!d.set_enabled(true));
    assert!(d.execute(&mut host, 2, &call("counter.add", add(1), Some(1))).is_ok());
}

#[test]
fn check_order() {
    let (mut d, mut host) = enabled();
    // Unknown action before the input is looked at.
    let r = untouched(&mut host, &mut d, |d, h| {
        reason(d.execute(h, 1, &call("nope", Value::Null, None)))
    });
    assert_eq!(r, Reason::UnknownAction { action: "nope".into(), suggestions: Vec::new() });
    // Schema before capability: counter.special lacks a capability *and* has bad input.
    let r = untouched(&mut host, &mut d, |d, h| {
        reason(d.execute(h, 1, &call("counter.special", add(1000), Some(1))))
    });
    assert_eq!(r, Reason::SchemaViolation { pointer: "/by".into() });
    // Capability before availability.
    host.modal = true;
    let r = untouched(&mut host, &mut d, |d, h| {
        reason(d.execute(h, 1, &call("counter.special", add(1), None)))
    });
    assert_eq!(r, Reason::CapabilityMissing { missing: CAP_SPECIAL });
    // Availability before the revision rule.
    let r = untouched(&mut host, &mut d, |d, h| {
        reason(d.execute(h, 1, &call("counter.add", add(1), None)))
    });
    assert!(
        matches!(r, Reason::Unavailable { ref code, .. } if code == "modal_dialog_open"),
        "{r:?}"
    );
    host.modal = false;
    let r = untouched(&mut host, &mut d, |d, h| {
        reason(d.execute(h, 1, &call("counter.add", add(1), None)))
    });
    assert_eq!(r, Reason::RevisionRequired);
}

#[test]
fn stale_request_has_no_side_effects() {
    let (mut d, mut host) = enabled();
    d.execute(&mut host, 1, &call("counter.add", add(5), Some(1))).unwrap();
    assert_eq!(host.state.revision, 2);
    for stale in [1, 3, u64::MAX] {
        let r = untouched(&mut host, &mut d, |d, h| {
            reason(d.execute(h, 2, &call("counter.add", add(1), Some(stale))))
        });
        assert_eq!(r, Reason::StaleRevision { current_revision: 2 }, "older or newer");
    }
    assert_eq!(host.mutations, 1);
    // Reads ignore the revision unless they give one.
    assert!(d.execute(&mut host, 3, &call("counter.get", empty(), None)).is_ok());
    let r = untouched(&mut host, &mut d, |d, h| {
        reason(d.execute(h, 4, &call("counter.get", empty(), Some(1))))
    });
    assert_eq!(r, Reason::StaleRevision { current_revision: 2 });
    assert!(d.execute(&mut host, 5, &call("counter.get", empty(), Some(2))).is_ok());
}

#[test]
fn revision_is_read_from_the_host_after_the_call() {
    let (mut d, mut host) = enabled();
    match d.execute(&mut host, 1, &call("counter.add", add(2), Some(1))).unwrap() {
        CallResult::Executed { output, revision } => {
            assert_eq!(revision, 2);
            assert_eq!(output, value_output(2));
        }
        other => panic!("{other:?}"),
    }
    // No change of state, no new revision.
    match d.execute(&mut host, 2, &call("counter.add", add(0), Some(2))).unwrap() {
        CallResult::Executed { revision, .. } => assert_eq!(revision, 2),
        other => panic!("{other:?}"),
    }
}

#[test]
fn output_schema_violation_is_internal() {
    let (mut d, mut host) = enabled();
    let e = d.execute(&mut host, 1, &call("bad.output", empty(), None)).unwrap_err();
    assert_eq!(e.class(), ErrorClass::Internal);
    assert_eq!(e.reason, Reason::OutputSchema { action: "bad.output".into(), pointer: "".into() });
    assert!(e.message.contains("bad.output"));
}

#[test]
fn host_errors_pass_through() {
    let (mut d, mut host) = enabled();
    let e = d.execute(&mut host, 1, &call("counter.fail", empty(), Some(1))).unwrap_err();
    assert_eq!(e.reason, Reason::HostError { code: Some("boom".into()) });
    assert_eq!(e.class(), ErrorClass::Failed);
}

#[test]
fn duplicate_registration_names_the_duplicate() {
    static DUP: &[ActionSpec] =
        &[ActionSpec::read("a", "A"), ActionSpec::read("b", "B"), ActionSpec::read("a", "A")];
    let e = Dispatcher::new(&Registers(DUP)).unwrap_err();
    assert!(
        matches!(&e, RegistrationError::Spec(jfgui_proto::RegistrationError::DuplicateName(n)) if n == "a")
    );
    assert!(alloc::format!("{e}").contains("\"a\""));
}

#[test]
fn local_calls_skip_enabled_and_revision_but_not_the_rest() {
    let mut host = Counter::new();
    let mut d = Dispatcher::new(&host).unwrap();
    assert!(!d.is_enabled());
    assert!(d.execute_local(&mut host, "counter.add", &add(1)).is_ok());
    assert!(d.execute_command(&mut host, 1, &add(1)).is_ok());
    assert_eq!(host.state.value, 2);
    let r =
        untouched(&mut host, &mut d, |d, h| reason(d.execute_local(h, "counter.add", &add(999))));
    assert_eq!(r, Reason::SchemaViolation { pointer: "/by".into() });
    let r =
        untouched(&mut host, &mut d, |d, h| reason(d.execute_local(h, "counter.special", &add(1))));
    assert_eq!(r, Reason::CapabilityMissing { missing: CAP_SPECIAL });
    host.modal = true;
    let r = untouched(&mut host, &mut d, |d, h| reason(d.execute_command(h, 1, &add(1))));
    assert!(matches!(r, Reason::Unavailable { .. }));
    let r = untouched(&mut host, &mut d, |d, h| reason(d.execute_command(h, 99, &add(1))));
    assert!(matches!(r, Reason::UnknownAction { .. }));
    assert_eq!(
        reason(d.execute_local(&mut host, "bad.output", &empty())).class(),
        ErrorClass::Internal
    );
}

fn batch(calls: Vec<ExecuteCall>, atomic: bool, stop_on_error: bool) -> Call {
    Call::Batch(BatchCall { calls, atomic, stop_on_error, consent: None })
}

#[test]
fn atomic_batch_failure_leaves_state_and_revision_exactly_as_before() {
    let (mut d, mut host) = enabled();
    d.execute(&mut host, 1, &call("counter.add", add(3), Some(1))).unwrap();
    let before = host.state.clone();
    let b = batch(
        vec![
            call("counter.add", add(1), Some(2)),
            call("counter.add", add(2), Some(2)),
            call("counter.fail", empty(), Some(2)),
        ],
        true,
        true,
    );
    let e = d.handle(&mut host, 2, &b).unwrap_err();
    assert_eq!(e.class(), ErrorClass::Failed);
    match e.reason {
        Reason::RolledBack { index, cause } => {
            assert_eq!(index, 2);
            assert_eq!(cause.reason, Reason::HostError { code: Some("boom".into()) });
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(host.state, before, "value, revision and undo history restored");
    assert_eq!(host.begins, 1);
}

#[test]
fn one_undo_step_per_committed_atomic_batch() {
    let (mut d, mut host) = enabled();
    let b = batch(
        vec![
            call("counter.add", add(1), Some(1)),
            call("counter.add", add(2), Some(1)),
            call("counter.get", empty(), None),
        ],
        true,
        true,
    );
    match d.handle(&mut host, 1, &b).unwrap() {
        CallResult::Batch { results, revision } => {
            assert_eq!(results.len(), 3);
            assert_eq!(results[2].outcome, BatchOutcome::Output(value_output(3)));
            assert_eq!(revision, host.state.revision);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(host.state.value, 3);
    assert_eq!(host.state.undo, vec![0], "one undo step for the whole batch");
}

#[test]
fn atomic_preflight_runs_before_begin() {
    let (mut d, mut host) = enabled();
    let cases: Vec<(Vec<ExecuteCall>, u32, &str)> = vec![
        (
            vec![call("counter.add", add(1), Some(1)), call("counter.add", add(1), Some(7))],
            1,
            "stale_revision",
        ),
        (
            vec![call("counter.add", add(1), Some(1)), call("counter.add", add(1), None)],
            1,
            "revision_required",
        ),
        (
            vec![call("counter.add", add(1), Some(1)), call("nope", empty(), None)],
            1,
            "unknown_action",
        ),
        (vec![call("counter.add", add(500), Some(1))], 0, "schema_violation"),
        (
            vec![call("counter.add", add(1), Some(1)), call("counter.special", add(1), Some(1))],
            1,
            "capability_missing",
        ),
        (
            vec![call("counter.add", add(1), Some(1)), call("other.write", empty(), Some(1))],
            1,
            "transaction_unsupported",
        ),
        (vec![call("plain.write", empty(), Some(1))], 0, "transaction_unsupported"),
    ];
    for (calls, want_index, want) in cases {
        let e =
            untouched(&mut host, &mut d, |d, h| reason(d.handle(h, 1, &batch(calls, true, true))));
        match e {
            Reason::BatchPreflight { index, cause } => {
                assert_eq!((index, cause.reason.as_str()), (want_index, want));
            }
            other => panic!("{other:?}"),
        }
    }
    host.modal = true;
    let e = untouched(&mut host, &mut d, |d, h| {
        reason(d.handle(h, 1, &batch(vec![call("counter.add", add(1), Some(1))], true, true)))
    });
    assert!(
        matches!(e, Reason::BatchPreflight { index: 0, ref cause } if cause.reason.as_str() == "unavailable")
    );
    assert_eq!(host.begins, 0, "begin_transaction never called");
}

#[test]
fn atomic_revisions_refer_to_the_initial_state() {
    let (mut d, mut host) = enabled();
    let b = batch(
        vec![call("counter.add", add(1), Some(1)), call("counter.add", add(1), Some(1))],
        true,
        true,
    );
    assert!(d.handle(&mut host, 1, &b).is_ok());
    assert_eq!(host.state.value, 2);
}

#[test]
fn deferred_inside_atomic_rolls_back() {
    let (mut d, mut host) = enabled();
    let before = host.state.clone();
    let b = batch(
        vec![call("counter.add", add(1), Some(1)), call("task.start", empty(), Some(1))],
        true,
        true,
    );
    let e = d.handle(&mut host, 1, &b).unwrap_err();
    match e.reason {
        Reason::RolledBack { index: 1, cause } => {
            assert_eq!(cause.reason, Reason::DeferredInAtomic)
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(host.state, before);
    assert_eq!(d.tasks().active_len(), 0, "the task of a rolled-back call is forgotten");
    assert!(d.tasks_mut().take_events().is_empty(), "and never reported");
}

#[test]
fn sequential_batch_checks_each_call_when_it_runs() {
    let (mut d, mut host) = enabled();
    let calls = vec![
        call("counter.add", add(1), Some(1)),
        call("counter.add", add(1), Some(1)), // stale by now: the first call moved the revision
        call("counter.add", add(1), Some(2)),
    ];
    match d.handle(&mut host, 1, &batch(calls.clone(), false, true)).unwrap() {
        CallResult::Batch { results, revision } => {
            assert_eq!(results.len(), 2, "stops at the first error");
            assert!(matches!(
                &results[1].outcome,
                BatchOutcome::Error(e) if e.reason == Reason::StaleRevision { current_revision: 2 }
            ));
            assert_eq!(revision, 2);
        }
        other => panic!("{other:?}"),
    }
    let (mut d, mut host) = enabled();
    match d.handle(&mut host, 1, &batch(calls, false, false)).unwrap() {
        CallResult::Batch { results, revision } => {
            assert_eq!(results.len(), 3, "stopOnError:false continues");
            assert!(matches!(results[2].outcome, BatchOutcome::Output(_)));
            assert_eq!(revision, 3);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn batch_length_is_bounded() {
    let (mut d, mut host) = enabled();
    for n in [0, crate::MAX_BATCH_CALLS + 1] {
        let calls = vec![call("counter.get", empty(), None); n];
        let r =
            untouched(&mut host, &mut d, |d, h| reason(d.handle(h, 1, &batch(calls, false, true))));
        assert_eq!(r, Reason::SchemaViolation { pointer: "/calls".into() });
    }
    let calls = vec![call("counter.get", empty(), None); crate::MAX_BATCH_CALLS];
    assert!(d.handle(&mut host, 1, &batch(calls, true, true)).is_ok());
}

#[test]
fn deferred_task_lifecycle() {
    let (mut d, mut host) = enabled();
    let task = match d.execute(&mut host, 1, &call("task.start", empty(), Some(1))).unwrap() {
        CallResult::Deferred { task, .. } => task,
        other => panic!("{other:?}"),
    };
    assert_eq!(task.state, TaskState::Running);
    assert!(d.tasks_mut().take_events().is_empty(), "the reply carries the creation");
    match d.handle(&mut host, 2, &Call::CancelTask { id: task.id.clone() }).unwrap() {
        CallResult::Task(t) => assert_eq!(t.state, TaskState::Cancelling),
        other => panic!("{other:?}"),
    }
    d.tick(&mut host);
    assert_eq!(d.tasks().state(&task.id), Some(TaskState::Cancelled));
    let events = d.tasks_mut().take_events();
    assert_eq!(events.last().unwrap().state, TaskState::Cancelled);
    let e = d.handle(&mut host, 3, &Call::CancelTask { id: "nope".into() }).unwrap_err();
    assert_eq!(e.reason, Reason::Task { task: "nope".into() });
    assert_eq!(e.class(), ErrorClass::NotFound);
}

#[test]
fn render_inspect_and_resources() {
    let (mut d, mut host) = enabled();
    match d.handle(&mut host, 1, &Call::Render { input: empty() }).unwrap() {
        CallResult::Rendered { output, revision } => {
            assert_eq!(output.get("uri").and_then(Value::as_str), Some("render://x.png"));
            assert_eq!(revision, 1);
        }
        other => panic!("{other:?}"),
    }
    match d.handle(&mut host, 2, &Call::Inspect { input: empty() }).unwrap() {
        CallResult::Inspected { revision, state } => {
            assert_eq!((revision, state), (1, empty()));
        }
        other => panic!("{other:?}"),
    }
    let read =
        |offset, limit| Call::ReadResource(ReadResource { uri: "mem://abc".into(), offset, limit });
    match d.handle(&mut host, 3, &read(2, 3)).unwrap() {
        CallResult::Chunk(c) => {
            assert_eq!(
                (c.data.as_str(), c.total_size, c.eof, c.mime_type.as_str()),
                ("Y2Rl", 7, false, "text/plain")
            );
        }
        other => panic!("{other:?}"),
    }
    match d.handle(&mut host, 4, &read(5, 100)).unwrap() {
        CallResult::Chunk(c) => assert_eq!((c.data.as_str(), c.eof), ("Zmc=", true)),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        reason(d.handle(&mut host, 5, &read(0, 0))),
        Reason::SchemaViolation { pointer: "/limit".into() }
    );
    let missing = Call::ReadResource(ReadResource { uri: "mem://zz".into(), offset: 0, limit: 1 });
    assert_eq!(reason(d.handle(&mut host, 6, &missing)).class(), ErrorClass::NotFound);
}
