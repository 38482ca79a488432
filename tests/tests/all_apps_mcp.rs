//! The all-apps MCP server through real processes: `mcp.sock` of a
//! real daemon with real notepads, and the `jfgui-agent mcp` gateway across daemon restarts.
//! Wire rules: `not_found/app` with `data.apps`, `app` optional with one app, slug / display
//! name / prefix resolution, ambiguity, MCP only, apps with agent access off listed and
//! refused as `not_executed/app_disabled`, nearest names as `data.suggestions`,
//! `not_executed/daemon_unavailable` from the gateway while no daemon runs. (The official SDK clients drive the same scenario in
//! `tests/mcp-clients/run.sh`.)

use std::path::Path;

use jfgui_tests::cli::{Session, agent_command};
use jfgui_tests::{
    Daemon, LineClient, PATIENCE, Proc, TempDir, Watchdog, mode, notepad, wait_until,
};
use serde_json::{Value, json};

const MODERN: &str = "2026-07-28";

fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {}
    })
}

/// A modern `tools/call` on `client`; returns the result (panics on a JSON-RPC error).
fn call(client: &mut LineClient, tool: &str, arguments: Value) -> Value {
    let response = client
        .call("tools/call", json!({"_meta": meta(), "name": tool, "arguments": arguments}))
        .expect("tools/call");
    assert_eq!(response["result"]["resultType"], "complete", "{response}");
    response["result"].clone()
}

fn mcp_client(rt: &Path) -> LineClient {
    LineClient::connect(&rt.join("mcp.sock")).expect("connect mcp.sock")
}

/// The structured error of an `isError` result.
fn tool_error(result: &Value) -> &Value {
    assert_eq!(result["isError"], true, "{result}");
    &result["structuredContent"]["error"]
}

fn slugs(apps: &Value) -> Vec<&str> {
    apps.as_array().expect("apps").iter().map(|a| a["app"].as_str().expect("app")).collect()
}

/// A daemon with two enabled notepads, `Notes A` and `Other B`, both listed.
fn two_apps(rt: &Path) -> (Daemon, Proc, Proc) {
    let daemon = Daemon::start(rt, &[]);
    let a = notepad(rt, &["--agent-enable", "--name", "Notes A", "--text", "from a"]);
    let b = notepad(rt, &["--agent-enable", "--name", "Other B", "--text", "from b"]);
    daemon.wait_endpoint("notes-a");
    daemon.wait_endpoint("other-b");
    (daemon, a, b)
}

