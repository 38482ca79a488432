//! Command-line flags of `jfgui-agentd` (clap) and the validated `Config` built from them.
//!
//! Every bound and deadline is a flag with the shipped value as its default, so tests can hit a
//! limit in milliseconds and nobody needs a config file.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Parser, ValueEnum};

/// Process exit statuses, also listed in `--help`.
pub mod exit {
    /// Clean stop (signal, idle exit).
    pub const OK: u8 = 0;
    /// A runtime error after start-up (I/O, runtime dir removed under us, ...).
    pub const RUNTIME: u8 = 1;
    /// Bad flags (clap's own status).
    pub const USAGE: u8 = 2;
    /// The runtime dir, a path inside it or the socket path length was refused.
    pub const RUNTIME_DIR_REFUSED: u8 = 3;
    /// Another daemon of this user holds the lock.
    pub const ALREADY_RUNNING: u8 = 4;
    /// The sockets passed by the service manager (socket activation) were refused.
    pub const ACTIVATION_REFUSED: u8 = 5;
}

const AFTER_HELP: &str = "\
Files: the runtime dir is --runtime-dir, else $JFGUI_RUNTIME_DIR, \
else $XDG_RUNTIME_DIR/jfgui-agent, else /run/user/UID/jfgui-agent when /run/user/UID is a \
directory of ours not writable by others (where clients started without XDG_RUNTIME_DIR, as \
MCP clients start servers, look too), else /tmp/jfgui-agent-UID. It holds agentd.lock, \
agentd.sock (control), host.sock (apps) and apps/SLUG.sock (one per enabled app). The dir is \
created 0700; an existing one must be ours, not a symlink and not group/world-writable \
(group/other read or search bits are removed with a warning). Sockets are 0600. Connections \
from other users are closed before anything is read; root (uid 0) is admitted, as by \
ssh-agent and dbus-daemon. On Windows the daemon uses the named pipes \
\\\\.\\pipe\\jfgui-agent-SID-control, -host and -app-SLUG, open to the current user only; \
--runtime-dir and --dir-check do not apply there.

Durations take a unit: 250ms, 5s, 2m (0 needs none).

Logging goes to stderr only, written by a background thread (see --log-queue-lines); the \
filter comes from $JFGUI_LOG, else $RUST_LOG, else \"info\".

Exit status: 0 stopped cleanly (SIGTERM/SIGINT, idle exit); 1 runtime error (including the \
runtime dir removed under a running daemon); 2 usage; 3 runtime dir or socket path refused; \
4 another daemon of this user is already running; 5 the sockets passed by systemd (socket \
activation: LISTEN_FDS, named host and control) were refused.

Socket activation: started by systemd with LISTEN_PID/LISTEN_FDS/LISTEN_FDNAMES, the daemon \
serves the inherited host.sock and agentd.sock (never unlinking them), tells systemd READY=1, \
and --idle-exit defaults to 30.";

/// Output format of the log lines on stderr.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object per line.
    Json,
}

/// The flags, as clap parses them.
#[derive(Debug, Clone, Parser)]
#[command(
    name = "jfgui-agentd",
    version,
    about = "The per-user jfgui agent daemon: apps register on host.sock, clients reach each \
             enabled app on apps/SLUG.sock (JSON control protocol 1 or MCP).",
    after_help = AFTER_HELP
)]
pub struct Config {
    /// Runtime directory, an absolute path (overrides $JFGUI_RUNTIME_DIR and $XDG_RUNTIME_DIR;
    /// Unix only).
    #[arg(long, value_name = "DIR")]
    pub runtime_dir: Option<PathBuf>,

    /// Exit after SECS with no connected app and no client connection (off by default; 30
    /// when started by socket activation).
    #[arg(long, value_name = "SECS")]
    pub idle_exit: Option<u64>,

    /// Log line format on stderr.
    #[arg(long, value_enum, default_value = "text")]
    pub log_format: LogFormat,

    /// Log lines waiting to be written to stderr, at most. Lines are written by a background
    /// thread, so a stalled stderr (a full pipe, a paused terminal, a busy journald) never
    /// stops the daemon; past this many waiting lines, new ones are dropped and counted
    /// (`logDropped` in `daemon/status`, and a warning in the log once writing resumes).
    #[arg(long, value_name = "N", default_value_t = 8192, value_parser = clap::value_parser!(u64).range(1..))]
    pub log_queue_lines: u64,

    /// Also start the example app (`jfgui-notepad --agent-enable`, found next to this
    /// executable) and stop it when the daemon stops.
    #[arg(long)]
    pub demo: bool,

