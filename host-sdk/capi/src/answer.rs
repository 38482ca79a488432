//! The values of the user's answer to a call that waits for a yes, as the `confirm` callback
//! returns them and `jfgui_host_answer` takes them. They are `int32_t` constants rather than an
//! enum type: a value from C outside an enum's range would be undefined behaviour in Rust.

use jfgui_host_sdk::Answer;

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
