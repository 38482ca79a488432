// The crate docs are README.md (also the crates.io page), so its example runs as a doc test.
#![doc = include_str!("../README.md")]

pub mod activation;
mod app;
pub mod audit;
mod backlog;
mod client;
pub mod consent;
mod output;
mod partial;
mod tasks;
#[cfg(test)]
mod tests;

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::watch;

pub use app::{BudgetUse, EndpointEvents};
// The browser bridge answers malformed `/rpc` envelopes exactly as an endpoint would.
pub use client::json1;
pub use client::{
    ControlError, ControlMethods, OfflineMcp, drop_non_mcp_error_id, is_mcp_request_id,
    mcp_error_line,
};

use crate::activation::{Activation, Starts};
use crate::app::{App, Registry};
use crate::audit::{Audit, Transport};
use crate::client::{Caller, ClientFate, Target};
use crate::consent::Asker;
use crate::tasks::TaskRecords;

/// How long shutdown waits for the audit log's queue to be written.
pub const AUDIT_FLUSH: Duration = Duration::from_secs(2);

/// All bounds and deadlines of the engine. [`Default`] gives the shipped values.
#[derive(Debug, Clone)]
pub struct EngineConfig {
    /// Client line/message bounds: a request line and a response are at most
    /// `json.max_bytes` (1 MiB).
    pub json: jfgui_proto::Limits,
    /// Largest host-channel frame body in either direction (1 MiB + 64 KiB).
    pub max_frame: usize,
    /// An app must complete hello → actions → ready within this (5 s).
    pub handshake_deadline: Duration,
    /// A forwarded call without a reply within this fails `outcome_unknown/timeout` (30 s).
    pub request_deadline: Duration,
    /// A line or frame must complete within this, counted from its first byte, or its
    /// connection ends (30 s).
    pub partial_deadline: Duration,
    /// Most registered apps (256).
    pub max_apps: usize,
    /// Most requests in flight per client connection (64).
    pub max_in_flight_per_client: usize,
    /// Most requests outstanding (queued or awaiting reply) per app (256).
    pub max_queued_per_app: usize,
    /// Most tasks in the task records (4096; finished ones evicted oldest first).
    pub max_tasks: usize,
    /// Most unfinished tasks per app (256), so one app cannot fill the records for the others.
    pub max_tasks_per_app: usize,
    /// Bytes of task states the records keep, running tasks' results included (64 MiB).
    pub max_task_bytes: usize,
    /// Bytes of buffered partial input (client lines and host-channel frames not yet complete)
    /// for the whole daemon (64 MiB); a connection whose partial message would exceed it is
    /// dropped.
    pub max_partial_bytes: usize,
    /// Bytes held for all apps' registrations together (64 MiB): an app whose registration
    /// would exceed it is refused `registration_too_large`.
    pub max_registration_bytes: usize,
    /// On shutdown, how long outstanding calls may still be answered (5 s).
    pub shutdown_drain: Duration,
    /// Longest endpoint slug (48; the OS layer may lower it to fit `sun_path`).
    pub max_slug_len: usize,
    /// The runtime directory, reported by `daemon/status`. `None` (headless, Windows) reports
    /// `null`.
    pub runtime_dir: Option<PathBuf>,
    /// How the OS layer names an enabled app's endpoint, for `apps/list`. `None` (headless)
    /// reports `null`.
    pub endpoint_naming: Option<EndpointNaming>,
    /// The audit log client calls are recorded in; `None` records nothing.
    pub audit: Option<Audit>,
    /// How the OS layer starts installed apps; `None` (headless, tests of the engine alone)
    /// starts none and lists none.
    pub activation: Option<Activation>,
    /// Log lines the process's log writer dropped, reported by `daemon/status` as `logDropped`:
    /// the daemon's writer counts into it; where nothing logs through a lossy writer
    /// (headless), it stays 0.
    pub log_dropped: Counter,
    /// Who calls, the user's grants, how long a prompt waits.
    pub consent: consent::ConsentConfig,
}

/// A count that one part of the process keeps and another reads, such as the log lines the
/// daemon's log writer dropped. Cheap to clone; every clone shares the one count.
#[derive(Debug, Clone, Default)]
pub struct Counter(Arc<AtomicU64>);

impl Counter {
    /// Adds `n`.
    pub fn add(&self, n: u64) {
        self.0.fetch_add(n, Ordering::Relaxed);
    }

