//! The control socket `agentd.sock` (SPEC S8): line-delimited JSON-RPC 2.0 with the same codec
//! and bounds as the endpoints; `daemon/status` and `apps/list`.
//!
//! Requests are answered one at a time in order: every method is local and immediate, so
//! there is nothing to run concurrently, and the writer's backpressure is the socket itself.

use jfgui_proto::{Map, Value};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};

use super::lines::{Line, LineReader};
use super::session::json1::{self, code};
use super::{Engine, PeerInfo, until};

/// Serves one control connection until EOF or shutdown.
pub async fn serve<S>(stream: S, engine: &Engine, peer: PeerInfo)
where
    S: AsyncRead + AsyncWrite + Send + Unpin + 'static,
{
    let config = engine.config().clone();
    let limits = config.json;
    let (rd, mut wr) = tokio::io::split(stream);
    let mut lines = LineReader::new(rd, limits.max_bytes, config.partial_idle);
    let mut shutdown = engine.0.shutdown.subscribe();
    loop {
        let line = tokio::select! {
            l = lines.next_line() => l,
            _ = until(&mut shutdown, |s| *s) => break,
        };
        let response = match line {
            Ok(Some(Line::Complete(bytes))) => answer(engine, &bytes),
            Ok(Some(Line::TooLong)) => Some(json1::too_long_response(&limits)),
            Ok(None) => break,
            Err(e) => {
                tracing::info!(?peer, "control connection ended: {e}");
                break;
            }
        };
        if let Some(mut response) = response {
            response.push(b'\n');
            if wr.write_all(&response).await.is_err() {
                break;
            }
        }
    }
    let _ = wr.shutdown().await;
}

fn answer(engine: &Engine, line: &[u8]) -> Option<Vec<u8>> {
    let limits = engine.config().json;
    let envelope = match json1::parse_envelope(line, &limits, false) {
        Ok(e) => e,
        Err(response) => return response,
    };
    let id = envelope.id?;
    let result = match envelope.method.as_str() {
        "daemon/status" => status(engine),
        "apps/list" => apps_list(engine),
        other => {
            let mut data = json1::reason_data("unknown_method");
            data.insert("method", other);
            let message = format!(
                "Unknown method {other:?}; the control socket has daemon/status and apps/list."
            );
            return Some(json1::error_line(&id, code::METHOD_NOT_FOUND, &message, data, &limits));
        }
    };
    if let Some(param) = envelope.params.keys().next() {
        let mut data = json1::reason_data("unknown_param");
        data.insert("param", param);
        let message = format!("Unknown parameter {param:?}.");
        return Some(json1::error_line(&id, code::INVALID_PARAMS, &message, data, &limits));
    }
    let mut response = Map::with_capacity(3);
    response.insert("jsonrpc", "2.0");
    response.insert("id", id.clone());
    response.insert("result", result);
    match jfgui_proto::encode(&Value::Object(response), &limits) {
        Ok(bytes) => Some(bytes),
        Err(e) => {
            let message = format!("The answer exceeds the message bounds: {e}.");
            let data = json1::reason_data("response_too_large");
            Some(json1::error_line(&id, code::INTERNAL_ERROR, &message, data, &limits))
        }
    }
}

fn status(engine: &Engine) -> Map {
    let config = engine.config();
    let mut m = Map::with_capacity(6);
    m.insert("version", env!("CARGO_PKG_VERSION"));
    m.insert("pid", std::process::id());
    m.insert("uptimeMs", u64::try_from(engine.uptime().as_millis()).unwrap_or(u64::MAX));
    m.insert(
        "runtimeDir",
        match &config.runtime_dir {
            Some(dir) => Value::from(dir.to_string_lossy().into_owned()),
            None => Value::Null,
        },
    );
    m.insert("apps", engine.apps().len() as u64);
    m.insert("clients", engine.client_count() as u64);
    m
}

fn apps_list(engine: &Engine) -> Map {
    let config = engine.config();
    let apps: Vec<Value> = engine
        .apps()
        .into_iter()
        .map(|a| {
            let endpoint = match config.endpoint_name(&a.slug) {
                Some(name) if a.enabled => Value::from(name),
                _ => Value::Null,
            };
            let mut m = Map::with_capacity(6);
            m.insert("slug", a.slug);
            m.insert("displayName", a.display_name);
            m.insert("pid", a.pid);
            m.insert("enabled", a.enabled);
            m.insert("actionCount", a.action_count as u64);
            m.insert("endpoint", endpoint);
            Value::Object(m)
        })
        .collect();
    let mut m = Map::with_capacity(1);
    m.insert("apps", Value::Array(apps));
    m
}
