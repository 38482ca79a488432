//! `jfgui-agent browser-bridge --origin URL [--port N] [--token-file F]`: asks the daemon to open
//! the browser bridge (HTTP on 127.0.0.1 for one web app) and holds it open until interrupted. The daemon closes the
//! port the moment this command's control connection ends, however it ends.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::Args;
use jfgui_proto::{Map, Value};

use super::{Context, daemon};
use crate::client::{Client, Peer};
use crate::exit::{Exit, Failure};

/// Shown after `browser-bridge --help`.
pub const AFTER_HELP: &str = "\
Prints {\"url\", \"token\", \"origin\"} as one JSON line on stderr (never stdout), then waits.
Ctrl-C (or SIGTERM) closes the bridge: there is no TCP listener while this command is not
running. Give the page the URL and the token; give CLI clients the token through
--token-file or JFGUI_BRIDGE_TOKEN rather than --token (argv is visible to other users).

Example:
  jfgui-agent browser-bridge --origin http://127.0.0.1:8765 --token-file ~/.cache/jfgui-bridge.token";

/// Arguments of `browser-bridge`.
#[derive(Debug, Args)]
pub struct BrowserBridgeArgs {
    /// The web page's exact origin (scheme://host[:port]); only it may attach.
    #[arg(long, value_name = "URL")]
    pub origin: String,
    /// The port on 127.0.0.1 (default: a free port).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub port: u16,
    /// Also write the token to this file (mode 0600).
    #[arg(long, value_name = "FILE")]
    pub token_file: Option<PathBuf>,
}

/// Opens the bridge, reports it, and holds it open.
pub async fn run(args: BrowserBridgeArgs, ctx: Context) -> Result<(), Failure> {
    let daemon = daemon()?;
    let mut control = Client::connect(daemon.control(), Peer::Control, ctx.timeout).await?;
    let mut params = Map::new();
    params.insert("origin", args.origin.as_str());
    if args.port != 0 {
        params.insert("port", u64::from(args.port));
    }
    let opened = control.request("bridge/open", params).await?;
    let token = opened.get("token").and_then(Value::as_str).unwrap_or_default();
    if let Some(path) = &args.token_file {
        write_token(path, token)?;
    }
    let line = jfgui_proto::encode(&Value::Object(opened.clone()), &jfgui_proto::Limits::DEFAULT)
        .unwrap_or_default();
    let mut stderr = std::io::stderr().lock();
    let _ = stderr.write_all(&line);
    let _ = writeln!(stderr, "\njfgui-agent: browser bridge open; Ctrl-C closes it");
    drop(stderr);
    tokio::select! {
        () = interrupted() => Ok(()),
        () = control.closed() => Err(Failure::new(
            Exit::Daemon,
            "connection_lost",
            "the daemon closed the connection; the bridge is gone",
        )),
    }
}

/// Writes the token to `path`, readable by us only.
fn write_token(path: &Path, token: &str) -> Result<(), Failure> {
    let failed = |e: std::io::Error| {
        Failure::usage("token_file", format!("cannot write --token-file {}: {e}", path.display()))
    };
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(path).map_err(failed)?;
    // An existing file keeps its mode on open: tighten it before the token goes in.
    #[cfg(unix)]
    file.set_permissions(std::os::unix::fs::PermissionsExt::from_mode(0o600)).map_err(failed)?;
    file.write_all(token.as_bytes()).and_then(|()| file.write_all(b"\n")).map_err(failed)
}

/// Ctrl-C, or SIGTERM on Unix.
async fn interrupted() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}
