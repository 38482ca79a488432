//! Unix: the daemon's sockets live in the runtime dir (`agentd.sock`, `apps/SLUG.sock`),
//! resolved by `jfgui_proto::locations` exactly as the daemon resolves it, and trusted only
//! after the client-side checks of the same module: the directories pass the daemon's
//! own rule before connecting, and the listener runs as us (or root) before anything is sent.

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

    /// The all-apps MCP socket, `mcp.sock`.
    pub fn mcp(&self) -> PathBuf {
        self.0.mcp_socket()
    }

    /// The endpoint socket of `slug`, `apps/SLUG.sock`.
    pub fn endpoint(&self, slug: &str) -> PathBuf {
        self.0.endpoint(slug)
    }
}

/// Connects to the socket at `path` after checking its directories, and checks the listener's
/// uid before returning the connection (so nothing can be written to a squatter). A refusal is
/// an error of kind `PermissionDenied` carrying a `jfgui_proto::locations::Refusal`.
pub async fn connect(path: &Path) -> io::Result<(Reader, Writer)> {
    locations::check_socket_dirs(path)?;
    let stream = tokio::net::UnixStream::connect(path).await?;
    locations::check_peer(std::os::fd::AsFd::as_fd(&stream), path)?;
    let (read, write) = stream.into_split();
    Ok((Box::new(read), Box::new(write)))
}

/// What to say when nothing listens on the control socket `control`: the dir looked in, why
/// that dir, the setting that points jfgui-agent elsewhere (a daemon started with another
/// environment may listen in another dir), and a way to start the daemon that makes it listen
/// exactly there (a plain `jfgui-agentd &` from another environment could pick another dir).
/// `list` and the gateway of `jfgui-agent mcp` say it in these words.
pub fn not_running(control: &Path) -> String {
    let dir = control.parent().unwrap_or(control);
    let why = locations::runtime_dir()
        .ok()
        .filter(|rt| rt.control_socket() == control)
        .map(|rt| match rt.source {
            locations::Source::Explicit => format!(" (runtime dir chosen {})", rt.source),
            other => format!(
                " (runtime dir chosen {other}; {} points jfgui-agent elsewhere)",
                locations::ENV_RUNTIME_DIR
            ),
        })
        .unwrap_or_default();
    // The packaged user units run the daemon in systemd's runtime dir (`%t/jfgui-agent`).
    let systemd = dir == locations::run_user_runtime_dir();
    let unit = if systemd { "`systemctl --user start jfgui-agentd` or " } else { "" };
    format!(
        "jfgui-agentd is not running: nothing listens in {}{why}; start it with {unit}`jfgui-agentd --runtime-dir {} &`",
        dir.display(),
        dir.display()
    )
}
