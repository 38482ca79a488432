//! Headless mode: the host channel over stdin/stdout, for `jfgui-agent headless`
//! (`JFGUI_HOST_CHANNEL=stdio`). Stdout carries only frames.

use std::io::{self, Write};
use std::time::Duration;
use std::{format, vec};

use jfgui_proto::locations::ENV_HOST_CHANNEL;

use super::{DEFAULT_BUDGET, platform};
use crate::Host;
use crate::channel::{HostChannel, Status};

/// True when the app was started to speak the host channel on stdio
/// (`JFGUI_HOST_CHANNEL=stdio`).
pub fn headless_requested() -> bool {
    std::env::var_os(ENV_HOST_CHANNEL).is_some_and(|v| v == "stdio")
}

/// Serves `host` over stdin/stdout until stdin ends (then `bye{exit}` and `Ok`), the peer says
/// `bye` (`Ok`), or the channel breaks (an error: refused registration, protocol error, I/O).
///
/// Blocking by design: headless apps have nothing else to do. It still wakes up for
/// [`Host::tick`] deadlines, so deferred tasks progress between requests. Running headless is
/// the user's explicit enable: enable the channel before calling this (the notepad does).
pub fn serve_stdio<H: Host + ?Sized>(host: &mut H, mut channel: HostChannel) -> io::Result<()> {
    let mut input = platform::StdinSource::new()?;
    let stdout = io::stdout();
    let mut buf = vec![0u8; 64 * 1024];
    let mut next_tick: Option<Duration> = None;
    loop {
        let pending = channel.pending_output();
        if !pending.is_empty() {
            let n = pending.len();
            let mut out = stdout.lock();
            out.write_all(pending)?;
            out.flush()?;
            channel.consume_output(n);
        }
        // After the replies are written: a notice never delays one.
        let delivered = channel
            .deliver_activities(host)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
        if delivered > 0 {
            // What the notices gave the host to show later has its deadline in this tick,
            // and the task changes it queued are written first.
            next_tick = channel.tick(host);
            if !channel.pending_output().is_empty() {
                continue;
            }
        }
        match channel.status() {
            Status::Registering | Status::Registered => {}
            Status::Closed { .. } => return Ok(()),
            Status::Refused(r) => {
                return Err(io::Error::new(
                    io::ErrorKind::ConnectionRefused,
                    format!("registration refused: {} ({})", r.message, r.reason),
                ));
            }
            Status::Failed => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    "host-channel protocol error",
                ));
            }
        }
        // Calls the user allowed run at the next pump, their update written above.
        let now = channel.queued_requests() > 0 || channel.dispatcher().allowed_to_run() > 0;
        let timeout = if now { Some(Duration::ZERO) } else { next_tick };
        if channel.wants_read() && input.wait(timeout)? {
            match input.read(&mut buf) {
                Ok(0) => {
                    channel.bye("exit");
                    let pending = channel.pending_output();
                    // The reader may be gone already; nothing more to report then.
                    let _ = stdout.lock().write_all(pending).and_then(|()| stdout.lock().flush());
                    return Ok(());
                }
                Ok(n) => channel
                    .feed(&buf[..n])
                    .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?,
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::Interrupted | io::ErrorKind::WouldBlock
                    ) => {}
                Err(e) => return Err(e),
            }
        }
        next_tick = channel.pump(host, DEFAULT_BUDGET).next_tick;
    }
}
