//! The `/rpc` clients: each distinct `session` value of `/rpc` names one [`RpcClient`], a
//! client connection of the engine ([`Engine::serve_client`](jfgui_engine::Engine::serve_client)
//! over an in-memory pipe) to the attached app, with its own protocol state (JSON-1 or MCP,
//! legacy `initialize`).
//!
//! A browser has at most `max_sessions` of them. To make room for a new one, the least recently
//! used client that is stateless (JSON-1, modern MCP or undecided) and has nothing in flight is
//! closed; a legacy MCP client whose `initialize` succeeded stays until `/session/close`. If
//! nothing can go, the request is answered with a correlated error and never executed.
//!
//! Responses are matched to requests by id (string, number token, or `null` for an id the
//! protocol refused), so one client may have several requests in flight; an id still in flight
//! cannot be reused.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use jfgui_engine::audit::Transport;
use jfgui_engine::{Engine, PeerInfo};
use jfgui_proto::{Limits, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, ReadHalf, WriteHalf};
use tokio::sync::oneshot;

/// `/rpc` clients come over HTTP on 127.0.0.1, which tells no pid or uid; the token holder
/// is the client.
const BRIDGE_PEER: PeerInfo = PeerInfo { pid: None, uid: None, transport: Transport::Bridge };

/// Buffer of a client's in-memory pipe.
const PIPE_BUFFER: usize = 64 * 1024;

/// The identity of a JSON-RPC id for matching a response to its request: `"1"` and `1` differ,
/// numbers compare by their exact token, and an absent id is `null`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum IdKey {
    /// A string id.
    String(String),
    /// A number id, by token.
    Number(String),
    /// `null`, or no usable id.
    Null,
}

impl IdKey {
    /// The key of `id`.
    pub fn of(id: Option<&Value>) -> IdKey {
        match id {
            Some(Value::String(s)) => IdKey::String(s.clone()),
            Some(Value::Number(n)) => IdKey::Number(n.as_str().to_owned()),
            _ => IdKey::Null,
        }
    }
}

/// Why a client could not answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RpcFailure {
    /// The table is full of clients that may not expire.
    Full,
    /// Another request with this id is in flight in the client.
    DuplicateId,
    /// No response within the rpc deadline (the call may or may not have taken effect).
    Timeout,
    /// The app's endpoint closed before the request was read (not executed).
    Closed,
}

/// The `/rpc` clients of one browser, by `session` value.
#[derive(Debug)]
pub struct RpcClients {
    max: usize,
    clients: Mutex<HashMap<String, Arc<RpcClient>>>,
    clock: AtomicU64,
}

/// One `/rpc` client. See the module docs.
#[derive(Debug)]
pub struct RpcClient {
    writer: tokio::sync::Mutex<Option<WriteHalf<DuplexStream>>>,
    waiters: Mutex<HashMap<IdKey, Waiter>>,
    /// Set once an `initialize` got a result: the client holds MCP 2025-11-25 state.
    legacy: AtomicBool,
    /// Set when the engine closed the connection (the app was disabled or left).
    closed: AtomicBool,
    last_used: AtomicU64,
}

#[derive(Debug)]
struct Waiter {
    tx: oneshot::Sender<Vec<u8>>,
    initialize: bool,
}

impl RpcClient {
    fn lock_waiters(&self) -> std::sync::MutexGuard<'_, HashMap<IdKey, Waiter>> {
        self.waiters.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether this client may be closed to make room.
    fn evictable(&self) -> bool {
        !self.legacy.load(Ordering::SeqCst) && self.lock_waiters().is_empty()
    }

    /// Closes the pipe: the engine answers what it already read, then ends the connection.
    async fn close(&self) {
        if let Some(mut w) = self.writer.lock().await.take() {
            let _ = w.shutdown().await;
        }
    }

    fn close_soon(self: &Arc<Self>) {
        let client = self.clone();
        tokio::spawn(async move { client.close().await });
    }

