//! The wasm side of a web app, shared by every app built on [`BridgeChannel`]: the buffer
//! protocol and the `jfgui_*` exports that the `jfgui-web-host` npm package (`WasmApp`,
//! `BridgeLink`) drives, so an app crate writes only what is its own.
//!
//! An app crate (a `cdylib` built for `wasm32-unknown-unknown`, no wasm-bindgen) implements
//! [`WebApp`] for its page state, installs it from an init export of its own with [`init`],
//! writes its other exports with [`call`], and says [`web_exports!`](crate::web_exports) once
//! (the web Notepad's `src/abi.rs` is this, compiled):
//!
//! ```text
//! jfgui_host_sdk::web_exports!(Page);
//!
//! #[unsafe(no_mangle)]
//! pub extern "C" fn notepad_init() -> i32 {
//!     jfgui_host_sdk::bridge::web::init(|input| Page::new(std::str::from_utf8(input)?))
//! }
//! ```
//!
//! Bytes go in through one input buffer ([`input`] sizes it and returns where the script
//! writes; the next call reads it) and come out through one output buffer ([`output`],
//! [`output_len`]), valid until the next call. Results are numbers: a negative status means
//! failure, with a one-sentence reason in the output. Every bridge body is built and read in
//! the wasm, in strict JSON, so 64-bit ids keep their exact value; the script only moves bytes.
//!
//! | export | input | output | returns |
//! |---|---|---|---|
//! | `jfgui_input(len)` | | | where to write `len` bytes |
//! | `jfgui_output()`, `jfgui_output_len()` | | | the last call's output |
//! | `jfgui_connect_body()` | | the `/connect` body | its length |
//! | `jfgui_connected()` | the `/connect` answer | error | 0, or -1 |
//! | `jfgui_poll(now_ms)` | a `/poll` answer | error | requests run, or -1 |
//! | `jfgui_tick(now_ms)` | | | ms until the next tick, or -1 for none |
//! | `jfgui_next_post()` | | the body | 0 nothing, 1 `/result`, 2 `/message` |
//! | `jfgui_set_enabled(on)` | | | |
//! | `jfgui_closed()` | | the reason | 1 if the daemon said `bye`, else 0 |
//!
//! Times are the page's `performance.now()` in milliseconds. Before the app is installed the
//! calls fail with -1 (or do nothing), and so does a call made while the app is running one
//! (from inside a script function the app called): the state is never entered twice.

use alloc::boxed::Box;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::any::Any;
use core::cell::RefCell;
use core::time::Duration;

use super::{BridgeChannel, BridgeError, PostRoute};
use crate::Host;

/// A web app's state behind the exports: its bridge endpoint and the host the endpoint's
/// dispatcher runs requests on.
pub trait WebApp: 'static {
    /// The endpoint and the host, borrowed together.
    fn parts(&mut self) -> (&mut BridgeChannel, &mut dyn Host);

    /// The page's clock moved to `now` (it is told before every poll and tick). Default:
    /// ignored, for apps that keep no time of their own.
    fn set_time(&mut self, now: Duration) {
        let _ = now;
    }

    /// The endpoint alone.
    fn endpoint(&mut self) -> &mut BridgeChannel {
        self.parts().0
    }

    /// Runs a `/poll` answer at time `now`; returns how many requests ran.
    fn poll(&mut self, answer: &[u8], now: Duration) -> Result<usize, BridgeError> {
        self.set_time(now);
        let (link, host) = self.parts();
        link.handle_poll(host, answer)
    }

    /// Advances the tasks to `now`; returns when to tick again.
    fn tick(&mut self, now: Duration) -> Option<Duration> {
        self.set_time(now);
        let (link, host) = self.parts();
        link.tick(host)
    }
}

/// A failed call: the reason is in the output.
pub const FAILED: i32 = -1;

#[derive(Debug, Default)]
struct Buffers {
    input: Vec<u8>,
    output: Vec<u8>,
}

std::thread_local! {
    static BUFFERS: RefCell<Buffers> = RefCell::new(Buffers::default());
    /// The installed app, as the `T: WebApp` that [`init`] was given.
    static APP: RefCell<Option<Box<dyn Any>>> = const { RefCell::new(None) };
}

