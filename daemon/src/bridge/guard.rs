//! The request guards, in the order `routes::handle` applies them before any body byte is
//! read: the request target and `Host` (DNS rebinding), `Origin` (exact match), CORS
//! preflight, and the bearer token.
//!
//! Every comparison is exact, on bytes, with no normalisation: `Host` must be `127.0.0.1:PORT`
//! (no name that needs DNS, no other spelling of the address), and `Origin` must be the
//! configured origin as `bridge/open` received it. A header that appears twice is refused.

use hyper::header::{self, HeaderMap, HeaderName, HeaderValue};
use hyper::http::request::Parts;
use hyper::{Method, StatusCode};

use super::http::{Reply, error};
use super::token::Token;

/// Methods a preflight may ask for.
const ALLOW_METHODS: &str = "GET, POST";
/// Request headers a preflight may ask for (lower-case, as browsers send them).
const ALLOW_HEADERS: [&str; 2] = ["authorization", "content-type"];
/// How long a browser may cache a preflight answer, in seconds.
const PREFLIGHT_MAX_AGE: &str = "600";

/// The one value of `name`, `None` when absent, an error when repeated.
fn single<'a>(headers: &'a HeaderMap, name: &HeaderName) -> Result<Option<&'a HeaderValue>, ()> {
    let mut all = headers.get_all(name).iter();
    let first = all.next();
    if all.next().is_some() { Err(()) } else { Ok(first) }
}

/// The target must be origin-form (`/path`) and `Host` exactly `127.0.0.1:PORT`.
pub fn check_host(parts: &Parts, expected: &str) -> Result<(), Reply> {
    if parts.uri.scheme().is_some() || parts.uri.authority().is_some() {
        return Err(error(
            StatusCode::BAD_REQUEST,
            "absolute_target",
            "The request target must be a path (origin-form), not an absolute URL.",
        ));
    }
    match single(&parts.headers, &header::HOST) {
        Ok(Some(host)) if host.as_bytes() == expected.as_bytes() => Ok(()),
        _ => Err(error(
            StatusCode::FORBIDDEN,
            "bad_host",
            "The Host header must be exactly the bridge's loopback address and port.",
        )),
    }
}

/// What the request's `Origin` is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OriginCheck {
    /// No `Origin` header (a CLI client).
    Absent,
    /// Exactly the configured origin.
    Configured,
}

/// An absent `Origin` passes here (routes that need one check [`OriginCheck::Absent`]); a
/// present one must be exactly `configured`, and a repeated one is refused.
pub fn check_origin(parts: &Parts, configured: &str) -> Result<OriginCheck, Reply> {
    match single(&parts.headers, &header::ORIGIN) {
        Ok(None) => Ok(OriginCheck::Absent),
        Ok(Some(o)) if o.as_bytes() == configured.as_bytes() => Ok(OriginCheck::Configured),
        _ => Err(forbidden_origin()),
    }
}

/// 403 for a missing or wrong `Origin`.
pub fn forbidden_origin() -> Reply {
    error(StatusCode::FORBIDDEN, "bad_origin", "This origin may not use the bridge.")
}

/// The bearer token check every authenticated route goes through: exactly one
/// `Authorization` header, scheme `Bearer` in any case (RFC 9110), then the token, compared
/// in constant time. Tokens in the query string or a cookie are never looked at.
pub fn authorize(parts: &Parts, token: &Token) -> Result<(), Reply> {
    let presented = match single(&parts.headers, &header::AUTHORIZATION) {
        Ok(Some(value)) => value.as_bytes(),
        _ => &[][..],
    };
    let credentials = match presented.iter().position(|&b| b == b' ') {
        Some(space) if presented[..space].eq_ignore_ascii_case(b"bearer") => {
            let rest = &presented[space..];
            &rest[rest.iter().take_while(|&&b| b == b' ').count()..]
        }
        _ => &[][..],
    };
    // Compared even when the header was unusable, so every refusal takes the same path.
    if token.matches(credentials) {
        Ok(())
    } else {
        let mut reply =
            error(StatusCode::UNAUTHORIZED, "unauthorized", "A valid bearer token is required.");
        reply.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        Err(reply)
    }
}

/// Answers a CORS preflight (`OPTIONS` with `Access-Control-Request-Method`) from the
/// configured origin: 204 allowing only `GET`/`POST` and the `Authorization` and
/// `Content-Type` headers, never `*` and never credentials. A request for another method or
/// header is refused with 403 and no CORS header. Needs no token and changes nothing.
pub fn preflight(parts: &Parts, origin: OriginCheck, configured: &str) -> Reply {
    if origin != OriginCheck::Configured {
        return forbidden_origin();
    }
    let method_ok = match single(&parts.headers, &header::ACCESS_CONTROL_REQUEST_METHOD) {
        Ok(Some(m)) => m == "GET" || m == "POST",
        _ => false,
    };
    let headers_ok = match single(&parts.headers, &header::ACCESS_CONTROL_REQUEST_HEADERS) {
        Ok(None) => true,
        Ok(Some(list)) => list.to_str().is_ok_and(|list| {
            list.split(',')
                .map(str::trim)
                .filter(|h| !h.is_empty())
                .all(|h| ALLOW_HEADERS.iter().any(|a| a.eq_ignore_ascii_case(h)))
        }),
        Err(()) => false,
    };
    if !method_ok || !headers_ok {
        return error(
            StatusCode::FORBIDDEN,
            "preflight_refused",
            "The bridge allows only GET and POST with the Authorization and Content-Type headers.",
        );
    }
    let mut reply = Reply::new(http_body_util::Full::default());
    *reply.status_mut() = StatusCode::NO_CONTENT;
    let h = reply.headers_mut();
    allow_origin(h, configured);
    h.insert(header::ACCESS_CONTROL_ALLOW_METHODS, HeaderValue::from_static(ALLOW_METHODS));
    h.insert(
        header::ACCESS_CONTROL_ALLOW_HEADERS,
        HeaderValue::from_static("authorization, content-type"),
    );
    h.insert(header::ACCESS_CONTROL_MAX_AGE, HeaderValue::from_static(PREFLIGHT_MAX_AGE));
    // Private Network Access: granted only here, for the configured origin.
    let pna = HeaderName::from_static("access-control-request-private-network");
    if parts.headers.get(&pna).is_some_and(|v| v == "true") {
        h.insert(
            HeaderName::from_static("access-control-allow-private-network"),
            HeaderValue::from_static("true"),
        );
    }
    reply
}

/// Whether `method` starts a preflight (an `OPTIONS` with `Access-Control-Request-Method`).
pub fn is_preflight(parts: &Parts) -> bool {
    parts.method == Method::OPTIONS
        && parts.headers.contains_key(header::ACCESS_CONTROL_REQUEST_METHOD)
}

/// Adds the exact origin and `Vary: Origin` to an answer for the configured origin.
pub fn allow_origin(headers: &mut HeaderMap, configured: &str) {
    if let Ok(value) = HeaderValue::from_str(configured) {
        headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, value);
    }
    headers.insert(header::VARY, HeaderValue::from_static("Origin"));
}
