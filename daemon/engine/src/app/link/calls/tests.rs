//! The link's writing side: direct writes by the caller, the writer task, coalescing, and what
//! is never written.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use jfgui_proto::channel::{Activity, Call, DaemonMessage, FrameDecoder, decode_message};
use jfgui_proto::{Limits, Value};
use tokio::io::{AsyncReadExt, DuplexStream};
use tokio::sync::oneshot;

use super::*;
use crate::EngineConfig;

/// A link whose requests go to the returned stream; no writer task runs unless a test starts
/// one.
fn app(buffer: usize) -> (Link, DuplexStream) {
    let app = Link::new("test".into(), Arc::new(EngineConfig::default()));
    let (wr, rd) = tokio::io::duplex(buffer);
    app.attach_writer(Box::new(wr));
    (app, rd)
}

fn call(tag: &str) -> Call {
    Call::Inspect { input: Value::String(tag.into()) }
}

/// Starts `call` and polls it once: up to waiting for its reply.
fn start(app: &Link, call: Call) -> Pin<Box<impl Future<Output = CallOutcome> + '_>> {
    let mut request = Box::pin(app.request(call, None));
    assert!(request.as_mut().poll(&mut Context::from_waker(Waker::noop())).is_pending());
    request
}

/// What `rd` holds now, read without waiting: only what was written already is there.
fn read_now(rd: &mut DuplexStream) -> Vec<u8> {
    let mut buf = vec![0u8; 4096];
    let mut read = std::pin::pin!(rd.read(&mut buf));
    match read.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(Ok(n)) => buf[..n].to_vec(),
        _ => Vec::new(),
    }
}

/// The messages in `bytes`, which hold whole frames only.
fn messages(bytes: &[u8]) -> Vec<DaemonMessage> {
    let mut decoder = FrameDecoder::new(1 << 20);
    decoder.feed(bytes);
    let mut out = Vec::new();
    while let Some(body) = decoder.next_body().unwrap() {
        out.push(decode_message(body, &Limits::DEFAULT).unwrap());
    }
    assert!(!decoder.has_partial(), "a frame was cut");
    out
}

fn inspect(tag: &str, id: u64) -> DaemonMessage {
    DaemonMessage::Request(jfgui_proto::channel::Request { id, call: call(tag) })
}

fn activity(action: &str) -> Activity {
    Activity { client: "c".into(), action: action.into(), outcome: "ok".into(), reason: None }
}

#[tokio::test]
async fn a_request_with_nothing_ahead_is_written_by_its_caller() {
    let (app, mut rd) = app(4096);
    let _a = start(&app, call("a"));
    // No writer task runs: the frame was written by the call itself, and counts as sent.
    assert_eq!(messages(&read_now(&mut rd)), [inspect("a", 1)]);
    assert!(app.complete(1).is_some());
}

#[tokio::test]
async fn held_notices_ride_after_the_direct_write_of_a_request() {
    let (app, mut rd) = app(4096);
    assert!(app.notify(&activity("one")));
    assert!(app.notify(&activity("two")));
    assert!(read_now(&mut rd).is_empty(), "notices are held, not written");
    let _a = start(&app, call("a"));
    let written = messages(&read_now(&mut rd));
    let expected = [
        inspect("a", 1),
        DaemonMessage::Activity(activity("one")),
        DaemonMessage::Activity(activity("two")),
    ];
    assert_eq!(written, expected);
    // Taken: the next request, alone on the link once the first was answered, goes alone.
    assert!(app.complete(1).is_some());
    let _b = start(&app, call("b"));
    assert_eq!(messages(&read_now(&mut rd)), [inspect("b", 2)]);
}

