//! Windows transport: the daemon's named pipe `\\.\pipe\jfgui-agent-<user SID>-host`, opened
//! with std's `OpenOptions` (no Windows crate needed for a client pipe), retried through `WaitNamedPipeW` while every
//! instance is busy, and used only once its server process is known to run as our user.
//!
//! Synchronous pipe handles serialise reads and writes on one file object, so a reader thread
//! blocked in `ReadFile` would block our writes. Instead `read` asks `PeekNamedPipe` how many
//! bytes are waiting and reads only those; `wait` therefore sleeps in short slices
//! ([`IDLE_SLICE`]) rather than in the kernel. This is the one place where an idle app wakes
//! up periodically; overlapped I/O would remove it at the cost of much more unsafe code.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::windows::io::AsRawHandle;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, TryRecvError};
use std::time::Duration;
use std::vec;
use std::vec::Vec;

use jfgui_proto::locations::{Pipe, check_pipe_server, current_user_sid, pipe_name};
use windows_sys::Win32::Foundation::{ERROR_BROKEN_PIPE, ERROR_PIPE_BUSY, HANDLE};
use windows_sys::Win32::System::Pipes::{PeekNamedPipe, WaitNamedPipeW};

/// How long `wait` sleeps between checks of the pipe.
pub(crate) const IDLE_SLICE: Duration = Duration::from_millis(50);

/// The daemon's host pipe, named exactly as the daemon names it.
pub(crate) fn default_address() -> io::Result<PathBuf> {
    Ok(PathBuf::from(pipe_name(&current_user_sid()?, Pipe::Host)))
}

/// One connection to the daemon.
#[derive(Debug)]
pub(crate) struct Link {
    pipe: File,
}

impl Link {
    /// Opens the pipe, then checks that its server process runs as our user
    /// (`jfgui_proto::locations::check_pipe_server`) before anything is written.
    pub(crate) fn connect(name: &Path) -> io::Result<Link> {
        for _ in 0..4 {
            match OpenOptions::new().read(true).write(true).open(name) {
                Ok(pipe) => {
                    check_pipe_server(pipe.as_raw_handle() as HANDLE, name)?;
                    return Ok(Link { pipe });
                }
                Err(e) if e.raw_os_error() == Some(ERROR_PIPE_BUSY as i32) => {
                    wait_named_pipe(name, 500);
                }
                Err(e) => return Err(e),
            }
        }
        Err(io::Error::new(
            io::ErrorKind::WouldBlock,
            "every instance of the daemon's pipe is busy",
        ))
    }

    pub(crate) fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match bytes_available(&self.pipe) {
            Ok(0) => Err(io::ErrorKind::WouldBlock.into()),
            Ok(n) => {
                let n = n.min(buf.len());
                self.pipe.read(&mut buf[..n])
            }
            Err(e) if e.raw_os_error() == Some(ERROR_BROKEN_PIPE as i32) => Ok(0),
            Err(e) => Err(e),
        }
    }

    pub(crate) fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        self.pipe.write(data)
    }

    pub(crate) fn wait(
        &self,
        read: bool,
        write: bool,
        timeout: Option<Duration>,
    ) -> io::Result<()> {
        // Writes on a synchronous handle complete in `write`; only reads are waited for.
        let _ = write;
        if read && bytes_available(&self.pipe).map_or(true, |n| n > 0) {
            return Ok(());
        }
        std::thread::sleep(timeout.map_or(IDLE_SLICE, |t| t.min(IDLE_SLICE)));
        Ok(())
    }
}

/// Standard input through a reader thread (console and pipe handles cannot be polled with
/// std); the thread lives for the rest of the headless session.
#[derive(Debug)]
pub(crate) struct StdinSource {
    rx: Receiver<io::Result<Vec<u8>>>,
    pending: Option<io::Result<Vec<u8>>>,
}

impl StdinSource {
    pub(crate) fn new() -> io::Result<StdinSource> {
        let (tx, rx) = mpsc::sync_channel(4);
        std::thread::Builder::new().name("jfgui-stdin".into()).spawn(move || {
            let mut stdin = io::stdin();
            let mut buf = vec![0u8; 64 * 1024];
            loop {
                let r = stdin.read(&mut buf).map(|n| buf[..n].to_vec());
                let end = matches!(&r, Ok(v) if v.is_empty()) || r.is_err();
                if tx.send(r).is_err() || end {
                    break;
                }
            }
        })?;
        Ok(StdinSource { rx, pending: None })
    }

    pub(crate) fn wait(&mut self, timeout: Option<Duration>) -> io::Result<bool> {
        if self.pending.is_some() {
            return Ok(true);
        }
        let got = match timeout {
            None => self.rx.recv().map_err(|_| RecvTimeoutError::Disconnected),
            Some(t) => self.rx.recv_timeout(t),
        };
        match got {
            Ok(r) => {
                self.pending = Some(r);
                Ok(true)
            }
            Err(RecvTimeoutError::Timeout) => Ok(false),
            Err(RecvTimeoutError::Disconnected) => {
                self.pending = Some(Ok(Vec::new()));
                Ok(true)
            }
        }
    }

    pub(crate) fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let chunk = match self.pending.take() {
            Some(r) => r?,
            None => match self.rx.try_recv() {
                Ok(r) => r?,
                Err(TryRecvError::Empty) => return Err(io::ErrorKind::WouldBlock.into()),
                Err(TryRecvError::Disconnected) => Vec::new(),
            },
        };
        let n = chunk.len().min(buf.len());
        buf[..n].copy_from_slice(&chunk[..n]);
        if n < chunk.len() {
            self.pending = Some(Ok(chunk[n..].to_vec()));
        }
        Ok(n)
    }
}

#[allow(unsafe_code)]
fn bytes_available(pipe: &File) -> io::Result<usize> {
    let mut avail: u32 = 0;
    // SAFETY: the handle is owned by `pipe` and open for the call; null buffer pointers with a
    // zero size are allowed by PeekNamedPipe, and `avail` is a valid out pointer.
    let ok = unsafe {
        PeekNamedPipe(
            pipe.as_raw_handle() as HANDLE,
            std::ptr::null_mut(),
            0,
            std::ptr::null_mut(),
            &mut avail,
            std::ptr::null_mut(),
        )
    };
    if ok == 0 { Err(io::Error::last_os_error()) } else { Ok(avail as usize) }
}

#[allow(unsafe_code)]
fn wait_named_pipe(name: &Path, timeout_ms: u32) {
    use std::os::windows::ffi::OsStrExt;
    let wide: Vec<u16> = name.as_os_str().encode_wide().chain(Some(0)).collect();
    // SAFETY: `wide` is a NUL-terminated UTF-16 string that outlives the call. The result only
    // tells whether to retry, which the caller's loop does either way.
    unsafe {
        WaitNamedPipeW(wide.as_ptr(), timeout_ms);
    }
}
