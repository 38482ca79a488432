//! The app's side of the two messages every action call crosses, without a value tree of their
//! envelopes: the daemon's `request` carrying an `execute` call is read by hand and only its
//! `input` is parsed (the action gets it as a [`Value`]), and the `reply` carrying an
//! `executed` result is written straight into the output buffer, `output` encoded in place.
//! (`per_call.rs` is the daemon's side of the same frames.)
//!
//! Both give exactly what the serde mapping gives ([`decode_message`] / [`encode_frame`]): the
//! same message, the same bytes, the same errors. The shapes are matched by hand only on the
//! success path of those two messages, under the same strict rules and bounds (the envelope's
//! share of each bound is taken off before its contents are parsed or encoded); anything else,
//! every error included, goes the general way.

use alloc::vec::Vec;

use super::call_wire::{
    EXECUTE_ACTION, EXECUTED_OUTPUT, EXPECTED_REVISION, INPUT, INPUT_DEPTH, OUTPUT_DEPTH,
    REPLY_END, REPLY_ID, REQUEST_END, REQUEST_ID, REQUEST_VALUES, REVISION, VALUES_BEFORE_OUTPUT,
    plain_integer, plain_u64,
};
use super::frame::HEADER_LEN;
use super::notice::plain_string;
use super::{
    AppMessage, Call, CallResult, DaemonMessage, ExecuteCall, FrameError, Outcome, Reply, Request,
};
use crate::{Limits, Number, Payload};

#[cfg(doc)]
use super::{decode_message, encode_frame};

/// Widest object of a request (`execute` with an expected revision).
const REQUEST_MEMBERS: usize = 3;
/// Longest member name of a request (`expectedRevision`).
const REQUEST_NAME: usize = 16;

/// Values of an executed reply besides its output: the five objects, `id` and `revision`.
const REPLY_VALUES: usize = VALUES_BEFORE_OUTPUT + 1;
/// Widest object of an executed reply (`reply`, `executed`).
const REPLY_MEMBERS: usize = 2;
/// Longest member name of an executed reply (`executed`, `revision`).
const REPLY_NAME: usize = 8;

/// Decodes a daemon frame body as [`decode_message`]`::<DaemonMessage>` does; a request
/// carrying an `execute` call in the daemon's own form is read without a tree of its envelope.
pub fn decode_daemon_message(body: &[u8], limits: &Limits) -> Result<DaemonMessage, FrameError> {
    match execute_request(body, limits) {
        Some(request) => Ok(DaemonMessage::Request(request)),
        None => super::decode_message(body, limits),
    }
}

/// `{"request":{"id":I,"call":{"execute":{"action":A,"input":X[,"expectedRevision":R]}}}}`
/// exactly (no whitespace outside `X`; `I` and `R` plain integers; `A` a string needing no
/// unescaping), within `limits` as the whole body; `None` for anything else. A call carrying
/// `consent` (only calls of actions that ask the user do) is such an else: what follows its
/// input is no expected revision, so the input does not parse alone, and the general path
/// reads it.
fn execute_request(body: &[u8], limits: &Limits) -> Option<Request> {
    if body.len() > limits.max_bytes || !request_fits(limits) {
        return None;
    }
    let (id, rest) = plain_integer(body.strip_prefix(REQUEST_ID)?)?;
    let mut rest = rest.strip_prefix(EXECUTE_ACTION)?;
    let action = plain_string(&mut rest, INPUT, limits.max_string_bytes)?;
    let mut input = rest.strip_suffix(REQUEST_END)?;
    // A value that ends in a digit is a number, which holds no `"`: when the input is followed
    // by the expected revision, this split is the only one the whole body can parse as.
    let digits = input.iter().rev().take_while(|b| b.is_ascii_digit()).count();
    let (head, revision) = input.split_at(input.len() - digits);
    let expected_revision = match head.strip_suffix(EXPECTED_REVISION) {
        Some(head) if digits > 0 => {
            input = head;
            Some(plain_u64(revision)?)
        }
        _ => None,
    };
    let values = REQUEST_VALUES + usize::from(expected_revision.is_some());
    let input_limits = Limits {
        max_bytes: input.len(),
        max_depth: limits.max_depth - INPUT_DEPTH,
        max_values: limits.max_values - values,
        ..*limits
    };
    let input = Payload::Value(crate::parse(input, &input_limits).ok()?);
    let call = ExecuteCall { action, input, expected_revision, consent: None };
    Some(Request { id, call: Call::Execute(call) })
}

