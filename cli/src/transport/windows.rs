//! Windows: the daemon's named pipes `\\.\pipe\jfgui-agent-<user SID>-control` and
//! `-app-SLUG`, named by `jfgui_proto::locations::pipe_name`, the code the daemon creates them
//! with. Only the current user can open them (the daemon's DACL); what a client checks is the
//! other direction: that the pipe's server process runs as our user
//! (`jfgui_proto::locations::check_pipe_server`), since a pipe name is first come, first
//! served.

use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use std::os::windows::io::AsRawHandle;

use jfgui_proto::locations::{Pipe, check_pipe_server, current_user_sid, pipe_name};
use tokio::net::windows::named_pipe::ClientOptions;
use windows_sys::Win32::Foundation::{ERROR_PIPE_BUSY, HANDLE};

use super::{Reader, Writer};
use crate::exit::{Exit, Failure};

/// How long a connect keeps retrying while every instance of a pipe is busy. The daemon
/// creates the next instance right after a client connects, so busy is a brief race between
/// clients, not a state that lasts.
const BUSY_PATIENCE: Duration = Duration::from_secs(2);
/// Pause between attempts on a busy pipe.
const BUSY_RETRY: Duration = Duration::from_millis(20);

/// Where this user's daemon listens: its pipe namespace, keyed by the user's SID.
#[derive(Debug, Clone)]
pub struct Daemon {
    sid: String,
}

impl Daemon {
    /// Looks up the current user's SID.
    pub fn locate() -> Result<Daemon, Failure> {
        current_user_sid().map(|sid| Daemon { sid }).map_err(|e| {
            Failure::new(
                Exit::Daemon,
                "connect_failed",
                format!(
                    "cannot look up the current user's SID, which names the daemon's pipes: {e}"
                ),
            )
        })
    }

    /// The control pipe, `...-control`.
    pub fn control(&self) -> PathBuf {
        PathBuf::from(pipe_name(&self.sid, Pipe::Control))
    }

    /// The all-apps MCP pipe, `...-mcp`.
    pub fn mcp(&self) -> PathBuf {
        PathBuf::from(pipe_name(&self.sid, Pipe::Mcp))
    }

    /// The endpoint pipe of `slug`, `...-app-SLUG`.
    pub fn endpoint(&self, slug: &str) -> PathBuf {
        PathBuf::from(pipe_name(&self.sid, Pipe::App(slug)))
    }
}

/// How to start the daemon, for a "not running" message about the control pipe `control`.
pub fn not_running(control: &Path) -> String {
    format!(
        "jfgui-agentd is not running (no pipe {}); start it with `jfgui-agentd` in another \
         console (packaging\\windows\\install.ps1 starts it at every login)",
        control.display()
    )
}

/// Opens the pipe `path`, retrying for up to [`BUSY_PATIENCE`] while all its instances are
/// busy. A missing pipe is `NotFound`, as a missing socket is on Unix.
pub async fn connect(path: &Path) -> io::Result<(Reader, Writer)> {
    let deadline = Instant::now() + BUSY_PATIENCE;
    loop {
        match ClientOptions::new().open(path) {
            Ok(pipe) => {
                check_pipe_server(pipe.as_raw_handle() as HANDLE, path)?;
                let (read, write) = tokio::io::split(pipe);
                return Ok((Box::new(read), Box::new(write)));
            }
            Err(e) if busy(&e) && Instant::now() < deadline => {
                tokio::time::sleep(BUSY_RETRY).await;
            }
            Err(e) if busy(&e) => {
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!(
                        "every instance of the pipe stayed busy for {} s",
                        BUSY_PATIENCE.as_secs()
                    ),
                ));
            }
            Err(e) => return Err(e),
        }
    }
}

fn busy(e: &io::Error) -> bool {
    e.raw_os_error() == Some(ERROR_PIPE_BUSY as i32)
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::windows::named_pipe::ServerOptions;

    use super::*;

    fn unique_pipe() -> PathBuf {
        static N: AtomicUsize = AtomicUsize::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        PathBuf::from(format!(r"\\.\pipe\jfgui-agent-cli-test-{}-{n}", std::process::id()))
    }

    async fn within<F: std::future::Future>(f: F) -> F::Output {
        tokio::time::timeout(Duration::from_secs(10), f).await.expect("test timed out")
    }

    #[tokio::test]
    async fn a_missing_pipe_is_not_found() {
        let e = within(connect(&unique_pipe())).await.err().expect("no pipe, no connection");
        assert_eq!(e.kind(), io::ErrorKind::NotFound, "{e}");
    }

    #[tokio::test]
    async fn bytes_cross_both_ways() {
        let name = unique_pipe();
        let mut server = ServerOptions::new().first_pipe_instance(true).create(&name).unwrap();
        let (mut read, mut write) = within(connect(&name)).await.unwrap();
        within(server.connect()).await.unwrap();
        write.write_all(b"ping\n").await.unwrap();
        let mut buf = [0u8; 5];
        within(server.read_exact(&mut buf)).await.unwrap();
        assert_eq!(&buf, b"ping\n");
        server.write_all(b"pong\n").await.unwrap();
        within(read.read_exact(&mut buf)).await.unwrap();
        assert_eq!(&buf, b"pong\n");
    }

    #[tokio::test]
    async fn a_busy_pipe_is_retried_until_an_instance_frees_up() {
        let name = unique_pipe();
        let first = ServerOptions::new().first_pipe_instance(true).create(&name).unwrap();
        let _taken = within(connect(&name)).await.unwrap();
        within(first.connect()).await.unwrap();
        // Every instance is taken: the next connect waits, and succeeds once the server
        // creates another instance (as the daemon does after each accept).
        let waiting = tokio::spawn({
            let name = name.clone();
            async move { connect(&name).await.map(|_| ()) }
        });
        tokio::time::sleep(BUSY_RETRY * 5).await;
        assert!(!waiting.is_finished(), "a busy pipe must be waited for");
        let second = ServerOptions::new().create(&name).unwrap();
        within(second.connect()).await.unwrap();
        within(waiting).await.unwrap().unwrap();
    }
}
