//! The OS side of the host channel (feature `std`): a [`Connector`] that finds the daemon
//! (`host.sock` in the runtime dir, or the named pipe on Windows), keeps the
//! [`HostChannel`] connected, reconnects with capped, jittered backoff and re-registers after the
//! daemon restarts; [`serve_stdio`] for headless mode; and [`run`], a tiny loop for apps
//! without an event loop.
//!
//! | need | use |
//! |---|---|
//! | an app with its own event loop | [`Connector::poll`] from the loop, wait on [`Connector::as_fd`] (Unix) with the returned [`Wait`] |
//! | an app without one | [`run`] |
//! | `JFGUI_HOST_CHANNEL=stdio` (`jfgui-agent headless`) | [`headless_requested`], [`serve_stdio`] |
//!
//! # Waiting without waking up
//!
//! On Unix the stream is non-blocking and [`run`] waits with `poll(2)` on its fd, with a
//! timeout only when something is due (a task tick, a reconnect attempt): a connected idle app
//! sleeps in the kernel, and an app whose daemon is gone makes one `connect(2)` per backoff
//! step (at most every [`MAX_DELAY`]). On Windows see `connector/windows.rs`.
//!
//! # Trusting only our own daemon
//!
//! Before each connection the connector applies the client-side trust checks of
//! `jfgui_proto::locations`: on Unix the runtime dir must pass the daemon's own
//! directory rule (owned by us, no group or other write, not a symlink) and the listener must
//! run as us or root; on Windows the pipe's server process must run as our user. Nothing is
//! sent to a peer that fails them: the connector writes one line to stderr (again only when the
//! reason changes), keeps the reason in [`Connector::last_error`], and retries with its
//! backoff, so it registers once the real daemon is there and never anywhere else.

mod backoff;
mod stdio;
#[cfg(unix)]
mod unix;
#[cfg(windows)]
mod windows;

#[cfg(unix)]
use unix as platform;
#[cfg(windows)]
use windows as platform;

use std::io;
use std::path::{Path, PathBuf};
use std::string::{String, ToString};
use std::time::{Duration, Instant};
use std::vec::Vec;
use std::{format, vec};

use backoff::Backoff;
pub use backoff::{INITIAL_DELAY, MAX_DELAY};
use jfgui_proto::locations::Refusal;
pub use stdio::{headless_requested, serve_stdio};

use crate::Host;
use crate::channel::{HostChannel, Status};

/// Requests answered per [`Connector::poll`] by [`run`]: enough to drain a burst, small enough
/// that task ticks and writes interleave.
pub const DEFAULT_BUDGET: usize = 64;

const READ_CHUNK: usize = 64 * 1024;

/// What the caller should wait for before the next [`Connector::poll`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Wait {
    /// Wait for the fd to become readable.
    pub read: bool,
    /// Wait for the fd to become writable (output is pending).
    pub write: bool,
    /// Call `poll` again after this long at the latest (`None`: only on readiness).
    pub timeout: Option<Duration>,
}

/// Keeps an [`HostChannel`] connected to the daemon. Non-blocking: every call to
/// [`poll`](Connector::poll) does what is possible now and says what to wait for.
#[derive(Debug)]
pub struct Connector {
    channel: HostChannel,
    address: PathBuf,
    link: Option<platform::Link>,
    backoff: Backoff,
    retry_at: Option<Instant>,
    leaving: bool,
    last_error: Option<String>,
    /// The last refusal written to stderr, so a squatter that stays is reported once, not at
    /// every retry.
    logged_refusal: Option<String>,
    buf: Vec<u8>,
}

impl Connector {
    /// A connector for the daemon of this user (`host.sock` in the runtime dir; on Windows
    /// the user's host pipe). Fails only when the location cannot be resolved (e.g. a relative
    /// `JFGUI_RUNTIME_DIR`). Nothing is connected until the first [`poll`](Connector::poll).
    pub fn new(channel: HostChannel) -> io::Result<Connector> {
        Ok(Connector::with_address(channel, platform::default_address()?))
    }

