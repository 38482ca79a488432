//! The user's answers to calls that wait for a yes: the `JFGUI_ANSWER_*` values the `confirm`
//! callback returns, and `jfgui_host_answer` for an answer given later (from a dialog, a
//! terminal, a timer), outside every callback. They are `int32_t` constants rather than an
//! enum type: a value from C outside an enum's range would be undefined behaviour in Rust.

use std::format;

use jfgui_host_sdk::Answer;

use crate::ffi::{self, Error, JfguiStatus};
use crate::handle::JfguiHost;
use crate::host_api::{handle, with_state};

/// (`confirm` only) A prompt is shown; the answer comes through `jfgui_host_answer`.
pub const JFGUI_ANSWER_LATER: i32 = 0;
/// Run this call.
pub const JFGUI_ANSWER_ALLOW: i32 = 1;
/// Run it, and let this agent run this action without asking from now on (offer it only when
/// `may_always`).
pub const JFGUI_ANSWER_ALLOW_ALWAYS: i32 = 2;
/// Do not run it: the caller gets `not_executed/denied_by_user`.
pub const JFGUI_ANSWER_DENY: i32 = 3;
/// Nobody can be asked (no window, no terminal): `not_executed/no_confirmation_ui`.
pub const JFGUI_ANSWER_NO_UI: i32 = 4;

/// The answer `value` stands for; `None` for `JFGUI_ANSWER_LATER` and anything unknown.
pub(crate) fn answer_of(value: i32) -> Option<Answer> {
    match value {
        JFGUI_ANSWER_ALLOW => Some(Answer::Allow),
        JFGUI_ANSWER_ALLOW_ALWAYS => Some(Answer::AllowAlways),
        JFGUI_ANSWER_DENY => Some(Answer::Deny),
        JFGUI_ANSWER_NO_UI => Some(Answer::NoUi),
        _ => None,
    }
}

/// The user's answer (a `JFGUI_ANSWER_*` other than `LATER`) to the prompt of `ticket`, given
/// after the `confirm` callback returned `JFGUI_ANSWER_LATER`. On a yes the task's update is
/// sent and, once written, the call runs inside this function (the `execute` callback is
/// called from here); if the connection cannot take the update yet, the next
/// `jfgui_host_pump` runs it. `JFGUI_STATUS_TASK` when nothing waits under `ticket` any more
/// (withdrawn, cancelled, answered before): the answer is ignored.
///
/// # Safety
///
/// `h` is a live handle; `ticket` points to `ticket_len` readable bytes of UTF-8.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn jfgui_host_answer(
    h: *mut JfguiHost,
    ticket: *const u8,
    ticket_len: usize,
    answer: i32,
) -> JfguiStatus {
    // SAFETY: by this function's contract.
    let handle = unsafe { handle(h) };
    // SAFETY: by this function's contract.
    let ticket = unsafe { ffi::text(ticket, ticket_len, "ticket") };
    with_state(handle, |state| {
        let ticket = ticket?;
        let answer = answer_of(answer).ok_or_else(|| {
            Error::new(
                JfguiStatus::InvalidArgument,
                format!(
                    "{answer} is not an answer (JFGUI_ANSWER_ALLOW, _ALLOW_ALWAYS, _DENY or _NO_UI)"
                ),
            )
        })?;
        state.answer(ticket, answer)
    })
}
