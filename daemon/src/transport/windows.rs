//! Windows named-pipe listeners (ARCHITECTURE "Locations", DEPENDENCIES.md §1):
//! `\\.\pipe\jfgui-agent-<user SID>-host`, `-control` and `-<slug>`, every instance created
//! with the same security descriptor `D:P(A;;GA;;;<user SID>)` (only this user, protected from
//! inherited entries; the default pipe DACL would let Everyone read), the first one with
//! `FILE_FLAG_FIRST_PIPE_INSTANCE` (a squatter that created the name first makes us fail
//! instead of serving under its DACL), and remote clients rejected. The next instance always
//! exists before a connected one is handed over, so the name never disappears.

use std::ffi::c_void;
use std::io;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::windows::named_pipe::{NamedPipeServer, ServerOptions};
use windows_sys::Win32::Foundation::{CloseHandle, ERROR_ACCESS_DENIED, HANDLE, LocalFree};
use windows_sys::Win32::Security::Authorization::{
    ConvertSidToStringSidW, ConvertStringSecurityDescriptorToSecurityDescriptorW, SDDL_REVISION_1,
};
use windows_sys::Win32::Security::{
    GetTokenInformation, PSECURITY_DESCRIPTOR, SECURITY_ATTRIBUTES, TOKEN_QUERY, TOKEN_USER,
    TokenUser,
};
use windows_sys::Win32::System::Pipes::GetNamedPipeClientProcessId;
use windows_sys::Win32::System::Threading::{GetCurrentProcess, OpenProcessToken};

/// An accepted connection (already restricted to this user by the DACL).
pub type Stream = NamedPipeServer;

/// Who is on the other end, for logs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Peer {
    /// The client's process id (`GetNamedPipeClientProcessId`).
    pub pid: Option<u32>,
}

/// How long accept pauses when a new instance cannot be created (out of resources).
const CREATE_BACKOFF: Duration = Duration::from_millis(100);

/// `\\.\pipe\jfgui-agent-<sid>-<suffix>`; `suffix` is `host`, `control` or an app slug.
pub fn pipe_name(sid: &str, suffix: &str) -> String {
    format!(r"\\.\pipe\jfgui-agent-{sid}-{suffix}")
}

/// The DACL of every pipe: full access for `sid` only, no inherited entries.
pub fn sddl_for(sid: &str) -> String {
    format!("D:P(A;;GA;;;{sid})")
}

/// The string SID (`S-1-5-21-...`) of the user running this process.
#[allow(unsafe_code)]
pub fn current_user_sid() -> io::Result<String> {
    // SAFETY: plain Win32 calls with valid out-pointers; the token handle is closed and the
    // string returned by ConvertSidToStringSidW freed with LocalFree on every path. The
    // TOKEN_USER buffer is u64-aligned and as large as GetTokenInformation asked for.
    unsafe {
        let mut token: HANDLE = std::ptr::null_mut();
        if OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &raw mut token) == 0 {
            return Err(io::Error::last_os_error());
        }
        let mut len = 0u32;
        GetTokenInformation(token, TokenUser, std::ptr::null_mut(), 0, &raw mut len);
        let mut buf = vec![0u64; (len as usize).div_ceil(8).max(1)];
        let ok = GetTokenInformation(token, TokenUser, buf.as_mut_ptr().cast(), len, &raw mut len);
        let err = io::Error::last_os_error();
        CloseHandle(token);
        if ok == 0 {
            return Err(err);
        }
        let user = &*buf.as_ptr().cast::<TOKEN_USER>();
        let mut text: *mut u16 = std::ptr::null_mut();
        if ConvertSidToStringSidW(user.User.Sid, &raw mut text) == 0 {
            return Err(io::Error::last_os_error());
        }
        let mut n = 0;
        while *text.add(n) != 0 {
            n += 1;
        }
        let sid = String::from_utf16_lossy(std::slice::from_raw_parts(text, n));
        LocalFree(text.cast());
        Ok(sid)
    }
}

/// A self-relative security descriptor built from SDDL, freed on drop.
#[derive(Debug)]
pub struct SecurityDescriptor(PSECURITY_DESCRIPTOR);

// SAFETY: the descriptor is immutable after creation and only read by CreateNamedPipeW, which
// may happen on any thread.
#[allow(unsafe_code)]
unsafe impl Send for SecurityDescriptor {}
// SAFETY: as above, shared reads only.
#[allow(unsafe_code)]
unsafe impl Sync for SecurityDescriptor {}

