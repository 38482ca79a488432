//! The bench's own middle processes: the raw relay, the JSON-RPC relay and the rmcp server
//! run as children of this binary (`latency --middle KIND CTL ...`, dispatched in `main.rs`),
//! so each has its own `/proc/PID/stat` CPU time like the daemon, and its own allocation count
//! (`count_alloc.rs`). This is the parent's side: starting one, and its handle.

use std::path::{Path, PathBuf};
use std::process::Command;

use jfgui_tests::{PATIENCE, Proc, wait_until};

use crate::count_alloc;

/// The first argument that turns this binary into a middle process.
pub const FLAG: &str = "--middle";

/// A command running this binary as middle `kind` with control socket `ctl`.
pub fn command(kind: &str, ctl: &Path) -> Command {
    let mut cmd = Command::new(std::env::current_exe().expect("bench executable path"));
    cmd.arg(FLAG).arg(kind).arg(ctl);
    cmd
}

/// A relay child listening on a socket, with its control socket.
#[derive(Debug)]
pub struct Relay {
    proc: Proc,
    ctl: PathBuf,
    /// Where clients connect.
    pub listen: PathBuf,
}

impl Relay {
    /// Starts relay `kind` on `DIR/NAME.sock` towards `upstream`, and waits until it accepts.
    pub fn start(kind: &str, dir: &Path, name: &str, upstream: &Path) -> Relay {
        let listen = dir.join(format!("{name}.sock"));
        let ctl = dir.join(format!("{name}.ctl"));
        let mut cmd = command(kind, &ctl);
        cmd.arg(&listen).arg(upstream);
        let proc = Proc::spawn(cmd, dir.join(format!("{name}.log")));
        let up = wait_until(PATIENCE, || {
            std::os::unix::net::UnixStream::connect(&listen).is_ok() && ctl.exists()
        });
        assert!(up, "{kind} relay did not start; its log:\n{}", proc.stderr());
        Relay { proc, ctl, listen }
    }

    /// Its pid.
    pub fn pid(&self) -> u32 {
        self.proc.pid()
    }

    /// Allocations it made so far.
    pub fn allocations(&self) -> Option<u64> {
        count_alloc::query(&self.ctl)
    }
}
