//! The all-apps MCP server (SPEC S7 "All-apps MCP"): one MCP connection (`mcp.sock`, reached
//! through `jfgui-agent mcp`) for every enabled app of the user at once.
//!
//! It is the one-app MCP session with a different [`AppPort`]: [`AllApps`] takes the app of
//! each call from the tool's `app` argument (slug, display name or unique slug prefix: proto's
//! resolution rule, the CLI's ENDPOINT rule), looks it up at that moment and runs the same
//! `methods::call` a one-app endpoint runs, so the nine tools exist once. It adds
//! `jfgui_apps_list` and its own instructions; it lists no standard resources (each app's
//! resources are read with `jfgui_resources_read` and its `app`).
//!
//! Nothing binds a connection to an app: an app that leaves only makes calls naming it answer
//! `not_found/app` (with `data.apps`, the apps that are there), and an app that registers again
//! is found by the same `app` value on the next call. The connection speaks MCP only, both
//! revisions, from its first line (a JSON-1 method gets MCP's "send initialize or the modern
//! envelope" error).
//!
//! [`OfflineMcp`] is the same server with no daemon behind it: the gateway answers with it
//! while the daemon is away, so every answer has exactly the daemon's shape, and every tool
//! call is `outcome_unknown/daemon_unavailable`.

use std::sync::Arc;

use jfgui_proto::channel::ResourceInfo;
use jfgui_proto::resolve::{self, Candidate, Resolved};
use jfgui_proto::{ActionError, AppRef, Limits, Map, Reason, Value};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::watch;

use super::app::{AppPort, MethodError};
use super::rpc::{Incoming, object};
use super::select::{McpSession, Pending, Protocol, Route};
use super::{mcp_error_line, response_line, tools};
use crate::audit::{Protocol as AuditProtocol, Transport};
use crate::lines::{Line, LineReader};
use crate::partial::Partial;
use crate::session::methods::{self, Method};
use crate::session::peer_warnings::PeerWarnings;
use crate::session::running::Running;
use crate::session::{App, Backpressure, ClientFate, Output, finish, json1};
use crate::{AppSummary, Engine, EngineConfig, PeerInfo, until};

/// The name the all-apps server gives itself (`serverInfo.title`).
const SERVER_NAME: &str = "All apps";

/// What the all-apps server tells the model first.
const INSTRUCTIONS: &str = "You are connected to jfgui-agentd, which lets you drive the user's desktop applications with semantic actions, never screen coordinates. Call jfgui_apps_list first: it lists the applications you can drive now, and every other tool takes one of their `app` values as its `app` argument (it may be omitted only while exactly one application is enabled). Then, per application: find actions with jfgui_actions_search, read an action's input schema with jfgui_actions_describe, read the state and its revision with jfgui_state_inspect, and run actions with jfgui_actions_execute, or several with jfgui_actions_batch (atomic: all or nothing). Writes need expectedRevision; after a stale_revision error, re-read the state and retry with data.currentRevision. Long-running actions return a task: follow it with jfgui_tasks_get, stop it with jfgui_tasks_cancel. See a view with jfgui_view_render and read resources with jfgui_resources_read. Applications come and go: after not_found/app, call jfgui_apps_list again; a restarted application is reached by the same `app` value once it is back.";

/// Where the all-apps server finds apps.
pub(crate) trait AppSource: Send + Sync {
    /// The enabled apps now, in registration order, or why they cannot be known.
    fn enabled(&self) -> Result<Vec<AppSummary>, ActionError>;
    /// The enabled app of endpoint `slug`, if it is (still) there.
    fn open(&self, slug: &str) -> Option<App>;
}

/// The daemon's own apps.
pub(crate) struct EngineApps {
    engine: Engine,
    /// The connection's client (transport: the all-apps server), for the audit log.
    peer: PeerInfo,
    /// What became of that client, shared by its calls to every app.
    fate: ClientFate,
}

impl EngineApps {
    pub(crate) fn new(engine: Engine, peer: PeerInfo) -> EngineApps {
        let peer = PeerInfo { transport: Transport::AllAppsMcp, ..peer };
        EngineApps { engine, peer, fate: ClientFate::default() }
    }
}