    /// How often the daemon checks that its runtime dir still exists where inotify is not
    /// available (not Linux); on Linux it is told at once and never wakes up for this. 0 =
    /// never. A removed dir (logout cleanup) makes the daemon exit with status 1. Unix.
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = parse_duration)]
    pub dir_check: Duration,

    /// Maximum client connections (control socket and app endpoints together); more are
    /// answered with an error line and closed.
    #[arg(long, value_name = "N", default_value_t = 1024, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_clients: u64,

    /// Maximum registered apps.
    #[arg(long, value_name = "N", default_value_t = 256, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_apps: u64,

    /// Requests in flight per client connection.
    #[arg(long, value_name = "N", default_value_t = 64, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_in_flight_per_client: u64,

    /// Requests queued per app.
    #[arg(long, value_name = "N", default_value_t = 256, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_queued_per_app: u64,

    /// Size of the task table (finished tasks are evicted oldest first).
    #[arg(long, value_name = "N", default_value_t = 4096, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_tasks: u64,

    /// Threads of the async runtime: 0 runs every connection on the daemon's one thread;
    /// N > 0 a pool of N workers (see docs/ARCHITECTURE.md, fairness, for the measurement).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub worker_threads: u64,

    /// Unfinished tasks per app (its deferred calls beyond this fail `not_executed/busy`).
    #[arg(long, value_name = "N", default_value_t = 256, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_tasks_per_app: u64,

    /// Bytes of task states kept (final results and running tasks' progress and results);
    /// finished tasks are evicted oldest first to stay within it.
    #[arg(long, value_name = "BYTES", default_value_t = 64 * 1024 * 1024, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_task_bytes: u64,

    /// Bytes of buffered partial input (client lines and host-channel frames not yet complete)
    /// for the whole daemon; a connection whose partial message would exceed it is dropped.
    #[arg(long, value_name = "BYTES", default_value_t = 64 * 1024 * 1024, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_partial_bytes: u64,

    /// Bytes the daemon holds for all apps' registrations together (their actions as
    /// `actions/describe` shows them); an app whose registration would exceed it is refused
    /// `registration_too_large`, and the registered apps keep working.
    #[arg(long, value_name = "BYTES", default_value_t = 64 * 1024 * 1024, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_registration_bytes: u64,

    /// A client line or response larger than this many bytes is refused.
    #[arg(long, value_name = "BYTES", default_value_t = 1024 * 1024, value_parser = clap::value_parser!(u64).range(64..))]
    pub max_message_bytes: u64,

    /// Maximum JSON nesting depth.
    #[arg(long, value_name = "N", default_value_t = 32, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_depth: u64,

    /// Maximum JSON values in one message.
    #[arg(long, value_name = "N", default_value_t = 16384, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_values: u64,

    /// Maximum members of one JSON array or object.
    #[arg(long, value_name = "N", default_value_t = 4096, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_members: u64,

    /// Maximum decoded bytes of one JSON string.
    #[arg(long, value_name = "BYTES", default_value_t = 256 * 1024, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_string_bytes: u64,

    /// Maximum host-channel frame (1 MiB + 64 KiB envelope).
    #[arg(long, value_name = "BYTES", default_value_t = 1024 * 1024 + 64 * 1024, value_parser = clap::value_parser!(u64).range(64..))]
    pub max_frame: u64,

    /// An app must complete its hello/registration within this time.
    #[arg(long, value_name = "DURATION", default_value = "5s", value_parser = parse_duration)]
    pub handshake_deadline: Duration,

    /// An app must answer a request within this time (deferred tasks are not bound by it).
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = parse_duration)]
    pub request_deadline: Duration,

    /// A line or frame must complete within this, counted from its first byte, or the
    /// connection is dropped (a trickle of bytes does not extend it).
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = parse_duration)]
    pub partial_idle: Duration,

    /// An installed app the daemon starts for an agent must register with agent access on
    /// within this, or it is stopped and the start fails (activation_failed).
    #[arg(long, value_name = "DURATION", default_value = "15s", value_parser = parse_duration)]
    pub activation_deadline: Duration,

    /// After a failed start of an installed app, the next waits this long, doubling with each
    /// failure in a row up to 5 minutes; calls in between get activation_failed at once.
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = parse_duration)]
    pub activation_backoff: Duration,

    /// On shutdown, wait this long for in-flight replies before failing them.
    #[arg(long, value_name = "DURATION", default_value = "5s", value_parser = parse_duration)]
    pub shutdown_drain: Duration,

    /// Browser bridge: requests queued for the tab or delivered and unanswered; one more is
    /// refused `not_executed/busy`.
    #[arg(long, value_name = "N", default_value_t = 64, value_parser = clap::value_parser!(u64).range(1..))]
    pub bridge_queue: u64,

    /// Browser bridge: largest HTTP request body and largest request delivered to the tab.
    #[arg(long, value_name = "BYTES", default_value_t = 1024 * 1024, value_parser = clap::value_parser!(u64).range(1024..))]
    pub bridge_max_message_bytes: u64,

    /// Browser bridge: concurrent HTTP connections.
    #[arg(long, value_name = "N", default_value_t = 16, value_parser = clap::value_parser!(u64).range(1..))]
    pub bridge_max_connections: u64,

    /// Browser bridge: how long /poll waits for something to deliver.
    #[arg(long, value_name = "DURATION", default_value = "20s", value_parser = parse_duration)]
    pub bridge_poll_wait: Duration,

    /// Browser bridge: how long /rpc waits for its response.
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = parse_duration)]
    pub bridge_rpc_deadline: Duration,

    /// Browser bridge: a tab that neither polls nor answers this long is detached.
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = parse_duration)]
    pub bridge_expiry: Duration,

    /// Browser bridge: a request head (or an idle keep-alive connection) must complete within
    /// this.
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = parse_duration)]
    pub bridge_header_deadline: Duration,

    /// Browser bridge: a request body must arrive within this.
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = parse_duration)]
    pub bridge_body_deadline: Duration,

    /// Audit log directory [default: $XDG_STATE_HOME/jfgui-agent, else
    /// ~/.local/state/jfgui-agent; macOS ~/Library/Logs/jfgui-agent; Windows
    /// %LOCALAPPDATA%\\jfgui-agent]. Created 0700; the log audit.jsonl is 0600.
    #[arg(long, value_name = "DIR", env = "JFGUI_AUDIT_DIR", value_parser = absolute_path)]
    pub audit_dir: Option<PathBuf>,

    /// Rotate the audit log before it grows beyond this; 4 files are kept.
    #[arg(long, value_name = "BYTES", env = "JFGUI_AUDIT_MAX_BYTES", default_value_t = jfgui_engine::audit::DEFAULT_MAX_BYTES, value_parser = clap::value_parser!(u64).range(256..))]
    pub audit_max_bytes: u64,

    /// Audit records waiting for the disk; beyond this they are dropped and counted
    /// (daemon/status auditDropped), never delaying a call.
    #[arg(long, value_name = "N", default_value_t = jfgui_engine::audit::DEFAULT_QUEUE as u64, value_parser = clap::value_parser!(u64).range(1..))]
    pub audit_queue: u64,

    /// Also record calls that only read (read actions, state/inspect, resources/read,
    /// view/render) in the audit log.
    #[arg(long)]
    pub audit_reads: bool,

    /// Keep each recorded call's input in the audit log (its JSON cut at 4 KiB); by default
    /// only its size and SHA-256 are kept.
    #[arg(long)]
    pub audit_inputs: bool,

    /// How long a call that waits for the user's yes (an action the app marks as needing
    /// confirmation) may wait before its prompt is withdrawn and the call fails
    /// confirmation_timeout.
    #[arg(long, value_name = "DURATION", default_value = "120s", value_parser = parse_duration)]
    pub confirm_timeout: Duration,

    /// Browser bridge: /rpc clients (distinct session values) per attached tab.
    #[arg(long, value_name = "N", default_value_t = 16, value_parser = clap::value_parser!(u64).range(1..))]
    pub bridge_max_sessions: u64,
}

