//! HTTP answers and request bodies: JSON replies, the error body every refusal uses (fixed
//! text, never an echo of the request), and reading a body within its byte bound and
//! deadline.
//!
//! Every refusal is `{"error": {"reason": R, "message": M}}` with a status that says the class
//! (400 malformed, 401 token, 403 Host/Origin, 404 path, 405 method, 408 body deadline, 409 a
//! state conflict, 413 too large, 503 no room).

use http_body_util::{BodyExt, Full, Limited};
use hyper::StatusCode;
use hyper::body::{Body, Bytes};
use hyper::header::{self, HeaderMap, HeaderValue};
use jfgui_proto::{Limits, Map, Value};

/// An answer.
pub type Reply = hyper::Response<Full<Bytes>>;

/// An answer with `body` as JSON.
pub fn json_bytes(status: StatusCode, body: Vec<u8>) -> Reply {
    let mut reply = Reply::new(Full::new(Bytes::from(body)));
    *reply.status_mut() = status;
    reply.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    reply.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    reply
}

/// An answer with `value` as JSON. Our own answers are small and well-formed, so the encoder
/// only needs room; the bound is the largest poll answer.
pub fn json(status: StatusCode, value: &Map) -> Reply {
    let limits = Limits { max_bytes: usize::MAX, ..Limits::DEFAULT };
    match jfgui_proto::encode(&Value::Object(value.clone()), &limits) {
        Ok(body) => json_bytes(status, body),
        Err(_) => {
            error(StatusCode::INTERNAL_SERVER_ERROR, "internal", "The answer could not be encoded.")
        }
    }
}

/// The error body: `{"error": {"reason", "message"}}`.
pub fn error(status: StatusCode, reason: &str, message: &str) -> Reply {
    let mut e = Map::with_capacity(2);
    e.insert("reason", reason);
    e.insert("message", message);
    let mut body = Map::with_capacity(1);
    body.insert("error", e);
    let limits = Limits { max_bytes: usize::MAX, ..Limits::DEFAULT };
    let bytes = jfgui_proto::encode(&Value::Object(body), &limits).unwrap_or_default();
    json_bytes(status, bytes)
}

/// Reads a request body of at most `limit` bytes within `deadline`. A `Content-Length` over
/// the limit is refused (413) before a body byte is read; a chunked body is cut off at the
/// limit; a body that stalls past the deadline is 408.
pub async fn read_body<B>(
    headers: &HeaderMap,
    body: B,
    limit: usize,
    deadline: std::time::Duration,
) -> Result<Bytes, Reply>
where
    B: Body<Data = Bytes>,
    B::Error: std::error::Error + Send + Sync + 'static,
{
    let too_large =
        || error(StatusCode::PAYLOAD_TOO_LARGE, "too_large", "The request body exceeds the bound.");
    if let Some(length) = headers.get(header::CONTENT_LENGTH) {
        // hyper has already refused malformed and conflicting lengths.
        let length = length.to_str().ok().and_then(|l| l.parse::<u64>().ok());
        if length.is_none_or(|l| l > limit as u64) {
            return Err(too_large());
        }
    }
    match tokio::time::timeout(deadline, Limited::new(body, limit).collect()).await {
        Ok(Ok(collected)) => Ok(collected.to_bytes()),
        Ok(Err(e)) if e.is::<http_body_util::LengthLimitError>() => Err(too_large()),
        Ok(Err(_)) => {
            Err(error(StatusCode::BAD_REQUEST, "bad_body", "The request body could not be read."))
        }
        Err(_) => Err(error(
            StatusCode::REQUEST_TIMEOUT,
            "body_timeout",
            "The request body did not arrive in time.",
        )),
    }
}

/// Parses a body as one strict-JSON object.
pub fn parse_object(bytes: &[u8], limits: &Limits) -> Result<Map, Reply> {
    match jfgui_proto::parse(bytes, limits) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => Err(bad_body()),
        Err(_) => Err(error(
            StatusCode::BAD_REQUEST,
            "invalid_json",
            "The request body is not strict JSON within the bounds.",
        )),
    }
}

/// 400 for a body that is JSON but not the object this route takes.
pub fn bad_body() -> Reply {
    error(
        StatusCode::BAD_REQUEST,
        "invalid_body",
        "The request body is not the object this route takes (see docs/PROTOCOL.md).",
    )
}

/// Takes the members `names` out of `body`, refusing any other member.
pub fn members<const N: usize>(
    mut body: Map,
    names: [&str; N],
) -> Result<[Option<Value>; N], Reply> {
    let out = names.map(|n| body.remove(n));
    if body.is_empty() { Ok(out) } else { Err(bad_body()) }
}
