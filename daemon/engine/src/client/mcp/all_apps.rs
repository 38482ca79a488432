//! The all-apps MCP server (`docs/PROTOCOL.md`, "All apps: `mcp.sock` and `jfgui-agent mcp`"):
//! one MCP connection (`mcp.sock`, reached through `jfgui-agent mcp`) for every enabled app of
//! the user at once.
//!
//! It is the one-app MCP connection with a different [`Backend`]: [`AllApps`] takes the app of
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
//! Apps whose user left agent access off are listed (`enabled: false`, without their actions),
//! so a model can tell the user what to turn on; a call naming one answers
//! `not_executed/app_disabled` with those words.
//!
//! [`OfflineMcp`] is the same server with no daemon behind it: the gateway answers with it
//! while the daemon is away, so every answer has exactly the daemon's shape, and every tool
//! call is `daemon_unavailable`: `not_executed` for a call that never left the gateway,
//! `outcome_unknown` for one that was in flight when the connection dropped.

use std::future::Future;
use std::sync::Arc;

use jfgui_proto::channel::ResourceInfo;
use jfgui_proto::resolve::{self, Candidate, Resolved};
use jfgui_proto::{ActionError, AppRef, Limits, Map, Payload, Reason, Value};
use tokio::io::{AsyncRead, AsyncWrite};

use super::backend::Backend;
use super::rpc::{Incoming, object};
use super::state::{McpState, Pending, Route};
use super::{mcp_error_line, response_line, tools};
use crate::activation::{self, Installed};
use crate::audit::{Protocol, Transport};
use crate::client::Target;
use crate::client::backpressure::CallPermit;
use crate::client::connection::{Connection, Ending, Handler};
use crate::client::json1;
use crate::client::method::{Method, MethodError};
use crate::client::methods;
use crate::client::observer::ClientFate;
use crate::client::running::Call;
use crate::consent::Asker;
use crate::output::Output;
use crate::{AppSummary, Engine, PeerInfo, until};

/// The name the all-apps server gives itself (`serverInfo.title`).
const SERVER_NAME: &str = "All apps";

/// What the all-apps server tells the model first.
const INSTRUCTIONS: &str = "You are connected to jfgui-agentd, which lets you drive the user's desktop applications with semantic actions, never screen coordinates. Call jfgui_apps_list first: it lists the user's applications (running: false: installed and not running; a call naming one starts it), and every other tool takes one of their `app` values (the slug; also the exact display name or a unique slug prefix) as its `app` argument, which may be omitted only while exactly one application is enabled. An application listed with enabled: false has agent access off: tell the user to turn on Agent access in it. Then, per application: find actions with jfgui_actions_search (describe: true returns their input schemas too, so jfgui_actions_describe is rarely needed), read the state and its revision with jfgui_state_inspect, and run actions with jfgui_actions_execute, or several with jfgui_actions_batch (atomic: all or nothing). Writes need expectedRevision; after a stale_revision error, re-read the state and retry with data.currentRevision. Long-running actions return a task: follow it with jfgui_tasks_get, stop it with jfgui_tasks_cancel. See a view with jfgui_view_render (the result is the image) and read resources with jfgui_resources_read. Applications come and go: after not_found/app, call jfgui_apps_list again; a restarted application is reached by the same `app` value once it is back.";

/// Where the all-apps server finds apps.
pub(crate) trait AppSource: Send + Sync {
    /// The registered apps now (agent access on or off), in registration order, or why they
    /// cannot be known.
    fn apps(&self) -> Result<Vec<AppSummary>, ActionError>;
    /// The enabled app of endpoint `slug`, if it is (still) there.
    fn open(&self, slug: &str) -> Option<Target>;
    /// The installed apps that are not running (agents may start them).
    fn installed(&self) -> Vec<Installed>;
    /// Starts the installed app `query` names (the resolution rule over
    /// [`installed`](AppSource::installed)) and answers the slug it registered with; `None`
    /// when `query` names no installed app.
    fn activate(
        &self,
        query: &str,
    ) -> impl Future<Output = Option<Result<String, ActionError>>> + Send;
}

