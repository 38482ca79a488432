//! The app's callback table (`JfguiCallbacks`) and the only place that calls into it: every
//! call is wrapped in `catch_unwind`, so a callback that unwinds (a Rust test shim's panic, a
//! C++ exception where the platform reports it as an unwind) becomes an error for that one
//! call instead of crossing into the dispatcher.
//!
//! The callbacks have the `"C-unwind"` ABI: for C that is the ordinary C calling convention;
//! it only tells Rust that an unwind may come out of them, so it can be caught here instead
//! of aborting the process.

use core::ffi::c_void;
use std::panic::{AssertUnwindSafe, catch_unwind};

use crate::reply::JfguiReply;

/// A UTF-8 string as pointer and length in bytes (not NUL-terminated). Borrowed: valid for
/// the duration of the call it is passed to.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct JfguiStr {
    /// The first byte (may be NULL when `len` is 0).
    pub ptr: *const u8,
    /// The length in bytes.
    pub len: usize,
}

impl JfguiStr {
    pub(crate) fn of(s: &str) -> JfguiStr {
        JfguiStr { ptr: s.as_ptr(), len: s.len() }
    }
}

/// Who is calling `execute`, and in what context.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct JfguiCallInfo {
    /// The daemon's request id (unique among its outstanding requests); 0 for local calls.
    pub request: u64,
    /// The call's index in a batch, or -1 when it is not part of one.
    pub batch_index: i64,
    /// True for a client call through the daemon, false for the app's own GUI.
    pub external: bool,
    /// True inside an atomic batch, between `begin_transaction` and commit or rollback.
    pub in_transaction: bool,
}

/// Runs one action. Write the result into `reply` with `jfgui_reply_json` (the output),
/// `jfgui_reply_deferred` (a task id) or `jfgui_reply_error`. `action` and `input` (the input
/// as JSON, already checked against the action's input schema) are valid during the call.
pub type JfguiExecuteFn = Option<
    unsafe extern "C-unwind" fn(
        user_data: *mut c_void,
        action: *const u8,
        action_len: usize,
        input: *const u8,
        input_len: usize,
        info: *const JfguiCallInfo,
        reply: *mut JfguiReply,
    ),
>;
/// The current revision: it must increase with every change of state, and only then.
pub type JfguiRevisionFn = Option<unsafe extern "C-unwind" fn(user_data: *mut c_void) -> u64>;
/// The capability bits granted to callers (opaque; they come from the platform layer).
pub type JfguiCapabilitiesFn = Option<unsafe extern "C-unwind" fn(user_data: *mut c_void) -> u64>;
/// Whether `action` can run now: write nothing (available) or `jfgui_reply_unavailable`.
pub type JfguiAvailabilityFn = Option<
    unsafe extern "C-unwind" fn(
        user_data: *mut c_void,
        action: *const u8,
        action_len: usize,
        reply: *mut JfguiReply,
    ),
>;
/// `state/inspect`: write the state with `jfgui_reply_json` (the revision is added for you),
/// or `jfgui_reply_error`.
pub type JfguiInspectFn = Option<
    unsafe extern "C-unwind" fn(
        user_data: *mut c_void,
        input: *const u8,
        input_len: usize,
        reply: *mut JfguiReply,
    ),
>;
/// Whether the app can roll back every change in `domain`, revision included.
pub type JfguiSupportsTransactionFn = Option<
    unsafe extern "C-unwind" fn(
        user_data: *mut c_void,
        domain: *const u8,
        domain_len: usize,
    ) -> bool,
>;
/// Starts a transaction over `domains` (`count` strings); `jfgui_reply_error` refuses it.
pub type JfguiBeginTransactionFn = Option<
    unsafe extern "C-unwind" fn(
        user_data: *mut c_void,
        domains: *const JfguiStr,
        count: usize,
        reply: *mut JfguiReply,
    ),
>;
/// Commits (one undo step) or rolls back (state *and* revision) the open transaction.
pub type JfguiEndTransactionFn = Option<unsafe extern "C-unwind" fn(user_data: *mut c_void)>;
/// The resources offered now: `jfgui_reply_json` with an array of
/// `{"uri", "name", "mimeType", "size"?}`.
pub type JfguiListResourcesFn =
    Option<unsafe extern "C-unwind" fn(user_data: *mut c_void, reply: *mut JfguiReply)>;
