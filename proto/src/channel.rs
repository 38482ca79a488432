//! The host channel (SPEC S8): the private framed channel between the daemon and an app.
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
//! | part | file |
//! |---|---|
//! | message types | `channel/message.rs` |
//! | frame codec (sans-IO) | `channel/frame.rs` |

mod frame;
mod message;

use crate::Limits;

pub use frame::{FrameDecoder, FrameError, HEADER_LEN, decode_message, encode_frame};
pub use message::*;

/// The channel protocol version this crate speaks; checked in the handshake.
pub const CHANNEL_VERSION: u32 = 1;

/// Most action specs in one [`AppMessage::Actions`] page, so a large registration stays within
/// the JSON value bounds.
pub const MAX_ACTIONS_PER_PAGE: usize = 256;

/// Largest frame body by default: one maximal client message (1 MiB) plus 64 KiB of envelope.
pub const DEFAULT_MAX_FRAME: usize = 1024 * 1024 + 64 * 1024;

/// Most calls in one [`BatchCall`] (SPEC S3).
pub const MAX_BATCH_CALLS: usize = 128;

/// Largest [`ReadResource::limit`] in bytes (SPEC S4).
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
