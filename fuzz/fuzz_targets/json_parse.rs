//! Fuzz target: the strict parser with the default bounds. Whatever it accepts must encode
//! (within the same bounds) and parse back to an equal value, and parsing it as one fragment
//! (`RawJson::parse`) must fail the same way or give exactly the encoding of that value.
//! (The property lives in `fuzz/common/json_parse.rs`, which the corpus replay test shares.)
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../common/json_parse.rs"]
mod property;

fuzz_target!(|data: &[u8]| property::check(data));
