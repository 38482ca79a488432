//! The wasm exports `www/notepad.js` and `www/bridge.js` call: plain `extern "C"` functions over
//! the module's linear memory, no wasm-bindgen.
//!
//! Bytes go in through one input buffer ([`jfgui_input`] sizes it and returns where the page
//! writes; the next call reads it) and come out through one output buffer ([`jfgui_output`],
//! [`jfgui_output_len`]), valid until the next call. Results are numbers: a negative status
//! means failure, with a one-sentence reason in the output. Every body on the bridge is built
//! and read here (strict JSON, exact ids); the script only moves bytes.
//!
//! | export | input | output | returns |
//! |---|---|---|---|
//! | `notepad_init()` | the initial text | error | 0, or -1 |
//! | `jfgui_connect_body()` | | the `/connect` body | its length |
//! | `jfgui_connected()` | the `/connect` answer | error | 0, or -1 |
//! | `jfgui_poll(now_ms)` | a `/poll` answer | error | requests run, or -1 |
//! | `jfgui_tick(now_ms)` | | | ms until the next tick, or -1 for none |
//! | `jfgui_next_post()` | | the body | 0 nothing, 1 `/result`, 2 `/message` |
//! | `jfgui_set_enabled(on)` | | | |
//! | `jfgui_closed()` | | the reason | 1 if the daemon said `bye`, else 0 |
//! | `notepad_edit(start, end)` | the textarea's text | error | 1 changed, 0 not, -1 |
//! | `notepad_view()` | | `{"text", "selection", "revision", "enabled"}` | its length |
//!
//! Times are the page's `performance.now()` in milliseconds; offsets are in characters.
//! Before `notepad_init`, the calls that need the page fail with -1 (or do nothing).

// `#[unsafe(no_mangle)]` is the whole FFI surface: no raw pointer is dereferenced in Rust. The
// page writes into the input buffer's bytes between calls, while no Rust reference to them
// exists.
#![allow(unsafe_code)]

use std::cell::RefCell;
use std::time::Duration;

use jfgui_example_notepad::Selection;
use jfgui_host_sdk::bridge::PostRoute;

use crate::page::Page;

#[derive(Debug, Default)]
struct State {
    page: Option<Page>,
    input: Vec<u8>,
    output: Vec<u8>,
}

thread_local! {
    static STATE: RefCell<State> = RefCell::new(State::default());
}

/// A failed call: the reason goes to the output.
const FAILED: i32 = -1;

fn with<R>(f: impl FnOnce(&mut State) -> R) -> R {
    STATE.with_borrow_mut(f)
}

/// Runs `f` on the page with the input; an error (or no page yet) puts its reason into the
/// output and answers [`FAILED`].
fn call(f: impl FnOnce(&mut Page, &[u8], &mut Vec<u8>) -> Result<i32, String>) -> i32 {
    with(|state| {
        state.output.clear();
        let result = match state.page.as_mut() {
            Some(page) => f(page, &state.input, &mut state.output),
            None => Err("the page has not called notepad_init".into()),
        };
        result.unwrap_or_else(|e| {
            state.output = e.into_bytes();
            FAILED
        })
    })
}

fn millis(ms: f64) -> Duration {
    // NaN and negative times (a confused caller) read as the start; the clock only moves on.
    Duration::try_from_secs_f64(ms / 1000.0).unwrap_or_default()
}

fn length(bytes: &[u8]) -> i32 {
    i32::try_from(bytes.len()).unwrap_or(i32::MAX)
}

/// Makes the input buffer `len` bytes long and returns where the page writes them.
#[unsafe(no_mangle)]
pub extern "C" fn jfgui_input(len: usize) -> *mut u8 {
    with(|state| {
        state.input.clear();
        state.input.resize(len, 0);
        state.input.as_mut_ptr()
    })
}

/// Where the last call's output starts.
#[unsafe(no_mangle)]
pub extern "C" fn jfgui_output() -> *const u8 {
    with(|state| state.output.as_ptr())
}

