//! `jfgui_host_answer`: the user's answer to a call that waits for a yes, given later (from a
//! dialog, a terminal, a timer), outside every callback.

use std::format;

use crate::answer::answer_of;
use crate::ffi::{self, Error, JfguiStatus};
use crate::handle::JfguiHost;
use crate::host_api::{handle, with_state};

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
