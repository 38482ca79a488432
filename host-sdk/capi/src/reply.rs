//! `JfguiReply`: where a callback writes its result. The library owns it; the app gets a
//! pointer that is valid only until its callback returns, and every `jfgui_reply_*` function
//! copies what it is given, so the app's buffers may be freed as soon as the function returns.
//!
//! A reply is written at most once. Which functions fit depends on the callback (its kind);
//! the wrong one returns `JFGUI_STATUS_INVALID_ARGUMENT` and changes nothing. A reply's JSON is
//! bounded by [`APP_JSON_LIMITS`], and what the app reports becomes its [`failure`] or, when it
//! breaks the rules, an [`app_bug`].

use std::format;
use std::rc::Rc;
use std::string::{String, ToString};
use std::vec::Vec;

use jfgui_host_sdk::{ActionError, Reason, ResourceData, ResourceInfo, Value, host_error};
use jfgui_proto::{Limits, from_value, parse};

use crate::ffi::{self, Error, JfguiStatus};
use crate::shared::Shared;

/// Bounds for JSON crossing the boundary in either direction (inputs to callbacks, results
/// from them). Wider than a message on purpose: an output too large for the daemon must reach
/// the endpoint's size check and become `internal/response_too_large` naming the action,
/// not fail earlier as unreadable.
pub(crate) const APP_JSON_LIMITS: Limits = Limits {
    max_bytes: 64 * 1024 * 1024,
    max_depth: 128,
    max_values: 4 * 1024 * 1024,
    max_members: 1024 * 1024,
    max_string_bytes: 64 * 1024 * 1024,
};

/// An internal error for a host bug seen at the boundary (`internal/invalid_reply`).
pub(crate) fn app_bug(message: String) -> ActionError {
    ActionError::new(Reason::InvalidReply, message)
}

/// The app's own failure report: `failed/host_error{code?}`.
pub(crate) fn failure(code: Option<&str>, message: &str) -> ActionError {
    match code {
        Some(code) => host_error(code, message),
        None => ActionError::new(Reason::HostError { code: None }, message),
    }
}

/// Which callback a reply belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Execute,
    Availability,
    Inspect,
    BeginTransaction,
    ListResources,
    ReadResource,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Execute => "execute",
            Kind::Availability => "availability",
            Kind::Inspect => "inspect",
            Kind::BeginTransaction => "begin_transaction",
            Kind::ListResources => "list_resources",
            Kind::ReadResource => "read_resource",
        }
    }
}

/// What a callback wrote.
#[derive(Debug)]
pub(crate) enum Written {
    /// `jfgui_reply_json` for execute and inspect.
    Json(Value),
    /// `jfgui_reply_json` for list_resources.
    Resources(Vec<ResourceInfo>),
    /// `jfgui_reply_deferred`.
    Deferred(String),
    /// `jfgui_reply_error`.
    Error(ActionError),
    /// `jfgui_reply_unavailable`.
    Unavailable { code: String, explanation: String },
    /// `jfgui_reply_resource`.
    Resource(ResourceData),
}

/// A callback's result slot (opaque), owned by the library and valid only while the
/// callback it was passed to runs.
#[derive(Debug)]
pub struct JfguiReply {
    kind: Kind,
    written: Option<Written>,
    /// Why the last `jfgui_reply_*` call on this reply failed, for the internal error of a
    /// callback that then wrote nothing.
    refused: Option<String>,
    shared: Rc<Shared>,
}

impl JfguiReply {
    pub(crate) fn new(kind: Kind, shared: Rc<Shared>) -> JfguiReply {
        JfguiReply { kind, written: None, refused: None, shared }
    }

    /// What was written, if anything.
    pub(crate) fn take(&mut self) -> Option<Written> {
        self.written.take()
    }

    /// "Nothing valid was written" as the internal error of this call.
    pub(crate) fn nothing_written(&self) -> ActionError {
        let why = match &self.refused {
            Some(refused) => format!(" (the last reply was refused: {refused})"),
            None => String::new(),
        };
        app_bug(format!("the app's {} callback returned without a result{why}", self.kind.name()))
    }

    fn write(
        &mut self,
        allowed: &[Kind],
        make: impl FnOnce(Kind) -> Result<Written, Error>,
    ) -> Result<(), Error> {
        let result = if !allowed.contains(&self.kind) {
            Err(Error::new(
                JfguiStatus::InvalidArgument,
                format!(
                    "this reply belongs to the {} callback, which cannot answer this way",
                    self.kind.name()
                ),
            ))
        } else if self.written.is_some() {
            Err(Error::new(JfguiStatus::WrongState, "this reply has already been written"))
        } else {
            make(self.kind).map(|w| self.written = Some(w))
        };
        if let Err(e) = &result {
            self.refused = Some(e.message.clone());
            self.shared.set_last_error(&e.message);
        }
        result
    }

    fn json(&mut self, json: &[u8]) -> Result<(), Error> {
        self.write(&[Kind::Execute, Kind::Inspect, Kind::ListResources], |kind| {
            let value = parse(json, &APP_JSON_LIMITS).map_err(|e| {
                Error::new(JfguiStatus::InvalidJson, format!("the reply is not valid JSON: {e}"))
            })?;
            if kind != Kind::ListResources {
                return Ok(Written::Json(value));
            }
            from_value(value).map(Written::Resources).map_err(|e| {
                Error::new(
                    JfguiStatus::InvalidJson,
                    format!("resources are an array of {{uri, name, mimeType, size?}}: {e}"),
                )
            })
        })
    }

