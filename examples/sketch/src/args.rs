//! Command-line flags (clap, already the workspace's parser for `jfgui-agent`).

use std::time::Duration;

use clap::Parser;

/// jfgui-sketch: a vector drawing app that agents can drive through jfgui-agentd.
#[derive(Debug, Clone, PartialEq, Eq, Parser)]
#[command(version)]
pub struct Args {
    /// Start with agent access on (otherwise the user turns it on in the window).
    #[arg(long)]
    pub agent_enable: bool,
    /// No window: speak the host channel on stdin/stdout, enabled (same as
    /// JFGUI_HOST_CHANNEL=stdio, which `jfgui-agent headless` sets).
    #[arg(long)]
    pub agent_stdio: bool,
    /// Display name and window title.
    #[arg(long, default_value = "Sketch")]
    pub name: String,
    /// How long document.export runs, in milliseconds.
    #[arg(long = "export-ms", value_name = "N", default_value_t = 2000)]
    export_ms: u64,
    /// Let agents start this Sketch when they call it (on), or stop letting them (off), as
    /// the agent bar's "Let agents start" does; then exit.
    #[arg(long, value_name = "on|off", value_parser = ["on", "off"])]
    pub let_agents_start: Option<String>,
}

impl Args {
    /// How long an export takes.
    pub fn export_time(&self) -> Duration {
        Duration::from_millis(self.export_ms)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_and_defaults() {
        let a = Args::try_parse_from([
            "jfgui-sketch",
            "--agent-enable",
            "--name",
            "Sketch 2",
            "--export-ms=50",
        ])
        .unwrap();
        assert!(a.agent_enable && !a.agent_stdio);
        assert_eq!((a.name.as_str(), a.export_time()), ("Sketch 2", Duration::from_millis(50)));
        let d = Args::try_parse_from(["jfgui-sketch"]).unwrap();
        assert_eq!(
            (d.name.as_str(), d.export_time(), d.agent_enable),
            ("Sketch", Duration::from_secs(2), false)
        );
        assert!(Args::try_parse_from(["jfgui-sketch", "--export-ms", "soon"]).is_err());
        assert!(Args::try_parse_from(["jfgui-sketch", "--bogus"]).is_err());
        assert!(Args::try_parse_from(["jfgui-sketch", "--let-agents-start", "maybe"]).is_err());
    }
}