#[tokio::test]
async fn the_rest_of_a_partial_write_and_the_frames_behind_it_go_out_in_order() {
    // Room for 8 bytes: the first request is written in part by its caller, the second
    // (and a notice held meanwhile) find it ahead and are queued for the writer task.
    let (app, mut rd) = app(8);
    let _a = start(&app, call("first, longer than the pipe"));
    let mut all = read_now(&mut rd);
    assert_eq!(all.len(), 8);
    assert!(app.notify(&activity("n")));
    let _b = start(&app, call("second"));
    assert!(read_now(&mut rd).is_empty(), "nothing more without the writer task");
    // The first counts as sent (taken for a write); the second is not yet.
    assert!(app.complete(1).is_some());
    assert!(app.complete(2).is_none());
    let (bye, bye_rx) = oneshot::channel();
    let writer = tokio::spawn(write_requests(app.clone(), bye_rx));
    let wanted = [
        inspect("first, longer than the pipe", 1),
        inspect("second", 2),
        DaemonMessage::Activity(activity("n")),
    ];
    let mut buf = [0u8; 64];
    let read_all = async {
        while messages_so_far(&all) < wanted.len() {
            let n = rd.read(&mut buf).await.unwrap();
            assert!(n > 0, "the write side ended early");
            all.extend_from_slice(&buf[..n]);
        }
    };
    tokio::time::timeout(Duration::from_secs(10), read_all).await.unwrap();
    assert_eq!(messages(&all), wanted);
    assert!(app.complete(2).is_some(), "the queued request was marked sent when taken");
    drop(bye);
    writer.abort();
}

#[tokio::test]
async fn calls_made_while_another_is_outstanding_are_written_together_by_the_writer_task() {
    let (app, mut rd) = app(4096);
    let _a = start(&app, call("a"));
    assert_eq!(messages(&read_now(&mut rd)), [inspect("a", 1)]);
    // The first awaits its reply: the next ones are queued, not written by their callers,
    // and not counted as sent.
    let _b = start(&app, call("b"));
    assert!(app.notify(&activity("n")));
    let _c = start(&app, call("c"));
    assert!(read_now(&mut rd).is_empty(), "nothing more without the writer task");
    assert!(app.complete(2).is_none());
    // The writer task writes both (and the held notice) in one write.
    let (bye, bye_rx) = oneshot::channel();
    let writer = tokio::spawn(write_requests(app.clone(), bye_rx));
    let mut buf = [0u8; 4096];
    let n = tokio::time::timeout(Duration::from_secs(10), rd.read(&mut buf)).await.unwrap();
    let expected = [inspect("b", 2), inspect("c", 3), DaemonMessage::Activity(activity("n"))];
    assert_eq!(messages(&buf[..n.unwrap()]), expected);
    assert!(app.complete(2).is_some() && app.complete(3).is_some());
    // All answered: the next call is alone again and written by its caller.
    assert!(app.complete(1).is_some());
    let _d = start(&app, call("d"));
    assert_eq!(messages(&read_now(&mut rd)), [inspect("d", 4)]);
    drop(bye);
    writer.abort();
}

/// How many whole frames `bytes` starts with.
fn messages_so_far(bytes: &[u8]) -> usize {
    let mut decoder = FrameDecoder::new(1 << 20);
    decoder.feed(bytes);
    std::iter::from_fn(|| decoder.next_body().unwrap().map(|_| ())).count()
}

#[tokio::test]
async fn a_queued_request_failed_before_its_turn_is_not_written() {
    let (app, mut rd) = app(8);
    let a = start(&app, call("first, longer than the pipe"));
    let b = start(&app, call("second"));
    // The second caller stops waiting before the writer task takes its request.
    drop(b);
    let (_bye, bye_rx) = oneshot::channel();
    let writer = tokio::spawn(write_requests(app.clone(), bye_rx));
    let mut all = Vec::new();
    let mut buf = [0u8; 64];
    let read_first = async {
        while messages_so_far(&all) < 1 {
            let n = rd.read(&mut buf).await.unwrap();
            all.extend_from_slice(&buf[..n]);
        }
    };
    tokio::time::timeout(Duration::from_secs(10), read_first).await.unwrap();
    // Give the writer task every chance to write more than it should.
    for _ in 0..10 {
        tokio::task::yield_now().await;
    }
    all.extend(read_now(&mut rd));
    assert_eq!(messages(&all), [inspect("first, longer than the pipe", 1)]);
    drop(a);
    writer.abort();
}

#[tokio::test]
async fn once_a_write_failed_new_calls_fail_at_once() {
    let (app, rd) = app(4096);
    drop(rd);
    let (_bye, bye_rx) = oneshot::channel();
    let writer = tokio::spawn(write_requests(app.clone(), bye_rx));
    // Its write fails (the app's side is gone); it stays the app's to answer until the
    // link ends, which the reading side sees.
    let _a = start(&app, call("a"));
    tokio::time::timeout(Duration::from_secs(10), writer).await.unwrap().unwrap();
    let refused = app.request(call("b"), None).await.unwrap_err();
    assert_eq!(refused.reason, jfgui_proto::Reason::AppDisconnected);
}
