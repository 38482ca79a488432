//! The one place that knows where the daemon listens and how a connection to it is opened:
//! Unix domain sockets in the runtime dir on Unix, the user's named pipes on Windows
//! (ARCHITECTURE "Locations"). Everything else in the CLI sees a [`Daemon`] that names the
//! control and endpoint addresses, and [`connect`] that opens one of them after the
//! client-side trust checks (the daemon's directory rule and the listener's uid on
//! Unix, the pipe server's owner on Windows), so no byte reaches a peer that is not our daemon.

#[cfg(unix)]
mod unix;
#[cfg(windows)]
mod windows;

use tokio::io::{AsyncRead, AsyncWrite};

#[cfg(unix)]
pub use unix::{Daemon, connect, not_running};
#[cfg(windows)]
pub use windows::{Daemon, connect, not_running};

/// The reading half of a connection.
pub type Reader = Box<dyn AsyncRead + Send + Unpin>;
/// The writing half of a connection (`shutdown` half-closes it where the transport can).
pub type Writer = Box<dyn AsyncWrite + Send + Unpin>;