    /// The count now.
    pub fn get(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

/// The OS layer's rule from a slug to the address of its endpoint: `RUNTIME_DIR/apps/SLUG.sock`
/// on Unix, `\\.\pipe\jfgui-agent-<SID>-app-SLUG` on Windows. The engine only reports it.
#[derive(Clone)]
pub struct EndpointNaming(Arc<dyn Fn(&str) -> String + Send + Sync>);

impl EndpointNaming {
    /// A rule from `name`.
    pub fn new(name: impl Fn(&str) -> String + Send + Sync + 'static) -> EndpointNaming {
        EndpointNaming(Arc::new(name))
    }

    /// The endpoint address of `slug`.
    pub fn name(&self, slug: &str) -> String {
        (self.0)(slug)
    }
}

impl std::fmt::Debug for EndpointNaming {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("EndpointNaming").finish_non_exhaustive()
    }
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            json: jfgui_proto::Limits::DEFAULT,
            max_frame: jfgui_proto::channel::DEFAULT_MAX_FRAME,
            handshake_deadline: Duration::from_secs(5),
            request_deadline: Duration::from_secs(30),
            partial_deadline: Duration::from_secs(30),
            max_apps: 256,
            max_in_flight_per_client: 64,
            max_queued_per_app: 256,
            max_tasks: 4096,
            max_tasks_per_app: 256,
            max_task_bytes: tasks::MAX_TASK_BYTES,
            max_partial_bytes: 64 << 20,
            max_registration_bytes: 64 << 20,
            shutdown_drain: Duration::from_secs(5),
            max_slug_len: 48,
            runtime_dir: None,
            endpoint_naming: None,
            audit: None,
            activation: None,
            log_dropped: Counter::default(),
            consent: consent::ConsentConfig::default(),
        }
    }
}

impl EngineConfig {
    /// The JSON bounds of a host-channel frame: the client bounds widened by the envelope
    /// (`jfgui_proto::channel::frame_limits`), so any client-sized payload fits in a frame.
    pub fn frame_limits(&self) -> jfgui_proto::Limits {
        jfgui_proto::channel::frame_limits(&self.json, self.max_frame)
    }

    /// The endpoint address of `slug`, when the OS layer gave a naming rule.
    pub fn endpoint_name(&self, slug: &str) -> Option<String> {
        self.endpoint_naming.as_ref().map(|rule| rule.name(slug))
    }
}

/// Who is on the other end of a connection (for logs and the audit log; the OS layer has
/// already checked).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PeerInfo {
    /// Peer process id, when the transport tells.
    pub pid: Option<u32>,
    /// Peer user id, when the transport tells.
    pub uid: Option<u32>,
    /// How a client reached the app (for app connections: [`Transport::Endpoint`], unused).
    pub transport: Transport,
}

/// Endpoint lifecycle: `Up` when an app is connected and enabled, `Down` when it is disabled
/// or gone. A subscription ([`Engine::subscribe`]) starts with a `Resync`; after it, the events
/// for one slug alternate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EndpointEvent {
    /// The full current set: bind what is missing, unbind what is not listed. Sent first, and
    /// again instead of the events a lagging subscriber missed.
    Resync {
        /// The slugs of every connected, enabled app.
        slugs: Vec<String>,
    },
    /// Bind `apps/SLUG.sock`.
    Up {
        /// The app's slug.
        slug: String,
    },
    /// Unbind `apps/SLUG.sock`.
    Down {
        /// The app's slug.
        slug: String,
    },
}

/// One registered app, for listings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppSummary {
    /// Endpoint slug.
    pub slug: String,
    /// Display name as registered, cut to 1024 bytes at a character boundary.
    pub display_name: String,
    /// Whether the display name was cut.
    pub display_name_truncated: bool,
    /// The app's pid as it announced it.
    pub pid: u32,
    /// Whether its endpoint exists.
    pub enabled: bool,
    /// Registered actions.
    pub action_count: usize,
}

/// The session engine (see the module docs). Cheap to clone; all clones share one state.
#[derive(Clone, Debug)]
pub struct Engine(Arc<Shared>);

#[derive(Debug)]
struct Shared {
    config: Arc<EngineConfig>,
    registry: Arc<Registry>,
    tasks: Arc<Mutex<TaskRecords>>,
    /// Bytes of partial input held by all connections (`max_partial_bytes`).
    partial: Arc<partial::PartialBudget>,
    shutdown: watch::Sender<bool>,
    /// Live `serve_app` and `serve_client` calls.
    connections: watch::Sender<Connections>,
    started: Instant,
    /// Installed apps being started, or whose last start failed.
    starts: Starts,
}

