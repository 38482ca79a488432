//! Strict, bounded JSON: the value model, the parser, the encoder, and the serde bridge that
//! maps typed messages onto [`Value`]; [`Payload`] and [`RawJson`] for what the daemon carries
//! on without building its tree.
//!
//! Every byte that crosses a socket in jfgui-agentd goes through [`parse`] and [`encode`]; typed
//! messages are decoded with [`from_value`] after a strict parse and encoded with [`to_value`]
//! before [`encode`], so one set of rules and bounds holds everywhere.

mod de;
mod encode;
mod error;
mod escape;
mod limits;
mod number;
mod parse;
mod payload;
mod raw;
mod scan;
mod ser;
mod stack;
mod text;
mod value;

pub use de::{DecodeError, from_value};
pub use encode::{Encode, encode, encode_into, encode_placed};
pub use error::{JsonError, JsonErrorKind};
pub use escape::write_string;
pub use limits::Limits;
pub use number::Number;
pub(crate) use parse::capture_at;
pub use parse::{parse, parse_with_raw};
pub use payload::Payload;
pub use raw::RawJson;
pub(crate) use raw::Shape;
pub use ser::to_value;
pub use value::{Map, Value};
