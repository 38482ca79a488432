//! Test doubles shared by the channel and connector tests: a small host and an in-memory
//! daemon peer that speaks the host channel with proto's messages.

use alloc::string::String;
use alloc::vec::Vec;

use jfgui_proto::channel::{
    AppMessage, Call, ChannelLimits, DEFAULT_MAX_FRAME, DaemonMessage, ExecuteCall, FrameDecoder,
    Request, TaskState, Welcome, decode_message, encode_frame, frame_limits,
};
use jfgui_proto::{ActionError, ActionSpec, Limits, Map, Property, Schema, Value, schema};

use crate::channel::{HostChannel, Identity};
use crate::{Context, Dispatcher, Execution, Host, TaskTable};

static BIG_INPUT: Schema = Schema::Object {
    properties: &[Property { name: "bytes", schema: &schema::UNSIGNED, required: true }],
    additional: false,
};

static ACTIONS: &[ActionSpec] = &[
    ActionSpec::read("echo", "Returns its input.").schemas(&schema::OBJECT, &schema::OBJECT),
    ActionSpec::write("bump", "Moves the revision."),
    ActionSpec::read("big", "Returns a string of the given size.")
        .schemas(&BIG_INPUT, &schema::OBJECT),
    ActionSpec::write("task.start", "Starts a task the next tick completes, unless cancelled."),
];

/// A host with a revision, an echo, a big output and tasks.
#[derive(Debug, Default)]
pub(crate) struct EchoHost {
    pub(crate) revision: u64,
    pub(crate) executed: usize,
    next_task: u32,
    /// The `activity` notices delivered, in order.
    pub(crate) activities: Vec<jfgui_proto::channel::Activity>,
    /// When set, a notice is "shown" later: `tick` asks to be called again this soon while
    /// one waits (`unshown`), as a UI that refreshes at a bounded rate does.
    pub(crate) show_activity_in: Option<core::time::Duration>,
    pub(crate) unshown: bool,
}

impl Host for EchoHost {
    fn actions(&self) -> &[ActionSpec] {
        ACTIONS
    }
    fn activity(&mut self, activity: &jfgui_proto::channel::Activity) {
        self.activities.push(activity.clone());
        self.unshown = self.show_activity_in.is_some();
    }
    fn revision(&self) -> u64 {
        self.revision
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
        self.executed += 1;
        match action.name {
            "echo" => Ok(Execution::Output(input.clone())),
            "bump" => {
                self.revision += 1;
                Ok(Execution::Output(Value::Object(Map::new())))
            }
            "big" => {
                let n = input.get("bytes").and_then(Value::as_u64).unwrap_or(0) as usize;
                let mut m = Map::new();
                m.insert("data", "x".repeat(n));
                Ok(Execution::Output(Value::Object(m)))
            }
            _ => {
                self.next_task += 1;
                let id = alloc::format!("task-{}", self.next_task);
                cx.tasks().start(id.clone())?;
                Ok(Execution::Deferred(id))
            }
        }
    }
    fn tick(&mut self, tasks: &mut TaskTable) -> Option<core::time::Duration> {
        let ids: Vec<String> = tasks.active_ids().map(String::from).collect();
        for id in ids {
            if tasks.state(&id) == Some(TaskState::Cancelling) {
                tasks.cancelled(&id).unwrap();
            }
        }
        self.show_activity_in.filter(|_| self.unshown)
    }
}

static ASKING: &[ActionSpec] =
    &[ActionSpec::write("wipe", "Moves the revision, once the user allows.")
        .titled("Wipe everything")
        .confirmed()];

/// A host whose one action asks the user first: it answers `answer_now` (or later) and
/// records what it was asked and which prompts were withdrawn.
#[derive(Debug, Default)]
pub(crate) struct AskingHost {
    pub(crate) revision: u64,
    pub(crate) wiped: usize,
    pub(crate) answer_now: Option<crate::Answer>,
    pub(crate) asked: Vec<crate::Confirmation>,
    pub(crate) withdrawn: Vec<String>,
}

