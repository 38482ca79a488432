//! `jfgui-agent man`: the man page, rendered from the clap definition at run time (so it can
//! never disagree with `--help`; packagers run `jfgui-agent man > jfgui-agent.1`).

use clap::CommandFactory;

use super::Cli;
use crate::exit::{Exit, Failure};
use crate::output::write_stdout;

/// Prints the roff source.
pub fn run() -> Result<(), Failure> {
    let mut page = Vec::new();
    clap_mangen::Man::new(Cli::command()).render(&mut page).map_err(|e| {
        Failure::new(Exit::Usage, "man_render_failed", format!("cannot render the man page: {e}"))
    })?;
    write_stdout(&page)
}