    /// Sends one request line and waits for its response (`None` for a notification, which
    /// has no response).
    pub async fn call(
        &self,
        line: &[u8],
        id: Option<IdKey>,
        initialize: bool,
        deadline: Duration,
    ) -> Result<Option<Vec<u8>>, RpcFailure> {
        let rx = match &id {
            Some(key) => {
                let mut waiters = self.lock_waiters();
                if waiters.contains_key(key) {
                    return Err(RpcFailure::DuplicateId);
                }
                let (tx, rx) = oneshot::channel();
                waiters.insert(key.clone(), Waiter { tx, initialize });
                Some(rx)
            }
            None => None,
        };
        let written = {
            let mut writer = self.writer.lock().await;
            match writer.as_mut() {
                Some(w) => w.write_all(line).await.is_ok() && w.write_all(b"\n").await.is_ok(),
                None => false,
            }
        };
        let forget = |s: &RpcClient| {
            if let Some(key) = &id {
                s.lock_waiters().remove(key);
            }
        };
        if !written {
            forget(self);
            return Err(RpcFailure::Closed);
        }
        let Some(rx) = rx else { return Ok(None) };
        match tokio::time::timeout(deadline, rx).await {
            Ok(Ok(response)) => Ok(Some(response)),
            Ok(Err(_)) => Err(RpcFailure::Closed),
            Err(_) => {
                // A response arriving from now on finds no waiter and is dropped.
                forget(self);
                Err(RpcFailure::Timeout)
            }
        }
    }
}

impl RpcClients {
    /// An empty table for at most `max` clients.
    pub fn new(max: usize) -> RpcClients {
        RpcClients {
            max: max.max(1),
            clients: Mutex::new(HashMap::new()),
            clock: AtomicU64::new(0),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<RpcClient>>> {
        self.clients.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The client of `session` value `name`, created (evicting the least recently used stateless idle one
    /// if the table is full) when it does not exist.
    pub fn get_or_create(
        &self,
        name: &str,
        engine: &Engine,
        slug: &str,
        limits: &Limits,
    ) -> Result<Arc<RpcClient>, RpcFailure> {
        let now = self.clock.fetch_add(1, Ordering::SeqCst);
        let mut clients = self.lock();
        if let Some(s) = clients.get(name) {
            if !s.closed.load(Ordering::SeqCst) {
                s.last_used.store(now, Ordering::SeqCst);
                return Ok(s.clone());
            }
            clients.remove(name);
        }
        clients.retain(|_, s| !s.closed.load(Ordering::SeqCst));
        if clients.len() >= self.max {
            let victim = clients
                .iter()
                .filter(|(_, s)| s.evictable())
                .min_by_key(|(_, s)| s.last_used.load(Ordering::SeqCst))
                .map(|(n, _)| n.clone());
            let Some(victim) = victim else { return Err(RpcFailure::Full) };
            if let Some(s) = clients.remove(&victim) {
                tracing::debug!("bridge: /rpc client expired to make room (least recently used)");
                s.close_soon();
            }
        }
        let (ours, theirs) = tokio::io::duplex(PIPE_BUFFER);
        let (rd, wr) = tokio::io::split(ours);
        let client = Arc::new(RpcClient {
            writer: tokio::sync::Mutex::new(Some(wr)),
            waiters: Mutex::new(HashMap::new()),
            legacy: AtomicBool::new(false),
            closed: AtomicBool::new(false),
            last_used: AtomicU64::new(now),
        });
        let engine = engine.clone();
        let slug = slug.to_owned();
        tokio::spawn(async move { engine.serve_client(theirs, &slug, BRIDGE_PEER).await });
        tokio::spawn(read_responses(client.clone(), rd, *limits));
        clients.insert(name.to_owned(), client.clone());
        Ok(client)
    }

    /// Closes client `name`; false if there is none.
    pub fn close(&self, name: &str) -> bool {
        match self.lock().remove(name) {
            Some(s) => {
                s.close_soon();
                true
            }
            None => false,
        }
    }

    /// Closes every client (the browser is gone).
    pub fn clear(&self) {
        for (_, s) in self.lock().drain() {
            s.close_soon();
        }
    }
}

/// Delivers each response line to the request with its id, until the engine closes the
/// client; then the requests still waiting fail as not read.
async fn read_responses(client: Arc<RpcClient>, rd: ReadHalf<DuplexStream>, limits: Limits) {
    let mut reader = BufReader::new(rd);
    let mut line = Vec::new();
    loop {
        line.clear();
        match reader.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        if line.last() == Some(&b'\n') {
            line.pop();
        }
        let Ok(response) = jfgui_proto::parse(&line, &limits) else {
            tracing::error!("bridge: unparsable response line from the engine");
            continue;
        };
        let key = IdKey::of(response.get("id"));
        let waiter = client.lock_waiters().remove(&key);
        match waiter {
            Some(w) => {
                if w.initialize && response.get("result").is_some() {
                    client.legacy.store(true, Ordering::SeqCst);
                }
                let _ = w.tx.send(line.clone());
            }
            None => tracing::debug!("bridge: a response nobody waits for (timed out) dropped"),
        }
    }
    client.closed.store(true, Ordering::SeqCst);
    client.lock_waiters().clear();
}