/// Waits until the watched value satisfies `f`. The borrow `wait_for` returns is dropped
/// inside, so a `select!` over this stays `Send` (the OS layer spawns the serve futures).
async fn until<T>(rx: &mut watch::Receiver<T>, f: impl FnMut(&T) -> bool) {
    let _ = rx.wait_for(f).await;
}

/// Live connections, for idle exit and shutdown.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Connections {
    /// App connections (registered, enabled or not, or still in the handshake).
    pub apps: usize,
    /// Client connections (endpoints and `mcp.sock`; not the control socket).
    pub clients: usize,
}

impl Connections {
    /// No app and no client connected.
    pub fn is_idle(&self) -> bool {
        self.apps == 0 && self.clients == 0
    }
}

/// Counts one live connection for as long as it exists.
struct Live<'a> {
    counter: &'a watch::Sender<Connections>,
    field: fn(&mut Connections) -> &mut usize,
}

impl<'a> Live<'a> {
    fn enter(
        counter: &'a watch::Sender<Connections>,
        field: fn(&mut Connections) -> &mut usize,
    ) -> Self {
        counter.send_modify(|c| *field(c) += 1);
        Live { counter, field }
    }
}

impl Drop for Live<'_> {
    fn drop(&mut self) {
        self.counter.send_modify(|c| *(self.field)(c) -= 1);
    }
}

impl Engine {
    /// A new engine with no apps.
    pub fn new(config: EngineConfig) -> Engine {
        let config = Arc::new(config);
        Engine(Arc::new(Shared {
            registry: Arc::new(Registry::new(
                config.max_apps,
                config.max_slug_len,
                config.max_registration_bytes,
            )),
            tasks: Arc::new(Mutex::new(TaskRecords::with_budget(
                config.max_tasks,
                config.max_tasks_per_app,
                config.max_task_bytes,
            ))),
            partial: partial::PartialBudget::new(config.max_partial_bytes),
            shutdown: watch::Sender::new(false),
            connections: watch::Sender::new(Connections::default()),
            started: Instant::now(),
            starts: Starts::default(),
            config,
        }))
    }

    /// The configuration.
    pub fn config(&self) -> &EngineConfig {
        &self.0.config
    }

    /// A new connection's tracker of its partial messages (deadline and daemon-wide budget).
    fn partial(&self) -> partial::Partial {
        partial::Partial::new(self.0.partial.clone(), self.0.config.partial_deadline)
    }

    /// Runs one app connection (host channel: handshake with deadline, registration, requests,
    /// replies, task updates, enable/disable) until it closes. Errors are logged.
    pub async fn serve_app<S>(&self, stream: S, peer: PeerInfo)
    where
        S: AsyncRead + AsyncWrite + Send + Unpin + 'static,
    {
        let _live = Live::enter(&self.0.connections, |c| &mut c.apps);
        app::serve(self, stream, peer).await;
    }

    /// Runs one client connection to the app whose endpoint slug is `slug`, speaking JSON-1,
    /// until EOF, the app disconnecting or being disabled (then the connection is closed once
    /// the calls already running are answered), or shutdown. A slug that has no enabled app
    /// closes the connection at once.
    pub async fn serve_client<S>(&self, stream: S, slug: &str, peer: PeerInfo)
    where
        S: AsyncRead + AsyncWrite + Send + Unpin + 'static,
    {
        let _live = Live::enter(&self.0.connections, |c| &mut c.clients);
        if *self.0.shutdown.borrow() {
            return;
        }
        let Some(app) = self.enabled_app(slug) else {
            tracing::info!(slug, ?peer, "client for an endpoint that is not up; closing");
            return;
        };
        let target = self.target(app, peer, ClientFate::default(), self.asker(&peer));
        client::serve_endpoint(self, stream, target, peer).await;
    }

    /// `app` as a client connection from `peer` calls it: audited when the engine has an audit
    /// log. Every kind of client connection (per-app endpoint, all-apps MCP, bridge, headless)
    /// builds its targets here; `fate` and `asker` are the client connection's.
    pub(crate) fn target(
        &self,
        app: App,
        peer: PeerInfo,
        fate: ClientFate,
        asker: Arc<Asker>,
    ) -> Target {
        let caller = self
            .0
            .config
            .audit
            .as_ref()
            .map(|audit| Caller::new(audit.clone(), peer, &asker, app.registration(), fate));
        Target::new(app, caller, asker)
    }

    /// The agent behind a client connection from `peer`, named now, one per connection.
    pub(crate) fn asker(&self, peer: &PeerInfo) -> Arc<Asker> {
        Arc::new(Asker::new(peer, self.0.config.consent.identify.as_ref()))
    }

