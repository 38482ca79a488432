//! The browser bridge: a web app in a browser tab registers with the daemon like any other app,
//! over HTTP/1.1 on 127.0.0.1.
//!
//! The bridge is one more transport of the host channel. `/connect` turns the tab's
//! registration into the native handshake frames and runs [`Engine::serve_app`] over an
//! in-memory pipe, so the tab gets a slug, an endpoint socket, a place in `apps/list` and the
//! all-apps MCP server exactly like a native app; the daemon's `request` frames become `/poll`
//! items and `/result` bodies become `reply` frames. `/rpc` gives token holders JSON-1 or MCP
//! clients of the attached app through [`Engine::serve_client`], again over in-memory pipes.
//! The bridge itself has no app state and no actions.
//!
//! It exists only while the control connection that opened it (`bridge/open`, sent by
//! `jfgui-agent browser-bridge`) stays open: the [`Bridge`] lives in that connection's
//! [`ControlMethods`] state, and dropping it closes the port, every HTTP connection and the
//! tab's registration at once.
//!
//! | part | file |
//! |---|---|
//! | `bridge/open`, `bridge/close` on the control socket | `bridge/control.rs` |
//! | the TCP listener and the connection cap | `bridge/listener.rs` |
//! | Host, Origin, token and CORS checks | `bridge/guard.rs`, `bridge/token.rs` |
//! | routes and request bodies | `bridge/routes.rs`, `bridge/http.rs` |
//! | the attached browser: queue, delivered ids, expiry | `bridge/browser.rs` |
//! | the `/rpc` clients, one per `session` value | `bridge/rpc_clients.rs` |

// A refusal is an HTTP answer, built where the reason is known and returned as is: boxing the
// cold error path of every guard would only add noise.
#![allow(clippy::result_large_err)]

mod browser;
mod control;
mod guard;
mod http;
mod listener;
mod routes;
mod rpc_clients;
mod token;

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use jfgui_engine::Engine;
use tokio::task::JoinHandle;

pub use control::Bridges;

use browser::Attachment;
use token::Token;

/// Every bound of the bridge; [`Default`] gives the shipped values, and each is a daemon flag
/// (`--bridge-*`) so tests reach them in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BridgeLimits {
    /// Requests queued for, or delivered to and not yet answered by, the browser (64). One
    /// more is answered `not_executed/busy` at once and never delivered.
    pub queue: usize,
    /// Largest HTTP request body, and largest request delivered to the browser (1 MiB).
    pub max_message_bytes: usize,
    /// Concurrent HTTP connections (16); one more is answered 503 and closed.
    pub max_connections: usize,
    /// How long `/poll` waits for something to deliver (20 s).
    pub poll_wait: Duration,
    /// How long `/rpc` waits for its response (30 s).
    pub rpc_deadline: Duration,
    /// A browser that neither polls nor answers for this long is detached (60 s).
    pub expiry: Duration,
    /// A request head (or an idle keep-alive connection) must complete within this (10 s).
    pub header_deadline: Duration,
    /// A request body must arrive within this (10 s); 408 otherwise.
    pub body_deadline: Duration,
    /// `/rpc` clients (one per `session` value) per attached browser (16).
    pub max_sessions: usize,
}

impl Default for BridgeLimits {
    fn default() -> Self {
        BridgeLimits {
            queue: 64,
            max_message_bytes: 1024 * 1024,
            max_connections: 16,
            poll_wait: Duration::from_secs(20),
            rpc_deadline: Duration::from_secs(30),
            expiry: Duration::from_secs(60),
            header_deadline: Duration::from_secs(10),
            body_deadline: Duration::from_secs(10),
            max_sessions: 16,
        }
    }
}

/// Most items one `/poll` answer carries.
pub const ITEMS_PER_POLL: usize = 8;

/// What every connection of one open bridge shares.
#[derive(Debug)]
struct BridgeState {
    engine: Engine,
    limits: BridgeLimits,
    token: Token,
    /// The configured origin, compared byte for byte with `Origin`.
    origin: String,
    /// `127.0.0.1:PORT`, compared byte for byte with `Host`.
    host: String,
    attachment: Mutex<Attachment>,
}

impl BridgeState {
    fn lock_attachment(&self) -> std::sync::MutexGuard<'_, Attachment> {
        self.attachment.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// One open bridge: the listener task and the shared state. Dropping it closes the port and
/// every connection, and detaches the browser (its requests fail as for a vanished app).
#[derive(Debug)]
struct Bridge {
    state: Arc<BridgeState>,
    address: SocketAddr,
    listener: JoinHandle<()>,
}

impl Bridge {
    /// Binds 127.0.0.1:`port` (0: a free port) and starts serving under `token`.
    fn open(
        engine: &Engine,
        limits: BridgeLimits,
        origin: String,
        port: u16,
        token: Token,
    ) -> std::io::Result<Bridge> {
        let std_listener = std::net::TcpListener::bind((Ipv4Addr::LOCALHOST, port))?;
        std_listener.set_nonblocking(true)?;
        let address = std_listener.local_addr()?;
        let listener = tokio::net::TcpListener::from_std(std_listener)?;
        let state = Arc::new(BridgeState {
            engine: engine.clone(),
            limits,
            token,
            origin,
            host: format!("127.0.0.1:{}", address.port()),
            attachment: Mutex::new(Attachment::None),
        });
        let listener = tokio::spawn(listener::serve(listener, state.clone()));
        tracing::info!(%address, origin = %state.origin, "browser bridge open");
        Ok(Bridge { state, address, listener })
    }

    /// `http://127.0.0.1:PORT`.
    fn url(&self) -> String {
        format!("http://{}", self.address)
    }
}

impl Drop for Bridge {
    fn drop(&mut self) {
        // Aborting the listener task drops its connection set, which aborts every connection.
        self.listener.abort();
        browser::close_all(&self.state);
        tracing::info!(address = %self.address, "browser bridge closed");
    }
}

#[cfg(test)]
mod tests;
