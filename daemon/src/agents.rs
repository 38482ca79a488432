//! Who is calling: the engine names the agent behind a client connection through
//! [`identify`], which walks from the peer's pid up its ancestors past our own programs (the
//! `jfgui-agent` CLI and gateway beside this daemon, and the daemon itself) and takes the first
//! other process's executable. Ours are recognised by the file they run, not by name: on Unix
//! by device and inode, elsewhere by canonical path, so a program that merely calls itself
//! `jfgui-agent` is not skipped.

use std::path::Path;
#[cfg(not(unix))]
use std::path::PathBuf;

use jfgui_engine::consent::Identify;

/// The CLI's file name beside the daemon.
#[cfg(windows)]
const CLI: &str = "jfgui-agent.exe";
/// The CLI's file name beside the daemon.
#[cfg(not(windows))]
const CLI: &str = "jfgui-agent";

/// The agent lookup for the engine, recognising our programs as they are installed now.
pub fn identify() -> Identify {
    let daemon = std::env::current_exe().ok();
    let cli = daemon.as_ref().and_then(|d| d.parent()).map(|dir| dir.join(CLI));
    let ours: Vec<FileId> =
        [daemon, cli].into_iter().flatten().filter_map(|p| FileId::of(&p)).collect();
    Identify::new(move |pid| {
        let (pid, exe) = jfgui_proto::process::agent(pid, |exe| {
            FileId::of(exe).is_some_and(|id| ours.contains(&id))
        })?;
        Some((pid, exe.to_string_lossy().into_owned()))
    })
}

/// What makes two paths the same program file.
#[derive(Debug, Clone, PartialEq, Eq)]
enum FileId {
    #[cfg(unix)]
    Inode(u64, u64),
    #[cfg(not(unix))]
    Path(PathBuf),
}

impl FileId {
    fn of(path: &Path) -> Option<FileId> {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            let meta = std::fs::metadata(path).ok()?;
            Some(FileId::Inode(meta.dev(), meta.ino()))
        }
        #[cfg(not(unix))]
        {
            std::fs::canonicalize(path).ok().map(FileId::Path)
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use std::path::PathBuf;

    use super::*;

    #[test]
    fn the_daemons_own_program_is_walked_past() {
        // To `identify`, this test binary is the daemon (it is `current_exe`): the agent of our
        // own pid is our parent, the program that started us.
        let parent = std::os::unix::process::parent_id();
        let (pid, exe) = identify().agent_of(std::process::id()).unwrap();
        assert_eq!(pid, parent);
        assert_eq!(Some(PathBuf::from(exe)), jfgui_proto::process::executable(parent));
    }
}
