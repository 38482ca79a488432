//! `jfgui-agentd`: the per-user daemon. Flags → logging → `server::run` with the engine;
//! the exit status is documented in `--help` (`config::exit`).

use std::process::ExitCode;

use clap::Parser;
use jfgui_daemon::config::Config;
use jfgui_daemon::{logging, server};

fn main() -> ExitCode {
    let config = Config::parse();
    logging::init(config.log_format);
    ExitCode::from(server::run(config, server::engine))
}