impl SecurityDescriptor {
    /// Parses `sddl` (e.g. from [`sddl_for`]).
    #[allow(unsafe_code)]
    pub fn from_sddl(sddl: &str) -> io::Result<SecurityDescriptor> {
        let wide: Vec<u16> = sddl.encode_utf16().chain(Some(0)).collect();
        let mut sd: PSECURITY_DESCRIPTOR = std::ptr::null_mut();
        // SAFETY: `wide` is NUL-terminated and outlives the call; `sd` receives a LocalAlloc'd
        // descriptor that `Drop` frees.
        let ok = unsafe {
            ConvertStringSecurityDescriptorToSecurityDescriptorW(
                wide.as_ptr(),
                SDDL_REVISION_1,
                &raw mut sd,
                std::ptr::null_mut(),
            )
        };
        if ok == 0 { Err(io::Error::last_os_error()) } else { Ok(SecurityDescriptor(sd)) }
    }
}

impl Drop for SecurityDescriptor {
    #[allow(unsafe_code)]
    fn drop(&mut self) {
        // SAFETY: allocated by ConvertStringSecurityDescriptorToSecurityDescriptorW, freed once.
        unsafe { LocalFree(self.0) };
    }
}

/// A named pipe that hands out connected instances.
#[derive(Debug)]
pub struct Listener {
    name: String,
    sd: Arc<SecurityDescriptor>,
    next: NamedPipeServer,
}

/// Why a pipe could not be created.
#[derive(Debug)]
pub enum BindError {
    /// The name exists already: another daemon of this user, or a squatter.
    Taken(String),
    /// Anything else.
    Io(String, io::Error),
}

impl std::fmt::Display for BindError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BindError::Taken(name) => write!(
                f,
                "{name} exists already: another jfgui-agentd of this user is running (or another \
                 program took the name)"
            ),
            BindError::Io(name, e) => write!(f, "cannot create {name}: {e}"),
        }
    }
}

impl std::error::Error for BindError {}

impl Listener {
    /// Creates the first instance of `name` (must run inside the tokio runtime).
    pub fn bind(name: String, sd: Arc<SecurityDescriptor>) -> Result<Listener, BindError> {
        match create(&name, &sd, true) {
            Ok(next) => Ok(Listener { name, sd, next }),
            Err(e) if e.raw_os_error() == Some(ERROR_ACCESS_DENIED as i32) => {
                Err(BindError::Taken(name))
            }
            Err(e) => Err(BindError::Io(name, e)),
        }
    }

    /// The pipe name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Waits for the next client. Never fails: errors are logged and the instance replaced.
    pub async fn accept(&mut self) -> (Stream, Peer) {
        loop {
            let connected = self.next.connect().await;
            // The next instance exists before this one is handed over or dropped.
            let fresh = match create(&self.name, &self.sd, false) {
                Ok(fresh) => fresh,
                Err(e) => {
                    tracing::warn!(pipe = %self.name, error = %e, "cannot create a pipe instance; retrying");
                    tokio::time::sleep(CREATE_BACKOFF).await;
                    continue;
                }
            };
            let instance = std::mem::replace(&mut self.next, fresh);
            match connected {
                Ok(()) => {
                    let peer = Peer { pid: client_pid(&instance) };
                    return (instance, peer);
                }
                // e.g. ERROR_NO_DATA: the client came and went; the instance is spent.
                Err(e) => tracing::debug!(pipe = %self.name, error = %e, "connect failed"),
            }
        }
    }
}

#[allow(unsafe_code)]
fn create(name: &str, sd: &SecurityDescriptor, first: bool) -> io::Result<NamedPipeServer> {
    let mut attrs = SECURITY_ATTRIBUTES {
        nLength: std::mem::size_of::<SECURITY_ATTRIBUTES>() as u32,
        lpSecurityDescriptor: sd.0,
        bInheritHandle: 0,
    };
    // SAFETY: `attrs` points to a valid SECURITY_ATTRIBUTES whose descriptor outlives the call
    // (CreateNamedPipeW copies it into the kernel object).
    unsafe {
        ServerOptions::new()
            .first_pipe_instance(first)
            .reject_remote_clients(true)
            .create_with_security_attributes_raw(name, (&raw mut attrs).cast::<c_void>())
    }
}

#[allow(unsafe_code)]
fn client_pid(pipe: &NamedPipeServer) -> Option<u32> {
    use std::os::windows::io::AsRawHandle;
    let mut pid = 0u32;
    // SAFETY: the handle is live for the borrow; `pid` is a valid out-pointer.
    let ok = unsafe { GetNamedPipeClientProcessId(pipe.as_raw_handle(), &raw mut pid) };
    (ok != 0).then_some(pid)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_dacl() {
        assert_eq!(
            pipe_name("S-1-5-21-1-2-3-1001", "host"),
            r"\\.\pipe\jfgui-agent-S-1-5-21-1-2-3-1001-host"
        );
        assert_eq!(sddl_for("S-1-5-21-1"), "D:P(A;;GA;;;S-1-5-21-1)");
    }
}
