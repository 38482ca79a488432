//! Tests of an endpoint's protocols against an in-memory app: selection, both MCP revisions,
//! tools, resources, cancellation, and result shapes checked against the official MCP JSON
//! schemas.

use std::sync::Mutex;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use jfgui_proto::channel::ResourceInfo;
use jfgui_proto::{ActionError, Limits, Map, Payload, Reason, Value};
use tokio::sync::Notify;

use super::*;
use crate::PeerInfo;
use crate::client::mcp::{self, Backend, Reply, RpcError, object};
use crate::client::method::{Method, MethodError};
use crate::client::peer_warnings::PeerWarnings;

const SCHEMA_MODERN: &str =
    include_str!("../../../../../tests/mcp-clients/schema/schema-2026-07-28.json");
const SCHEMA_LEGACY: &str =
    include_str!("../../../../../tests/mcp-clients/schema/schema-2025-11-25.json");

/// An app with a document revision, a few resources and a gate to hold calls in flight.
struct FakeApp {
    revision: Mutex<u64>,
    resources: Vec<(ResourceInfo, Vec<u8>)>,
    calls: Mutex<Vec<(String, Map)>>,
    gate: Option<Notify>,
}

impl FakeApp {
    /// What the app answers `method` with.
    async fn respond(&self, method: Method, params: Map) -> Result<Map, MethodError> {
        let method = method.name();
        self.calls.lock().unwrap().push((method.to_owned(), params.clone()));
        if let Some(gate) = &self.gate {
            gate.notified().await;
        }
        match method {
            "actions/list" => Ok(object([(
                "actions",
                Value::Array(vec![Value::Object(object([
                    ("name", "document.text.insert".into()),
                    ("description", "Insert text".into()),
                    ("kind", "write".into()),
                ]))]),
            )])),
            "actions/execute" => {
                if params.get("action").is_none() {
                    return Err(MethodError::InvalidParams {
                        message: "actions/execute needs action.".into(),
                        data: object([
                            ("reason", "schema_violation".into()),
                            ("pointer", "/action".into()),
                        ]),
                    });
                }
                let mut revision = self.revision.lock().unwrap();
                match params.get("expectedRevision").and_then(Value::as_u64) {
                    Some(r) if r == *revision => {
                        *revision += 1;
                        Ok(object([
                            ("output", Value::Object(Map::new())),
                            ("revision", (*revision).into()),
                        ]))
                    }
                    Some(_) => Err(MethodError::Action(ActionError::new(
                        Reason::StaleRevision { current_revision: *revision },
                        "The document changed since that revision.",
                    ))),
                    None => Err(MethodError::Action(ActionError::new(
                        Reason::RevisionRequired,
                        "Write actions need expectedRevision.",
                    ))),
                }
            }
            // Renders the resource `input.uri` names, as an app's ui.render names its PNG.
            "view/render" => {
                let uri = params.get("input").and_then(|i| i.get("uri")).and_then(Value::as_str);
                let uri = uri.unwrap_or("render://view.png");
                let (info, bytes) = self.resources.iter().find(|(i, _)| i.uri == uri).unwrap();
                let output = object([
                    ("uri", uri.into()),
                    ("mimeType", info.mime_type.as_str().into()),
                    ("size", (bytes.len() as u64).into()),
                ]);
                Ok(object([("output", Value::Object(output)), ("revision", 3u64.into())]))
            }
            "state/inspect" => Ok(object([
                ("revision", (*self.revision.lock().unwrap()).into()),
                ("state", Value::Object(object([("text", "hi".into())]))),
            ])),
            "resources/read" => {
                let uri = params.get("uri").and_then(Value::as_str).unwrap_or_default();
                let Some((info, bytes)) = self.resources.iter().find(|(i, _)| i.uri == uri) else {
                    return Err(MethodError::Action(ActionError::new(
                        Reason::Resource { resource: uri.into() },
                        "No such resource.",
                    )));
                };
                let offset = params.get("offset").and_then(Value::as_u64).unwrap_or(0) as usize;
                let limit = params.get("limit").and_then(Value::as_u64).unwrap_or(65536) as usize;
                let end = bytes.len().min(offset + limit);
                Ok(object([
                    ("uri", uri.into()),
                    ("mimeType", info.mime_type.as_str().into()),
                    ("offset", (offset as u64).into()),
                    ("totalSize", (bytes.len() as u64).into()),
                    ("data", BASE64.encode(&bytes[offset..end]).into()),
                    ("eof", (end == bytes.len()).into()),
                ]))
            }
            _ => Err(MethodError::Internal { message: format!("fake app has no {method}") }),
        }
    }

