//! The connector over real Unix sockets: a socket pair, and a listener that goes away and
//! comes back (reconnect with backoff, re-registration).

use std::io::{Read, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::PathBuf;
use std::time::{Duration, Instant};
use std::vec::Vec;

use jfgui_proto::channel::{Activity, AppMessage, CallResult, DaemonMessage, Outcome, TaskState};

use super::{Connector, DEFAULT_BUDGET, MAX_DELAY};
use crate::Answer;
use crate::channel::Status;
use crate::test_support::{AskingHost, EchoHost, Peer, channel, obj};

const DEADLINE: Duration = Duration::from_secs(10);

/// Reads from the daemon side until `n` messages arrived, polling the connector meanwhile.
fn collect<H: crate::Host>(
    conn: &mut Connector,
    host: &mut H,
    daemon: &mut UnixStream,
    peer: &mut Peer,
    n: usize,
) -> Vec<AppMessage> {
    daemon.set_nonblocking(true).unwrap();
    let start = Instant::now();
    let mut msgs = Vec::new();
    let mut buf = [0u8; 4096];
    while msgs.len() < n {
        assert!(start.elapsed() < DEADLINE, "timed out waiting for {n} messages, got {msgs:?}");
        let wait = conn.poll(host, DEFAULT_BUDGET);
        match daemon.read(&mut buf) {
            Ok(0) => panic!("the app closed the connection"),
            Ok(k) => msgs.extend(peer.receive(&buf[..k])),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                conn.wait(&super::Wait { timeout: Some(Duration::from_millis(5)), ..wait })
                    .unwrap();
            }
            Err(e) => panic!("{e}"),
        }
    }
    msgs
}

