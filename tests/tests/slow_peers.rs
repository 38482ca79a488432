//! Slowloris and stalled handshakes across processes: 200 silent client connections, 200 that trickle a partial
//! line, 200 host connections that never say hello and a few that trickle it, against the
//! real daemon with short deadlines (`--handshake-deadline`, `--partial-idle`). A normal
//! client is served throughout, stalled peers are dropped at their deadlines, nothing is
//! registered, the thread count stays flat and descriptors return to the baseline.

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::thread;
use std::time::{Duration, Instant};

use jfgui_tests::serde_json::json;
use jfgui_tests::{PATIENCE, Rig, Watchdog, fd_count, json1, status_kib, wait_until};

const N: usize = 200;

fn closed(s: &mut UnixStream) -> bool {
    s.set_nonblocking(true).unwrap();
    let mut buf = [0u8; 4096];
    let gone = loop {
        match s.read(&mut buf) {
            Ok(0) => break true,
            Ok(_) => continue,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break false,
            Err(_) => break true,
        }
    };
    s.set_nonblocking(false).unwrap();
    gone
}

#[test]
fn slowloris_and_stalled_handshakes() {
    let _wd = Watchdog::arm(Duration::from_secs(180));
    let r = Rig::start(&["--handshake-deadline", "500ms", "--partial-idle", "700ms"], &[]);
    let pid = r.d.proc.pid();
    r.assert_live();
    let fd_baseline = fd_count(pid);
    let threads = status_kib(pid, "Threads").unwrap();

    // (a) silent client connections: may stay, and do not disturb anyone.
    let mut silent: Vec<UnixStream> =
        (0..N).map(|_| UnixStream::connect(&r.target_ep).unwrap()).collect();
    // (b) one byte, then nothing, and a few more bytes later: closed after the partial-line
    // deadline counted from the last byte.
    let mut partial: Vec<UnixStream> = (0..N)
        .map(|_| {
            let mut s = UnixStream::connect(&r.target_ep).unwrap();
            s.write_all(b"{").unwrap();
            s
        })
        .collect();
    // (c) host connections that never send hello; (d) hosts trickling a frame header.
    let mut mute_hosts: Vec<UnixStream> =
        (0..N).map(|_| UnixStream::connect(r.d.host()).unwrap()).collect();
    let mut trickling: Vec<UnixStream> =
        (0..5).map(|_| UnixStream::connect(r.d.host()).unwrap()).collect();
    let started = Instant::now();
    for i in 0..4 {
        for s in &mut trickling {
            let _ = s.write_all(&[[0, 0, 0, 40][i]]);
        }
        // A normal client is served meanwhile.
        let t = Instant::now();
        assert!(json1(&r.probe_ep, "agent/info", json!({}))["revision"].is_u64());
        println!("a normal agent/info took {:?} during the attack", t.elapsed());
        thread::sleep(Duration::from_millis(200));
    }
    assert!(wait_until(PATIENCE, || mute_hosts.iter_mut().all(closed)), "(c) dropped");
    assert!(wait_until(PATIENCE, || trickling.iter_mut().all(closed)), "(d) dropped");
    assert!(wait_until(PATIENCE, || partial.iter_mut().all(closed)), "(b) dropped");
    println!("stalled peers all dropped {:?} after the attack began", started.elapsed());
    assert!(!silent.iter_mut().any(closed), "(a) idle clients may stay");
    assert_eq!(r.d.apps().len(), 2, "no stalled handshake registered: {:?}", r.d.apps());
    let threads_now = status_kib(pid, "Threads").unwrap();
    assert!(threads_now <= threads + 2, "no thread per stalled peer: {threads} -> {threads_now}");
    // The silent connections count toward the connection cap.
    let status = r.d.status();
    assert!(status["clients"].as_u64().unwrap() >= N as u64, "{status}");
    r.assert_live();
    drop(silent);
    drop(partial);
    drop(mute_hosts);
    drop(trickling);
    assert!(
        wait_until(PATIENCE, || fd_count(pid) <= fd_baseline),
        "fds back to {fd_baseline}: {}",
        fd_count(pid)
    );
}