#[test]
fn mcp_sock_is_private_and_lists_disabled_apps_without_their_actions() {
    let _w = Watchdog::arm(PATIENCE * 3);
    let dir = TempDir::new();
    let rt = dir.rt();
    let daemon = Daemon::start(&rt, &[]);
    let _a = notepad(&rt, &["--agent-enable", "--name", "Notes A"]);
    daemon.wait_endpoint("notes-a");
    // Started once Notes A is registered, so the listing's registration order is known.
    let _hidden = notepad(&rt, &["--name", "Hidden"]);
    daemon.wait_apps(2);
    assert_eq!(mode(&rt.join("mcp.sock")) & 0o777, 0o600);
    let mut client = mcp_client(&rt);
    let listed = call(&mut client, "jfgui_apps_list", json!({}));
    assert_eq!(listed["isError"], false, "{listed}");
    let apps = &listed["structuredContent"]["apps"];
    // In registration order; the disabled one says what to tell the user, not what it offers.
    assert_eq!(slugs(apps), ["notes-a", "hidden"], "{apps}");
    assert_eq!(apps[0]["displayName"], "Notes A");
    assert_eq!((&apps[0]["enabled"], &apps[0]["running"]), (&json!(true), &json!(true)));
    assert_eq!(apps[0]["pid"].as_u64().map(|p| p > 0), Some(true));
    assert!(apps[0]["actionCount"].as_u64().is_some_and(|n| n > 0), "{apps}");
    assert_eq!(apps[1]["enabled"], false, "{apps}");
    assert!(apps[1].get("actionCount").is_none(), "{apps}");
    assert!(apps[1]["hint"].as_str().unwrap().contains("Agent access"), "{apps}");
    let refused = call(&mut client, "jfgui_actions_search", json!({"app": "Hidden"}));
    let error = tool_error(&refused);
    assert_eq!(
        (error["class"].as_str(), error["reason"].as_str()),
        (Some("not_executed"), Some("app_disabled")),
        "{refused}"
    );
    assert!(error["message"].as_str().unwrap().contains("Agent access"), "{refused}");
    assert_eq!(error["data"], json!({"app": "hidden"}), "{refused}");
    assert!(refused["structuredContent"].get("actions").is_none(), "{refused}");
    // Misspelled names get the nearest ones: an app, an action (describe and execute).
    let typo = call(&mut client, "jfgui_state_inspect", json!({"app": "notes-x"}));
    assert_eq!(tool_error(&typo)["data"]["suggestions"], json!(["notes-a"]), "{typo}");
    let args = json!({"app": "notes-a", "action": "document.text.insrt"});
    let typo = call(&mut client, "jfgui_actions_describe", args.clone());
    assert_eq!(tool_error(&typo)["reason"], "action", "{typo}");
    assert_eq!(tool_error(&typo)["data"]["suggestions"][0], "document.text.insert", "{typo}");
    let typo = call(&mut client, "jfgui_actions_execute", args);
    assert_eq!(tool_error(&typo)["reason"], "unknown_action", "{typo}");
    assert_eq!(tool_error(&typo)["data"]["suggestions"][0], "document.text.insert", "{typo}");
    // Every tool but jfgui_apps_list takes `app`, and the instructions lead with the list.
    let tools = client.call("tools/list", json!({"_meta": meta()})).expect("tools/list");
    let tools = tools["result"]["tools"].as_array().expect("tools").clone();
    assert_eq!(tools.len(), 10);
    assert_eq!(tools[0]["name"], "jfgui_apps_list");
    for tool in &tools[1..] {
        let app = &tool["inputSchema"]["properties"]["app"];
        assert!(app["description"].as_str().unwrap().contains("jfgui_apps_list"), "{tool}");
    }
    let discover = client.call("server/discover", json!({"_meta": meta()})).expect("discover");
    let instructions = discover["result"]["instructions"].as_str().expect("instructions");
    assert!(instructions.contains("Call jfgui_apps_list first"), "{instructions}");
    daemon.assert_alive();
}

#[test]
fn app_is_optional_with_one_app_and_resolved_by_slug_name_or_prefix() {
    let _w = Watchdog::arm(PATIENCE * 3);
    let dir = TempDir::new();
    let rt = dir.rt();
    let daemon = Daemon::start(&rt, &[]);
    let _a = notepad(&rt, &["--agent-enable", "--name", "Notes A", "--text", "from a"]);
    daemon.wait_endpoint("notes-a");
    let mut client = mcp_client(&rt);
    // One app: `app` may be omitted.
    let state = call(&mut client, "jfgui_state_inspect", json!({}));
    assert_eq!(state["structuredContent"]["state"]["text"], "from a", "{state}");

    let _b = notepad(&rt, &["--agent-enable", "--name", "Notes B", "--text", "from b"]);
    daemon.wait_endpoint("notes-b");
    // Same connection, two apps now: omitting `app` is an argument refusal listing both.
    let refused = call(&mut client, "jfgui_state_inspect", json!({}));
    let error = tool_error(&refused);
    assert_eq!(
        (error["class"].as_str(), error["reason"].as_str()),
        (Some("invalid_params"), Some("app_required"))
    );
    assert_eq!(error["code"], -32602);
    let mut both = slugs(&error["data"]["apps"]);
    both.sort();
    assert_eq!(both, ["notes-a", "notes-b"]);
    // A prefix of both is ambiguous, with the candidates.
    let error =
        tool_error(&call(&mut client, "jfgui_state_inspect", json!({"app": "notes"}))).clone();
    assert_eq!(error["reason"], "app_ambiguous", "{error}");
    assert_eq!(error["data"]["apps"].as_array().map(Vec::len), Some(2), "{error}");
    // Exact slug, exact display name, unique prefix.
    for (app, text) in [("notes-a", "from a"), ("Notes B", "from b"), ("notes-b", "from b")] {
        let state = call(&mut client, "jfgui_state_inspect", json!({"app": app}));
        assert_eq!(state["structuredContent"]["state"]["text"], text, "{app}: {state}");
    }
    // A non-string `app` is an argument refusal too.
    let error = tool_error(&call(&mut client, "jfgui_state_inspect", json!({"app": 7}))).clone();
    assert_eq!(
        (error["class"].as_str(), error["reason"].as_str()),
        (Some("invalid_params"), Some("invalid_type"))
    );
    // The nine tools' own arguments are still checked after `app` is taken out.
    let error = tool_error(&call(
        &mut client,
        "jfgui_actions_search",
        json!({"app": "notes-a", "limit": 0}),
    ))
    .clone();
    assert_eq!(error["class"], "invalid_params", "{error}");
    daemon.assert_alive();
}