/// At most `limit` bytes of `uri` from `offset`: `jfgui_reply_resource`, `jfgui_reply_error`,
/// or nothing (no such resource).
pub type JfguiReadResourceFn = Option<
    unsafe extern "C-unwind" fn(
        user_data: *mut c_void,
        uri: *const u8,
        uri_len: usize,
        offset: u64,
        limit: u32,
        reply: *mut JfguiReply,
    ),
>;
/// A client asked to cancel task `id` (now `cancelling`): stop it at a safe point and call
/// `jfgui_host_task_cancelled`. Called once per request.
pub type JfguiCancelTaskFn =
    Option<unsafe extern "C-unwind" fn(user_data: *mut c_void, id: *const u8, id_len: usize)>;
/// Advances deferred work (the `jfgui_host_task_*` functions work inside it); returns the
/// milliseconds until it wants to run again, or -1 for "only when something arrives".
pub type JfguiTickFn = Option<unsafe extern "C-unwind" fn(user_data: *mut c_void) -> i64>;
/// A client's call of an action declared with `"confirm": true` passed every check and has no
/// standing grant: ask the user. Return a `JFGUI_ANSWER_*` value: `JFGUI_ANSWER_LATER` to show a
/// prompt and answer with `jfgui_host_answer` later, or the answer now. Any other value is
/// taken as `JFGUI_ANSWER_NO_UI` (nothing runs). `confirmation` and its strings are valid
/// during the call only: copy the ticket to answer later.
pub type JfguiConfirmFn = Option<
    unsafe extern "C-unwind" fn(
        user_data: *mut c_void,
        confirmation: *const JfguiConfirmation,
    ) -> i32,
>;
/// The prompt for `ticket` was withdrawn (the caller cancelled, gave up or went away, or
/// agent access was turned off): close it; answering it now does nothing.
pub type JfguiWithdrawConfirmationFn = Option<
    unsafe extern "C-unwind" fn(user_data: *mut c_void, ticket: *const u8, ticket_len: usize),
>;

/// A call waiting for the user's answer, as the `confirm` callback gets it. Every string is
/// printable on one line (control characters shown escaped), so it can go straight into a
/// prompt.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct JfguiConfirmation {
    /// The ticket to pass to `jfgui_host_answer`: the id of the task the caller follows.
    pub ticket: JfguiStr,
    /// The action asked about (the first, for a batch).
    pub action: JfguiStr,
    /// Its title, or its name when it has none.
    pub title: JfguiStr,
    /// What the user is asked to allow: the title, or every title of a batch's calls.
    pub summary: JfguiStr,
    /// Who asks, short: the agent executable's file name, or "An unknown agent".
    pub agent_name: JfguiStr,
    /// Who asks, in full: the executable's path and what the client says it is, marked as
    /// a claim ("/usr/bin/claude (says it is \"claude-code 1.2\")").
    pub agent_label: JfguiStr,
    /// Whether the prompt may offer "always allow" (`JFGUI_ANSWER_ALLOW_ALWAYS`).
    pub may_always: bool,
    /// All of it as JSON: `{"ticket", "calls": [{"index"?, "action", "title", "description",
    /// "input"}], "batchLen"?, "agent": {"exe", "pid"?, "says"?, "transport"} or null,
    /// "mayAlways"}`.
    pub json: JfguiStr,
}

