//! `apps/activate {app}` on the control socket: makes sure the app `app` names runs with agent
//! access on, starting it when it is an installed app that is not running, then answers
//! `{app, displayName, endpoint, started}`. JSON-1 clients call it before they connect to the
//! app's endpoint; the all-apps MCP server and the CLI's commands start apps the same way.
//!
//! `app` follows the resolution rule of app names (slug, display name, unique slug prefix),
//! over the enabled apps first and then the installed ones. The wait runs beside the
//! connection's other lines, so a slow start delays nothing else on it.

use jfgui_proto::resolve::{self, Resolved};
use jfgui_proto::{ActionError, Map, Value};

use super::super::json1::{self, code};
use super::super::running::Call;
use super::result_line;
use crate::activation;
use crate::client::mcp::not_found;
use crate::output::Output;
use crate::{Engine, PeerInfo};

/// The method's name.
pub const METHOD: &str = "apps/activate";

/// When `line` is an `apps/activate` request: its answer, sent now (bad params) or by the
/// returned call (after the start). `None` for any other line.
pub fn check(
    engine: &Engine,
    line: &[u8],
    peer: PeerInfo,
    output: &Output,
) -> Option<Option<Call>> {
    let limits = engine.config().json;
    let envelope = json1::parse_envelope(line, &limits, false).ok()?;
    if envelope.method != METHOD {
        return None;
    }
    let id = envelope.id?;
    let mut params = envelope.params;
    let invalid = |reason: &str, message: String| {
        let mut data = json1::reason_data(reason);
        data.insert("param", "app");
        json1::error_line(&id, code::INVALID_PARAMS, &message, data, &limits)
    };
    let query = match params.remove("app") {
        Some(Value::String(query)) if !query.is_empty() => query,
        Some(other) if !matches!(other, Value::String(_)) => {
            let message = format!("Parameter \"app\" must be a string, not {}.", other.type_name());
            return Some(send(output, invalid("invalid_type", message)));
        }
        _ => {
            return Some(send(
                output,
                invalid("missing_param", "Parameter \"app\" is required.".into()),
            ));
        }
    };
    if let Some(param) = params.keys().next() {
        let mut data = json1::reason_data("unknown_param");
        data.insert("param", param);
        let message = format!("Unknown parameter {param:?}.");
        return Some(send(
            output,
            json1::error_line(&id, code::INVALID_PARAMS, &message, data, &limits),
        ));
    }
    let engine = engine.clone();
    let output = output.clone();
    Some(Some(Box::pin(async move {
        let line = match activate(&engine, &query, peer).await {
            Ok(result) => result_line(&id, result, &limits),
            Err(error) => {
                let (code, message, data) = json1::action_error_parts(&error);
                json1::error_line(&id, code, &message, data, &limits)
            }
        };
        output.send(line).await;
    })))
}

/// A call that sends one line (the connection's order is kept: it is polled next).
fn send(output: &Output, line: Vec<u8>) -> Option<Call> {
    let output = output.clone();
    Some(Box::pin(async move { output.send(line).await }))
}

async fn activate(engine: &Engine, query: &str, peer: PeerInfo) -> Result<Map, ActionError> {
    let apps: Vec<_> = engine.apps().into_iter().filter(|a| a.enabled).collect();
    let (slug, started) = match resolve::resolve(query, &apps) {
        Resolved::One(app) => (app.slug.clone(), false),
        _ => {
            let installed = activation::not_running(engine);
            match resolve::resolve(query, &installed) {
                Resolved::One(app) => {
                    (activation::activate_and_find(engine, app, peer.pid).await?, true)
                }
                _ => return Err(not_found(query, &apps)),
            }
        }
    };
    let mut m = Map::with_capacity(4);
    let display_name = engine
        .apps()
        .into_iter()
        .find(|a| a.slug == slug)
        .map(|a| a.display_name)
        .unwrap_or_default();
    m.insert("app", slug.as_str());
    m.insert("displayName", display_name);
    m.insert("endpoint", engine.config().endpoint_name(&slug).map_or(Value::Null, Value::from));
    m.insert("started", started);
    Ok(m)
}
