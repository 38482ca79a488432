//! MCP through the whole engine: a client over `tokio::io::duplex` to `Engine::serve_client`,
//! and a fake app on the host channel, with the bad input an MCP client can send.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use jfgui_proto::channel::{Call, CallResult, Outcome, ResourceChunk, ResourceInfo};
use jfgui_proto::{ActionError, Reason, Value};

use super::harness::*;
use crate::client::select::tests::{legacy_schema, modern_schema};
use crate::{Engine, EngineConfig};

const META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"wire-test","version":"1"}}"#;
const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"wire-test","version":"1"}}}"#;

fn png() -> Vec<u8> {
    let mut v = b"\x89PNG\r\n\x1a\n".to_vec();
    v.extend((0..70_000u32).map(|i| (i % 251) as u8));
    v
}

/// The fake notepad: revision 7, one PNG resource, stale-revision checks on execute.
fn notepad(call: &Call) -> Outcome {
    match call {
        Call::ListResources {} => Outcome::Ok(CallResult::Resources {
            resources: vec![ResourceInfo {
                uri: "render://view.png".into(),
                name: "view.png".into(),
                mime_type: "image/png".into(),
                size: Some(png().len() as u64),
            }],
        }),
        Call::ReadResource(r) if r.uri == "render://view.png" => {
            let bytes = png();
            let start = (r.offset as usize).min(bytes.len());
            let end = (start + r.limit as usize).min(bytes.len());
            Outcome::Ok(CallResult::Chunk(ResourceChunk {
                uri: r.uri.clone(),
                mime_type: "image/png".into(),
                offset: r.offset,
                total_size: bytes.len() as u64,
                data: BASE64.encode(&bytes[start..end]),
                eof: end == bytes.len(),
            }))
        }
        Call::ReadResource(r) => Outcome::Error(ActionError::new(
            Reason::Resource { resource: r.uri.clone() },
            "No such resource.",
        )),
        Call::Execute(e) if e.expected_revision.is_some_and(|r| r != 7) => {
            Outcome::Error(ActionError::new(
                Reason::StaleRevision { current_revision: 7 },
                "The document changed since that revision.",
            ))
        }
        other => echo(other),
    }
}

async fn engine() -> (Engine, String) {
    engine_with(config()).await
}

async fn engine_with(config: EngineConfig) -> (Engine, String) {
    let engine = Engine::new(config);
    let app = FakeApp::register(&engine, "Notepad", true, notepad_actions()).await;
    let slug = app.slug.clone();
    app.serve(notepad);
    (engine, slug)
}

fn request(id: &str, method: &str, params: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{{{META}{}{params}}}}}"#,
        if params.is_empty() { "" } else { "," }
    )
}

fn legacy(id: &str, method: &str, params: &str) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{{{params}}}}}"#)
}

async fn ask(c: &mut Client, line: &str) -> Value {
    c.send(line).await;
    c.recv().await
}

fn code(r: &Value) -> i64 {
    n(r, "error.code")
}