impl AppSource for EngineApps {
    fn enabled(&self) -> Result<Vec<AppSummary>, ActionError> {
        Ok(self.engine.apps().into_iter().filter(|a| a.enabled).collect())
    }

    fn open(&self, slug: &str) -> Option<App> {
        let link = self.engine.enabled_link(slug)?;
        Some(self.engine.client_app(link, self.peer, self.fate.clone()))
    }
}

/// No daemon: nothing can be known or reached.
#[derive(Debug)]
struct NoDaemon;

impl AppSource for NoDaemon {
    fn enabled(&self) -> Result<Vec<AppSummary>, ActionError> {
        Err(ActionError::new(
            Reason::DaemonUnavailable,
            "jfgui-agentd is not reachable (not started yet or restarting); the gateway keeps reconnecting.",
        ))
    }

    fn open(&self, _slug: &str) -> Option<App> {
        None
    }
}

impl Candidate for AppSummary {
    fn slug(&self) -> &str {
        &self.slug
    }
    fn display_name(&self) -> &str {
        &self.display_name
    }
    fn enabled(&self) -> bool {
        self.enabled
    }
}

/// Every enabled app of `source`, as one MCP server.
#[derive(Debug)]
pub(crate) struct AllApps<S> {
    source: S,
}

impl<S: AppSource> AllApps<S> {
    pub(crate) fn new(source: S) -> AllApps<S> {
        AllApps { source }
    }

    /// One request's view of the server: the apps it opens are called in `protocol` (the
    /// revision and `clientInfo` the audit log records).
    pub(crate) fn speaking<'a>(&'a self, protocol: &'a AuditProtocol) -> Speaking<'a, S> {
        Speaking { server: self, protocol }
    }

    /// The app a call's `app` argument (taken out of `params`) names.
    fn target(&self, params: &mut Map) -> Result<App, MethodError> {
        let query = match params.remove("app") {
            None => None,
            Some(Value::String(query)) => Some(query),
            Some(other) => {
                return Err(invalid_app(
                    "invalid_type",
                    format!("app must be a string, not {}.", other.type_name()),
                    None,
                ));
            }
        };
        let apps = self.source.enabled().map_err(MethodError::Action)?;
        let slug = match query.as_deref() {
            None => match apps.as_slice() {
                [one] => one.slug.clone(),
                [] => return Err(not_found("", &apps)),
                several => {
                    return Err(invalid_app(
                        "app_required",
                        format!(
                            "{} applications are enabled: name one with `app` (see jfgui_apps_list).",
                            several.len()
                        ),
                        Some(several.iter().collect()),
                    ));
                }
            },
            Some(query) => match resolve::resolve(query, &apps) {
                Resolved::One(app) => app.slug.clone(),
                Resolved::Ambiguous(many) => {
                    return Err(invalid_app(
                        "app_ambiguous",
                        format!(
                            "app {query:?} names several applications; use one of their `app` values."
                        ),
                        Some(many),
                    ));
                }
                Resolved::Disabled(_) | Resolved::None => return Err(not_found(query, &apps)),
            },
        };
        // It may have left since the listing.
        self.source.open(&slug).ok_or_else(|| not_found(query.as_deref().unwrap_or(""), &apps))
    }
}

/// `not_found/app`, listing the apps that are there.
fn not_found(query: &str, apps: &[AppSummary]) -> MethodError {
    let message = if apps.is_empty() {
        "No application is enabled right now.".to_owned()
    } else {
        format!("No enabled application answers to {query:?}; data.apps lists the ones there are.")
    };
    let apps = apps
        .iter()
        .map(|a| AppRef { slug: a.slug.clone(), display_name: a.display_name.clone() })
        .collect();
    MethodError::Action(ActionError::new(Reason::App { app: query.to_owned(), apps }, message))
}

/// A refused `app` argument (an `invalid_params` tool error): `reason`, `param: "app"` and,
/// when there is a choice to make, the candidates as `apps`.
fn invalid_app(reason: &str, message: String, apps: Option<Vec<&AppSummary>>) -> MethodError {
    let mut data = object([("reason", reason.into()), ("param", "app".into())]);
    if let Some(apps) = apps {
        data.insert("apps", apps.into_iter().map(app_ref).collect::<Vec<_>>());
    }
    MethodError::InvalidParams { message, data }
}

