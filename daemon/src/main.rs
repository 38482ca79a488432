//! `jfgui-agentd`: the per-user daemon. Flags → logging (`logging.rs`: never blocks) →
//! `server::run` with the engine; the exit status is documented in `--help` (`config::exit`).
//! On Linux with glibc it also defines the C `pow` the binary needs (see [`pow`]).

use std::process::ExitCode;

use clap::Parser;
use jfgui_daemon::config::{Config, exit, to_usize};
use jfgui_daemon::{logging, server};
use jfgui_engine::Counter;

fn main() -> ExitCode {
    let config = Config::parse();
    let log_dropped = Counter::default();
    // Held until the daemon has stopped, so what is still queued gets written out.
    let lines = to_usize(config.log_queue_lines);
    let _log = match logging::init(config.log_format, lines, log_dropped.clone()) {
        Ok(guard) => guard,
        Err(e) => {
            eprintln!("jfgui-agentd: cannot start the log writer thread: {e}");
            return ExitCode::from(exit::RUNTIME);
        }
    };
    ExitCode::from(server::run(config, log_dropped))
}

/// The C library's `pow`, defined by the binary itself. It is the only function the daemon
/// imports from glibc's libm.so (tokio's multi-thread scheduler, there for `--worker-threads`,
/// smooths its task poll times with `f64::powf`). With the symbol defined here, the linker
/// (`--as-needed`) leaves libm.so out of the binary's needed libraries: it is neither loaded
/// nor relocated, 0.3 MiB less resident memory at idle (docs/PERFORMANCE.md, "Idle memory").
/// `libm` is the Rust port of musl's implementation: the same IEEE results within 1 ulp, for
/// a value that only weighs a moving average.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
// SAFETY: the symbol has the C signature and meaning of the one it stands in for, and nothing
// else linked into the binary defines it (libm.so is no longer linked).
#[allow(unsafe_code)]
#[unsafe(no_mangle)]
pub extern "C" fn pow(x: f64, y: f64) -> f64 {
    libm::pow(x, y)
}
