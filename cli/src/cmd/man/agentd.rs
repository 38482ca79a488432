//! jfgui-agentd(1): the daemon's page, from the clap definition the daemon itself parses
//! (`jfgui_daemon::config::Config`), with its environment, files and exit statuses.

use std::io::{self, Write};

use clap::CommandFactory;
use jfgui_daemon::config::{Config, exit};
use roff::Roff;

use super::{definitions, head, see_also};

const ENVIRONMENT: &[(&str, &str)] = &[
    (
        "JFGUI_RUNTIME_DIR",
        "The runtime directory when --runtime-dir is not given (an absolute path).",
    ),
    (
        "XDG_RUNTIME_DIR",
        "Without either of the above the runtime directory is $XDG_RUNTIME_DIR/jfgui-agent, \
         else a per-user fallback directory; the daemon logs the one it uses.",
    ),
    (
        "JFGUI_AUDIT_DIR, JFGUI_AUDIT_MAX_BYTES",
        "The audit log directory and rotation size when --audit-dir and --audit-max-bytes are \
         not given.",
    ),
    (
        "XDG_STATE_HOME",
        "Without JFGUI_AUDIT_DIR the audit log is in $XDG_STATE_HOME/jfgui-agent, else \
         ~/.local/state/jfgui-agent (macOS ~/Library/Logs/jfgui-agent, Windows \
         %LOCALAPPDATA%\\jfgui-agent).",
    ),
    ("JFGUI_LOG", "The log filter (tracing's EnvFilter syntax, e.g. debug or jfgui_engine=trace)."),
    ("RUST_LOG", "The log filter when JFGUI_LOG is not set; without either, info."),
    (
        "LISTEN_PID, LISTEN_FDS, LISTEN_FDNAMES",
        "Socket activation (systemd): the inherited sockets named host and control are served \
         instead of binding new ones, and --idle-exit defaults to 30.",
    ),
    ("NOTIFY_SOCKET", "Where READY=1 and STOPPING=1 are sent (systemd Type=notify)."),
];

const FILES: &[(&str, &str)] = &[
    ("RUNTIME_DIR/agentd.lock", "Held while the daemon runs: one daemon per user."),
    ("RUNTIME_DIR/agentd.sock", "The control socket (apps/list, daemon/status)."),
    ("RUNTIME_DIR/host.sock", "Where apps register (the host channel)."),
    ("RUNTIME_DIR/apps/SLUG.sock", "One endpoint per enabled app, for clients."),
    (
        "STATE_DIR/jfgui-agent/audit.jsonl",
        "The audit log (0600 in a 0700 dir): one JSON line per call that could change an app; \
         rotated at --audit-max-bytes into audit.jsonl.1 to .3.",
    ),
];

/// Writes the page.
pub fn write(w: &mut dyn Write) -> io::Result<()> {
    let mut cmd = Config::command();
    cmd.build();
    // The daemon's help text after its flags (files, durations, logging, socket activation)
    // is its description; its one-line `about` is the NAME line.
    let description = cmd.get_after_help().map(ToString::to_string).unwrap_or_default();
    head(&cmd, &description, w)?;
    let mut roff = Roff::new();
    definitions(&mut roff, "ENVIRONMENT", ENVIRONMENT);
    definitions(&mut roff, "FILES", FILES);
    let statuses = [
        (exit::OK, "Stopped cleanly: SIGTERM or SIGINT, or the idle exit."),
        (exit::RUNTIME, "A runtime error, including the runtime directory removed under it."),
        (exit::USAGE, "Bad flags."),
        (exit::RUNTIME_DIR_REFUSED, "The runtime directory or a socket path was refused."),
        (exit::ALREADY_RUNNING, "Another daemon of this user is already running."),
        (exit::ACTIVATION_REFUSED, "The sockets passed by socket activation were refused."),
    ];
    let statuses: Vec<(String, &str)> =
        statuses.iter().map(|(code, text)| (code.to_string(), *text)).collect();
    let statuses: Vec<(&str, &str)> = statuses.iter().map(|(c, t)| (c.as_str(), *t)).collect();
    definitions(&mut roff, "EXIT STATUS", &statuses);
    see_also(&mut roff, "jfgui-agent");
    roff.to_writer(w)?;
    clap_mangen::Man::new(cmd).render_version_section(w)
}
