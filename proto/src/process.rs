//! Who a peer process is, as the operating system says (feature `std`): its executable, its
//! parent, one variable of its environment, and the first of its ancestors that is not one of
//! our own programs ([`agent`]). The daemon names the agent behind a client connection this way
//! (the MCP client that started `jfgui-agent mcp`, not the gateway), and never by what the
//! client says about itself; `jfgui-agent headless` names its own parent the same way.
//!
//! | question | Linux | macOS | Windows |
//! |---|---|---|---|
//! | [`executable`] | `/proc/PID/exe` | `proc_pidpath` | `QueryFullProcessImageNameW` |
//! | [`parent`] | `/proc/PID/stat`, field 4 | `proc_pidinfo(PROC_PIDTBSDINFO)` | a ToolHelp process snapshot |
//! | [`environment_var`] | `/proc/PID/environ` | `sysctl(KERN_PROCARGS2)` | not offered (`None`) |
//!
//! Each answer is read once, at the moment it is asked: a process can exit and its pid be
//! reused, so callers ask while the peer is surely alive (at accept, before anything is read).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::vec::Vec;

/// How many ancestors [`agent`] looks at before it gives up: a chain of our own programs
/// longer than this is not a real launch (a gateway under a gateway is two).
pub const MAX_ANCESTORS: usize = 32;

/// The executable of process `pid`, when the OS tells (same user, or root).
pub fn executable(pid: u32) -> Option<PathBuf> {
    os::executable(pid)
}

/// The parent of process `pid`; `None` for the first process, a process that is gone, or one
/// the OS does not describe to us.
pub fn parent(pid: u32) -> Option<u32> {
    os::parent(pid).filter(|&p| p != 0 && p != pid)
}

/// The value of the environment variable `name` of process `pid` as it was when that process
/// started (later changes it made to itself are not seen), when the OS tells.
pub fn environment_var(pid: u32, name: &str) -> Option<OsString> {
    os::environment_var(pid, name)
}

/// The process acting through `pid`: `pid` itself unless its executable is one of ours
/// (`is_ours`), else the first ancestor whose executable is not, with that executable. `None`
/// when the executable of a process on the way cannot be read or the chain ends first.
pub fn agent(pid: u32, is_ours: impl Fn(&Path) -> bool) -> Option<(u32, PathBuf)> {
    let mut current = pid;
    for _ in 0..MAX_ANCESTORS {
        let exe = executable(current)?;
        if !is_ours(&exe) {
            return Some((current, exe));
        }
        current = parent(current)?;
    }
    None
}

/// The `NAME=value` entries of an environment block (NUL-separated, as `/proc/PID/environ`
/// and `KERN_PROCARGS2` lay them out): the value of the first entry named `name`.
#[cfg_attr(not(any(target_os = "linux", target_os = "macos")), allow(dead_code))]
fn lookup(block: &[u8], name: &str) -> Option<OsString> {
    block.split(|&b| b == 0).find_map(|entry| {
        let value = entry.strip_prefix(name.as_bytes())?.strip_prefix(b"=")?;
        Some(os_string(value.to_vec()))
    })
}

#[cfg(unix)]
fn os_string(bytes: Vec<u8>) -> OsString {
    use std::os::unix::ffi::OsStringExt;
    OsString::from_vec(bytes)
}

#[cfg(not(unix))]
fn os_string(bytes: Vec<u8>) -> OsString {
    OsString::from(std::string::String::from_utf8_lossy(&bytes).into_owned())
}

#[cfg(target_os = "linux")]
mod os {
    use std::ffi::OsString;
    use std::format;
    use std::path::PathBuf;

    pub fn executable(pid: u32) -> Option<PathBuf> {
        std::fs::read_link(format!("/proc/{pid}/exe")).ok()
    }

    pub fn parent(pid: u32) -> Option<u32> {
        let stat = std::fs::read(format!("/proc/{pid}/stat")).ok()?;
        // `pid (comm) state ppid ...`: the command name may hold spaces and parentheses, so
        // the fields are counted from the last `)`.
        let after = &stat[stat.iter().rposition(|&b| b == b')')? + 1..];
        let mut fields = after.split(|&b| b == b' ').filter(|f| !f.is_empty());
        let _state = fields.next()?;
        std::str::from_utf8(fields.next()?).ok()?.parse().ok()
    }

    pub fn environment_var(pid: u32, name: &str) -> Option<OsString> {
        super::lookup(&std::fs::read(format!("/proc/{pid}/environ")).ok()?, name)
    }
}

#[cfg(target_os = "macos")]
mod os {
    use std::ffi::OsString;
    use std::path::PathBuf;
    use std::vec::Vec;

