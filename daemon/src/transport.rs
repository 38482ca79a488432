//! Local-socket transport: listeners that only ever hand out streams from our own user
//! (or root), so nothing above this module sees the platform.
//!
//! | platform | module | listener | identity check |
//! |---|---|---|---|
//! | Linux, macOS, BSD | `unix` | `tokio::net::UnixListener` in the 0700 runtime dir, 0600 sockets (umask 077 before bind) | `peer_cred()` uid on every accept, before reading |
//!
//! Windows (named pipes with a user-SID DACL, DEPENDENCIES.md §1) is not implemented yet: the
//! crate's OS layer is `cfg(unix)`.

mod unix;

pub use unix::{Listener, Peer, Stream, raise_fd_limit, restrict_umask};