    fn error(&mut self, code: Option<&str>, message: &str) -> Result<(), Error> {
        self.write(
            &[Kind::Execute, Kind::Inspect, Kind::BeginTransaction, Kind::ReadResource],
            |_| Ok(Written::Error(failure(code, message))),
        )
    }
}

/// Writes the JSON result of an `execute` (the action's output), `inspect` (the state) or
/// `list_resources` (an array of `{"uri", "name", "mimeType", "size"?}`) callback.
///
/// Errors: `INVALID_JSON` for anything but strict JSON (for `list_resources`: of that shape),
/// `INVALID_ARGUMENT` in any other callback, `WRONG_STATE` when the reply was already written.
///
/// # Safety
///
/// `reply` is the pointer passed to the running callback; `json` points to `json_len`
/// readable bytes (NULL allowed when `json_len` is 0).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn jfgui_reply_json(
    reply: *mut JfguiReply,
    json: *const u8,
    json_len: usize,
) -> JfguiStatus {
    ffi::guard(|| {
        // SAFETY: the caller passes the reply of the running callback and a readable buffer.
        let (reply, json) = unsafe { (reply_at(reply)?, ffi::bytes(json, json_len, "json")?) };
        reply.json(json)
    })
}

/// Reports that the call failed: `failed/host_error` with the machine-readable `code` (NULL
/// for none, e.g. `"out_of_range"`) and a one-sentence `message`. Fits `execute`, `inspect`,
/// `begin_transaction` (the batch is then not started) and `read_resource`.
///
/// # Safety
///
/// `reply` is the pointer passed to the running callback; `code` and `message` point to
/// `code_len` and `message_len` readable bytes of UTF-8 (NULL allowed when the length is 0;
/// a NULL `code` means no code).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn jfgui_reply_error(
    reply: *mut JfguiReply,
    code: *const u8,
    code_len: usize,
    message: *const u8,
    message_len: usize,
) -> JfguiStatus {
    ffi::guard(|| {
        // SAFETY: as documented above.
        let (reply, code, message) = unsafe {
            let code = if code.is_null() { None } else { Some(ffi::text(code, code_len, "code")?) };
            (reply_at(reply)?, code, ffi::text(message, message_len, "message")?)
        };
        reply.error(code, message)
    })
}

/// Answers an `execute` with deferred work: the library starts task `id` (1 to 128 bytes,
/// unique among the app's known tasks) in state `running` when the callback returns, and the
/// caller gets `{task: {id, state}}`. Report it later with the `jfgui_host_task_*` functions.
/// A task that cannot start (duplicate id, 256 running) turns the call into an error.
///
/// # Safety
///
/// `reply` is the pointer passed to the running callback; `id` points to `id_len` readable
/// bytes of UTF-8.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn jfgui_reply_deferred(
    reply: *mut JfguiReply,
    id: *const u8,
    id_len: usize,
) -> JfguiStatus {
    ffi::guard(|| {
        // SAFETY: as documented above.
        let (reply, id) = unsafe { (reply_at(reply)?, ffi::text(id, id_len, "id")?) };
        reply.write(&[Kind::Execute], |_| Ok(Written::Deferred(id.to_string())))
    })
}

/// Answers an `availability` callback with "not now": the caller gets
/// `not_executed/unavailable{code, explanation}` and nothing runs.
///
/// # Safety
///
/// `reply` is the pointer passed to the running callback; `code` and `explanation` point to
/// readable UTF-8 of the given lengths.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn jfgui_reply_unavailable(
    reply: *mut JfguiReply,
    code: *const u8,
    code_len: usize,
    explanation: *const u8,
    explanation_len: usize,
) -> JfguiStatus {
    ffi::guard(|| {
        // SAFETY: as documented above.
        let (reply, code, explanation) = unsafe {
            (
                reply_at(reply)?,
                ffi::text(code, code_len, "code")?,
                ffi::text(explanation, explanation_len, "explanation")?,
            )
        };
        reply.write(&[Kind::Availability], |_| {
            Ok(Written::Unavailable {
                code: code.to_string(),
                explanation: explanation.to_string(),
            })
        })
    })
}

/// Answers a `read_resource` callback with one chunk: `data` (at most the `limit` asked for;
/// more is cut), the MIME type and the size of the whole resource.
///
/// # Safety
///
/// `reply` is the pointer passed to the running callback; `mime_type` points to readable
/// UTF-8 and `data` to `data_len` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn jfgui_reply_resource(
    reply: *mut JfguiReply,
    mime_type: *const u8,
    mime_type_len: usize,
    data: *const u8,
    data_len: usize,
    total_size: u64,
) -> JfguiStatus {
    ffi::guard(|| {
        // SAFETY: as documented above.
        let (reply, mime_type, data) = unsafe {
            (
                reply_at(reply)?,
                ffi::text(mime_type, mime_type_len, "mime_type")?,
                ffi::bytes(data, data_len, "data")?,
            )
        };
        reply.write(&[Kind::ReadResource], |_| {
            Ok(Written::Resource(ResourceData {
                mime_type: mime_type.to_string(),
                total_size,
                bytes: data.to_vec(),
            }))
        })
    })
}

/// The reply behind a callback's `reply` pointer.
///
/// # Safety
///
/// A non-NULL `ptr` must be the reply passed to the callback that is running now.
unsafe fn reply_at<'a>(ptr: *mut JfguiReply) -> Result<&'a mut JfguiReply, Error> {
    if ptr.is_null() {
        return Err(Error::new(JfguiStatus::InvalidArgument, "reply is NULL"));
    }
    // SAFETY: it is the running callback's reply, which nothing else touches until the
    // callback returns (the library's frame that owns it is suspended in the callback).
    Ok(unsafe { &mut *ptr })
}
