//! The test app's own transport loop over the sans-IO host channel: a reader thread feeding a
//! channel (so the loop can also wake up for task deadlines), plus the transport-level faults
//! (`reply-twice`, `reply-unknown-id`, `ignores-revision`, `stall-handshake`, `no-read`).

use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use jfgui_host_sdk::Host;
use jfgui_host_sdk::channel::{HostChannel, Status};
use jfgui_proto::Limits;
use jfgui_proto::channel::{
    AppMessage, Call, CallResult, DEFAULT_MAX_FRAME, DaemonMessage, FrameDecoder, Outcome,
    TaskSnapshot, TaskState, decode_message, encode_frame, frame_limits,
};

use crate::host::{TestApp, huge_value};
use crate::knobs::{Faults, Knob};

/// Transport-level behaviour.
#[derive(Debug, Clone, Copy, Default)]
pub struct Behaviour {
    /// Connect, then never send `hello`.
    pub stall_handshake: bool,
    /// Stop reading the channel once registered.
    pub no_read: bool,
    /// Once registered, send this many `running` task updates for ids never returned in a
    /// reply (`hostile.rs`).
    pub unsolicited_tasks: usize,
}

/// Serves until the peer closes (Ok), the channel breaks, or forever for the stalling knobs.
pub fn serve(
    app: &mut TestApp,
    mut channel: HostChannel,
    reader: impl Read + Send + 'static,
    mut writer: impl Write,
    faults: &Faults,
    behaviour: Behaviour,
) -> io::Result<()> {
    if behaviour.stall_handshake {
        // Hold the connection open and say nothing (the reader end stays open too).
        let _keep = (reader, writer);
        loop {
            std::thread::park();
        }
    }
    let stop_reading = Arc::new(AtomicBool::new(false));
    let rx = spawn_reader(reader, stop_reading.clone());
    let limits = frame_limits(&Limits::DEFAULT, DEFAULT_MAX_FRAME);
    let mut incoming = FrameDecoder::new(DEFAULT_MAX_FRAME);
    let mut requests = FrameDecoder::new(DEFAULT_MAX_FRAME);
    let mut actions: HashMap<u64, String> = HashMap::new();
    let mut next_tick: Option<Duration> = None;
    let mut unsolicited = behaviour.unsolicited_tasks;
    loop {
        let out = channel.pending_output().to_vec();
        channel.consume_output(out.len());
        let out = if faults.rewrites_replies() {
            rewrite(&out, faults, &mut actions, &limits)?
        } else {
            out
        };
        writer.write_all(&out)?;
        writer.flush()?;
        match channel.status() {
            Status::Registering => {}
            Status::Registered if behaviour.no_read => {
                stop_reading.store(true, Ordering::SeqCst);
                loop {
                    std::thread::park();
                }
            }
            Status::Registered if unsolicited > 0 => {
                for i in 0..std::mem::take(&mut unsolicited) {
                    let task = running(format!("ghost-{i}"), None);
                    writer.write_all(&encode_frame(&task, &limits, DEFAULT_MAX_FRAME).map_err(
                        |e| io::Error::new(io::ErrorKind::InvalidData, e.to_string()),
                    )?)?;
                }
                writer.flush()?;
            }
            Status::Registered => {}
            Status::Closed { .. } => return Ok(()),
            Status::Refused(r) => {
                return Err(io::Error::other(format!("refused: {} ({})", r.message, r.reason)));
            }
            Status::Failed => return Err(io::Error::other("host-channel protocol error")),
        }
        let timeout = if channel.queued_requests() > 0 { Some(Duration::ZERO) } else { next_tick };
        let got = match timeout {
            Some(t) => rx.recv_timeout(t),
            None => rx.recv().map_err(|_| mpsc::RecvTimeoutError::Disconnected),
        };
        match got {
            Ok(chunk) if chunk.is_empty() => return Ok(()),
            Ok(chunk) => {
                let chunk = if faults.rewrites_requests() {
                    rewrite_requests(&mut requests, &chunk, faults, app.revision(), &limits)?
                } else {
                    chunk
                };
                if faults.rewrites_replies() {
                    remember_actions(&mut incoming, &chunk, &limits, &mut actions);
                }
                channel.feed(&chunk).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => return Ok(()),
        }
        next_tick = channel.pump(app, 64).next_tick;
    }
}

fn spawn_reader(
    mut reader: impl Read + Send + 'static,
    stop: Arc<AtomicBool>,
) -> mpsc::Receiver<Vec<u8>> {
    let (tx, rx) = mpsc::sync_channel(16);
    std::thread::spawn(move || {
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            if stop.load(Ordering::SeqCst) {
                return;
            }
            let chunk = match reader.read(&mut buf) {
                Ok(n) => buf[..n].to_vec(),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => Vec::new(),
            };
            let end = chunk.is_empty();
            if stop.load(Ordering::SeqCst) || tx.send(chunk).is_err() || end {
                return;
            }
        }
    });
    rx
}

