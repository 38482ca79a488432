//! The client side of the browser bridge for `browser-call` and `browser-stdio`: the bridge URL
//! (only `http://127.0.0.1:PORT`), the token (from a file or the environment; `--token` too,
//! though argv is readable by other local users), and one HTTP/1.1 request per call over a
//! plain `TcpStream` to 127.0.0.1.
//!
//! By construction no proxy variable is read (there is no proxy code) and no redirect is
//! followed: a 3xx answer is an error, so the token never leaves loopback.

use std::net::Ipv4Addr;
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Bytes;
use hyper::header::{self, HeaderValue};
use hyper::{Method, Request, StatusCode};
use hyper_util::rt::TokioIo;
use jfgui_proto::{Limits, Map, Value};
use tokio::net::TcpStream;

use crate::exit::{Exit, Failure};

/// Largest answer body read from the bridge (a poll answer is the largest, 8 requests).
const MAX_ANSWER: usize = 16 * 1024 * 1024;

/// Where the bridge is and how to prove we may use it.
#[derive(Debug, Args)]
pub struct BridgeArgs {
    /// The bridge's URL as `browser-bridge` printed it: http://127.0.0.1:PORT.
    #[arg(long, value_name = "URL")]
    pub url: String,
    /// Read the token from this file (what `browser-bridge --token-file` wrote). Recommended,
    /// like the JFGUI_BRIDGE_TOKEN environment variable.
    #[arg(long, value_name = "FILE", conflicts_with = "token")]
    pub token_file: Option<PathBuf>,
    /// The token itself. Prefer --token-file or JFGUI_BRIDGE_TOKEN: other local users can read
    /// a process's command line, so a token given here leaks for as long as the command runs.
    #[arg(long, value_name = "TOKEN", env = "JFGUI_BRIDGE_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
}

/// A bridge to send requests to.
#[derive(Debug, Clone)]
pub struct Bridge {
    port: u16,
    token: String,
    timeout: Duration,
}

/// One answer: the status and the body.
#[derive(Debug)]
pub struct Answer {
    /// The HTTP status.
    pub status: StatusCode,
    /// The body.
    pub body: Bytes,
}

/// The port of `url`, which must be `http://127.0.0.1:PORT` (a trailing `/` is allowed).
pub fn parse_url(url: &str) -> Result<u16, Failure> {
    let port = url
        .strip_prefix("http://127.0.0.1:")
        .map(|rest| rest.strip_suffix('/').unwrap_or(rest))
        .filter(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|p| p.parse::<u16>().ok())
        .filter(|p| *p != 0);
    port.ok_or_else(|| {
        Failure::usage(
            "invalid_url",
            "--url must be the bridge's address as browser-bridge printed it: http://127.0.0.1:PORT",
        )
    })
}

impl Bridge {
    /// The bridge of `args`, with each request bounded by `timeout`.
    pub fn new(args: &BridgeArgs, timeout: Duration) -> Result<Bridge, Failure> {
        let port = parse_url(&args.url)?;
        let token = match (&args.token_file, &args.token) {
            (Some(path), _) => std::fs::read_to_string(path)
                .map_err(|e| {
                    Failure::usage(
                        "token_file",
                        format!("cannot read --token-file {}: {e}", path.display()),
                    )
                })?
                .trim()
                .to_string(),
            (None, Some(token)) => token.trim().to_string(),
            (None, None) => {
                return Err(Failure::usage(
                    "missing_token",
                    "the bridge token is needed: --token-file FILE or JFGUI_BRIDGE_TOKEN",
                ));
            }
        };
        if token.is_empty() || HeaderValue::from_str(&format!("Bearer {token}")).is_err() {
            return Err(Failure::usage("invalid_token", "the bridge token is empty or malformed"));
        }
        Ok(Bridge { port, token, timeout })
    }

