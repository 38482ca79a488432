//! Windows named pipes: every pipe is named by `jfgui_proto::locations::pipe_name` (shared with the
//! connector, so both sides agree), each instance created with a DACL granting the current user SID
//! alone (`D:P(A;;GA;;;SID)`; the default DACL would let Everyone read), remote clients rejected,
//! and the first instance with `FILE_FLAG_FIRST_PIPE_INSTANCE` so nobody can squat a name before
//! us. The DACL is the identity check: another user's open fails before the daemon sees it, so
//! there is no per-accept uid to compare (the client pid is logged).
//!
//! The accept loop keeps one listening instance ready: after a client connects, the next
//! instance (same descriptor) is created before the connected one is handed off.

use std::ffi::c_void;
use std::io;
use std::os::windows::io::AsRawHandle;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use jfgui_proto::locations::{Pipe, current_user_sid, pipe_name};
use tokio::net::windows::named_pipe::{NamedPipeServer, ServerOptions};
use windows_sys::Win32::Foundation::{ERROR_ACCESS_DENIED, HANDLE, LocalFree};
use windows_sys::Win32::Security::Authorization::{
    ConvertStringSecurityDescriptorToSecurityDescriptorW, SDDL_REVISION_1,
};
use windows_sys::Win32::Security::{PSECURITY_DESCRIPTOR, SECURITY_ATTRIBUTES};
use windows_sys::Win32::System::Pipes::GetNamedPipeClientProcessId;

/// An accepted connection (only the current user can have opened it).
pub type Stream = NamedPipeServer;

/// Who is on the other end, for logs and the engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Peer {
    /// Never known on Windows (the DACL already restricted the peer to our SID).
    pub uid: Option<u32>,
    /// The client's pid (`GetNamedPipeClientProcessId`).
    pub pid: Option<u32>,
}

/// How long accept pauses when no new pipe instance can be created (out of resources).
const CREATE_BACKOFF: Duration = Duration::from_millis(100);

/// The current user's pipe namespace and the security descriptor every instance gets.
#[derive(Debug, Clone)]
pub struct PipeSpace(Arc<Space>);

#[derive(Debug)]
struct Space {
    sid: String,
    sd: SecurityDescriptor,
}

impl PipeSpace {
    /// Looks up the user SID and builds the user-only descriptor.
    pub fn new() -> io::Result<PipeSpace> {
        let sid = current_user_sid()?;
        let sd = SecurityDescriptor::from_sddl(&format!("D:P(A;;GA;;;{sid})"))?;
        Ok(PipeSpace(Arc::new(Space { sid, sd })))
    }

    /// The full name of `pipe` in this user's namespace.
    pub fn pipe_name(&self, pipe: Pipe<'_>) -> String {
        pipe_name(&self.0.sid, pipe)
    }

    fn create(&self, pipe: &str, first: bool) -> io::Result<NamedPipeServer> {
        let mut sa = SECURITY_ATTRIBUTES {
            nLength: size_of::<SECURITY_ATTRIBUTES>() as u32,
            lpSecurityDescriptor: self.0.sd.0,
            bInheritHandle: 0,
        };
        let mut options = ServerOptions::new();
        options.first_pipe_instance(first).reject_remote_clients(true);
        create_with_attributes(&options, pipe, &mut sa)
    }
}

#[allow(unsafe_code)]
fn create_with_attributes(
    options: &ServerOptions,
    pipe: &str,
    sa: &mut SECURITY_ATTRIBUTES,
) -> io::Result<NamedPipeServer> {
    // SAFETY: `sa` is a valid SECURITY_ATTRIBUTES whose descriptor (owned by the PipeSpace the
    // caller borrows) outlives the call; CreateNamedPipeW copies what it needs.
    unsafe {
        options.create_with_security_attributes_raw(
            pipe,
            (sa as *mut SECURITY_ATTRIBUTES).cast::<c_void>(),
        )
    }
}

