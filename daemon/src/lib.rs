//! The jfgui-agentd daemon: the session engine and the OS layer.
//!
//! The engine ([`Engine`] and the types re-exported beside it) is everything protocol and works
//! over any byte stream; `jfgui-agent headless` links it too. The OS layer (the public modules
//! below) binds it to the runtime directory, the lock, sockets or named pipes, socket
//! activation and signals. `docs/ARCHITECTURE.md` maps both.

mod engine;

pub use engine::{
    AppHandle, AppSummary, Connections, EndpointEvent, Engine, EngineConfig, LinkStatus, Method,
    MethodError, PeerInfo, methods,
};

// OS layer: runtime dir and lock (Unix), listeners, endpoints, process life.
#[cfg(unix)]
pub mod activation;
pub mod config;
pub mod endpoints;
#[cfg(unix)]
pub mod lock;
pub mod logging;
#[cfg(unix)]
pub mod runtime_dir;
pub mod server;
pub mod transport;