    #[allow(unsafe_code)]
    pub fn executable(pid: u32) -> Option<PathBuf> {
        let mut buf = [0u8; libc::PROC_PIDPATHINFO_MAXSIZE as usize];
        let pid = libc::c_int::try_from(pid).ok()?;
        // SAFETY: the buffer is writable for its whole length, which is what we pass.
        let n = unsafe { libc::proc_pidpath(pid, buf.as_mut_ptr().cast(), buf.len() as u32) };
        let n = usize::try_from(n).ok().filter(|&n| n > 0)?;
        Some(PathBuf::from(super::os_string(buf[..n].to_vec())))
    }

    #[allow(unsafe_code)]
    pub fn parent(pid: u32) -> Option<u32> {
        let pid = libc::c_int::try_from(pid).ok()?;
        let size = core::mem::size_of::<libc::proc_bsdinfo>() as libc::c_int;
        // SAFETY: proc_bsdinfo is plain data, so all zeroes is a valid value.
        let mut info: libc::proc_bsdinfo = unsafe { core::mem::zeroed() };
        // SAFETY: `info` is writable for `size` bytes, the size we pass.
        let n = unsafe {
            libc::proc_pidinfo(pid, libc::PROC_PIDTBSDINFO, 0, (&raw mut info).cast(), size)
        };
        (n == size).then_some(info.pbi_ppid)
    }

    #[allow(unsafe_code)]
    pub fn environment_var(pid: u32, name: &str) -> Option<OsString> {
        let mut mib = [libc::CTL_KERN, libc::KERN_PROCARGS2, libc::c_int::try_from(pid).ok()?];
        let mut size: libc::size_t = 0;
        // SAFETY: a null buffer asks only for the size, written to `size`.
        let sized = unsafe {
            libc::sysctl(
                mib.as_mut_ptr(),
                3,
                core::ptr::null_mut(),
                &mut size,
                core::ptr::null_mut(),
                0,
            )
        };
        if sized != 0 || size == 0 {
            return None;
        }
        let mut buf: Vec<u8> = std::vec![0; size];
        // SAFETY: `buf` is writable for `size` bytes; the kernel writes at most that and
        // updates `size` to what it wrote.
        let read = unsafe {
            libc::sysctl(
                mib.as_mut_ptr(),
                3,
                buf.as_mut_ptr().cast(),
                &mut size,
                core::ptr::null_mut(),
                0,
            )
        };
        if read != 0 {
            return None;
        }
        buf.truncate(size);
        // The layout: argc (an int), the executable path, NUL padding, argc arguments, then
        // the environment, every string NUL-terminated.
        let argc = usize::try_from(i32::from_ne_bytes(buf.get(..4)?.try_into().ok()?)).ok()?;
        let mut rest = &buf[4..];
        let skip_string = |rest: &mut &[u8]| -> Option<()> {
            let end = rest.iter().position(|&b| b == 0)?;
            *rest = &rest[end..];
            let padding = rest.iter().position(|&b| b != 0).unwrap_or(rest.len());
            *rest = &rest[padding..];
            Some(())
        };
        skip_string(&mut rest)?;
        for _ in 0..argc {
            let end = rest.iter().position(|&b| b == 0)?;
            rest = &rest[end + 1..];
        }
        super::lookup(rest, name)
    }
}

#[cfg(windows)]
mod os {
    use std::ffi::OsString;
    use std::os::windows::ffi::OsStringExt;
    use std::path::PathBuf;

    use windows_sys::Win32::Foundation::{CloseHandle, INVALID_HANDLE_VALUE};
    use windows_sys::Win32::System::Diagnostics::ToolHelp::{
        CreateToolhelp32Snapshot, PROCESSENTRY32W, Process32FirstW, Process32NextW,
        TH32CS_SNAPPROCESS,
    };
    use windows_sys::Win32::System::Threading::{
        OpenProcess, PROCESS_NAME_WIN32, PROCESS_QUERY_LIMITED_INFORMATION,
        QueryFullProcessImageNameW,
    };

