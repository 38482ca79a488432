//! The routes, and the one order of checks every request goes through ([`handle`]):
//!
//! 1. request target and `Host` (`guard::check_host`): 400/403;
//! 2. `Origin`, when present, exactly the configured one (`guard::check_origin`): 403;
//! 3. the path (404) and, for `OPTIONS`, the CORS preflight (`guard::preflight`);
//! 4. the method (405); browser routes need the `Origin` header (403);
//! 5. the bearer token (`guard::authorize`): 401;
//! 6. the body, within its bound and deadline (`http::read_body`): 413/408/400;
//! 7. the route itself.
//!
//! No body byte is read before steps 1–5 pass.

use std::sync::Arc;

use hyper::body::{Body, Bytes};
use hyper::header::{self, HeaderValue};
use hyper::{Method, Request, StatusCode};
use jfgui_engine::json1;
use jfgui_proto::{Limits, Map, Value};

use super::BridgeState;
use super::browser::{self, Browser};
use super::guard::{self, OriginCheck};
use super::http::{self, Reply, bad_body, error, members, parse_object};
use super::rpc_clients::{IdKey, RpcFailure};

/// The routes, as docs/PROTOCOL.md "The browser bridge" lists them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// `POST /connect`.
    Connect,
    /// `GET /poll?client=ID`.
    Poll,
    /// `POST /result`.
    Result,
    /// `POST /message`.
    Message,
    /// `POST /disconnect`.
    Disconnect,
    /// `POST /rpc`.
    Rpc,
    /// `POST /session/close`.
    SessionClose,
}

impl Route {
    /// Every route.
    pub const ALL: [Route; 7] = [
        Route::Connect,
        Route::Poll,
        Route::Result,
        Route::Message,
        Route::Disconnect,
        Route::Rpc,
        Route::SessionClose,
    ];

    /// The route of `path`.
    pub fn find(path: &str) -> Option<Route> {
        Route::ALL.into_iter().find(|r| r.path() == path)
    }

    /// Its path.
    pub fn path(self) -> &'static str {
        match self {
            Route::Connect => "/connect",
            Route::Poll => "/poll",
            Route::Result => "/result",
            Route::Message => "/message",
            Route::Disconnect => "/disconnect",
            Route::Rpc => "/rpc",
            Route::SessionClose => "/session/close",
        }
    }

    /// Its method.
    pub fn method(self) -> Method {
        if self == Route::Poll { Method::GET } else { Method::POST }
    }

    /// Whether only the tab uses it (then `Origin` is required); `/rpc` and `/session/close`
    /// also serve CLI clients, which send no `Origin`.
    pub fn browser_only(self) -> bool {
        !matches!(self, Route::Rpc | Route::SessionClose)
    }
}

/// Serves one request (see the module docs for the order of checks).
pub async fn handle<B>(state: Arc<BridgeState>, request: Request<B>) -> Reply
where
    B: Body<Data = Bytes>,
    B::Error: std::error::Error + Send + Sync + 'static,
{
    let (parts, body) = request.into_parts();
    if let Err(reply) = guard::check_host(&parts, &state.host) {
        return reply;
    }
    let origin = match guard::check_origin(&parts, &state.origin) {
        Ok(o) => o,
        Err(reply) => return reply,
    };
    let mut reply = match Route::find(parts.uri.path()) {
        None => error(StatusCode::NOT_FOUND, "not_found", "No such route."),
        Some(_) if guard::is_preflight(&parts) => guard::preflight(&parts, origin, &state.origin),
        Some(route) if parts.method != route.method() => {
            let mut reply = error(
                StatusCode::METHOD_NOT_ALLOWED,
                "method_not_allowed",
                "This route does not take this method.",
            );
            let allow = if route.method() == Method::GET { "GET" } else { "POST" };
            reply.headers_mut().insert(header::ALLOW, HeaderValue::from_static(allow));
            reply
        }
        Some(route) if route.browser_only() && origin == OriginCheck::Absent => {
            guard::forbidden_origin()
        }
        Some(route) => match guard::authorize(&parts, &state.token) {
            // No CORS header on a refusal: a page without the token learns nothing.
            Err(reply) => return reply,
            Ok(()) => serve(&state, route, &parts, body).await,
        },
    };
    if origin == OriginCheck::Configured && reply.status() != StatusCode::FORBIDDEN {
        guard::allow_origin(reply.headers_mut(), &state.origin);
    }
    reply.headers_mut().insert(
        header::HeaderName::from_static("x-content-type-options"),
        HeaderValue::from_static("nosniff"),
    );
    reply
}