    /// A connector for an explicit socket path (or pipe name).
    pub fn with_address(channel: HostChannel, address: impl Into<PathBuf>) -> Connector {
        Connector {
            channel,
            address: address.into(),
            link: None,
            backoff: Backoff::new(),
            retry_at: None,
            leaving: false,
            last_error: None,
            logged_refusal: None,
            buf: vec![0; READ_CHUNK],
        }
    }

    /// A connector over an already connected stream (tests: `UnixStream::pair`). When that
    /// stream ends, it reconnects to `address`.
    #[cfg(unix)]
    pub fn from_stream(
        channel: HostChannel,
        stream: std::os::unix::net::UnixStream,
        address: impl Into<PathBuf>,
    ) -> io::Result<Connector> {
        let mut c = Connector::with_address(channel, address);
        c.link = Some(platform::Link::from_stream(stream)?);
        Ok(c)
    }

    /// The host channel (status, slug, dispatcher).
    pub fn channel(&self) -> &HostChannel {
        &self.channel
    }

    /// The host channel, mutably (`set_enabled`, `dispatcher_mut().execute_local`).
    pub fn channel_mut(&mut self) -> &mut HostChannel {
        &mut self.channel
    }

    /// The socket path or pipe name.
    pub fn address(&self) -> &Path {
        &self.address
    }

    /// True while a connection is open (registered or still registering).
    pub fn is_connected(&self) -> bool {
        self.link.is_some()
    }

    /// Why the last connection ended or the last attempt failed (including a refusal by the
    /// trust checks).
    pub fn last_error(&self) -> Option<&str> {
        self.last_error.as_deref()
    }

