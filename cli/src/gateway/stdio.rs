//! The client's side of a gateway: our stdin and stdout. When they are pipes (as MCP clients
//! start their stdio servers) they are read and written on the event loop itself, like a
//! socket; otherwise (a terminal, a file) through tokio's stdio, which hands every read and
//! every write to a blocking thread. Profiled per MCP call, those hand-offs were most of the
//! gateway's system calls (about 12 futex calls of 22 per call) and the larger part of its CPU.
//!
//! A pipe used this way is switched to non-blocking mode (`O_NONBLOCK` on its open file
//! description). The pipe ends an MCP client creates for its server are the server's alone;
//! when a pipe end is shared with other processes they see the flag too, as with any
//! event-driven reader of a pipe.

use tokio::io::{AsyncRead, AsyncWrite};

/// Our stdin, read on the event loop when it is a pipe.
pub fn input() -> Box<dyn AsyncRead + Unpin + Send> {
    pipes::input().unwrap_or_else(|| Box::new(tokio::io::stdin()))
}

/// Our stdout, written on the event loop when it is a pipe.
pub fn output() -> Box<dyn AsyncWrite + Unpin + Send> {
    pipes::output().unwrap_or_else(|| Box::new(tokio::io::stdout()))
}

#[cfg(unix)]
mod pipes {
    use std::os::fd::{AsFd, OwnedFd};

    use tokio::io::{AsyncRead, AsyncWrite};
    use tokio::net::unix::pipe;

    /// Stdin as a pipe, if it is one open for reading (tokio checks before it changes
    /// anything, so on `None` the descriptor is as it was).
    pub fn input() -> Option<Box<dyn AsyncRead + Unpin + Send>> {
        let pipe = pipe::Receiver::from_owned_fd(duplicate(&std::io::stdin())?).ok()?;
        Some(Box::new(pipe))
    }

    /// Stdout as a pipe, if it is one open for writing.
    pub fn output() -> Option<Box<dyn AsyncWrite + Unpin + Send>> {
        let pipe = pipe::Sender::from_owned_fd(duplicate(&std::io::stdout())?).ok()?;
        Some(Box::new(pipe))
    }

    fn duplicate(stdio: &impl AsFd) -> Option<OwnedFd> {
        stdio.as_fd().try_clone_to_owned().ok()
    }
}

/// Elsewhere tokio's stdio is used.
#[cfg(not(unix))]
mod pipes {
    use tokio::io::{AsyncRead, AsyncWrite};

    pub fn input() -> Option<Box<dyn AsyncRead + Unpin + Send>> {
        None
    }

    pub fn output() -> Option<Box<dyn AsyncWrite + Unpin + Send>> {
        None
    }
}
