//! The two messages every action call crosses, without building a tree of what the daemon only
//! passes on: the `request` carrying an `execute` call, whose `input` may be a fragment
//! ([`Payload::Raw`]), and the `reply` carrying its `executed` result, whose `output` is kept as
//! a fragment straight from the frame ([`parse_with_raw`](crate::parse_with_raw)).
//!
//! Both produce exactly what the serde mapping produces ([`encode_frame`] /
//! [`decode_message`]): the same bytes, the same message, the same errors. The shapes are
//! matched by hand only on the success path of those two messages; anything else, every error
//! included, goes the general way. The serde mapping would turn a fragment back into its tree
//! (it cannot carry one through a `Serializer`), which is the cost avoided here.
//!
//! The request frame of a call whose `input` is a fragment or `{}` (a call without input) is
//! written straight from its parts, like the `activity` notice (`notice.rs`): no map of the
//! envelope, no key strings. Its bounds are checked on the whole message's shape beforehand,
//! the fragment's recorded shape included, exactly as the encoder would meet them; when any
//! would fail, the general path runs and its error is the error.
//!
//! Likewise the `executed` reply in the exact bytes the encoder writes for it (no whitespace,
//! members in the mapping's order) is matched by hand: the envelope byte for byte, its numbers
//! as plain integers, and its `output` captured by the strict parser's own fragment capture at
//! the depth and value count it has in the message, so every byte is checked as strictly as on
//! the general path. Anything else (other spacing or order, a bound the envelope itself would
//! break, any error) is decoded the general way.

use alloc::vec::Vec;

use super::call_wire::{
    EXECUTE_ACTION, EXECUTED_OUTPUT, EXPECTED_REVISION, INPUT, INPUT_DEPTH, OUTPUT_DEPTH,
    REPLY_END, REPLY_ID, REQUEST_END, REQUEST_ID, REQUEST_VALUES, REVISION, VALUES_BEFORE_OUTPUT,
    plain_integer,
};
use super::frame::{HEADER_LEN, encode_value_frame};
use super::{AppMessage, Call, CallResult, ExecuteCall, FrameError, Outcome, Reply, Request};
use crate::json::{Shape, capture_at, write_string};
use crate::{Limits, Number, Payload, Value};

#[cfg(doc)]
use super::{decode_message, encode_frame};

/// Where an executed reply's `output` is in an app frame.
const OUTPUT_PATH: &[&str] = &["reply", "outcome", "ok", "executed", "output"];

/// Encodes `DaemonMessage::Request(request)` into a frame, byte for byte what [`encode_frame`]
/// writes; an `execute` call's `input` fragment is spliced, not re-parsed.
pub fn encode_request_frame(
    request: Request,
    limits: &Limits,
    max_frame: usize,
) -> Result<Vec<u8>, FrameError> {
    let Call::Execute(execute) = request.call else {
        return super::encode_frame(&super::DaemonMessage::Request(request), limits, max_frame);
    };
    if let Some(frame) = write_execute_request(request.id, &execute, limits, max_frame) {
        return Ok(frame);
    }
    let mut call = Vec::with_capacity(4);
    call.push(("action".into(), execute.action.into()));
    call.push(("input".into(), execute.input));
    if let Some(revision) = execute.expected_revision {
        call.push(("expectedRevision".into(), revision.into()));
    }
    if let Some(consent) = execute.consent {
        // A struct of strings, integers and booleans always maps.
        call.push(("consent".into(), crate::to_value(&consent).unwrap_or_default().into()));
    }
    let call = Payload::object([("execute", Payload::Object(call))]);
    let body = Payload::object([("id", request.id.into()), ("call", call)]);
    encode_value_frame(&Payload::object([("request", body)]), limits, max_frame)
}