/// A self-relative security descriptor from `ConvertStringSecurityDescriptorToSecurityDescriptorW`,
/// freed with `LocalFree`.
#[derive(Debug)]
struct SecurityDescriptor(PSECURITY_DESCRIPTOR);

// SAFETY: the descriptor is never written after creation; CreateNamedPipeW only reads it.
#[allow(unsafe_code)]
unsafe impl Send for SecurityDescriptor {}
// SAFETY: as for Send: shared read-only use.
#[allow(unsafe_code)]
unsafe impl Sync for SecurityDescriptor {}

impl SecurityDescriptor {
    #[allow(unsafe_code)]
    fn from_sddl(sddl: &str) -> io::Result<SecurityDescriptor> {
        let wide: Vec<u16> = sddl.encode_utf16().chain(Some(0)).collect();
        let mut sd: PSECURITY_DESCRIPTOR = std::ptr::null_mut();
        // SAFETY: `wide` is NUL-terminated and outlives the call; `sd` is a valid out pointer
        // and the size pointer may be null.
        let ok = unsafe {
            ConvertStringSecurityDescriptorToSecurityDescriptorW(
                wide.as_ptr(),
                SDDL_REVISION_1,
                &mut sd,
                std::ptr::null_mut(),
            )
        };
        if ok == 0 { Err(io::Error::last_os_error()) } else { Ok(SecurityDescriptor(sd)) }
    }
}

impl Drop for SecurityDescriptor {
    #[allow(unsafe_code)]
    fn drop(&mut self) {
        // SAFETY: the pointer came from ConvertStringSecurityDescriptorToSecurityDescriptorW,
        // whose documentation says to release it with LocalFree, and is freed once.
        unsafe {
            LocalFree(self.0);
        }
    }
}

/// One pipe name with a listening instance ready.
#[derive(Debug)]
pub struct Listener {
    space: PipeSpace,
    pipe: String,
    path: PathBuf,
    next: Option<NamedPipeServer>,
}

impl Listener {
    /// Creates the first instance of `pipe`; fails with [`is_taken`] when the name already
    /// exists (another daemon, or a squatter).
    pub fn bind(space: &PipeSpace, pipe: Pipe<'_>) -> io::Result<Listener> {
        let pipe = space.pipe_name(pipe);
        let first = space.create(&pipe, true)?;
        Ok(Listener { space: space.clone(), path: PathBuf::from(&pipe), pipe, next: Some(first) })
    }

    /// The pipe name.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Waits for the next client. Never fails: errors are logged and retried.
    pub async fn accept(&mut self) -> (Stream, Peer) {
        loop {
            let server = match self.next.take() {
                Some(server) => server,
                None => match self.space.create(&self.pipe, false) {
                    Ok(server) => server,
                    Err(e) => {
                        tracing::warn!(pipe = %self.pipe, error = %e, "cannot create a pipe instance; retrying");
                        tokio::time::sleep(CREATE_BACKOFF).await;
                        continue;
                    }
                },
            };
            match server.connect().await {
                Ok(()) => {
                    self.next = self.space.create(&self.pipe, false).ok();
                    let pid = client_pid(&server);
                    return (server, Peer { uid: None, pid });
                }
                Err(e) => tracing::debug!(pipe = %self.pipe, error = %e, "pipe connect failed"),
            }
        }
    }
}

/// True when creating a first instance failed because the name exists.
pub fn is_taken(e: &io::Error) -> bool {
    e.raw_os_error() == Some(ERROR_ACCESS_DENIED as i32)
}

#[allow(unsafe_code)]
fn client_pid(server: &NamedPipeServer) -> Option<u32> {
    let mut pid: u32 = 0;
    // SAFETY: the handle is owned by `server`, open for the call; `pid` is a valid out pointer.
    let ok = unsafe { GetNamedPipeClientProcessId(server.as_raw_handle() as HANDLE, &mut pid) };
    (ok != 0).then_some(pid)
}
