//! Windows identity: the current user's SID (the per-user part of every pipe name, looked up
//! here once so the daemon, which creates the pipes, and the clients, which open them, cannot
//! disagree), and the client-side check of a pipe's server process (it must
//! run as our user).
//!
//! What [`check_pipe_server`] verifies: `GetNamedPipeServerProcessId` on the open pipe gives
//! the server's pid; `OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION)` and
//! `OpenProcessToken(TOKEN_QUERY)` open its token; the token's user SID
//! (`GetTokenInformation(TokenUser)`) must equal ours. The pipe name already carries our SID
//! and the daemon's DACL admits only us, but a pipe name is first come, first served: another
//! user (or a process of another session) could create `jfgui-agent-<our SID>-host` before our
//! daemon does. A server whose process cannot be opened (another user's elevated or protected
//! process) is refused as well: what cannot be verified is not trusted.

use std::io;
use std::path::Path;
use std::string::String;
use std::vec;

use windows_sys::Win32::Foundation::{CloseHandle, HANDLE, LocalFree};
use windows_sys::Win32::Security::Authorization::ConvertSidToStringSidW;
use windows_sys::Win32::Security::{GetTokenInformation, TOKEN_QUERY, TOKEN_USER, TokenUser};
use windows_sys::Win32::System::Pipes::GetNamedPipeServerProcessId;
use windows_sys::Win32::System::Threading::{
    GetCurrentProcess, OpenProcess, OpenProcessToken, PROCESS_QUERY_LIMITED_INFORMATION,
};

use super::Refusal;

/// The current user's SID (`S-1-5-21-...`), read from our own process token.
#[allow(unsafe_code)]
pub fn current_user_sid() -> io::Result<String> {
    // SAFETY: GetCurrentProcess returns a pseudo handle that needs no closing.
    process_user_sid(unsafe { GetCurrentProcess() })
}

/// Checks that the server end of the open pipe `pipe` (a handle from `CreateFileW` or tokio's
/// `ClientOptions::open`, named `name` in the refusal) belongs to a process running as our
/// user. Call it after opening the pipe and before writing to it.
#[allow(unsafe_code)]
pub fn check_pipe_server(pipe: HANDLE, name: &Path) -> io::Result<()> {
    let refuse = |found: String| Refusal::PipeServer { pipe: name.into(), found }.into_io();
    let mut pid: u32 = 0;
    // SAFETY: `pipe` is an open pipe handle owned by the caller for the duration of the call,
    // and `pid` is a valid out pointer.
    if unsafe { GetNamedPipeServerProcessId(pipe, &mut pid) } == 0 {
        let e = io::Error::last_os_error();
        return Err(refuse(std::format!("its server process id cannot be read: {e}")));
    }
    // SAFETY: OpenProcess takes no pointers; a null result is an error, a handle is closed
    // below on every path.
    let process = unsafe { OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, 0, pid) };
    if process.is_null() {
        let e = io::Error::last_os_error();
        return Err(refuse(std::format!("server pid {pid} cannot be opened: {e}")));
    }
    let owner = process_user_sid(process);
    // SAFETY: `process` is the handle OpenProcess returned; closed once.
    unsafe { CloseHandle(process) };
    let owner = owner
        .map_err(|e| refuse(std::format!("the owner of server pid {pid} cannot be read: {e}")))?;
    let me = current_user_sid()?;
    if owner == me {
        Ok(())
    } else {
        Err(refuse(std::format!("server pid {pid} runs as {owner}, we are {me}")))
    }
}

/// The user SID of `process` as a string: OpenProcessToken, GetTokenInformation(TokenUser),
/// ConvertSidToStringSidW.
#[allow(unsafe_code)]
fn process_user_sid(process: HANDLE) -> io::Result<String> {
    // SAFETY: every pointer passed is valid for its call: `process` is open for the call, the
    // token handle is closed before returning, the TOKEN_USER buffer is sized by the first
    // GetTokenInformation call and u64-aligned, and the string from ConvertSidToStringSidW is
    // read up to its NUL and then released with LocalFree, as its documentation requires.
    unsafe {
        let mut token: HANDLE = core::ptr::null_mut();
        if OpenProcessToken(process, TOKEN_QUERY, &mut token) == 0 {
            return Err(io::Error::last_os_error());
        }
        let mut len: u32 = 0;
        GetTokenInformation(token, TokenUser, core::ptr::null_mut(), 0, &mut len);
        let mut buf = vec![0u64; (len as usize).div_ceil(8).max(1)];
        let ok = GetTokenInformation(token, TokenUser, buf.as_mut_ptr().cast(), len, &mut len);
        let err = io::Error::last_os_error();
        CloseHandle(token);
        if ok == 0 {
            return Err(err);
        }
        let user = &*(buf.as_ptr() as *const TOKEN_USER);
        let mut wide: *mut u16 = core::ptr::null_mut();
        if ConvertSidToStringSidW(user.User.Sid, &mut wide) == 0 {
            return Err(io::Error::last_os_error());
        }
        let mut n = 0;
        while *wide.add(n) != 0 {
            n += 1;
        }
        let sid = String::from_utf16_lossy(core::slice::from_raw_parts(wide, n));
        LocalFree(wide.cast());
        Ok(sid)
    }
}
