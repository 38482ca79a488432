//! The host channel (docs/PROTOCOL.md, "The host channel"): the private framed channel between the daemon and an app.
//!
//! A frame is a `u32` big-endian length followed by that many bytes of one strict-JSON object.
//! The app speaks first: [`AppMessage::Hello`], its action specs in [`AppMessage::Actions`]
//! pages of at most [`MAX_ACTIONS_PER_PAGE`], then [`AppMessage::Ready`]; the daemon answers
//! [`DaemonMessage::Welcome`] or [`DaemonMessage::Refused`]. Then the daemon sends
//! [`DaemonMessage::Request`]s with ids it chooses, and the app answers each with an
//! [`AppMessage::Reply`] naming that id, in any order. Task state changes flow as
//! [`AppMessage::Task`]; enabling/disabling as [`AppMessage::Enabled`]. Either side may send
//! `bye` before closing. `docs/PROTOCOL.md` is the full wire reference.
//!
//! The daemon checks the handshake with [`Hello::check_version`] and
//! [`validate_action_infos`] (a failure becomes the
//! [`Refused`] to send); both ends parse and encode frame bodies with [`frame_limits`].
//!
//! | part | file |
//! |---|---|
//! | message types | `channel/message.rs` |
//! | who asks, waiting tasks, withdrawn prompts (consent) | `channel/consent.rs` |
//! | a call's result in the client protocol's form | `channel/client_view.rs` |
//! | frame codec (sans-IO) | `channel/frame.rs` |
//! | the per-call messages without a value tree of `input`/`output` | `channel/per_call.rs` |
//! | the `activity` notice's frame without a value tree | `channel/notice.rs` |
//! | the app's side of the per-call messages without a value tree of their envelopes | `channel/app_call.rs` |

mod app_call;
mod call_wire;
mod client_view;
mod consent;
mod frame;
mod message;
mod notice;
mod per_call;

use crate::Limits;

pub use app_call::{decode_daemon_message, encode_reply_frame_into};
pub use consent::{
    Agent, Awaiting, Consent, ConsentAnswer, ConsentDecision, Withdraw, WithdrawReason,
};
pub use frame::{FrameDecoder, FrameError, HEADER_LEN, decode_message, encode_frame};
pub use message::*;
pub use notice::{decode_activity, encode_activity_frame, is_activity_frame};
pub use per_call::{decode_app_message, encode_request_frame};

/// The channel protocol version this crate speaks; checked in the handshake.
pub const CHANNEL_VERSION: u32 = 1;

/// Most action specs in one [`AppMessage::Actions`] page, so a large registration stays within
/// the JSON value bounds.
pub const MAX_ACTIONS_PER_PAGE: usize = 256;

/// Largest frame body by default: one maximal client message (1 MiB) plus 64 KiB of envelope.
pub const DEFAULT_MAX_FRAME: usize = 1024 * 1024 + 64 * 1024;

/// Most calls in one [`BatchCall`] (`actions/batch` takes 1–128).
pub const MAX_BATCH_CALLS: usize = 128;

/// Largest [`ReadResource::limit`] in bytes (`resources/read` chunks are 1–65536 bytes).
pub const MAX_RESOURCE_CHUNK: u32 = 65536;

/// Nesting the channel envelope adds around a client's value: the deepest case is a task
/// result inside a batch reply, `reply/outcome/ok/batch/results/[i]/outcome/task/result`.
pub const ENVELOPE_DEPTH: usize = 8;

/// Values the channel envelope adds around a client's values: per batch entry an `outcome`
/// object and a few members, plus the fixed members of the frame itself.
pub const ENVELOPE_VALUES: usize = 8 * MAX_BATCH_CALLS + 64;

/// The JSON bounds for frame bodies, given the bounds of client messages: whatever a client
/// may send must fit into a request frame, and whatever fits into a client response must fit
/// into a reply frame, so the byte bound becomes `max_frame` and depth and value count grow by
/// the envelope. Member and string bounds are unchanged (the envelope adds no members to a
/// client's containers beyond a batch's, which [`MAX_BATCH_CALLS`] keeps far below them).
///
/// Both ends must parse and encode frames with the same limits; `welcome.limits` tells the app
/// the daemon's `max_frame`.
pub const fn frame_limits(client: &Limits, max_frame: usize) -> Limits {
    Limits {
        max_bytes: max_frame,
        max_depth: client.max_depth + ENVELOPE_DEPTH,
        max_values: client.max_values + ENVELOPE_VALUES,
        max_members: client.max_members,
        max_string_bytes: client.max_string_bytes,
    }
}

