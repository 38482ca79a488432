//! The browser bridge's app side, sans-IO: the bridge's JSON bodies in and out
//! (`docs/PROTOCOL.md`, "The browser bridge"), with the same [`Dispatcher`] behind them as on
//! a socket. Whoever does the HTTP (a browser's `fetch`, through a small JavaScript loop)
//! posts [`BridgeChannel::connect_body`] to `/connect`, gives the answer to
//! [`BridgeChannel::connected`] and every `/poll` answer to [`BridgeChannel::handle_poll`],
//! and posts each [`Post`] that [`BridgeChannel::next_post`] hands out, in order.
//!
//! Bodies are strict JSON throughout, so ids and revisions keep their exact value even where
//! the transport's own JSON would turn them into floats: the transport only moves bytes.
//!
//! With the `web` feature, `bridge::web` holds the wasm exports around an endpoint that the
//! `jfgui-web-host` npm package's fetch loop drives.

use alloc::collections::VecDeque;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::fmt;
use core::time::Duration;

use jfgui_proto::channel::{
    AppMessage, Bye, CHANNEL_VERSION, Call, DEFAULT_MAX_FRAME, EnabledState, Hello, Outcome,
    TaskSnapshot, TaskState, Withdraw, frame_limits,
};
use jfgui_proto::{ActionError, Limits, Map, Reason, Value};

use crate::channel::Identity;
use crate::{Dispatcher, Host};

#[cfg(feature = "web")]
pub mod web;

/// Where a [`Post`] goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PostRoute {
    /// `POST /result`: the answer to one delivered request.
    Result,
    /// `POST /message`: a task update, an enable/disable, or `bye`.
    Message,
}

impl PostRoute {
    /// The path.
    pub fn path(self) -> &'static str {
        match self {
            PostRoute::Result => "/result",
            PostRoute::Message => "/message",
        }
    }
}

/// One body to post, in the order given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Post {
    /// The route.
    pub route: PostRoute,
    /// The JSON body.
    pub body: Vec<u8>,
}

/// A bridge answer that is not what the wire says; the tab should disconnect.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BridgeError {
    /// Not strict JSON within the bounds.
    Json(String),
    /// JSON, but not the object the wire defines (what was wrong).
    Shape(&'static str),
    /// A channel version other than ours.
    ChannelVersion(u64),
}

impl fmt::Display for BridgeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BridgeError::Json(e) => write!(f, "the bridge's answer is not strict JSON: {e}"),
            BridgeError::Shape(what) => write!(f, "unexpected answer from the bridge: {what}"),
            BridgeError::ChannelVersion(v) => {
                write!(f, "the bridge speaks channel version {v}, not {CHANNEL_VERSION}")
            }
        }
    }
}

/// The app's end of the bridge. See the module docs.
#[derive(Debug)]
pub struct BridgeChannel {
    dispatcher: Dispatcher,
    identity: Identity,
    client: Option<String>,
    /// The enabled state the last `/connect` body announced: a switch while `/connect` is on
    /// its way is told once the answer is in.
    announced: bool,
    max_message: usize,
    outbox: VecDeque<Post>,
    /// Set by a `bye` from the daemon, or our own.
    closed: Option<String>,
}

/// JSON bounds of what the bridge sends: a poll answer holds up to 8 requests of a frame each.
fn answer_limits() -> Limits {
    let frame = frame_limits(&Limits::DEFAULT, DEFAULT_MAX_FRAME);
    Limits {
        max_bytes: 9 * DEFAULT_MAX_FRAME,
        max_depth: frame.max_depth + 3,
        max_values: 8 * frame.max_values + 64,
        ..frame
    }
}

/// Bounds for encoding our own bodies (the byte bound is checked separately).
fn body_limits() -> Limits {
    Limits { max_bytes: usize::MAX, ..frame_limits(&Limits::DEFAULT, DEFAULT_MAX_FRAME) }
}

fn encode(value: &Map) -> Vec<u8> {
    // Our own values within the frame bounds: only the byte size can exceed, and it is
    // unbounded here.
    jfgui_proto::encode(&Value::Object(value.clone()), &body_limits()).unwrap_or_default()
}

