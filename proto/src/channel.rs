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

pub use frame::{FrameDecoder, FrameError, decode_message, encode_frame};
pub use message::*;

/// The channel protocol version this crate speaks; checked in the handshake.
pub const CHANNEL_VERSION: u32 = 1;

/// Most action specs in one [`AppMessage::Actions`] page, so a large registration stays within
/// the JSON value bounds.
pub const MAX_ACTIONS_PER_PAGE: usize = 256;

/// Largest frame body by default: one maximal client message (1 MiB) plus 64 KiB of envelope.
pub const DEFAULT_MAX_FRAME: usize = 1024 * 1024 + 64 * 1024;