#[test]
fn an_app_that_leaves_is_not_found_with_the_apps_there_and_found_again_when_back() {
    let _w = Watchdog::arm(PATIENCE * 4);
    let dir = TempDir::new();
    let rt = dir.rt();
    let (daemon, _a, b) = two_apps(&rt);
    let mut client = mcp_client(&rt);
    let search =
        call(&mut client, "jfgui_actions_search", json!({"app": "other-b", "query": "text"}));
    assert_eq!(search["isError"], false, "{search}");

    drop(b);
    assert!(wait_until(PATIENCE, || daemon.apps().len() == 1), "b never left");
    let missing = call(&mut client, "jfgui_state_inspect", json!({"app": "Other B"}));
    let error = tool_error(&missing);
    assert_eq!(
        (error["class"].as_str(), error["reason"].as_str()),
        (Some("not_found"), Some("app"))
    );
    assert_eq!(error["code"], 1004);
    assert_eq!(error["data"]["app"], "Other B");
    assert_eq!(error["data"]["apps"], json!([{"app": "notes-a", "displayName": "Notes A"}]));
    // The session lives on: the other app is still served on the same connection.
    let state = call(&mut client, "jfgui_state_inspect", json!({"app": "notes-a"}));
    assert_eq!(state["structuredContent"]["state"]["text"], "from a");

    let _b = notepad(&rt, &["--agent-enable", "--name", "Other B", "--text", "b again"]);
    daemon.wait_endpoint("other-b");
    let state = call(&mut client, "jfgui_state_inspect", json!({"app": "Other B"}));
    assert_eq!(state["structuredContent"]["state"]["text"], "b again", "{state}");
    // Nothing enabled at all: not_found/app with an empty list.
    drop(_b);
    drop(_a);
    assert!(wait_until(PATIENCE, || daemon.apps().is_empty()), "apps never left");
    let error = tool_error(&call(&mut client, "jfgui_state_inspect", json!({}))).clone();
    assert_eq!((error["reason"].as_str(), error["data"]["apps"].clone()), (Some("app"), json!([])));
}

