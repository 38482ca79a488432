//! `jfgui-agentd`: the per-user daemon. Flags → logging → `server::run` with the engine;
//! the exit status is documented in `--help` (`config::exit`).

use std::process::ExitCode;

use clap::Parser;
use jfgui_daemon::config::Config;
use jfgui_daemon::logging;

fn main() -> ExitCode {
    let config = Config::parse();
    logging::init(config.log_format);
    ExitCode::from(run(config))
}

#[cfg(unix)]
fn run(config: Config) -> u8 {
    jfgui_daemon::server::run(config, jfgui_daemon::server::engine)
}

#[cfg(windows)]
fn run(config: Config) -> u8 {
    jfgui_daemon::pipe_server::run(config)
}

#[cfg(not(any(unix, windows)))]
fn run(_config: Config) -> u8 {
    tracing::error!(
        "jfgui-agentd does not run on this platform yet: its named-pipe transport is not \
         implemented (the session engine is, e.g. for `jfgui-agent headless`)"
    );
    jfgui_daemon::config::exit::RUNTIME
}
