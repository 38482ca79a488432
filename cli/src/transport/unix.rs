//! Unix: the daemon's sockets live in the runtime dir (`agentd.sock`, `apps/SLUG.sock`),
//! resolved by `jfgui_proto::locations` exactly as the daemon resolves it.

use std::io;
use std::path::{Path, PathBuf};

use jfgui_proto::locations::{self, RuntimeDir};

use super::{Reader, Writer};
use crate::exit::Failure;

/// Where this user's daemon listens.
#[derive(Debug, Clone)]
pub struct Daemon(RuntimeDir);

impl Daemon {
    /// The runtime dir, or a usage error when the environment names an unusable one.
    pub fn locate() -> Result<Daemon, Failure> {
        locations::runtime_dir()
            .map(Daemon)
            .map_err(|e| Failure::usage("invalid_runtime_dir", e.to_string()))
    }

    /// The control socket, `agentd.sock`.
    pub fn control(&self) -> PathBuf {
        self.0.control_socket()
    }

    /// The endpoint socket of `slug`, `apps/SLUG.sock`.
    pub fn endpoint(&self, slug: &str) -> PathBuf {
        self.0.endpoint(slug)
    }
}

/// Connects to the socket at `path`.
pub async fn connect(path: &Path) -> io::Result<(Reader, Writer)> {
    let (read, write) = tokio::net::UnixStream::connect(path).await?.into_split();
    Ok((Box::new(read), Box::new(write)))
}
