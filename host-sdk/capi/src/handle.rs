//! `JfguiHost`, the handle behind every `jfgui_host_*` function, and its lifecycle:
//! declaring (no actions yet) → ready (a disabled or enabled channel, not connected) →
//! connected (the std `Connector`: the same location rule, reconnect and re-registration as a
//! Rust app) or serving stdio → finished. Only safe Rust here; `api.rs` is the C surface.

use core::time::Duration;
use std::cell::{Cell, RefCell};
use std::format;
use std::rc::Rc;
use std::string::{String, ToString};

use jfgui_host_sdk::channel::{HostChannel, Identity, Status};
use jfgui_host_sdk::connector::{self, Connector, Wait};
use jfgui_host_sdk::declare::{DeclarationError, Registration};
use jfgui_host_sdk::testing::{self, Options};
use jfgui_host_sdk::{Answer, Dispatcher, TaskTable};

use crate::callbacks::Callbacks;
use crate::ffi::{Error, JfguiStatus};
use crate::host::CHost;
use crate::reply::APP_JSON_LIMITS;
use crate::shared::Shared;

/// How long `jfgui_host_close` waits to hand `bye` to the daemon.
const CLOSE_GRACE: Duration = Duration::from_millis(500);

/// What to wait for before the next `jfgui_host_pump` (`Connector::poll`'s answer).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JfguiWait {
    /// The connection's file descriptor, or -1 while disconnected (then only `timeout_ms`
    /// matters). It can change after a reconnect: re-register it when it does.
    pub fd: i32,
    /// Wake up when `fd` is readable.
    pub read: bool,
    /// Wake up when `fd` is writable (output is pending).
    pub write: bool,
    /// Pump again after this many milliseconds at the latest; -1: only on readiness.
    pub timeout_ms: i64,
}

/// The handle's state as `jfgui_host_info` reports it.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JfguiInfo {
    /// A connection to the daemon is open.
    pub connected: bool,
    /// The daemon accepted the registration on the current connection.
    pub registered: bool,
    /// External calls are accepted (`jfgui_host_set_enabled`).
    pub enabled: bool,
}

/// An app's handle (opaque): from `jfgui_host_new` until `jfgui_host_close`.
#[derive(Debug)]
pub struct JfguiHost {
    pub(crate) shared: Rc<Shared>,
    /// Set when a library bug was caught inside a call: the state may be half-updated, so
    /// every later call is refused.
    pub(crate) poisoned: Cell<bool>,
    pub(crate) state: RefCell<State>,
}

impl JfguiHost {
    pub(crate) fn new(display_name: String, callbacks: Callbacks) -> JfguiHost {
        let shared = Rc::new(Shared::default());
        let host = CHost::new(callbacks, Rc::clone(&shared));
        JfguiHost {
            shared,
            poisoned: Cell::new(false),
            state: RefCell::new(State {
                stage: Stage::Declaring,
                host,
                display_name,
                report: None,
            }),
        }
    }
}

/// Everything a call may change.
#[derive(Debug)]
pub(crate) struct State {
    /// First: it holds the dispatcher, whose action specs point into `host`'s registration,
    /// so it must be dropped before `host` (fields drop in declaration order).
    stage: Stage,
    host: CHost,
    display_name: String,
    /// The JSON of the last `jfgui_host_check` run, kept for `jfgui_host_check_report`.
    report: Option<String>,
}

/// Where the handle is in its life: declare, then connect (or serve stdio), then finish.
#[derive(Debug)]
enum Stage {
    /// No valid declarations yet.
    Declaring,
    /// Declared; not connected.
    Ready(HostChannel),
    /// Connected (or reconnecting) to the daemon.
    Connected(Connector),
    /// `serve_stdio` ended, or `connect` failed after consuming the channel.
    Finished(String),
}

fn wrong_state(what: &str, stage: &Stage) -> Error {
    let now = match stage {
        Stage::Declaring => {
            String::from("no actions are declared yet (jfgui_host_declare_actions)")
        }
        Stage::Ready(_) => String::from("the handle is not connected (jfgui_host_connect)"),
        Stage::Connected(_) => String::from("the handle is already connected"),
        Stage::Finished(why) => format!("the handle is finished ({why}); close it"),
    };
    Error::new(JfguiStatus::WrongState, format!("cannot {what}: {now}"))
}