#[test]
fn mcp_sock_speaks_mcp_only_with_schema_shaped_errors() {
    let _w = Watchdog::arm(PATIENCE * 3);
    let dir = TempDir::new();
    let rt = dir.rt();
    let daemon = Daemon::start(&rt, &[]);
    let mut client = mcp_client(&rt);
    // A JSON-1 method selects nothing here: MCP's "no way in" error.
    let r = client.call("agent/info", json!({})).expect("agent/info");
    assert_eq!(r["error"]["code"], -32602, "{r}");
    assert_eq!(r["error"]["data"]["reason"], "missing_mcp_envelope", "{r}");
    // Unparsable line: -32700 without an `id` member (both MCP schemas forbid null).
    client.send_raw("{not json").expect("send");
    let line = client.read_line().expect("read").expect("a line");
    let v: Value = serde_json::from_str(&line).expect("json");
    assert_eq!(v["error"]["code"], -32700, "{v}");
    assert!(v.get("id").is_none(), "{v}");
    // Legacy works on the same connection; an unknown tool is a JSON-RPC error.
    let init = client
        .call(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
        )
        .expect("initialize");
    assert_eq!(init["result"]["protocolVersion"], "2025-11-25", "{init}");
    assert!(init["result"]["capabilities"].get("resources").is_none(), "{init}");
    let r = client.call("tools/call", json!({"name": "jfgui_nope"})).expect("tools/call");
    assert_eq!(r["error"]["code"], -32602, "{r}");
    daemon.assert_alive();
}

/// `jfgui-agent mcp` for `rt` (runtime dir through the environment, nothing else).
fn gateway(rt: &Path) -> Session {
    Session::start(agent_command(rt, &["mcp"]))
}

/// Sends a legacy `tools/call` with string id `id` and returns its result.
fn legacy_call(s: &mut Session, id: &str, tool: &str, arguments: Value) -> Value {
    let request = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": tool, "arguments": arguments}});
    s.send(&request.to_string());
    let answer = s.recv();
    assert_eq!(answer["id"], id, "{answer}");
    answer["result"].clone()
}

/// Calls `jfgui_apps_list` until it lists `n` apps (the daemon and the apps come up at their
/// own pace); returns the last result.
fn wait_listed(s: &mut Session, n: usize) -> Value {
    let mut last = Value::Null;
    let mut round = 0;
    let ok = wait_until(PATIENCE, || {
        round += 1;
        last = legacy_call(s, &format!("wait-{round}"), "jfgui_apps_list", json!({}));
        last["isError"] == false
            && last["structuredContent"]["apps"].as_array().map(Vec::len) == Some(n)
    });
    assert!(ok, "jfgui_apps_list never listed {n} apps: {last}; gateway stderr: {}", s.stderr());
    last
}

#[test]
fn the_gateway_outlives_the_daemon_and_keeps_a_legacy_session() {
    let _w = Watchdog::arm(PATIENCE * 6);
    let dir = TempDir::new();
    let rt = dir.rt();
    std::fs::create_dir_all(&rt).expect("rt");
    std::fs::set_permissions(&rt, std::os::unix::fs::PermissionsExt::from_mode(0o700))
        .expect("0700");
    // No daemon yet: the gateway answers with the daemon's own shapes, and a call that never
    // left it is not_executed, saying where it looked.
    let mut s = gateway(&rt);
    s.send(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#);
    let init = s.recv();
    assert_eq!(init["result"]["protocolVersion"], "2025-11-25", "{init}");
    assert!(init["result"]["instructions"].as_str().unwrap().contains("jfgui_apps_list"));
    s.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    s.send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#);
    let tools = s.recv();
    assert_eq!(tools["result"]["tools"][0]["name"], "jfgui_apps_list", "{tools}");
    let away = legacy_call(&mut s, "away", "jfgui_state_inspect", json!({"app": "notes-a"}));
    let error = tool_error(&away);
    assert_eq!(
        (error["class"].as_str(), error["reason"].as_str(), error["code"].as_i64()),
        (Some("not_executed"), Some("daemon_unavailable"), Some(1000)),
        "{away}"
    );
    let looked = format!("nothing listens in {}", rt.display());
    assert!(error["message"].as_str().unwrap().contains(&looked), "{away}");

    // The daemon comes up: the same session reaches it (initialize replayed by the gateway).
    let daemon = Daemon::start(&rt, &[]);
    let _a = notepad(&rt, &["--agent-enable", "--name", "Notes A", "--text", "one"]);
    daemon.wait_endpoint("notes-a");
    wait_listed(&mut s, 1);
    let state = legacy_call(&mut s, "s1", "jfgui_state_inspect", json!({"app": "notes-a"}));
    assert_eq!(state["structuredContent"]["state"]["text"], "one", "{state}");

    // The daemon restarts mid-session: calls meanwhile are daemon_unavailable, then the app
    // re-registers with the new daemon and the same `app` value reaches it.
    let mut old = daemon;
    old.proc.signal("KILL");
    assert!(old.proc.wait_exit(PATIENCE).is_some(), "daemon did not die");
    let away = legacy_call(&mut s, "gone", "jfgui_state_inspect", json!({"app": "notes-a"}));
    assert_eq!(tool_error(&away)["reason"], "daemon_unavailable", "{away}");
    let daemon = Daemon::start(&rt, &[]);
    daemon.wait_endpoint("notes-a");
    wait_listed(&mut s, 1);
    let state = legacy_call(&mut s, "s2", "jfgui_state_inspect", json!({"app": "notes-a"}));
    assert_eq!(state["structuredContent"]["state"]["text"], "one", "{state}");

    // Modern requests need no session at all.
    let modern = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
        "params": {"_meta": meta(), "name": "jfgui_state_inspect", "arguments": {}}});
    s.send(&modern.to_string());
    let answer = s.recv();
    assert_eq!(answer["result"]["resultType"], "complete", "{answer}");
    assert_eq!(answer["result"]["structuredContent"]["state"]["text"], "one", "{answer}");

    s.close_stdin();
    let (status, rest, stderr) = s.finish();
    assert_eq!(status.code(), Some(0), "stderr: {stderr}");
    assert!(rest.is_empty(), "{rest:?}");
    assert!(stderr.contains("reconnecting"), "{stderr}");
    // Where it looked is said once, at the start, not for every call.
    assert_eq!(stderr.matches(&looked).count(), 1, "{stderr}");
    daemon.assert_alive();
}