    fn new() -> FakeApp {
        let png = png_bytes(1000);
        FakeApp {
            revision: Mutex::new(3),
            resources: vec![
                (
                    ResourceInfo {
                        uri: "render://view.png".into(),
                        name: "view.png".into(),
                        mime_type: "image/png".into(),
                        size: Some(png.len() as u64),
                    },
                    png,
                ),
                (
                    ResourceInfo {
                        uri: "export://document.txt".into(),
                        name: "document.txt".into(),
                        mime_type: "text/plain".into(),
                        size: None,
                    },
                    b"hello world".to_vec(),
                ),
                (
                    ResourceInfo {
                        uri: "big://blob".into(),
                        name: "blob".into(),
                        mime_type: "application/octet-stream".into(),
                        size: None,
                    },
                    vec![7; 200 * 1024],
                ),
            ],
            calls: Mutex::new(Vec::new()),
            gate: None,
        }
    }

    /// With a render too large to show inline as well (`render://big.png`).
    fn with_big_render() -> FakeApp {
        let mut app = FakeApp::new();
        let big = png_bytes(300 * 1024);
        let info = ResourceInfo {
            uri: "render://big.png".into(),
            name: "big.png".into(),
            mime_type: "image/png".into(),
            size: Some(big.len() as u64),
        };
        app.resources.push((info, big));
        app
    }

    fn without_resources() -> FakeApp {
        FakeApp { resources: Vec::new(), ..FakeApp::new() }
    }

    fn gated() -> FakeApp {
        FakeApp { gate: Some(Notify::new()), ..FakeApp::new() }
    }

    fn methods(&self) -> Vec<String> {
        self.calls.lock().unwrap().iter().map(|(m, _)| m.clone()).collect()
    }
}

fn png_bytes(len: usize) -> Vec<u8> {
    let mut v = b"\x89PNG\r\n\x1a\n".to_vec();
    v.resize(len, 0xAB);
    v
}

impl Backend for FakeApp {
    fn instructions(&self) -> String {
        mcp::instructions(&self.display_name())
    }

    fn tool_list(&self) -> &'static [Value] {
        mcp::tool_list()
    }

    fn display_name(&self) -> String {
        "Notepad".into()
    }

    async fn call(&self, method: Method, params: Map) -> Result<Payload, MethodError> {
        self.respond(method, params).await.map(Payload::from)
    }

    async fn list_resources(&self) -> Result<Vec<ResourceInfo>, MethodError> {
        Ok(self.resources.iter().map(|(i, _)| i.clone()).collect())
    }
}

// ---- message helpers ----

fn parse(text: &str) -> Map {
    match jfgui_proto::parse(text.as_bytes(), &Limits::DEFAULT).unwrap() {
        Value::Object(m) => m,
        other => panic!("not an object: {other:?}"),
    }
}

const META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"test","version":"1"}}"#;

fn modern(id: u64, method: &str, params: &str) -> Map {
    let sep = if params.is_empty() { "" } else { "," };
    parse(&format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{{{META}{sep}{params}}}}}"#
    ))
}

fn plain(id: u64, method: &str, params: &str) -> Map {
    parse(&format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{{{params}}}}}"#))
}

fn initialize(id: u64, version: &str) -> Map {
    plain(
        id,
        "initialize",
        &format!(
            r#""protocolVersion":"{version}","capabilities":{{}},"clientInfo":{{"name":"t","version":"1"}}"#
        ),
    )
}

fn notification(method: &str, params: &str) -> Map {
    parse(&format!(r#"{{"jsonrpc":"2.0","method":"{method}","params":{{{params}}}}}"#))
}

/// Routes a message and, for MCP work, runs it to its reply.
async fn send<B: Backend>(protocol: &mut Selection, app: &B, msg: &Map) -> Option<Reply> {
    match protocol.route(&Incoming::from_message(msg), &mut PeerWarnings::new(PeerInfo::default()))
    {
        Route::Json1 => panic!("routed to JSON-1: {msg:?}"),
        Route::Mcp(mcp::Route::Answer(reply)) => Some(reply),
        Route::Mcp(mcp::Route::Run(pending)) => pending.run(app).await,
        Route::Mcp(mcp::Route::Silent) => None,
    }
}

/// The result, as the client reads it: encoded and parsed again, so pre-encoded parts (the
/// text twin) are trees like the rest.
async fn ok<B: Backend>(protocol: &mut Selection, app: &B, msg: &Map) -> Map {
    let result = send(protocol, app, msg)
        .await
        .expect("a reply")
        .unwrap_or_else(|e| panic!("error {e:?} for {msg:?}"));
    let limits = Limits { max_bytes: usize::MAX, ..Limits::DEFAULT };
    let line = jfgui_proto::encode(&result, &limits).expect("within the bounds");
    match jfgui_proto::parse(&line, &limits) {
        Ok(Value::Object(result)) => result,
        other => panic!("a result object, not {other:?}"),
    }
}

async fn err<B: Backend>(protocol: &mut Selection, app: &B, msg: &Map) -> RpcError {
    match send(protocol, app, msg).await.expect("a reply") {
        Ok(r) => panic!("expected an error for {msg:?}, got {r:?}"),
        Err(e) => e,
    }
}

fn is_undecided(p: &Selection) -> bool {
    matches!(p, Selection::Undecided)
}

fn data_str<'a>(e: &'a RpcError, key: &str) -> Option<&'a str> {
    e.data.as_ref().and_then(|d| d.get(key)).and_then(Value::as_str)
}