#[cfg(test)]
mod tests {
    use alloc::string::String;
    use alloc::vec::Vec;

    use super::*;
    use crate::Value;

    /// The wire reference, whose examples must be exactly what this crate reads and writes.
    const PROTOCOL_MD: &str = include_str!("../../docs/PROTOCOL.md");

    /// `(direction, body)` of every ```` ```json app ```` / ```` ```json daemon ```` block.
    fn examples() -> Vec<(&'static str, &'static str)> {
        let mut out = Vec::new();
        let mut lines = PROTOCOL_MD.lines();
        while let Some(line) = lines.next() {
            if let Some(direction) = line.strip_prefix("```json ") {
                let body = lines.next().unwrap();
                assert_eq!(lines.next(), Some("```"), "one line per example: {body}");
                out.push((direction, body));
            }
        }
        out
    }

    fn tag(v: &Value) -> String {
        let m = v.as_object().unwrap();
        assert_eq!(m.len(), 1);
        String::from(m.keys().next().unwrap())
    }

    #[test]
    fn protocol_md_examples_decode_and_encode_to_the_same_bytes() {
        let limits = frame_limits(&Limits::DEFAULT, DEFAULT_MAX_FRAME);
        let mut app_tags = Vec::new();
        let mut daemon_tags = Vec::new();
        let mut call_tags = Vec::new();
        let mut result_tags = Vec::new();
        for (direction, body) in examples() {
            let reencoded = match direction {
                "app" => {
                    let m: AppMessage = decode_message(body.as_bytes(), &limits).unwrap();
                    encode_frame(&m, &limits, DEFAULT_MAX_FRAME).unwrap()
                }
                "daemon" => {
                    let m: DaemonMessage = decode_message(body.as_bytes(), &limits).unwrap();
                    encode_frame(&m, &limits, DEFAULT_MAX_FRAME).unwrap()
                }
                other => panic!("unknown direction {other}"),
            };
            assert_eq!(&reencoded[HEADER_LEN..], body.as_bytes());
            let v = crate::parse(body.as_bytes(), &limits).unwrap();
            let t = tag(&v);
            if let Some(call) = v.get("request").and_then(|r| r.get("call")) {
                call_tags.push(tag(call));
            }
            if let Some(ok) =
                v.get("reply").and_then(|r| r.get("outcome")).and_then(|o| o.get("ok"))
            {
                result_tags.push(tag(ok));
            }
            if direction == "app" { app_tags.push(t) } else { daemon_tags.push(t) }
        }
        for t in ["hello", "actions", "ready", "enabled", "reply", "task", "bye"] {
            assert!(app_tags.iter().any(|x| x == t), "no example of app message {t}");
        }
        for t in ["welcome", "refused", "request", "bye", "withdraw"] {
            assert!(daemon_tags.iter().any(|x| x == t), "no example of daemon message {t}");
        }
        for t in [
            "execute",
            "batch",
            "revision",
            "inspect",
            "listResources",
            "readResource",
            "render",
            "cancelTask",
        ] {
            assert!(call_tags.iter().any(|x| x == t), "no example of call {t}");
        }
        for t in [
            "executed",
            "deferred",
            "batch",
            "revision",
            "inspected",
            "resources",
            "chunk",
            "rendered",
            "task",
        ] {
            assert!(result_tags.iter().any(|x| x == t), "no example of result {t}");
        }
    }

    #[test]
    fn protocol_md_frame_example() {
        let frame = encode_frame(
            &AppMessage::Ready(Ready { action_count: 2 }),
            &Limits::DEFAULT,
            DEFAULT_MAX_FRAME,
        )
        .unwrap();
        let hex: Vec<String> = frame.iter().map(|b| alloc::format!("{b:02x}")).collect();
        let line = alloc::format!("{}  {}", hex[..4].join(" "), hex[4..].join(" "));
        assert!(PROTOCOL_MD.contains(&line), "{line}");
    }

    #[test]
    fn frame_limits_widen_by_the_envelope() {
        let l = frame_limits(&Limits::DEFAULT, DEFAULT_MAX_FRAME);
        assert_eq!(l.max_bytes, 1_114_112);
        assert_eq!(l.max_depth, 40);
        assert_eq!(l.max_values, 16384 + 1088);
        assert_eq!(l.max_members, Limits::DEFAULT.max_members);
        assert_eq!(l.max_string_bytes, Limits::DEFAULT.max_string_bytes);
    }
}
