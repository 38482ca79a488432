//! `bridge/open` and `bridge/close` on the control socket. A control connection holds at most
//! one bridge; it closes when the connection ends, so the listener exists exactly while
//! `jfgui-agent browser-bridge` runs (a listener nobody watches is a door left open). After a
//! daemon restart that command opens the bridge again with the port and token of its first
//! answer (`bridge/open {origin, port, token}`), so the page and the CLI clients that hold them
//! carry on.

use jfgui_engine::{ControlError, ControlMethods, Engine};
use jfgui_proto::{Map, Value};

use super::token::Token;
use super::{Bridge, BridgeLimits};

/// Opens bridges for control connections; one per daemon.
#[derive(Debug, Clone)]
pub struct Bridges {
    engine: Engine,
    limits: BridgeLimits,
}

impl Bridges {
    /// Bridges on `engine` with `limits`.
    pub fn new(engine: Engine, limits: BridgeLimits) -> Bridges {
        Bridges { engine, limits }
    }

    /// The bridge methods for one new control connection.
    pub fn control(&self) -> Box<dyn ControlMethods> {
        Box::new(BridgeControl { bridges: self.clone(), open: None })
    }
}

/// One control connection's bridge, if it opened one.
#[derive(Debug)]
struct BridgeControl {
    bridges: Bridges,
    open: Option<Bridge>,
}

/// JSON-RPC invalid params.
const INVALID_PARAMS: i64 = -32602;
/// The bridge's own errors (JSON-RPC's implementation-defined server error range).
const BRIDGE_ERROR: i64 = -32000;

fn failure(code: i64, reason: &str, message: impl Into<String>) -> ControlError {
    let mut data = Map::with_capacity(1);
    data.insert("reason", reason);
    ControlError { code, message: message.into(), data }
}

fn invalid_param(param: &str, reason: &str, message: impl Into<String>) -> ControlError {
    let mut e = failure(INVALID_PARAMS, reason, message);
    e.data.insert("param", param);
    e
}

/// Whether `origin` is a serialized web origin: `http` or `https`, `://`, a host and an
/// optional port, nothing else (no path, no trailing slash, no user info, no upper-case
/// scheme). Browsers send exactly this form, and `Origin` is compared byte for byte.
pub fn valid_origin(origin: &str) -> bool {
    let Some((scheme, rest)) = origin.split_once("://") else { return false };
    if scheme != "http" && scheme != "https" {
        return false;
    }
    let (host, port) = match rest.rsplit_once(':') {
        Some((h, p)) if !p.contains(']') => (h, Some(p)),
        _ => (rest, None),
    };
    let host_ok = !host.is_empty()
        && host.bytes().all(|b| b.is_ascii_alphanumeric() || b"-._[]:".contains(&b))
        && !host.bytes().any(|b| b.is_ascii_uppercase());
    let port_ok = port.is_none_or(|p| !p.is_empty() && p.len() <= 5 && p.parse::<u16>().is_ok());
    host_ok && port_ok
}

impl BridgeControl {
    fn open(&mut self, mut params: Map) -> Result<Map, ControlError> {
        let origin = match params.remove("origin") {
            Some(Value::String(o)) if valid_origin(&o) => o,
            Some(_) => {
                return Err(invalid_param(
                    "origin",
                    "invalid_origin",
                    "origin must be a web origin such as http://127.0.0.1:8765 (scheme, host, optional port; no path or trailing slash).",
                ));
            }
            None => {
                return Err(invalid_param("origin", "missing_param", "bridge/open needs origin."));
            }
        };
        let port = match params.remove("port") {
            None => 0,
            Some(v) => match v.as_u64().and_then(|p| u16::try_from(p).ok()) {
                Some(p) => p,
                None => {
                    return Err(invalid_param(
                        "port",
                        "out_of_range",
                        "port must be an integer from 0 (any free port) to 65535.",
                    ));
                }
            },
        };
        let token = match params.remove("token") {
            None => Token::generate().map_err(|e| {
                failure(BRIDGE_ERROR, "no_randomness", format!("Cannot make a token: {e}."))
            })?,
            Some(Value::String(t)) => Token::reuse(&t).ok_or_else(|| {
                invalid_param(
                    "token",
                    "invalid_token",
                    "token must be the token of an earlier bridge/open answer (43 characters of base64url).",
                )
            })?,
            Some(_) => {
                return Err(invalid_param("token", "invalid_type", "token must be a string."));
            }
        };
        if let Some(param) = params.keys().next() {
            let message = format!("Unknown parameter {param:?}.");
            return Err(invalid_param(param, "unknown_param", message));
        }
        if self.open.is_some() {
            return Err(failure(
                BRIDGE_ERROR,
                "already_open",
                "This control connection already holds an open bridge; close it first.",
            ));
        }
        let bridge = Bridge::open(&self.bridges.engine, self.bridges.limits, origin, port, token)
            .map_err(|e| {
            failure(BRIDGE_ERROR, "bind_failed", format!("Cannot open the bridge: {e}."))
        })?;
        let mut answer = Map::with_capacity(3);
        answer.insert("url", bridge.url());
        answer.insert("token", bridge.state.token.reveal());
        answer.insert("origin", bridge.state.origin.clone());
        self.open = Some(bridge);
        Ok(answer)
    }

    fn close(&mut self, params: Map) -> Result<Map, ControlError> {
        if let Some(param) = params.keys().next() {
            let message = format!("Unknown parameter {param:?}.");
            return Err(invalid_param(param, "unknown_param", message));
        }
        let mut answer = Map::with_capacity(1);
        answer.insert("closed", self.open.take().is_some());
        Ok(answer)
    }
}

impl ControlMethods for BridgeControl {
    fn names(&self) -> &'static [&'static str] {
        &["bridge/open", "bridge/close"]
    }

    fn call(&mut self, method: &str, params: Map) -> Option<Result<Map, ControlError>> {
        match method {
            "bridge/open" => Some(self.open(params)),
            "bridge/close" => Some(self.close(params)),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::valid_origin;

    #[test]
    fn origins_are_serialized_web_origins() {
        for ok in [
            "http://127.0.0.1:8765",
            "https://example.org",
            "http://localhost:3000",
            "http://[::1]:8080",
        ] {
            assert!(valid_origin(ok), "{ok}");
        }
        for bad in [
            "http://127.0.0.1:8765/",
            "HTTP://127.0.0.1:8765",
            "null",
            "*",
            "ftp://x",
            "http://",
            "http://a:99999",
            "http://a:",
            "http://user@host",
            "http://Example.org",
            "http://a b",
            "http://a/path",
        ] {
            assert!(!valid_origin(bad), "{bad}");
        }
    }
}
