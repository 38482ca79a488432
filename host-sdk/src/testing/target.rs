//! [`Target`]: the app under check, as the checks see it. It has exactly two implementations:
//! in-process over the app's own `Dispatcher` and `Host` (`in_process.rs`, for the app's
//! `cargo test` and the C ABI), and over the wire through the daemon (`jfgui-agent check`, in
//! the CLI). Both speak in host-channel terms ([`Call`] in, [`CallResult`] out), which is
//! exactly what a daemon request is, so the checks are written once.

use alloc::vec::Vec;

use jfgui_proto::ActionError;
use jfgui_proto::channel::{ActionInfo, Call, CallResult, TaskSnapshot};

/// The app's own answer to a call: a result or an application error. The outer `Result` of
/// [`Target`]'s methods is reserved for the target itself breaking (a lost connection), which
/// stops the run.
pub type Reply<T> = Result<T, ActionError>;

/// The app under check.
pub trait Target {
    /// Why the target cannot answer at all (in-process: never).
    type Error;

    /// Every action in registration order, as `actions/describe` shows it.
    fn actions(&mut self) -> Result<Vec<ActionInfo>, Self::Error>;

    /// One call as the daemon forwards it: [`Call::Execute`], [`Call::Batch`],
    /// [`Call::Inspect`], [`Call::ListResources`], [`Call::ReadResource`], [`Call::Render`],
    /// [`Call::CancelTask`] or [`Call::Revision`], answered with the matching
    /// [`CallResult`] variant.
    fn call(&mut self, call: &Call) -> Result<Reply<CallResult>, Self::Error>;

    /// A task's current state (`tasks/get`).
    fn task(&mut self, id: &str) -> Result<Reply<TaskSnapshot>, Self::Error>;

    /// Lets a little time pass so deferred work advances (in-process: the host's `tick`).
    fn pause(&mut self);
}
