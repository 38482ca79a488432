//! Local-socket transport: listeners that only ever hand out streams from our own user
//! (or root on Unix), so nothing above this module sees the platform.
//!
//! | platform | module | listener | identity check |
//! |---|---|---|---|
//! | Linux, macOS, BSD | `unix` | `tokio::net::UnixListener` in the 0700 runtime dir, 0600 sockets (umask before bind); streams registered for read readiness, for write readiness only while a write is blocked | `peer_cred()` uid on every accept, before reading |
//! | Windows | `windows` | `tokio` named pipes `\\.\pipe\jfgui-agent-<SID>-<name>`, first instance flag, remote clients rejected | a DACL for the user SID alone on every instance |

#[cfg(unix)]
mod unix;
#[cfg(windows)]
mod windows;

#[cfg(unix)]
pub use unix::{Listener, Peer, Stream, raise_fd_limit, restrict_umask};
#[cfg(windows)]
pub use windows::{Listener, Peer, PipeSpace, Stream, is_taken};
