//! The subcommands, one file each, behind one dispatching enum.

mod actions;
mod apps;
mod batch;
mod browser_bridge;
mod browser_call;
mod browser_stdio;
mod call;
mod check;
mod completions;
mod describe;
mod grants;
mod headless;
mod inspect;
mod list;
mod log;
mod man;
mod mcp;
mod read;
mod render;
mod status;
mod stdio;
mod tasks;

use std::time::Duration;

use clap::{Args, Parser, Subcommand};

use crate::exit::{EXIT_CODES_HELP, Failure};
use crate::output::Format;

/// Seconds each answer may take when `--timeout` is not given.
const DEFAULT_TIMEOUT_SECS: u64 = 60;

/// The command line of jfgui-agentd (`about` for `-h` and the man page's NAME line,
/// `long_about` for `--help` and its DESCRIPTION, so neither repeats the other).
#[derive(Debug, Parser)]
#[command(
    name = "jfgui-agent",
    version,
    about = "Drive GUI apps registered with jfgui-agentd through their semantic actions",
    long_about = "jfgui-agent lists the apps registered with the per-user daemon jfgui-agentd, \
                  calls their actions, follows their deferred tasks, reads their resources and \
                  renders their view, and is the stdio gateway MCP clients start.",
    after_help = EXIT_CODES_HELP
)]
pub struct Cli {
    /// Give up after SECS (exit 6): on each answer [default: 60], on a followed task [default: until it ends].
    #[arg(
        long,
        global = true,
        value_name = "SECS",
        display_order = 900,
        value_parser = clap::value_parser!(u64).range(1..=86_400)
    )]
    pub timeout: Option<u64>,
    /// Do not start an installed app that is not running (by default a command naming one
    /// starts it, as its user allowed, and waits until it registers).
    #[arg(long, global = true, display_order = 901)]
    pub no_activate: bool,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

impl Cli {
    /// The bounds `--timeout` sets.
    pub fn context(&self) -> Context {
        Context {
            timeout: Duration::from_secs(self.timeout.unwrap_or(DEFAULT_TIMEOUT_SECS)),
            wait: self.timeout.map(Duration::from_secs),
            activate: !self.no_activate,
        }
    }
}

/// The subcommands, as `jfgui-agent --help` lists them.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// List the apps registered with the daemon and their endpoints.
    #[command(after_help = "Example:\n  jfgui-agent list\n  jfgui-agent list --json")]
    List(list::ListArgs),
    /// List the apps installed for agents to start (and whether each runs), or forget one.
    #[command(after_help = apps::AFTER_HELP)]
    Apps(apps::AppsArgs),
    /// List (or search) an endpoint's actions.
    #[command(after_help = "Example:\n  jfgui-agent actions notepad --query document")]
    Actions(actions::ActionsArgs),
    /// Show one action: kind, input and output schemas, capabilities.
    #[command(after_help = "Example:\n  jfgui-agent describe notepad document.text.replace")]
    Describe(describe::DescribeArgs),
    /// Execute one action (and, with --wait, follow the task it starts).
    #[command(after_help = call::AFTER_HELP, mut_arg("input_json", |a| a.help(call::INPUT_HELP)))]
    Call(call::CallArgs),
    /// Run several actions in one request, in order or all-or-nothing.
    #[command(after_help = batch::AFTER_HELP, mut_arg("input_json", |a| a.help(batch::INPUT_HELP)))]
    Batch(batch::BatchArgs),
    /// Read the app's state and its revision.
    #[command(after_help = inspect::AFTER_HELP, mut_arg("input_json", |a| a.help(inspect::INPUT_HELP)))]
    Inspect(inspect::InspectArgs),
    /// Check that an app keeps the contracts agents rely on (PASS / WARN / FAIL per check).
    #[command(after_help = check::AFTER_HELP)]
    Check(check::CheckArgs),
    /// Get, wait for or cancel a deferred task an action started.
    #[command(after_help = tasks::AFTER_HELP)]
    Tasks(tasks::TasksArgs),
    /// Read a resource of the app (in 64 KiB chunks) into a file or stdout.
    #[command(after_help = read::AFTER_HELP)]
    Read(read::ReadArgs),
    /// Have the app render its view, and save the image it produces.
    #[command(after_help = render::AFTER_HELP, mut_arg("input_json", |a| a.help(render::INPUT_HELP)))]
    Render(render::RenderArgs),
    /// Gateway: one MCP server for every enabled app (the entry for MCP clients); survives
    /// daemon restarts.
    #[command(after_help = mcp::AFTER_HELP)]
    Mcp,
    /// Gateway: pipe JSON-1 or MCP lines between stdin/stdout and an endpoint (for MCP clients).
    #[command(after_help = stdio::AFTER_HELP)]
    Stdio(stdio::StdioArgs),
    /// Start APP in headless agent mode and serve it on stdin/stdout, without a daemon.
    #[command(after_help = headless::AFTER_HELP)]
    Headless(headless::HeadlessArgs),
    /// Open the browser bridge (HTTP on 127.0.0.1) for a web app and hold it until interrupted.
    #[command(after_help = browser_bridge::AFTER_HELP)]
    BrowserBridge(browser_bridge::BrowserBridgeArgs),
    /// Call the browser app attached to a bridge (one JSON-RPC request through /rpc).
    #[command(after_help = browser_call::AFTER_HELP)]
    BrowserCall(browser_call::BrowserCallArgs),
    /// Gateway: pipe JSON-1 or MCP lines between stdin/stdout and a bridge's browser app.
    #[command(after_help = browser_stdio::AFTER_HELP)]
    BrowserStdio(browser_stdio::BrowserStdioArgs),
    /// Show the audit log: who changed what in which app, and how it ended.
    #[command(after_help = log::AFTER_HELP)]
    Log(log::LogArgs),
    /// List, revoke or add the grants that let an agent run an action without asking first.
    #[command(after_help = grants::AFTER_HELP)]
    Grants(grants::GrantsArgs),
    /// Show the daemon's status: pid, version, uptime, apps, connections.
    #[command(after_help = "Example:\n  jfgui-agent status --json")]
    Status(status::StatusArgs),
    /// Print a shell completion script (it completes endpoint and action names from the
    /// running daemon).
    #[command(after_help = completions::AFTER_HELP)]
    Completions(completions::CompletionsArgs),
    /// Print a man page (roff) on stdout: jfgui-agent(1), or jfgui-agentd(1).
    #[command(after_help = man::AFTER_HELP)]
    Man(man::ManArgs),
}

