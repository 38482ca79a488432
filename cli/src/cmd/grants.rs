//! `jfgui-agent grants [list|revoke|allow]`: the user's standing grants, kept by the daemon
//! (`grants/list`, `grants/revoke`, `grants/allow` on the control socket). A grant lets one
//! agent (an executable path) run one action of one app that would otherwise ask first.

use std::path::PathBuf;

use clap::{Args, Subcommand};
use jfgui_proto::{Map, Value};

use super::{Context, daemon};
use crate::client::{Client, Peer};
use crate::exit::Failure;
use crate::output::{Format, print_json, print_text};

/// Shown after `grants --help`.
pub const AFTER_HELP: &str = "\
Some actions ask the user in the app before an agent may run them (\"Clear the document\").
Choosing \"Always allow\" there records a grant: that agent (the executable the operating system
names as the caller, not what the client says it is) may run that action of that app without
asking again. A grant names a path, like a firewall rule: another program later installed at
the same path matches it too. Grants live in grants.json in the state directory.
allow pre-authorizes an agent (for apps without a way to ask, and for scripts); revoke takes
grants back, and the next call asks again.

Examples:
  jfgui-agent grants allow Notepad document.clear --agent /usr/bin/python3
  jfgui-agent grants
  jfgui-agent grants revoke --all";

/// Arguments of `grants`.
#[derive(Debug, Args)]
pub struct GrantsArgs {
    /// What to do (default: list).
    #[command(subcommand)]
    pub op: Option<GrantsOp>,
    /// Print machine-readable JSON (one line) instead of text; errors too.
    #[arg(long, global = true)]
    pub json: bool,
}

/// The grants subcommands.
#[derive(Debug, Subcommand)]
pub enum GrantsOp {
    /// List the grants: id, agent, app, action, when and how each was made.
    List,
    /// Take back one grant by id, or all of them.
    Revoke {
        /// The grant's id, as `grants` lists it.
        #[arg(required_unless_present = "all", conflicts_with = "all")]
        id: Option<u64>,
        /// Revoke every grant.
        #[arg(long)]
        all: bool,
    },
    /// Let AGENT run ACTION of APP without asking.
    Allow {
        /// The app's display name, as `jfgui-agent list` shows it.
        app: String,
        /// The action.
        action: String,
        /// The agent's executable (made absolute).
        #[arg(long, value_name = "EXE")]
        agent: PathBuf,
    },
}

/// Runs the subcommand on the daemon's control socket.
pub async fn run(args: GrantsArgs, ctx: Context, format: Format) -> Result<(), Failure> {
    let daemon = daemon()?;
    let mut control = Client::connect(daemon.control(), Peer::Control, ctx.timeout).await?;
    let mut params = Map::new();
    let method = match args.op.unwrap_or(GrantsOp::List) {
        GrantsOp::List => "grants/list",
        GrantsOp::Revoke { id, all } => {
            match id {
                Some(id) => params.insert("id", id),
                None => params.insert("all", all),
            };
            "grants/revoke"
        }
        GrantsOp::Allow { app, action, agent } => {
            let agent = std::path::absolute(&agent).map_err(|e| {
                Failure::usage(
                    "invalid_agent",
                    format!("cannot make {} absolute: {e}", agent.display()),
                )
            })?;
            params.insert("app", app);
            params.insert("action", action);
            params.insert("agent", agent.to_string_lossy().into_owned());
            "grants/allow"
        }
    };
    let result = control.request(method, params).await?;
    if format == Format::Json {
        return print_json(&Value::Object(result));
    }
    print_text(&render(&result))
}

/// One line per grant: `ID  AGENT may run APP ACTION (how, when)`.
fn render(result: &Map) -> String {
    let line = |g: &Value| {
        let text = |k: &str| g.get(k).and_then(Value::as_str).unwrap_or("?").to_owned();
        let id = g.get("id").and_then(Value::as_u64).unwrap_or(0);
        format!(
            "{id:>4}  {} may run {} in {} ({} {})",
            text("agent"),
            text("action"),
            text("app"),
            if text("by") == "prompt" {
                "allowed always in the app"
            } else {
                "allowed by grants allow"
            },
            text("created"),
        )
    };
    if let Some(g) = result.get("grant") {
        return format!("granted:\n{}", line(g));
    }
    let (key, empty, heading) = match result.get("revoked") {
        Some(_) => ("revoked", "no grant revoked", "revoked:\n"),
        None => ("grants", "no grants: every action that asks will ask", ""),
    };
    let grants = result.get(key).and_then(Value::as_array).unwrap_or(&[]);
    if grants.is_empty() {
        return empty.to_owned();
    }
    let lines: Vec<String> = grants.iter().map(line).collect();
    format!("{heading}{}", lines.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grants_read_as_sentences() {
        let mut g = Map::new();
        g.insert("id", 3u64);
        g.insert("agent", "/usr/bin/claude");
        g.insert("app", "Sketch");
        g.insert("action", "canvas.clear");
        g.insert("created", "2026-12-03T17:00:00.000Z");
        g.insert("by", "prompt");
        let mut m = Map::new();
        m.insert("grants", Value::Array(vec![Value::Object(g)]));
        assert_eq!(
            render(&m),
            "   3  /usr/bin/claude may run canvas.clear in Sketch (allowed always in the app 2026-12-03T17:00:00.000Z)"
        );
        m.insert("grants", Value::Array(vec![]));
        assert!(render(&m).starts_with("no grants"));
    }
}
