//! `jfgui-agent`: the command line for people and scripts. Answers shell completion requests
//! (`COMPLETE=SHELL`), parses the arguments, runs one subcommand on a single-threaded tokio
//! runtime, reports a failure as one stderr line (plus JSON on stdout under `--json`) and exits
//! with its code (the table in `jfgui-agent --help`).

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
mod usage;

use std::io::Write;

use clap::{CommandFactory, Parser};

use crate::cmd::Cli;
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
    // A shell asking for completions (the scripts `completions SHELL` prints) is answered here
    // and the process exits; otherwise this does nothing.
    clap_complete::CompleteEnv::with_factory(Cli::command).complete();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => usage::exit_with(&e),
    };
    let format = cli.command.format();
    let ctx = cli.context();
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