/// Applies `ignores-revision`: an execute call of such an action that names an
/// `expectedRevision` gets `revision` (the app's revision when the bytes arrive) instead, as if
/// the app never compared them. Partial frames stay in `decoder` until they are complete.
fn rewrite_requests(
    decoder: &mut FrameDecoder,
    chunk: &[u8],
    faults: &Faults,
    revision: u64,
    limits: &Limits,
) -> io::Result<Vec<u8>> {
    let bad = |e: String| io::Error::new(io::ErrorKind::InvalidData, e);
    decoder.feed(chunk);
    let mut out = Vec::with_capacity(chunk.len());
    while let Some(body) = decoder.next_frame().map_err(|e| bad(e.to_string()))? {
        let mut msg: DaemonMessage =
            decode_message(&body, limits).map_err(|e| bad(e.to_string()))?;
        if let DaemonMessage::Request(r) = &mut msg
            && let Call::Execute(c) = &mut r.call
            && c.expected_revision.is_some()
            && faults.of(&c.action).any(|k| k == Knob::IgnoresRevision)
        {
            c.expected_revision = Some(revision);
        }
        out.extend(encode_frame(&msg, limits, DEFAULT_MAX_FRAME).map_err(|e| bad(e.to_string()))?);
    }
    Ok(out)
}

/// Notes which action each request id belongs to (only needed to rewrite replies).
fn remember_actions(
    decoder: &mut FrameDecoder,
    chunk: &[u8],
    limits: &Limits,
    actions: &mut HashMap<u64, String>,
) {
    decoder.feed(chunk);
    while let Ok(Some(body)) = decoder.next_frame() {
        if let Ok(DaemonMessage::Request(r)) = decode_message::<DaemonMessage>(&body, limits) {
            let name = match r.call {
                Call::Execute(c) => c.action,
                Call::Render { .. } => "ui.render".to_string(),
                _ => continue,
            };
            actions.insert(r.id, name);
        }
    }
}

/// A `running` update of task `id`, with `result` if given.
fn running(id: String, result: Option<jfgui_proto::Value>) -> AppMessage {
    AppMessage::Task(TaskSnapshot {
        id,
        state: TaskState::Running,
        progress: None,
        result,
        error: None,
        awaiting: None,
        consent: None,
    })
}

/// Applies `reply-twice` / `reply-unknown-id` / `running-result` to the replies in `out`.
fn rewrite(
    out: &[u8],
    faults: &Faults,
    actions: &mut HashMap<u64, String>,
    limits: &Limits,
) -> io::Result<Vec<u8>> {
    let bad = |e: String| io::Error::new(io::ErrorKind::InvalidData, e);
    let mut decoder = FrameDecoder::new(DEFAULT_MAX_FRAME);
    decoder.feed(out);
    let mut result = Vec::with_capacity(out.len());
    while let Some(body) = decoder.next_frame().map_err(|e| bad(e.to_string()))? {
        let mut msg: AppMessage = decode_message(&body, limits).map_err(|e| bad(e.to_string()))?;
        let mut copies = 1;
        let mut follow = None;
        if let AppMessage::Reply(r) = &mut msg
            && let Some(action) = actions.remove(&r.id)
        {
            for knob in faults.of(&action) {
                match knob {
                    Knob::ReplyTwice => copies = 2,
                    Knob::ReplyUnknownId => r.id = u64::MAX - r.id,
                    Knob::RunningResult(bytes) => {
                        if let Outcome::Ok(CallResult::Deferred { task, .. }) = &r.outcome {
                            follow = Some(running(task.id.clone(), Some(huge_value(bytes))));
                        }
                    }
                    _ => {}
                }
            }
        }
        let frame =
            encode_frame(&msg, limits, DEFAULT_MAX_FRAME).map_err(|e| bad(e.to_string()))?;
        for _ in 0..copies {
            result.extend_from_slice(&frame);
        }
        if let Some(update) = follow {
            result.extend_from_slice(
                &encode_frame(&update, limits, DEFAULT_MAX_FRAME)
                    .map_err(|e| bad(e.to_string()))?,
            );
        }
    }
    Ok(result)
}

