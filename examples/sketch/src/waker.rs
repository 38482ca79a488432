//! Wakes the UI when the host channel needs it, without polling on a timer: a small thread
//! blocks in `poll(2)` on the connector's socket and, when it becomes ready, asks the toolkit
//! for a repaint. The UI thread then pumps the channel in its next frame and re-arms the
//! waker with what the connector wants to wait for next ([`Waker::arm`]).
//!
//! # Why it cannot spin, and why it never waits on a dead socket
//!
//! Readiness is level-triggered: a readable socket stays readable until the UI thread reads
//! it. So after firing once the thread waits for the next [`Waker::arm`] before it polls again.
//! The thread polls its own duplicate of the socket (`Arc<OwnedFd>`), never a bare fd number
//! that could be closed and reused behind its back; a second, private socket pair interrupts
//! the `poll` whenever the UI thread re-arms it with something else (another socket, other
//! events, or nothing), so the duplicate is dropped within microseconds of the connector
//! dropping the connection. A reconnect always shows up as "no socket" in between (the
//! connector connects only at the start of a `poll` and disconnects only later in one), so
//! the waker never keeps polling an old connection that happens to have the new one's number.

use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::os::unix::net::UnixStream;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;

use jfgui_host_sdk::connector::Wait;
use rustix::event::{PollFd, PollFlags, poll};

/// What the thread waits for.
#[derive(Debug, Clone)]
struct Armed {
    fd: Arc<OwnedFd>,
    read: bool,
    write: bool,
}

#[derive(Debug, Default)]
struct State {
    /// What to poll; `None`: nothing (disconnected, or backpressure both ways).
    armed: Option<Armed>,
    /// Bumped by every [`Waker::arm`] that changes something.
    generation: u64,
    /// The thread fired for the current generation and waits for a re-arm.
    fired: bool,
    /// The thread is inside `poll` (only then does a re-arm need the interrupt).
    polling: bool,
    stop: bool,
}

#[derive(Debug, Default)]
struct Shared {
    state: Mutex<State>,
    changed: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // The state stays consistent under a panic elsewhere (plain fields, no invariants
        // spanning an unwind), so a poisoned lock is still usable.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The UI thread's handle on the waker thread.
#[derive(Debug)]
pub struct Waker {
    shared: Arc<Shared>,
    interrupt: UnixStream,
    thread: Option<JoinHandle<()>>,
    /// The socket the thread polls now: its number and our duplicate.
    current: Option<(RawFd, Arc<OwnedFd>)>,
    /// The last arm as (fd number, read, write).
    key: Option<(RawFd, bool, bool)>,
}

impl Waker {
    /// Starts the thread; `repaint` is called on it whenever the socket becomes ready (egui's
    /// `Context::request_repaint`, which may be called from any thread).
    pub fn new(repaint: impl Fn() + Send + 'static) -> io::Result<Waker> {
        let (interrupt, wake_rx) = UnixStream::pair()?;
        interrupt.set_nonblocking(true)?;
        wake_rx.set_nonblocking(true)?;
        let shared = Arc::new(Shared::default());
        let thread = std::thread::Builder::new().name("jfgui-waker".into()).spawn({
            let shared = Arc::clone(&shared);
            move || watch(&shared, wake_rx, repaint)
        })?;
        Ok(Waker { shared, interrupt, thread: Some(thread), current: None, key: None })
    }

