//! The modern revision 2026-07-28 (docs/PROTOCOL.md "2026-07-28 (modern, stateless)"): the
//! per-request `_meta` envelope, `server/discover`, and what every modern result carries
//! (`resultType`, `serverInfo`, cache hints). Every request stands alone: nothing is inferred from
//! earlier requests.

use jfgui_proto::{Map, Payload, Value};

use super::legacy::LEGACY_VERSION;
use super::rpc::{INVALID_PARAMS, RpcError, UNSUPPORTED_PROTOCOL_VERSION, object};
use crate::audit::ClientInfo;

/// The revision this module serves.
pub(crate) const MODERN_VERSION: &str = "2026-07-28";

/// `_meta` key of the protocol version.
pub(crate) const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
const META_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

/// How long a client may reuse `server/discover` and `tools/list`: the nine tools are fixed for
/// a daemon version, but the endpoint itself follows the app, so keep it short.
const LIST_TTL_MS: u64 = 60_000;
/// Resources change with the document (a render, an export): never reuse without asking.
const RESOURCE_TTL_MS: u64 = 0;

/// Which cache hints a result gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cache {
    /// Not a cacheable result (`tools/call`).
    None,
    /// `server/discover`, `tools/list`.
    List,
    /// `resources/list`, `resources/read`.
    Resource,
}

/// True when `params._meta` carries the modern protocol-version key: such a request is served
/// as 2026-07-28 (and, on an undecided connection, selects MCP).
pub(crate) fn has_envelope(params: Option<&Value>) -> bool {
    params
        .and_then(|p| p.get("_meta"))
        .and_then(Value::as_object)
        .is_some_and(|meta| meta.contains_key(META_PROTOCOL_VERSION))
}

/// Validates the envelope of a request that [`has_envelope`], in the order the revision sets:
/// unsupported version (-32022), then a missing or malformed required key (-32602). No request of
/// ours needs a client capability, so -32021 never applies.
pub(crate) fn check_envelope(params: &Map) -> Result<(), RpcError> {
    let meta = params.get("_meta").and_then(Value::as_object).ok_or_else(|| {
        RpcError::invalid_params("invalid_meta", "Invalid params: _meta must be an object.")
    })?;
    match meta.get(META_PROTOCOL_VERSION) {
        Some(Value::String(v)) if v == MODERN_VERSION => {}
        Some(Value::String(v)) => return Err(unsupported_version(v)),
        Some(other) => {
            return Err(RpcError::invalid_params(
                "invalid_meta",
                format!(
                    "Invalid params: _meta {META_PROTOCOL_VERSION} must be a string, not {}.",
                    other.type_name()
                ),
            ));
        }
        None => {
            return Err(RpcError::invalid_params(
                "invalid_meta",
                format!("Invalid params: _meta lacks {META_PROTOCOL_VERSION}."),
            ));
        }
    }
    match meta.get(META_CLIENT_CAPABILITIES) {
        Some(Value::Object(_)) => {}
        Some(other) => {
            return Err(RpcError::invalid_params(
                "invalid_meta",
                format!(
                    "Invalid params: _meta {META_CLIENT_CAPABILITIES} must be an object, not {}.",
                    other.type_name()
                ),
            ));
        }
        None => {
            return Err(RpcError::invalid_params(
                "invalid_meta",
                format!("Invalid params: _meta lacks {META_CLIENT_CAPABILITIES}."),
            ));
        }
    }
    if let Some(info) = meta.get(META_CLIENT_INFO) {
        let valid = info.get("name").and_then(Value::as_str).is_some()
            && info.get("version").and_then(Value::as_str).is_some();
        if !valid {
            return Err(RpcError::invalid_params(
                "invalid_meta",
                format!(
                    "Invalid params: _meta {META_CLIENT_INFO} must be an object with string name and version."
                ),
            ));
        }
    }
    if meta.get(META_LOG_LEVEL).is_some_and(|level| level.as_str().is_none()) {
        return Err(RpcError::invalid_params(
            "invalid_meta",
            format!("Invalid params: _meta {META_LOG_LEVEL} must be a string."),
        ));
    }
    Ok(())
}

/// The `_meta` clientInfo of a request that passed [`check_envelope`], for the audit log.
pub(crate) fn client_info(params: &Map) -> Option<ClientInfo> {
    let info = params.get("_meta")?.get(META_CLIENT_INFO)?;
    let name = info.get("name")?.as_str()?.to_owned();
    let version = info.get("version")?.as_str()?.to_owned();
    Some(ClientInfo { name, version })
}

/// The revisions this server speaks, newest first: `server/discover`'s `supportedVersions` and
/// -32022's `supported` name the same two.
fn supported() -> Value {
    Value::Array(vec![MODERN_VERSION.into(), LEGACY_VERSION.into()])
}

/// -32022 with the versions a client can fall back to (both revisions, so a client
/// that also speaks 2025-11-25 retries with `initialize`).
pub(crate) fn unsupported_version(requested: &str) -> RpcError {
    let data = object([("supported", supported()), ("requested", requested.into())]);
    RpcError::with_data(
        UNSUPPORTED_PROTOCOL_VERSION,
        format!(
            "Unsupported protocol version {requested:?}: this server speaks {MODERN_VERSION} (per-request _meta) and {LEGACY_VERSION} (initialize)."
        ),
        data,
    )
}