impl State {
    /// Reads the declarations and builds the dispatcher from them (`Dispatcher::new`, the
    /// registration check every Rust app goes through).
    pub(crate) fn declare(&mut self, document: &[u8]) -> Result<(), Error> {
        if !matches!(self.stage, Stage::Declaring) {
            return Err(wrong_state("declare actions", &self.stage));
        }
        let registration = Registration::from_json(document).map_err(|e| match e {
            DeclarationError::Json(m) => Error::new(JfguiStatus::InvalidJson, m),
            DeclarationError::Shape(m) => Error::new(JfguiStatus::InvalidRegistration, m),
        })?;
        self.host.set_registration(Some(registration));
        let identity =
            Identity { display_name: self.display_name.clone(), pid: std::process::id() };
        let channel = Dispatcher::new(&self.host)
            .map_err(|e| Error::new(JfguiStatus::InvalidRegistration, e.to_string()))
            .and_then(|dispatcher| {
                HostChannel::new(dispatcher, identity)
                    .map_err(|e| Error::new(JfguiStatus::InvalidRegistration, e.to_string()))
            });
        match channel {
            Ok(channel) => {
                self.stage = Stage::Ready(channel);
                Ok(())
            }
            Err(e) => {
                // Nothing built from these declarations survived the error.
                self.host.set_registration(None);
                Err(e)
            }
        }
    }

    fn channel_mut(&mut self, what: &str) -> Result<&mut HostChannel, Error> {
        match &mut self.stage {
            Stage::Ready(channel) => Ok(channel),
            Stage::Connected(connector) => Ok(connector.channel_mut()),
            other => Err(wrong_state(what, other)),
        }
    }

    /// Starts the std connector and makes the first connection attempt now.
    pub(crate) fn connect(&mut self) -> Result<(), Error> {
        let channel = match core::mem::replace(&mut self.stage, Stage::Declaring) {
            Stage::Ready(channel) => channel,
            other => {
                let e = wrong_state("connect", &other);
                self.stage = other;
                return Err(e);
            }
        };
        match Connector::new(channel) {
            Ok(mut connector) => {
                connector.poll(&mut self.host, 0);
                self.stage = Stage::Connected(connector);
                Ok(())
            }
            Err(e) => {
                let why = format!("cannot locate the daemon: {e}");
                self.stage = Stage::Finished(why.clone());
                Err(Error::new(JfguiStatus::Io, why))
            }
        }
    }

    /// One `Connector::poll`.
    pub(crate) fn pump(&mut self, budget: usize) -> Result<JfguiWait, Error> {
        let Stage::Connected(connector) = &mut self.stage else {
            return Err(wrong_state("pump", &self.stage));
        };
        let wait = connector.poll(&mut self.host, budget);
        Ok(wait_for_c(connector, &wait))
    }

    /// The connection's descriptor, -1 while disconnected.
    pub(crate) fn fd(&self) -> Result<i32, Error> {
        match &self.stage {
            Stage::Connected(connector) => Ok(connection_fd(connector)),
            other => Err(wrong_state("report a file descriptor", other)),
        }
    }

    /// The user's answer to a waiting call: when connected, its update is written and, on a
    /// yes, the call runs now (the second poll finds the update written).
    pub(crate) fn answer(&mut self, ticket: &str, answer: Answer) -> Result<(), Error> {
        self.channel_mut("answer a confirmation")?.answer(ticket, answer).map_err(|e| {
            Error::new(JfguiStatus::Task, format!("the answer to {ticket:?} was ignored: {e}"))
        })?;
        self.flush();
        self.flush();
        Ok(())
    }

    /// Enables or disables external calls and tells the daemon now when connected.
    pub(crate) fn set_enabled(&mut self, enabled: bool) -> Result<(), Error> {
        self.channel_mut("change the enabled state")?.set_enabled(enabled);
        self.flush();
        Ok(())
    }

    /// Serves the host channel on stdin/stdout until stdin ends or the peer says `bye`.
    /// Running headless is the user's explicit enable, so the channel is enabled first.
    pub(crate) fn serve_stdio(&mut self) -> Result<(), Error> {
        let mut channel = match core::mem::replace(&mut self.stage, Stage::Declaring) {
            Stage::Ready(channel) => channel,
            other => {
                let e = wrong_state("serve stdio", &other);
                self.stage = other;
                return Err(e);
            }
        };
        channel.set_enabled(true);
        let result = connector::serve_stdio(&mut self.host, channel);
        self.stage = Stage::Finished(String::from("serve_stdio returned"));
        result.map_err(|e| Error::new(JfguiStatus::Io, format!("serving stdio failed: {e}")))
    }

    /// The task table, outside any callback.
    pub(crate) fn tasks_mut(&mut self) -> Result<&mut TaskTable, Error> {
        Ok(self.channel_mut("use tasks")?.dispatcher_mut().tasks_mut())
    }

    /// Sends queued task changes and enabled-state messages now (when connected), so the app
    /// need not pump just for them.
    pub(crate) fn flush(&mut self) {
        if let Stage::Connected(connector) = &mut self.stage {
            connector.poll(&mut self.host, 0);
        }
    }