fn app_ref(app: &AppSummary) -> Value {
    Value::Object(object([
        ("app", app.slug.as_str().into()),
        ("displayName", app.display_name.as_str().into()),
    ]))
}

/// [`AllApps`] answering one request ([`AllApps::speaking`]).
pub(crate) struct Speaking<'a, S> {
    server: &'a AllApps<S>,
    protocol: &'a AuditProtocol,
}

impl<S: AppSource> AppPort for Speaking<'_, S> {
    fn display_name(&self) -> String {
        SERVER_NAME.to_owned()
    }

    async fn call(&self, method: Method, mut params: Map) -> Result<Map, MethodError> {
        let app = self.server.target(&mut params)?.speaking(self.protocol);
        methods::call(&app, method, params).await
    }

    async fn list_resources(&self) -> Result<Vec<ResourceInfo>, MethodError> {
        Ok(Vec::new())
    }

    fn instructions(&self) -> String {
        INSTRUCTIONS.to_owned()
    }

    fn tool_list(&self) -> &'static [Value] {
        tools::all_apps_tool_list()
    }

    fn apps_list(&self) -> Option<Result<Map, ActionError>> {
        let listed = self.server.source.enabled().map(|apps| {
            let rows = apps.iter().map(|a| {
                Value::Object(object([
                    ("app", a.slug.as_str().into()),
                    ("displayName", a.display_name.as_str().into()),
                    ("pid", u64::from(a.pid).into()),
                    ("actionCount", (a.action_count as u64).into()),
                ]))
            });
            object([("apps", Value::Array(rows.collect()))])
        });
        Some(listed)
    }
}

/// What one line asks for.
enum Step {
    /// Write this line now.
    Send(Vec<u8>),
    /// Run this request, then answer the request with this id.
    Run(Pending, Option<Value>),
    /// Nothing (notifications, responses from the client, cancelled requests).
    Silent,
}

/// Classifies one complete line of an MCP-only connection; `warnings` is the connection's rate
/// limit for the warnings routing may log.
fn step(
    protocol: &mut Protocol,
    warnings: &mut PeerWarnings,
    line: &[u8],
    limits: &Limits,
) -> Step {
    let envelope = match json1::parse_envelope(line, limits, true) {
        Ok(envelope) => envelope,
        Err(Some(response)) => {
            return Step::Send(mcp_error_line(&response, limits).unwrap_or(response));
        }
        Err(None) => return Step::Silent,
    };
    let params = Value::Object(envelope.params);
    let incoming = Incoming {
        id: envelope.id.as_ref(),
        method: Some(&envelope.method),
        params: Some(&params),
    };
    match protocol.route(&incoming, warnings) {
        Route::Answer(reply) => Step::Send(response_line(envelope.id.as_ref(), reply, limits)),
        Route::Mcp(pending) => Step::Run(pending, envelope.id),
        // An MCP-only connection never selects JSON-1.
        Route::Silent | Route::Json1 => Step::Silent,
    }
}

