//! The `activity` notice's frame written straight from its texts, without the value tree the
//! serde mapping builds: the daemon makes one after every recorded call of an app that asked
//! for them, so what it costs is paid per call.
//!
//! The bytes are exactly what [`encode_frame`] writes for `DaemonMessage::Activity` (the same
//! member order, the same string escapes: the encoder's own [`write_string`]). Whenever that
//! would fail a bound (a string, the message or the frame too large; bounds too tight for the
//! message's fixed shape), the general path runs instead, so the error is its error too.
//!
//! The app may hold a notice undecoded until it has time for it: [`is_activity_frame`] tells
//! one from its first bytes, and [`decode_activity`] decodes it later as strictly as
//! [`decode_message`] would have.
//!
//! [`encode_frame`]: super::encode_frame
//! [`decode_message`]: super::decode_message

use alloc::string::String;
use alloc::vec::Vec;

use serde::Deserialize;

use super::frame::HEADER_LEN;
use super::{Activity, DaemonMessage, FrameError};
use crate::Limits;
use crate::json::write_string;

/// How every `activity` frame body starts (the daemon's encoder writes no whitespace).
const PREFIX: &[u8] = br#"{"activity":"#;

/// Depth, values and members of the message: `{"activity":{4 strings}}` at most.
const DEPTH: usize = 2;
const VALUES: usize = 6;
const MEMBERS: usize = 4;
/// The longest member name (`activity`, `outcome`).
const LONGEST_NAME: usize = 8;

