//! Consent, the daemon's part (docs/PROTOCOL.md, "Consent"): who is calling, as the operating
//! system says ([`Asker`], one per client connection, named through the OS layer's
//! [`Identify`]); the user's standing grants (`consent/grants.rs`); and what a call that waits
//! for the user carries to the app side ([`Asking`]), which keeps the prompt (`app/prompts.rs`)
//! until the app reports the answer, withdraws it at the deadline or when its client goes away,
//! and records a grant on "always".
//!
//! Both sides use this module; it imports neither.

mod grants;

use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use jfgui_proto::channel::{Agent, ConsentAnswer, WithdrawReason};

pub use grants::{
    AddError, Grant, GrantStore, Grants, MAX_FILE_BYTES, MAX_GRANTS, Unreadable, parse,
};

use crate::PeerInfo;
use crate::audit::{ClientInfo, Transport};

/// How long a prompt waits for the user's answer before the daemon withdraws it.
pub const DEFAULT_CONFIRM_TIMEOUT: Duration = Duration::from_secs(120);

/// What the agent of a browser bridge `/rpc` caller is called: the holder of the bridge's token,
/// which has no process the OS could name.
pub const BRIDGE_CLIENT: &str = "bridge client";

/// The OS layer's way from a client's peer pid to the agent acting through it: the first
/// process, from the peer up its ancestors, that is not one of our own programs, and that
/// process's executable path.
#[derive(Clone)]
pub struct Identify(Arc<dyn Fn(u32) -> Option<(u32, String)> + Send + Sync>);

impl Identify {
    /// An identification by `agent_of`.
    pub fn new(agent_of: impl Fn(u32) -> Option<(u32, String)> + Send + Sync + 'static) -> Self {
        Identify(Arc::new(agent_of))
    }

    /// The agent acting through process `pid`: its pid and executable path.
    pub fn agent_of(&self, pid: u32) -> Option<(u32, String)> {
        (self.0)(pid)
    }
}

impl std::fmt::Debug for Identify {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Identify").finish_non_exhaustive()
    }
}

/// The consent part of the engine's configuration.
#[derive(Debug, Clone)]
pub struct ConsentConfig {
    /// How long a prompt may wait (120 s).
    pub timeout: Duration,
    /// The user's grants (default: an empty book kept in memory).
    pub grants: Grants,
    /// How the OS layer names agents; `None`: it names none (every agent is `unknown agent`).
    pub identify: Option<Identify>,
}

impl Default for ConsentConfig {
    fn default() -> Self {
        ConsentConfig {
            timeout: DEFAULT_CONFIRM_TIMEOUT,
            grants: Grants::default(),
            identify: None,
        }
    }
}

/// Something that can take a waiting prompt back: an app (`app/prompts.rs`).
pub trait Prompter: Send + Sync {
    /// Withdraws the prompt of task `task` if it still waits.
    fn withdraw(&self, task: &str, reason: WithdrawReason);

    /// Whether the prompt of task `task` still waits.
    fn waits(&self, task: &str) -> bool;
}

/// The agent behind one client connection, fixed when it connected, and the prompts its calls
/// left waiting: when the connection's last handle goes (the client went away), each is
/// withdrawn (`client_gone`).
pub struct Asker {
    exe: String,
    pid: Option<u32>,
    transport: Transport,
    may_grant: bool,
    waiting: Mutex<Vec<(Weak<dyn Prompter>, String)>>,
}

impl std::fmt::Debug for Asker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Asker").field("exe", &self.exe).field("pid", &self.pid).finish()
    }
}

impl Asker {
    /// The agent of a connection from `peer`, named now (while the peer is surely alive).
    /// Without a name from the OS the agent is `unknown agent` and no grant covers or is made
    /// for it.
    pub fn new(peer: &PeerInfo, identify: Option<&Identify>) -> Asker {
        let named = match (peer.transport, peer.pid) {
            (Transport::Bridge, _) => None,
            (_, Some(pid)) => identify.and_then(|identify| identify.agent_of(pid)),
            (_, None) => None,
        };
        let (exe, pid, may_grant) = match named {
            Some((pid, exe)) => (exe, Some(pid), true),
            None if peer.transport == Transport::Bridge => (BRIDGE_CLIENT.to_owned(), None, false),
            None => ("unknown agent".to_owned(), peer.pid, false),
        };
        Asker { exe, pid, transport: peer.transport, may_grant, waiting: Mutex::default() }
    }

    /// The agent's executable path (or what stands for it: `bridge client`, `unknown agent`).
    pub fn exe(&self) -> &str {
        &self.exe
    }

    /// The agent's pid, when it has one.
    pub fn pid(&self) -> Option<u32> {
        self.pid
    }

    /// Whether a grant may cover or be made for this agent: only one the OS named.
    pub fn may_grant(&self) -> bool {
        self.may_grant
    }

    /// The agent as the app is told, with what the client `says` it is beside it.
    pub fn agent(&self, says: Option<&ClientInfo>) -> Agent {
        Agent {
            exe: self.exe.clone(),
            pid: self.pid,
            says: says.map(|s| format!("{} {}", s.name, s.version)),
            transport: self.transport.as_str().to_owned(),
        }
    }

    /// Notes that `task` of `prompter` waits for the user on behalf of this connection.
    pub fn waits(&self, prompter: Weak<dyn Prompter>, task: String) {
        let mut waiting = self.waiting.lock().unwrap_or_else(|e| e.into_inner());
        // Only prompts that still wait are kept: a long-lived connection's list stays as short
        // as the prompts it has open (at most 16 per app).
        waiting.retain(|(p, t)| p.upgrade().is_some_and(|p| p.waits(t)));
        waiting.push((prompter, task));
    }
}

impl Drop for Asker {
    fn drop(&mut self) {
        let waiting = std::mem::take(self.waiting.get_mut().unwrap_or_else(|e| e.into_inner()));
        for (prompter, task) in waiting {
            if let Some(prompter) = prompter.upgrade() {
                prompter.withdraw(&task, WithdrawReason::ClientGone);
            }
        }
    }
}

/// Told how a prompt ended: the answer, and the grant an "always" made.
pub type Decided = Box<dyn Fn(ConsentAnswer, Option<u64>) + Send + Sync>;

/// What a call of a `confirm` action carries to the app side, beside the `consent` it sends:
/// enough to keep its prompt if the app asks.
pub struct Asking {
    /// The agent that called, as the app was told.
    pub agent: String,
    /// The `confirm` actions of the call (one, or those of a batch).
    pub actions: Vec<String>,
    /// Whether a grant may be made on "always".
    pub may_grant: bool,
    /// The connection that called, for `client_gone`.
    pub asker: Weak<Asker>,
    /// Told how the prompt ended (the audit record of the decision).
    pub decided: Option<Decided>,
}

impl std::fmt::Debug for Asking {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Asking")
            .field("agent", &self.agent)
            .field("actions", &self.actions)
            .finish()
    }
}