fn temp_socket(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(std::format!("jfgui-host-sdk-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir.join("host.sock")
}

#[test]
fn channel_over_a_socket_pair() {
    let mut host = EchoHost::default();
    let (app, mut daemon) = UnixStream::pair().unwrap();
    let mut conn =
        Connector::from_stream(channel(&host, true), app, "/nonexistent/host.sock").unwrap();
    assert!(conn.as_fd().is_some());
    let mut peer = Peer::new();
    let hs = collect(&mut conn, &mut host, &mut daemon, &mut peer, 3);
    assert!(matches!(&hs[0], AppMessage::Hello(h) if h.enabled));

    daemon.write_all(&Peer::welcome(1024 * 1024)).unwrap();
    daemon.write_all(&Peer::execute(7, "bump", obj(&[]), Some(0))).unwrap();
    let msgs = collect(&mut conn, &mut host, &mut daemon, &mut peer, 1);
    assert_eq!(conn.channel().status(), &Status::Registered);
    match &msgs[0] {
        AppMessage::Reply(r) => {
            assert_eq!(r.id, 7);
            assert!(matches!(&r.outcome, Outcome::Ok(CallResult::Executed { revision: 1, .. })));
        }
        other => panic!("{other:?}"),
    }
    // Idle and connected: wait only for readability, no timeout (zero wake-ups).
    let wait = conn.poll(&mut host, DEFAULT_BUDGET);
    assert_eq!(wait, super::Wait { read: true, write: false, timeout: None });
}

#[test]
fn a_notice_delivered_after_the_replies_keeps_the_deadline_the_host_sets_for_it() {
    let later = Duration::from_millis(100);
    let mut host = EchoHost::default();
    host.show_activity_in = Some(later);
    let (app, mut daemon) = UnixStream::pair().unwrap();
    let channel = channel(&host, true).with_activity().unwrap();
    let mut conn = Connector::from_stream(channel, app, "/nonexistent/host.sock").unwrap();
    let mut peer = Peer::new();
    collect(&mut conn, &mut host, &mut daemon, &mut peer, 3);
    daemon.write_all(&Peer::welcome(1024 * 1024)).unwrap();
    // A request and a notice in one read: the notice is handed over after the reply is
    // written, after the pump's tick; the host's deadline for it must still be the timeout.
    let mut bytes = Peer::execute(1, "bump", obj(&[]), Some(0));
    bytes.extend(Peer::frame(&DaemonMessage::Activity(Activity {
        client: "agent via endpoint".into(),
        action: "bump".into(),
        outcome: "ok".into(),
        reason: None,
    })));
    daemon.write_all(&bytes).unwrap();
    let start = Instant::now();
    let wait = loop {
        assert!(start.elapsed() < DEADLINE, "the notice never arrived");
        let wait = conn.poll(&mut host, DEFAULT_BUDGET);
        if !host.activities.is_empty() {
            break wait;
        }
        conn.wait(&super::Wait { timeout: Some(Duration::from_millis(5)), ..wait }).unwrap();
    };
    assert_eq!(host.executed, 1);
    assert_eq!(wait.timeout, Some(later));
    // Shown: idle again, no timeout.
    host.unshown = false;
    assert_eq!(conn.poll(&mut host, DEFAULT_BUDGET).timeout, None);
}

#[test]
fn an_over_limit_frame_from_the_daemon_drops_the_connection() {
    let mut host = EchoHost::default();
    let (app, mut daemon) = UnixStream::pair().unwrap();
    let mut conn =
        Connector::from_stream(channel(&host, true), app, "/nonexistent/host.sock").unwrap();
    let mut peer = Peer::new();
    collect(&mut conn, &mut host, &mut daemon, &mut peer, 3);
    daemon.write_all(&Peer::welcome(1024 * 1024)).unwrap();
    daemon.write_all(&[0xFF, 0xFF, 0xFF, 0xFF]).unwrap();
    let start = Instant::now();
    while conn.is_connected() {
        assert!(start.elapsed() < DEADLINE);
        let w = conn.poll(&mut host, DEFAULT_BUDGET);
        conn.wait(&super::Wait { timeout: Some(Duration::from_millis(5)), ..w }).unwrap();
    }
    assert!(conn.last_error().unwrap().contains("frame"), "{:?}", conn.last_error());
    assert_eq!(host.executed, 0);
}

#[test]
fn reconnects_with_backoff_and_registers_again() {
    let path = temp_socket("reconnect");
    let mut host = EchoHost::default();
    let listener = UnixListener::bind(&path).unwrap();
    let mut conn = Connector::with_address(channel(&host, true), &path);
    assert!(!conn.is_connected());
    conn.poll(&mut host, DEFAULT_BUDGET);
    assert!(conn.is_connected());
    let (mut daemon, _) = listener.accept().unwrap();
    let mut peer = Peer::new();
    collect(&mut conn, &mut host, &mut daemon, &mut peer, 3);
    daemon.write_all(&Peer::welcome(1024 * 1024)).unwrap();
    daemon.write_all(&Peer::execute(1, "bump", obj(&[]), Some(0))).unwrap();
    collect(&mut conn, &mut host, &mut daemon, &mut peer, 1);

    // The daemon dies: socket closed, file gone.
    drop(daemon);
    drop(listener);
    std::fs::remove_file(&path).unwrap();
    let start = Instant::now();
    let mut polls = 0;
    while start.elapsed() < Duration::from_millis(400) {
        let w = conn.poll(&mut host, DEFAULT_BUDGET);
        polls += 1;
        if !conn.is_connected() {
            let t = w.timeout.expect("a disconnected connector always has a retry deadline");
            assert!(t <= MAX_DELAY);
        }
        conn.wait(&w).unwrap();
    }
    assert!(!conn.is_connected());
    // Following the returned waits is not a busy loop: a handful of attempts, not thousands.
    assert!(polls < 40, "{polls} polls in 400 ms");

    // A new daemon: the app finds it and registers again, state untouched.
    let listener = UnixListener::bind(&path).unwrap();
    listener.set_nonblocking(true).unwrap();
    let start = Instant::now();
    let mut daemon = loop {
        assert!(start.elapsed() < DEADLINE, "no reconnect");
        let w = conn.poll(&mut host, DEFAULT_BUDGET);
        if let Ok((s, _)) = listener.accept() {
            break s;
        }
        conn.wait(&w).unwrap();
    };
    let mut peer = Peer::new();
    let hs = collect(&mut conn, &mut host, &mut daemon, &mut peer, 3);
    assert!(matches!(&hs[0], AppMessage::Hello(h) if h.enabled));
    assert_eq!(host.revision, 1, "app state survives the daemon restart");
    let _ = std::fs::remove_dir_all(path.parent().unwrap());
}

#[test]
fn connecting_to_a_full_backlog_does_not_block() {
    let path = temp_socket("backlog");
    let _listener = UnixListener::bind(&path).unwrap();
    let mut held = Vec::new();
    let start = Instant::now();
    let err = loop {
        assert!(held.len() < 10_000, "the backlog never filled");
        match super::platform::Link::connect(&path) {
            Ok(link) => held.push(link),
            Err(e) => break e,
        }
    };
    assert!(start.elapsed() < DEADLINE);
    assert!(
        matches!(err.kind(), std::io::ErrorKind::WouldBlock)
            || err.raw_os_error() == Some(libc::EINPROGRESS),
        "{err:?}"
    );
    let long = path.with_file_name("x".repeat(200));
    assert_eq!(
        super::platform::Link::connect(&long).unwrap_err().kind(),
        std::io::ErrorKind::InvalidInput
    );
    let _ = std::fs::remove_dir_all(path.parent().unwrap());
}

/// A squatted runtime dir, the part a single user can set up: a runtime dir writable by others is never
/// connected to (the listener in it sees no connection at all); once the dir is private again
/// the same connector registers, so it kept retrying.
#[test]
fn a_runtime_dir_writable_by_others_is_refused_and_retried() {
    use std::os::unix::fs::PermissionsExt;
    let path = temp_socket("squatted");
    let dir = path.parent().unwrap().to_path_buf();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    let listener = UnixListener::bind(&path).unwrap();
    listener.set_nonblocking(true).unwrap();
    let mut host = EchoHost::default();
    let mut conn = Connector::with_address(channel(&host, true), &path);
    let start = Instant::now();
    while start.elapsed() < Duration::from_millis(300) {
        let w = conn.poll(&mut host, DEFAULT_BUDGET);
        assert!(!conn.is_connected());
        conn.wait(&w).unwrap();
    }
    assert!(listener.accept().is_err(), "nothing may connect to a squatted dir");
    let why = conn.last_error().unwrap();
    assert!(why.contains("writable by group or others") && why.contains("mode 0777"), "{why}");
    assert!(why.contains(dir.to_str().unwrap()), "{why}");

    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    let start = Instant::now();
    let mut daemon = loop {
        assert!(start.elapsed() < DEADLINE, "no reconnect after the dir was fixed");
        let w = conn.poll(&mut host, DEFAULT_BUDGET);
        if let Ok((s, _)) = listener.accept() {
            break s;
        }
        conn.wait(&w).unwrap();
    };
    let hs = collect(&mut conn, &mut host, &mut daemon, &mut Peer::new(), 3);
    assert!(matches!(&hs[0], AppMessage::Hello(h) if h.enabled));
    let _ = std::fs::remove_dir_all(&dir);
}

/// The connection to the daemon is close-on-exec from its creation, so a GUI app that spawns
/// a child never leaks it: a shell started after connecting does not have the descriptor,
/// while a deliberate non-close-on-exec duplicate of it is inherited (the check can fail).
#[test]
fn the_daemon_connection_is_not_inherited_by_children() {
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    let path = temp_socket("cloexec");
    let _listener = UnixListener::bind(&path).unwrap();
    let link = super::platform::Link::connect(&path).unwrap();
    let fd = link.fd().as_raw_fd();
    let inherited = |fd: i32| {
        std::process::Command::new("/bin/sh")
            .args(["-c", &std::format!("test -e /dev/fd/{fd}")])
            .status()
            .unwrap()
            .success()
    };
    assert!(!inherited(fd), "the daemon socket leaked into a child");
    // SAFETY: dup(2) of a descriptor `link` keeps open; the copy is owned (and closed) here.
    #[allow(unsafe_code)]
    let copy = unsafe { OwnedFd::from_raw_fd(libc::dup(fd)) };
    assert!(inherited(copy.as_raw_fd()), "the control case: a plain dup is inherited");
    let _ = std::fs::remove_dir_all(path.parent().unwrap());
}

#[test]
fn an_allowed_call_runs_at_the_poll_after_its_update_was_written_and_not_before() {
    let mut host = AskingHost::default();
    let (app, mut daemon) = UnixStream::pair().unwrap();
    let mut conn =
        Connector::from_stream(channel(&host, true), app, "/nonexistent/host.sock").unwrap();
    let mut peer = Peer::new();
    collect(&mut conn, &mut host, &mut daemon, &mut peer, 3);
    daemon.write_all(&Peer::welcome(1024 * 1024)).unwrap();
    daemon.write_all(&Peer::execute(1, "wipe", obj(&[]), Some(0))).unwrap();
    let msgs = collect(&mut conn, &mut host, &mut daemon, &mut peer, 1);
    let ticket = match &msgs[0] {
        AppMessage::Reply(r) => match &r.outcome {
            Outcome::Ok(CallResult::Deferred { task, .. }) => task.id.clone(),
            other => panic!("{other:?}"),
        },
        other => panic!("{other:?}"),
    };
    // Waiting for the user: nothing is due, the connector sleeps until the daemon writes.
    assert_eq!(conn.poll(&mut host, DEFAULT_BUDGET).timeout, None);
    conn.channel_mut().answer(&ticket, Answer::Allow).unwrap();
    let wait = conn.poll(&mut host, DEFAULT_BUDGET);
    assert_eq!(host.wiped, 0, "this poll writes the yes; the call has not run");
    assert_eq!(wait.timeout, Some(Duration::ZERO), "the yes is written: run it at once");
    conn.poll(&mut host, DEFAULT_BUDGET);
    assert_eq!(host.wiped, 1);
    let msgs = collect(&mut conn, &mut host, &mut daemon, &mut peer, 2);
    let states: Vec<(TaskState, bool)> = msgs
        .iter()
        .map(|m| match m {
            AppMessage::Task(t) => (t.state, t.awaiting.is_some()),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(states, [(TaskState::Running, false), (TaskState::Completed, false)]);
    assert_eq!(conn.poll(&mut host, DEFAULT_BUDGET).timeout, None, "idle again");
}