/// A wire type as a value (our own types always map; `null` would only hide a bug).
macro_rules! value {
    ($e:expr) => {
        jfgui_proto::to_value($e).unwrap_or(Value::Null)
    };
}

impl BridgeChannel {
    /// A bridge channel for `dispatcher`, not yet connected.
    pub fn new(dispatcher: Dispatcher, identity: Identity) -> BridgeChannel {
        BridgeChannel {
            dispatcher,
            identity,
            client: None,
            announced: false,
            max_message: Limits::DEFAULT.max_bytes,
            outbox: VecDeque::new(),
            closed: None,
        }
    }

    /// The dispatcher (for `execute_local`, tasks).
    pub fn dispatcher(&self) -> &Dispatcher {
        &self.dispatcher
    }

    /// The dispatcher, mutably. Enable and disable through [`BridgeChannel::set_enabled`] so
    /// the daemon is told.
    pub fn dispatcher_mut(&mut self) -> &mut Dispatcher {
        &mut self.dispatcher
    }

    /// The `client` id from `/connect`, once connected.
    pub fn client(&self) -> Option<&str> {
        self.client.as_deref()
    }

    /// Why the link ended (`bye` either way), if it did.
    pub fn closed(&self) -> Option<&str> {
        self.closed.as_deref()
    }

    /// The `/connect` body: `{"app": {"hello": ..., "actions": [...]}}` with the current
    /// enabled state. Starts a new link: anything not yet posted is forgotten.
    pub fn connect_body(&mut self) -> Vec<u8> {
        self.client = None;
        self.closed = None;
        self.outbox.clear();
        // The old link's callers are gone: nothing that waited for the user runs.
        self.dispatcher.abandon_confirmations();
        self.dispatcher.tasks_mut().take_events();
        self.announced = self.dispatcher.is_enabled();
        let hello = Hello {
            channel_version: CHANNEL_VERSION,
            display_name: self.identity.display_name.clone(),
            pid: self.identity.pid,
            enabled: self.announced,
            // The bridge's poll items carry no `activity` notices.
            activity: false,
        };
        // Names were validated when the dispatcher was built, so `info` cannot fail here.
        let actions: Vec<Value> = self
            .dispatcher
            .actions()
            .iter()
            .filter_map(|s| s.info().ok())
            .map(|i| value!(&i))
            .collect();
        let mut app = Map::with_capacity(2);
        app.insert("hello", value!(&hello));
        app.insert("actions", Value::Array(actions));
        let mut body = Map::with_capacity(1);
        body.insert("app", app);
        encode(&body)
    }

    /// Takes the `/connect` answer `{client, channelVersion, maxMessageBytes}`. If the host
    /// switched agent access since the body was made, an `enabled` message is queued.
    pub fn connected(&mut self, answer: &[u8]) -> Result<(), BridgeError> {
        let value = jfgui_proto::parse(answer, &Limits::DEFAULT)
            .map_err(|e| BridgeError::Json(e.to_string()))?;
        let client =
            value.get("client").and_then(Value::as_str).ok_or(BridgeError::Shape("no client"))?;
        let version = value
            .get("channelVersion")
            .and_then(Value::as_u64)
            .ok_or(BridgeError::Shape("no channelVersion"))?;
        if version != u64::from(CHANNEL_VERSION) {
            return Err(BridgeError::ChannelVersion(version));
        }
        let max = value
            .get("maxMessageBytes")
            .and_then(Value::as_u64)
            .ok_or(BridgeError::Shape("no maxMessageBytes"))?;
        self.max_message = usize::try_from(max).unwrap_or(usize::MAX);
        self.client = Some(client.to_string());
        let enabled = self.dispatcher.is_enabled();
        if enabled != self.announced {
            self.push_message(&AppMessage::Enabled(EnabledState { enabled }));
        }
        Ok(())
    }