/// The request frame of `execute` written by hand, byte for byte what the encoder writes for
/// it; `None` (the caller takes the general path) when `input` is neither a fragment nor `{}`,
/// when the call carries `consent` (only calls that ask the user do, rare enough not to need
/// this path), or when any bound would fail.
fn write_execute_request(
    id: u64,
    execute: &ExecuteCall,
    limits: &Limits,
    max_frame: usize,
) -> Option<Vec<u8>> {
    let ExecuteCall { action, input, expected_revision, consent } = execute;
    if consent.is_some() {
        return None;
    }
    let (input_bytes, input_shape): (&[u8], Shape) = match input {
        Payload::Raw(raw) => (raw.as_bytes(), *raw.shape()),
        Payload::Value(Value::Object(m)) if m.is_empty() => {
            (b"{}", Shape { depth: 1, values: 1, members: 0, string_bytes: 0 })
        }
        _ => return None,
    };
    let revision = usize::from(expected_revision.is_some());
    // The longest member name: `expectedRevision`, else `request` / `execute`.
    let longest_name = if revision == 1 { 16 } else { 7 };
    let fits = INPUT_DEPTH + input_shape.depth <= limits.max_depth
        && REQUEST_VALUES + input_shape.values + revision <= limits.max_values
        && (2 + revision).max(input_shape.members) <= limits.max_members
        && longest_name.max(action.len()).max(input_shape.string_bytes) <= limits.max_string_bytes;
    if !fits {
        return None;
    }
    // Escapes make the action at most 6 times longer; names are plain.
    let mut frame = Vec::with_capacity(HEADER_LEN + 96 + action.len() + input_bytes.len());
    frame.extend_from_slice(&[0; HEADER_LEN]);
    frame.extend_from_slice(REQUEST_ID);
    frame.extend_from_slice(Number::from(id).as_bytes());
    frame.extend_from_slice(EXECUTE_ACTION);
    write_string(action, &mut frame);
    frame.extend_from_slice(INPUT);
    frame.extend_from_slice(input_bytes);
    if let Some(revision) = expected_revision {
        frame.extend_from_slice(EXPECTED_REVISION);
        frame.extend_from_slice(Number::from(*revision).as_bytes());
    }
    frame.extend_from_slice(REQUEST_END);
    let len = frame.len() - HEADER_LEN;
    let announced =
        u32::try_from(len).ok().filter(|_| len <= limits.max_bytes && len <= max_frame)?;
    frame[..HEADER_LEN].copy_from_slice(&announced.to_be_bytes());
    Some(frame)
}

/// Decodes an app frame body as [`decode_message`]`::<AppMessage>` does; an `executed` reply's
/// `output` stays the fragment it was read as.
pub fn decode_app_message(body: &[u8], limits: &Limits) -> Result<AppMessage, FrameError> {
    match match_executed_reply(body, limits) {
        Some(message) => Ok(message),
        None => decode_general(body, limits),
    }
}

/// [`decode_app_message`] through the value tree (with the `output` fragment).
fn decode_general(body: &[u8], limits: &Limits) -> Result<AppMessage, FrameError> {
    let (value, output) =
        crate::parse_with_raw(body, limits, OUTPUT_PATH).map_err(FrameError::Json)?;
    match (executed_ids(&value), output) {
        (Some((id, revision)), Some(output)) => Ok(AppMessage::Reply(Reply {
            id,
            outcome: Outcome::Ok(CallResult::Executed { output: Payload::Raw(output), revision }),
        })),
        // Anything else decodes as the serde mapping says, the fragment back in its place.
        (_, output) => {
            let value = match output {
                Some(output) => put(value, OUTPUT_PATH, output.to_value()),
                None => value,
            };
            crate::from_value(value).map_err(FrameError::Message)
        }
    }
}

/// An executed reply in exactly the encoder's bytes, decoded without a tree (see the module
/// docs); `None` when `body` is anything else or fails anything (the general path decides).
fn match_executed_reply(body: &[u8], limits: &Limits) -> Option<AppMessage> {
    // The envelope's own bounds: its depth, its widest objects (`reply`, `executed`: 2
    // members) and longest names (`executed`, `revision`: 8 bytes).
    if body.len() > limits.max_bytes
        || limits.max_depth < OUTPUT_DEPTH
        || limits.max_members < 2
        || limits.max_string_bytes < 8
    {
        return None;
    }
    let rest = body.strip_prefix(REPLY_ID)?;
    let (id, rest) = plain_integer(rest)?;
    let rest = rest.strip_prefix(EXECUTED_OUTPUT)?;
    let at = body.len() - rest.len();
    let (output, end, values) =
        capture_at(body, limits, at, OUTPUT_DEPTH, VALUES_BEFORE_OUTPUT).ok()?;
    let rest = body[end..].strip_prefix(REVISION)?;
    let (revision, rest) = plain_integer(rest)?;
    if rest != REPLY_END || values >= limits.max_values {
        return None;
    }
    Some(AppMessage::Reply(Reply {
        id,
        outcome: Outcome::Ok(CallResult::Executed { output: Payload::Raw(output), revision }),
    }))
}

