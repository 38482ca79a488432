// The crate docs are README.md (also the crates.io page), so its examples run as doc tests.
#![doc = include_str!("../README.md")]
#![no_std]
#![cfg_attr(docsrs, feature(doc_cfg))]

extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

mod action;
mod action_error;
pub mod channel;
mod json;
#[cfg(feature = "std")]
pub mod launch;
mod line;
#[cfg(feature = "std")]
pub mod locations;
#[cfg(feature = "std")]
pub mod process;
pub mod resolve;
pub mod schema;

pub use action::{
    ActionKind, ActionName, ActionSpec, MAX_ACTION_NAME, MAX_ACTION_TITLE, NameError,
    RegistrationError, TitleError, validate_registration,
};
pub use action_error::{ActionError, AppRef, ErrorClass, Reason};
pub use channel::validate_action_infos;
pub use json::{
    DecodeError, Encode, JsonError, JsonErrorKind, Limits, Map, Number, Payload, RawJson, Value,
    encode, encode_into, encode_placed, from_value, parse, parse_with_raw, to_value, write_string,
};
pub use line::{Line, LineDecoder};
pub use schema::{Property, Schema, SchemaViolation};

/// The largest revision: revisions are JSON integers in `0..=2^53-1`, so clients that hold
/// numbers as doubles keep them exactly and can send them back as `expectedRevision`.
/// The daemon refuses params beyond it and treats an app reporting more as broken.
pub const MAX_REVISION: u64 = (1 << 53) - 1;
