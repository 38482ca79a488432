//! Standard MCP `resources/list` and `resources/read`: served only while the host lists resources;
//! a read returns the whole resource when it is at most 192 KiB (its base64, 256 KiB, then fits the
//! 256 KiB bound on one JSON string); larger ones are refused with a pointer to the chunked tool
//! `jfgui_resources_read`.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use jfgui_proto::{Map, Reason, Value};

use super::backend::Backend;
use super::rpc::{
    INTERNAL_ERROR, INVALID_PARAMS, METHOD_NOT_FOUND, RESOURCE_NOT_FOUND, RpcError, object,
};
use crate::client::method::Method;
use crate::client::method::MethodError;

/// Largest resource served whole by standard `resources/read`.
pub(crate) const MAX_WHOLE_RESOURCE: u64 = 192 * 1024;
/// Chunk size asked of the app (the JSON-1 maximum).
const CHUNK: u64 = 65536;

/// Which revision's conventions apply to "resource not found".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NotFoundCode {
    /// 2026-07-28: -32602 (-32002 is retired).
    InvalidParams,
    /// 2025-11-25: -32002 "Resource not found".
    ResourceNotFound,
}

/// True when the host lists at least one resource (then `resources` is advertised).
pub(crate) async fn host_lists_resources<B: Backend>(app: &B) -> Result<bool, RpcError> {
    Ok(!app.list_resources().await.map_err(internal)?.is_empty())
}

/// The server capabilities both revisions advertise: tools always, resources when listed.
pub(crate) fn capabilities(resources: bool) -> Map {
    let mut caps = object([("tools", Value::Object(object([("listChanged", false.into())])))]);
    if resources {
        // No subscriptions and no list_changed notifications: only what is implemented.
        caps.insert(
            "resources",
            object([("subscribe", false.into()), ("listChanged", false.into())]),
        );
    }
    caps
}

/// `resources/list` (era-neutral members).
pub(crate) async fn list<B: Backend>(app: &B, params: Option<&Map>) -> Result<Map, RpcError> {
    if params.and_then(|p| p.get("cursor")).is_some() {
        return Err(RpcError::invalid_params(
            "invalid_cursor",
            "Invalid params: resources/list never returns a cursor, so none can be passed back.",
        ));
    }
    let listed = app.list_resources().await.map_err(internal)?;
    if listed.is_empty() {
        return Err(no_resources(app));
    }
    let resources = listed
        .into_iter()
        .map(|r| {
            let mut m = object([
                ("uri", r.uri.into()),
                ("name", r.name.into()),
                ("mimeType", r.mime_type.into()),
            ]);
            if let Some(size) = r.size {
                m.insert("size", size);
            }
            Value::Object(m)
        })
        .collect();
    Ok(object([("resources", Value::Array(resources))]))
}

/// `resources/templates/list`: apps name resources by the URIs their actions return, so there
/// are no templates; answered (empty) because clients that see `resources` ask for it.
pub(crate) async fn templates<B: Backend>(app: &B, params: Option<&Map>) -> Result<Map, RpcError> {
    if params.and_then(|p| p.get("cursor")).is_some() {
        return Err(RpcError::invalid_params(
            "invalid_cursor",
            "Invalid params: resources/templates/list never returns a cursor, so none can be passed back.",
        ));
    }
    if !host_lists_resources(app).await? {
        return Err(no_resources(app));
    }
    Ok(object([("resourceTemplates", Value::Array(Vec::new()))]))
}

/// `resources/read` of a whole resource (era-neutral members).
pub(crate) async fn read<B: Backend>(
    app: &B,
    params: Option<&Map>,
    not_found: NotFoundCode,
) -> Result<Map, RpcError> {
    let uri = match params.and_then(|p| p.get("uri")) {
        Some(Value::String(uri)) => uri.clone(),
        _ => {
            return Err(RpcError::invalid_params(
                "invalid_uri",
                "Invalid params: resources/read needs params.uri, a string.",
            ));
        }
    };
    if !host_lists_resources(app).await? {
        return Err(no_resources(app));
    }
    let Whole { bytes, mime_type } =
        read_whole(app, &Map::new(), &uri, MAX_WHOLE_RESOURCE).await.map_err(|e| match e {
            WholeError::NotFound => resource_not_found(&uri, not_found),
            WholeError::TooLarge(total) => too_large(&uri, total),
            WholeError::Failed(e) => e,
        })?;
    let mut contents = object([("uri", uri.into()), ("mimeType", mime_type.as_str().into())]);
    match textual(&mime_type).then(|| std::str::from_utf8(&bytes).ok()).flatten() {
        Some(text) => contents.insert("text", text),
        None => contents.insert("blob", BASE64.encode(&bytes)),
    };
    Ok(object([("contents", Value::Array(vec![Value::Object(contents)]))]))
}

/// A whole resource, read chunk by chunk.
pub(crate) struct Whole {
    pub bytes: Vec<u8>,
    pub mime_type: String,
}

/// Why [`read_whole`] gave up.
pub(crate) enum WholeError {
    /// The app has no resource of that URI.
    NotFound,
    /// The resource is this many bytes, more than asked for.
    TooLarge(u64),
    /// The app failed or answered something malformed.
    Failed(RpcError),
}