/// Encodes `DaemonMessage::Activity(activity)` into a frame, byte for byte what
/// [`encode_frame`](super::encode_frame) writes, with the same errors.
pub fn encode_activity_frame(
    activity: &Activity,
    limits: &Limits,
    max_frame: usize,
) -> Result<Vec<u8>, FrameError> {
    let Activity { client, action, outcome, reason } = activity;
    let texts = [client, action, outcome].into_iter().chain(reason);
    let fits_shape = limits.max_depth >= DEPTH
        && limits.max_values >= VALUES
        && limits.max_members >= MEMBERS
        && limits.max_string_bytes >= LONGEST_NAME;
    if fits_shape && texts.clone().all(|t| t.len() <= limits.max_string_bytes) {
        // Escapes make a text at most 6 times longer; most are plain.
        let size = texts.map(|t| t.len() + 2).sum::<usize>() + 64;
        let mut frame = Vec::with_capacity(HEADER_LEN + size);
        frame.extend_from_slice(&[0; HEADER_LEN]);
        frame.extend_from_slice(br#"{"activity":{"client":"#);
        write_string(client, &mut frame);
        frame.extend_from_slice(br#","action":"#);
        write_string(action, &mut frame);
        frame.extend_from_slice(br#","outcome":"#);
        write_string(outcome, &mut frame);
        if let Some(reason) = reason {
            frame.extend_from_slice(br#","reason":"#);
            write_string(reason, &mut frame);
        }
        frame.extend_from_slice(b"}}");
        let len = frame.len() - HEADER_LEN;
        if let Ok(announced) = u32::try_from(len)
            && len <= limits.max_bytes
            && len <= max_frame
        {
            frame[..HEADER_LEN].copy_from_slice(&announced.to_be_bytes());
            return Ok(frame);
        }
    }
    super::encode_frame(&DaemonMessage::Activity(activity.clone()), limits, max_frame)
}

/// Whether a frame body is an `activity` notice, from its first bytes: if it is valid at all,
/// it can only be `DaemonMessage::Activity` (a message is a one-member object). A body that
/// is not told apart here (other spacing) is decoded as any other message.
pub fn is_activity_frame(body: &[u8]) -> bool {
    body.starts_with(PREFIX)
}

/// `{"activity": …}` and nothing else: the one shape [`is_activity_frame`] lets through.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Notice {
    activity: Activity,
}

/// Decodes a frame body that [`is_activity_frame`] picked: strict JSON within `limits`,
/// unknown fields refused, exactly what [`decode_message`](super::decode_message) accepts as
/// `DaemonMessage::Activity`.
///
/// A body in the daemon's own form whose texts need no unescaping is read without a value
/// tree; anything else (escapes, other member order or spacing, every error) goes the general
/// way.
pub fn decode_activity(body: &[u8], limits: &Limits) -> Result<Activity, FrameError> {
    if let Some(activity) = plain_activity(body, limits) {
        return Ok(activity);
    }
    super::decode_message::<Notice>(body, limits).map(|n| n.activity)
}

/// `{"activity":{"client":S,"action":S,"outcome":S[,"reason":S]}}` exactly, each `S` a
/// string without a backslash or a control character, within `limits`; `None` otherwise.
fn plain_activity(body: &[u8], limits: &Limits) -> Option<Activity> {
    let fits_shape = limits.max_depth >= DEPTH
        && limits.max_values >= VALUES
        && limits.max_members >= MEMBERS
        && limits.max_string_bytes >= LONGEST_NAME
        && body.len() <= limits.max_bytes;
    if !fits_shape {
        return None;
    }
    let max = limits.max_string_bytes;
    let mut rest = body.strip_prefix(br#"{"activity":{"client":"#)?;
    let client = plain_string(&mut rest, br#","action":"#, max)?;
    let action = plain_string(&mut rest, br#","outcome":"#, max)?;
    let outcome = plain_string(&mut rest, b"", max)?;
    let reason = match rest.strip_prefix(br#","reason":"#) {
        None => None,
        Some(mut tail) => {
            let reason = plain_string(&mut tail, b"", max)?;
            rest = tail;
            Some(reason)
        }
    };
    if rest != b"}}" {
        return None;
    }
    Some(Activity { client, action, outcome, reason })
}

/// The string at the start of `rest` when it needs no unescaping (no backslash, no control
/// character), is UTF-8 and at most `max` bytes long, and `after` follows it; `rest` then
/// moves past `after`.
pub(super) fn plain_string(rest: &mut &[u8], after: &[u8], max: usize) -> Option<String> {
    let inner = rest.strip_prefix(b"\"")?;
    let end = inner.iter().position(|&b| b == b'"' || b == b'\\' || b < 0x20)?;
    let text = core::str::from_utf8(&inner[..end]).ok().filter(|t| t.len() <= max)?;
    if inner[end] != b'"' {
        return None;
    }
    *rest = inner[end + 1..].strip_prefix(after)?;
    Some(text.into())
}

#[cfg(test)]
mod tests {
    use alloc::vec;

    use super::*;
    use crate::channel::{DEFAULT_MAX_FRAME, decode_message, encode_frame, frame_limits};

    fn limits() -> Limits {
        frame_limits(&Limits::DEFAULT, DEFAULT_MAX_FRAME)
    }

    fn activity(client: &str, action: &str, reason: Option<&str>) -> Activity {
        Activity {
            client: client.into(),
            action: action.into(),
            outcome: if reason.is_some() { "refused" } else { "ok" }.into(),
            reason: reason.map(String::from),
        }
    }

    fn both(a: &Activity, limits: &Limits, max_frame: usize) {
        let serde = encode_frame(&DaemonMessage::Activity(a.clone()), limits, max_frame);
        assert_eq!(encode_activity_frame(a, limits, max_frame), serde, "{a:?}");
    }

    #[test]
    fn the_frame_is_the_serde_mapping_byte_for_byte_over_tricky_texts() {
        let controls: String = (0u8..0x20).map(char::from).collect();
        let tricky = [
            "",
            "plain",
            r#"quote " and backslash \ and slash /"#,
            controls.as_str(),
            "\u{7f} del, \u{2028} line sep, \u{2029} para sep, \u{2027}\u{202a}",
            "non-ASCII: é ü 中文 🦀 \u{fffd}",
            "a\r\nb\tc\u{8}\u{c}",
        ];
        for client in tricky {
            for action in tricky {
                for reason in [None, Some(client), Some(action)] {
                    both(&activity(client, action, reason), &limits(), DEFAULT_MAX_FRAME);
                }
            }
        }
        // The daemon's longest texts (256 bytes) and far longer ones, escapes included.
        for text in ["x".repeat(256), "\"".repeat(256), "é".repeat(128), "\u{1}".repeat(4096)] {
            both(&activity(&text, &text, Some(&text)), &limits(), DEFAULT_MAX_FRAME);
        }
    }

    #[test]
    fn every_bound_fails_as_the_serde_mapping_does() {
        let a = activity("agent[1] via endpoint", "text.insert", Some("stale_revision"));
        let exact = encode_activity_frame(&a, &limits(), DEFAULT_MAX_FRAME).unwrap();
        let body = exact.len() - HEADER_LEN;
        let cases = vec![
            (Limits { max_string_bytes: 13, ..limits() }, DEFAULT_MAX_FRAME),
            (Limits { max_string_bytes: 7, ..limits() }, DEFAULT_MAX_FRAME),
            (Limits { max_depth: 1, ..limits() }, DEFAULT_MAX_FRAME),
            (Limits { max_values: 5, ..limits() }, DEFAULT_MAX_FRAME),
            (Limits { max_members: 3, ..limits() }, DEFAULT_MAX_FRAME),
            (Limits { max_bytes: body - 1, ..limits() }, DEFAULT_MAX_FRAME),
            (limits(), body - 1),
        ];
        for (limits, max_frame) in cases {
            both(&a, &limits, max_frame);
            assert!(encode_activity_frame(&a, &limits, max_frame).is_err());
        }
        // Exactly at the bounds it still fits.
        both(&a, &Limits { max_bytes: body, ..limits() }, body);
        assert_eq!(encode_activity_frame(&a, &limits(), body).unwrap(), exact);
        let long = activity(&"y".repeat(300), "a", None);
        let tight = Limits { max_string_bytes: 299, ..limits() };
        both(&long, &tight, DEFAULT_MAX_FRAME);
        assert!(encode_activity_frame(&long, &tight, DEFAULT_MAX_FRAME).is_err());
    }

    #[test]
    fn a_held_notice_decodes_as_the_message_would() {
        let a = activity("c \"q\" é", "a\u{2028}", Some("r\n"));
        let frame = encode_activity_frame(&a, &limits(), DEFAULT_MAX_FRAME).unwrap();
        let body = &frame[HEADER_LEN..];
        assert!(is_activity_frame(body));
        assert_eq!(decode_activity(body, &limits()).unwrap(), a);
        let typed = decode_message::<DaemonMessage>(body, &limits()).unwrap();
        assert_eq!(typed, DaemonMessage::Activity(a));
        // Whatever the message decoding refuses, this refuses too.
        for bad in [
            &br#"{"activity":{"client":"c","action":"a","outcome":"ok"},"bye":{"reason":"x"}}"#[..],
            br#"{"activity":{"client":"c","action":"a","outcome":"ok","extra":1}}"#,
            br#"{"activity":{"client":"c","action":"a"}}"#,
            br#"{"activity":{"client":"c","action":"a","outcome":"ok"}} x"#,
            br#"{"activity":{"client":"\u0000","action":"a","outcome":"ok","client":"d"}}"#,
            br#"{"activity":{"client":"c","action":"a","outcome":1}}"#,
            b"{\"activity\":{\"client\":\"\xff\",\"action\":\"a\",\"outcome\":\"ok\"}}",
            br#"{"activity":"#,
        ] {
            assert!(is_activity_frame(bad));
            assert!(decode_message::<DaemonMessage>(bad, &limits()).is_err());
            assert!(decode_activity(bad, &limits()).is_err(), "{:?}", core::str::from_utf8(bad));
        }
        let tight = Limits { max_string_bytes: 2, ..limits() };
        assert!(decode_activity(body, &tight).is_err());
        // The plain form and everything around it decode as the message would, fast path or not.
        let controls: String = (0u8..0x20).map(char::from).collect();
        for text in
            ["", "plain", "é 中文 🦀", "\"q\"", "back\\slash", controls.as_str(), "\u{2028}"]
        {
            for reason in [None, Some(text)] {
                let a = activity(text, "act", reason);
                let frame = encode_activity_frame(&a, &limits(), DEFAULT_MAX_FRAME).unwrap();
                let body = &frame[HEADER_LEN..];
                assert_eq!(decode_activity(body, &limits()).unwrap(), a);
                let long = Limits { max_string_bytes: text.len().max(8), ..limits() };
                assert_eq!(decode_activity(body, &long).unwrap(), a);
                if text.len() > 8 {
                    let short = Limits { max_string_bytes: text.len() - 1, ..limits() };
                    assert!(decode_activity(body, &short).is_err());
                }
                let small = Limits { max_bytes: body.len() - 1, ..limits() };
                assert!(decode_activity(body, &small).is_err());
            }
        }
        for other in [
            &br#"{"activity":{"client":"c","action":"a","outcome":"ok","reason":"r"}} "#[..],
            br#"{"activity":{"client":"c","action":"a","outcome":"ok","reason":"r"},"x":1}"#,
            br#"{"activity":{"client":"c","action":"a","outcome":"ok"}}}"#,
            br#"{"activity":{"client":"c","action":"a","outcome":"ok","reason":null}}"#,
            br#"{"activity":{"client":"c","outcome":"ok","action":"a"}}"#,
            br#"{"activity":{"client":"c" ,"action":"a","outcome":"ok"}}"#,
            br#"{"activity":{"client":"c","action":"a","outcome":"ok","reason":"r","reason":"s"}}"#,
            "{\"activity\":{\"client\":\"\u{2028}\u{feff}\u{fffe}\u{7f}\",\"action\":\"a\",\"outcome\":\"ok\"}}"
                .as_bytes(),
        ] {
            let typed = decode_message::<DaemonMessage>(other, &limits());
            let held = decode_activity(other, &limits());
            match typed {
                Ok(DaemonMessage::Activity(a)) => assert_eq!(held.unwrap(), a),
                _ => assert!(held.is_err(), "{:?}", core::str::from_utf8(other)),
            }
        }
        assert!(!is_activity_frame(br#"{ "activity":{}}"#));
        assert!(!is_activity_frame(br#"{"request":{}}"#));
    }
}