/// How long the last call's output is.
#[unsafe(no_mangle)]
pub extern "C" fn jfgui_output_len() -> usize {
    with(|state| state.output.len())
}

/// Starts the page with the input (UTF-8) as its document.
#[unsafe(no_mangle)]
pub extern "C" fn notepad_init() -> i32 {
    with(|state| {
        state.output.clear();
        let page = std::str::from_utf8(&state.input)
            .map_err(|_| String::from("the initial text is not UTF-8"))
            .and_then(Page::new);
        match page {
            Ok(page) => {
                state.page = Some(page);
                0
            }
            Err(e) => {
                state.output = e.into_bytes();
                FAILED
            }
        }
    })
}

/// Puts the `/connect` body into the output.
#[unsafe(no_mangle)]
pub extern "C" fn jfgui_connect_body() -> i32 {
    call(|page, _, out| {
        *out = page.connect_body();
        Ok(length(out))
    })
}

/// Reads the `/connect` answer from the input.
#[unsafe(no_mangle)]
pub extern "C" fn jfgui_connected() -> i32 {
    call(|page, input, _| page.connected(input).map(|()| 0).map_err(|e| e.to_string()))
}

/// Runs the `/poll` answer in the input.
#[unsafe(no_mangle)]
pub extern "C" fn jfgui_poll(now_ms: f64) -> i32 {
    call(|page, input, _| {
        let ran = page.poll(input, millis(now_ms)).map_err(|e| e.to_string())?;
        Ok(i32::try_from(ran).unwrap_or(i32::MAX))
    })
}

/// Advances the tasks; returns the milliseconds until the next tick is due, or -1.
#[unsafe(no_mangle)]
pub extern "C" fn jfgui_tick(now_ms: f64) -> f64 {
    with(|state| {
        let next = state.page.as_mut().and_then(|page| page.tick(millis(now_ms)));
        next.map_or(-1.0, |d| d.as_secs_f64() * 1000.0)
    })
}

/// Puts the next body to post into the output: 1 for `/result`, 2 for `/message`, 0 for none.
#[unsafe(no_mangle)]
pub extern "C" fn jfgui_next_post() -> i32 {
    call(|page, _, out| {
        Ok(match page.next_post() {
            None => 0,
            Some(post) => {
                *out = post.body;
                match post.route {
                    PostRoute::Result => 1,
                    PostRoute::Message => 2,
                }
            }
        })
    })
}

/// Turns agent access on (`on` ≠ 0) or off.
#[unsafe(no_mangle)]
pub extern "C" fn jfgui_set_enabled(on: u32) {
    call(|page, _, _| {
        page.set_enabled(on != 0);
        Ok(0)
    });
}

/// 1 (and the reason in the output) once the daemon said `bye`.
#[unsafe(no_mangle)]
pub extern "C" fn jfgui_closed() -> i32 {
    call(|page, _, out| {
        Ok(match page.closed() {
            Some(reason) => {
                *out = reason.as_bytes().to_vec();
                1
            }
            None => 0,
        })
    })
}

/// The user edited: the input is the textarea's whole text, `start`/`end` its selection.
#[unsafe(no_mangle)]
pub extern "C" fn notepad_edit(start: u32, end: u32) -> i32 {
    call(|page, input, _| {
        let text = std::str::from_utf8(input).map_err(|_| String::from("the text is not UTF-8"))?;
        let selection = Selection { start: start as usize, end: end as usize };
        match page.user_edit(text, selection) {
            Ok(changed) => Ok(i32::from(changed)),
            Err(e) => Err(e.message),
        }
    })
}

/// Puts the view (`Page::view`) into the output.
#[unsafe(no_mangle)]
pub extern "C" fn notepad_view() -> i32 {
    call(|page, _, out| {
        *out = page.view();
        Ok(length(out))
    })
}

#[cfg(test)]
mod tests;
