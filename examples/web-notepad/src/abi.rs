//! The web Notepad's own wasm exports, beside the `jfgui_*` ones every web app gets from
//! host-sdk (`web_exports!`, the buffer protocol of `jfgui_host_sdk::bridge::web`): plain
//! `extern "C"` functions over the module's linear memory, no wasm-bindgen.
//!
//! | export | input | output | returns |
//! |---|---|---|---|
//! | `notepad_init()` | the initial text | error | 0, or -1 |
//! | `notepad_edit(start, end)` | the textarea's text | error | 1 changed, 0 not, -1 |
//! | `notepad_view()` | | `{"text", "selection", "revision", "enabled"}` | its length |
//!
//! Offsets are in characters. Before `notepad_init`, every call but `jfgui_input` fails with
//! -1 (or does nothing).

// `#[unsafe(no_mangle)]` is the whole FFI surface: no raw pointer is dereferenced here.
#![allow(unsafe_code)]

use jfgui_example_notepad::Selection;
use jfgui_host_sdk::bridge::web;

use crate::page::Page;

jfgui_host_sdk::web_exports!(Page);

/// Starts the page with the input (UTF-8) as its document.
#[unsafe(no_mangle)]
pub extern "C" fn notepad_init() -> i32 {
    web::init(|input| {
        let text = std::str::from_utf8(input)
            .map_err(|_| String::from("the initial text is not UTF-8"))?;
        Page::new(text)
    })
}

/// The user edited: the input is the textarea's whole text, `start`/`end` its selection.
#[unsafe(no_mangle)]
pub extern "C" fn notepad_edit(start: u32, end: u32) -> i32 {
    web::call::<Page>(|page, input, _| {
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
    web::call::<Page>(|page, _, out| {
        *out = page.view();
        Ok(i32::try_from(out.len()).unwrap_or(i32::MAX))
    })
}

#[cfg(test)]
mod tests;
