//! Local-socket transport: listeners that only ever hand out streams from our own user
//! (or root), so nothing above this module sees the platform.
//!
//! | platform | module | listener | identity check |
//! |---|---|---|---|
//! | Linux, macOS, BSD | `unix` | `tokio::net::UnixListener` in the 0700 runtime dir, 0600 sockets (umask 077 before bind) | `peer_cred()` uid on every accept, before reading |
//! | Windows | `windows` | named pipes `\\.\pipe\jfgui-agent-<SID>-…`, first instance flag, remote clients rejected | DACL `D:P(A;;GA;;;<user SID>)` on every instance; client pid for logs |
//!
//! On Windows the pipes are served by `pipe_server` (no runtime dir or lock there).

#[cfg(unix)]
mod unix;
#[cfg(windows)]
pub mod windows;

#[cfg(unix)]
pub use unix::{Listener, Peer, Stream, raise_fd_limit, restrict_umask};
