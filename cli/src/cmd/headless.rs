//! `jfgui-agent headless APP [--protocol json|mcp] [-- APP_ARGS...]`: start APP in its headless
//! agent mode (host channel over its stdin/stdout, `JFGUI_HOST_CHANNEL=stdio`), run the daemon's
//! session engine in this process, and serve the app on our own stdin/stdout. No daemon needed.

use std::ffi::OsString;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use clap::Args;
use jfgui_engine::audit::{Audit, AuditConfig, Transport, location};
use jfgui_engine::{EndpointEvent, EndpointEvents, Engine, EngineConfig, PeerInfo};
use jfgui_proto::locations::ENV_HOST_CHANNEL;
use tokio::process::{Child, Command};

use super::Context;
use crate::exit::{Exit, Failure};
use crate::gateway::{self, Protocol};

/// Shown after `headless --help`.
pub const AFTER_HELP: &str = "\
APP is started directly from the argument array (no shell); APP_ARGS after `--` are passed
unchanged. Its stderr passes through to ours; its stdin/stdout carry the host channel, so
running headless is the user's explicit enable. The protocol on our stdin/stdout follows the
same rules as `stdio` (the engine picks JSON-1 or MCP from the traffic; --protocol sets the
shape of locally written errors). The app is stopped when we exit.
APP not found: exit 3. APP not executable: exit 5. APP exits before registering, or while
serving: exit 4. APP never completes the handshake: exit 7.

Examples:
  echo '{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"agent/info\"}' | jfgui-agent headless jfgui-notepad --protocol json
  jfgui-agent headless jfgui-notepad --protocol mcp -- --text 'hello'";

/// How long an app has to register after it starts: the engine's handshake deadline (5 s)
/// plus a margin for a slow start.
const REGISTER_DEADLINE: Duration = Duration::from_secs(10);

/// How long the app gets to exit by itself after the engine said `bye`, before it is killed.
const EXIT_GRACE: Duration = Duration::from_secs(2);

/// When the channel broke, how long to wait for the app's exit status before concluding that
/// it is alive and broke the handshake.
const EXITING: Duration = Duration::from_millis(500);

/// Arguments of `headless`.
#[derive(Debug, Args)]
pub struct HeadlessArgs {
    /// The app binary: a path, or a name looked up in PATH.
    pub app: OsString,
    /// The protocol the client speaks on stdin/stdout.
    #[arg(long, value_enum, default_value_t = Protocol::Json)]
    pub protocol: Protocol,
    /// Rotate the audit log before it grows beyond this; 4 files are kept (as the daemon's
    /// option: both append to the same log).
    #[arg(long, value_name = "BYTES", env = "JFGUI_AUDIT_MAX_BYTES", default_value_t = jfgui_engine::audit::DEFAULT_MAX_BYTES, value_parser = clap::value_parser!(u64).range(256..))]
    pub audit_max_bytes: u64,
    /// Arguments for APP, after `--`, passed unchanged.
    #[arg(last = true, value_name = "APP_ARGS")]
    pub app_args: Vec<OsString>,
}

/// Runs the app and serves it until our stdin ends, the app exits, or stdout closes.
pub async fn run(args: HeadlessArgs, ctx: Context) -> Result<(), Failure> {
    let shown = args.app.to_string_lossy().into_owned();
    let mut child = Command::new(&args.app)
        .args(&args.app_args)
        .env(ENV_HOST_CHANNEL, "stdio")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| spawn_failure(&shown, &e))?;
    let (Some(app_in), Some(app_out)) = (child.stdin.take(), child.stdout.take()) else {
        return Err(Failure::new(
            Exit::Daemon,
            "spawn_failed",
            format!("cannot reach the stdio of {shown}"),
        ));
    };

    // Calls are audited as the daemon's are, into the same log and with the same rotation, so
    // `jfgui-agent log` shows both.
    let audit = AuditConfig {
        dir: location::default_dir(),
        max_bytes: args.audit_max_bytes,
        ..AuditConfig::default()
    };
    let audit = Some(Audit::start(audit));
    let engine = Engine::new(EngineConfig { audit, ..EngineConfig::default() });
    let mut events = engine.subscribe();
    let app_peer = PeerInfo { pid: child.id(), uid: None, transport: Transport::CliHeadless };
    let app_engine = engine.clone();
    let mut app_task = tokio::spawn(async move {
        app_engine.serve_app(tokio::io::join(app_out, app_in), app_peer).await;
    });

    let registered = tokio::select! {
        slug = wait_up(&mut events) => slug,
        status = child.wait() => Err(exited_early(&shown, status.ok())),
        // The engine dropped the channel: the app exited, or it broke the handshake.
        _ = &mut app_task => match wait_for(&mut child, EXITING).await {
            Some(status) => Err(exited_early(&shown, Some(status))),
            None => Err(Failure::new(
                Exit::Protocol,
                "handshake_failed",
                format!("{shown} did not complete the host-channel handshake on its stdio; is it built with host-sdk's headless mode?"),
            )),
        },
        () = tokio::time::sleep(REGISTER_DEADLINE) => Err(Failure::new(
            Exit::Protocol,
            "handshake_timeout",
            format!("{shown} did not register within {} s; is it built with host-sdk's headless mode?", REGISTER_DEADLINE.as_secs()),
        )),
    };
    let result = match registered {
        Ok(slug) => serve(&engine, &slug, args.protocol, ctx).await,
        Err(failure) => Err(failure),
    };
    let result = match result {
        Err(mut f) if f.reason == "connection_lost" => {
            if let Some(status) = wait_briefly(&mut child).await {
                f.message.push_str(&format!("; {shown} exited ({status})"));
            }
            Err(f)
        }
        other => other,
    };
    stop(&engine, &mut child).await;
    result
}

