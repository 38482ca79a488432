//! The legacy revision 2025-11-25 (docs/PROTOCOL.md "2025-11-25 (legacy, `initialize`)"): the
//! `initialize` handshake with its counteroffer, and the one piece of connection state it creates.

use jfgui_proto::{Map, Value};

use super::rpc::{INVALID_PARAMS, RpcError, object};
use crate::audit::ClientInfo;

/// The revision this module serves.
pub(crate) const LEGACY_VERSION: &str = "2025-11-25";

/// Legacy state of one connection. Only `initialize` changes it; modern requests never read it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct LegacyState {
    /// A valid `initialize` was accepted: legacy requests without the modern envelope are served.
    /// Set when the request is accepted, not when `notifications/initialized` arrives: stdio
    /// keeps order, and a client that omits the notification should not be locked out.
    pub initialized: bool,
}

/// Checks `initialize` params (`protocolVersion`, `capabilities`, `clientInfo{name,version}`,
/// all required by the schema) and returns the version the client offered and its
/// `clientInfo` (for the audit log).
pub(crate) fn check_initialize(params: Option<&Value>) -> Result<(String, ClientInfo), RpcError> {
    let bad = |what: &str| {
        RpcError::with_data(
            INVALID_PARAMS,
            format!("Invalid initialize params: {what}."),
            object([("reason", "invalid_initialize".into())]),
        )
    };
    let params = params.and_then(Value::as_object).ok_or_else(|| {
        bad("params must be an object with protocolVersion, capabilities and clientInfo")
    })?;
    let offered = params
        .get("protocolVersion")
        .and_then(Value::as_str)
        .ok_or_else(|| bad("protocolVersion must be a string"))?;
    if params.get("capabilities").and_then(Value::as_object).is_none() {
        return Err(bad("capabilities must be an object"));
    }
    let info = params.get("clientInfo");
    let name = info.and_then(|i| i.get("name")).and_then(Value::as_str);
    let version = info.and_then(|i| i.get("version")).and_then(Value::as_str);
    let (Some(name), Some(version)) = (name, version) else {
        return Err(bad("clientInfo must be an object with string name and version"));
    };
    Ok((offered.to_owned(), ClientInfo { name: name.to_owned(), version: version.to_owned() }))
}

/// The `InitializeResult`. We answer 2025-11-25 whatever was offered: the offered version when
/// it is that one, otherwise as the counteroffer (rmcp clients offer 2026-07-28 here and expect
/// exactly this).
pub(crate) fn initialize_result(
    capabilities: Map,
    server_info: Value,
    instructions: String,
) -> Map {
    object([
        ("protocolVersion", LEGACY_VERSION.into()),
        ("capabilities", Value::Object(capabilities)),
        ("serverInfo", server_info),
        ("instructions", instructions.into()),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(version: &str) -> Value {
        Value::Object(object([
            ("protocolVersion", version.into()),
            ("capabilities", Value::Object(Map::new())),
            ("clientInfo", Value::Object(object([("name", "c".into()), ("version", "1".into())]))),
        ]))
    }

    #[test]
    fn any_offered_version_is_accepted_for_the_counteroffer() {
        for v in ["2025-11-25", "2026-07-28", "2099-01-01", "2024-11-05"] {
            assert_eq!(check_initialize(Some(&params(v))).unwrap().0, v);
        }
    }

    #[test]
    fn malformed_initialize_params_are_invalid_params() {
        let mut no_info = params("2025-11-25");
        if let Value::Object(m) = &mut no_info {
            m.remove("clientInfo");
        }
        let mut caps_string = params("2025-11-25");
        if let Value::Object(m) = &mut caps_string {
            m.insert("capabilities", "none");
        }
        let numeric_version = Value::Object(object([
            ("protocolVersion", 20251125u64.into()),
            ("capabilities", Value::Object(Map::new())),
            ("clientInfo", Value::Object(object([("name", "c".into()), ("version", "1".into())]))),
        ]));
        for p in [
            None,
            Some(Value::Array(vec![])),
            Some(no_info),
            Some(caps_string),
            Some(numeric_version),
        ] {
            assert_eq!(check_initialize(p.as_ref()).unwrap_err().code, INVALID_PARAMS, "{p:?}");
        }
    }

    #[test]
    fn the_result_always_names_the_legacy_version() {
        let r = initialize_result(Map::new(), Value::Null, String::new());
        assert_eq!(r.get("protocolVersion").and_then(Value::as_str), Some(LEGACY_VERSION));
        assert!(r.contains_key("serverInfo") && r.contains_key("capabilities"));
        assert!(!r.contains_key("resultType"));
    }
}