/// Reads resource `uri` whole through `jfgui_resources_read`'s method, in chunks of
/// [`CHUNK`], giving up as soon as its size is known to exceed `max`. `base` holds the params
/// every chunk request carries besides uri/offset/limit (the all-apps server's `app`).
pub(crate) async fn read_whole<B: Backend>(
    app: &B,
    base: &Map,
    uri: &str,
    max: u64,
) -> Result<Whole, WholeError> {
    let malformed = |message: &str| WholeError::Failed(RpcError::new(INTERNAL_ERROR, message));
    let mut bytes = Vec::new();
    let mut mime_type = String::new();
    loop {
        let offset = bytes.len() as u64;
        let mut params = base.clone();
        params.insert("uri", uri);
        params.insert("offset", offset);
        params.insert("limit", CHUNK);
        let chunk = app.call(Method::ResourcesRead, params).await.map_err(|e| match e {
            MethodError::Action(a) if matches!(a.reason, Reason::Resource { .. }) => {
                WholeError::NotFound
            }
            other => WholeError::Failed(internal(other)),
        })?;
        let total = chunk.get("totalSize").and_then(Value::as_u64);
        let data = chunk.get("data").and_then(Value::as_str);
        let eof = chunk.get("eof").and_then(Value::as_bool);
        let (Some(total), Some(data), Some(eof)) = (total, data, eof) else {
            return Err(malformed("The app answered a malformed resource chunk."));
        };
        if total > max {
            return Err(WholeError::TooLarge(total));
        }
        let decoded = BASE64
            .decode(data)
            .map_err(|_| malformed("The app answered a resource chunk that is not base64."))?;
        if let Some(m) = chunk.get("mimeType").and_then(Value::as_str) {
            m.clone_into(&mut mime_type);
        }
        let progressed = !decoded.is_empty();
        bytes.extend_from_slice(&decoded);
        if bytes.len() as u64 > total {
            return Err(malformed("The app sent more bytes than the resource's size."));
        }
        if eof || bytes.len() as u64 == total {
            return Ok(Whole { bytes, mime_type });
        }
        if !progressed {
            return Err(malformed("The app answered an empty chunk before the end."));
        }
    }
}

/// MIME types served as `text` contents (when the bytes are UTF-8).
pub(crate) fn textual(mime_type: &str) -> bool {
    let essence = mime_type.split(';').next().unwrap_or("").trim();
    essence.starts_with("text/") || essence == "application/json" || essence.ends_with("+json")
}

fn no_resources<B: Backend>(app: &B) -> RpcError {
    RpcError::with_data(
        METHOD_NOT_FOUND,
        app.no_resources_message(),
        object([("reason", "no_resources".into()), ("tool", "jfgui_resources_read".into())]),
    )
}

fn too_large(uri: &str, total: u64) -> RpcError {
    RpcError::with_data(
        INVALID_PARAMS,
        format!(
            "The resource is {total} bytes, more than the {MAX_WHOLE_RESOURCE} bytes resources/read serves whole; read it in chunks with the jfgui_resources_read tool."
        ),
        object([
            ("reason", "resource_too_large".into()),
            ("uri", uri.into()),
            ("totalSize", total.into()),
            ("maxSize", MAX_WHOLE_RESOURCE.into()),
            ("tool", "jfgui_resources_read".into()),
        ]),
    )
}

fn resource_not_found(uri: &str, code: NotFoundCode) -> RpcError {
    let data = object([("reason", "resource_not_found".into()), ("uri", uri.into())]);
    let code = match code {
        NotFoundCode::InvalidParams => INVALID_PARAMS,
        NotFoundCode::ResourceNotFound => RESOURCE_NOT_FOUND,
    };
    RpcError::with_data(code, format!("Resource not found: {uri}."), data)
}

/// A failed host call outside a tool: the protocol has no `isError`, so it is a JSON-RPC error
/// that still carries the application error for programs that look.
fn internal(error: MethodError) -> RpcError {
    match error {
        MethodError::InvalidParams { message, data } => {
            RpcError::with_data(INVALID_PARAMS, message, data)
        }
        MethodError::Internal { message } => RpcError::new(INTERNAL_ERROR, message),
        MethodError::Action(a) => RpcError::with_data(
            INTERNAL_ERROR,
            a.message.clone(),
            object([("reason", "app_error".into()), ("error", a.to_wire())]),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn textual_mime_types() {
        assert!(textual("text/plain"));
        assert!(textual("text/plain; charset=utf-8"));
        assert!(textual("application/json"));
        assert!(textual("application/ld+json"));
        assert!(!textual("image/png"));
        assert!(!textual("application/octet-stream"));
    }

    #[test]
    fn the_whole_resource_bound_keeps_base64_within_the_string_bound() {
        assert_eq!(MAX_WHOLE_RESOURCE.div_ceil(3) * 4, 256 * 1024);
    }

    #[test]
    fn capabilities_advertise_resources_only_when_listed() {
        assert!(!capabilities(false).contains_key("resources"));
        assert!(capabilities(true).contains_key("resources"));
        assert!(capabilities(false).contains_key("tools"));
    }
}
