//! The Notepad example as a web page (`www/`): the same Notepad model as the native
//! `jfgui-notepad` (the `jfgui_example_notepad` library) behind host-sdk's browser-bridge channel,
//! built for `wasm32-unknown-unknown` and driven by the npm package `jfgui-web-host`, which does
//! the HTTP. See `README.md` for the build and the page.
//!
//! | part | file |
//! |---|---|
//! | the page's Notepad, its bridge channel, clock and the user's edits | `page.rs` |
//! | the page's own wasm exports, beside host-sdk's `web_exports!` | `abi.rs` |
//! | the bridge loop: `/connect`, `/poll` → `/result`, `/message`, `/disconnect` | `jfgui-web-host`'s `bridge.js` (`bindings/web`) |
//! | the page: textarea, agent-access checkbox, bridge settings | `www/index.html`, `www/notepad.js` |

mod abi;
mod page;