/// The daemon's own apps.
pub(crate) struct EngineApps {
    engine: Engine,
    /// The connection's client (transport: the all-apps server), for the audit log.
    peer: PeerInfo,
    /// What became of that client, shared by its calls to every app.
    fate: ClientFate,
    /// Who that client is, for every app.
    asker: Arc<Asker>,
}

impl EngineApps {
    pub(crate) fn new(engine: Engine, peer: PeerInfo) -> EngineApps {
        let peer = PeerInfo { transport: Transport::AllAppsMcp, ..peer };
        let asker = engine.asker(&peer);
        EngineApps { engine, peer, fate: ClientFate::default(), asker }
    }
}

impl AppSource for EngineApps {
    fn apps(&self) -> Result<Vec<AppSummary>, ActionError> {
        Ok(self.engine.apps())
    }

    fn open(&self, slug: &str) -> Option<Target> {
        let app = self.engine.enabled_app(slug)?;
        Some(self.engine.target(app, self.peer, self.fate.clone(), self.asker.clone()))
    }

    fn installed(&self) -> Vec<Installed> {
        activation::not_running(&self.engine)
    }

    async fn activate(&self, query: &str) -> Option<Result<String, ActionError>> {
        let installed = self.installed();
        let Resolved::One(app) = resolve::resolve(query, &installed) else { return None };
        Some(activation::activate_and_find(&self.engine, app, self.peer.pid).await)
    }
}

/// No daemon: nothing can be known or reached. `message` says where the gateway looked;
/// `sent` tells a call that was in flight when the daemon went away from one that never left.
#[derive(Debug)]
struct NoDaemon {
    message: String,
    sent: bool,
}

impl AppSource for NoDaemon {
    fn apps(&self) -> Result<Vec<AppSummary>, ActionError> {
        let reason =
            if self.sent { Reason::DaemonUnavailable } else { Reason::DaemonUnavailableUnsent };
        Err(ActionError::new(reason, self.message.clone()))
    }

    fn open(&self, _slug: &str) -> Option<Target> {
        None
    }

    fn installed(&self) -> Vec<Installed> {
        Vec::new()
    }

    async fn activate(&self, _query: &str) -> Option<Result<String, ActionError>> {
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
    pub(crate) fn speaking<'a>(&'a self, protocol: &'a Protocol) -> Speaking<'a, S> {
        Speaking { server: self, protocol }
    }

    /// The app a call's `app` argument (taken out of `params`) names; an installed app that
    /// is not running is started first.
    async fn target(&self, params: &mut Map) -> Result<Target, MethodError> {
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
        let registered = self.source.apps().map_err(MethodError::Action)?;
        let apps: Vec<AppSummary> = registered.iter().filter(|a| a.enabled).cloned().collect();
        let slug = match query.as_deref() {
            None => match apps.as_slice() {
                [one] => one.slug.clone(),
                [] => return Err(MethodError::Action(not_found("", &apps))),
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
            Some(query) => match resolve::resolve(query, &registered) {
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
                Resolved::Disabled(app) => return Err(disabled(app)),
                Resolved::None => match self.source.activate(query).await {
                    Some(started) => started.map_err(MethodError::Action)?,
                    None => return Err(MethodError::Action(not_found(query, &apps))),
                },
            },
        };
        // It may have left since the listing.
        self.source
            .open(&slug)
            .ok_or_else(|| MethodError::Action(not_found(query.as_deref().unwrap_or(""), &apps)))
    }
}

/// `not_found/app`, listing the apps that are there.
pub(crate) fn not_found(query: &str, apps: &[AppSummary]) -> ActionError {
    let message = if apps.is_empty() {
        "No application is enabled right now.".to_owned()
    } else {
        format!("No enabled application answers to {query:?}; data.apps lists the ones there are.")
    };
    let suggestions = resolve::nearest(query, apps.iter().map(|a| a.slug.as_str()));
    let suggestions = suggestions.into_iter().map(str::to_owned).collect();
    let apps = apps
        .iter()
        .map(|a| AppRef { slug: a.slug.clone(), display_name: a.display_name.clone() })
        .collect();
    let reason = Reason::App { app: query.to_owned(), apps, suggestions };
    ActionError::new(reason, message)
}

/// `not_executed/app_disabled`: the app is there but its user has not let agents in.
fn disabled(app: &AppSummary) -> MethodError {
    MethodError::Action(ActionError::new(
        Reason::AppDisabled { app: app.slug.clone() },
        access_off(app),
    ))
}

/// What to tell the user about an app whose agent access is off.
fn access_off(app: &AppSummary) -> String {
    format!(
        "Agent access is off in {}: ask the user to turn it on in the application (the \"Agent access\" setting) and try again.",
        app.display_name
    )
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
    protocol: &'a Protocol,
}

impl<S: AppSource> Backend for Speaking<'_, S> {
    fn display_name(&self) -> String {
        SERVER_NAME.to_owned()
    }

    async fn call(&self, method: Method, mut params: Map) -> Result<Payload, MethodError> {
        let app = self.server.target(&mut params).await?.speaking(self.protocol);
        methods::call(&app, method, params.into()).await
    }

    async fn list_resources(&self) -> Result<Vec<ResourceInfo>, MethodError> {
        Ok(Vec::new())
    }

    fn instructions(&self) -> String {
        format!("{INSTRUCTIONS} {}", tools::ERRORS_EXPLAINED)
    }

    fn no_resources_message(&self) -> &'static str {
        "The all-apps server offers no resources of its own, so resources/* is not offered; read an application's resources with the jfgui_resources_read tool, its `app` and a URI one of its actions returned."
    }

