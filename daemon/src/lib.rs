//! The jfgui-agentd daemon and its session engine.
//!
//! The engine (`engine` module) is everything protocol and works over any byte stream; the OS
//! layer binds it to sockets, the runtime directory and signals.

mod engine;

pub use engine::{
    AppHandle, AppSummary, Connections, EndpointEvent, Engine, EngineConfig, LinkStatus, Method,
    MethodError, PeerInfo, methods,
};

// OS layer (daemon-os): runtime dir and lock (Unix), listeners, endpoints, process life. Only
// what `main.rs` needs is public: configuration, logging and the server's entry point.
#[cfg(unix)]
mod activation;
pub mod config;
mod endpoints;
#[cfg(unix)]
mod lock;
pub mod logging;
#[cfg(unix)]
mod runtime_dir;
pub mod server;
mod transport;
