//! The host channel end to end against an in-memory daemon peer.

use alloc::vec;
use alloc::vec::Vec;

use alloc::string::String;

use jfgui_proto::channel::{
    Activity, AppMessage, Awaiting, Bye, CHANNEL_VERSION, Call, CallResult, ConsentAnswer,
    DaemonMessage, FrameError, Outcome, Refused, TaskSnapshot, TaskState, Withdraw, WithdrawReason,
};
use jfgui_proto::{ActionSpec, ErrorClass, Reason};

use super::{MAX_QUEUED_ACTIVITIES, MAX_QUEUED_REQUESTS, ProtocolError, Status};
use crate::test_support::{AskingHost, EchoHost, Peer, Registers, channel, obj};
use crate::{Answer, Dispatcher};

fn registered(enabled: bool) -> (super::HostChannel, EchoHost, Peer) {
    let host = EchoHost::default();
    let mut e = channel(&host, enabled);
    let mut peer = Peer::new();
    let hs = peer.drain(&mut e);
    assert_eq!(hs.len(), 3, "hello, one actions page, ready");
    e.feed(&Peer::welcome(1024 * 1024)).unwrap();
    assert_eq!(e.status(), &Status::Registered);
    (e, host, peer)
}

fn reply(msgs: &[AppMessage], id: u64) -> &Outcome {
    msgs.iter()
        .find_map(|m| match m {
            AppMessage::Reply(r) if r.id == id => Some(&r.outcome),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no reply {id} in {msgs:?}"))
}

#[test]
fn handshake_then_welcome() {
    let host = EchoHost::default();
    let mut e = channel(&host, false);
    let mut peer = Peer::new();
    let msgs = peer.drain(&mut e);
    match &msgs[0] {
        AppMessage::Hello(h) => {
            assert_eq!(h.channel_version, CHANNEL_VERSION);
            assert_eq!(h.display_name, "Echo — tést");
            assert_eq!(h.pid, 42);
            assert!(!h.enabled, "disabled by default");
        }
        other => panic!("{other:?}"),
    }
    match &msgs[1] {
        AppMessage::Actions(p) => {
            assert_eq!(p.actions.len(), 4);
            assert_eq!(p.actions[0].name, "echo");
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(&msgs[2], AppMessage::Ready(r) if r.action_count == 4));
    assert_eq!(e.status(), &Status::Registering);
    e.feed(&Peer::welcome(1000)).unwrap();
    assert_eq!(e.slug(), Some("echo-test"));
    assert_eq!(e.limits().max_message_bytes, 1000);
}

#[test]
fn large_registrations_are_paged() {
    static MANY: std::sync::LazyLock<Vec<ActionSpec>> = std::sync::LazyLock::new(|| {
        (0..600)
            .map(|i| ActionSpec::read(std::string::String::leak(std::format!("a{i}")), "x"))
            .collect()
    });
    let mut e = super::HostChannel::new(
        Dispatcher::new(&Registers(&MANY)).unwrap(),
        super::Identity { display_name: "Many".into(), pid: 1 },
    )
    .unwrap();
    let msgs = Peer::new().drain(&mut e);
    let pages: Vec<usize> = msgs
        .iter()
        .filter_map(|m| match m {
            AppMessage::Actions(p) => Some(p.actions.len()),
            _ => None,
        })
        .collect();
    assert_eq!(pages, vec![256, 256, 88]);
    assert!(matches!(msgs.last(), Some(AppMessage::Ready(r)) if r.action_count == 600));
}

#[test]
fn requests_are_answered_in_order_within_the_budget() {
    let (mut e, mut host, mut peer) = registered(true);
    let mut bytes = Vec::new();
    for id in 1..=5 {
        bytes.extend(Peer::execute(id, "echo", obj(&[("n", id.into())]), None));
    }
    // One byte at a time: frames split anywhere decode the same.
    for b in &bytes {
        e.feed(core::slice::from_ref(b)).unwrap();
    }
    assert_eq!(e.queued_requests(), 5);
    let p = e.pump(&mut host, 2);
    assert_eq!((p.executed, p.pending), (2, 3), "budget honoured");
    assert_eq!(host.executed, 2);
    let p = e.pump(&mut host, 10);
    assert_eq!((p.executed, p.pending), (3, 0));
    let msgs = peer.drain(&mut e);
    let ids: Vec<u64> = msgs
        .iter()
        .filter_map(|m| match m {
            AppMessage::Reply(r) => Some(r.id),
            _ => None,
        })
        .collect();
    assert_eq!(ids, vec![1, 2, 3, 4, 5]);
    match reply(&msgs, 3) {
        Outcome::Ok(CallResult::Executed { output, revision }) => {
            assert_eq!(output, &obj(&[("n", 3u64.into())]));
            assert_eq!(*revision, 0);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn disabled_channel_rejects_and_set_enabled_tells_the_daemon() {
    let (mut e, mut host, mut peer) = registered(false);
    e.feed(&Peer::execute(1, "bump", obj(&[]), Some(0))).unwrap();
    e.pump(&mut host, 10);
    let msgs = peer.drain(&mut e);
    assert!(matches!(reply(&msgs, 1), Outcome::Error(err) if err.reason == Reason::Disabled));
    assert_eq!(host.revision, 0);
    e.set_enabled(true);
    e.set_enabled(true); // no change, no second message
    let msgs = peer.drain(&mut e);
    assert_eq!(
        msgs,
        vec![AppMessage::Enabled(jfgui_proto::channel::EnabledState { enabled: true })]
    );
    e.feed(&Peer::execute(2, "bump", obj(&[]), Some(0))).unwrap();
    e.pump(&mut host, 10);
    assert!(matches!(reply(&peer.drain(&mut e), 2), Outcome::Ok(_)));
    assert_eq!(host.revision, 1);
}

#[test]
fn oversize_reply_becomes_response_too_large() {
    let host = EchoHost::default();
    let mut e = channel(&host, true);
    let mut host = host;
    let mut peer = Peer::new();
    peer.drain(&mut e);
    e.feed(&Peer::welcome(2000)).unwrap();
    e.feed(&Peer::execute(1, "big", obj(&[("bytes", 1500u64.into())]), None)).unwrap();
    e.feed(&Peer::execute(2, "big", obj(&[("bytes", 3000u64.into())]), None)).unwrap();
    e.feed(&Peer::request(3, Call::Render { input: obj(&[]) })).unwrap();
    e.pump(&mut host, 10);
    let msgs = peer.drain(&mut e);
    assert!(matches!(reply(&msgs, 1), Outcome::Ok(_)), "under the limit passes");
    match reply(&msgs, 2) {
        Outcome::Error(err) => {
            assert_eq!(err.reason, Reason::ResponseTooLarge { action: Some("big".into()) });
            assert_eq!(err.class(), ErrorClass::Internal);
        }
        other => panic!("{other:?}"),
    }
    // The channel stays usable.
    assert_eq!(e.status(), &Status::Registered);
    assert!(
        matches!(reply(&msgs, 3), Outcome::Error(err) if err.reason.as_str() == "unknown_action")
    );
}

#[test]
fn tasks_report_every_change_after_the_reply() {
    let (mut e, mut host, mut peer) = registered(true);
    e.feed(&Peer::execute(1, "task.start", obj(&[]), Some(0))).unwrap();
    e.pump(&mut host, 10);
    let msgs = peer.drain(&mut e);
    let id = match reply(&msgs, 1) {
        Outcome::Ok(CallResult::Deferred { task, .. }) => task.id.clone(),
        other => panic!("{other:?}"),
    };
    assert_eq!(msgs.len(), 1, "the creation travels in the reply only");
    e.feed(&Peer::request(2, Call::CancelTask { id: id.clone() })).unwrap();
    e.pump(&mut host, 10);
    let msgs = peer.drain(&mut e);
    assert!(
        matches!(reply(&msgs, 2), Outcome::Ok(CallResult::Task(t)) if t.state == TaskState::Cancelling)
    );
    // The host's tick reached its checkpoint in the same pump: the final state follows.
    let last = msgs.last().unwrap();
    assert!(
        matches!(last, AppMessage::Task(t) if t.id == id && t.state == TaskState::Cancelled),
        "{last:?}"
    );
}

#[test]
fn malformed_frames_are_fatal() {
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (vec![0xFF, 0xFF, 0xFF, 0xFF], "over-limit header"),
        (vec![0, 0, 0, 0], "empty frame"),
        (
            {
                let body = br#"{"bye":{"reason":"x","extra":1}}"#;
                let mut f = (body.len() as u32).to_be_bytes().to_vec();
                f.extend_from_slice(body);
                f
            },
            "unknown field",
        ),
        (
            {
                let body = b"{not json";
                let mut f = (body.len() as u32).to_be_bytes().to_vec();
                f.extend_from_slice(body);
                f
            },
            "malformed JSON",
        ),
    ];
    for (bytes, what) in cases {
        let (mut e, mut host, _) = registered(true);
        let err = e.feed(&bytes).unwrap_err();
        assert!(matches!(err, ProtocolError::Frame(_)), "{what}: {err:?}");
        if what == "over-limit header" {
            assert!(matches!(err, ProtocolError::Frame(FrameError::TooLarge { .. })));
        }
        assert_eq!(e.status(), &Status::Failed, "{what}");
        assert!(e.feed(b"more").is_err());
        assert_eq!(e.pump(&mut host, 10).executed, 0);
        assert_eq!(host.revision, 0);
    }
}

#[test]
fn messages_out_of_order_are_fatal() {
    let host = EchoHost::default();
    let mut e = channel(&host, true);
    let err = e.feed(&Peer::execute(1, "bump", obj(&[]), Some(0))).unwrap_err();
    assert_eq!(err, ProtocolError::Unexpected("a request before welcome"));
    let (mut e, _, _) = registered(true);
    assert!(e.feed(&Peer::welcome(100)).is_err());
}

fn activity(n: u32) -> Vec<u8> {
    Peer::frame(&DaemonMessage::Activity(Activity {
        client: alloc::format!("agent[{n}] via endpoint"),
        action: "bump".into(),
        outcome: "ok".into(),
        reason: None,
    }))
}

#[test]
fn activity_is_asked_for_in_hello_and_delivered_after_the_replies() {
    let mut host = EchoHost::default();
    let mut e = channel(&host, true).with_activity().unwrap();
    let mut peer = Peer::new();
    let msgs = peer.drain(&mut e);
    assert_eq!(msgs.len(), 3, "one handshake, not two: {msgs:?}");
    assert!(matches!(&msgs[0], AppMessage::Hello(h) if h.activity));
    e.feed(&Peer::welcome(1024 * 1024)).unwrap();
    e.feed(&Peer::execute(1, "bump", obj(&[]), Some(0))).unwrap();
    e.feed(&activity(1)).unwrap();
    // The notice waits while the reply is not written.
    assert_eq!(e.pump(&mut host, 8).pending, 1);
    assert_eq!(host.executed, 1);
    assert!(host.activities.is_empty());
    assert!(matches!(&peer.drain(&mut e)[..], [AppMessage::Reply(r)] if r.id == 1));
    assert_eq!(e.pump(&mut host, 8).pending, 0);
    assert_eq!(host.activities.len(), 1);
    assert_eq!(host.activities[0].client, "agent[1] via endpoint");
    // A flood keeps the newest and counts the rest; nothing is ever answered.
    for n in 0..(MAX_QUEUED_ACTIVITIES as u32 + 5) {
        e.feed(&activity(n)).unwrap();
    }
    assert!(peer.drain(&mut e).is_empty());
    e.pump(&mut host, 8);
    assert_eq!(e.activities_dropped(), 5);
    assert_eq!(host.activities.len(), 1 + MAX_QUEUED_ACTIVITIES);
    assert_eq!(
        host.activities.last().unwrap().client,
        alloc::format!("agent[{}] via endpoint", MAX_QUEUED_ACTIVITIES + 4)
    );
    assert!(peer.drain(&mut e).is_empty());
}

#[test]
fn a_malformed_notice_is_decoded_after_the_replies_and_is_a_protocol_error() {
    let mut host = EchoHost::default();
    let mut e = channel(&host, true).with_activity().unwrap();
    let mut peer = Peer::new();
    peer.drain(&mut e);
    e.feed(&Peer::welcome(1024 * 1024)).unwrap();
    // An unknown member: strict decoding refuses it, as it refuses any malformed frame.
    let body = br#"{"activity":{"client":"c","action":"a","outcome":"ok","extra":1}}"#;
    let mut bytes = (body.len() as u32).to_be_bytes().to_vec();
    bytes.extend_from_slice(body);
    bytes.extend_from_slice(&Peer::execute(1, "bump", obj(&[]), Some(0)));
    // Held undecoded: the request in the same read still runs and is answered.
    e.feed(&bytes).unwrap();
    assert_eq!(e.pump(&mut host, 8).executed, 1);
    assert!(matches!(&peer.drain(&mut e)[..], [AppMessage::Reply(r)] if r.id == 1));
    let err = e.deliver_activities(&mut host).unwrap_err();
    assert!(matches!(err, ProtocolError::Frame(_)), "{err:?}");
    assert_eq!(e.status(), &Status::Failed);
    assert!(host.activities.is_empty());
    assert!(e.feed(&activity(2)).is_err());
    // Delivered by `pump` (nothing to write), the error is the channel's status the same way.
    let mut e = channel(&host, true).with_activity().unwrap();
    peer.drain(&mut e);
    e.feed(&Peer::welcome(1024 * 1024)).unwrap();
    e.feed(&bytes[..4 + body.len()]).unwrap();
    assert_eq!(e.pump(&mut host, 8).pending, 0);
    assert_eq!(e.status(), &Status::Failed);
}

#[test]
fn an_app_that_did_not_ask_keeps_the_old_hello_and_refuses_activity() {
    let host = EchoHost::default();
    let mut e = channel(&host, true);
    let msgs = Peer::new().drain(&mut e);
    assert!(matches!(&msgs[0], AppMessage::Hello(h) if !h.activity));
    e.feed(&Peer::welcome(1024 * 1024)).unwrap();
    let err = e.feed(&activity(1)).unwrap_err();
    assert_eq!(err, ProtocolError::Unexpected("an activity notice not asked for"));
    assert_eq!(e.status(), &Status::Failed);
}

#[test]
fn refused_and_bye() {
    let host = EchoHost::default();
    let mut e = channel(&host, true);
    let refused =
        Refused { reason: Refused::TOO_MANY_APPS.into(), message: "Too many apps.".into() };
    e.feed(&Peer::frame(&DaemonMessage::Refused(refused.clone()))).unwrap();
    assert_eq!(e.status(), &Status::Refused(refused));
    assert!(!e.wants_read());

    let (mut e, _, mut peer) = registered(true);
    e.feed(&Peer::frame(&DaemonMessage::Bye(Bye { reason: Bye::SHUTDOWN.into() }))).unwrap();
    assert_eq!(e.status(), &Status::Closed { reason: "shutdown".into() });
    // A reset starts a fresh registration with the current enabled state.
    e.reset().unwrap();
    let msgs = peer.drain(&mut e);
    assert!(matches!(&msgs[0], AppMessage::Hello(h) if h.enabled));
    assert_eq!(e.status(), &Status::Registering);

    let (mut e, _, mut peer) = registered(true);
    e.bye("exit");
    assert_eq!(peer.drain(&mut e), vec![AppMessage::Bye(Bye { reason: "exit".into() })]);
    assert!(!e.is_open());
}

#[test]
fn a_full_queue_answers_busy_without_running() {
    let (mut e, mut host, mut peer) = registered(true);
    for id in 0..(MAX_QUEUED_REQUESTS as u64 + 3) {
        e.feed(&Peer::execute(id, "bump", obj(&[]), None)).unwrap();
    }
    assert!(!e.wants_read());
    let msgs = peer.drain(&mut e);
    assert_eq!(msgs.len(), 3);
    assert!(msgs.iter().all(|m| matches!(m, AppMessage::Reply(r) if matches!(&r.outcome, Outcome::Error(err) if err.reason == Reason::Busy))));
    assert_eq!(host.revision, 0);
    e.pump(&mut host, usize::MAX);
    assert_eq!(e.queued_requests(), 0);
}

#[test]
fn disabling_with_queued_requests_rejects_them_all() {
    let (mut e, mut host, mut peer) = registered(true);
    for id in 1..=3 {
        e.feed(&Peer::execute(id, "bump", obj(&[]), Some(0))).unwrap();
    }
    e.set_enabled(false);
    e.pump(&mut host, 10);
    let msgs = peer.drain(&mut e);
    assert_eq!(msgs[0], AppMessage::Enabled(jfgui_proto::channel::EnabledState { enabled: false }));
    for id in 1..=3 {
        assert!(matches!(reply(&msgs, id), Outcome::Error(err) if err.reason == Reason::Disabled));
    }
    assert_eq!((host.revision, host.executed), (0, 0));
}

mod properties {
    use jfgui_proto::channel::{DEFAULT_MAX_FRAME, decode_message};
    use proptest::prelude::*;

    use super::*;

    proptest! {
        /// Whatever the daemon sends, the channel answers with an error or queues requests;
        /// it never panics and never runs the host for a broken stream.
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
            let (mut e, mut host, _) = registered(true);
            let _ = e.feed(&bytes);
            e.pump(&mut host, 16);
            if e.status() == &Status::Failed {
                prop_assert_eq!(host.revision, 0);
            }
        }

        /// Correctly framed garbage (and garbage JSON-ish text) reaches the JSON and message
        /// decoders: a fatal error, never a panic or a host call.
        #[test]
        fn framed_garbage_is_a_protocol_error(body in "[{}\\[\\]\":,a-z0-9 ]{1,200}") {
            // A body that happens to be a valid daemon message is not garbage.
            let limits = super::super::frame_json_limits(DEFAULT_MAX_FRAME);
            prop_assume!(decode_message::<DaemonMessage>(body.as_bytes(), &limits).is_err());
            let (mut e, mut host, _) = registered(true);
            let mut frame = (body.len() as u32).to_be_bytes().to_vec();
            frame.extend_from_slice(body.as_bytes());
            let fed = e.feed(&frame);
            prop_assert!(matches!(fed, Err(ProtocolError::Frame(_))), "{:?}", fed);
            prop_assert_eq!(e.status(), &Status::Failed);
            e.pump(&mut host, 16);
            prop_assert_eq!(host.executed, 0);
        }

        /// A valid stream split at arbitrary points gives the same replies as one write.
        #[test]
        fn chunking_does_not_change_the_answers(cuts in proptest::collection::vec(1usize..64, 1..40)) {
            let mut stream = Vec::new();
            for id in 1..=4u64 {
                stream.extend(Peer::execute(id, "echo", obj(&[("n", id.into())]), None));
            }
            let answers = |chunks: &[&[u8]]| {
                let (mut e, mut host, mut peer) = registered(true);
                for c in chunks {
                    e.feed(c).unwrap();
                    e.pump(&mut host, usize::MAX);
                }
                peer.drain(&mut e)
            };
            let whole = answers(&[&stream]);
            let mut chunks = Vec::new();
            let mut rest: &[u8] = &stream;
            for cut in cuts {
                if rest.is_empty() {
                    break;
                }
                let (a, b) = rest.split_at(cut.min(rest.len()));
                chunks.push(a);
                rest = b;
            }
            chunks.push(rest);
            prop_assert_eq!(answers(&chunks), whole);
        }
    }
}

/// A channel of [`AskingHost`], registered.
fn asking() -> (super::HostChannel, AskingHost, Peer) {
    let host = AskingHost::default();
    let mut e = channel(&host, true);
    let mut peer = Peer::new();
    peer.drain(&mut e);
    e.feed(&Peer::welcome(1024 * 1024)).unwrap();
    (e, host, peer)
}

/// The task messages among `msgs`.
fn tasks(msgs: &[AppMessage]) -> Vec<&TaskSnapshot> {
    msgs.iter()
        .filter_map(|m| match m {
            AppMessage::Task(t) => Some(t),
            _ => None,
        })
        .collect()
}

/// Sends a `wipe` call and answers the waiting task's ticket.
fn wait_for_the_user(e: &mut super::HostChannel, host: &mut AskingHost, peer: &mut Peer) -> String {
    e.feed(&Peer::execute(1, "wipe", obj(&[]), Some(0))).unwrap();
    e.pump(host, 10);
    let msgs = peer.drain(e);
    match reply(&msgs, 1) {
        Outcome::Ok(CallResult::Deferred { task, .. }) => {
            assert_eq!(task.awaiting, Some(Awaiting::Confirmation));
            task.id.clone()
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn an_allowed_call_runs_only_once_the_update_saying_so_was_written() {
    let (mut e, mut host, mut peer) = asking();
    let ticket = wait_for_the_user(&mut e, &mut host, &mut peer);
    assert_eq!(host.asked.len(), 1);
    e.answer(&ticket, Answer::Allow).unwrap();
    e.pump(&mut host, 10);
    assert_eq!(host.wiped, 0, "the update is only queued");
    // The transport has not taken it: still nothing runs, however often the app pumps.
    e.pump(&mut host, 10);
    assert_eq!(host.wiped, 0);
    let msgs = peer.drain(&mut e);
    let allowed = tasks(&msgs);
    assert_eq!(allowed.len(), 1);
    assert_eq!((allowed[0].state, allowed[0].awaiting), (TaskState::Running, None));
    assert_eq!(allowed[0].consent.map(|c| c.answer), Some(ConsentAnswer::Allow));
    assert_eq!(e.dispatcher().allowed_to_run(), 1);
    // Written: the next pump runs it, and its completion follows.
    e.pump(&mut host, 10);
    assert_eq!(host.wiped, 1);
    let msgs = peer.drain(&mut e);
    let done = tasks(&msgs);
    assert_eq!((done.len(), done[0].state), (1, TaskState::Completed));
    let result = done[0].result.as_ref().unwrap();
    assert_eq!(result.get("revision").and_then(jfgui_proto::Value::as_u64), Some(1));
}

#[test]
fn a_withdraw_from_the_daemon_ends_a_waiting_call_and_closes_its_prompt() {
    let (mut e, mut host, mut peer) = asking();
    let ticket = wait_for_the_user(&mut e, &mut host, &mut peer);
    let withdraw = |task: &str| {
        Peer::frame(&DaemonMessage::Withdraw(Withdraw {
            task: task.into(),
            reason: WithdrawReason::ConfirmationTimeout,
        }))
    };
    e.feed(&withdraw(&ticket)).unwrap();
    // A withdraw of what waits no more (here: unknown) is ignored, not fatal.
    e.feed(&withdraw("confirm-77")).unwrap();
    e.pump(&mut host, 10);
    assert_eq!(host.withdrawn, core::slice::from_ref(&ticket));
    let msgs = peer.drain(&mut e);
    let ended = tasks(&msgs);
    assert_eq!(ended.len(), 1);
    assert_eq!(
        ended[0].error.as_ref().map(|e| e.reason.clone()),
        Some(Reason::ConfirmationTimeout)
    );
    assert_eq!(e.answer(&ticket, Answer::Allow), Err(crate::StrayAnswer::Unknown));
    e.pump(&mut host, 10);
    assert_eq!(host.wiped, 0);
    assert_eq!(e.status(), &Status::Registered);

    // Before `welcome` it is out of order, as a request would be.
    let mut fresh = channel(&AskingHost::default(), true);
    assert_eq!(
        fresh.feed(&withdraw(&ticket)),
        Err(ProtocolError::Unexpected("a withdraw before welcome"))
    );
}

#[test]
fn a_new_connection_ends_every_call_asked_about_on_the_old_one() {
    let (mut e, mut host, mut peer) = asking();
    let ticket = wait_for_the_user(&mut e, &mut host, &mut peer);
    e.reset().unwrap();
    let hs = Peer::new().drain(&mut e);
    assert!(matches!(hs[0], AppMessage::Hello(_)));
    e.feed(&Peer::welcome(1024 * 1024)).unwrap();
    e.pump(&mut host, 10);
    assert_eq!(host.withdrawn, core::slice::from_ref(&ticket), "the prompt closes");
    assert!(tasks(&Peer::new().drain(&mut e)).is_empty(), "the new daemon never knew the call");
    assert_eq!(e.answer(&ticket, Answer::Allow), Err(crate::StrayAnswer::Unknown));
    assert_eq!(host.wiped, 0);
}