    #[allow(unsafe_code)]
    pub fn executable(pid: u32) -> Option<PathBuf> {
        // SAFETY: plain call; a null handle means failure and is checked.
        let process = unsafe { OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, 0, pid) };
        if process.is_null() {
            return None;
        }
        let mut buf = [0u16; 32_768];
        let mut len = buf.len() as u32;
        // SAFETY: `buf` holds `len` UTF-16 units; the call writes at most that and sets `len`.
        let ok = unsafe {
            QueryFullProcessImageNameW(process, PROCESS_NAME_WIN32, buf.as_mut_ptr(), &mut len)
        };
        // SAFETY: `process` is the handle opened above, closed once.
        unsafe { CloseHandle(process) };
        (ok != 0).then(|| PathBuf::from(OsString::from_wide(&buf[..len as usize])))
    }

    #[allow(unsafe_code)]
    pub fn parent(pid: u32) -> Option<u32> {
        // SAFETY: plain call; INVALID_HANDLE_VALUE means failure and is checked.
        let snapshot = unsafe { CreateToolhelp32Snapshot(TH32CS_SNAPPROCESS, 0) };
        if snapshot == INVALID_HANDLE_VALUE {
            return None;
        }
        // SAFETY: PROCESSENTRY32W is plain data; dwSize is set as the API requires.
        let mut entry: PROCESSENTRY32W = unsafe { core::mem::zeroed() };
        entry.dwSize = core::mem::size_of::<PROCESSENTRY32W>() as u32;
        let mut found = None;
        // SAFETY: `entry` is a valid, sized PROCESSENTRY32W for the snapshot's whole walk.
        let mut more = unsafe { Process32FirstW(snapshot, &mut entry) } != 0;
        while more {
            if entry.th32ProcessID == pid {
                found = Some(entry.th32ParentProcessID);
                break;
            }
            // SAFETY: as above.
            more = unsafe { Process32NextW(snapshot, &mut entry) } != 0;
        }
        // SAFETY: `snapshot` is the handle created above, closed once.
        unsafe { CloseHandle(snapshot) };
        found
    }

    /// Another process's environment is in its own memory on Windows (no OS call reads it
    /// without debugging rights): not offered.
    pub fn environment_var(_pid: u32, _name: &str) -> Option<OsString> {
        None
    }
}

#[cfg(not(any(target_os = "linux", target_os = "macos", windows)))]
mod os {
    use std::ffi::OsString;
    use std::path::PathBuf;

    pub fn executable(_pid: u32) -> Option<PathBuf> {
        None
    }

    pub fn parent(_pid: u32) -> Option<u32> {
        None
    }

    pub fn environment_var(_pid: u32, _name: &str) -> Option<OsString> {
        None
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use std::format;
    use std::process::{Command, Stdio};

    #[test]
    fn this_process_is_described_as_the_os_sees_it() {
        let me = std::process::id();
        assert_eq!(executable(me), std::env::current_exe().ok());
        assert_eq!(parent(me), Some(std::os::unix::process::parent_id()));
        let path = std::env::var_os("PATH");
        assert_eq!(environment_var(me, "PATH"), path);
        assert_eq!(environment_var(me, "JFGUI_SURELY_NOT_SET_ANYWHERE"), None);
    }

    #[test]
    fn the_agent_is_the_first_ancestor_that_is_not_ours() {
        // A child `sleep` whose parent is this test binary: with `sleep` counted as ours, the
        // agent is this process; with nothing ours, it is the child itself.
        let mut child = Command::new("sleep").arg("10").stdin(Stdio::null()).spawn().unwrap();
        let sleep_pid = child.id();
        let me = std::process::id();
        let sleep_exe = executable(sleep_pid).unwrap();
        let ours = |exe: &Path| exe == sleep_exe;
        assert_eq!(agent(sleep_pid, ours), Some((me, std::env::current_exe().unwrap())));
        assert_eq!(agent(sleep_pid, |_| false), Some((sleep_pid, sleep_exe)));
        // Everything ours: the chain ends (at pid 1, whose parent is none) without an agent.
        assert_eq!(agent(sleep_pid, |_| true), None);
        child.kill().unwrap();
        child.wait().unwrap();
        // A process that is gone has no executable and no parent.
        assert_eq!(executable(sleep_pid), None);
        assert_eq!(parent(sleep_pid), None);
    }

    #[test]
    fn a_command_name_with_parentheses_does_not_move_the_parent_field() {
        let dir = std::env::temp_dir().join(format!("jfgui-process-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        // The command name is the last part of the path exec is given, a link's own name.
        let odd = dir.join("a) b (c");
        std::os::unix::fs::symlink("/bin/sleep", &odd).unwrap();
        let mut child = Command::new(&odd).arg("10").spawn().unwrap();
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", child.id())).unwrap();
        assert!(stat.contains(" (a) b (c) "), "{stat}");
        assert_eq!(parent(child.id()), Some(std::process::id()));
        child.kill().unwrap();
        child.wait().unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_environment_block_is_read_entry_by_entry() {
        let block = b"A=1\0DISPLAY=:99\0DISPLAYX=no\0EMPTY=\0";
        assert_eq!(lookup(block, "DISPLAY"), Some(OsString::from(":99")));
        assert_eq!(lookup(block, "EMPTY"), Some(OsString::new()));
        assert_eq!(lookup(block, "DISP"), None);
        assert_eq!(lookup(b"", "A"), None);
    }
}