impl Host for AskingHost {
    fn actions(&self) -> &[ActionSpec] {
        ASKING
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
        _: &ActionSpec,
        _: &Value,
    ) -> Result<Execution, ActionError> {
        self.wiped += 1;
        self.revision += 1;
        Ok(Execution::Output(Value::Object(Map::new())))
    }
    fn confirm(&mut self, confirmation: &crate::Confirmation) -> Option<crate::Answer> {
        self.asked.push(confirmation.clone());
        self.answer_now
    }
    fn withdraw_confirmation(&mut self, ticket: &str) {
        self.withdrawn.push(String::from(ticket));
    }
}

/// A host that only registers `.0`, for registration tests: nothing else about it matters.
pub(crate) struct Registers(pub(crate) &'static [ActionSpec]);

impl Host for Registers {
    fn actions(&self) -> &[ActionSpec] {
        self.0
    }
    fn revision(&self) -> u64 {
        0
    }
    fn capabilities(&self) -> u64 {
        0
    }
    fn execute(
        &mut self,
        _: &mut Context<'_>,
        _: &ActionSpec,
        _: &Value,
    ) -> Result<Execution, ActionError> {
        Ok(Execution::Output(Value::Null))
    }
}

pub(crate) fn channel<H: Host>(host: &H, enabled: bool) -> HostChannel {
    let mut d = Dispatcher::new(host).unwrap();
    d.set_enabled(enabled);
    HostChannel::new(d, Identity { display_name: "Echo — tést".into(), pid: 42 }).unwrap()
}

/// The daemon's side, in memory.
#[derive(Debug)]
pub(crate) struct Peer {
    decoder: FrameDecoder,
}

impl Peer {
    pub(crate) fn new() -> Peer {
        Peer { decoder: FrameDecoder::new(DEFAULT_MAX_FRAME) }
    }

    fn limits() -> Limits {
        frame_limits(&Limits::DEFAULT, DEFAULT_MAX_FRAME)
    }

    /// Decodes every whole frame in `bytes` (plus earlier leftovers).
    pub(crate) fn receive(&mut self, bytes: &[u8]) -> Vec<AppMessage> {
        self.decoder.feed(bytes);
        let mut out = Vec::new();
        while let Some(body) = self.decoder.next_frame().unwrap() {
            out.push(decode_message(&body, &Self::limits()).unwrap());
        }
        out
    }

    /// Takes the channel's output and decodes it.
    pub(crate) fn drain(&mut self, e: &mut HostChannel) -> Vec<AppMessage> {
        let bytes = e.pending_output().to_vec();
        e.consume_output(bytes.len());
        self.receive(&bytes)
    }

    pub(crate) fn frame(msg: &DaemonMessage) -> Vec<u8> {
        encode_frame(msg, &Self::limits(), DEFAULT_MAX_FRAME).unwrap()
    }

    pub(crate) fn welcome(max_message_bytes: u32) -> Vec<u8> {
        Self::frame(&DaemonMessage::Welcome(Welcome {
            slug: "echo-test".into(),
            limits: ChannelLimits { max_frame_bytes: DEFAULT_MAX_FRAME as u32, max_message_bytes },
        }))
    }

    pub(crate) fn request(id: u64, call: Call) -> Vec<u8> {
        Self::frame(&DaemonMessage::Request(Request { id, call }))
    }

    pub(crate) fn execute(id: u64, action: &str, input: Value, expected: Option<u64>) -> Vec<u8> {
        Self::request(
            id,
            Call::Execute(ExecuteCall {
                action: action.into(),
                input: input.into(),
                expected_revision: expected,
                consent: None,
            }),
        )
    }
}

pub(crate) fn obj(members: &[(&str, Value)]) -> Value {
    let mut m = Map::new();
    for (k, v) in members {
        m.insert(*k, v.clone());
    }
    Value::Object(m)
}

/// `{}`.
pub(crate) fn empty() -> Value {
    Value::Object(Map::new())
}

/// An `execute` of `action` without consent, as the daemon sends it.
pub(crate) fn call(action: &str, input: Value, expected: Option<u64>) -> ExecuteCall {
    ExecuteCall {
        action: action.into(),
        input: input.into(),
        expected_revision: expected,
        consent: None,
    }
}
