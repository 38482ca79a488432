//! The jfgui-agentd daemon and its session engine.

// OS layer (daemon-os): runtime dir, lock, listeners, endpoints, process life.
pub mod config;
pub mod endpoints;
pub mod lock;
pub mod logging;
pub mod runtime_dir;
pub mod server;
pub mod transport;