/// `--json` for commands that print something.
#[derive(Debug, Clone, Copy, Args)]
pub struct JsonFlag {
    /// Print machine-readable JSON (one line) instead of text; errors too.
    #[arg(long)]
    pub json: bool,
}

/// What every subcommand gets besides its own arguments.
#[derive(Debug, Clone, Copy)]
pub struct Context {
    /// Bound on each request.
    pub timeout: Duration,
    /// Bound on following a task (`tasks wait`, `call --wait`); `None`: until it ends.
    pub wait: Option<Duration>,
    /// Start an installed app a command names when it is not running (not `--no-activate`).
    pub activate: bool,
}

impl Command {
    /// The output format, decided before running so failures are reported in it too.
    pub fn format(&self) -> Format {
        match self {
            Command::List(a) => Format::choose(a.out.json, false),
            Command::Apps(a) => Format::choose(a.out.json, false),
            Command::Actions(a) => Format::choose(a.out.json, false),
            Command::Describe(a) => Format::choose(a.out.json, false),
            Command::Call(a) => Format::choose(a.out.json, true),
            Command::Batch(a) => Format::choose(a.out.json, true),
            Command::Inspect(a) => Format::choose(a.out.json, true),
            Command::Tasks(a) => Format::choose(a.out.json, true),
            Command::Check(a) => Format::choose(a.out.json, true),
            // stdout may carry the resource's bytes: JSON only when asked (it needs -o).
            Command::Read(a) => Format::choose(a.json, false),
            Command::Render(a) => Format::choose(a.json, false),
            Command::Status(a) => Format::choose(a.out.json, false),
            Command::Log(a) => Format::choose(a.json, true),
            Command::Grants(a) => Format::choose(a.json, false),
            Command::BrowserCall(a) => Format::choose(a.out.json, true),
            // stdout belongs to the protocol (or to the generated script): errors go to stderr only.
            Command::Mcp
            | Command::Stdio(_)
            | Command::Headless(_)
            | Command::BrowserBridge(_)
            | Command::BrowserStdio(_)
            | Command::Completions(_)
            | Command::Man(_) => Format::Human,
        }
    }