/// Whether `limits` leave room for a request's envelope at all (else the general path says
/// which bound it breaks).
fn request_fits(limits: &Limits) -> bool {
    limits.max_depth >= INPUT_DEPTH
        && limits.max_values > REQUEST_VALUES
        && limits.max_members >= REQUEST_MEMBERS
        && limits.max_string_bytes >= REQUEST_NAME
}

/// Appends `AppMessage::Reply(reply)`'s frame to `out`: the bytes [`encode_frame`] writes,
/// with its errors (then `out` is unchanged). An `executed` result is written without a tree
/// of the message: the envelope directly, the output by the encoder in place.
pub fn encode_reply_frame_into(
    reply: Reply,
    limits: &Limits,
    max_frame: usize,
    out: &mut Vec<u8>,
) -> Result<(), FrameError> {
    if let Outcome::Ok(CallResult::Executed { output, revision }) = &reply.outcome
        && executed_into(reply.id, output, *revision, limits, max_frame, out)
    {
        return Ok(());
    }
    let frame = super::encode_frame(&AppMessage::Reply(reply), limits, max_frame)?;
    out.extend_from_slice(&frame);
    Ok(())
}

/// Appends the frame of an executed reply when it fits every bound (`true`); otherwise leaves
/// `out` as it was (`false`).
fn executed_into(
    id: u64,
    output: &Payload,
    revision: u64,
    limits: &Limits,
    max_frame: usize,
    out: &mut Vec<u8>,
) -> bool {
    let start = out.len();
    let fits = write_executed(id, output, revision, limits, max_frame, out);
    if !fits {
        out.truncate(start);
    }
    fits
}

/// Whether `limits` leave room for an executed reply's envelope at all.
fn reply_fits(limits: &Limits) -> bool {
    limits.max_depth >= OUTPUT_DEPTH
        && limits.max_values >= REPLY_VALUES
        && limits.max_members >= REPLY_MEMBERS
        && limits.max_string_bytes >= REPLY_NAME
}

fn write_executed(
    id: u64,
    output: &Payload,
    revision: u64,
    limits: &Limits,
    max_frame: usize,
    out: &mut Vec<u8>,
) -> bool {
    if !reply_fits(limits) {
        return false;
    }
    let id = Number::from(id);
    let revision = Number::from(revision);
    let envelope = REPLY_ID.len()
        + id.as_bytes().len()
        + EXECUTED_OUTPUT.len()
        + REVISION.len()
        + revision.as_bytes().len()
        + REPLY_END.len();
    let Some(max_output) = limits.max_bytes.min(max_frame).checked_sub(envelope) else {
        return false;
    };
    let start = out.len();
    out.extend_from_slice(&[0; HEADER_LEN]);
    out.extend_from_slice(REPLY_ID);
    out.extend_from_slice(id.as_bytes());
    out.extend_from_slice(EXECUTED_OUTPUT);
    let output_limits = Limits {
        max_bytes: max_output,
        max_depth: limits.max_depth - OUTPUT_DEPTH,
        max_values: limits.max_values - REPLY_VALUES,
        ..*limits
    };
    if crate::encode_into(output, &output_limits, out).is_err() {
        return false;
    }
    out.extend_from_slice(REVISION);
    out.extend_from_slice(revision.as_bytes());
    out.extend_from_slice(REPLY_END);
    let len = out.len() - start - HEADER_LEN;
    let Ok(announced) = u32::try_from(len) else { return false };
    out[start..start + HEADER_LEN].copy_from_slice(&announced.to_be_bytes());
    true
}