/// `{name, version}` of the daemon, plus the app as `title`.
pub(crate) fn server_info(display_name: &str) -> Value {
    Value::Object(object([
        ("name", "jfgui-agentd".into()),
        ("title", format!("{display_name} (jfgui-agentd)").into()),
        ("version", env!("CARGO_PKG_VERSION").into()),
    ]))
}

/// Makes `result` a modern result: `resultType`, `_meta` serverInfo and, where the schema asks
/// for them, the cache hints.
pub(crate) fn finish(mut result: Payload, display_name: &str, cache: Cache) -> Payload {
    result.insert("resultType", "complete");
    let ttl = match cache {
        Cache::None => None,
        Cache::List => Some(LIST_TTL_MS),
        Cache::Resource => Some(RESOURCE_TTL_MS),
    };
    if let Some(ttl) = ttl {
        result.insert("ttlMs", ttl);
        // A per-user daemon: results describe this user's apps.
        result.insert("cacheScope", "private");
    }
    result.insert("_meta", Value::Object(object([(META_SERVER_INFO, server_info(display_name))])));
    result
}

/// The `server/discover` result (before [`finish`]).
pub(crate) fn discover(capabilities: Map, instructions: String) -> Map {
    object([
        // The same two as -32022's `supported` (the conformance suite checks one contains the
        // other); 2025-11-25 is reached through `initialize`.
        ("supportedVersions", supported()),
        ("capabilities", Value::Object(capabilities)),
        ("instructions", instructions.into()),
    ])
}

/// -32602 for an MCP request that carries neither the modern envelope nor follows an
/// `initialize`: it names both ways in.
pub(crate) fn no_way_in(method: &str) -> RpcError {
    let data = object([
        ("reason", "missing_mcp_envelope".into()),
        ("method", method.into()),
        ("supported", supported()),
    ]);
    RpcError::with_data(
        INVALID_PARAMS,
        format!(
            "Invalid params: {method} needs either params._meta with {META_PROTOCOL_VERSION} \"{MODERN_VERSION}\" and {META_CLIENT_CAPABILITIES} (2026-07-28), or an initialize handshake first (2025-11-25)."
        ),
        data,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(meta: Map) -> Map {
        object([("_meta", Value::Object(meta))])
    }

    fn good_meta() -> Map {
        object([
            (META_PROTOCOL_VERSION, MODERN_VERSION.into()),
            (META_CLIENT_CAPABILITIES, Value::Object(Map::new())),
        ])
    }

    #[test]
    fn a_complete_envelope_passes() {
        assert_eq!(check_envelope(&params(good_meta())), Ok(()));
        let mut meta = good_meta();
        meta.insert(META_CLIENT_INFO, object([("name", "t".into()), ("version", "1".into())]));
        assert_eq!(check_envelope(&params(meta)), Ok(()));
    }

    #[test]
    fn an_unsupported_version_wins_over_a_missing_capability() {
        let meta = object([(META_PROTOCOL_VERSION, "1900-01-01".into())]);
        let e = check_envelope(&params(meta)).unwrap_err();
        assert_eq!(e.code, UNSUPPORTED_PROTOCOL_VERSION);
        let data = e.data.unwrap();
        assert_eq!(
            data.get("supported").unwrap(),
            &Value::Array(vec!["2026-07-28".into(), "2025-11-25".into()])
        );
        assert_eq!(data.get("requested").and_then(Value::as_str), Some("1900-01-01"));
    }

    #[test]
    fn the_legacy_version_in_the_envelope_is_unsupported_too() {
        let mut meta = good_meta();
        meta.insert(META_PROTOCOL_VERSION, "2025-11-25");
        assert_eq!(check_envelope(&params(meta)).unwrap_err().code, UNSUPPORTED_PROTOCOL_VERSION);
    }

    #[test]
    fn missing_or_malformed_keys_are_invalid_params() {
        let cases = [
            object([(META_PROTOCOL_VERSION, MODERN_VERSION.into())]),
            object([
                (META_PROTOCOL_VERSION, MODERN_VERSION.into()),
                (META_CLIENT_CAPABILITIES, "all".into()),
            ]),
            object([
                (META_PROTOCOL_VERSION, 20260728u64.into()),
                (META_CLIENT_CAPABILITIES, Value::Object(Map::new())),
            ]),
            {
                let mut m = good_meta();
                m.insert(META_CLIENT_INFO, "me");
                m
            },
            {
                let mut m = good_meta();
                m.insert(META_LOG_LEVEL, 3u64);
                m
            },
        ];
        for meta in cases {
            let e = check_envelope(&params(meta.clone())).unwrap_err();
            assert_eq!(e.code, INVALID_PARAMS, "{meta:?}");
        }
        let e = check_envelope(&object([("_meta", "x".into())])).unwrap_err();
        assert_eq!(e.code, INVALID_PARAMS);
    }

    #[test]
    fn finish_adds_result_type_server_info_and_cache_hints() {
        let r = finish(Map::new().into(), "Notepad", Cache::List);
        assert_eq!(r.get("resultType").and_then(Value::as_str), Some("complete"));
        assert_eq!(r.get("ttlMs").and_then(Value::as_u64), Some(LIST_TTL_MS));
        assert_eq!(r.get("cacheScope").and_then(Value::as_str), Some("private"));
        let info = r.get("_meta").and_then(|m| m.get(META_SERVER_INFO)).unwrap();
        assert_eq!(info.get("name").and_then(Value::as_str), Some("jfgui-agentd"));
        let call = finish(Map::new().into(), "Notepad", Cache::None);
        assert!(!call.has("ttlMs") && !call.has("cacheScope"));
    }
}