    /// Runs the subcommand.
    pub async fn run(self, ctx: Context, format: Format) -> Result<(), Failure> {
        match self {
            Command::List(_) => list::run(ctx, format).await,
            Command::Apps(a) => apps::run(a, ctx, format).await,
            Command::Actions(a) => actions::run(a, ctx, format).await,
            Command::Describe(a) => describe::run(a, ctx, format).await,
            Command::Call(a) => call::run(a, ctx, format).await,
            Command::Batch(a) => batch::run(a, ctx, format).await,
            Command::Inspect(a) => inspect::run(a, ctx, format).await,
            Command::Tasks(a) => tasks::run(a, ctx, format).await,
            Command::Check(a) => check::run(a, ctx, format).await,
            Command::Read(a) => read::run(a, ctx, format).await,
            Command::Render(a) => render::run(a, ctx, format).await,
            Command::Mcp => mcp::run(ctx).await,
            Command::Stdio(a) => stdio::run(a, ctx).await,
            Command::Headless(a) => headless::run(a, ctx).await,
            Command::BrowserBridge(a) => browser_bridge::run(a, ctx).await,
            Command::BrowserCall(a) => browser_call::run(a, ctx, format).await,
            Command::BrowserStdio(a) => browser_stdio::run(a, ctx).await,
            Command::Status(_) => status::run(ctx, format).await,
            Command::Log(a) => log::run(a, ctx, format).await,
            Command::Grants(a) => grants::run(a, ctx, format).await,
            Command::Completions(a) => completions::run(a),
            Command::Man(a) => man::run(a),
        }
    }
}

/// Where this user's daemon listens (runtime dir on Unix, pipe namespace on Windows).
pub fn daemon() -> Result<crate::transport::Daemon, Failure> {
    crate::transport::Daemon::locate()
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_clap_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn every_subcommand_parses() {
        let ok: &[&[&str]] = &[
            &["x", "list", "--json"],
            &["x", "apps", "--json"],
            &["x", "apps", "forget", "sketch"],
            &["x", "--no-activate", "call", "sketch", "shape.add"],
            &["x", "actions", "notepad", "--query", "doc"],
            &["x", "describe", "notepad", "document.get"],
            &[
                "x",
                "call",
                "notepad",
                "document.get",
                "--input-json",
                "{}",
                "--expected-revision",
                "auto",
            ],
            &[
                "x",
                "call",
                "notepad",
                "edit.undo",
                "--input-file",
                "-",
                "--expected-revision",
                "12",
            ],
            &["x", "inspect", "notepad", "--input-json", "{\"sinceRevision\":1}"],
            &["x", "check", "notepad", "--mutate", "--json"],
            &["x", "stdio", "notepad", "--protocol", "mcp"],
            &["x", "mcp"],
            &["x", "headless", "/bin/app", "--protocol", "json", "--", "--name", "A B"],
            &["x", "status"],
            &["x", "browser-bridge", "--origin", "http://127.0.0.1:8765", "--port", "9000"],
            &[
                "x",
                "browser-call",
                "--url",
                "http://127.0.0.1:9",
                "--token-file",
                "t",
                "agent/info",
            ],
            &[
                "x",
                "browser-call",
                "--url",
                "u",
                "--token",
                "t",
                "tools/list",
                "{}",
                "--protocol",
                "mcp",
            ],
            &["x", "browser-stdio", "--url", "http://127.0.0.1:9", "--protocol", "json"],
            &["x", "completions", "zsh"],
            &["x", "man"],
            &["x", "--timeout", "5", "list"],
        ];
        for args in ok {
            Cli::try_parse_from(*args).unwrap_or_else(|e| panic!("{args:?}: {e}"));
        }
    }

    #[test]
    fn usage_errors_are_rejected() {
        let bad: &[&[&str]] = &[
            &["x"],
            &["x", "frobnicate"],
            &["x", "call", "notepad"],
            &["x", "call", "n", "a", "--input-json", "{}", "--input-file", "f"],
            &["x", "call", "n", "a", "--expected-revision", "-1"],
            &["x", "call", "n", "a", "--expected-revision", "9007199254740992"],
            &["x", "stdio", "n", "--protocol", "http"],
            &["x", "mcp", "notepad"],
            &["x", "--timeout", "0", "list"],
            &["x", "browser-bridge"],
            &["x", "browser-call", "--url", "u", "--token-file", "f", "--token", "t", "m"],
            &["x", "browser-stdio"],
        ];
        for args in bad {
            assert!(Cli::try_parse_from(*args).is_err(), "{args:?}");
        }
    }
}
