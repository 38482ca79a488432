//! The real `jfgui-notepad` binary on the host channel: headless over stdio, and against a
//! stand-in daemon listening on `host.sock` that goes away and comes back.

use std::io::{Read, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use jfgui_proto::channel::{
    AppMessage, Call, CallResult, ChannelLimits, DEFAULT_MAX_FRAME, DaemonMessage, ExecuteCall,
    FrameDecoder, Outcome, Request, Welcome, decode_message, encode_frame, frame_limits,
};
use jfgui_proto::{Limits, Map, Value};

const TIMEOUT: Duration = Duration::from_secs(10);

fn limits() -> Limits {
    frame_limits(&Limits::DEFAULT, DEFAULT_MAX_FRAME)
}

fn frame(msg: &DaemonMessage) -> Vec<u8> {
    encode_frame(msg, &limits(), DEFAULT_MAX_FRAME).unwrap()
}

fn welcome() -> Vec<u8> {
    frame(&DaemonMessage::Welcome(Welcome {
        slug: "notepad".into(),
        limits: ChannelLimits {
            max_frame_bytes: DEFAULT_MAX_FRAME as u32,
            max_message_bytes: 1024 * 1024,
        },
    }))
}

fn execute(id: u64, action: &str, input: Value, expected: Option<u64>) -> Vec<u8> {
    frame(&DaemonMessage::Request(Request {
        id,
        call: Call::Execute(ExecuteCall {
            action: action.into(),
            input: input.into(),
            expected_revision: expected,
            consent: None,
        }),
    }))
}

fn text(t: &str) -> Value {
    let mut m = Map::new();
    m.insert("text", t);
    Value::Object(m)
}

/// Decodes app messages from `reader` on a thread, so the test can wait with a timeout.
fn messages(mut reader: impl Read + Send + 'static) -> mpsc::Receiver<AppMessage> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut d = FrameDecoder::new(DEFAULT_MAX_FRAME);
        let mut buf = [0u8; 4096];
        while let Ok(n) = reader.read(&mut buf) {
            if n == 0 {
                return;
            }
            d.feed(&buf[..n]);
            while let Ok(Some(body)) = d.next_frame() {
                if tx.send(decode_message(&body, &limits()).unwrap()).is_err() {
                    return;
                }
            }
        }
    });
    rx
}

fn next(rx: &mpsc::Receiver<AppMessage>) -> AppMessage {
    rx.recv_timeout(TIMEOUT).expect("a message from the notepad in time")
}

fn registration(rx: &mpsc::Receiver<AppMessage>) -> (String, bool, u32) {
    let AppMessage::Hello(hello) = next(rx) else { panic!("hello first") };
    let AppMessage::Actions(page) = next(rx) else { panic!("then actions") };
    let AppMessage::Ready(ready) = next(rx) else { panic!("then ready") };
    assert_eq!(page.actions.len() as u32, ready.action_count);
    (hello.display_name, hello.enabled, ready.action_count)
}

fn revision_of(msg: AppMessage, id: u64) -> u64 {
    match msg {
        AppMessage::Reply(r) if r.id == id => match r.outcome {
            Outcome::Ok(CallResult::Executed { revision, .. }) => revision,
            other => panic!("{other:?}"),
        },
        other => panic!("{other:?}"),
    }
}

struct Kill(Child);

impl Drop for Kill {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn headless_over_stdio() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_jfgui-notepad"))
        .args(["--text", "hi", "--name", "Notepad ✎"])
        .env("JFGUI_HOST_CHANNEL", "stdio")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let rx = messages(child.stdout.take().unwrap());
    let child = Kill(child);
    assert_eq!(registration(&rx), ("Notepad ✎".into(), true, 10), "headless counts as enabled");
    stdin.write_all(&welcome()).unwrap();
    stdin.write_all(&execute(1, "document.text.insert", text("!"), Some(1))).unwrap();
    assert_eq!(revision_of(next(&rx), 1), 2);
    drop(stdin);
    assert!(matches!(next(&rx), AppMessage::Bye(b) if b.reason == "exit"));
    let mut child = child;
    let start = Instant::now();
    loop {
        if let Some(status) = child.0.try_wait().unwrap() {
            assert!(status.success(), "stdin EOF exits 0");
            break;
        }
        assert!(start.elapsed() < TIMEOUT, "the notepad did not exit on stdin EOF");
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn accept(listener: &UnixListener) -> UnixStream {
    listener.set_nonblocking(true).unwrap();
    let start = Instant::now();
    loop {
        match listener.accept() {
            Ok((s, _)) => {
                s.set_nonblocking(false).unwrap();
                return s;
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                assert!(start.elapsed() < TIMEOUT, "the notepad never connected");
                std::thread::sleep(Duration::from_millis(10));
            }
            Err(e) => panic!("{e}"),
        }
    }
}

fn runtime_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("jfgui-notepad-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn spawn_connected(dir: &Path, args: &[&str]) -> Kill {
    Kill(
        Command::new(env!("CARGO_BIN_EXE_jfgui-notepad"))
            .args(args)
            .env("JFGUI_RUNTIME_DIR", dir)
            .env_remove("JFGUI_HOST_CHANNEL")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    )
}

#[test]
fn registers_with_the_daemon_and_again_after_it_restarts() {
    let dir = runtime_dir("restart");
    let sock = dir.join("host.sock");
    let listener = UnixListener::bind(&sock).unwrap();
    let _app = spawn_connected(&dir, &["--agent-enable"]);

    let stream = accept(&listener);
    let rx = messages(stream.try_clone().unwrap());
    assert_eq!(registration(&rx), ("Notepad".into(), true, 10));
    let mut w = stream.try_clone().unwrap();
    w.write_all(&welcome()).unwrap();
    w.write_all(&execute(1, "document.text.insert", text("a"), Some(1))).unwrap();
    assert_eq!(revision_of(next(&rx), 1), 2);

    // The daemon dies and a new one starts on the same path.
    // (The reader thread holds a clone of the stream, so shut it down rather than drop it.)
    stream.shutdown(std::net::Shutdown::Both).unwrap();
    drop((w, stream, listener));
    std::fs::remove_file(&sock).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let listener = UnixListener::bind(&sock).unwrap();
    let stream = accept(&listener);
    let rx = messages(stream.try_clone().unwrap());
    assert_eq!(registration(&rx), ("Notepad".into(), true, 10), "registers again");
    let mut w = stream.try_clone().unwrap();
    w.write_all(&welcome()).unwrap();
    // The state survived: the revision is still 2.
    w.write_all(&execute(2, "document.text.insert", text("b"), Some(2))).unwrap();
    assert_eq!(revision_of(next(&rx), 2), 3);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn registers_disabled_without_the_flag() {
    let dir = runtime_dir("disabled");
    let listener = UnixListener::bind(dir.join("host.sock")).unwrap();
    let _app = spawn_connected(&dir, &["--name", "Second"]);
    let stream = accept(&listener);
    let rx = messages(stream.try_clone().unwrap());
    assert_eq!(registration(&rx), ("Second".into(), false, 10));
    let mut w = stream.try_clone().unwrap();
    w.write_all(&welcome()).unwrap();
    w.write_all(&execute(1, "document.text.insert", text("a"), Some(1))).unwrap();
    match next(&rx) {
        AppMessage::Reply(r) => {
            assert!(matches!(r.outcome, Outcome::Error(e) if e.reason.as_str() == "disabled"));
        }
        other => panic!("{other:?}"),
    }
    let _ = std::fs::remove_dir_all(&dir);
}
