//! The jfgui-agentd daemon and its session engine.
//!
//! The engine (`engine` module) is everything protocol and works over any byte stream; the OS
//! layer binds it to sockets, the runtime directory and signals.

mod engine;

pub use engine::{
    AppHandle, AppSummary, EndpointEvent, Engine, EngineConfig, LinkStatus, Method, MethodError,
    PeerInfo, methods,
};

// OS layer (daemon-os): runtime dir, lock, listeners, endpoints, process life. Unix only for
// now: the Windows named-pipe transport (user-SID DACL, DEPENDENCIES.md §1) is not written
// yet, and `jfgui-agentd` says so and exits there.
#[cfg(unix)]
pub mod activation;
pub mod config;
#[cfg(unix)]
pub mod endpoints;
#[cfg(unix)]
pub mod lock;
pub mod logging;
#[cfg(windows)]
pub mod pipe_server;
#[cfg(unix)]
pub mod runtime_dir;
#[cfg(unix)]
pub mod server;
pub mod transport;