    /// After every `Connector::poll`: wait for `fd` as `wait` says (the timeout part is the
    /// toolkit's job: `request_repaint_after`). Cheap when nothing changed and the thread has
    /// not fired: then it is already waiting for exactly this.
    pub fn arm(&mut self, fd: Option<BorrowedFd<'_>>, wait: &Wait) -> io::Result<()> {
        let fd = fd.filter(|_| wait.read || wait.write);
        let key = fd.map(|fd| (fd.as_raw_fd(), wait.read, wait.write));
        let mut state = self.shared.lock();
        if !state.fired && key == self.key {
            return Ok(());
        }
        self.key = key;
        state.armed = match fd {
            None => {
                self.current = None;
                None
            }
            Some(fd) => {
                let raw = fd.as_raw_fd();
                let dup = match &self.current {
                    Some((r, dup)) if *r == raw => Arc::clone(dup),
                    _ => Arc::new(fd.try_clone_to_owned()?),
                };
                self.current = Some((raw, Arc::clone(&dup)));
                Some(Armed { fd: dup, read: wait.read, write: wait.write })
            }
        };
        state.generation += 1;
        state.fired = false;
        if state.polling {
            interrupt(&self.interrupt);
        }
        self.shared.changed.notify_one();
        Ok(())
    }
}

impl Drop for Waker {
    fn drop(&mut self) {
        self.shared.lock().stop = true;
        interrupt(&self.interrupt);
        self.shared.changed.notify_one();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn interrupt(mut tx: &UnixStream) {
    // A full socket already holds a pending wake-up, which is all that is needed.
    let _ = tx.write(&[1]);
}

/// The thread: wait for an arm, poll, fire once, repeat.
fn watch(shared: &Shared, wake_rx: UnixStream, repaint: impl Fn()) {
    let mut seen = 0;
    loop {
        let armed = {
            let mut state = shared.lock();
            loop {
                if state.stop {
                    return;
                }
                if !state.fired && state.generation != seen {
                    seen = state.generation;
                    if let Some(a) = state.armed.clone() {
                        state.polling = true;
                        break a;
                    }
                }
                state = shared.changed.wait(state).unwrap_or_else(PoisonError::into_inner);
            }
        };
        let mut flags = PollFlags::empty();
        if armed.read {
            flags |= PollFlags::IN;
        }
        if armed.write {
            flags |= PollFlags::OUT;
        }
        let (result, ready, interrupted) = {
            let mut fds = [PollFd::new(&*armed.fd, flags), PollFd::new(&wake_rx, PollFlags::IN)];
            let result = poll(&mut fds, None);
            (result, !fds[0].revents().is_empty(), !fds[1].revents().is_empty())
        };
        if interrupted {
            let mut sink = [0u8; 64];
            while matches!((&wake_rx).read(&mut sink), Ok(n) if n > 0) {}
        }
        let mut state = shared.lock();
        state.polling = false;
        // A failed poll (other than EINTR) fires too: the UI thread's next poll of the
        // connector meets the same error on the socket itself and handles it there.
        let failed = matches!(&result, Err(e) if *e != rustix::io::Errno::INTR);
        if (ready || failed) && state.generation == seen && !state.stop {
            state.fired = true;
            drop(state);
            repaint();
        }
    }
}

#[cfg(test)]
mod tests {
    use std::os::fd::AsFd;
    use std::sync::mpsc;
    use std::time::Duration;

    use super::*;

    const READ: Wait = Wait { read: true, write: false, timeout: None };

    fn waker() -> (Waker, mpsc::Receiver<()>) {
        let (tx, rx) = mpsc::channel();
        let w = Waker::new(move || {
            let _ = tx.send(());
        })
        .unwrap();
        (w, rx)
    }

    #[test]
    fn fires_once_per_readiness_until_re_armed() {
        let (mut w, fired) = waker();
        let (mut daemon, app) = UnixStream::pair().unwrap();
        w.arm(Some(app.as_fd()), &READ).unwrap();
        assert!(fired.recv_timeout(Duration::from_millis(200)).is_err(), "nothing to read yet");
        daemon.write_all(b"x").unwrap();
        fired.recv_timeout(Duration::from_secs(10)).expect("readable socket wakes the UI");
        // Still readable (nobody read it), but no second wake-up before the UI re-arms.
        assert!(fired.recv_timeout(Duration::from_millis(200)).is_err(), "level-triggered spin");
        w.arm(Some(app.as_fd()), &READ).unwrap();
        fired.recv_timeout(Duration::from_secs(10)).expect("re-armed on a readable socket");
        // The UI read the byte; the same arm again costs nothing and waits quietly.
        let mut buf = [0u8; 1];
        (&app).read_exact(&mut buf).unwrap();
        w.arm(Some(app.as_fd()), &READ).unwrap();
        assert!(fired.recv_timeout(Duration::from_millis(200)).is_err());
        daemon.write_all(b"y").unwrap();
        fired.recv_timeout(Duration::from_secs(10)).expect("next message");
    }

    #[test]
    fn re_arming_with_nothing_releases_the_socket() {
        let (mut w, fired) = waker();
        let (daemon, app) = UnixStream::pair().unwrap();
        w.arm(Some(app.as_fd()), &READ).unwrap();
        std::thread::sleep(Duration::from_millis(50));
        w.arm(None, &READ).unwrap();
        drop(app);
        // With the waker's duplicate gone, the daemon's end sees the connection end.
        daemon.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        assert_eq!((&daemon).read(&mut [0u8; 1]).unwrap(), 0, "EOF, not a held-open socket");
        assert!(fired.try_recv().is_err());
    }

    #[test]
    fn waits_for_writability_when_output_is_pending() {
        let (mut w, fired) = waker();
        let (_daemon, app) = UnixStream::pair().unwrap();
        w.arm(Some(app.as_fd()), &Wait { read: true, write: true, timeout: None }).unwrap();
        fired.recv_timeout(Duration::from_secs(10)).expect("an empty send buffer is writable");
    }

    #[test]
    fn dropping_stops_the_thread() {
        let (mut w, _fired) = waker();
        let (_daemon, app) = UnixStream::pair().unwrap();
        w.arm(Some(app.as_fd()), &READ).unwrap();
        drop(w); // joins: a hang here fails the test run
    }
}