#[tokio::test]
async fn modern_session_end_to_end() {
    let (engine, slug) = engine().await;
    let mut c = Client::connect(&engine, &slug);
    let r = ask(&mut c, &request(r#""d-1""#, "server/discover", "")).await;
    assert_eq!(s(&r, "id"), "d-1", "string ids are echoed as strings");
    assert_eq!(s(&r, "result.resultType"), "complete");
    assert_eq!(s(&r, "result.supportedVersions.0"), "2026-07-28");
    assert!(has(&r, "result.capabilities.resources") && has(&r, "result.capabilities.tools"));
    let info = at(&r, "result._meta").get("io.modelcontextprotocol/serverInfo").unwrap();
    assert_eq!(s(info, "name"), "jfgui-agentd");

    let r = ask(&mut c, &request("2", "tools/list", "")).await;
    assert_eq!(at(&r, "result.tools").as_array().unwrap().len(), 9);
    assert_eq!(s(&r, "result.cacheScope"), "private");

    let r = ask(
        &mut c,
        &request(
            "3",
            "tools/call",
            r#""name":"jfgui_actions_search","arguments":{"query":"insert"}"#,
        ),
    )
    .await;
    assert_eq!(at(&r, "result.isError"), &Value::Bool(false));
    assert_eq!(s(&r, "result.structuredContent.actions.0.name"), "document.text.insert");
    assert!(!has(&r, "result.structuredContent.protocolVersion"));

    let r = ask(&mut c, &request("4", "tools/call", r#""name":"jfgui_actions_execute","arguments":{"action":"document.text.insert","input":{"text":"x"},"expectedRevision":7}"#)).await;
    assert_eq!(n(&r, "result.structuredContent.revision"), 7);

    let r = ask(&mut c, &request("5", "tools/call", r#""name":"jfgui_actions_execute","arguments":{"action":"document.text.insert","input":{"text":"x"},"expectedRevision":3}"#)).await;
    assert_eq!(at(&r, "result.isError"), &Value::Bool(true));
    assert_eq!(s(&r, "result.structuredContent.error.reason"), "stale_revision");
    assert_eq!(n(&r, "result.structuredContent.error.data.currentRevision"), 7);
    assert!(s(&r, "result.content.1.text").contains("expectedRevision 7"));

    // The standard read serves the 70 kB PNG whole (two app chunks, one blob).
    let r = ask(&mut c, &request("6", "resources/read", r#""uri":"render://view.png""#)).await;
    assert_eq!(BASE64.decode(s(&r, "result.contents.0.blob")).unwrap(), png());
    assert_eq!(n(&r, "result.ttlMs"), 0);
    let r = ask(&mut c, &request("7", "resources/read", r#""uri":"render://nope.png""#)).await;
    assert_eq!(code(&r), -32602);
    // The chunked tool.
    let r = ask(&mut c, &request("8", "tools/call", r#""name":"jfgui_resources_read","arguments":{"uri":"render://view.png","offset":65536,"limit":65536}"#)).await;
    assert_eq!(at(&r, "result.structuredContent.eof"), &Value::Bool(true));
    assert_eq!(n(&r, "result.structuredContent.totalSize"), png().len() as i64);
}

#[tokio::test]
async fn legacy_session_end_to_end() {
    let (engine, slug) = engine().await;
    let mut c = Client::connect(&engine, &slug);
    let r = ask(&mut c, &legacy("1", "tools/list", "")).await;
    assert_eq!(code(&r), -32602, "before initialize");
    let r = ask(&mut c, &legacy("2", "ping", "")).await;
    assert!(at(&r, "result").as_object().unwrap().is_empty());
    let r = ask(&mut c, INIT).await;
    assert_eq!(s(&r, "result.protocolVersion"), "2025-11-25");
    assert_eq!(s(&r, "result.serverInfo.name"), "jfgui-agentd");
    assert!(!has(&r, "result.resultType"));
    c.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).await;
    let r = ask(&mut c, r#"{"jsonrpc":"2.0","id":3,"method":"tools/list"}"#).await;
    assert_eq!(at(&r, "result.tools").as_array().unwrap().len(), 9);
    let r =
        ask(&mut c, &legacy("4", "tools/call", r#""name":"jfgui_state_inspect","arguments":{}"#))
            .await;
    assert_eq!(n(&r, "result.structuredContent.revision"), 7);
    let r = ask(&mut c, &legacy("5", "resources/read", r#""uri":"render://nope.png""#)).await;
    assert_eq!(code(&r), -32002);
    // A modern request on the same connection is served modern, statelessly.
    let r = ask(&mut c, &request("6", "tools/list", "")).await;
    assert_eq!(s(&r, "result.resultType"), "complete");
}

#[tokio::test]
async fn counteroffer_for_other_versions() {
    let (engine, slug) = engine().await;
    let mut c = Client::connect(&engine, &slug);
    let r = ask(&mut c, &INIT.replace("2025-11-25", "2026-07-28")).await;
    assert_eq!(s(&r, "result.protocolVersion"), "2025-11-25");
}

#[tokio::test]
async fn bad_envelopes_and_versions() {
    let (engine, slug) = engine().await;
    let mut c = Client::connect(&engine, &slug);
    let r = ask(&mut c, r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"1999-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}"#).await;
    assert_eq!(code(&r), -32022);
    assert_eq!(s(&r, "error.data.supported.0"), "2026-07-28");
    assert_eq!(s(&r, "error.data.supported.1"), "2025-11-25");
    assert_eq!(s(&r, "error.data.requested"), "1999-01-01");
    let r = ask(&mut c, r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#).await;
    assert_eq!(code(&r), -32602);
    let r = ask(&mut c, r#"{"jsonrpc":"2.0","id":3,"method":"server/discover","params":{}}"#).await;
    assert_eq!(code(&r), -32602);
    let r = ask(&mut c, &request("4", "tools/call", r#""name":"jfgui_nope""#)).await;
    assert_eq!(code(&r), -32602);
    // Arguments the JSON-1 method refuses are a tool error the model can read.
    let r = ask(
        &mut c,
        &request("5", "tools/call", r#""name":"jfgui_actions_search","arguments":{"limit":0}"#),
    )
    .await;
    assert_eq!(at(&r, "result.isError"), &Value::Bool(true));
    assert_eq!(n(&r, "result.structuredContent.error.code"), -32602);
    let r = ask(
        &mut c,
        &request("6", "tools/call", r#""name":"jfgui_actions_search","arguments":{"bogus":1}"#),
    )
    .await;
    assert_eq!(at(&r, "result.isError"), &Value::Bool(true));
    // The connection is intact.
    let r = ask(&mut c, &request("7", "tools/list", "")).await;
    assert!(has(&r, "result.tools"));
}

#[tokio::test]
async fn arrays_garbage_and_oversize_lines_keep_the_connection() {
    let json = jfgui_proto::Limits { max_bytes: 4096, ..jfgui_proto::Limits::DEFAULT };
    let (engine, slug) = engine_with(EngineConfig { json, ..config() }).await;
    let mut c = Client::connect(&engine, &slug);
    let r = ask(&mut c, INIT).await;
    assert!(has(&r, "result"));
    let r = ask(&mut c, &format!("[{INIT}]")).await;
    assert_eq!(code(&r), -32600);
    let r = ask(&mut c, "{not json").await;
    assert_eq!(code(&r), -32700);
    let big = request(
        "9",
        "tools/call",
        &format!(r#""name":"jfgui_actions_search","arguments":{{"query":"{}"}}"#, "q".repeat(5000)),
    );
    let r = ask(&mut c, &big).await;
    assert_eq!(code(&r), -32600);
    assert_eq!(s(&r, "error.data.reason"), "too_large");
    let r = ask(&mut c, &legacy("10", "tools/call", r#""name":"jfgui_state_inspect""#)).await;
    assert_eq!(n(&r, "result.structuredContent.revision"), 7, "still initialized and served");
    // Results over the bound: a tool result becomes a tool error, anything else -32603.
    let state = format!(
        r#""name":"jfgui_state_inspect","arguments":{{"input":{{"q":"{}"}}}}"#,
        "s".repeat(2500)
    );
    let r = ask(&mut c, &legacy("11", "tools/call", &state)).await;
    assert_eq!(at(&r, "result.isError"), &Value::Bool(true));
    assert_eq!(s(&r, "result.structuredContent.error.reason"), "response_too_large");
    let r = ask(&mut c, &legacy("12", "tools/list", "")).await;
    assert_eq!(code(&r), -32603);
    assert_eq!(s(&r, "error.data.reason"), "response_too_large");
}

#[tokio::test]
async fn switching_protocols_mid_connection_is_refused() {
    let (engine, slug) = engine().await;
    // MCP first (legacy), then JSON-1.
    let mut c = Client::connect(&engine, &slug);
    ask(&mut c, INIT).await;
    let r = ask(&mut c, &legacy("2", "agent/info", "")).await;
    assert_eq!(code(&r), -32601);
    // MCP first (modern), then JSON-1 (even on a name both share, without the envelope).
    let mut c = Client::connect(&engine, &slug);
    ask(&mut c, &request("1", "tools/list", "")).await;
    let r = ask(&mut c, &legacy("2", "resources/read", r#""uri":"render://view.png""#)).await;
    assert_eq!(code(&r), -32602);
    // JSON-1 first, then MCP: JSON-1 knows no such methods.
    let mut c = Client::connect(&engine, &slug);
    let r = ask(&mut c, &legacy("1", "agent/info", "")).await;
    assert_eq!(s(&r, "result.protocolVersion"), "1");
    let r = ask(&mut c, INIT).await;
    assert_eq!(code(&r), -32601);
    let r = ask(&mut c, &request("3", "tools/list", "")).await;
    assert_eq!(code(&r), -32601);
    // Undecided: ping and MCP names answer without deciding; JSON-1 still selectable.
    let mut c = Client::connect(&engine, &slug);
    let r = ask(&mut c, &legacy("1", "ping", "")).await;
    assert!(has(&r, "result"));
    let r = ask(&mut c, &legacy("2", "tools/list", "")).await;
    assert_eq!(code(&r), -32602);
    let r = ask(&mut c, &legacy("3", "agent/info", "")).await;
    assert_eq!(s(&r, "result.protocolVersion"), "1");
}

#[tokio::test]
async fn a_cancelled_call_gets_no_response_and_the_host_call_completes() {
    let engine = Engine::new(config());
    let mut app = FakeApp::register(&engine, "Notepad", true, notepad_actions()).await;
    let mut c = Client::connect(&engine, &app.slug);
    c.send(INIT).await;
    // initialize asks the app for its resources.
    let req = app.request().await;
    app.reply(req.id, notepad(&req.call)).await;
    assert!(has(&c.recv().await, "result"));
    c.send(&legacy("7", "tools/call", r#""name":"jfgui_actions_execute","arguments":{"action":"document.text.insert","input":{"text":"x"},"expectedRevision":7}"#)).await;
    let req = app.request().await;
    assert!(matches!(req.call, Call::Execute(_)), "the call reached the app");
    c.send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"user"}}"#).await;
    // Make sure the cancellation is processed before the reply: a ping answers after it.
    let r = ask(&mut c, &legacy("8", "ping", "")).await;
    assert_eq!(n(&r, "id"), 8);
    app.reply(req.id, notepad(&req.call)).await;
    // A later call that needs the app completes after the cancelled one did; its answer must be
    // the next line.
    c.send(&legacy("10", "tools/call", r#""name":"jfgui_state_inspect","arguments":{}"#)).await;
    let req = app.request().await;
    app.reply(req.id, notepad(&req.call)).await;
    let r = c.recv().await;
    assert_eq!(n(&r, "id"), 10, "the cancelled call's response was suppressed: {r:?}");
}

/// A line without `method` that carries `result` or `error` is a response from the
/// client; it is ignored, never answered (an error under the client's own id would look like
/// the answer to one of its requests). Undecided and MCP connections both follow this rule.
#[tokio::test]
async fn responses_from_the_client_are_ignored() {
    let (engine, slug) = engine().await;
    for setup in [None, Some(INIT)] {
        let mut c = Client::connect(&engine, &slug);
        if let Some(init) = setup {
            assert_eq!(s(&ask(&mut c, init).await, "result.protocolVersion"), "2025-11-25");
        }
        c.send(r#"{"jsonrpc":"2.0","id":3,"result":{}}"#).await;
        c.send(r#"{"jsonrpc":"2.0","id":4,"error":{"code":-32601,"message":"no"}}"#).await;
        let r = ask(&mut c, r#"{"jsonrpc":"2.0","id":5,"method":"ping"}"#).await;
        assert_eq!(n(&r, "id"), 5, "the responses got no answer: {r:?}");
        assert!(has(&r, "result"), "{r:?}");
    }
}

/// Asserts an error response with `code` that carries no `id` member and is a valid
/// `JSONRPCErrorResponse` of both official schemas (which type `id` as string or integer).
fn assert_idless_error(r: &Value, code: i64, line: &str) {
    assert_eq!(n(r, "error.code"), code, "{line}: {r:?}");
    assert!(!has(r, "id"), "{line}: the id must be omitted, not null: {r:?}");
    modern_schema().check("JSONRPCErrorResponse", r);
    legacy_schema().check("JSONRPCErrorResponse", r);
}

/// Once MCP is selected, an error whose id cannot be read omits `id`; a request
/// whose id is not a string or an integer gets -32600 without its id echoed; `1.0` is an
/// integer (as in JSON Schema) and is echoed with its exact token.
#[tokio::test]
async fn mcp_errors_without_a_readable_id_omit_it() {
    let json = jfgui_proto::Limits { max_bytes: 4096, ..jfgui_proto::Limits::DEFAULT };
    let (engine, slug) = engine_with(EngineConfig { json, ..config() }).await;
    let mut c = Client::connect(&engine, &slug);
    assert!(has(&ask(&mut c, INIT).await, "result"));
    let unreadable = [
        ("{not json", -32700),
        ("[1]", -32600),
        ("\"text\"", -32600),
        (r#"{"jsonrpc":"2.0","id":{},"method":"ping"}"#, -32600),
    ];
    for (line, code) in unreadable {
        let r = ask(&mut c, line).await;
        assert_idless_error(&r, code, line);
    }
    for id in ["null", "1.5", "true", "[1]", r#"{"a":1}"#, "1e-1"] {
        for line in
            [legacy(id, "tools/list", ""), request(id, "tools/list", ""), legacy(id, "ping", "")]
        {
            let r = ask(&mut c, &line).await;
            assert_idless_error(&r, -32600, &line);
        }
    }
    let big = legacy("9", "tools/call", &format!(r#""name":"{}""#, "q".repeat(5000)));
    let r = ask(&mut c, &big).await;
    assert_idless_error(&r, -32600, "an over-long line");
    assert_eq!(s(&r, "error.data.reason"), "too_large");
    // Integral spellings are integers, echoed exactly.
    c.send(&legacy("1.0", "ping", "")).await;
    let raw = c.recv_raw().await.unwrap();
    let text = String::from_utf8_lossy(&raw);
    assert!(text.starts_with(r#"{"jsonrpc":"2.0","id":1.0,"result":{}"#), "{text}");
    // The session is unharmed.
    let r = ask(&mut c, &legacy("10", "tools/call", r#""name":"jfgui_state_inspect""#)).await;
    assert_eq!(n(&r, "result.structuredContent.revision"), 7);
}

/// On an undecided connection, an MCP request with a bad id is refused the same way and
/// decides nothing; lines whose id cannot be read are answered JSON-1 style (`"id": null`,
/// JSON-RPC 2.0), since the connection may still turn out to speak JSON-1.
#[tokio::test]
async fn undecided_connections_refuse_bad_mcp_ids_without_deciding() {
    let (engine, slug) = engine().await;
    let mut c = Client::connect(&engine, &slug);
    let init_null = INIT.replace(r#""id":1"#, r#""id":null"#);
    let r = ask(&mut c, &init_null).await;
    assert_idless_error(&r, -32600, &init_null);
    let r = ask(&mut c, &request("2.5", "server/discover", "")).await;
    assert_idless_error(&r, -32600, "discover with a fractional id");
    let r = ask(&mut c, "{not json").await;
    assert_eq!(at(&r, "id"), &Value::Null, "JSON-1 keeps null while undecided");
    // Still undecided: a JSON-1 request with a null id selects JSON-1 and is answered.
    let r = ask(&mut c, r#"{"jsonrpc":"2.0","id":null,"method":"agent/info"}"#).await;
    assert_eq!(at(&r, "id"), &Value::Null);
    assert_eq!(s(&r, "result.protocolVersion"), "1");
}

/// A tool's refused arguments (what JSON-1 answers with -32602) are an isError result with
/// class `invalid_params` and code -32602, valid as a CallToolResult of both revisions.
#[tokio::test]
async fn refused_tool_arguments_are_invalid_params_tool_errors() {
    let (engine, slug) = engine().await;
    let mut c = Client::connect(&engine, &slug);
    let cases = [
        r#""name":"jfgui_actions_search","arguments":{"limit":0}"#,
        r#""name":"jfgui_actions_search","arguments":{"cursor":"nope"}"#,
        r#""name":"jfgui_actions_describe","arguments":{}"#,
        r#""name":"jfgui_actions_batch","arguments":{"calls":[]}"#,
    ];
    for (i, args) in cases.iter().enumerate() {
        let r = ask(&mut c, &request(&i.to_string(), "tools/call", args)).await;
        assert_eq!(at(&r, "result.isError"), &Value::Bool(true), "{args}: {r:?}");
        assert_eq!(s(&r, "result.structuredContent.error.class"), "invalid_params", "{args}");
        assert_eq!(n(&r, "result.structuredContent.error.code"), -32602, "{args}");
        modern_schema().check("CallToolResult", at(&r, "result"));
    }
    assert!(has(&ask(&mut c, INIT).await, "result"));
    let r = ask(&mut c, &legacy("9", "tools/call", cases[0])).await;
    assert_eq!(s(&r, "result.structuredContent.error.class"), "invalid_params");
    legacy_schema().check("CallToolResult", at(&r, "result"));
}
