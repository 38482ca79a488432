//! The boundary to the page's script: the app's functions, asked one request at a time in
//! JSON. In the browser that is two wasm imports of module `jfgui` ([`Imports`]); the tests use
//! closures.
//!
//! A request is `{"method": M, "params": P}`; the reply is `{"ok": V}`, `{"error": {"code"?,
//! "message"}}` (the app refused: `failed/host_error`), or `{"bug": MESSAGE}` (the app's
//! function threw something else, or returned what the method does not take: an internal
//! error naming the method). The package's `index.js` builds the replies.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use jfgui_host_sdk::{ActionError, Map, Reason, Value, host_error};
use jfgui_proto::Limits;

/// Bounds for JSON crossing the script boundary either way: far above one bridge message (an
/// output too large for the daemon must reach the endpoint's size check and become
/// `internal/response_too_large`, not fail here as unreadable), within a page's memory.
pub const SCRIPT_JSON_LIMITS: Limits = Limits {
    max_bytes: 16 * 1024 * 1024,
    max_depth: 128,
    max_values: 1024 * 1024,
    max_members: 256 * 1024,
    max_string_bytes: 16 * 1024 * 1024,
};

/// Where the app's functions are.
pub trait Script {
    /// Runs one request (JSON) and returns the reply (JSON). The script keeps its own state;
    /// `&self`, because the trait's readers (revision, availability, ...) ask it too.
    fn call(&self, request: &[u8]) -> Vec<u8>;
}

impl core::fmt::Debug for dyn Script {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("Script")
    }
}

/// An error for a host bug seen at the boundary (`internal/invalid_reply`).
pub fn app_bug(message: String) -> ActionError {
    ActionError::new(Reason::InvalidReply, message)
}

/// Asks `script` for `method` with `params`: the reply's value, or the error it stands for.
pub fn ask(script: &dyn Script, method: &str, params: Map) -> Result<Value, ActionError> {
    let mut request = Map::with_capacity(2);
    request.insert("method", method);
    request.insert("params", params);
    let request =
        jfgui_proto::encode(&Value::Object(request), &SCRIPT_JSON_LIMITS).map_err(|e| {
            app_bug(format!("the request for the app's {method} cannot be encoded: {e}"))
        })?;
    let reply = script.call(&request);
    let reply = jfgui_proto::parse(&reply, &SCRIPT_JSON_LIMITS).map_err(|e| {
        app_bug(format!("the app's {method} answered something that is not strict JSON: {e}"))
    })?;
    let Value::Object(mut reply) = reply else {
        return Err(app_bug(format!(
            "the app's {method} answered something that is not an object"
        )));
    };
    if let Some(value) = reply.remove("ok") {
        return Ok(value);
    }
    if let Some(error) = reply.remove("error") {
        let message = error.get("message").and_then(Value::as_str).unwrap_or("no message given");
        return Err(match error.get("code") {
            Some(Value::String(code)) => host_error(code, message),
            _ => ActionError::new(Reason::HostError { code: None }, message),
        });
    }
    let why = reply.get("bug").and_then(Value::as_str).unwrap_or("an answer of no known shape");
    Err(app_bug(format!("the app's {method} failed: {why}")))
}

/// The page's script, through the imports `jfgui.script_call(ptr, len) -> len` (runs the
/// request at `ptr`, keeps the reply and says how long it is) and `jfgui.script_reply(ptr)`
/// (copies the kept reply to `ptr`). The script never calls back into this module while it
/// runs one of them.
#[cfg(target_arch = "wasm32")]
#[derive(Debug)]
pub struct Imports;

#[cfg(target_arch = "wasm32")]
#[allow(unsafe_code)] // the import declarations and the two calls into the page's script
mod imports {
    #[link(wasm_import_module = "jfgui")]
    unsafe extern "C" {
        pub fn script_call(request: *const u8, len: usize) -> usize;
        pub fn script_reply(into: *mut u8);
    }

    impl super::Script for super::Imports {
        fn call(&self, request: &[u8]) -> alloc::vec::Vec<u8> {
            // SAFETY: the script reads `len` bytes at `request`, a live slice, during the call.
            let len = unsafe { script_call(request.as_ptr(), request.len()) };
            let mut reply = alloc::vec![0u8; len];
            // SAFETY: the script writes exactly the `len` bytes it announced into `reply`,
            // which is that long, during the call.
            unsafe { script_reply(reply.as_mut_ptr()) };
            reply
        }
    }
}

#[cfg(test)]
mod tests {
    use alloc::string::ToString;

    use super::*;

    struct Fixed(&'static str);

    impl Script for Fixed {
        fn call(&self, _: &[u8]) -> Vec<u8> {
            self.0.as_bytes().to_vec()
        }
    }

    fn reason(r: Result<Value, ActionError>) -> String {
        String::from(r.unwrap_err().reason.as_str())
    }

    #[test]
    fn replies_and_what_they_stand_for() {
        let ask = |reply| ask(&Fixed(reply), "execute", Map::new());
        assert_eq!(ask(r#"{"ok":5}"#).unwrap(), Value::from(5u64));
        let e = ask(r#"{"error":{"code":"out_of_range","message":"too far"}}"#).unwrap_err();
        assert_eq!(e.reason.as_str(), "host_error");
        assert!(e.to_string().contains("too far"));
        assert_eq!(reason(ask(r#"{"error":{"message":"no"}}"#)), "host_error");
        for bug in [r#"{"bug":"TypeError: x"}"#, "[]", "nope", r#"{"ok":1,"ok":2}"#, "{}"] {
            assert_eq!(reason(ask(bug)), "invalid_reply", "{bug}");
        }
        let e = ask(r#"{"bug":"TypeError: x"}"#).unwrap_err();
        assert!(e.message.contains("execute") && e.message.contains("TypeError"), "{e}");
    }
}
