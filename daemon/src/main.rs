//! `jfgui-agentd`: the per-user daemon. Flags → logging (`logging.rs`: never blocks) →
//! `server::run` with the engine; the exit status is documented in `--help` (`config::exit`).

use std::process::ExitCode;

use clap::Parser;
use jfgui_daemon::config::{Config, exit, to_usize};
use jfgui_daemon::{logging, server};

fn main() -> ExitCode {
    let config = Config::parse();
    // Held until the daemon has stopped, so what is still queued gets written out.
    let _log = match logging::init(config.log_format, to_usize(config.log_queue_lines)) {
        Ok(guard) => guard,
        Err(e) => {
            eprintln!("jfgui-agentd: cannot start the log writer thread: {e}");
            return ExitCode::from(exit::RUNTIME);
        }
    };
    ExitCode::from(server::run(config, server::engine))
}
