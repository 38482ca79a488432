//! `jfgui-agent completions SHELL`: a completion script generated from the clap definition.

use clap::{Args, CommandFactory};
use clap_complete::Shell;

use super::Cli;
use crate::exit::Failure;
use crate::output::write_stdout;

/// Arguments of `completions`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to generate for.
    pub shell: Shell,
}

/// Prints the script.
pub fn run(args: CompletionsArgs) -> Result<(), Failure> {
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut Cli::command(), "jfgui-agent", &mut script);
    write_stdout(&script)
}
