//! jfgui-agent(1): the global options from clap_mangen, then every subcommand on this page
//! (synopsis, description, arguments, examples), the environment, files and exit codes.

use std::io::{self, Write};

use clap::CommandFactory;
use roff::{Roff, bold, roman};

use super::super::Cli;
use super::{arguments, definitions, head, prose, see_also, verbatim};
use crate::exit::EXIT_CODES_HELP;

const ENVIRONMENT: &[(&str, &str)] = &[
    (
        "JFGUI_RUNTIME_DIR",
        "The daemon's runtime directory, an absolute path: jfgui-agent finds the control socket \
         agentd.sock and the endpoints apps/SLUG.sock there. Daemon, apps and jfgui-agent resolve \
         it by the same rule, so they always agree.",
    ),
    (
        "XDG_RUNTIME_DIR",
        "Without JFGUI_RUNTIME_DIR the runtime directory is $XDG_RUNTIME_DIR/jfgui-agent; without \
         either, a per-user fallback directory. jfgui-agent status prints the one in use.",
    ),
    (
        "JFGUI_AUDIT_DIR",
        "Where jfgui-agent log reads the audit log when the daemon does not say (it is not \
         running), and where jfgui-agent headless writes its records; else \
         $XDG_STATE_HOME/jfgui-agent, else ~/.local/state/jfgui-agent.",
    ),
    (
        "COMPLETE",
        "Set by the scripts of jfgui-agent completions: jfgui-agent then prints completion \
         candidates for the words after -- (endpoint and action names from the running daemon) \
         and exits.",
    ),
];

const FILES: &[(&str, &str)] = &[
    (
        "STATE_DIR/jfgui-agent/audit.jsonl",
        "The audit log read by jfgui-agent log (with audit.jsonl.1 to .3, rotated).",
    ),
    ("RUNTIME_DIR/agentd.sock", "The daemon's control socket (list, status, endpoint lookup)."),
    (
        "RUNTIME_DIR/apps/SLUG.sock",
        "The endpoint of the enabled app SLUG (JSON control protocol 1 or MCP).",
    ),
];

/// Writes the page.
pub fn write(w: &mut dyn Write) -> io::Result<()> {
    let mut cmd = Cli::command().disable_help_subcommand(true);
    cmd.build();
    let description = cmd.get_long_about().map(ToString::to_string).unwrap_or_default();
    head(&cmd, &description, w)?;
    let mut roff = Roff::new();
    roff.control("SH", ["COMMANDS"]);
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        let path = format!("jfgui-agent {}", sub.get_name());
        roff.control("SS", [path.as_str()]);
        let usage = sub.clone().render_usage().to_string();
        let rest = usage.trim_start_matches("Usage:").trim().trim_start_matches(path.as_str());
        roff.text([bold(path.as_str()), roman(rest)]);
        if let Some(about) = sub.get_long_about().or(sub.get_about()) {
            roff.control("PP", []);
            roff.text(prose(&about.to_string()));
        }
        arguments(
            &mut roff,
            sub.get_arguments()
                .filter(|a| !a.is_hide_set() && !a.is_global_set() && a.get_id() != "help"),
        );
        if let Some(after) = sub.get_after_help() {
            roff.control("PP", []);
            verbatim(&mut roff, &after.to_string());
        }
    }
    definitions(&mut roff, "ENVIRONMENT", ENVIRONMENT);
    definitions(&mut roff, "FILES", FILES);
    let codes: Vec<(&str, &str)> =
        EXIT_CODES_HELP.lines().skip(1).filter_map(|l| l.trim().split_once("  ")).collect();
    definitions(&mut roff, "EXIT STATUS", &codes);
    see_also(&mut roff, "jfgui-agentd");
    roff.to_writer(w)?;
    clap_mangen::Man::new(cmd).render_version_section(w)
}
