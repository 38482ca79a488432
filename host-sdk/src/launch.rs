//! "Let agents start `<App>`" (feature `std`): the app's side of activation. When its user turns
//! the setting on, the app writes its launch file ([`let_agents_start`]); when they turn it off,
//! it removes it ([`stop_letting_agents_start`]). The daemon then starts the app when an agent
//! calls it while it is not running, with [`started_by_agent`] true: the file is the user's
//! yes, so such an app turns agent access on at once and says so in its UI.
//!
//! The file's format and the trust rules the daemon applies are proto's (`jfgui_proto::launch`),
//! so a file written here is one the daemon uses.

use std::path::PathBuf;
use std::string::{String, ToString};
use std::vec::Vec;

use jfgui_proto::launch::{self, MAX_SLUG, apps_dir, base_slug};
pub use jfgui_proto::launch::{ENV_ACTIVATED, Ignored};

/// Writes (or replaces) the launch file of `display_name` so the daemon may start `exec`
/// (`exec[0]` an absolute path, usually `std::env::current_exe()`; the arguments are passed
/// literally, no shell); returns the file's path.
pub fn let_agents_start(display_name: &str, exec: &[String]) -> Result<PathBuf, Ignored> {
    launch::write(&dir()?, display_name, exec)
}

/// [`let_agents_start`] with this process's executable and `args`.
pub fn let_agents_start_me(display_name: &str, args: &[&str]) -> Result<PathBuf, Ignored> {
    let me = std::env::current_exe().map_err(|e| Ignored {
        path: PathBuf::new(),
        why: std::format!("cannot find this program's path: {e}"),
    })?;
    let mut exec: Vec<String> = std::vec![me.to_string_lossy().into_owned()];
    exec.extend(args.iter().map(|a| a.to_string()));
    let_agents_start(display_name, &exec)
}

/// Removes the launch file of `display_name`; `Ok(false)` when there was none.
pub fn stop_letting_agents_start(display_name: &str) -> Result<bool, Ignored> {
    let dir = dir()?;
    let slug = base_slug(display_name, MAX_SLUG);
    launch::remove(&dir, &slug).map_err(|e| Ignored { path: dir, why: e.to_string() })
}

/// Whether a trusted launch file of `display_name` exists (the setting's current state).
pub fn agents_may_start(display_name: &str) -> bool {
    let Ok(dir) = dir() else { return false };
    let slug = base_slug(display_name, MAX_SLUG);
    launch::read_file(&dir.join(std::format!("{slug}{}", launch::SUFFIX))).is_ok()
}

/// Whether the daemon started this process for an agent (`JFGUI_ACTIVATED=1`).
pub fn started_by_agent() -> bool {
    std::env::var_os(ENV_ACTIVATED).is_some_and(|v| v == "1")
}

fn dir() -> Result<PathBuf, Ignored> {
    apps_dir().ok_or_else(|| Ignored {
        path: PathBuf::new(),
        why: "neither XDG_DATA_HOME nor HOME is set to an absolute path".to_string(),
    })
}