/// Runs one `mcp.sock` connection until EOF or shutdown, then answers the calls already
/// running and closes. Bounded like every client connection (`session.rs`): in-flight slots,
/// response-byte admission, a writer that stops the reader while its buffer is full.
pub(crate) async fn serve<S>(
    stream: S,
    server: AllApps<EngineApps>,
    config: &EngineConfig,
    partial: Partial,
    mut shutdown: watch::Receiver<bool>,
    peer: PeerInfo,
) where
    S: AsyncRead + AsyncWrite + Send + Unpin + 'static,
{
    let limits = config.json;
    let (rd, wr) = tokio::io::split(stream);
    let mut lines = LineReader::new(rd, limits.max_bytes, partial);
    let output = Output::start(wr, limits.max_bytes);
    let backpressure = Backpressure::new(config);
    let server = Arc::new(server);
    let mut protocol = Protocol::Mcp(McpSession::default());
    let mut warnings = PeerWarnings::new(peer);
    // As on an endpoint (`session.rs`): the calls waiting for an app run on this task.
    let mut calls = Running::new(output.clone()).settling(server.source.fate.clone());
    tracing::debug!(?peer, "all-apps MCP client connected");
    // Calls polled first, shutdown before reading more (as on an endpoint).
    let ended = loop {
        let permit = tokio::select! {
            biased;
            () = calls.run() => unreachable!("Running::run never completes"),
            _ = until(&mut shutdown, |s| *s) => break "shutdown",
            p = backpressure.permit(&output) => match p { Ok(p) => p, Err(_) => break "closed" },
        };
        let line = tokio::select! {
            biased;
            () = calls.run() => unreachable!("Running::run never completes"),
            _ = until(&mut shutdown, |s| *s) => break "shutdown",
            l = lines.next_line() => l,
        };
        match line {
            Ok(Some(Line::Complete(bytes))) => {
                match step(&mut protocol, &mut warnings, &bytes, &limits) {
                    Step::Send(line) => calls.beside(output.send(line)).await,
                    Step::Silent => {}
                    // As on an endpoint (`session.rs`): methods answered from the daemon's own
                    // state run here, one at a time, so pipelining costly ones buys no extra
                    // tasks; calls that wait for an app run concurrently, beside them.
                    Step::Run(pending, id) if pending.is_local() => {
                        let protocol = pending.protocol().clone();
                        let server = &server;
                        let output = &output;
                        calls
                            .beside(async move {
                                if let Some(reply) = pending.run(&server.speaking(&protocol)).await
                                {
                                    output.send(response_line(id.as_ref(), reply, &limits)).await;
                                }
                            })
                            .await;
                    }
                    Step::Run(pending, id) => {
                        let server = server.clone();
                        let output = output.clone();
                        calls.push(Box::pin(async move {
                            let protocol = pending.protocol().clone();
                            if let Some(reply) = pending.run(&server.speaking(&protocol)).await {
                                let response = response_line(id.as_ref(), reply, &limits);
                                permit.bytes.observe(response.len());
                                output.send(response).await;
                            }
                            drop(permit);
                        }));
                    }
                }
                // Fairness: every other runnable connection gets its turn between two lines
                // (a line the reader waited for came after such a turn already).
                if !lines.waited() {
                    tokio::task::yield_now().await;
                }
            }
            Ok(Some(Line::TooLong)) => {
                let line = json1::too_long_response(&limits);
                calls.beside(output.send(mcp_error_line(&line, &limits).unwrap_or(line))).await;
            }
            Ok(None) => break "eof",
            Err(e) => {
                tracing::info!(?peer, "all-apps MCP connection ended: {e}");
                break "read error";
            }
        }
    };
    tracing::debug!(?peer, reason = ended, "all-apps MCP client stops reading");
    // As on an endpoint: calls that finish after a client left are recorded as not answered.
    server.source.fate.close(ended, finish(calls, output, config, peer)).await;
}

/// The all-apps server with no daemon behind it, for `jfgui-agent mcp` while the daemon is
/// away: every answer has the daemon's shape (same code), and every tool call, the app list
/// included, is an `isError` result `outcome_unknown/daemon_unavailable`.
///
/// Like a connection, it keeps the MCP session state of the lines it is given: a gateway that
/// switches to it replays the client's legacy `initialize` first.
#[derive(Debug)]
pub struct OfflineMcp {
    protocol: Protocol,
    warnings: PeerWarnings,
    server: AllApps<NoDaemon>,
}

impl Default for OfflineMcp {
    fn default() -> Self {
        OfflineMcp {
            protocol: Protocol::Mcp(McpSession::default()),
            warnings: PeerWarnings::new(PeerInfo::default()),
            server: AllApps::new(NoDaemon),
        }
    }
}

impl OfflineMcp {
    /// A fresh session (no legacy `initialize` seen).
    pub fn new() -> OfflineMcp {
        OfflineMcp::default()
    }

    /// The answer to one client line (without its newline), or `None` when none is due
    /// (notifications, responses).
    pub async fn answer(&mut self, line: &[u8]) -> Option<Vec<u8>> {
        let limits = Limits::DEFAULT;
        match step(&mut self.protocol, &mut self.warnings, line, &limits) {
            Step::Send(line) => Some(line),
            Step::Silent => None,
            Step::Run(pending, id) => {
                let protocol = pending.protocol().clone();
                let reply = pending.run(&self.server.speaking(&protocol)).await?;
                Some(response_line(id.as_ref(), reply, &limits))
            }
        }
    }
}