    /// Runs every request of a `/poll` answer through the dispatcher and queues its result;
    /// a notice (`"id": null`) `bye` ends the link, a notice `withdraw` takes a prompt back.
    /// Returns how many requests ran.
    pub fn handle_poll<H: Host + ?Sized>(
        &mut self,
        host: &mut H,
        answer: &[u8],
    ) -> Result<usize, BridgeError> {
        let value = jfgui_proto::parse(answer, &answer_limits())
            .map_err(|e| BridgeError::Json(e.to_string()))?;
        let items = value
            .get("requests")
            .and_then(Value::as_array)
            .ok_or(BridgeError::Shape("no requests array"))?;
        let mut ran = 0;
        for item in items {
            let request = item
                .get("request")
                .cloned()
                .ok_or(BridgeError::Shape("an item without request"))?;
            match item.get("id") {
                Some(Value::Null) => {
                    if let Some(bye) = request.get("bye") {
                        let reason = bye.get("reason").and_then(Value::as_str).unwrap_or("bye");
                        self.closed = Some(reason.to_string());
                    }
                    if let Some(w) = request.get("withdraw") {
                        let w: Withdraw = jfgui_proto::from_value(w.clone()).map_err(|_| {
                            BridgeError::Shape("a withdraw notice of the wrong shape")
                        })?;
                        // One for a prompt that waits no more crossed the answer: ignored.
                        let _ = self.dispatcher.withdraw(&w.task, w.reason);
                    }
                }
                Some(id) => {
                    let id = id
                        .as_u64()
                        .ok_or(BridgeError::Shape("an item id that is not an integer"))?;
                    let outcome = match jfgui_proto::from_value::<Call>(request) {
                        Ok(call) => match self.dispatcher.handle(host, id, &call) {
                            Ok(result) => Outcome::Ok(result),
                            Err(e) => Outcome::Error(e),
                        },
                        Err(e) => Outcome::Error(ActionError::new(
                            Reason::InvalidReply,
                            alloc::format!("the app cannot read this request: {e}"),
                        )),
                    };
                    self.push_result(id, outcome);
                    ran += 1;
                }
                None => return Err(BridgeError::Shape("an item without id")),
            }
        }
        self.pump_tasks(host);
        Ok(ran)
    }

    /// Lets the host advance its tasks ([`Host::tick`]) and queues their changes; call it
    /// from a timer. Returns when the host wants to be ticked again.
    pub fn tick<H: Host + ?Sized>(&mut self, host: &mut H) -> Option<Duration> {
        self.pump_tasks(host)
    }

    /// Also runs the calls the user allowed once everything before is handed out (the
    /// transport posts in order, so their update goes before their result), and asks for a
    /// tick at once while allowed calls wait for that.
    fn pump_tasks<H: Host + ?Sized>(&mut self, host: &mut H) -> Option<Duration> {
        if self.outbox.is_empty() {
            self.dispatcher.run_allowed(host);
        }
        let next = self.dispatcher.tick(host);
        for task in self.dispatcher.take_task_events() {
            self.push_task(task);
        }
        if self.dispatcher.allowed_to_run() > 0 { Some(Duration::ZERO) } else { next }
    }

    /// Enables or disables external calls and tells the daemon.
    pub fn set_enabled(&mut self, enabled: bool) {
        if self.dispatcher.set_enabled(enabled) && self.client.is_some() {
            let message = AppMessage::Enabled(EnabledState { enabled });
            self.push_message(&message);
        }
    }

    /// Queues `bye{reason}`: post it, then stop polling.
    pub fn bye(&mut self, reason: &str) {
        if self.client.is_some() && self.closed.is_none() {
            self.push_message(&AppMessage::Bye(Bye { reason: reason.to_string() }));
            self.closed = Some(reason.to_string());
        }
    }

    /// The next body to post.
    pub fn next_post(&mut self) -> Option<Post> {
        self.outbox.pop_front()
    }

    /// Queues a `/result`; one over the bridge's message bound becomes
    /// `internal/response_too_large`, as on a socket.
    fn push_result(&mut self, id: u64, outcome: Outcome) {
        let body = self.result_body(id, &outcome);
        let body = if body.len() <= self.max_message {
            body
        } else {
            let e = ActionError::new(
                Reason::ResponseTooLarge { action: None },
                alloc::format!(
                    "the reply exceeds the bridge's {}-byte message bound",
                    self.max_message
                ),
            );
            self.result_body(id, &Outcome::Error(e))
        };
        self.outbox.push_back(Post { route: PostRoute::Result, body });
    }

