//! Fuzz target: the daemon's side of an app's registration, end to end through the engine
//! (the property lives in `fuzz/common/registration.rs`, which the corpus replay test shares).
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../common/registration.rs"]
mod property;

fuzz_target!(|data: &[u8]| property::check(data));