/// Steps 6 and 7: an authorized request on `route`.
async fn serve<B>(
    state: &Arc<BridgeState>,
    route: Route,
    parts: &hyper::http::request::Parts,
    body: B,
) -> Reply
where
    B: Body<Data = Bytes>,
    B::Error: std::error::Error + Send + Sync + 'static,
{
    let limits = &state.limits;
    let bytes =
        match http::read_body(&parts.headers, body, limits.max_message_bytes, limits.body_deadline)
            .await
        {
            Ok(b) => b,
            Err(reply) => return reply,
        };
    let result = match route {
        Route::Connect => {
            browser::attach(state, &bytes).await.map(|a| http::json(StatusCode::OK, &a))
        }
        Route::Poll => poll(state, parts.uri.query().unwrap_or("")).await,
        Route::Result => result(state, &bytes).await,
        Route::Message => message(state, &bytes).await,
        Route::Disconnect => disconnect(state, &bytes).await,
        Route::Rpc => rpc(state, &bytes).await,
        Route::SessionClose => session_close(state, &bytes),
    };
    result.unwrap_or_else(|reply| reply)
}

/// JSON bounds of request bodies other than `/connect`: the host channel's frame bounds within
/// the bridge's message bound.
fn body_limits(state: &BridgeState) -> Limits {
    Limits { max_bytes: state.limits.max_message_bytes, ..state.engine.config().frame_limits() }
}

/// A body's `client` member and the browser it names.
fn client_of(value: Option<Value>, state: &BridgeState) -> Result<Arc<Browser>, Reply> {
    match value {
        Some(Value::String(client)) => {
            browser::find(state, &client).ok_or_else(browser::unknown_client)
        }
        _ => Err(bad_body()),
    }
}

async fn poll(state: &Arc<BridgeState>, query: &str) -> Result<Reply, Reply> {
    // Only `client=ID` is read; a token in the query is never looked at.
    let client = query.split('&').find_map(|kv| kv.strip_prefix("client=")).ok_or_else(bad_body)?;
    let browser = browser::find(state, client).ok_or_else(browser::unknown_client)?;
    Ok(http::json_bytes(StatusCode::OK, browser.poll().await))
}

async fn result(state: &Arc<BridgeState>, bytes: &[u8]) -> Result<Reply, Reply> {
    let body = parse_object(bytes, &body_limits(state))?;
    let [client, id, response] = members(body, ["client", "id", "response"])?;
    let browser = client_of(client, state)?;
    let (Some(id), Some(response)) = (id, response) else { return Err(bad_body()) };
    Ok(browser.result(id, response).await)
}

async fn message(state: &Arc<BridgeState>, bytes: &[u8]) -> Result<Reply, Reply> {
    let body = parse_object(bytes, &body_limits(state))?;
    let [client, message] = members(body, ["client", "message"])?;
    let browser = client_of(client, state)?;
    let message = message.ok_or_else(bad_body)?;
    if browser.message(message).await? {
        browser::detach(&Arc::downgrade(state), &browser, "exit").await;
    }
    let mut answer = Map::with_capacity(1);
    answer.insert("accepted", true);
    Ok(http::json(StatusCode::OK, &answer))
}

async fn disconnect(state: &Arc<BridgeState>, bytes: &[u8]) -> Result<Reply, Reply> {
    let body = parse_object(bytes, &body_limits(state))?;
    let [client] = members(body, ["client"])?;
    let browser = client_of(client, state)?;
    browser::detach(&Arc::downgrade(state), &browser, "disconnect").await;
    let mut answer = Map::with_capacity(1);
    answer.insert("disconnected", true);
    Ok(http::json(StatusCode::OK, &answer))
}

/// Longest `session` name.
const MAX_SESSION_NAME: usize = 256;