    /// The connection's fd for an event loop (`None` while disconnected: then only the
    /// [`Wait::timeout`] matters).
    #[cfg(unix)]
    pub fn as_fd(&self) -> Option<std::os::fd::BorrowedFd<'_>> {
        self.link.as_ref().map(platform::Link::fd)
    }

    /// Connects when a retry is due, reads what is available, answers at most `budget`
    /// requests, lets the host tick its tasks, and writes what the socket takes.
    pub fn poll<H: Host + ?Sized>(&mut self, host: &mut H, budget: usize) -> Wait {
        let now = Instant::now();
        if self.link.is_none() && !self.leaving && self.retry_at.is_none_or(|t| now >= t) {
            self.connect();
        }
        if self.link.is_some() {
            self.read_available();
        }
        let pump = self.channel.pump(host, budget);
        if self.link.is_some() {
            self.flush();
        }
        // After the replies are written: a notice never delays one.
        let mut next_tick = pump.next_tick;
        match self.channel.deliver_activities(host) {
            Ok(0) => {}
            // What the notices gave the host to show later has its deadline in this tick.
            Ok(_) => next_tick = self.channel.tick(host),
            Err(e) if self.link.is_some() => self.disconnect(e.to_string()),
            Err(_) => {}
        }
        if self.link.is_some() {
            match self.channel.status() {
                Status::Registered => self.backoff.reset(),
                Status::Registering => {}
                Status::Refused(r) => {
                    let why = format!(
                        "the daemon refused the registration: {} ({})",
                        r.message, r.reason
                    );
                    self.disconnect(why);
                }
                Status::Closed { reason } if self.channel.pending_output().is_empty() => {
                    let why = format!("the channel was closed ({reason})");
                    self.disconnect(why);
                }
                Status::Closed { .. } => {}
                Status::Failed => self.disconnect("protocol error".to_string()),
            }
        }
        let mut timeout = next_tick;
        // Calls the user allowed run at the next pump once their update is written.
        let allowed = self.channel.pending_output().is_empty()
            && self.channel.dispatcher().allowed_to_run() > 0;
        if self.channel.queued_requests() > 0 || (self.link.is_some() && allowed) {
            timeout = Some(Duration::ZERO);
        }
        if self.link.is_none() && !self.leaving {
            let retry = self.retry_at.map_or(Duration::ZERO, |t| t.saturating_duration_since(now));
            timeout = Some(timeout.map_or(retry, |t| t.min(retry)));
        }
        let connected = self.link.is_some();
        Wait {
            read: connected && self.channel.wants_read(),
            write: connected && !self.channel.pending_output().is_empty(),
            timeout,
        }
    }

    /// Blocks until `wait` is satisfied (readiness or timeout).
    pub fn wait(&self, wait: &Wait) -> io::Result<()> {
        match &self.link {
            Some(link) => link.wait(wait.read, wait.write, wait.timeout),
            None => {
                std::thread::sleep(wait.timeout.unwrap_or(MAX_DELAY));
                Ok(())
            }
        }
    }

    /// Sends `bye{reason}`, writes what is pending (waiting at most `grace`), and closes. No
    /// reconnect follows.
    pub fn close(&mut self, reason: &str, grace: Duration) {
        self.channel.bye(reason);
        self.leaving = true;
        let deadline = Instant::now() + grace;
        while self.link.is_some() && !self.channel.pending_output().is_empty() {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            if let Some(link) = &self.link {
                let _ = link.wait(false, true, Some(left));
            }
            self.flush();
        }
        self.link = None;
    }

    fn connect(&mut self) {
        match platform::Link::connect(&self.address) {
            Ok(link) => {
                self.link = Some(link);
                self.retry_at = None;
                self.logged_refusal = None;
                if let Err(e) = self.channel.reset() {
                    self.disconnect(e.to_string());
                }
            }
            Err(e) => {
                let why = match Refusal::find(&e) {
                    Some(refusal) => {
                        let why = refusal.to_string();
                        if self.logged_refusal.as_ref() != Some(&why) {
                            std::eprintln!("jfgui host-sdk: {why}; not registering, retrying");
                            self.logged_refusal = Some(why.clone());
                        }
                        why
                    }
                    None => format!("cannot connect to {}: {e}", self.address.display()),
                };
                self.last_error = Some(why);
                self.retry_at = Some(Instant::now() + self.backoff.next_delay());
            }
        }
    }

    fn disconnect(&mut self, why: String) {
        self.link = None;
        self.last_error = Some(why);
        self.retry_at = Some(Instant::now() + self.backoff.next_delay());
    }

    fn read_available(&mut self) {
        while self.channel.wants_read() {
            let Some(link) = self.link.as_mut() else { return };
            match link.read(&mut self.buf) {
                Ok(0) => return self.disconnect("the daemon closed the connection".to_string()),
                Ok(n) => {
                    if let Err(e) = self.channel.feed(&self.buf[..n]) {
                        return self.disconnect(e.to_string());
                    }
                    // A short read took everything the transport had: another read would only
                    // say `WouldBlock` (one wasted syscall per request). Bytes arriving later
                    // make the next wait return at once.
                    if n < self.buf.len() {
                        return;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return self.disconnect(format!("read failed: {e}")),
            }
        }
    }

    fn flush(&mut self) {
        while !self.channel.pending_output().is_empty() {
            let Some(link) = self.link.as_mut() else { return };
            match link.write(self.channel.pending_output()) {
                Ok(0) => return self.disconnect("the daemon stopped reading".to_string()),
                Ok(n) => self.channel.consume_output(n),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return self.disconnect(format!("write failed: {e}")),
            }
        }
    }
}

/// Serves `host` through `connector` forever: [`Connector::poll`], then wait (see the module
/// docs). Returns only when waiting itself fails.
pub fn run<H: Host + ?Sized>(connector: &mut Connector, host: &mut H) -> io::Error {
    loop {
        let wait = connector.poll(host, DEFAULT_BUDGET);
        // Nothing to wait for when work is due now (requests already buffered beyond the
        // budget, a retry due): a zero-timeout wait would only cost a syscall.
        if wait.timeout == Some(Duration::ZERO) {
            continue;
        }
        if let Err(e) = connector.wait(&wait) {
            return e;
        }
    }
}

#[cfg(all(test, unix))]
mod tests;
