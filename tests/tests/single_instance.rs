//! Ten daemons started at once on one runtime dir, many times over; exactly one
//! survives, the others exit with the documented status naming the holder's pid and never
//! touch its sockets.

use std::time::Duration;

use jfgui_tests::{
    Daemon, PATIENCE, Proc, TempDir, Watchdog, daemon_command, inode, run_daemon, wait_until,
};

/// The documented status of a second daemon (`jfgui-agentd --help`).
const ALREADY_RUNNING: i32 = 4;
const ROUNDS: usize = 50;
const RACERS: usize = 10;

#[test]
fn ten_daemons_at_once_exactly_one_survives() {
    let _wd = Watchdog::arm(Duration::from_secs(300));
    for round in 0..ROUNDS {
        let tmp = TempDir::new();
        let rt = tmp.rt();
        let mut racers: Vec<Proc> = (0..RACERS)
            .map(|i| Proc::spawn(daemon_command(&rt, &[]), tmp.path().join(format!("d{i}.log"))))
            .collect();
        // Losers exit on their own; the winner keeps running.
        assert!(
            wait_until(PATIENCE, || racers
                .iter_mut()
                .map(|p| p.try_status())
                .filter(Option::is_some)
                .count()
                == RACERS - 1),
            "round {round}: expected {} losers to exit",
            RACERS - 1
        );
        let (mut alive, mut losers) = (Vec::new(), Vec::new());
        for mut p in racers {
            if p.try_status().is_none() { alive.push(p) } else { losers.push(p) }
        }
        assert_eq!(alive.len(), 1, "round {round}: exactly one survivor");
        let winner = alive.pop().unwrap();
        let control = rt.join("agentd.sock");
        assert!(wait_until(PATIENCE, || std::os::unix::net::UnixStream::connect(&control).is_ok()));
        for loser in &mut losers {
            let status = loser.try_status().unwrap();
            let log = loser.stderr();
            assert_eq!(status.code(), Some(ALREADY_RUNNING), "round {round}: {log}");
            assert!(log.contains("already running"), "round {round}: {log}");
            // The winner writes its pid right after locking; a loser may only miss it if it
            // looked in that instant, and then says so.
            assert!(
                log.contains(&format!("pid {}", winner.pid()))
                    || log.contains("pid is not written yet"),
                "round {round}: winner {} not named: {log}",
                winner.pid()
            );
        }
        let ino = inode(&control);
        let daemon = Daemon { proc: winner, rt: rt.clone() };
        daemon.assert_alive();
        // A late second daemon while the first is live: refused, sockets untouched.
        let (status, log) = run_daemon(daemon_command(&rt, &[]));
        assert_eq!(status.code(), Some(ALREADY_RUNNING), "{log}");
        assert!(log.contains(&format!("already running, pid {}", daemon.proc.pid())), "{log}");
        assert_eq!(inode(&control), ino, "round {round}: the winner's socket was replaced");
        daemon.assert_alive();
    }
}