/// The app's callbacks. `execute` and `revision` are required; every other member may be NULL
/// and then behaves like the Rust `Host` trait's default: `capabilities` 0 (actions that need
/// capability bits are refused), always available, `inspect` answers `{}`, no transactions
/// (atomic batches that write are refused in preflight), no resources, no cancel
/// notification (poll `jfgui_host_task_state`), no tick. `supports_transaction` needs all
/// three of begin, commit and rollback.
///
/// The library copies this table in `jfgui_host_new`; the app's copy may be freed afterwards.
/// Callbacks run only inside `jfgui_host_connect`, `jfgui_host_pump`,
/// `jfgui_host_set_enabled`, the `jfgui_host_task_*` functions and `jfgui_host_serve_stdio`,
/// on the calling thread (and `confirm`'s calls, once allowed, inside `jfgui_host_answer`).
/// They must not unwind (C++ exceptions, `longjmp`) out of the callback.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct JfguiCallbacks {
    /// Required.
    pub execute: JfguiExecuteFn,
    /// Required.
    pub revision: JfguiRevisionFn,
    /// Optional (NULL: no capability bits granted).
    pub capabilities: JfguiCapabilitiesFn,
    /// Optional (NULL: always available).
    pub availability: JfguiAvailabilityFn,
    /// Optional (NULL: `{}`).
    pub inspect: JfguiInspectFn,
    /// Optional (NULL: no domain supports transactions).
    pub supports_transaction: JfguiSupportsTransactionFn,
    /// Required with `supports_transaction`.
    pub begin_transaction: JfguiBeginTransactionFn,
    /// Required with `supports_transaction`.
    pub commit_transaction: JfguiEndTransactionFn,
    /// Required with `supports_transaction`.
    pub rollback_transaction: JfguiEndTransactionFn,
    /// Optional (NULL: no resources).
    pub list_resources: JfguiListResourcesFn,
    /// Optional (NULL: every resource is unknown).
    pub read_resource: JfguiReadResourceFn,
    /// Optional (NULL: the app polls `jfgui_host_task_state`).
    pub cancel_task: JfguiCancelTaskFn,
    /// Optional (NULL: no periodic work).
    pub tick: JfguiTickFn,
    /// Optional (NULL: the app cannot ask, so calls of `confirm` actions fail
    /// `not_executed/no_confirmation_ui` and nothing of them runs).
    pub confirm: JfguiConfirmFn,
    /// Optional (NULL: nothing to close).
    pub withdraw_confirmation: JfguiWithdrawConfirmationFn,
}

/// A callback unwound instead of returning.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Unwound;

/// The non-NULL function types of the two required members (`Option<F>` iterates over its
/// `F`, which names `F` without repeating the signature).
type ExecuteFn = <JfguiExecuteFn as IntoIterator>::Item;
type RevisionFn = <JfguiRevisionFn as IntoIterator>::Item;

/// A checked copy of the app's table with its user-data pointer.
#[derive(Debug)]
pub(crate) struct Callbacks {
    table: JfguiCallbacks,
    execute: ExecuteFn,
    revision: RevisionFn,
    user_data: *mut c_void,
}

/// Runs `f`, turning an unwind into [`Unwound`].
fn guarded<R>(f: impl FnOnce() -> R) -> Result<R, Unwound> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|_| Unwound)
}