/// The `session` member: a string of 1 to 256 bytes.
fn session_name(value: Option<Value>) -> Result<String, Reply> {
    match value {
        Some(Value::String(s)) if !s.is_empty() && s.len() <= MAX_SESSION_NAME => Ok(s),
        _ => Err(bad_body()),
    }
}

/// The JSON-RPC error code of the bridge's own correlated errors (JSON-RPC's range for
/// implementation-defined server errors); `data.reason` says which.
pub const BRIDGE_ERROR: i64 = -32000;

async fn rpc(state: &Arc<BridgeState>, bytes: &[u8]) -> Result<Reply, Reply> {
    let engine_limits = state.engine.config().json;
    let body = parse_object(bytes, &body_limits(state))?;
    let [session, request] = members(body, ["session", "request"])?;
    let name = session_name(session)?;
    let Some(request @ Value::Object(_)) = request else { return Err(bad_body()) };
    let line = jfgui_proto::encode(&request, &engine_limits).map_err(|_| {
        error(StatusCode::PAYLOAD_TOO_LARGE, "too_large", "The request exceeds the message bound.")
    })?;
    // The engine's own envelope check: what it would refuse is answered here, and takes no
    // client slot (malformed envelopes reserve nothing).
    let envelope = match json1::parse_envelope(&line, &engine_limits, true) {
        Ok(envelope) => envelope,
        Err(Some(response)) => return Ok(http::json_bytes(StatusCode::OK, response)),
        Err(None) => return Ok(accepted()),
    };
    let id = envelope.id.clone();
    let fail = |reason: &str, message: &str| -> Reply {
        match &id {
            Some(id) => {
                let data = json1::reason_data(reason);
                let line = json1::error_line(id, BRIDGE_ERROR, message, data, &engine_limits);
                http::json_bytes(StatusCode::OK, line)
            }
            None => error(StatusCode::SERVICE_UNAVAILABLE, reason, message),
        }
    };
    let Some(browser) = browser::attached(state).filter(|b| state.engine.is_enabled(b.slug()))
    else {
        return Ok(fail(
            "no_app",
            "No browser app with agent access enabled is attached to the bridge; nothing was executed.",
        ));
    };
    let client = match browser.rpc_clients().get_or_create(
        &name,
        &state.engine,
        browser.slug(),
        &engine_limits,
    ) {
        Ok(s) => s,
        Err(_) => {
            return Ok(fail(
                "too_many_sessions",
                "The bridge's session table is full of MCP sessions that stay until closed; close one (/session/close). Nothing was executed.",
            ));
        }
    };
    let key = id.as_ref().map(|v| IdKey::of(Some(v)));
    let initialize = envelope.method == "initialize";
    match client.call(&line, key, initialize, state.limits.rpc_deadline).await {
        Ok(Some(response)) => Ok(http::json_bytes(StatusCode::OK, response)),
        Ok(None) => Ok(accepted()),
        Err(RpcFailure::DuplicateId) => Ok(fail(
            "duplicate_id",
            "A request with this id is still in flight in this session; nothing was executed.",
        )),
        Err(RpcFailure::Timeout) => Ok(fail(
            "timeout",
            "No response within the bridge's deadline; the call may or may not have taken effect.",
        )),
        Err(RpcFailure::Closed | RpcFailure::Full) => Ok(fail(
            "session_closed",
            "The app's endpoint closed before the request was read; nothing was executed.",
        )),
    }
}

/// 202 with no body: a notification (or a client's response) was passed on.
fn accepted() -> Reply {
    let mut reply = Reply::new(http_body_util::Full::default());
    *reply.status_mut() = StatusCode::ACCEPTED;
    reply
}

fn session_close(state: &Arc<BridgeState>, bytes: &[u8]) -> Result<Reply, Reply> {
    let body = parse_object(bytes, &body_limits(state))?;
    let [session] = members(body, ["session"])?;
    let name = session_name(session)?;
    let closed = browser::attached(state).is_some_and(|b| b.rpc_clients().close(&name));
    if !closed {
        return Err(error(StatusCode::NOT_FOUND, "unknown_session", "No such session is open."));
    }
    let mut answer = Map::with_capacity(1);
    answer.insert("closed", true);
    Ok(http::json(StatusCode::OK, &answer))
}
