//! The handshake of a new app connection: `hello` → `actions` pages → `ready`,
//! answered by `welcome` or `refused{reason}`, all within the handshake deadline.
//!
//! The registration is bounded before it is cached: at most [`MAX_ACTIONS`] actions in pages
//! of at most `MAX_ACTIONS_PER_PAGE`, at most [`MAX_REGISTRATION_BYTES`] of `actions` frames,
//! and every spec valid (`validate_action_infos`).

use jfgui_proto::channel::{
    ActionInfo, AppMessage, DaemonMessage, FrameError, MAX_ACTIONS_PER_PAGE, Refused, encode_frame,
};
use jfgui_proto::validate_action_infos;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};

use super::io::{FrameReader, LinkEnd};
use crate::EngineConfig;

/// Most actions one app may register (16 pages of [`MAX_ACTIONS_PER_PAGE`]); keeps the
/// registration cache of a hostile app bounded.
pub const MAX_ACTIONS: usize = 16 * MAX_ACTIONS_PER_PAGE;

/// Most bytes of `actions` frames one app may send: with [`MAX_ACTIONS`], this bounds what one
/// app's handshake may make the daemon read and decode (real apps, a few KiB of schemas per
/// action at most, stay far below it); what all registered apps hold together is bounded by
/// the registration budget (`EngineConfig::max_registration_bytes`).
pub const MAX_REGISTRATION_BYTES: usize = 4 << 20;

/// Longest display name kept, in bytes; a longer one is cut at a character boundary and
/// marked truncated, never refused: long window titles must not prevent activation.
pub const MAX_DISPLAY_NAME: usize = 1024;

/// What the app announced in its handshake, checked and bounded.
#[derive(Debug)]
pub struct Announced {
    /// The display name as sent, cut to [`MAX_DISPLAY_NAME`] bytes.
    pub display_name: String,
    /// Whether the display name was cut.
    pub display_name_truncated: bool,
    /// The pid the app announced.
    pub pid: u32,
    /// Whether its dispatcher starts enabled.
    pub enabled: bool,
    /// Whether it asked for `activity` notices.
    pub activity: bool,
    /// The registered actions, in order.
    pub actions: Vec<ActionInfo>,
}

/// `refused{invalid_registration}` with `message`.
fn invalid_registration(message: impl Into<String>) -> Refused {
    Refused { reason: Refused::INVALID_REGISTRATION.to_string(), message: message.into() }
}

/// Reads the handshake. The outer error ends the connection without a word (the peer is not
/// speaking the channel, or said `bye`); the inner one is the refusal to send.
pub(super) async fn read<R: AsyncRead + Unpin>(
    reader: &mut FrameReader<R>,
) -> Result<Result<Announced, Refused>, LinkEnd> {
    let hello = match reader.next().await? {
        AppMessage::Hello(h) => h,
        AppMessage::Bye(b) => return Err(LinkEnd::Bye(b.reason)),
        _ => return Ok(Err(invalid_registration("the first message must be hello"))),
    };
    if let Err(refused) = hello.check_version() {
        return Ok(Err(refused));
    }
    let mut actions: Vec<ActionInfo> = Vec::new();
    let mut bytes = 0;
    loop {
        match reader.next().await? {
            AppMessage::Actions(page) => {
                bytes += reader.last_len();
                if bytes > MAX_REGISTRATION_BYTES {
                    return Ok(Err(invalid_registration(format!(
                        "a registration holds at most {MAX_REGISTRATION_BYTES} bytes of actions"
                    ))));
                }
                if page.actions.len() > MAX_ACTIONS_PER_PAGE {
                    return Ok(Err(invalid_registration(format!(
                        "an actions page holds at most {MAX_ACTIONS_PER_PAGE} actions"
                    ))));
                }
                if actions.len() + page.actions.len() > MAX_ACTIONS {
                    return Ok(Err(invalid_registration(format!(
                        "an app registers at most {MAX_ACTIONS} actions"
                    ))));
                }
                actions.extend(page.actions);
            }
            AppMessage::Ready(ready) => {
                if usize::try_from(ready.action_count).ok() != Some(actions.len()) {
                    return Ok(Err(invalid_registration(format!(
                        "ready announced {} actions but {} were sent",
                        ready.action_count,
                        actions.len()
                    ))));
                }
                if let Err(e) = validate_action_infos(&actions) {
                    return Ok(Err(Refused::from(e)));
                }
                let (display_name, display_name_truncated) =
                    bounded_display_name(hello.display_name);
                return Ok(Ok(Announced {
                    display_name,
                    display_name_truncated,
                    pid: hello.pid,
                    enabled: hello.enabled,
                    activity: hello.activity,
                    actions,
                }));
            }
            AppMessage::Bye(b) => return Err(LinkEnd::Bye(b.reason)),
            _ => {
                return Ok(Err(invalid_registration(
                    "only actions pages and ready may follow hello",
                )));
            }
        }
    }
}

/// `name` cut to [`MAX_DISPLAY_NAME`] bytes at a character boundary, and whether it was cut.
fn bounded_display_name(mut name: String) -> (String, bool) {
    if name.len() <= MAX_DISPLAY_NAME {
        return (name, false);
    }
    let cut = (0..=MAX_DISPLAY_NAME).rev().find(|&i| name.is_char_boundary(i)).unwrap_or(0);
    name.truncate(cut);
    name.shrink_to_fit();
    (name, true)
}

/// Whether a handshake that ended the connection deserves a `refused` before the close: a peer
/// that speaks the channel but sent a message we cannot take (an unknown field from a newer
/// app, a wrong sequence) learns why: every handshake ends in `welcome` or `refused{reason}`. A peer whose bytes
/// are not frames at all (a header over the limit, a body that is not JSON) is only dropped: it
/// is not listening for frames.
pub(super) fn deserves_refusal(end: &LinkEnd) -> bool {
    matches!(end, LinkEnd::Frame(FrameError::Message(_)) | LinkEnd::Violation(_))
}

/// Sends `refused{reason, message}` and closes the write side, within the handshake deadline.
pub(super) async fn refuse<W: AsyncWrite + Unpin>(
    wr: &mut W,
    config: &EngineConfig,
    reason: &str,
    message: &str,
) {
    let refused = DaemonMessage::Refused(Refused {
        reason: reason.to_string(),
        message: message.to_string(),
    });
    if let Ok(frame) = encode_frame(&refused, &config.frame_limits(), config.max_frame) {
        let _ = tokio::time::timeout(config.handshake_deadline, async {
            let _ = wr.write_all(&frame).await;
            let _ = wr.shutdown().await;
        })
        .await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_names_are_cut_at_a_char_boundary_and_marked() {
        let short = "Notepad — tést".to_string();
        assert_eq!(bounded_display_name(short.clone()), (short, false));
        let exact = "x".repeat(MAX_DISPLAY_NAME);
        assert_eq!(bounded_display_name(exact.clone()), (exact, false));
        // 'é' is two bytes: 1023 'a' + 'é' would end at byte 1025, so the 'é' goes.
        let name = format!("{}é tail", "a".repeat(MAX_DISPLAY_NAME - 1));
        let (cut, truncated) = bounded_display_name(name);
        assert!(truncated);
        assert_eq!(cut, "a".repeat(MAX_DISPLAY_NAME - 1));
    }
}