// ---- a small JSON Schema checker over the official schema files ----

pub(crate) struct Schemas {
    root: Value,
}

impl Schemas {
    fn load(text: &str) -> Schemas {
        let limits = Limits { max_bytes: 4 << 20, ..Limits::DEFAULT };
        Schemas { root: jfgui_proto::parse(text.as_bytes(), &limits).unwrap() }
    }

    fn def(&self, name: &str) -> &Value {
        self.root
            .get("$defs")
            .and_then(|d| d.get(name))
            .unwrap_or_else(|| panic!("no $defs/{name}"))
    }

    /// Checks `value` against `$defs/name`: type, const, enum, required, properties, items,
    /// additionalProperties schemas, anyOf/oneOf and $ref — the keywords the MCP schemas use
    /// for result shapes.
    pub(crate) fn check(&self, name: &str, value: &Value) {
        if let Err(e) = self.validate(self.def(name), value, "") {
            panic!("not a valid {name}: {e}\nvalue: {value:?}");
        }
    }

    fn validate(&self, schema: &Value, value: &Value, path: &str) -> Result<(), String> {
        if let Some(r) = schema.get("$ref").and_then(Value::as_str) {
            let name = r.strip_prefix("#/$defs/").ok_or_else(|| format!("odd $ref {r}"))?;
            return self.validate(self.def(name), value, path);
        }
        if let Some(Value::Array(types)) = schema.get("type") {
            if !types.iter().any(|t| type_matches(t.as_str().unwrap_or(""), value)) {
                return Err(format!("{path}: type {} not in {types:?}", value.type_name()));
            }
        } else if let Some(t) = schema.get("type").and_then(Value::as_str)
            && !type_matches(t, value)
        {
            return Err(format!("{path}: expected {t}, found {}", value.type_name()));
        }
        if let Some(c) = schema.get("const")
            && c != value
        {
            return Err(format!("{path}: expected const {c:?}"));
        }
        if let Some(Value::Array(options)) = schema.get("enum")
            && !options.contains(value)
        {
            return Err(format!("{path}: {value:?} not in enum"));
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(Value::Array(branches)) = schema.get(key) {
                let errors: Vec<String> =
                    branches.iter().filter_map(|b| self.validate(b, value, path).err()).collect();
                if errors.len() == branches.len() {
                    return Err(format!("{path}: no {key} branch matches: {errors:?}"));
                }
            }
        }
        if let Value::Object(members) = value {
            if let Some(Value::Array(required)) = schema.get("required") {
                for r in required {
                    let r = r.as_str().unwrap_or("");
                    if !members.contains_key(r) {
                        return Err(format!("{path}: missing required member {r}"));
                    }
                }
            }
            let properties = schema.get("properties").and_then(Value::as_object);
            for (k, v) in members.iter() {
                match properties.and_then(|p| p.get(k)) {
                    Some(s) => self.validate(s, v, &format!("{path}/{k}"))?,
                    None => match schema.get("additionalProperties") {
                        Some(Value::Bool(false)) => {
                            return Err(format!("{path}: member {k} not allowed"));
                        }
                        Some(s @ Value::Object(_)) => {
                            self.validate(s, v, &format!("{path}/{k}"))?
                        }
                        _ => {}
                    },
                }
            }
        }
        if let (Value::Array(items), Some(s)) = (value, schema.get("items")) {
            for (i, item) in items.iter().enumerate() {
                self.validate(s, item, &format!("{path}/{i}"))?;
            }
        }
        Ok(())
    }
}

fn type_matches(t: &str, v: &Value) -> bool {
    match t {
        "object" => matches!(v, Value::Object(_)),
        "array" => matches!(v, Value::Array(_)),
        "string" => matches!(v, Value::String(_)),
        "boolean" => matches!(v, Value::Bool(_)),
        "null" => v.is_null(),
        "integer" => v.as_i64().is_some() || v.as_u64().is_some(),
        "number" => matches!(v, Value::Number(_)),
        _ => true,
    }
}

pub(crate) fn modern_schema() -> Schemas {
    Schemas::load(SCHEMA_MODERN)
}

pub(crate) fn legacy_schema() -> Schemas {
    Schemas::load(SCHEMA_LEGACY)
}

/// A full response object around a result, for the schema's response definitions.
fn result_value(r: Map) -> Value {
    Value::Object(r)
}

// ---- selection (per connection, sticky) ----