impl Config {
    /// The browser bridge's bounds.
    #[cfg(feature = "server")]
    pub fn bridge_limits(&self) -> crate::bridge::BridgeLimits {
        crate::bridge::BridgeLimits {
            queue: to_usize(self.bridge_queue),
            max_message_bytes: to_usize(self.bridge_max_message_bytes),
            max_connections: to_usize(self.bridge_max_connections),
            poll_wait: self.bridge_poll_wait,
            rpc_deadline: self.bridge_rpc_deadline,
            expiry: self.bridge_expiry,
            header_deadline: self.bridge_header_deadline,
            body_deadline: self.bridge_body_deadline,
            max_sessions: to_usize(self.bridge_max_sessions),
        }
    }

    /// The audit log's settings.
    pub fn audit(&self) -> jfgui_engine::audit::AuditConfig {
        jfgui_engine::audit::AuditConfig {
            dir: self.state_dir(),
            max_bytes: self.audit_max_bytes,
            queue: to_usize(self.audit_queue),
            reads: self.audit_reads,
            inputs: self.audit_inputs,
        }
    }

    /// The state directory (where the audit log and `grants.json` are kept).
    pub fn state_dir(&self) -> Option<PathBuf> {
        self.audit_dir.clone().or_else(jfgui_engine::audit::location::default_dir)
    }