/// Makes the input buffer `len` bytes long and returns where the script writes them.
pub fn input(len: usize) -> *mut u8 {
    BUFFERS.with_borrow_mut(|b| {
        b.input.clear();
        b.input.resize(len, 0);
        b.input.as_mut_ptr()
    })
}

/// Where the last call's output starts.
pub fn output() -> *const u8 {
    BUFFERS.with_borrow(|b| b.output.as_ptr())
}

/// How long the last call's output is.
pub fn output_len() -> usize {
    BUFFERS.with_borrow(|b| b.output.len())
}

/// Runs `f` with the input and an empty output; its error becomes the output and [`FAILED`].
/// No buffer is borrowed while `f` runs, so the app may call out to the script.
fn with_buffers(f: impl FnOnce(&[u8], &mut Vec<u8>) -> Result<i32, String>) -> i32 {
    let input = BUFFERS.with_borrow_mut(|b| core::mem::take(&mut b.input));
    let mut output = Vec::new();
    let result = f(&input, &mut output);
    BUFFERS.with_borrow_mut(|b| {
        b.input = input;
        match result {
            Ok(status) => {
                b.output = output;
                status
            }
            Err(reason) => {
                b.output = reason.into_bytes();
                FAILED
            }
        }
    })
}

/// Builds the app from the input with `make` and installs it (replacing one installed
/// before); 0, or [`FAILED`] with `make`'s reason.
pub fn init<T: WebApp>(make: impl FnOnce(&[u8]) -> Result<T, String>) -> i32 {
    with_buffers(|input, _| {
        let app = make(input)?;
        APP.with(|slot| match slot.try_borrow_mut() {
            Ok(mut slot) => {
                *slot = Some(Box::new(app));
                Ok(0)
            }
            Err(_) => Err(String::from("the app cannot be replaced while it runs a call")),
        })
    })
}