/// The id and revision of `{"reply":{"id":I,"outcome":{"ok":{"executed":{"output":O,
/// "revision":R}}}}}` with nothing else in it, as the message serde would make of it.
fn executed_ids(value: &Value) -> Option<(u64, u64)> {
    let reply = only(value, "reply")?.as_object()?;
    let executed = only(only(reply.get("outcome")?, "ok")?, "executed")?.as_object()?;
    let id = reply.get("id")?.as_u64()?;
    let revision = executed.get("revision")?.as_u64()?;
    (reply.len() == 2 && executed.len() == 2 && executed.contains_key("output"))
        .then_some((id, revision))
}

/// The value of the single member `name` of an object that has no other.
fn only<'v>(value: &'v Value, name: &str) -> Option<&'v Value> {
    value.as_object().filter(|m| m.len() == 1).and_then(|m| m.get(name))
}

/// `value` with `replacement` at `path`, where [`parse_with_raw`](crate::parse_with_raw) left
/// `null` for the fragment it kept.
fn put(mut value: Value, path: &[&str], replacement: Value) -> Value {
    let mut slot = &mut value;
    for name in path {
        match slot {
            Value::Object(m) => match m.get_mut(name) {
                Some(next) => slot = next,
                None => return value,
            },
            _ => return value,
        }
    }
    *slot = replacement;
    value
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::channel::{Agent, Consent, DaemonMessage, decode_message, encode_frame};
    use crate::{Map, RawJson, parse};
    use alloc::boxed::Box;
    use alloc::string::String;

    fn limits() -> Limits {
        crate::channel::frame_limits(&Limits::DEFAULT, crate::channel::DEFAULT_MAX_FRAME)
    }

    #[test]
    fn request_frames_are_the_serde_mapping_byte_for_byte() {
        let input =
            parse(br#"{"text":"a\nb","n":[1.0,-2e3,{"x":null}]}"#, &Limits::DEFAULT).unwrap();
        let raw = Payload::Raw(RawJson::encode(&input, &Limits::DEFAULT).unwrap());
        for (input, expected_revision) in
            [(input.clone().into(), None), (raw, Some(7)), (Value::Null.into(), Some(0))]
        {
            let call = ExecuteCall {
                action: "document.get".into(),
                input,
                expected_revision,
                consent: None,
            };
            let request = Request { id: 42, call: Call::Execute(call) };
            let serde = encode_frame(&DaemonMessage::Request(request.clone()), &limits(), 1 << 20);
            assert_eq!(encode_request_frame(request, &limits(), 1 << 20), serde);
        }
        let other = Request { id: 1, call: Call::CancelTask { id: "t".into() } };
        assert_eq!(
            encode_request_frame(other.clone(), &limits(), 1 << 20),
            encode_frame(&DaemonMessage::Request(other.clone()), &limits(), 1 << 20)
        );
        // The bounds hold on the spliced fragment as on its tree (the encoder reports a
        // fragment's error where the fragment starts, not inside it).
        let deep = parse(b"[[[[[[[[1]]]]]]]]", &Limits::DEFAULT).unwrap();
        let tight = Limits { max_depth: 8, ..limits() };
        let request = |input: Payload| Request {
            id: 1,
            call: Call::Execute(ExecuteCall {
                action: "a".into(),
                input,
                expected_revision: None,
                consent: None,
            }),
        };
        let raw = Payload::Raw(RawJson::encode(&deep, &Limits::DEFAULT).unwrap());
        let kind = |r: Result<Vec<u8>, FrameError>| match r {
            Err(FrameError::Json(e)) => Some(e.kind()),
            _ => None,
        };
        assert_eq!(
            kind(encode_request_frame(request(raw), &tight, 1 << 20)),
            kind(encode_frame(&DaemonMessage::Request(request(deep.into())), &tight, 1 << 20))
        );
        assert_eq!(
            kind(encode_request_frame(request(Value::Null.into()), &tight, 1 << 20)),
            None,
            "a shallow input fits"
        );
        assert!(encode_request_frame(request(Value::Null.into()), &limits(), 10).is_err());
    }

    /// A frame, or the kind of error (a fragment's error offset is where it starts on the
    /// general path, inside it on the serde mapping's tree; the kind is the same).
    fn kind_of(r: Result<Vec<u8>, FrameError>) -> Result<Vec<u8>, FrameError> {
        r.map_err(|e| match e {
            FrameError::Json(e) => FrameError::Json(crate::JsonError::new(e.kind(), 0)),
            other => other,
        })
    }

    #[test]
    fn hand_written_request_frames_match_the_serde_mapping_at_every_bound() {
        let tree = |s: &str| parse(s.as_bytes(), &Limits::DEFAULT).unwrap();
        let raw = |s: &str| Payload::Raw(RawJson::encode(&tree(s), &Limits::DEFAULT).unwrap());
        let inputs = [
            Value::Object(Map::new()).into(),
            raw(r#"{"text":"a\nb\u2029\"q\"","n":[1.0,-2e3,{"x":null}],"deep":[[[]]]}"#),
            raw(r#""just a string""#),
            raw("12"),
            raw("[]"),
        ];
        let actions = ["document.get", "a\"b\\c\n\u{2028}\u{7f}\u{0}é😀", ""];
        let revisions = [None, Some(0), Some(u64::MAX)];
        for input in &inputs {
            for action in actions {
                for (id, expected_revision) in [1, 42, u64::MAX].into_iter().zip(revisions) {
                    let call = ExecuteCall {
                        action: action.into(),
                        input: input.clone(),
                        expected_revision,
                        consent: None,
                    };
                    let request = Request { id, call: Call::Execute(call.clone()) };
                    let serde = |l: &Limits, max_frame| {
                        let message = DaemonMessage::Request(request.clone());
                        kind_of(encode_frame(&message, l, max_frame))
                    };
                    let ours = |l: &Limits, max_frame| {
                        kind_of(encode_request_frame(request.clone(), l, max_frame))
                    };
                    // Under the usual bounds the frame is written by hand, and is the same.
                    let by_hand = write_execute_request(id, &call, &limits(), 1 << 20);
                    assert!(by_hand.is_some(), "{request:?}");
                    assert_eq!(by_hand.map(Ok), Some(serde(&limits(), 1 << 20)));
                    let len = by_hand_len(&request);
                    // Every bound, below, at and above what the message needs.
                    for v in 0..=len + 2 {
                        let tight = [
                            Limits { max_depth: v, ..limits() },
                            Limits { max_values: v, ..limits() },
                            Limits { max_members: v, ..limits() },
                            Limits { max_string_bytes: v, ..limits() },
                            Limits { max_bytes: v, ..limits() },
                        ];
                        for l in &tight {
                            assert_eq!(ours(l, 1 << 20), serde(l, 1 << 20), "{request:?} {l:?}");
                        }
                        assert_eq!(
                            ours(&limits(), v),
                            serde(&limits(), v),
                            "{request:?} frame {v}"
                        );
                    }
                }
            }
        }
        // Any other input goes the general way.
        let call = ExecuteCall {
            action: "a".into(),
            input: tree(r#"{"x":1}"#).into(),
            expected_revision: None,
            consent: None,
        };
        assert!(write_execute_request(1, &call, &limits(), 1 << 20).is_none());
    }

    /// Who asks, as a daemon attaches it to a call of an action that needs the user's yes.
    fn consent(says: &str) -> Box<Consent> {
        Box::new(Consent {
            agent: Agent {
                exe: "/usr/bin/agent\n\u{1b}[0m".into(),
                pid: Some(77),
                says: Some(says.into()),
                transport: "endpoint".into(),
            },
            granted: None,
            may_grant: true,
        })
    }

    #[test]
    fn requests_with_consent_are_the_serde_mapping_at_every_bound() {
        let tree = |s: &str| parse(s.as_bytes(), &Limits::DEFAULT).unwrap();
        let raw = |s: &str| Payload::Raw(RawJson::encode(&tree(s), &Limits::DEFAULT).unwrap());
        let inputs =
            [Value::Object(Map::new()).into(), raw(r#"{"a":[1,{"b":"c"}]}"#), tree("[1,2]").into()];
        for input in inputs {
            for expected_revision in [None, Some(9)] {
                for says in ["", "claude-code 1.2 \"quoted\" \u{2028}"] {
                    let call = ExecuteCall {
                        action: "canvas.clear".into(),
                        input: input.clone(),
                        expected_revision,
                        consent: Some(consent(says)),
                    };
                    assert!(write_execute_request(5, &call, &limits(), 1 << 20).is_none());
                    let request = Request { id: 5, call: Call::Execute(call) };
                    let message = DaemonMessage::Request(request.clone());
                    let len = by_hand_len(&request);
                    for v in 0..=len + 2 {
                        for l in [
                            Limits { max_depth: v, ..limits() },
                            Limits { max_values: v, ..limits() },
                            Limits { max_members: v, ..limits() },
                            Limits { max_string_bytes: v, ..limits() },
                            Limits { max_bytes: v, ..limits() },
                        ] {
                            assert_eq!(
                                kind_of(encode_request_frame(request.clone(), &l, 1 << 20)),
                                kind_of(encode_frame(&message, &l, 1 << 20)),
                                "{request:?} {l:?}"
                            );
                        }
                        assert_eq!(
                            kind_of(encode_request_frame(request.clone(), &limits(), v)),
                            kind_of(encode_frame(&message, &limits(), v)),
                        );
                    }
                }
            }
        }
    }

    /// The body length of `request`'s frame.
    fn by_hand_len(request: &Request) -> usize {
        let message = DaemonMessage::Request(request.clone());
        encode_frame(&message, &limits(), 1 << 20).unwrap().len() - super::HEADER_LEN
    }

    #[test]
    fn executed_replies_matched_by_hand_decode_as_the_general_path_at_every_bound() {
        let bodies: &[&[u8]] = &[
            br#"{"reply":{"id":3,"outcome":{"ok":{"executed":{"output":{"length":64},"revision":1}}}}}"#,
            br#"{"reply":{"id":0,"outcome":{"ok":{"executed":{"output":"a\u2028\/\"\u00e9\ud83d\ude00","revision":0}}}}}"#,
            br#"{"reply":{"id":18446744073709551615,"outcome":{"ok":{"executed":{"output":[[[]],{"a":{"b":[1,2.5e3,null,true]}}],"revision":18446744073709551615}}}}}"#,
            // Not taken by hand (or failing): the general path decides, the same way.
            br#"{"reply":{"id":1,"outcome":{"ok":{"executed":{"output": {"x" : 1} ,"revision":2}}}}}"#,
            br#"{"reply":{"id":18446744073709551616,"outcome":{"ok":{"executed":{"output":1,"revision":2}}}}}"#,
            br#"{"reply":{"id":01,"outcome":{"ok":{"executed":{"output":1,"revision":2}}}}}"#,
            br#"{"reply":{"id":1.0,"outcome":{"ok":{"executed":{"output":1,"revision":2}}}}}"#,
            br#"{"reply":{"id":1,"outcome":{"ok":{"executed":{"output":1,"revision":2e0}}}}}"#,
            br#"{"reply":{"id":1,"outcome":{"ok":{"executed":{"output":1,"revision":-2}}}}}"#,
            br#"{"reply":{"id":1,"outcome":{"ok":{"executed":{"output":1,"revision":2}}}}} "#,
            br#"{"reply":{"id":1,"outcome":{"ok":{"executed":{"output":1,"revision":2}}}}}}"#,
            br#"{"reply":{"id":1,"outcome":{"ok":{"executed":{"output":1,"revision":2,"x":1}}}}}"#,
            br#"{"reply":{"id":1,"outcome":{"ok":{"executed":{"output":1,"output":2,"revision":2}}}}}"#,
            br#"{"reply":{"id":1,"outcome":{"ok":{"executed":{"output":{"a":1,"a":2},"revision":2}}}}}"#,
            br#"{"reply":{"id":1,"outcome":{"ok":{"executed":{"output":[1,],"revision":2}}}}}"#,
            br#"{"reply":{"id":1,"outcome":{"ok":{"executed":{"output":"\ud800","revision":2}}}}}"#,
            b"{\"reply\":{\"id\":1,\"outcome\":{\"ok\":{\"executed\":{\"output\":\"\xff\",\"revision\":2}}}}}",
            br#"{"reply":{"id":1,"outcome":{"ok":{"executed":{"output":tru,"revision":2}}}}}"#,
            br#"{"reply":{"id":1,"outcome":{"ok":{"executed":{"output":1,"revision":2}}}}"#,
            br#"{"reply":{"id":1,"outcome":{"ok":{"executed":{"output":1"#,
        ];
        for (i, body) in bodies.iter().enumerate() {
            let by_hand = match_executed_reply(body, &limits());
            assert_eq!(by_hand.is_some(), i < 3, "{}", String::from_utf8_lossy(body));
            assert_eq!(
                decode_app_message(body, &limits()),
                decode_general(body, &limits()),
                "{}",
                String::from_utf8_lossy(body)
            );
            for v in 0..=body.len() + 1 {
                for l in [
                    Limits { max_depth: v, ..limits() },
                    Limits { max_values: v, ..limits() },
                    Limits { max_members: v, ..limits() },
                    Limits { max_string_bytes: v, ..limits() },
                    Limits { max_bytes: v, ..limits() },
                ] {
                    assert_eq!(
                        decode_app_message(body, &l),
                        decode_general(body, &l),
                        "{} {l:?}",
                        String::from_utf8_lossy(body)
                    );
                }
            }
        }
    }

    #[test]
    fn app_messages_decode_as_the_serde_mapping() {
        let bodies = [
            r#"{"reply":{"id":3,"outcome":{"ok":{"executed":{"output":{"length":64, "text" : "\u0041\/"},"revision":1.0e1}}}}}"#,
            r#"{"reply":{"outcome":{"ok":{"executed":{"revision":2,"output":[]}}},"id":1}}"#,
            r#"{"reply":{"id":3,"outcome":{"ok":{"executed":{"output":1}}}}}"#,
            r#"{"reply":{"id":3,"outcome":{"ok":{"executed":{"output":1,"revision":2,"x":0}}}}}"#,
            r#"{"reply":{"id":-3,"outcome":{"ok":{"executed":{"output":1,"revision":2}}}}}"#,
            r#"{"reply":{"id":3,"outcome":{"ok":{"executed":{"output":1,"revision":2}},"error":{}}}}"#,
            r#"{"reply":{"id":3,"outcome":{"ok":{"revision":{"revision":4}}}}}"#,
            r#"{"reply":{"id":3,"outcome":{"error":{"class":"internal","reason":"x","message":"m"}}}}"#,
            r#"{"bye":{}}"#,
            r#"{"reply":{"id":3,"outcome":{"ok":{"executed":{"output":[1,],"revision":2}}}}}"#,
            r#"{"reply":{"id":3,"outcome":{"ok":{"executed":{"output":{"a":1,"a":2},"revision":2}}}}}"#,
        ];
        // A fragment equals only a fragment: compare the tree it stands for.
        let plain = |m: AppMessage| match m {
            AppMessage::Reply(Reply {
                id,
                outcome: Outcome::Ok(CallResult::Executed { output: Payload::Raw(raw), revision }),
            }) => AppMessage::Reply(Reply {
                id,
                outcome: Outcome::Ok(CallResult::Executed {
                    output: raw.to_value().into(),
                    revision,
                }),
            }),
            other => other,
        };
        for body in bodies {
            let ours = decode_app_message(body.as_bytes(), &limits());
            let serde = decode_message::<AppMessage>(body.as_bytes(), &limits());
            assert_eq!(ours.map(plain), serde, "{body}");
        }
        let Ok(AppMessage::Reply(Reply {
            outcome: Outcome::Ok(CallResult::Executed { output: Payload::Raw(raw), .. }),
            ..
        })) = decode_app_message(bodies[0].as_bytes(), &limits())
        else {
            panic!("the output is a fragment")
        };
        assert_eq!(raw.as_bytes(), br#"{"length":64,"text":"A/"}"#);
    }
}