#[cfg(test)]
mod tests {
    use std::os::unix::net::UnixStream;

    use jfgui_host_sdk::Dispatcher;
    use jfgui_host_sdk::channel::Identity;
    use jfgui_proto::channel::{ChannelLimits, ExecuteCall, Request, Welcome};
    use jfgui_proto::{Map, Value};

    use super::*;
    use crate::store::Ledger;

    fn frame(msg: &DaemonMessage) -> Vec<u8> {
        encode_frame(msg, &frame_limits(&Limits::DEFAULT, DEFAULT_MAX_FRAME), DEFAULT_MAX_FRAME)
            .unwrap()
    }

    #[test]
    fn replies_are_duplicated_or_misaddressed() {
        let mut faults = Faults::default();
        faults.add("state.get:reply-twice").unwrap();
        faults.add("job.run:reply-unknown-id").unwrap();
        let (app_side, mut daemon) = UnixStream::pair().unwrap();
        let f = faults.clone();
        let server = std::thread::spawn(move || {
            let mut app = TestApp::new(None, Ledger::open(None).unwrap(), f.clone()).unwrap();
            let mut d = Dispatcher::new(&app).unwrap();
            d.set_enabled(true);
            let e = HostChannel::new(d, Identity { display_name: "T".into(), pid: 1 }).unwrap();
            serve(&mut app, e, app_side.try_clone().unwrap(), app_side, &f, Behaviour::default())
        });
        let welcome = DaemonMessage::Welcome(Welcome {
            slug: "t".into(),
            limits: ChannelLimits {
                max_frame_bytes: DEFAULT_MAX_FRAME as u32,
                max_message_bytes: 1 << 20,
            },
        });
        let mut ms = Map::new();
        ms.insert("ms", 0u64);
        let req = |id, action: &str, input: Value, expected| {
            frame(&DaemonMessage::Request(Request {
                id,
                call: Call::Execute(ExecuteCall {
                    action: action.into(),
                    input: input.into(),
                    expected_revision: expected,
                    consent: None,
                }),
            }))
        };
        daemon.write_all(&frame(&welcome)).unwrap();
        daemon.write_all(&req(5, "state.get", Value::Object(Map::new()), None)).unwrap();
        daemon.write_all(&req(6, "job.run", Value::Object(ms), Some(0))).unwrap();
        daemon.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let limits = frame_limits(&Limits::DEFAULT, DEFAULT_MAX_FRAME);
        let mut dec = FrameDecoder::new(DEFAULT_MAX_FRAME);
        let mut replies = Vec::new();
        let mut buf = [0u8; 4096];
        while replies.len() < 3 {
            let n = daemon.read(&mut buf).unwrap();
            assert!(n > 0);
            dec.feed(&buf[..n]);
            while let Some(body) = dec.next_frame().unwrap() {
                if let AppMessage::Reply(r) = decode_message::<AppMessage>(&body, &limits).unwrap()
                {
                    replies.push(r.id);
                }
            }
        }
        assert_eq!(replies, vec![5, 5, u64::MAX - 6]);
        daemon.shutdown(std::net::Shutdown::Both).unwrap();
        assert!(server.join().unwrap().is_ok());
    }
}
