//! The jfgui-agentd daemon: the OS layer around the session engine (`jfgui-engine`).
//!
//! The engine is everything protocol and works over any byte stream; this crate binds it to
//! the runtime directory, the lock, sockets or named pipes, socket activation, signals, the
//! browser bridge's HTTP side and the log. Only what `main.rs` needs is public: the flags
//! (`config`), logging and the server's entry point. `docs/ARCHITECTURE.md` maps both crates.
//!
//! Without the `server` feature the crate is only `config`: the command line renders the
//! daemon's man page from these flags and so builds none of the OS layer.

pub mod config;

#[cfg(all(unix, feature = "server"))]
mod activation;
#[cfg(feature = "server")]
pub mod bridge;
#[cfg(all(unix, feature = "server"))]
mod lock;
#[cfg(feature = "server")]
pub mod logging;
#[cfg(all(unix, feature = "server"))]
mod runtime_dir;
#[cfg(feature = "server")]
pub mod server;
#[cfg(feature = "server")]
mod transport;
