//! Contract checks for an app's integration (feature `testing`): the checks `jfgui-agent check`
//! runs against a running app, run here in-process against the app's real [`Host`] and
//! [`Dispatcher`], with no daemon, from the app's own `cargo test`:
//!
//! ```
//! # use jfgui_host_sdk::{ActionError, ActionSpec, Context, Dispatcher, Execution, Host, Value};
//! # struct MyApp { revision: u64 }
//! # impl Host for MyApp {
//! #     fn actions(&self) -> &[ActionSpec] { &[] }
//! #     fn revision(&self) -> u64 { self.revision }
//! #     fn capabilities(&self) -> u64 { 0 }
//! #     fn execute(&mut self, _: &mut Context<'_>, _: &ActionSpec, _: &Value)
//! #         -> Result<Execution, ActionError> { unreachable!() }
//! # }
//! use jfgui_host_sdk::testing::{self, Options};
//!
//! let mut app = MyApp { revision: 1 };
//! let mut dispatcher = Dispatcher::new(&app).unwrap();
//! // `mutate` runs the write checks too: they change the app's state, as an agent would.
//! testing::check(&mut dispatcher, &mut app, &Options::mutate()).assert_passed();
//! ```
//!
//! # What is checked
//!
//! | check | verdict |
//! |---|---|
//! | `lint` | per action: a description longer than the name, an object input schema refusing unknown members, a declared output schema, a dotted `noun.verb` name (WARN otherwise) |
//! | `inspect` | `state/inspect` twice answers the same revision |
//! | `read` | every read action, with a generated input, leaves the revision unchanged |
//! | `render` | `view/render` (`ui.render`) names a resource that is a decodable PNG |
//! | `resource` | every listed resource reads to its end in chunks whose sizes add up |
//! | `stale_write` | with `mutate`: a write with a stale `expectedRevision` is refused with `stale_revision` and changes nothing |
//! | `invalid_write` | with `mutate`: a write whose input violates its schema is refused and changes nothing |
//! | `valid_write` | with `mutate`: a write with a generated valid input moves the revision |
//! | `task_cancel` | with `mutate`: a deferred write's task goes `cancelling` → `cancelled` |
//! | `atomic_batch` | with `mutate`: an atomic batch of a valid and an invalid call is refused, state and revision restored |
//!
//! Inputs come from each action's own schema: its minimal valid instance and a value it
//! refuses ([`jfgui_proto::schema::minimal_instance`], `violating_instance`). "Changes
//! nothing" is judged by the revision and by `state/inspect` with no input, so an app whose
//! inspection shows its state gets the sharper verdicts. Members of the inspected state that
//! change on a refused call while the revision stays are presentation (view geometry, frame
//! counters, the last agent action shown): the first time is a WARN naming them, and they are
//! left out of every later comparison.
//!
//! # Over the wire and in-process
//!
//! The checks are written once against [`Target`]: host-channel calls in, results out. This
//! module's [`check`] drives the app's dispatcher directly; `jfgui-agent check APP` implements
//! the same trait over JSON control protocol 1 through the daemon; the C ABI's
//! `jfgui_host_check` (and Python's `jfgui_host.testing`) call [`check`] on their handle.
//!
//! A rendering counts as a PNG when the `png` crate decodes it completely (chunk CRCs, the
//! zlib checksum, every row), which is why this feature needs `std`.

mod in_process;
mod lint;
mod png;
mod reads;
mod report;
mod session;
mod target;
#[cfg(test)]
mod tests;
mod writes;

use alloc::vec::Vec;
use core::time::Duration;

pub use report::{Check, Finding, Level, Report, Subject};
pub use target::{Reply, Target};

use crate::{Dispatcher, Host};
use session::Session;

/// How long a cancelled task may stay `cancelling` before `task_cancel` FAILs: a host stops at
/// its next safe checkpoint, which should come within seconds.
pub const DEFAULT_CANCEL_PATIENCE: Duration = Duration::from_secs(5);

/// What a run does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    /// Run the write checks too. They change the app's state as an agent would (writes with
    /// generated inputs, a cancelled task), so use a scratch document.
    pub mutate: bool,
    /// See [`DEFAULT_CANCEL_PATIENCE`].
    pub cancel_patience: Duration,
}

impl Options {
    /// The read-only checks: lint, inspection, reads, rendering, resources.
    pub const fn read_only() -> Options {
        Options { mutate: false, cancel_patience: DEFAULT_CANCEL_PATIENCE }
    }

    /// Every check, writes included.
    pub const fn mutate() -> Options {
        Options { mutate: true, ..Options::read_only() }
    }
}

impl Default for Options {
    /// [`Options::read_only`].
    fn default() -> Options {
        Options::read_only()
    }
}

/// A run that stopped because the target broke (e.g. the app's connection was lost): what was
/// found until then, and why it stopped.
#[derive(Debug)]
pub struct Interrupted<E> {
    /// The findings before the target broke.
    pub report: Report,
    /// Why it broke.
    pub error: E,
}

/// Runs the checks against `target`.
pub fn run<T: Target>(target: &mut T, options: &Options) -> Result<Report, Interrupted<T::Error>> {
    let mut session = Session { target, findings: Vec::new(), presentation: Vec::new() };
    let outcome = every_check(&mut session, options);
    let report = Report { mutate: options.mutate, findings: session.findings };
    match outcome {
        Ok(()) => Ok(report),
        Err(error) => Err(Interrupted { report, error }),
    }
}

fn every_check<T: Target>(s: &mut Session<'_, T>, options: &Options) -> Result<(), T::Error> {
    let actions = s.target.actions()?;
    s.findings.extend(lint::lint(&actions));
    s.check_inspect()?;
    s.check_reads(&actions)?;
    s.check_render(&actions)?;
    s.check_resources()?;
    if options.mutate {
        s.check_writes(&actions, options.cancel_patience)?;
    }
    Ok(())
}

/// Runs the checks in-process: every call goes through `dispatcher` into `host`, as a daemon
/// request would (the dispatcher is enabled for the run and then put back as it was), and
/// deferred work advances through the host's `tick`.
pub fn check<H: Host + ?Sized>(
    dispatcher: &mut Dispatcher,
    host: &mut H,
    options: &Options,
) -> Report {
    let mut target = in_process::InProcess::new(dispatcher, host);
    match run(&mut target, options) {
        Ok(report) => report,
        Err(interrupted) => match interrupted.error {},
    }
}