#[cfg(test)]
mod tests {
    use alloc::boxed::Box;
    use alloc::format;
    use alloc::string::String;
    use alloc::vec;
    use alloc::vec::Vec;

    use super::*;
    use crate::channel::{
        Agent, Consent, DEFAULT_MAX_FRAME, decode_message, encode_frame, frame_limits,
    };
    use crate::{ActionError, Map, RawJson, Reason, Value, parse};

    fn limits() -> Limits {
        frame_limits(&Limits::DEFAULT, DEFAULT_MAX_FRAME)
    }

    /// Both decoders agree on `body` under `limits`: the same message or both an error (the
    /// hand-read path never fails, so an error is the general path's own).
    fn decodes_alike(body: &[u8], limits: &Limits) -> Result<DaemonMessage, FrameError> {
        let ours = decode_daemon_message(body, limits);
        let serde = decode_message::<DaemonMessage>(body, limits);
        assert_eq!(ours, serde, "{:?}", core::str::from_utf8(body));
        ours
    }

    fn request(
        id: u64,
        action: &str,
        input: impl Into<Payload>,
        expected_revision: Option<u64>,
    ) -> Vec<u8> {
        asking(id, action, input, expected_revision, None)
    }

    /// A request carrying `consent`, as a daemon sends a call of an action that asks the user.
    fn asking(
        id: u64,
        action: &str,
        input: impl Into<Payload>,
        expected_revision: Option<u64>,
        consent: Option<Box<Consent>>,
    ) -> Vec<u8> {
        let input = input.into();
        let call =
            Call::Execute(ExecuteCall { action: action.into(), input, expected_revision, consent });
        let message = DaemonMessage::Request(Request { id, call });
        encode_frame(&message, &limits(), DEFAULT_MAX_FRAME).unwrap()[HEADER_LEN..].to_vec()
    }

    fn consent(granted: Option<u64>, says: Option<String>) -> Box<Consent> {
        Box::new(Consent {
            agent: Agent {
                exe: "/usr/bin/agent".into(),
                pid: Some(9),
                says,
                transport: "endpoint".into(),
            },
            granted,
            may_grant: granted.is_none(),
        })
    }

