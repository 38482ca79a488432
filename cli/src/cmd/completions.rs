//! `jfgui-agent completions SHELL`: the shell script that completes `jfgui-agent` command
//! lines. It is clap_complete's dynamic registration: at each TAB the shell runs
//! `COMPLETE=SHELL jfgui-agent -- WORDS...`, which `main` answers from the clap definition
//! plus [`candidates`] (endpoint and action names asked from the running daemon).

pub mod candidates;

use clap::Args;
use clap_complete::Shell;
use clap_complete::env::{Bash, Elvish, EnvCompleter, Fish, Powershell, Zsh};

use crate::exit::{Exit, Failure};
use crate::output::write_stdout;

/// Shown after `completions --help`.
pub const AFTER_HELP: &str = "\
The script calls jfgui-agent (found on PATH) at every TAB, so endpoint and action names come
from the running daemon (nothing is completed for them when none runs). packaging/install.sh
and the packages install the scripts; by hand:

Examples:
  jfgui-agent completions bash > ~/.local/share/bash-completion/completions/jfgui-agent
  jfgui-agent completions zsh > ~/.local/share/zsh/site-functions/_jfgui-agent   # a dir on $fpath
  jfgui-agent completions fish > ~/.config/fish/completions/jfgui-agent.fish";

/// The command the scripts complete and call back.
const BIN: &str = "jfgui-agent";

/// Arguments of `completions`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to generate for.
    pub shell: Shell,
}

/// Prints the script.
pub fn run(args: CompletionsArgs) -> Result<(), Failure> {
    let shell: &dyn EnvCompleter = match args.shell {
        Shell::Bash => &Bash,
        Shell::Zsh => &Zsh,
        Shell::Fish => &Fish,
        Shell::Elvish => &Elvish,
        Shell::PowerShell => &Powershell,
        other => {
            return Err(Failure::usage(
                "unsupported_shell",
                format!("no completion script for {other}"),
            ));
        }
    };
    let mut script = Vec::new();
    shell.write_registration("COMPLETE", BIN, BIN, BIN, &mut script).map_err(|e| {
        Failure::new(Exit::Usage, "completions_failed", format!("cannot write the script: {e}"))
    })?;
    write_stdout(&script)
}