    fn tool_list(&self) -> &'static [Value] {
        tools::all_apps_tool_list()
    }

    fn apps_list(&self) -> Option<Result<Map, ActionError>> {
        let listed = self.server.source.apps().map(|apps| {
            let rows = apps.iter().map(|a| {
                let mut row = object([
                    ("app", a.slug.as_str().into()),
                    ("displayName", a.display_name.as_str().into()),
                    ("pid", u64::from(a.pid).into()),
                    ("enabled", a.enabled.into()),
                    // Every registered app is running; installed ones that are not follow.
                    ("running", true.into()),
                ]);
                if a.enabled {
                    row.insert("actionCount", a.action_count as u64);
                } else {
                    // Nothing of what it offers, only what to tell the user.
                    row.insert("hint", access_off(a));
                }
                Value::Object(row)
            });
            // Installed apps that are not running: a call naming one starts it.
            let installed = self.server.source.installed().into_iter().map(|i| {
                Value::Object(object([
                    ("app", i.slug.into()),
                    ("displayName", i.display_name.into()),
                    ("running", false.into()),
                ]))
            });
            object([("apps", Value::Array(rows.chain(installed).collect()))])
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

/// Classifies one complete line of an MCP-only connection.
fn step(state: &mut McpState, line: &[u8], limits: &Limits) -> Step {
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
    match state.accept(&incoming) {
        Route::Answer(reply) => Step::Send(response_line(envelope.id.as_ref(), reply, limits)),
        Route::Run(pending) => Step::Run(pending, envelope.id),
        Route::Silent => Step::Silent,
    }
}

/// One `mcp.sock` connection's lines: MCP only, from the first line.
struct AllAppsConnection {
    server: Arc<AllApps<EngineApps>>,
    state: McpState,
}

impl Handler for AllAppsConnection {
    async fn line(&mut self, line: &[u8], permit: CallPermit, output: &Output) -> Option<Call> {
        let limits = self.server.source.engine.config().json;
        match step(&mut self.state, line, &limits) {
            Step::Send(line) => output.send(line).await,
            Step::Silent => {}
            // As on an endpoint: methods answered from the daemon's own state run here, one at
            // a time, so pipelining costly ones buys no extra tasks; calls that wait for an app
            // run concurrently, beside them.
            Step::Run(pending, id) if pending.is_local() => {
                let protocol = pending.protocol().clone();
                if let Some(reply) = pending.run(&self.server.speaking(&protocol)).await {
                    output.send(response_line(id.as_ref(), reply, &limits)).await;
                }
            }
            Step::Run(pending, id) => {
                let server = self.server.clone();
                let output = output.clone();
                return Some(Box::pin(async move {
                    let protocol = pending.protocol().clone();
                    if let Some(reply) = pending.run(&server.speaking(&protocol)).await {
                        let response = response_line(id.as_ref(), reply, &limits);
                        permit.observe(response.len());
                        output.send(response).await;
                    }
                    drop(permit);
                }));
            }
        }
        None
    }

    fn too_long(&self, limits: &Limits) -> Vec<u8> {
        let line = json1::too_long_response(limits);
        mcp_error_line(&line, limits).unwrap_or(line)
    }
}

/// Runs one `mcp.sock` connection from `peer` until EOF or shutdown, then answers the calls
/// already running and closes: the one client connection loop (`client/connection.rs`), MCP
/// only. Calls that finish after the client left are recorded as not answered, as on an
/// endpoint.
pub(crate) async fn serve<S>(engine: &Engine, stream: S, peer: PeerInfo)
where
    S: AsyncRead + AsyncWrite + Send + Unpin + 'static,
{
    let source = EngineApps::new(engine.clone(), peer);
    let fate = source.fate.clone();
    let server = Arc::new(AllApps::new(source));
    let handler = AllAppsConnection { server, state: McpState::default() };
    let mut shutdown = engine.0.shutdown.subscribe();
    let connection = Connection {
        config: engine.config(),
        partial: engine.partial(),
        peer,
        fate: Some(fate),
        ending: Ending::Drain,
    };
    tracing::debug!(?peer, "all-apps MCP client connected");
    let stop = async move {
        until(&mut shutdown, |s| *s).await;
        "shutdown"
    };
    connection.serve(stream, handler, stop).await;
}

/// The all-apps server with no daemon behind it, for `jfgui-agent mcp` while the daemon is
/// away: every answer has the daemon's shape (same code), and every tool call, the app list
/// included, is an `isError` result `daemon_unavailable` whose message is the one the gateway
/// gave (where it looked for the daemon): `not_executed` from [`OfflineMcp::answer`] (the call
/// never left the gateway), `outcome_unknown` from [`OfflineMcp::answer_lost`] (it was sent).
///
/// Like a connection, it keeps the MCP state of the lines it is given: a gateway that
/// switches to it replays the client's legacy `initialize` first.
#[derive(Debug)]
pub struct OfflineMcp {
    state: McpState,
    unsent: AllApps<NoDaemon>,
    lost: AllApps<NoDaemon>,
}

impl OfflineMcp {
    /// Fresh state (no legacy `initialize` seen); `message` is every tool error's message.
    pub fn new(message: &str) -> OfflineMcp {
        let server = |sent| AllApps::new(NoDaemon { message: message.to_owned(), sent });
        OfflineMcp { state: McpState::default(), unsent: server(false), lost: server(true) }
    }

    /// The answer to one client line (without its newline) that never reached a daemon, or
    /// `None` when none is due (notifications, responses).
    pub async fn answer(&mut self, line: &[u8]) -> Option<Vec<u8>> {
        self.answer_with(line, false).await
    }

    /// The answer to a request that was sent to a daemon which went away before answering.
    pub async fn answer_lost(&mut self, line: &[u8]) -> Option<Vec<u8>> {
        self.answer_with(line, true).await
    }

    async fn answer_with(&mut self, line: &[u8], sent: bool) -> Option<Vec<u8>> {
        let limits = Limits::DEFAULT;
        match step(&mut self.state, line, &limits) {
            Step::Send(line) => Some(line),
            Step::Silent => None,
            Step::Run(pending, id) => {
                let protocol = pending.protocol().clone();
                let server = if sent { &self.lost } else { &self.unsent };
                let reply = pending.run(&server.speaking(&protocol)).await?;
                Some(response_line(id.as_ref(), reply, &limits))
            }
        }
    }
}
