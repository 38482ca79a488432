//! `jfgui-agent`: the command line for people and scripts. Parses the arguments, runs one
//! subcommand on a single-threaded tokio runtime, reports a failure as one stderr line (plus
//! JSON on stdout under `--json`) and exits with the code of SPEC S9.

mod bridge;
mod client;
mod cmd;
mod endpoint;
mod exit;
mod gateway;
mod input;
mod line;
mod output;
mod transport;

use std::io::Write;
use std::time::Duration;

use clap::Parser;
use clap::error::ErrorKind;

use crate::cmd::{Cli, Context};
use crate::exit::{Exit, Failure};

fn main() {
    // A bug must still end in one stderr line and a documented code, never a backtrace (and a
    // panic inside a gateway task must not be mistaken for a clean EOF).
    std::panic::set_hook(Box::new(|info| {
        let failure =
            Failure::new(Exit::Protocol, "internal_bug", format!("internal error: {info}"));
        output::report(&failure, output::Format::Human);
        std::process::exit(Exit::Protocol as i32);
    }));
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => usage_error(&e),
    };
    let format = cli.command.format();
    let ctx = Context { timeout: Duration::from_secs(cli.timeout) };
    // The runtime is never dropped: dropping it would wait for tokio's blocking stdin read,
    // which no shutdown can cancel (a gateway whose peer closed must exit while its client
    // still holds stdin open). `process::exit` below ends everything instead.
    let result = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(rt) => {
            let result = rt.block_on(cli.command.run(ctx, format));
            std::mem::forget(rt);
            result
        }
        Err(e) => Err(Failure::new(
            Exit::Daemon,
            "runtime_failed",
            format!("cannot start the async runtime: {e}"),
        )),
    };
    let code = match result {
        Ok(()) => Exit::Ok,
        Err(failure) => {
            output::report(&failure, format);
            failure.exit
        }
    };
    let _ = std::io::stdout().flush();
    std::process::exit(code as i32);
}

/// Help and version go out as clap renders them; a real usage error becomes one stderr line
/// (the reason is clap's error kind) and exit 2.
fn usage_error(e: &clap::Error) -> ! {
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => e.exit(),
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = e.print();
            std::process::exit(Exit::Usage as i32);
        }
        _ => {
            // clap's message runs until the blank line before its usage block.
            let rendered = e.to_string();
            let text: Vec<&str> = rendered
                .lines()
                .take_while(|l| !l.trim().is_empty() && !l.starts_with("Usage:"))
                .map(|l| l.trim().trim_start_matches("error: "))
                .collect();
            let text = text.join(" ");
            let reason = usage_reason(e.kind());
            let failure = Failure::usage(reason, format!("{text} (see `jfgui-agent --help`)"));
            output::report(&failure, output::Format::Human);
            std::process::exit(Exit::Usage as i32);
        }
    }
}

/// A stable name for each kind of usage error.
fn usage_reason(kind: ErrorKind) -> &'static str {
    match kind {
        ErrorKind::InvalidSubcommand => "unknown_subcommand",
        ErrorKind::UnknownArgument => "unknown_argument",
        ErrorKind::InvalidValue | ErrorKind::ValueValidation => "invalid_value",
        ErrorKind::MissingRequiredArgument => "missing_argument",
        ErrorKind::ArgumentConflict => "conflicting_arguments",
        _ => "usage",
    }
}
