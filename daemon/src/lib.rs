//! The jfgui-agentd daemon and its session engine.
//!
//! The engine (`engine` module) is everything protocol and works over any byte stream; the OS
//! layer binds it to sockets, the runtime directory and signals.

mod engine;

pub use engine::{
    AppHandle, AppSummary, Connections, EndpointEvent, Engine, EngineConfig, LinkStatus, Method,
    MethodError, PeerInfo, methods,
};

// OS layer (daemon-os): runtime dir and lock (Unix), listeners, endpoints, process life.
pub mod config;
pub mod endpoints;
#[cfg(unix)]
pub mod lock;
pub mod logging;
#[cfg(unix)]
pub mod runtime_dir;
pub mod server;
pub mod transport;
