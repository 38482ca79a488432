//! The connector over real Unix sockets: a socket pair, and a listener that goes away and
//! comes back (reconnect with backoff, re-registration).

use std::io::{Read, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::PathBuf;
use std::time::{Duration, Instant};
use std::vec::Vec;

use jfgui_proto::channel::{AppMessage, CallResult, Outcome};

use super::{Connector, DEFAULT_BUDGET, MAX_DELAY};
use crate::channel::Status;
use crate::test_support::{EchoHost, Peer, endpoint, obj};

const DEADLINE: Duration = Duration::from_secs(10);

/// Reads from the daemon side until `n` messages arrived, polling the connector meanwhile.
fn collect(
    conn: &mut Connector,
    host: &mut EchoHost,
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
fn endpoint_over_a_socket_pair() {
    let mut host = EchoHost::default();
    let (app, mut daemon) = UnixStream::pair().unwrap();
    let mut conn =
        Connector::from_stream(endpoint(&host, true), app, "/nonexistent/host.sock").unwrap();
    assert!(conn.as_fd().is_some());
    let mut peer = Peer::new();
    let hs = collect(&mut conn, &mut host, &mut daemon, &mut peer, 3);
    assert!(matches!(&hs[0], AppMessage::Hello(h) if h.enabled));

    daemon.write_all(&Peer::welcome(1024 * 1024)).unwrap();
    daemon.write_all(&Peer::execute(7, "bump", obj(&[]), Some(0))).unwrap();
    let msgs = collect(&mut conn, &mut host, &mut daemon, &mut peer, 1);
    assert_eq!(conn.endpoint().status(), &Status::Registered);
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
fn an_over_limit_frame_from_the_daemon_drops_the_connection() {
    let mut host = EchoHost::default();
    let (app, mut daemon) = UnixStream::pair().unwrap();
    let mut conn =
        Connector::from_stream(endpoint(&host, true), app, "/nonexistent/host.sock").unwrap();
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
    let mut conn = Connector::with_address(endpoint(&host, true), &path);
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
    let long = PathBuf::from(std::format!("/tmp/{}", "x".repeat(200)));
    assert_eq!(
        super::platform::Link::connect(&long).unwrap_err().kind(),
        std::io::ErrorKind::InvalidInput
    );
    let _ = std::fs::remove_dir_all(path.parent().unwrap());
}
