//! `--demo`: the example app `jfgui-notepad --agent-enable`, started next to the daemon so the
//! README's run command is one command, and stopped with it.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use tokio::process::{Child, Command};

/// The example app's executable name.
const NOTEPAD: &str = "jfgui-notepad";
/// How long the app gets to leave on its own after the daemon said `bye`.
const GRACE: Duration = Duration::from_secs(2);

/// The example app when `--demo` asks for it. `Err` carries the exit status when it is asked
/// for but missing (logged here), found out before anything is bound.
pub fn locate_if_wanted(wanted: bool) -> Result<Option<PathBuf>, u8> {
    if !wanted {
        return Ok(None);
    }
    locate().map(Some).map_err(|message| {
        tracing::error!("{message}");
        crate::config::exit::RUNTIME
    })
}

/// Finds `jfgui-notepad` beside our own executable (both live in `target/<profile>/` after
/// `cargo build --workspace`, and in the same bin dir when installed).
fn locate() -> Result<PathBuf, String> {
    let exe = std::env::current_exe()
        .map_err(|e| format!("--demo: cannot find our own executable: {e}"))?;
    let app = exe.with_file_name(format!("{NOTEPAD}{}", std::env::consts::EXE_SUFFIX));
    if app.is_file() {
        Ok(app)
    } else {
        Err(format!(
            "--demo needs the example app at {}, which does not exist; build it with \
             `cargo build -p jfgui-example-notepad` (or build everything with `cargo build --workspace`)",
            app.display()
        ))
    }
}

/// Starts the example app (logged either way); a failure leaves the daemon running without it.
pub fn start(app: &PathBuf, runtime_dir: Option<&std::path::Path>) -> Option<Child> {
    match spawn(app, runtime_dir) {
        Ok(child) => {
            tracing::info!(app = %app.display(), "demo: started the example app");
            Some(child)
        }
        Err(e) => {
            tracing::error!(app = %app.display(), "demo: cannot start the example app: {e}");
            None
        }
    }
}

/// Starts the example app, enabled, pointed at our runtime dir (Unix; on Windows the pipe
/// names need none).
fn spawn(app: &PathBuf, runtime_dir: Option<&std::path::Path>) -> std::io::Result<Child> {
    let mut cmd = Command::new(app);
    cmd.arg("--agent-enable");
    if let Some(dir) = runtime_dir {
        cmd.env(jfgui_proto::locations::ENV_RUNTIME_DIR, dir);
    }
    cmd.stdin(Stdio::null()).kill_on_drop(true).spawn()
}

/// Lets the app exit after the daemon's `bye`, then kills it if it is still there.
pub async fn stop(mut child: Child) {
    if tokio::time::timeout(GRACE, child.wait()).await.is_err() {
        let _ = child.kill().await;
    }
}
