//! The one place that knows how a socket path is reached: Unix domain sockets on Unix. Other
//! platforms (Windows named pipes, ARCHITECTURE "Locations") are not wired yet: connecting
//! there fails with `Unsupported`, reported as "transport missing" (exit 4), as the daemon does.

use std::io;
use std::path::Path;

use tokio::io::{AsyncRead, AsyncWrite};

/// The reading half of a connection.
pub type Reader = Box<dyn AsyncRead + Send + Unpin>;
/// The writing half of a connection (`shutdown` half-closes it).
pub type Writer = Box<dyn AsyncWrite + Send + Unpin>;

/// Connects to the socket at `path`.
#[cfg(unix)]
pub async fn connect(path: &Path) -> io::Result<(Reader, Writer)> {
    let (read, write) = tokio::net::UnixStream::connect(path).await?.into_split();
    Ok((Box::new(read), Box::new(write)))
}

/// Connects to the socket at `path`.
#[cfg(not(unix))]
pub async fn connect(path: &Path) -> io::Result<(Reader, Writer)> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        format!("no transport to {} on this platform yet (Unix sockets only)", path.display()),
    ))
}
