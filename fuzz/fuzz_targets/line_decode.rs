//! Fuzz target: the client line decoder fed in odd-sized chunks (at most 143 bytes). Nothing
//! may panic, and the lines must be the same as when the whole input is fed at once (the
//! property lives in `fuzz/common/line_decode.rs`, which the corpus replay test shares).
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../common/line_decode.rs"]
mod property;

fuzz_target!(|data: &[u8]| property::check(data));
