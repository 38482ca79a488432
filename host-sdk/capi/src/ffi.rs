//! The boundary rules every exported function follows: a status code for every outcome,
//! no unwinding out (each body runs under `catch_unwind`), and checked conversion of the C
//! side's pointer-and-length strings and output buffers.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::string::String;

/// The result of every `jfgui_*` function. On an error the handle's last error message
/// (`jfgui_host_last_error`) says what happened.
#[repr(i32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JfguiStatus {
    /// Success.
    Ok = 0,
    /// A NULL or dangling-looking argument, a string that is not UTF-8, an ABI version or
    /// callback table the library does not accept, or a reply function that does not fit
    /// the callback.
    InvalidArgument = 1,
    /// Text that is not strict JSON (unique keys, valid UTF-8 and escapes, within the size
    /// bounds).
    InvalidJson = 2,
    /// The action declarations break a registration rule (invalid or duplicate name,
    /// duplicate command id, unsupported schema keyword, ...); the message names the action.
    InvalidRegistration = 3,
    /// Not possible in the handle's current state (e.g. `connect` before the actions are
    /// declared, `pump` before `connect`, a reply written twice).
    WrongState = 4,
    /// Called from inside one of this handle's callbacks, where it is not allowed (only the
    /// `jfgui_reply_*`, `jfgui_host_last_error` and, inside `execute` and `tick`, the
    /// `jfgui_host_task_*` functions are).
    Reentrant = 5,
    /// An operating-system error (the runtime dir cannot be resolved, stdio failed).
    Io = 6,
    /// A task operation was refused (unknown task, already finished, invalid or duplicate id).
    Task = 7,
    /// A bug inside the library was caught; the handle refuses every further call except
    /// `jfgui_host_close` and `jfgui_host_last_error`.
    Internal = 8,
}

/// An error status with its message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Error {
    pub(crate) status: JfguiStatus,
    pub(crate) message: String,
}

impl Error {
    pub(crate) fn new(status: JfguiStatus, message: impl Into<String>) -> Error {
        Error { status, message: message.into() }
    }
}

/// Runs an exported function's body: an unwind becomes [`JfguiStatus::Internal`].
pub(crate) fn guard(body: impl FnOnce() -> Result<(), Error>) -> JfguiStatus {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => JfguiStatus::Ok,
        Ok(Err(e)) => e.status,
        Err(_) => JfguiStatus::Internal,
    }
}

/// `len` bytes at `ptr` (NULL is fine for an empty buffer).
///
/// # Safety
///
/// A non-NULL `ptr` must point to `len` readable bytes that stay unchanged for `'a`.
pub(crate) unsafe fn bytes<'a>(ptr: *const u8, len: usize, what: &str) -> Result<&'a [u8], Error> {
    if len == 0 {
        return Ok(&[]);
    }
    if ptr.is_null() || len > isize::MAX as usize {
        return Err(Error::new(
            JfguiStatus::InvalidArgument,
            std::format!("{what} is NULL (or longer than memory) but its length is {len}"),
        ));
    }
    // SAFETY: non-NULL, length within isize::MAX, and readable for `'a` by the contract.
    Ok(unsafe { std::slice::from_raw_parts(ptr, len) })
}

/// [`bytes`] that must be UTF-8.
///
/// # Safety
///
/// As for [`bytes`].
pub(crate) unsafe fn text<'a>(ptr: *const u8, len: usize, what: &str) -> Result<&'a str, Error> {
    // SAFETY: forwarded contract.
    let b = unsafe { bytes(ptr, len, what) }?;
    std::str::from_utf8(b).map_err(|e| {
        Error::new(JfguiStatus::InvalidArgument, std::format!("{what} is not UTF-8: {e}"))
    })
}

/// Stores `value` through an out-pointer.
///
/// # Safety
///
/// A non-NULL `out` must be valid for a write of `T`.
pub(crate) unsafe fn put<T>(out: *mut T, value: T, what: &str) -> Result<(), Error> {
    if out.is_null() {
        return Err(Error::new(JfguiStatus::InvalidArgument, std::format!("{what} is NULL")));
    }
    // SAFETY: non-NULL and writable by the contract.
    unsafe { out.write(value) };
    Ok(())
}

/// Copies `text` into the caller's buffer `buf` of `capacity` bytes, cut at a character
/// boundary if it does not fit, and stores the full length in `*len` (so a caller can retry
/// with a larger buffer). `buf` may be NULL when `capacity` is 0.
///
/// # Safety
///
/// A non-NULL `buf` must be writable for `capacity` bytes; `len` must be valid for a write.
pub(crate) unsafe fn copy_out(
    text: &str,
    buf: *mut u8,
    capacity: usize,
    len: *mut usize,
) -> Result<(), Error> {
    let mut n = text.len().min(capacity);
    while !text.is_char_boundary(n) {
        n -= 1;
    }
    if n > 0 {
        if buf.is_null() {
            return Err(Error::new(
                JfguiStatus::InvalidArgument,
                "buf is NULL but capacity is not 0",
            ));
        }
        // SAFETY: `buf` is writable for `capacity >= n` bytes and cannot overlap `text`, which
        // the library owns.
        unsafe { std::ptr::copy_nonoverlapping(text.as_ptr(), buf, n) };
    }
    // SAFETY: forwarded contract.
    unsafe { put(len, text.len(), "len") }
}