/// The client of a headless session is whoever started us on its stdio (an MCP client, a
/// script): our parent, where the OS tells.
fn client_pid() -> u32 {
    #[cfg(unix)]
    return std::os::unix::process::parent_id();
    #[cfg(not(unix))]
    return std::process::id();
}

/// Serves our stdio as one client of the endpoint `slug`, through the same gateway as `stdio`.
async fn serve(
    engine: &Engine,
    slug: &str,
    protocol: Protocol,
    ctx: Context,
) -> Result<(), Failure> {
    let (ours, theirs) = tokio::io::duplex(64 * 1024);
    let client_engine = engine.clone();
    let owned_slug = slug.to_string();
    tokio::spawn(async move {
        client_engine
            .serve_client(
                theirs,
                &owned_slug,
                PeerInfo { pid: Some(client_pid()), uid: None, transport: Transport::CliHeadless },
            )
            .await;
    });
    let (read, write) = tokio::io::split(ours);
    gateway::run(read, write, protocol, &format!("app '{slug}'"), ctx.timeout).await
}

/// The slug of the first endpoint that comes up.
async fn wait_up(events: &mut EndpointEvents) -> Result<String, Failure> {
    loop {
        let up = match events.next().await {
            Some(EndpointEvent::Up { slug }) => Some(slug),
            // The subscription starts with the endpoints already up.
            Some(EndpointEvent::Resync { slugs }) => slugs.into_iter().next(),
            Some(EndpointEvent::Down { .. }) => None,
            None => {
                return Err(Failure::new(
                    Exit::Daemon,
                    "engine_stopped",
                    "the session engine stopped before the app registered",
                ));
            }
        };
        if let Some(slug) = up {
            return Ok(slug);
        }
    }
}

/// Ends the app: the engine says `bye` and closes the channel, then the app gets a moment to
/// exit by itself before it is killed; it is always reaped.
async fn stop(engine: &Engine, child: &mut Child) {
    let _ = tokio::time::timeout(Duration::from_secs(6), engine.shutdown()).await;
    if wait_briefly(child).await.is_none() {
        let _ = child.start_kill();
        let _ = child.wait().await;
    }
}

async fn wait_briefly(child: &mut Child) -> Option<ExitStatus> {
    wait_for(child, EXIT_GRACE).await
}

async fn wait_for(child: &mut Child, limit: Duration) -> Option<ExitStatus> {
    tokio::time::timeout(limit, child.wait()).await.ok().and_then(Result::ok)
}

fn exited_early(app: &str, status: Option<ExitStatus>) -> Failure {
    let how = status.map_or_else(|| String::from("closed its stdio"), |s| format!("exited ({s})"));
    Failure::new(Exit::Daemon, "app_exited", format!("{app} {how} before registering"))
}

fn spawn_failure(app: &str, e: &std::io::Error) -> Failure {
    match e.kind() {
        std::io::ErrorKind::NotFound => Failure::new(
            Exit::NotFound,
            "app_not_found",
            format!("cannot start {app}: no such file or command"),
        ),
        std::io::ErrorKind::PermissionDenied => {
            Failure::new(Exit::Refused, "permission_denied", format!("cannot start {app}: {e}"))
        }
        _ => Failure::new(Exit::Usage, "spawn_failed", format!("cannot start {app}: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::super::{Cli, Command};
    use crate::gateway::Protocol;

    #[test]
    fn app_args_pass_unchanged_and_json_is_the_default() {
        let cli = Cli::try_parse_from(["x", "headless", "app", "--", "--protocol", "mcp", "a b"])
            .unwrap();
        let Command::Headless(h) = cli.command else { panic!("not headless") };
        assert_eq!(h.app_args, ["--protocol", "mcp", "a b"]);
        assert_eq!(h.protocol, Protocol::Json);
        let cli = Cli::try_parse_from(["x", "headless", "/bin/app", "--protocol", "mcp"]).unwrap();
        let Command::Headless(h) = cli.command else { panic!("not headless") };
        assert_eq!((h.app.to_str(), h.protocol), (Some("/bin/app"), Protocol::Mcp));
    }
}
