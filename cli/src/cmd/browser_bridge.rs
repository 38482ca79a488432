//! `jfgui-agent browser-bridge --origin URL [--port N] [--token-file F] [--info-file F]`: asks
//! the daemon to open the browser bridge (HTTP on 127.0.0.1 for one web app) and holds it open until interrupted. The
//! daemon closes the port the moment this command's control connection ends, however it ends;
//! when the daemon goes away (a restart), this command waits for it and opens the bridge again
//! on the same port with the same token, so the page and the CLI clients carry on unchanged.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::Args;
use jfgui_proto::{Limits, Map, Value};

use super::{Context, daemon};
use crate::client::{Client, Peer};
use crate::exit::{Exit, Failure};

/// Shown after `browser-bridge --help`.
pub const AFTER_HELP: &str = "\
Prints {\"url\", \"token\", \"origin\"} as one JSON line on stderr (never stdout), then waits;
--info-file writes the same line to a file (mode 0600, replaced atomically), for scripts.
Ctrl-C (or SIGTERM) closes the bridge: there is no TCP listener while this command is not
running. If the daemon stops or restarts, the command stays and opens the bridge again, on
the same URL with the same token, as soon as a daemon answers; the page reconnects by itself.
Give the page the URL and the token; give CLI clients the token through --token-file or
JFGUI_BRIDGE_TOKEN rather than --token (argv is visible to other users).

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
    /// Also write the {"url", "token", "origin"} line to this file (mode 0600).
    #[arg(long, value_name = "FILE")]
    pub info_file: Option<PathBuf>,
}

/// First wait before asking a vanished daemon again; doubled per attempt up to [`MAX_RETRY`].
const FIRST_RETRY: Duration = Duration::from_millis(100);
/// Longest wait between two attempts (a restarted daemon is found within this).
const MAX_RETRY: Duration = Duration::from_secs(2);

/// Opens the bridge, reports it, and holds it open, across daemon restarts.
pub async fn run(args: BrowserBridgeArgs, ctx: Context) -> Result<(), Failure> {
    let mut params = Map::new();
    params.insert("origin", args.origin.as_str());
    if args.port != 0 {
        params.insert("port", u64::from(args.port));
    }
    let (mut control, opened) = open(&params, ctx).await?;
    let (Some(url), Some(token)) =
        (opened.get("url").and_then(Value::as_str), opened.get("token").and_then(Value::as_str))
    else {
        return Err(Failure::new(
            Exit::Protocol,
            "malformed_response",
            "the daemon's bridge/open answer has no url or token",
        ));
    };
    let line = jfgui_proto::encode(&Value::Object(opened.clone()), &Limits::DEFAULT)
        .map_err(|e| Failure::new(Exit::Protocol, "malformed_response", e.to_string()))?;
    if let Some(path) = &args.token_file {
        write_private(path, token.as_bytes(), "--token-file", "token_file")?;
    }
    if let Some(path) = &args.info_file {
        write_private(path, &line, "--info-file", "info_file")?;
    }
    let mut stderr = std::io::stderr().lock();
    let _ = stderr.write_all(&line);
    let _ = writeln!(stderr, "\njfgui-agent: browser bridge open; Ctrl-C closes it");
    drop(stderr);
    // Every later opening asks for exactly this URL and token.
    let port = url.rsplit(':').next().and_then(|p| p.parse::<u64>().ok()).unwrap_or(0);
    params.insert("port", port);
    params.insert("token", token);
    // One wait for the signals over the whole run (its handlers are installed when the first
    // `select!` polls it), so none falls between two waits.
    let interrupt = interrupted();
    tokio::pin!(interrupt);
    loop {
        tokio::select! {
            () = &mut interrupt => return Ok(()),
            () = control.closed() => {}
        }
        eprintln!(
            "jfgui-agent: lost jfgui-agentd; the bridge at {url} is down until a daemon answers again"
        );
        control = tokio::select! {
            () = &mut interrupt => return Ok(()),
            reopened = reopen(&params, ctx) => reopened?,
        };
        eprintln!("jfgui-agent: browser bridge open again at {url} with the same token");
    }
}

/// One `bridge/open` on a new control connection, which then holds the bridge.
async fn open(params: &Map, ctx: Context) -> Result<(Client, Map), Failure> {
    let mut control = Client::connect(daemon()?.control(), Peer::Control, ctx.timeout).await?;
    let opened = control.request("bridge/open", params.clone()).await?;
    Ok((control, opened))
}

/// [`open`] until a daemon answers, with backoff; a failure a later attempt cannot mend (the
/// daemon refuses the parameters, the peer check fails) ends the command.
async fn reopen(params: &Map, ctx: Context) -> Result<Client, Failure> {
    let mut retry = FIRST_RETRY;
    let mut told = None;
    loop {
        tokio::time::sleep(retry).await;
        match open(params, ctx).await {
            Ok((control, _)) => return Ok(control),
            Err(failure) if transient(&failure) => {
                if told.as_ref() != Some(&failure.reason) {
                    eprintln!("jfgui-agent: {}; trying again", failure.message);
                    told = Some(failure.reason);
                }
                retry = (retry * 2).min(MAX_RETRY);
            }
            Err(failure) => return Err(failure),
        }
    }
}

/// Whether a later attempt may succeed: no daemon (yet), one too busy to answer, or the port
/// still held by something else.
fn transient(failure: &Failure) -> bool {
    matches!(failure.exit, Exit::Daemon | Exit::OutcomeUnknown) || failure.reason == "bind_failed"
}

/// Writes `contents` and a newline to `path`, readable by us only: into a new file beside it,
/// renamed over `path`, so a reader sees the old content or the new, never a part.
/// `flag` names the option in the message; `reason` is the failure's.
fn write_private(path: &Path, contents: &[u8], flag: &str, reason: &str) -> Result<(), Failure> {
    let failed = |e: std::io::Error| {
        Failure::usage(reason, format!("cannot write {flag} {}: {e}", path.display()))
    };
    let name = path.file_name().ok_or_else(|| {
        failed(std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a file name"))
    })?;
    let mut temporary = name.to_os_string();
    temporary.push(format!(".{}.tmp", std::process::id()));
    let temporary = path.with_file_name(temporary);
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let written = options.open(&temporary).and_then(|mut file| {
        file.write_all(contents)?;
        file.write_all(b"\n")?;
        file.sync_all()
    });
    match written.and_then(|()| std::fs::rename(&temporary, path)) {
        Ok(()) => Ok(()),
        Err(e) => {
            let _ = std::fs::remove_file(&temporary);
            Err(failed(e))
        }
    }
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
