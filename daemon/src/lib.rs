// The crate docs are README.md (also the crates.io page): the daemon, how to install it, and
// what its library holds.
#![doc = include_str!("../README.md")]

#[cfg(feature = "server")]
mod agents;
#[cfg(all(unix, feature = "server"))]
mod app_activation;
pub mod config;

#[cfg(feature = "server")]
pub mod bridge;
#[cfg(all(unix, feature = "server"))]
mod grants_file;
#[cfg(all(unix, feature = "server"))]
mod lock;
#[cfg(feature = "server")]
pub mod logging;
#[cfg(all(unix, feature = "server"))]
mod runtime_dir;
#[cfg(feature = "server")]
pub mod server;
#[cfg(all(unix, feature = "server"))]
mod socket_activation;
#[cfg(feature = "server")]
mod transport;
