//! The wire core of jfgui-agentd, shared by the daemon, the CLI and every app (`no_std` + `alloc`).
//!
//! | concept | types |
//! |---|---|
//! | strict bounded JSON (SPEC S5) | [`Value`], [`Number`], [`Map`], [`Limits`], [`parse`], [`encode`], [`JsonError`] |
//! | typed messages over strict JSON | [`from_value`], [`to_value`], [`DecodeError`] |
//! | actions and schemas (SPEC S1) | [`ActionSpec`], [`ActionKind`], [`ActionName`], [`validate_registration`], [`Schema`], [`Property`], [`schema`] |
//! | application errors (SPEC S6 error model) | [`ActionError`], [`Reason`], [`ErrorClass`] |
//! | where the sockets live (feature `std`) | `locations` |
//! | which app a name means (ENDPOINT, MCP `app`) | [`resolve`] |
//! | host channel (SPEC S8) | [`channel`]: messages, [`channel::FrameDecoder`], [`channel::encode_frame`] |
//! | client lines (SPEC S6 framing) | [`LineDecoder`], [`Line`] |
//! | revisions (SPEC S6) | [`MAX_REVISION`] |
//!
//! # Why a hand-written JSON parser
//!
//! `serde_json` (without `arbitrary_precision`) turns `123456789012345678901234567890` into a
//! float, rejects `1e400` and rounds `9007199254740993.0`, and it accepts duplicate object keys
//! (last wins). SPEC S5 needs exact number tokens, exact integer conversion, duplicate-key
//! rejection and five bounds enforced *while* parsing. Turning on `arbitrary_precision` would
//! change `serde_json::Number` for the whole workspace through feature unification. So the
//! parser and encoder of [`Value`] are ours; serde's derive does the typed mapping on top of
//! them ([`from_value`] / [`to_value`]), and `serde_json` is only a differential oracle in tests
//! and the baseline of the benchmark (`cargo bench -p jfgui-proto --bench json`), which the strict
//! parser matches in speed.
//!
//! # Rule for typed messages
//!
//! Types decoded with [`from_value`] use externally tagged enums and plain structs with
//! `#[serde(deny_unknown_fields)]`: no `untagged`, internally tagged or `flatten`, because those
//! buffer values in serde's private `Content` and would lose exact number tokens.
#![no_std]
#![cfg_attr(docsrs, feature(doc_cfg))]

extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

mod action;
mod action_error;
pub mod channel;
mod json;
mod line;
#[cfg(feature = "std")]
pub mod locations;
pub mod resolve;
pub mod schema;

pub use action::{
    ActionKind, ActionName, ActionSpec, MAX_ACTION_NAME, NameError, RegistrationError,
    validate_registration,
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
/// numbers as doubles keep them exactly and can send them back as `expectedRevision`
/// (SPEC S6). The daemon refuses params beyond it and treats an app reporting more as broken.
pub const MAX_REVISION: u64 = (1 << 53) - 1;