    fn result_body(&self, id: u64, outcome: &Outcome) -> Vec<u8> {
        let mut body = Map::with_capacity(3);
        body.insert("client", self.client.clone().unwrap_or_default());
        body.insert("id", id);
        body.insert("response", value!(outcome));
        encode(&body)
    }

    /// Queues a task change; a result too large to carry fails the task instead.
    fn push_task(&mut self, task: TaskSnapshot) {
        let id = task.id.clone();
        let body = self.message_body(&AppMessage::Task(task));
        let body = if body.len() <= self.max_message {
            body
        } else {
            let error = ActionError::new(
                Reason::ResponseTooLarge { action: None },
                alloc::format!("the result of task {id} exceeds the bridge's message bound"),
            );
            let failed =
                TaskSnapshot { error: Some(error), ..TaskSnapshot::new(id, TaskState::Failed) };
            self.message_body(&AppMessage::Task(failed))
        };
        self.outbox.push_back(Post { route: PostRoute::Message, body });
    }

    fn push_message(&mut self, message: &AppMessage) {
        let body = self.message_body(message);
        self.outbox.push_back(Post { route: PostRoute::Message, body });
    }

    fn message_body(&self, message: &AppMessage) -> Vec<u8> {
        let mut body = Map::with_capacity(2);
        body.insert("client", self.client.clone().unwrap_or_default());
        body.insert("message", value!(message));
        encode(&body)
    }
}

#[cfg(test)]
mod tests {
    use alloc::string::String;
    use alloc::vec::Vec;

    use jfgui_proto::channel::{ActionInfo, AppMessage, Hello};
    use jfgui_proto::{Limits, Value};

    use super::{BridgeChannel, PostRoute};
    use crate::Dispatcher;
    use crate::channel::Identity;
    use crate::test_support::{AskingHost, EchoHost};