    /// The JSON bounds of client messages.
    pub fn json_limits(&self) -> jfgui_proto::Limits {
        jfgui_proto::Limits {
            max_bytes: to_usize(self.max_message_bytes),
            max_depth: to_usize(self.max_depth),
            max_values: to_usize(self.max_values),
            max_members: to_usize(self.max_members),
            max_string_bytes: to_usize(self.max_string_bytes),
        }
    }
}

/// Saturates: a bound above the address space is as good as unbounded.
pub fn to_usize(n: u64) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}

/// An absolute path (a relative one would depend on the directory the daemon started in).
fn absolute_path(text: &str) -> Result<PathBuf, String> {
    let path = PathBuf::from(text);
    if path.is_absolute() { Ok(path) } else { Err(format!("{text:?} must be an absolute path")) }
}

/// Parses `250ms`, `5s`, `2m` or `0`; a unit is required otherwise, so `5` is never misread.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let split = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
    let (digits, unit) = text.split_at(split);
    let n: u64 = digits.parse().map_err(|_| {
        format!("{text:?} is not a duration: expected a number and a unit, e.g. 250ms, 5s, 2m")
    })?;
    match unit {
        "ms" => Ok(Duration::from_millis(n)),
        "s" => Ok(Duration::from_secs(n)),
        "m" => n
            .checked_mul(60)
            .map(Duration::from_secs)
            .ok_or_else(|| format!("{text:?} is too large")),
        "" if n == 0 => Ok(Duration::ZERO),
        "" => Err(format!("{text:?} needs a unit: ms, s or m (e.g. {n}s)")),
        other => Err(format!("{text:?} has an unknown unit {other:?}: use ms, s or m")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_duration("5s"), Ok(Duration::from_secs(5)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert!(parse_duration("5").unwrap_err().contains("needs a unit"));
        assert_eq!(parse_duration("0"), Ok(Duration::ZERO));
        assert!(parse_duration("5h").unwrap_err().contains("unknown unit"));
        assert!(parse_duration("ms").is_err());
        assert!(parse_duration("-1s").is_err());
    }

    #[test]
    fn defaults_are_the_spec_values() {
        let c = Config::try_parse_from(["jfgui-agentd"]).unwrap();
        assert_eq!(c.max_clients, 1024);
        assert_eq!(c.max_apps, 256);
        assert_eq!(c.max_in_flight_per_client, 64);
        assert_eq!(c.max_queued_per_app, 256);
        assert_eq!(c.max_tasks, 4096);
        assert_eq!(c.max_frame, 1024 * 1024 + 64 * 1024);
        assert_eq!(c.handshake_deadline, Duration::from_secs(5));
        assert_eq!(c.request_deadline, Duration::from_secs(30));
        assert_eq!(c.partial_idle, Duration::from_secs(30));
        assert_eq!(c.shutdown_drain, Duration::from_secs(5));
        assert_eq!(c.json_limits(), jfgui_proto::Limits::DEFAULT);
        #[cfg(feature = "server")]
        assert_eq!(c.bridge_limits(), crate::bridge::BridgeLimits::default());
        assert_eq!(c.idle_exit, None);
        assert!(!c.demo);
        assert_eq!(c.log_format, LogFormat::Text);
        assert_eq!(c.log_queue_lines, 8192);
    }

    #[test]
    fn flags_parse_and_bad_values_are_usage_errors() {
        let c = Config::try_parse_from([
            "jfgui-agentd",
            "--handshake-deadline",
            "50ms",
            "--idle-exit",
            "3",
            "--log-format",
            "json",
        ])
        .unwrap();
        assert_eq!(c.handshake_deadline, Duration::from_millis(50));
        assert_eq!(c.idle_exit, Some(3));
        assert_eq!(c.log_format, LogFormat::Json);
        let e = Config::try_parse_from(["jfgui-agentd", "--max-clients", "0"]).unwrap_err();
        assert_eq!(e.exit_code(), i32::from(exit::USAGE));
    }

    #[test]
    fn help_is_consistent() {
        Config::command().debug_assert();
    }
}