impl Callbacks {
    /// Checks the required members and the transaction trio.
    pub(crate) fn new(
        table: JfguiCallbacks,
        user_data: *mut c_void,
    ) -> Result<Callbacks, &'static str> {
        let (Some(execute), Some(revision)) = (table.execute, table.revision) else {
            return Err("the execute and revision callbacks are required");
        };
        let trio = [
            table.begin_transaction.is_some(),
            table.commit_transaction.is_some(),
            table.rollback_transaction.is_some(),
        ];
        if table.supports_transaction.is_some() && trio.contains(&false) {
            return Err(
                "supports_transaction needs begin_transaction, commit_transaction and rollback_transaction",
            );
        }
        Ok(Callbacks { table, execute, revision, user_data })
    }

    // A note for every call below. SAFETY: `jfgui_host_new`'s contract makes each non-NULL member a
    // function of the declared signature that accepts `user_data`; every pointer passed points
    // to memory that stays valid and unchanged for the duration of the call (Rust strings and
    // slices borrowed by this frame, and `reply`, which the callee may only use during the
    // call).

    pub(crate) fn execute(
        &self,
        action: &str,
        input: &[u8],
        info: &JfguiCallInfo,
        reply: &mut JfguiReply,
    ) -> Result<(), Unwound> {
        let f = self.execute;
        // SAFETY: see the note above these methods.
        guarded(|| unsafe {
            f(
                self.user_data,
                action.as_ptr(),
                action.len(),
                input.as_ptr(),
                input.len(),
                info,
                reply,
            )
        })
    }

    pub(crate) fn revision(&self) -> Result<u64, Unwound> {
        let f = self.revision;
        // SAFETY: see the note above these methods.
        guarded(|| unsafe { f(self.user_data) })
    }

    /// `None` when the app has no such callback.
    pub(crate) fn capabilities(&self) -> Option<Result<u64, Unwound>> {
        let f = self.table.capabilities?;
        // SAFETY: see the note above these methods.
        Some(guarded(|| unsafe { f(self.user_data) }))
    }

    pub(crate) fn availability(
        &self,
        action: &str,
        reply: &mut JfguiReply,
    ) -> Option<Result<(), Unwound>> {
        let f = self.table.availability?;
        // SAFETY: see the note above these methods.
        Some(guarded(|| unsafe { f(self.user_data, action.as_ptr(), action.len(), reply) }))
    }

    pub(crate) fn inspect(
        &self,
        input: &[u8],
        reply: &mut JfguiReply,
    ) -> Option<Result<(), Unwound>> {
        let f = self.table.inspect?;
        // SAFETY: see the note above these methods.
        Some(guarded(|| unsafe { f(self.user_data, input.as_ptr(), input.len(), reply) }))
    }

    pub(crate) fn supports_transaction(&self, domain: &str) -> Option<Result<bool, Unwound>> {
        let f = self.table.supports_transaction?;
        // SAFETY: see the note above these methods.
        Some(guarded(|| unsafe { f(self.user_data, domain.as_ptr(), domain.len()) }))
    }

    pub(crate) fn begin_transaction(
        &self,
        domains: &[&str],
        reply: &mut JfguiReply,
    ) -> Option<Result<(), Unwound>> {
        let f = self.table.begin_transaction?;
        let strs: std::vec::Vec<JfguiStr> = domains.iter().map(|d| JfguiStr::of(d)).collect();
        // SAFETY: see the note above these methods.
        Some(guarded(|| unsafe { f(self.user_data, strs.as_ptr(), strs.len(), reply) }))
    }

    pub(crate) fn commit_transaction(&self) -> Option<Result<(), Unwound>> {
        let f = self.table.commit_transaction?;
        // SAFETY: see the note above these methods.
        Some(guarded(|| unsafe { f(self.user_data) }))
    }

    pub(crate) fn rollback_transaction(&self) -> Option<Result<(), Unwound>> {
        let f = self.table.rollback_transaction?;
        // SAFETY: see the note above these methods.
        Some(guarded(|| unsafe { f(self.user_data) }))
    }

    pub(crate) fn list_resources(&self, reply: &mut JfguiReply) -> Option<Result<(), Unwound>> {
        let f = self.table.list_resources?;
        // SAFETY: see the note above these methods.
        Some(guarded(|| unsafe { f(self.user_data, reply) }))
    }

    pub(crate) fn read_resource(
        &self,
        uri: &str,
        offset: u64,
        limit: u32,
        reply: &mut JfguiReply,
    ) -> Option<Result<(), Unwound>> {
        let f = self.table.read_resource?;
        // SAFETY: see the note above these methods.
        Some(guarded(|| unsafe {
            f(self.user_data, uri.as_ptr(), uri.len(), offset, limit, reply)
        }))
    }

    pub(crate) fn cancel_task(&self, id: &str) -> Option<Result<(), Unwound>> {
        let f = self.table.cancel_task?;
        // SAFETY: see the note above these methods.
        Some(guarded(|| unsafe { f(self.user_data, id.as_ptr(), id.len()) }))
    }

    pub(crate) fn tick(&self) -> Option<Result<i64, Unwound>> {
        let f = self.table.tick?;
        // SAFETY: see the note above these methods.
        Some(guarded(|| unsafe { f(self.user_data) }))
    }

    pub(crate) fn confirm(&self, confirmation: &JfguiConfirmation) -> Option<Result<i32, Unwound>> {
        let f = self.table.confirm?;
        // SAFETY: see the note above these methods.
        Some(guarded(|| unsafe { f(self.user_data, confirmation) }))
    }

    pub(crate) fn withdraw_confirmation(&self, ticket: &str) -> Option<Result<(), Unwound>> {
        let f = self.table.withdraw_confirmation?;
        // SAFETY: see the note above these methods.
        Some(guarded(|| unsafe { f(self.user_data, ticket.as_ptr(), ticket.len()) }))
    }
}
