//! The Notepad example's model, shared by the native `jfgui-notepad` binary and the
//! web build in `examples/web-notepad`: the document with its undo history and transactions,
//! the registration, the export task, the PNG rendering, the "last agent action" display
//! refreshed at a bounded rate, and [`Notepad`], the [`Host`](jfgui_host_sdk::Host) that maps
//! the actions onto them and hands the calls that need the user's yes to a [`Prompter`].
//!
//! Nothing here reads a clock of its own (the export task and the display are timed by an
//! injected [`Clock`]), and the only I/O is the display's lines on stderr, so the same code
//! runs behind a socket and in a browser tab.

mod actions;
mod app;
mod document;
mod export;
mod render;
mod status;

pub use app::{Notepad, Prompter, RENDER_URI};
pub use document::Selection;
pub use export::{Clock, EXPORT_MIME, EXPORT_URI};
