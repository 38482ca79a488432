//! Strict, bounded JSON: the value model, the parser, the encoder, and the serde bridge
//! that maps typed messages onto [`Value`].
//!
//! Every byte that crosses a socket in jfgui-agentd goes through [`parse`] and [`encode`]; typed
//! messages are decoded with [`from_value`] after a strict parse and encoded with [`to_value`]
//! before [`encode`], so one set of rules and bounds holds everywhere.

mod de;
mod encode;
mod error;
mod limits;
mod number;
mod parse;
mod raw;
mod scan;
mod ser;
mod stack;
mod value;

pub use de::{DecodeError, from_value};
pub use encode::{encode, encode_into, encode_placed, write_string};
pub use error::{JsonError, JsonErrorKind};
pub use limits::Limits;
pub use number::Number;
pub(crate) use parse::capture_at;
pub use parse::{parse, parse_with_raw};
pub use raw::RawJson;
pub(crate) use raw::Shape;
pub use ser::to_value;
pub use value::{Map, Value};
