//! The current user's SID as a string: the per-user part of every pipe name, looked up here
//! once so the daemon (which creates the pipes) and the connector (which opens them) cannot
//! disagree.

use std::io;
use std::string::String;
use std::vec;

use windows_sys::Win32::Foundation::{CloseHandle, HANDLE, LocalFree};
use windows_sys::Win32::Security::Authorization::ConvertSidToStringSidW;
use windows_sys::Win32::Security::{GetTokenInformation, TOKEN_QUERY, TOKEN_USER, TokenUser};
use windows_sys::Win32::System::Threading::{GetCurrentProcess, OpenProcessToken};

/// The current user's SID (`S-1-5-21-...`): OpenProcessToken, GetTokenInformation(TokenUser),
/// ConvertSidToStringSidW.
#[allow(unsafe_code)]
pub fn current_user_sid() -> io::Result<String> {
    // SAFETY: every pointer passed is valid for its call: the token handle is closed before
    // returning, the TOKEN_USER buffer is sized by the first GetTokenInformation call and
    // u64-aligned, and the string from ConvertSidToStringSidW is read up to its NUL and then
    // released with LocalFree, as its documentation requires.
    unsafe {
        let mut token: HANDLE = core::ptr::null_mut();
        if OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &mut token) == 0 {
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
