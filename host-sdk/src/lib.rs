// The crate docs are README.md (also the crates.io page), so its examples run as doc tests.
#![doc = include_str!("../README.md")]
#![no_std]

extern crate alloc;
#[cfg(any(feature = "std", feature = "web", test))]
extern crate std;

pub mod bridge;
pub mod channel;
#[cfg(feature = "std")]
pub mod connector;
mod consent;
#[cfg(feature = "declare")]
#[allow(unsafe_code)] // specs built on the registration's own storage (see declare/store.rs)
pub mod declare;
mod dispatcher;
mod host;
#[cfg(feature = "std")]
pub mod launch;
mod registration;
mod tasks;
#[cfg(test)]
mod test_support;
#[cfg(feature = "testing")]
pub mod testing;

pub use consent::{
    Answer, ConfirmCall, Confirmation, MAX_PENDING_CONFIRMATIONS, MAX_SHOWN_CLAIM, StrayAnswer,
};
pub use dispatcher::{Dispatcher, MAX_BATCH_CALLS, MAX_RESOURCE_CHUNK};
pub use host::{
    Availability, Context, Execution, Host, Origin, ResourceBytes, ResourceData, host_error,
};
pub use jfgui_proto::channel::{
    Activity, Agent, Awaiting, ConsentAnswer, ConsentDecision, Progress, ResourceInfo,
    TaskSnapshot, TaskState,
};
pub use jfgui_proto::{
    ActionError, ActionKind, ActionSpec, ErrorClass, Map, Number, Property, Reason, Schema, Value,
    schema,
};
pub use registration::{MAX_ACTIONS, RENDER_ACTION, RegistrationError};
pub use tasks::{MAX_ACTIVE_TASKS, MAX_FINISHED_TASKS, MAX_TASK_ID, TaskError, TaskTable};
