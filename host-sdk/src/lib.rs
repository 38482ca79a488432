//! The library every GUI app links to expose semantic actions through jfgui-agentd.
//!
//! An app implements [`Host`] (its actions, revision, capabilities and `execute`, plus
//! optional inspection, transactions, tasks and resources), wraps it in a [`Dispatcher`]
//! that enforces every contract of SPEC S2/S3 before the host runs, and connects the
//! dispatcher to the daemon through a sans-IO [`channel::HostChannel`]. No thread, runtime or
//! protocol knowledge is forced on the app: it pumps the channel from its UI tick, or watches
//! the connector's fd in its own event loop, or uses the small run loop of the `std` feature.
//!
//! | concept | types |
//! |---|---|
//! | the app's side | [`Host`], [`Execution`], [`Availability`], [`Context`], [`host_error`] |
//! | contracts (SPEC S2, S3) | [`Dispatcher`], [`RegistrationError`] |
//! | deferred work (SPEC S4) | [`TaskTable`], [`TaskError`] |
//! | host channel, sans-IO (SPEC S8) | [`channel::HostChannel`], [`channel::Identity`] |
//! | the browser bridge's JSON bodies, sans-IO (SPEC S10) | [`bridge::BridgeChannel`], [`bridge::Post`] |
//! | socket / pipe connector, reconnect, stdio, run loop (`std`) | `connector`: `Connector`, `serve_stdio`, `run` |
//!
//! # Declaring actions
//!
//! Specs and schemas are `static` items built with `const fn`s:
//!
//! ```
//! use jfgui_host_sdk::{ActionSpec, Property, Schema, schema};
//! static INSERT: Schema = Schema::Object {
//!     properties: &[Property { name: "text", schema: &schema::STRING, required: true }],
//!     additional: false,
//! };
//! static ACTIONS: &[ActionSpec] = &[ActionSpec {
//!     capabilities: 0, undo: true, transaction: Some("document"), command_id: Some(100),
//!     ..ActionSpec::write("document.text.insert", "Insert text at the selection")
//!         .schemas(&INSERT, &schema::OBJECT)
//! }];
//! assert_eq!(ACTIONS[0].transaction, Some("document"));
//! ```
//!
//! # `no_std`
//!
//! Without the default `std` feature the crate is `no_std` + `alloc` (it builds for
//! `wasm32-unknown-unknown`, the browser bridge's host side); the dispatcher, the task table
//! and the channel are all there, only the OS connector is not.
#![no_std]

extern crate alloc;
#[cfg(any(feature = "std", test))]
extern crate std;

pub mod bridge;
pub mod channel;
#[cfg(feature = "std")]
pub mod connector;
mod dispatcher;
mod host;
mod registration;
mod tasks;
#[cfg(test)]
mod test_support;

pub use dispatcher::{Dispatcher, MAX_BATCH_CALLS, MAX_RESOURCE_CHUNK};
pub use host::{
    Availability, Context, Execution, Host, Origin, ResourceBytes, ResourceData, host_error,
};
pub use jfgui_proto::channel::{Activity, Progress, ResourceInfo, TaskSnapshot, TaskState};
pub use jfgui_proto::{
    ActionError, ActionKind, ActionSpec, ErrorClass, Map, Number, Property, Reason, Schema, Value,
    schema,
};
pub use registration::{MAX_ACTIONS, RENDER_ACTION, RegistrationError};
pub use tasks::{MAX_ACTIVE_TASKS, MAX_FINISHED_TASKS, MAX_TASK_ID, TaskError, TaskTable};