    fn connected(enabled: bool) -> (BridgeChannel, EchoHost) {
        let host = EchoHost::default();
        let mut d = Dispatcher::new(&host).unwrap();
        d.set_enabled(enabled);
        let mut b = BridgeChannel::new(d, Identity { display_name: "Web".into(), pid: 7 });
        let _ = b.connect_body();
        b.connected(br#"{"client":"c1","channelVersion":1,"maxMessageBytes":4096}"#).unwrap();
        (b, host)
    }

    fn parse(bytes: &[u8]) -> Value {
        jfgui_proto::parse(bytes, &Limits::DEFAULT).unwrap()
    }

    #[test]
    fn the_connect_body_is_hello_and_every_action() {
        let host = EchoHost::default();
        let mut b = BridgeChannel::new(
            Dispatcher::new(&host).unwrap(),
            Identity { display_name: "Web".into(), pid: 7 },
        );
        let body = parse(&b.connect_body());
        let app = body.get("app").unwrap();
        let hello: Hello = jfgui_proto::from_value(app.get("hello").unwrap().clone()).unwrap();
        assert_eq!(hello.display_name, "Web");
        assert!(!hello.enabled, "disabled until the host says otherwise");
        let actions: Vec<ActionInfo> =
            jfgui_proto::from_value(app.get("actions").unwrap().clone()).unwrap();
        assert_eq!(actions.len(), 4);
        assert_eq!(actions[0].name, "echo");
    }

    #[test]
    fn a_poll_runs_each_request_through_the_dispatcher_once() {
        let (mut b, mut host) = connected(true);
        let poll = br#"{"requests":[{"id":9007199254740993,"request":{"execute":{"action":"bump","input":{},"expectedRevision":0}}},{"id":2,"request":{"revision":{}}}]}"#;
        assert_eq!(b.handle_poll(&mut host, poll).unwrap(), 2);
        assert_eq!(host.revision, 1);
        let first = b.next_post().unwrap();
        assert_eq!(first.route, PostRoute::Result);
        let text = String::from_utf8(first.body).unwrap();
        // The id keeps its exact value (beyond 2^53).
        assert!(text.contains(r#""id":9007199254740993"#), "{text}");
        assert!(text.contains(r#""client":"c1""#), "{text}");
        assert!(text.contains(r#""response":{"ok":{"executed""#), "{text}");
        let second = parse(&b.next_post().unwrap().body);
        assert_eq!(
            second
                .get("response")
                .unwrap()
                .get("ok")
                .unwrap()
                .get("revision")
                .unwrap()
                .get("revision")
                .unwrap()
                .as_u64(),
            Some(1)
        );
        assert!(b.next_post().is_none());
    }

    #[test]
    fn a_disabled_app_refuses_and_a_stale_write_changes_nothing() {
        let (mut b, mut host) = connected(false);
        let poll = br#"{"requests":[{"id":1,"request":{"execute":{"action":"bump","input":{},"expectedRevision":0}}}]}"#;
        b.handle_poll(&mut host, poll).unwrap();
        let text = String::from_utf8(b.next_post().unwrap().body).unwrap();
        assert!(text.contains(r#""reason":"disabled""#), "{text}");
        b.set_enabled(true);
        let enabled = parse(&b.next_post().unwrap().body);
        let m: AppMessage =
            jfgui_proto::from_value(enabled.get("message").unwrap().clone()).unwrap();
        assert!(matches!(m, AppMessage::Enabled(e) if e.enabled));
        let stale = br#"{"requests":[{"id":2,"request":{"execute":{"action":"bump","input":{},"expectedRevision":5}}}]}"#;
        b.handle_poll(&mut host, stale).unwrap();
        let text = String::from_utf8(b.next_post().unwrap().body).unwrap();
        assert!(text.contains("stale_revision"), "{text}");
        assert_eq!(host.revision, 0);
        assert_eq!(host.executed, 0);
    }

    #[test]
    fn an_oversize_reply_becomes_response_too_large() {
        let (mut b, mut host) = connected(true);
        let poll = br#"{"requests":[{"id":3,"request":{"execute":{"action":"big","input":{"bytes":10000}}}}]}"#;
        b.handle_poll(&mut host, poll).unwrap();
        let post = b.next_post().unwrap();
        assert!(post.body.len() <= 4096);
        assert!(String::from_utf8(post.body).unwrap().contains("response_too_large"));
    }

    #[test]
    fn task_changes_are_posted_to_message() {
        let (mut b, mut host) = connected(true);
        let start = br#"{"requests":[{"id":4,"request":{"execute":{"action":"task.start","input":{},"expectedRevision":0}}}]}"#;
        b.handle_poll(&mut host, start).unwrap();
        assert_eq!(
            b.next_post().unwrap().route,
            PostRoute::Result,
            "the creation travels in the reply"
        );
        assert!(b.next_post().is_none());
        let cancel = br#"{"requests":[{"id":5,"request":{"cancelTask":{"id":"task-1"}}}]}"#;
        b.handle_poll(&mut host, cancel).unwrap();
        assert_eq!(b.next_post().unwrap().route, PostRoute::Result);
        // The host's tick reached its checkpoint: the final state follows as a message.
        let change = b.next_post().unwrap();
        assert_eq!(change.route, PostRoute::Message);
        let m: AppMessage =
            jfgui_proto::from_value(parse(&change.body).get("message").unwrap().clone()).unwrap();
        assert!(
            matches!(m, AppMessage::Task(t) if t.id == "task-1" && t.state == jfgui_proto::channel::TaskState::Cancelled)
        );
    }

    #[test]
    fn a_switch_while_connecting_is_told_once_connected() {
        let host = EchoHost::default();
        let mut b = BridgeChannel::new(
            Dispatcher::new(&host).unwrap(),
            Identity { display_name: "Web".into(), pid: 7 },
        );
        let body = parse(&b.connect_body());
        assert_eq!(
            body.get("app").unwrap().get("hello").unwrap().get("enabled"),
            Some(&Value::Bool(false))
        );
        // The user ticks the box while /connect is on its way: nothing to post yet.
        b.set_enabled(true);
        assert!(b.next_post().is_none());
        b.connected(br#"{"client":"c1","channelVersion":1,"maxMessageBytes":4096}"#).unwrap();
        let post = b.next_post().unwrap();
        let m: AppMessage =
            jfgui_proto::from_value(parse(&post.body).get("message").unwrap().clone()).unwrap();
        assert!(matches!(m, AppMessage::Enabled(e) if e.enabled));
        assert!(b.next_post().is_none());
        // Announced in the body: nothing more to tell.
        let _ = b.connect_body();
        b.connected(br#"{"client":"c2","channelVersion":1,"maxMessageBytes":4096}"#).unwrap();
        assert!(b.next_post().is_none());
    }

    #[test]
    fn a_bye_notice_closes_and_bad_answers_are_errors() {
        let (mut b, mut host) = connected(true);
        b.handle_poll(
            &mut host,
            br#"{"requests":[{"id":null,"request":{"bye":{"reason":"shutdown"}}}]}"#,
        )
        .unwrap();
        assert_eq!(b.closed(), Some("shutdown"));
        assert!(b.handle_poll(&mut host, b"[]").is_err());
        assert!(b.handle_poll(&mut host, br#"{"requests":[{"request":{}}]}"#).is_err());
        assert!(b.connected(br#"{"client":"c","channelVersion":2,"maxMessageBytes":1}"#).is_err());
    }

    /// The task message of a posted body.
    fn task_of(post: &super::Post) -> jfgui_proto::channel::TaskSnapshot {
        match jfgui_proto::from_value(parse(&post.body).get("message").unwrap().clone()).unwrap() {
            AppMessage::Task(t) => t,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn an_allowed_call_runs_once_its_update_was_handed_out_and_a_withdraw_notice_ends_one() {
        let mut host = AskingHost::default();
        let mut d = Dispatcher::new(&host).unwrap();
        d.set_enabled(true);
        let mut b = BridgeChannel::new(d, Identity { display_name: "Web".into(), pid: 7 });
        let _ = b.connect_body();
        b.connected(br#"{"client":"c1","channelVersion":1,"maxMessageBytes":4096}"#).unwrap();
        let poll = br#"{"requests":[{"id":1,"request":{"execute":{"action":"wipe","input":{},"expectedRevision":0}}},{"id":2,"request":{"execute":{"action":"wipe","input":{},"expectedRevision":0}}}]}"#;
        b.handle_poll(&mut host, poll).unwrap();
        let tickets: Vec<String> = host.asked.iter().map(|c| c.ticket.clone()).collect();
        assert_eq!(tickets.len(), 2);
        assert_eq!(b.next_post().unwrap().route, PostRoute::Result);
        assert_eq!(b.next_post().unwrap().route, PostRoute::Result);
        b.dispatcher_mut().answer(&tickets[0], crate::Answer::Allow).unwrap();
        assert_eq!(b.tick(&mut host), Some(core::time::Duration::ZERO), "tick again soon");
        assert_eq!(host.wiped, 0, "the yes is only queued");
        let allowed = task_of(&b.next_post().unwrap());
        assert_eq!(
            (allowed.state, allowed.awaiting),
            (jfgui_proto::channel::TaskState::Running, None)
        );
        b.tick(&mut host);
        assert_eq!(host.wiped, 1);
        assert_eq!(
            task_of(&b.next_post().unwrap()).state,
            jfgui_proto::channel::TaskState::Completed
        );

        let notice = alloc::format!(
            r#"{{"requests":[{{"id":null,"request":{{"withdraw":{{"task":"{}","reason":"client_gone"}}}}}}]}}"#,
            tickets[1]
        );
        b.handle_poll(&mut host, notice.as_bytes()).unwrap();
        assert_eq!(host.withdrawn, core::slice::from_ref(&tickets[1]));
        assert_eq!(
            task_of(&b.next_post().unwrap()).state,
            jfgui_proto::channel::TaskState::Cancelled
        );
        let bad = br#"{"requests":[{"id":null,"request":{"withdraw":{"task":1}}}]}"#;
        assert!(b.handle_poll(&mut host, bad).is_err());
    }
}