/// Runs `f` on the installed app with the input and the output (an app's own export). An
/// error, no app yet, or a call from inside a running one answers [`FAILED`] with the reason.
pub fn call<T: WebApp>(f: impl FnOnce(&mut T, &[u8], &mut Vec<u8>) -> Result<i32, String>) -> i32 {
    with_buffers(|input, output| {
        APP.with(|slot| {
            let Ok(mut slot) = slot.try_borrow_mut() else {
                return Err(String::from(
                    "the app is running a call, and this one came from inside it",
                ));
            };
            match slot.as_mut().and_then(|app| app.downcast_mut::<T>()) {
                Some(app) => f(app, input, output),
                None => Err(String::from("no app yet: call the app's init export first")),
            }
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

/// `jfgui_connect_body`: the `/connect` body into the output.
pub fn connect_body<T: WebApp>() -> i32 {
    call::<T>(|app, _, out| {
        *out = app.endpoint().connect_body();
        Ok(length(out))
    })
}

/// `jfgui_connected`: the `/connect` answer from the input.
pub fn connected<T: WebApp>() -> i32 {
    call::<T>(|app, input, _| {
        app.endpoint().connected(input).map(|()| 0).map_err(|e| e.to_string())
    })
}

/// `jfgui_poll`: runs the `/poll` answer in the input.
pub fn poll<T: WebApp>(now_ms: f64) -> i32 {
    call::<T>(|app, input, _| {
        let ran = app.poll(input, millis(now_ms)).map_err(|e| e.to_string())?;
        Ok(i32::try_from(ran).unwrap_or(i32::MAX))
    })
}

/// `jfgui_tick`: advances the tasks; the milliseconds until the next tick is due, or -1.
pub fn tick<T: WebApp>(now_ms: f64) -> f64 {
    let mut next = -1.0;
    call::<T>(|app, _, _| {
        if let Some(d) = app.tick(millis(now_ms)) {
            next = d.as_secs_f64() * 1000.0;
        }
        Ok(0)
    });
    next
}

/// `jfgui_next_post`: the next body to post into the output; 1 for `/result`, 2 for
/// `/message`, 0 for none.
pub fn next_post<T: WebApp>() -> i32 {
    call::<T>(|app, _, out| {
        Ok(match app.endpoint().next_post() {
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

/// `jfgui_set_enabled`: agent access on (`on` ≠ 0) or off; the daemon is told.
pub fn set_enabled<T: WebApp>(on: u32) {
    call::<T>(|app, _, _| {
        app.endpoint().set_enabled(on != 0);
        Ok(0)
    });
}

/// `jfgui_closed`: 1 (and the reason in the output) once the daemon said `bye`.
pub fn closed<T: WebApp>() -> i32 {
    call::<T>(|app, _, out| {
        Ok(match app.endpoint().closed() {
            Some(reason) => {
                *out = reason.as_bytes().to_vec();
                1
            }
            None => 0,
        })
    })
}

/// Defines the `jfgui_*` exports of [`bridge::web`](crate::bridge::web) for the app type
/// `$app` (a [`WebApp`]): `jfgui_input`, `jfgui_output`, `jfgui_output_len`,
/// `jfgui_connect_body`, `jfgui_connected`, `jfgui_poll`, `jfgui_tick`, `jfgui_next_post`,
/// `jfgui_set_enabled`, `jfgui_closed`. Say it once, in the app's `cdylib` crate.
#[macro_export]
macro_rules! web_exports {
    ($app:ty) => {
        /// Makes the input buffer `len` bytes long and returns where to write them.
        #[allow(unsafe_code)] // `no_mangle` is the export itself; nothing is dereferenced
        #[unsafe(no_mangle)]
        pub extern "C" fn jfgui_input(len: usize) -> *mut u8 {
            $crate::bridge::web::input(len)
        }
        /// Where the last call's output starts.
        #[allow(unsafe_code)]
        #[unsafe(no_mangle)]
        pub extern "C" fn jfgui_output() -> *const u8 {
            $crate::bridge::web::output()
        }
        /// How long the last call's output is.
        #[allow(unsafe_code)]
        #[unsafe(no_mangle)]
        pub extern "C" fn jfgui_output_len() -> usize {
            $crate::bridge::web::output_len()
        }
        /// The `/connect` body into the output; its length.
        #[allow(unsafe_code)]
        #[unsafe(no_mangle)]
        pub extern "C" fn jfgui_connect_body() -> i32 {
            $crate::bridge::web::connect_body::<$app>()
        }
        /// Reads the `/connect` answer from the input.
        #[allow(unsafe_code)]
        #[unsafe(no_mangle)]
        pub extern "C" fn jfgui_connected() -> i32 {
            $crate::bridge::web::connected::<$app>()
        }
        /// Runs the `/poll` answer in the input; how many requests ran.
        #[allow(unsafe_code)]
        #[unsafe(no_mangle)]
        pub extern "C" fn jfgui_poll(now_ms: f64) -> i32 {
            $crate::bridge::web::poll::<$app>(now_ms)
        }
        /// Advances the tasks; ms until the next tick, or -1.
        #[allow(unsafe_code)]
        #[unsafe(no_mangle)]
        pub extern "C" fn jfgui_tick(now_ms: f64) -> f64 {
            $crate::bridge::web::tick::<$app>(now_ms)
        }
        /// The next body to post into the output: 1 `/result`, 2 `/message`, 0 none.
        #[allow(unsafe_code)]
        #[unsafe(no_mangle)]
        pub extern "C" fn jfgui_next_post() -> i32 {
            $crate::bridge::web::next_post::<$app>()
        }
        /// Agent access on (`on` ≠ 0) or off.
        #[allow(unsafe_code)]
        #[unsafe(no_mangle)]
        pub extern "C" fn jfgui_set_enabled(on: u32) {
            $crate::bridge::web::set_enabled::<$app>(on)
        }
        /// 1 (and the reason in the output) once the daemon said `bye`.
        #[allow(unsafe_code)]
        #[unsafe(no_mangle)]
        pub extern "C" fn jfgui_closed() -> i32 {
            $crate::bridge::web::closed::<$app>()
        }
    };
}

#[cfg(test)]
mod tests;
