//! The host channel inside egui's event loop. Every frame starts with [`AgentLink::pump`]: one
//! non-blocking `Connector::poll` that answers at most [`FRAME_BUDGET`] requests, then the
//! next wake-up is scheduled: the socket goes to the [`Waker`] thread (readiness → repaint)
//! and a due time (a task tick, a reconnect) to egui's own timer (`request_repaint_after`).
//! With nothing due and nothing arriving, nothing wakes the window up.

use std::io;
use std::time::{Duration, Instant};

use eframe::egui;
use jfgui_host_sdk::channel::Status;
use jfgui_host_sdk::connector::Connector;
use jfgui_host_sdk::{ActionError, Answer, Value};

use crate::app::Sketch;

/// Requests answered per frame: a burst is spread over frames (each of which asks for the
/// next one at once), so the window keeps drawing while an agent floods it.
pub const FRAME_BUDGET: usize = 16;

/// How long `bye` may take to leave when the window closes.
const BYE_GRACE: Duration = Duration::from_millis(200);

/// Where the app stands with the daemon, for the status bar.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LinkState {
    /// Registered; agents reach the app at this endpoint slug (when enabled).
    Registered(String),
    /// Connected, handshake in progress.
    Registering,
    /// No connection; retrying with backoff. Why the last attempt failed.
    Disconnected(String),
}

/// The connector and its waker.
#[derive(Debug)]
pub struct AgentLink {
    connector: Connector,
    #[cfg(unix)]
    waker: crate::waker::Waker,
}

impl AgentLink {
    /// Starts the waker thread for `ctx`.
    pub fn new(connector: Connector, ctx: &egui::Context) -> io::Result<AgentLink> {
        #[cfg(not(unix))]
        let _ = ctx;
        Ok(AgentLink {
            connector,
            #[cfg(unix)]
            waker: crate::waker::Waker::new({
                let ctx = ctx.clone();
                move || ctx.request_repaint()
            })?,
        })
    }

    /// Runs one frame's share of the channel and schedules the next wake-up; returns how long
    /// that took.
    pub fn pump(&mut self, host: &mut Sketch, ctx: &egui::Context) -> Duration {
        let started = Instant::now();
        let wait = self.connector.poll(host, FRAME_BUDGET);
        if let Some(due) = wait.timeout {
            ctx.request_repaint_after(due);
        }
        #[cfg(unix)]
        if let Err(e) = self.waker.arm(self.connector.as_fd(), &wait) {
            // Without a duplicate of the socket the waker cannot watch it: fall back to
            // looking every 50 ms rather than missing requests.
            eprintln!("jfgui-sketch: cannot watch the daemon socket: {e}");
            ctx.request_repaint_after(Duration::from_millis(50));
        }
        // Elsewhere the connector's handle cannot be waited on from another thread (see
        // host-sdk's Windows connector): look every 50 ms while connected.
        #[cfg(not(unix))]
        if self.connector.is_connected() {
            ctx.request_repaint_after(Duration::from_millis(50));
        }
        started.elapsed()
    }

    /// Whether agents may call the app.
    pub fn enabled(&self) -> bool {
        self.connector.channel().dispatcher().is_enabled()
    }

    /// Turns agent access on or off and tells the daemon at once: off closes the endpoint
    /// and every client connection to it, and fails queued calls with `disabled`.
    pub fn set_enabled(&mut self, host: &mut Sketch, ctx: &egui::Context, enabled: bool) {
        self.connector.channel_mut().set_enabled(enabled);
        self.pump(host, ctx);
    }

    /// The user's answer to the prompt of `ticket`: the prompt closes, the answer goes out at
    /// once, and on a yes the call runs at the frame after (the one that finds the answer
    /// written).
    pub fn answer(&mut self, host: &mut Sketch, ctx: &egui::Context, ticket: &str, answer: Answer) {
        host.answered(ticket);
        if let Err(e) = self.connector.channel_mut().answer(ticket, answer) {
            eprintln!("jfgui-sketch: the answer to {ticket} was ignored: {e}");
        }
        self.pump(host, ctx);
    }

    /// A trusted call from the window itself (a user gesture): the same checks as an
    /// agent's call, minus the enabled state and the expected revision.
    pub fn local(
        &mut self,
        host: &mut Sketch,
        action: &str,
        input: &Value,
    ) -> Result<(), ActionError> {
        self.connector.channel_mut().dispatcher_mut().execute_local(host, action, input).map(drop)
    }

    /// The connection and registration state.
    pub fn state(&self) -> LinkState {
        let channel = self.connector.channel();
        match (self.connector.is_connected(), channel.status(), channel.slug()) {
            (true, Status::Registered, Some(slug)) => LinkState::Registered(slug.to_string()),
            (true, _, _) => LinkState::Registering,
            (false, _, _) => LinkState::Disconnected(
                self.connector.last_error().unwrap_or("not connected yet").to_string(),
            ),
        }
    }

    /// Says `bye` to the daemon (the window is closing).
    pub fn close(&mut self) {
        self.connector.close("exit", BYE_GRACE);
    }
}