    #[test]
    fn requests_with_consent_decode_as_the_serde_mapping_at_every_bound() {
        let inputs = [
            Value::Object(Map::new()),
            Value::from(12u64),
            parse(br#"{"text":"}}}}","expectedRevision":5}"#, &limits()).unwrap(),
        ];
        for says in
            [None, Some(String::from("x\",\"expectedRevision\":1}}}}")), Some("é 🦀".into())]
        {
            for granted in [None, Some(0), Some(u64::MAX)] {
                for input in &inputs {
                    for expected in [None, Some(7)] {
                        let body = asking(
                            3,
                            "canvas.clear",
                            input.clone(),
                            expected,
                            Some(consent(granted, says.clone())),
                        );
                        let decoded = decodes_alike(&body, &limits()).unwrap();
                        let DaemonMessage::Request(Request { call: Call::Execute(c), .. }) =
                            decoded
                        else {
                            panic!("an execute request")
                        };
                        assert_eq!(c.consent, Some(consent(granted, says.clone())));
                        assert_eq!(c.expected_revision, expected);
                        // Never misread by hand: the general path reads every such request.
                        assert!(execute_request(&body, &limits()).is_none());
                        for n in [0, 4, 5, 6, 7, 8, 16, 17, body.len() - 1, body.len()] {
                            for l in [
                                Limits { max_depth: n, ..limits() },
                                Limits { max_values: n, ..limits() },
                                Limits { max_members: n, ..limits() },
                                Limits { max_string_bytes: n, ..limits() },
                                Limits { max_bytes: n, ..limits() },
                            ] {
                                let _ = decodes_alike(&body, &l);
                            }
                        }
                    }
                }
            }
        }
    }

    fn tricky_strings() -> Vec<String> {
        let controls: String = (0u8..0x20).map(char::from).collect();
        vec![
            String::new(),
            "document.get".into(),
            r#"quote " and backslash \ and slash /"#.into(),
            controls,
            "\u{7f} del, \u{2028} line sep, \u{2029} para sep, \u{2027}\u{202a}".into(),
            "non-ASCII: é ü 中文 🦀 \u{fffd} \u{feff} \u{fffe}".into(),
            "}}}},\"expectedRevision\":1".into(),
            "x".repeat(4096),
        ]
    }

    #[test]
    fn requests_in_the_daemons_form_decode_as_the_serde_mapping() {
        let mut inputs = vec![
            Value::Object(Map::new()),
            Value::Null,
            Value::from(0u64),
            Value::from(u64::MAX),
            parse(br#"{"text":"a\nb","n":[1.0,-2e3,{"x":null}],"expectedRevision":5}"#, &limits())
                .unwrap(),
            parse(b"[[[[]]],\"}}}}\",12]", &limits()).unwrap(),
        ];
        inputs.extend(tricky_strings().into_iter().map(Value::String));
        for action in tricky_strings() {
            for input in &inputs {
                for id in [0, 1, 42, u64::MAX] {
                    for expected in [None, Some(0), Some(7), Some(u64::MAX)] {
                        let body = request(id, &action, input.clone(), expected);
                        decodes_alike(&body, &limits()).unwrap();
                        // Only a name written with an escape takes the general path.
                        let written = crate::encode(&Value::String(action.clone()), &limits());
                        let plain = !written.unwrap().contains(&b'\\');
                        assert_eq!(execute_request(&body, &limits()).is_some(), plain, "{action}");
                    }
                }
            }
        }
    }

    #[test]
    fn every_other_shape_and_every_error_decodes_as_the_serde_mapping() {
        let bodies = [
            // Spacing, member order, escapes, other number forms: the general path.
            r#"{"request":{"id":1,"call":{"execute":{"action":"a","input":{} }}}}"#,
            r#"{"request":{"id":1,"call":{"execute":{"action":"a","input": 5 ,"expectedRevision":2}}}}"#,
            r#"{ "request":{"id":1,"call":{"execute":{"action":"a","input":{}}}}}"#,
            r#"{"request":{"call":{"execute":{"action":"a","input":{}}},"id":1}}"#,
            r#"{"request":{"id":1,"call":{"execute":{"input":{},"action":"a"}}}}"#,
            r#"{"request":{"id":1,"call":{"execute":{"action":"\u0061","input":{}}}}}"#,
            r#"{"request":{"id":1.0,"call":{"execute":{"action":"a","input":{}}}}}"#,
            r#"{"request":{"id":1,"call":{"execute":{"action":"a","input":{},"expectedRevision":2e0}}}}"#,
            r#"{"request":{"id":1,"call":{"execute":{"action":"a","input":{},"expectedRevision":null}}}}"#,
            r#"{"request":{"id":1,"call":{"execute":{"action":"a","input":{},"expectedRevision":02}}}}"#,
            r#"{"request":{"id":01,"call":{"execute":{"action":"a","input":{}}}}}"#,
            r#"{"request":{"id":-1,"call":{"execute":{"action":"a","input":{}}}}}"#,
            r#"{"request":{"id":18446744073709551616,"call":{"execute":{"action":"a","input":{}}}}}"#,
            r#"{"request":{"id":1,"call":{"execute":{"action":"a","input":{},"expectedRevision":18446744073709551616}}}}"#,
            r#"{"request":{"id":1,"call":{"execute":{"action":"a","input":1,"expectedRevision":}}}}"#,
            r#"{"request":{"id":1,"call":{"execute":{"action":"a","input":1,"expectedRevision":2,"x":3}}}}"#,
            r#"{"request":{"id":1,"call":{"execute":{"action":"a","input":{},"input":{}}}}}"#,
            r#"{"request":{"id":1,"call":{"execute":{"action":"a","input":{"a":1,"a":2}}}}}"#,
            r#"{"request":{"id":1,"call":{"execute":{"action":"a","input":[1,]}}}}"#,
            r#"{"request":{"id":1,"call":{"execute":{"action":"a","input":{}}}}} "#,
            r#"{"request":{"id":1,"call":{"execute":{"action":"a","input":{}}}}}}"#,
            r#"{"request":{"id":1,"call":{"execute":{"action":"a","input":}}}}"#,
            r#"{"request":{"id":1,"call":{"execute":{"action":"a"}}}}"#,
            r#"{"request":{"id":1,"call":{"execute":{"action":"a","input":{}}},"x":0}}"#,
            r#"{"request":{"id":1,"call":{"revision":{}}}}"#,
            r#"{"request":{"id":1,"call":{"cancelTask":{"id":"t"}}}}"#,
            r#"{"bye":{"reason":"shutdown"}}"#,
            r#"{"welcome":{"slug":"n","limits":{"maxFrameBytes":10,"maxMessageBytes":10}}}"#,
        ];
        for body in bodies {
            decodes_alike(body.as_bytes(), &limits()).ok();
        }
        let bad =
            b"{\"request\":{\"id\":1,\"call\":{\"execute\":{\"action\":\"\xff\",\"input\":{}}}}}";
        decodes_alike(bad, &limits()).unwrap_err();
        let controls =
            b"{\"request\":{\"id\":1,\"call\":{\"execute\":{\"action\":\"a\tb\",\"input\":{}}}}}";
        decodes_alike(controls, &limits()).unwrap_err();
        let bom = b"\xef\xbb\xbf{\"request\":{\"id\":1,\"call\":{\"execute\":{\"action\":\"a\",\"input\":{}}}}}";
        decodes_alike(bom, &limits()).unwrap_err();
    }

    #[test]
    fn every_bound_holds_on_the_whole_request_at_and_over_the_limit() {
        let nested = |depth: usize| {
            let text = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
            parse(text.as_bytes(), &limits()).unwrap()
        };
        let wide = |n: usize| Value::Array(vec![Value::Null; n]);
        for expected in [None, Some(3)] {
            for (input, action) in [
                (nested(6), "a"),
                (wide(9), "a"),
                (Value::String("s".repeat(20)), "a"),
                (Value::Null, "abcdefghijklmnopqrstuvwxyz"),
            ] {
                let body = request(9, action, input, expected);
                let base = limits();
                let mut cases = vec![Limits { max_bytes: body.len(), ..base }];
                cases.push(Limits { max_bytes: body.len() - 1, ..base });
                for n in [0, 1, 2, 3, 4, 5, 9, 10, 11, 12, 15, 16, 17, 19, 20, 21, 26, 27] {
                    cases.push(Limits { max_depth: n, ..base });
                    cases.push(Limits { max_values: n, ..base });
                    cases.push(Limits { max_members: n, ..base });
                    cases.push(Limits { max_string_bytes: n, ..base });
                }
                for limits in cases {
                    // Whatever the general path accepts within room for the envelope, the
                    // hand-read path reads itself.
                    let accepted = decodes_alike(&body, &limits).is_ok();
                    let hand = execute_request(&body, &limits).is_some();
                    assert_eq!(hand, accepted && request_fits(&limits), "{limits:?}");
                }
            }
        }
    }

    fn executed(id: u64, output: impl Into<Payload>, revision: u64) -> Reply {
        let output = output.into();
        Reply { id, outcome: Outcome::Ok(CallResult::Executed { output, revision }) }
    }

    /// Both encoders give the same bytes or the same error, and ours leaves `out` alone on one.
    fn encodes_alike(reply: Reply, limits: &Limits, max_frame: usize) -> Result<(), FrameError> {
        let serde = encode_frame(&AppMessage::Reply(reply.clone()), limits, max_frame);
        let mut out = b"before".to_vec();
        let hand = match &reply.outcome {
            Outcome::Ok(CallResult::Executed { output, revision }) => {
                let mut scratch = Vec::new();
                executed_into(reply.id, output, *revision, limits, max_frame, &mut scratch)
            }
            _ => false,
        };
        let executed = matches!(reply.outcome, Outcome::Ok(CallResult::Executed { .. }));
        assert_eq!(hand, executed && serde.is_ok() && reply_fits(limits), "{limits:?}");
        let ours = encode_reply_frame_into(reply, limits, max_frame, &mut out);
        match &serde {
            Ok(frame) => assert_eq!(&out[6..], &frame[..]),
            Err(_) => assert_eq!(out, b"before"),
        }
        assert_eq!(ours, serde.map(drop));
        ours
    }

    #[test]
    fn executed_replies_are_the_serde_mapping_byte_for_byte() {
        let mut outputs: Vec<Payload> = vec![
            Value::Object(Map::new()).into(),
            Value::Null.into(),
            parse(br#"{"length":64,"text":"abc","selection":{"start":0,"end":3}}"#, &limits())
                .unwrap()
                .into(),
            Payload::Raw(
                RawJson::encode(
                    &parse(br#"{"a":[1,2,{"b":null}]}"#, &limits()).unwrap(),
                    &limits(),
                )
                .unwrap(),
            ),
        ];
        outputs.extend(tricky_strings().into_iter().map(|s| Value::String(s).into()));
        for output in outputs {
            for id in [0, 5, u64::MAX] {
                for revision in [0, 17, u64::MAX] {
                    encodes_alike(
                        executed(id, output.clone(), revision),
                        &limits(),
                        DEFAULT_MAX_FRAME,
                    )
                    .unwrap();
                }
            }
        }
        // Every other outcome goes the general way, to the same bytes.
        let others = [
            Reply { id: 1, outcome: Outcome::Ok(CallResult::Revision { revision: 4 }) },
            Reply {
                id: 2,
                outcome: Outcome::Error(ActionError::new(Reason::Busy, "queue \"full\"\n")),
            },
        ];
        for reply in others {
            encodes_alike(reply, &limits(), DEFAULT_MAX_FRAME).unwrap();
        }
    }

    #[test]
    fn every_bound_fails_as_the_serde_mapping_does() {
        let nested = |depth: usize| {
            let text = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
            parse(text.as_bytes(), &limits()).unwrap()
        };
        for output in [
            nested(6).into(),
            Value::Array(vec![Value::Null; 9]).into(),
            Value::String("s".repeat(20)).into(),
            Value::String("\u{1}".repeat(20)).into(),
            Payload::Raw(RawJson::encode(&nested(6), &limits()).unwrap()),
        ] {
            let reply = executed(12, output, 345);
            let frame =
                encode_frame(&AppMessage::Reply(reply.clone()), &limits(), DEFAULT_MAX_FRAME)
                    .unwrap();
            let body = frame.len() - HEADER_LEN;
            let base = limits();
            let mut cases = vec![
                (Limits { max_bytes: body, ..base }, DEFAULT_MAX_FRAME),
                (Limits { max_bytes: body - 1, ..base }, DEFAULT_MAX_FRAME),
                (base, body),
                (base, body - 1),
                (Limits { max_bytes: 10, ..base }, DEFAULT_MAX_FRAME),
            ];
            for n in [0, 1, 2, 4, 5, 7, 8, 10, 11, 12, 15, 16, 17, 19, 20, 21] {
                cases.push((Limits { max_depth: n, ..base }, DEFAULT_MAX_FRAME));
                cases.push((Limits { max_values: n, ..base }, DEFAULT_MAX_FRAME));
                cases.push((Limits { max_members: n, ..base }, DEFAULT_MAX_FRAME));
                cases.push((Limits { max_string_bytes: n, ..base }, DEFAULT_MAX_FRAME));
            }
            for (limits, max_frame) in cases {
                encodes_alike(reply.clone(), &limits, max_frame).ok();
            }
        }
    }
}
