//! The two messages every action call crosses, without building a tree of what the daemon only
//! passes on: the `request` carrying an `execute` call, whose `input` may be a fragment
//! ([`Value::Raw`]), and the `reply` carrying its `executed` result, whose `output` is kept as
//! a fragment straight from the frame ([`parse_with_raw`](crate::parse_with_raw)).
//!
//! Both produce exactly what the serde mapping produces ([`encode_frame`] /
//! [`decode_message`]): the same bytes, the same message, the same errors. The shapes are
//! matched by hand only on the success path of those two messages; anything else, every error
//! included, goes the general way. The serde mapping would turn a fragment back into its tree
//! (it cannot carry one through a `Serializer`), which is the cost avoided here.

use alloc::vec::Vec;

use super::frame::encode_value_frame;
use super::{AppMessage, Call, CallResult, FrameError, Outcome, Reply, Request};
use crate::{Limits, Map, Value};

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
    let mut call = Map::with_capacity(3);
    call.insert("action", execute.action);
    call.insert("input", execute.input);
    if let Some(revision) = execute.expected_revision {
        call.insert("expectedRevision", revision);
    }
    let mut body = Map::with_capacity(2);
    body.insert("id", request.id);
    body.insert("call", member("execute", call.into()));
    encode_value_frame(&member("request", body.into()), limits, max_frame)
}

/// Decodes an app frame body as [`decode_message`]`::<AppMessage>` does; an `executed` reply's
/// `output` stays the fragment it was read as.
pub fn decode_app_message(body: &[u8], limits: &Limits) -> Result<AppMessage, FrameError> {
    let value = crate::parse_with_raw(body, limits, OUTPUT_PATH).map_err(FrameError::Json)?;
    match executed_reply(value) {
        Ok(message) => Ok(message),
        Err(value) => crate::from_value(value).map_err(FrameError::Message),
    }
}

/// `{"reply":{"id":I,"outcome":{"ok":{"executed":{"output":O,"revision":R}}}}}` with nothing
/// else in it, as the message serde would make of it; any other value back unchanged.
fn executed_reply(value: Value) -> Result<AppMessage, Value> {
    let Some((id, revision)) = executed_ids(&value) else { return Err(value) };
    let output = take(value, OUTPUT_PATH);
    Ok(AppMessage::Reply(Reply {
        id,
        outcome: Outcome::Ok(CallResult::Executed { output, revision }),
    }))
}

/// The id and revision of an executed reply of exactly that shape (see [`executed_reply`]).
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

/// Moves the value at `path` out of `value` (`null` where there is none; the caller checked).
fn take(mut value: Value, path: &[&str]) -> Value {
    for name in path {
        value = match value {
            Value::Object(mut m) => m.remove(name).unwrap_or_default(),
            _ => Value::Null,
        };
    }
    value
}

/// `{name: value}`.
fn member(name: &str, value: Value) -> Value {
    let mut m = Map::with_capacity(1);
    m.insert(name, value);
    m.into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::channel::{DaemonMessage, ExecuteCall, decode_message, encode_frame};
    use crate::{RawJson, parse};

    fn limits() -> Limits {
        crate::channel::frame_limits(&Limits::DEFAULT, crate::channel::DEFAULT_MAX_FRAME)
    }

    #[test]
    fn request_frames_are_the_serde_mapping_byte_for_byte() {
        let input =
            parse(br#"{"text":"a\nb","n":[1.0,-2e3,{"x":null}]}"#, &Limits::DEFAULT).unwrap();
        let raw = Value::Raw(RawJson::encode(&input, &Limits::DEFAULT).unwrap());
        for (input, expected_revision) in
            [(input.clone(), None), (raw, Some(7)), (Value::Null, Some(0))]
        {
            let call = ExecuteCall { action: "document.get".into(), input, expected_revision };
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
        let request = |input: Value| Request {
            id: 1,
            call: Call::Execute(ExecuteCall { action: "a".into(), input, expected_revision: None }),
        };
        let raw = Value::Raw(RawJson::encode(&deep, &Limits::DEFAULT).unwrap());
        let kind = |r: Result<Vec<u8>, FrameError>| match r {
            Err(FrameError::Json(e)) => Some(e.kind()),
            _ => None,
        };
        assert_eq!(
            kind(encode_request_frame(request(raw), &tight, 1 << 20)),
            kind(encode_frame(&DaemonMessage::Request(request(deep)), &tight, 1 << 20))
        );
        assert_eq!(
            kind(encode_request_frame(request(Value::Null), &tight, 1 << 20)),
            None,
            "a shallow input fits"
        );
        assert!(encode_request_frame(request(Value::Null), &limits(), 10).is_err());
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
                outcome: Outcome::Ok(CallResult::Executed { output: Value::Raw(raw), revision }),
            }) => AppMessage::Reply(Reply {
                id,
                outcome: Outcome::Ok(CallResult::Executed { output: raw.to_value(), revision }),
            }),
            other => other,
        };
        for body in bodies {
            let ours = decode_app_message(body.as_bytes(), &limits());
            let serde = decode_message::<AppMessage>(body.as_bytes(), &limits());
            assert_eq!(ours.map(plain), serde, "{body}");
        }
        let Ok(AppMessage::Reply(Reply {
            outcome: Outcome::Ok(CallResult::Executed { output: Value::Raw(raw), .. }),
            ..
        })) = decode_app_message(bodies[0].as_bytes(), &limits())
        else {
            panic!("the output is a fragment")
        };
        assert_eq!(raw.as_bytes(), br#"{"length":64,"text":"A/"}"#);
    }
}
