//! `jfgui-agent check APP [--mutate] [--json]`: the contract checks of host-sdk's `testing`,
//! run over the wire against a running app (the table of checks is in that module's docs).
//! A table on a terminal, JSON otherwise; exit 0 when nothing FAILs, 1 when something does.

mod wire;

use clap::Args;
use jfgui_host_sdk::testing::{self, Interrupted, Level, Options, Report};
use jfgui_proto::Value;

use super::completions::candidates;
use super::{Context, JsonFlag, daemon};
use crate::client::{Client, Peer};
use crate::endpoint;
use crate::exit::{Exit, Failure};
use crate::output::{Format, print_json, print_text};

/// Shown after `check --help`.
pub const AFTER_HELP: &str = "\
Checks the contracts an agent relies on: each action's declaration (description, schemas,
name), that state/inspect and every read action leave the revision alone, that ui.render
answers a decodable PNG and that every listed resource reads to its end in chunks whose sizes
add up. --mutate adds the write checks: a stale write and a schema-violating write are refused
and change nothing, a write with a valid generated input moves the revision, an atomic batch
with an invalid call is refused with state and revision restored, and a deferred action's task
can be cancelled. Inputs are generated from each action's own schema.

Each line is PASS, WARN or FAIL, the check, the action (or resource), why, and how to fix it.
The exit code is 0 when nothing FAILs (WARNs allowed), 1 otherwise.

Examples:
  jfgui-agent check notepad
  jfgui-agent check notepad --mutate --json";

/// Arguments of `check`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The app: slug, exact display name, or unique slug prefix.
    #[arg(add = candidates::endpoints())]
    pub endpoint: String,
    /// Also run the write checks. They change the app's state as an agent would (writes with
    /// generated inputs, an atomic batch, a cancelled task): use a scratch document, never
    /// work you want to keep.
    #[arg(long)]
    pub mutate: bool,
    #[command(flatten)]
    pub out: JsonFlag,
}

/// Runs the checks and prints the report.
pub async fn run(args: CheckArgs, ctx: Context, format: Format) -> Result<(), Failure> {
    let daemon = daemon()?;
    let (slug, stream) = endpoint::open(&daemon, &args.endpoint, ctx.timeout, ctx.activate).await?;
    let client = Client::from_stream(stream, Peer::Endpoint(slug.clone()), ctx.timeout);
    let mut target = wire::Wire::new(client, daemon, slug.clone(), ctx.timeout);
    let options = Options { mutate: args.mutate, ..Options::read_only() };
    // The checks are synchronous; each request inside is driven on this runtime.
    let outcome =
        tokio::task::spawn_blocking(move || testing::run(&mut target, &options)).await.map_err(
            |e| Failure::new(Exit::Protocol, "internal_bug", format!("the checks stopped: {e}")),
        )?;
    let (report, stopped) = match outcome {
        Ok(report) => (report, None),
        Err(Interrupted { report, error }) => (report, Some(error)),
    };
    print(&report, &slug, format)?;
    if let Some(failure) = stopped {
        let message = format!(
            "the checks stopped after {} findings: {}",
            report.findings.len(),
            failure.message
        );
        return Err(failure.with_message(message).after_result());
    }
    if report.passed() {
        return Ok(());
    }
    Err(Failure::new(
        Exit::Action,
        "check_failed",
        format!(
            "{} FAIL among {} findings against '{slug}'",
            report.count(Level::Fail),
            report.findings.len()
        ),
    )
    .after_result())
}

fn print(report: &Report, slug: &str, format: Format) -> Result<(), Failure> {
    if format == Format::Json {
        let mut json = report.to_json();
        if let Value::Object(out) = &mut json {
            out.insert("app", slug);
        }
        return print_json(&json);
    }
    print_text(&format!("{report}"))
}