    /// Runs one all-apps MCP connection (`mcp.sock`): MCP only, both revisions, every enabled
    /// app through the tools' `app` argument, until EOF or shutdown. Apps leaving and coming
    /// back never end it.
    pub async fn serve_mcp<S>(&self, stream: S, peer: PeerInfo)
    where
        S: AsyncRead + AsyncWrite + Send + Unpin + 'static,
    {
        let _live = Live::enter(&self.0.connections, |c| &mut c.clients);
        if *self.0.shutdown.borrow() {
            return;
        }
        client::serve_all_apps(self, stream, peer).await;
    }

    /// Runs one control connection (`agentd.sock`: `daemon/status`, `apps/list`).
    pub async fn serve_control<S>(&self, stream: S, peer: PeerInfo)
    where
        S: AsyncRead + AsyncWrite + Send + Unpin + 'static,
    {
        client::serve_control(stream, self, peer, None).await;
    }

    /// Runs one control connection that also answers the methods of `extra` (the OS layer's
    /// `bridge/open` and `bridge/close`); `extra` is dropped when the connection ends.
    pub async fn serve_control_with<S>(
        &self,
        stream: S,
        peer: PeerInfo,
        extra: Box<dyn ControlMethods>,
    ) where
        S: AsyncRead + AsyncWrite + Send + Unpin + 'static,
    {
        client::serve_control(stream, self, peer, Some(extra)).await;
    }

    /// Endpoint lifecycle events, so the OS layer can bind/unbind `apps/SLUG.sock`: first the
    /// endpoints that exist now ([`EndpointEvent::Resync`]), then every change.
    pub fn subscribe(&self) -> EndpointEvents {
        self.0.registry.subscribe()
    }

    /// Every registered app (enabled or not), in registration order.
    pub fn apps(&self) -> Vec<AppSummary> {
        self.0.registry.summaries()
    }

    /// At most `limit` registered apps in registration order, starting at position `from` (an
    /// opaque position from an earlier page; 0 for the first), and the position of the next
    /// page if there is one. Positions stay valid while apps come and go.
    pub fn apps_page(&self, from: u64, limit: usize) -> (Vec<AppSummary>, Option<u64>) {
        self.0.registry.page(from, limit)
    }

    /// The bytes held for all apps' registrations, and their budget
    /// ([`EngineConfig::max_registration_bytes`]).
    pub fn registration_bytes(&self) -> BudgetUse {
        self.0.registry.budget_use()
    }

    /// Whether endpoint `slug` has a registered app with agent access enabled.
    pub fn is_enabled(&self, slug: &str) -> bool {
        self.enabled_app(slug).is_some()
    }

    /// The app of endpoint `slug`, when it is registered with agent access enabled.
    fn enabled_app(&self, slug: &str) -> Option<App> {
        self.0.registry.get(slug).filter(App::is_enabled)
    }

    /// The registered app of endpoint `slug`.
    #[cfg(test)]
    fn app(&self, slug: &str) -> Option<App> {
        self.0.registry.get(slug)
    }

    /// Client connections currently served.
    pub fn client_count(&self) -> usize {
        self.0.connections.borrow().clients
    }

    /// Watches the live connection counts. Idle exit waits for [`Connections::is_idle`] and
    /// then for the idle time or a change, without polling:
    /// `rx.wait_for(Connections::is_idle)`, then `select!` on a sleep and `rx.changed()`.
    pub fn connections(&self) -> watch::Receiver<Connections> {
        self.0.connections.subscribe()
    }

    /// Time since [`Engine::new`].
    pub fn uptime(&self) -> Duration {
        self.0.started.elapsed()
    }

    /// Graceful stop: no new calls; outstanding calls may still be answered for
    /// `shutdown_drain`, then fail `outcome_unknown/daemon_shutdown`; apps are told `bye`;
    /// every `serve_*` future ends; the audit records queued are written (within
    /// [`AUDIT_FLUSH`]). Returns when they have (or after the drain plus a grace
    /// period, if a peer does not let go).
    pub async fn shutdown(&self) {
        self.0.shutdown.send_replace(true);
        let grace = self.0.config.shutdown_drain + Duration::from_secs(2);
        let mut connections = self.0.connections.subscribe();
        let _ = tokio::time::timeout(grace, connections.wait_for(Connections::is_idle)).await;
        // The last calls' records are written before the process goes.
        if let Some(audit) = &self.0.config.audit
            && !audit.flush(AUDIT_FLUSH).await
        {
            tracing::warn!("audit: records still queued at exit could not be written in time");
        }
    }
}
