//! Dispatch overhead: a trivial action through the `Dispatcher` (every check it makes:
//! lookup, input schema, capabilities, availability, revision, output schema) against calling
//! the host's method directly, and one request through the sans-IO host channel (decode the
//! frame, dispatch, encode the reply frame). Run: `cargo bench -p jfgui-host-sdk --bench dispatch`.

use divan::Bencher;
use jfgui_host_sdk::channel::{HostChannel, Identity};
use jfgui_host_sdk::{
    ActionError, ActionSpec, Context, Dispatcher, Execution, Host, Map, Property, Schema, Value,
    schema,
};
use jfgui_proto::Limits;
use jfgui_proto::channel::{
    Call, ChannelLimits, DEFAULT_MAX_FRAME, DaemonMessage, ExecuteCall, Request, Welcome,
    encode_frame, frame_limits,
};

static INPUT: Schema = Schema::Object {
    properties: &[Property { name: "by", schema: &schema::INTEGER, required: true }],
    additional: false,
};

static ACTIONS: &[ActionSpec] = &[
    ActionSpec::read("noop", "Returns {}.").schemas(&schema::EMPTY_OBJECT, &schema::OBJECT),
    ActionSpec::write("counter.add", "Adds to a counter.").schemas(&INPUT, &schema::OBJECT),
];

#[derive(Debug, Default)]
struct Bench {
    counter: i64,
    revision: u64,
}

impl Bench {
    fn noop(&mut self) -> Value {
        Value::Object(Map::new())
    }

    fn add(&mut self, input: &Value) -> Value {
        self.counter += input.get("by").and_then(Value::as_i64).unwrap_or(0);
        self.revision += 1;
        Value::Object(Map::new())
    }
}

impl Host for Bench {
    fn actions(&self) -> &[ActionSpec] {
        ACTIONS
    }
    fn revision(&self) -> u64 {
        self.revision
    }
    fn capabilities(&self) -> u64 {
        0
    }
    fn execute(
        &mut self,
        _: &mut Context<'_>,
        action: &ActionSpec,
        input: &Value,
    ) -> Result<Execution, ActionError> {
        Ok(Execution::Output(match action.name {
            "noop" => self.noop(),
            _ => self.add(input),
        }))
    }
}

fn main() {
    divan::main();
}

fn add_input() -> Value {
    let mut m = Map::new();
    m.insert("by", 1u64);
    Value::Object(m)
}

#[divan::bench]
fn direct_noop(bencher: Bencher<'_, '_>) {
    let mut host = Bench::default();
    bencher.bench_local(|| divan::black_box(host.noop()));
}

#[divan::bench]
fn dispatched_noop(bencher: Bencher<'_, '_>) {
    let mut host = Bench::default();
    let mut d = Dispatcher::new(&host).unwrap();
    d.set_enabled(true);
    let call = ExecuteCall {
        action: "noop".into(),
        input: Value::Object(Map::new()).into(),
        expected_revision: None,
        consent: None,
    };
    bencher.bench_local(|| divan::black_box(d.execute(&mut host, 1, &call)));
}

#[divan::bench]
fn direct_write(bencher: Bencher<'_, '_>) {
    let mut host = Bench::default();
    let input = add_input();
    bencher.bench_local(|| divan::black_box(host.add(&input)));
}

#[divan::bench]
fn dispatched_write(bencher: Bencher<'_, '_>) {
    let mut host = Bench::default();
    let mut d = Dispatcher::new(&host).unwrap();
    d.set_enabled(true);
    let mut call = ExecuteCall {
        action: "counter.add".into(),
        input: add_input().into(),
        expected_revision: None,
        consent: None,
    };
    bencher.bench_local(|| {
        call.expected_revision = Some(host.revision);
        divan::black_box(d.execute(&mut host, 1, &call))
    });
}

#[divan::bench]
fn channel_roundtrip_noop(bencher: Bencher<'_, '_>) {
    let mut host = Bench::default();
    let mut d = Dispatcher::new(&host).unwrap();
    d.set_enabled(true);
    let mut e = HostChannel::new(d, Identity { display_name: "Bench".into(), pid: 1 }).unwrap();
    let limits = frame_limits(&Limits::DEFAULT, DEFAULT_MAX_FRAME);
    let frame = |m: &DaemonMessage| encode_frame(m, &limits, DEFAULT_MAX_FRAME).unwrap();
    let welcome = DaemonMessage::Welcome(Welcome {
        slug: "bench".into(),
        limits: ChannelLimits {
            max_frame_bytes: DEFAULT_MAX_FRAME as u32,
            max_message_bytes: 1 << 20,
        },
    });
    e.feed(&frame(&welcome)).unwrap();
    let n = e.pending_output().len();
    e.consume_output(n);
    let call = ExecuteCall {
        action: "noop".into(),
        input: Value::Object(Map::new()).into(),
        expected_revision: None,
        consent: None,
    };
    let request = frame(&DaemonMessage::Request(Request { id: 1, call: Call::Execute(call) }));
    bencher.bench_local(|| {
        e.feed(&request).unwrap();
        e.pump(&mut host, 1);
        let n = e.pending_output().len();
        e.consume_output(divan::black_box(n));
    });
}