    pub(crate) fn info(&self) -> JfguiInfo {
        match &self.stage {
            Stage::Ready(channel) => JfguiInfo {
                connected: false,
                registered: false,
                enabled: channel.dispatcher().is_enabled(),
            },
            Stage::Connected(connector) => JfguiInfo {
                connected: connector.is_connected(),
                registered: connector.is_connected()
                    && *connector.channel().status() == Status::Registered,
                enabled: connector.channel().dispatcher().is_enabled(),
            },
            Stage::Declaring | Stage::Finished(_) => {
                JfguiInfo { connected: false, registered: false, enabled: false }
            }
        }
    }

    /// Runs one daemon call through the dispatcher, as a request from the daemon would (the
    /// in-process tests drive callbacks this way, without a socket).
    #[cfg(test)]
    pub(crate) fn dispatch(
        &mut self,
        call: &jfgui_proto::channel::Call,
    ) -> Result<jfgui_proto::channel::CallResult, jfgui_host_sdk::ActionError> {
        let channel = match &mut self.stage {
            Stage::Ready(channel) => channel,
            Stage::Connected(connector) => connector.channel_mut(),
            other => panic!("no channel: {other:?}"),
        };
        channel.dispatcher_mut().handle(&mut self.host, 1, call)
    }

    /// What a connection would do between two pumps, without one: tell the app of withdrawn
    /// prompts, take the task changes as written, and run the calls allowed (the in-process
    /// tests follow a confirmation this way).
    #[cfg(test)]
    pub(crate) fn deliver(&mut self) -> std::vec::Vec<jfgui_host_sdk::TaskSnapshot> {
        let Stage::Ready(channel) = &mut self.stage else { panic!("not in-process") };
        let dispatcher = channel.dispatcher_mut();
        dispatcher.tick(&mut self.host);
        let mut events = dispatcher.take_task_events();
        dispatcher.run_allowed(&mut self.host);
        events.extend(dispatcher.take_task_events());
        events
    }

    /// Runs host-sdk's contract checks in-process on this handle's dispatcher and callbacks
    /// (the checks of `jfgui-agent check`), keeps the report's JSON and returns its length.
    /// Only between declaring and connecting: the checks call the app as a client would,
    /// without a daemon.
    pub(crate) fn check(&mut self, mutate: bool) -> Result<usize, Error> {
        let Stage::Ready(channel) = &mut self.stage else {
            return Err(wrong_state("run the checks", &self.stage));
        };
        let options = if mutate { Options::mutate() } else { Options::read_only() };
        let report = testing::check(channel.dispatcher_mut(), &mut self.host, &options);
        let json = jfgui_proto::encode(&report.to_json(), &APP_JSON_LIMITS).map_err(|e| {
            Error::new(JfguiStatus::Internal, format!("cannot encode the report: {e}"))
        })?;
        let json = String::from_utf8(json)
            .map_err(|_| Error::new(JfguiStatus::Internal, "the report is not UTF-8"))?;
        let len = json.len();
        self.report = Some(json);
        Ok(len)
    }

    /// The JSON of the last [`check`](State::check).
    pub(crate) fn report(&self) -> Result<&str, Error> {
        self.report.as_deref().ok_or_else(|| {
            Error::new(
                JfguiStatus::WrongState,
                "no checks have run on this handle (jfgui_host_check)",
            )
        })
    }

    /// Says `bye` to the daemon (waiting at most [`CLOSE_GRACE`] for it to be written).
    pub(crate) fn close(&mut self) {
        if let Stage::Connected(connector) = &mut self.stage {
            connector.close("exit", CLOSE_GRACE);
        }
    }
}

fn wait_for_c(connector: &Connector, wait: &Wait) -> JfguiWait {
    let fd = connection_fd(connector);
    let mut timeout_ms = match wait.timeout {
        None => -1,
        // Rounded up, so a 0.4 ms deadline does not become a busy loop of 0 ms waits.
        Some(t) => i64::try_from(t.as_micros().div_ceil(1000)).unwrap_or(i64::MAX),
    };
    if fd < 0 && connector.is_connected() {
        // No descriptor to watch (a Windows pipe): pump on a short timer instead, as
        // host-sdk's own `Connector::wait` does there.
        timeout_ms = if timeout_ms < 0 { PIPE_POLL_MS } else { timeout_ms.min(PIPE_POLL_MS) };
    }
    JfguiWait { fd, read: wait.read, write: wait.write, timeout_ms }
}

/// How often to pump a connection that has no descriptor to watch.
const PIPE_POLL_MS: i64 = 50;

#[cfg(unix)]
fn connection_fd(connector: &Connector) -> i32 {
    use std::os::fd::AsRawFd;
    connector.as_fd().map_or(-1, |fd| fd.as_raw_fd())
}

/// Windows pipes have no descriptor to watch: the app pumps on `timeout_ms`.
#[cfg(not(unix))]
fn connection_fd(_connector: &Connector) -> i32 {
    -1
}
