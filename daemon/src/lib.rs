// The crate docs are README.md (also the crates.io page): the daemon, how to install it, and
// what its library holds.
#![doc = include_str!("../README.md")]

pub mod audit;
mod backlog;
mod engine;

pub use engine::{
    AppSummary, Connections, ControlError, ControlMethods, EndpointEvent, EndpointEvents,
    EndpointNaming, Engine, EngineConfig, OfflineMcp, PeerInfo, drop_non_mcp_error_id,
    is_mcp_request_id, mcp_error_line,
};

// OS layer (daemon-os): runtime dir and lock (Unix), listeners, endpoints, process life. Only
// what `main.rs` needs is public: configuration, logging and the server's entry point.
#[cfg(unix)]
mod activation;
pub mod bridge;
pub mod config;
mod endpoints;
#[cfg(unix)]
mod lock;
pub mod logging;
#[cfg(unix)]
mod runtime_dir;
pub mod server;
mod transport;