/// Under socket activation systemd holds `host.sock` and `agentd.sock`, not `mcp.sock`: the
/// gateway's failed attempt connects to `agentd.sock`, which starts the daemon, and the next
/// attempt finds the `mcp.sock` the daemon bound.
#[test]
fn the_gateway_starts_a_socket_activated_daemon() {
    let _w = Watchdog::arm(PATIENCE * 3);
    let test = "the_gateway_starts_a_socket_activated_daemon";
    if std::process::Command::new("systemd-socket-activate").arg("--version").output().is_err() {
        jfgui_tests::cannot_run(test, "systemd-socket-activate is not installed");
        return;
    }
    let dir = TempDir::new();
    let rt = dir.rt();
    std::fs::create_dir_all(&rt).expect("rt");
    std::fs::set_permissions(&rt, std::os::unix::fs::PermissionsExt::from_mode(0o700))
        .expect("0700");
    let mut cmd = std::process::Command::new("systemd-socket-activate");
    cmd.arg("-l").arg(rt.join("host.sock")).arg("-l").arg(rt.join("agentd.sock"));
    cmd.arg("--fdname=host:control").arg(jfgui_tests::agentd()).arg("--runtime-dir").arg(&rt);
    cmd.env_remove("XDG_RUNTIME_DIR").env("JFGUI_LOG", "debug");
    let activator = Proc::spawn(cmd, dir.path().join("activated.log"));
    assert!(wait_until(PATIENCE, || rt.join("agentd.sock").exists()), "{}", activator.stderr());
    assert!(!rt.join("mcp.sock").exists(), "nothing runs the daemon yet");
    let mut s = gateway(&rt);
    s.send(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#);
    assert_eq!(s.recv()["result"]["protocolVersion"], "2025-11-25");
    let mut last = Value::Null;
    let mut round = 0;
    let reached = wait_until(PATIENCE, || {
        round += 1;
        last = legacy_call(&mut s, &format!("a-{round}"), "jfgui_apps_list", json!({}));
        last["isError"] == false
    });
    assert!(reached, "never reached the activated daemon: {last}; log: {}", activator.stderr());
    assert_eq!(last["structuredContent"]["apps"], json!([]));
}