#[tokio::test]
async fn undecided_answers_mcp_names_without_deciding() {
    let app = FakeApp::new();
    let mut p = Selection::default();
    assert_eq!(ok(&mut p, &app, &plain(1, "ping", "")).await, Map::new());
    assert!(is_undecided(&p));
    for method in ["tools/list", "tools/call", "server/discover", "resources/list", "prompts/list"]
    {
        let e = err(&mut p, &app, &plain(2, method, "")).await;
        assert_eq!(e.code, -32602, "{method}");
        assert!(e.message.contains("initialize") && e.message.contains("_meta"), "{}", e.message);
        assert_eq!(data_str(&e, "reason"), Some("missing_mcp_envelope"));
        assert!(is_undecided(&p));
    }
    let e = err(&mut p, &app, &plain(3, "no/such", "")).await;
    assert_eq!(e.code, -32601);
    // The same machine-readable reason JSON-1 and the control socket give.
    assert_eq!(data_str(&e, "reason"), Some("unknown_method"));
    assert!(is_undecided(&p));
    assert!(send(&mut p, &app, &notification("notifications/initialized", "")).await.is_none());
    assert!(
        send(&mut p, &app, &notification("actions/execute", r#""action":"x""#)).await.is_none()
    );
    assert!(is_undecided(&p));
    assert!(app.methods().is_empty(), "nothing reached the app");
}

#[tokio::test]
async fn a_json1_method_selects_json1_for_good() {
    let mut p = Selection::default();
    assert!(matches!(
        p.route(
            &Incoming::from_message(&plain(1, "actions/list", "")),
            &mut PeerWarnings::new(PeerInfo::default())
        ),
        Route::Json1
    ));
    // Later MCP attempts are JSON-1's to refuse (it answers initialize with -32601).
    for msg in [initialize(2, "2025-11-25"), modern(3, "tools/list", ""), plain(4, "ping", "")] {
        assert!(matches!(
            p.route(&Incoming::from_message(&msg), &mut PeerWarnings::new(PeerInfo::default())),
            Route::Json1
        ));
    }
}

#[tokio::test]
async fn the_modern_envelope_selects_mcp_even_on_a_json1_name() {
    let app = FakeApp::new();
    let mut p = Selection::default();
    let r =
        ok(&mut p, &app, &modern(1, "resources/read", r#""uri":"export://document.txt""#)).await;
    assert!(matches!(p, Selection::Mcp(_)));
    let contents = r.get("contents").and_then(Value::as_array).unwrap();
    assert_eq!(contents[0].get("text").and_then(Value::as_str), Some("hello world"));
    modern_schema().check("ReadResourceResult", &result_value(r));
    // Sticky: a JSON-1 method is now a protocol error, not JSON-1.
    let e = err(&mut p, &app, &plain(2, "actions/list", "")).await;
    assert_eq!(e.code, -32602);
}

#[tokio::test]
async fn initialize_then_json1_is_a_protocol_error() {
    let app = FakeApp::new();
    let mut p = Selection::default();
    ok(&mut p, &app, &initialize(1, "2025-11-25")).await;
    let e = err(&mut p, &app, &plain(2, "actions/list", "")).await;
    assert_eq!(e.code, -32601);
    let e = err(&mut p, &app, &plain(3, "agent/info", "")).await;
    assert_eq!(e.code, -32601);
}

#[tokio::test]
async fn a_modern_envelope_with_a_bad_version_still_selects_mcp() {
    let app = FakeApp::new();
    let mut p = Selection::default();
    let msg = parse(
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"1900-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
    );
    let e = err(&mut p, &app, &msg).await;
    assert_eq!(e.code, -32022);
    assert_eq!(data_str(&e, "requested"), Some("1900-01-01"));
    assert!(matches!(p, Selection::Mcp(_)));
    let response = Value::Object(object([
        ("jsonrpc", "2.0".into()),
        ("id", 1u64.into()),
        ("error", e.to_value()),
    ]));
    modern_schema().check("UnsupportedProtocolVersionError", &response);
}

// ---- modern revision ----

#[tokio::test]
async fn modern_envelope_errors() {
    let app = FakeApp::new();
    let mut p = Selection::default();
    ok(&mut p, &app, &modern(1, "server/discover", "")).await;
    let cases = [
        // clientCapabilities missing
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#,
        // clientCapabilities not an object
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":[]}}}"#,
        // version not a string
        r#"{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":20260728,"io.modelcontextprotocol/clientCapabilities":{}}}}"#,
        // no _meta at all, no initialize
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{}}"#,
        // _meta not an object
        r#"{"jsonrpc":"2.0","id":6,"method":"tools/list","params":{"_meta":7}}"#,
        // no params
        r#"{"jsonrpc":"2.0","id":7,"method":"tools/call"}"#,
    ];
    for c in cases {
        assert_eq!(err(&mut p, &app, &parse(c)).await.code, -32602, "{c}");
    }
    let e = err(&mut p, &app, &modern(8, "prompts/list", "")).await;
    assert_eq!(e.code, -32601);
    let e = err(&mut p, &app, &modern(9, "ping", "")).await;
    assert_eq!(e.code, -32601, "ping is gone in 2026-07-28");
    let e = err(&mut p, &app, &modern(10, "tools/list", r#""cursor":"x""#)).await;
    assert_eq!(e.code, -32602);
    let legacy_version = parse(
        r#"{"jsonrpc":"2.0","id":11,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
    );
    let e = err(&mut p, &app, &legacy_version).await;
    assert_eq!(e.code, -32022);
}

#[tokio::test]
async fn discover_and_tools_list_have_the_schema_members() {
    let app = FakeApp::new();
    let schema = modern_schema();
    let mut p = Selection::default();
    let d = ok(&mut p, &app, &modern(1, "server/discover", "")).await;
    // The same two -32022 names (the conformance suite checks one contains the other).
    let both = Value::Array(vec!["2026-07-28".into(), "2025-11-25".into()]);
    assert_eq!(d.get("supportedVersions"), Some(&both));
    assert!(d.get("capabilities").unwrap().get("resources").is_some());
    schema.check("DiscoverResult", &result_value(d));
    let t = ok(&mut p, &app, &modern(2, "tools/list", "")).await;
    assert_eq!(t.get("tools").and_then(Value::as_array).unwrap().len(), 9);
    assert!(t.get("ttlMs").is_some() && t.get("cacheScope").is_some());
    schema.check("ListToolsResult", &result_value(t));
    let l = ok(&mut p, &app, &modern(3, "resources/list", "")).await;
    schema.check("ListResourcesResult", &result_value(l));
    let t = ok(&mut p, &app, &modern(4, "resources/templates/list", "")).await;
    schema.check("ListResourceTemplatesResult", &result_value(t));
}

#[tokio::test]
async fn discover_without_resources_advertises_none_and_refuses_resources() {
    let app = FakeApp::without_resources();
    let mut p = Selection::default();
    let d = ok(&mut p, &app, &modern(1, "server/discover", "")).await;
    assert!(d.get("capabilities").unwrap().get("resources").is_none());
    let e = err(&mut p, &app, &modern(2, "resources/list", "")).await;
    assert_eq!(e.code, -32601);
}

#[tokio::test]
async fn tool_calls_succeed_and_fail_as_results() {
    let app = FakeApp::new();
    let schema = modern_schema();
    let mut p = Selection::default();
    let r = ok(
        &mut p,
        &app,
        &modern(1, "tools/call", r#""name":"jfgui_actions_execute","arguments":{"action":"document.text.insert","input":{"text":"x"},"expectedRevision":3}"#),
    )
    .await;
    assert_eq!(r.get("isError"), Some(&Value::Bool(false)));
    let sc = r.get("structuredContent").unwrap();
    assert_eq!(sc.get("revision").and_then(Value::as_u64), Some(4));
    assert!(sc.get("protocolVersion").is_none());
    let text = r.get("content").and_then(|c| c.as_array()).unwrap()[0].get("text").unwrap();
    let reparsed = jfgui_proto::parse(text.as_str().unwrap().as_bytes(), &Limits::DEFAULT).unwrap();
    assert_eq!(&reparsed, sc, "the text is the structured content");
    assert!(r.get("ttlMs").is_none());
    schema.check("CallToolResult", &result_value(r));

    // Stale: an isError result that names the current revision.
    let r = ok(
        &mut p,
        &app,
        &modern(2, "tools/call", r#""name":"jfgui_actions_execute","arguments":{"action":"document.text.insert","input":{"text":"x"},"expectedRevision":3}"#),
    )
    .await;
    assert_eq!(r.get("isError"), Some(&Value::Bool(true)));
    let error = r.get("structuredContent").and_then(|s| s.get("error")).unwrap();
    assert_eq!(error.get("reason").and_then(Value::as_str), Some("stale_revision"));
    assert_eq!(error.get("code").and_then(Value::as_i64), Some(1000));
    assert_eq!(error.get("class").and_then(Value::as_str), Some("not_executed"));
    assert_eq!(
        error.get("data").and_then(|d| d.get("currentRevision")).and_then(Value::as_u64),
        Some(4)
    );
    let content = r.get("content").and_then(Value::as_array).unwrap();
    let hint = content[1].get("text").and_then(Value::as_str).unwrap();
    assert!(hint.contains("expectedRevision 4"), "{hint}");
    schema.check("CallToolResult", &result_value(r.clone()));
    legacy_schema().check("CallToolResult", &result_value(strip_modern(r)));

    // Arguments the method refuses: a tool error too, so the model can correct them.
    let r = ok(
        &mut p,
        &app,
        &modern(3, "tools/call", r#""name":"jfgui_actions_execute","arguments":{}"#),
    )
    .await;
    assert_eq!(r.get("isError"), Some(&Value::Bool(true)));
    let error = r.get("structuredContent").and_then(|s| s.get("error")).unwrap();
    assert_eq!(error.get("code").and_then(Value::as_i64), Some(-32602));
    assert_eq!(error.get("class").and_then(Value::as_str), Some("invalid_params"));
    assert_eq!(error.get("reason").and_then(Value::as_str), Some("schema_violation"));
}

fn strip_modern(mut r: Map) -> Map {
    for k in ["resultType", "_meta", "ttlMs", "cacheScope"] {
        r.remove(k);
    }
    r
}

#[tokio::test]
async fn malformed_tool_calls_are_protocol_errors() {
    let app = FakeApp::new();
    let mut p = Selection::default();
    let cases = [
        r#""name":"jfgui.actions.search""#,
        r#""name":"nope","arguments":{}"#,
        r#""arguments":{}"#,
        r#""name":7"#,
        r#""name":"jfgui_actions_search","arguments":[1,2]"#,
        r#""name":"jfgui_actions_search","arguments":"query""#,
    ];
    for (i, c) in cases.iter().enumerate() {
        let e = err(&mut p, &app, &modern(i as u64 + 1, "tools/call", c)).await;
        assert_eq!(e.code, -32602, "{c}");
    }
    let e = err(&mut p, &app, &modern(20, "tools/call", r#""name":"nope""#)).await;
    assert!(e.message.contains("Unknown tool: nope"));
    assert_eq!(data_str(&e, "reason"), Some("unknown_tool"));
    assert!(app.methods().is_empty(), "nothing reached the app");
}

#[tokio::test]
async fn every_tool_result_fits_its_output_schema_with_an_official_style_checker() {
    let app = FakeApp::new();
    let schemas = modern_schema();
    let mut p = Selection::default();
    let tools = mcp::tool_list();
    let output_schema = |name: &str| {
        tools
            .iter()
            .find(|t| t.get("name").and_then(Value::as_str) == Some(name))
            .unwrap()
            .get("outputSchema")
            .unwrap()
            .clone()
    };
    let calls = [
        ("jfgui_actions_search", r#"{}"#),
        ("jfgui_state_inspect", r#"{}"#),
        ("jfgui_actions_execute", r#"{"action":"a","expectedRevision":3}"#),
        ("jfgui_actions_execute", r#"{"action":"a","expectedRevision":0}"#),
        ("jfgui_resources_read", r#"{"uri":"render://view.png"}"#),
    ];
    for (i, (name, args)) in calls.iter().enumerate() {
        let msg =
            modern(i as u64 + 1, "tools/call", &format!(r#""name":"{name}","arguments":{args}"#));
        let r = ok(&mut p, &app, &msg).await;
        let structured = r.get("structuredContent").unwrap();
        if let Err(e) = schemas.validate(&output_schema(name), structured, "") {
            panic!("{name}: {e}");
        }
    }
}

// ---- legacy revision ----

#[tokio::test]
async fn legacy_handshake_and_operation() {
    let app = FakeApp::new();
    let schema = legacy_schema();
    let mut p = Selection::default();
    // Before initialize: ping is fine, the rest is refused.
    assert_eq!(ok(&mut p, &app, &plain(1, "ping", "")).await, Map::new());
    assert_eq!(err(&mut p, &app, &plain(2, "tools/list", "")).await.code, -32602);
    let init = ok(&mut p, &app, &initialize(3, "2025-11-25")).await;
    assert_eq!(init.get("protocolVersion").and_then(Value::as_str), Some("2025-11-25"));
    assert!(init.get("resultType").is_none());
    schema.check("InitializeResult", &result_value(init));
    assert!(send(&mut p, &app, &notification("notifications/initialized", "")).await.is_none());
    let t = ok(&mut p, &app, &plain(4, "tools/list", "")).await;
    assert!(t.get("resultType").is_none() && t.get("ttlMs").is_none());
    schema.check("ListToolsResult", &result_value(t));
    let no_params = parse(r#"{"jsonrpc":"2.0","id":5,"method":"tools/list"}"#);
    ok(&mut p, &app, &no_params).await;
    let r =
        ok(&mut p, &app, &plain(6, "tools/call", r#""name":"jfgui_state_inspect","arguments":{}"#))
            .await;
    schema.check("CallToolResult", &result_value(r));
    let r = ok(&mut p, &app, &plain(7, "resources/read", r#""uri":"render://view.png""#)).await;
    let blob = r.get("contents").and_then(Value::as_array).unwrap()[0]
        .get("blob")
        .and_then(Value::as_str)
        .unwrap();
    assert_eq!(BASE64.decode(blob).unwrap(), png_bytes(1000));
    schema.check("ReadResourceResult", &result_value(r));
    let r = ok(&mut p, &app, &plain(8, "resources/list", "")).await;
    schema.check("ListResourcesResult", &result_value(r));
    let r = ok(&mut p, &app, &plain(12, "resources/templates/list", "")).await;
    schema.check("ListResourceTemplatesResult", &result_value(r));
    assert_eq!(ok(&mut p, &app, &plain(9, "ping", "")).await, Map::new());
    assert_eq!(err(&mut p, &app, &plain(10, "prompts/list", "")).await.code, -32601);
    assert_eq!(err(&mut p, &app, &plain(11, "server/discover", "")).await.code, -32601);
}

#[tokio::test]
async fn any_other_offered_version_gets_the_counteroffer() {
    let app = FakeApp::new();
    for v in ["2026-07-28", "2099-01-01", "2024-11-05"] {
        let mut p = Selection::default();
        let init = ok(&mut p, &app, &initialize(1, v)).await;
        assert_eq!(init.get("protocolVersion").and_then(Value::as_str), Some("2025-11-25"), "{v}");
    }
}

#[tokio::test]
async fn a_bad_initialize_selects_mcp_but_initializes_nothing() {
    let app = FakeApp::new();
    let mut p = Selection::default();
    let e = err(&mut p, &app, &plain(1, "initialize", r#""protocolVersion":"2025-11-25""#)).await;
    assert_eq!(e.code, -32602);
    assert!(matches!(p, Selection::Mcp(_)));
    assert_eq!(err(&mut p, &app, &plain(2, "tools/list", "")).await.code, -32602);
}

#[tokio::test]
async fn a_modern_request_never_inherits_legacy_state() {
    let app = FakeApp::new();
    let mut p = Selection::default();
    ok(&mut p, &app, &initialize(1, "2025-11-25")).await;
    let t = ok(&mut p, &app, &modern(2, "tools/list", "")).await;
    assert_eq!(t.get("resultType").and_then(Value::as_str), Some("complete"));
    modern_schema().check("ListToolsResult", &result_value(t));
    // And the modern envelope is still validated on its own.
    let bare = parse(
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#,
    );
    assert_eq!(err(&mut p, &app, &bare).await.code, -32602);
    // Legacy stays served alongside.
    let t = ok(&mut p, &app, &plain(4, "tools/list", "")).await;
    assert!(t.get("resultType").is_none());
}

// ---- resources ----

#[tokio::test]
async fn resource_errors_per_revision() {
    let app = FakeApp::new();
    let mut p = Selection::default();
    let e = err(&mut p, &app, &modern(1, "resources/read", r#""uri":"nope://x""#)).await;
    assert_eq!(e.code, -32602);
    assert_eq!(data_str(&e, "uri"), Some("nope://x"));
    let e = err(&mut p, &app, &modern(2, "resources/read", r#""uri":"big://blob""#)).await;
    assert_eq!(e.code, -32602);
    assert_eq!(data_str(&e, "tool"), Some("jfgui_resources_read"));
    let e = err(&mut p, &app, &modern(3, "resources/read", "")).await;
    assert_eq!(e.code, -32602);

    let mut legacy = Selection::default();
    ok(&mut legacy, &app, &initialize(1, "2025-11-25")).await;
    let e = err(&mut legacy, &app, &plain(2, "resources/read", r#""uri":"nope://x""#)).await;
    assert_eq!(e.code, -32002);
}

// ---- cancellation ----

#[tokio::test]
async fn a_cancelled_request_runs_on_but_answers_nothing() {
    let app = std::sync::Arc::new(FakeApp::gated());
    let mut p = Selection::default();
    let Route::Mcp(mcp::Route::Run(init)) = p.route(
        &Incoming::from_message(&initialize(1, "2025-11-25")),
        &mut PeerWarnings::new(PeerInfo::default()),
    ) else {
        panic!("initialize is MCP work")
    };
    assert!(matches!(init.run(&*app).await, Some(Ok(_))));
    let msg = plain(
        7,
        "tools/call",
        r#""name":"jfgui_actions_execute","arguments":{"action":"a","expectedRevision":3}"#,
    );
    let Route::Mcp(mcp::Route::Run(pending)) =
        p.route(&Incoming::from_message(&msg), &mut PeerWarnings::new(PeerInfo::default()))
    else {
        panic!("not MCP work")
    };
    let running = tokio::spawn({
        let app = std::sync::Arc::clone(&app);
        async move { pending.run(&*app).await }
    });
    // Wait until the host call is under way, then cancel it.
    while app.methods().is_empty() {
        tokio::task::yield_now().await;
    }
    let cancel = notification("notifications/cancelled", r#""requestId":7,"reason":"user""#);
    assert!(matches!(
        p.route(&Incoming::from_message(&cancel), &mut PeerWarnings::new(PeerInfo::default())),
        Route::Mcp(mcp::Route::Silent)
    ));
    // Cancelling something not in flight changes nothing.
    let other = notification("notifications/cancelled", r#""requestId":"7""#);
    assert!(matches!(
        p.route(&Incoming::from_message(&other), &mut PeerWarnings::new(PeerInfo::default())),
        Route::Mcp(mcp::Route::Silent)
    ));
    app.gate.as_ref().unwrap().notify_one();
    let reply = tokio::time::timeout(std::time::Duration::from_secs(10), running)
        .await
        .expect("the call completes")
        .unwrap();
    assert!(reply.is_none(), "no response after cancellation");
    assert_eq!(*app.revision.lock().unwrap(), 4, "the host call ran on");
    let Selection::Mcp(mcp) = &p else { panic!("MCP was selected") };
    assert_eq!(mcp.in_flight(), 0);
}

#[tokio::test]
async fn an_id_in_flight_cannot_be_reused() {
    let mut p = Selection::default();
    let first = p.route(
        &Incoming::from_message(&modern(5, "tools/list", "")),
        &mut PeerWarnings::new(PeerInfo::default()),
    );
    assert!(matches!(first, Route::Mcp(mcp::Route::Run(_))));
    let Route::Mcp(mcp::Route::Answer(Err(e))) = p.route(
        &Incoming::from_message(&modern(5, "tools/list", "")),
        &mut PeerWarnings::new(PeerInfo::default()),
    ) else {
        panic!("a duplicate id must be refused")
    };
    assert_eq!(e.code, -32600);
    drop(first);
    assert!(matches!(
        p.route(
            &Incoming::from_message(&modern(5, "tools/list", "")),
            &mut PeerWarnings::new(PeerInfo::default())
        ),
        Route::Mcp(mcp::Route::Run(_))
    ));
}

#[test]
fn the_schema_checker_rejects_what_the_schema_forbids() {
    let schema = modern_schema();
    let no_content = object([("resultType", "complete".into())]);
    assert!(schema.validate(schema.def("CallToolResult"), &result_value(no_content), "").is_err());
    let bad_scope = object([
        ("resultType", "complete".into()),
        ("tools", Value::Array(Vec::new())),
        ("ttlMs", 5u64.into()),
        ("cacheScope", "everyone".into()),
    ]);
    assert!(schema.validate(schema.def("ListToolsResult"), &result_value(bad_scope), "").is_err());
    let no_server_info = object([
        ("protocolVersion", "2025-11-25".into()),
        ("capabilities", Value::Object(Map::new())),
    ]);
    let legacy = legacy_schema();
    assert!(
        legacy.validate(legacy.def("InitializeResult"), &result_value(no_server_info), "").is_err()
    );
}

#[tokio::test]
async fn a_modern_form_initialize_is_method_not_found_and_a_legacy_one_still_works() {
    let app = FakeApp::new();
    let mut p = Selection::default();
    // The envelope and no params.protocolVersion: 2026-07-28 has no initialize.
    let e = err(&mut p, &app, &modern(1, "initialize", "")).await;
    assert_eq!(e.code, -32601, "{}", e.message);
    // It selected MCP without initializing anything: legacy requests are still refused ...
    let e = err(&mut p, &app, &plain(2, "tools/list", "")).await;
    assert_eq!(e.code, -32602);
    // ... until a real legacy initialize, which works on the same connection.
    ok(&mut p, &app, &initialize(3, "2025-11-25")).await;
    ok(&mut p, &app, &plain(4, "tools/list", "")).await;
}

/// What a model sees: the render's image item (read whole, the bytes of the resource), a
/// larger one replaced by a sentence naming its uri and jfgui_resources_read, a text chunk as
/// text; every result still valid for the schema.
#[tokio::test]
async fn a_render_is_seen_as_an_image_and_a_text_chunk_as_text() {
    let app = FakeApp::with_big_render();
    let schema = modern_schema();
    let mut p = Selection::default();
    let tool = |id, name: &str, args: &str| {
        modern(id, "tools/call", &format!(r#""name":"{name}","arguments":{args}"#))
    };
    let r = ok(&mut p, &app, &tool(1, "jfgui_view_render", "{}")).await;
    let content = r.get("content").and_then(Value::as_array).unwrap().to_vec();
    assert_eq!(content.len(), 2, "{content:?}");
    assert_eq!(content[1].get("type").and_then(Value::as_str), Some("image"));
    assert_eq!(content[1].get("mimeType").and_then(Value::as_str), Some("image/png"));
    let data = content[1].get("data").and_then(Value::as_str).unwrap();
    assert_eq!(BASE64.decode(data).unwrap(), png_bytes(1000));
    schema.check("CallToolResult", &result_value(r));

    let big = r#"{"input":{"uri":"render://big.png"}}"#;
    let r = ok(&mut p, &app, &tool(2, "jfgui_view_render", big)).await;
    let content = r.get("content").and_then(Value::as_array).unwrap().to_vec();
    let hint = content[1].get("text").and_then(Value::as_str).unwrap();
    assert!(hint.contains("jfgui_resources_read") && hint.contains("render://big.png"), "{hint}");
    assert!(content.iter().all(|c| c.get("type").and_then(Value::as_str) == Some("text")));
    schema.check("CallToolResult", &result_value(r));

    let text = r#"{"uri":"export://document.txt"}"#;
    let r = ok(&mut p, &app, &tool(3, "jfgui_resources_read", text)).await;
    let content = r.get("content").and_then(Value::as_array).unwrap().to_vec();
    assert_eq!(content[1].get("text").and_then(Value::as_str), Some("hello world"));
    schema.check("CallToolResult", &result_value(r));
}