    /// `POST path` with `body` (JSON), one connection per request.
    pub async fn post(&self, path: &str, body: Vec<u8>) -> Result<Answer, Failure> {
        let lost = |what: &str, e: &dyn std::fmt::Display| {
            Failure::new(
                Exit::Daemon,
                "bridge_unreachable",
                format!("{what} the bridge at 127.0.0.1:{}: {e}", self.port),
            )
        };
        let exchange = async {
            let stream = TcpStream::connect((Ipv4Addr::LOCALHOST, self.port))
                .await
                .map_err(|e| lost("cannot connect to", &e))?;
            let (mut sender, connection) =
                hyper::client::conn::http1::handshake(TokioIo::new(stream))
                    .await
                    .map_err(|e| lost("cannot talk to", &e))?;
            tokio::spawn(connection);
            let request = Request::builder()
                .method(Method::POST)
                .uri(path)
                .header(header::HOST, format!("127.0.0.1:{}", self.port))
                .header(header::AUTHORIZATION, format!("Bearer {}", self.token))
                .header(header::CONTENT_TYPE, "application/json")
                .body(Full::new(Bytes::from(body)))
                .map_err(|e| lost("cannot build a request for", &e))?;
            let response = sender.send_request(request).await.map_err(|e| lost("lost", &e))?;
            let status = response.status();
            if status.is_redirection() {
                return Err(Failure::new(
                    Exit::Protocol,
                    "redirect_refused",
                    format!(
                        "the bridge answered a redirect ({status}); redirects are never followed, so the token stays on loopback"
                    ),
                ));
            }
            let body = Limited::new(response.into_body(), MAX_ANSWER)
                .collect()
                .await
                .map_err(|e| lost("could not read the answer of", &e))?
                .to_bytes();
            Ok(Answer { status, body })
        };
        match tokio::time::timeout(self.timeout, exchange).await {
            Ok(answer) => answer,
            Err(_) => Err(Failure::new(
                Exit::OutcomeUnknown,
                "timeout",
                format!(
                    "no answer from the bridge within {} s; the outcome is unknown",
                    self.timeout.as_secs()
                ),
            )),
        }
    }
}

/// The failure an error answer (not 2xx) means: the bridge's `{"error": {reason, message}}`.
pub fn refusal(answer: &Answer) -> Failure {
    let body = jfgui_proto::parse(&answer.body, &Limits::DEFAULT).ok();
    let error = body.as_ref().and_then(|b| b.get("error"));
    let reason =
        error.and_then(|e| e.get("reason")).and_then(Value::as_str).unwrap_or("http_error");
    let message = error
        .and_then(|e| e.get("message"))
        .and_then(Value::as_str)
        .unwrap_or("the bridge refused the request");
    let exit = match answer.status {
        StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => Exit::Refused,
        StatusCode::SERVICE_UNAVAILABLE => Exit::Daemon,
        StatusCode::NOT_FOUND if reason == "unknown_session" => Exit::NotFound,
        _ => Exit::Protocol,
    };
    Failure::new(exit, reason, format!("{message} (HTTP {})", answer.status.as_u16()))
}

/// The exit code of a bridge's own correlated JSON-RPC error (code -32000, by `data.reason`).
pub fn bridge_error_exit(reason: &str) -> Option<Exit> {
    match reason {
        "no_app" => Some(Exit::NotFound),
        "timeout" => Some(Exit::OutcomeUnknown),
        "too_many_sessions" | "duplicate_id" | "session_closed" => Some(Exit::Action),
        _ => None,
    }
}

/// The `/rpc` body for `request` in `session`.
pub fn rpc_body(session: &str, request: Value) -> Result<Vec<u8>, Failure> {
    let mut body = Map::with_capacity(2);
    body.insert("session", session);
    body.insert("request", request);
    jfgui_proto::encode(&Value::Object(body), &Limits::DEFAULT)
        .map_err(|e| Failure::usage(e.kind().as_str(), format!("the request is too big: {e}")))
}

/// Closes `session` (`/session/close`); an unknown session is not an error here.
pub async fn close_session(bridge: &Bridge, session: &str) -> Result<(), Failure> {
    let mut body = Map::with_capacity(1);
    body.insert("session", session);
    let bytes = jfgui_proto::encode(&Value::Object(body), &Limits::DEFAULT).unwrap_or_default();
    let answer = bridge.post("/session/close", bytes).await?;
    if answer.status.is_success() || answer.status == StatusCode::NOT_FOUND {
        Ok(())
    } else {
        Err(refusal(&answer))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_http_urls_are_accepted() {
        assert_eq!(parse_url("http://127.0.0.1:8765").unwrap(), 8765);
        assert_eq!(parse_url("http://127.0.0.1:8765/").unwrap(), 8765);
        for bad in [
            "https://127.0.0.1:8765",
            "http://localhost:8765",
            "http://127.0.0.1",
            "http://127.0.0.1:0",
            "http://127.0.0.1:99999",
            "http://127.0.0.1:80/rpc",
            "http://evil.example:80",
            "http://127.0.0.1:+80",
        ] {
            assert_eq!(parse_url(bad).unwrap_err().exit, Exit::Usage, "{bad}");
        }
    }
}
