//! Fuzz target: the host-channel frame decoder fed in odd-sized chunks (at most 143 bytes),
//! each frame body decoded as both message directions. Nothing may panic, and the frames and
//! verdict must be the same as when the whole input is fed at once.
//! (The property lives in `fuzz/common/frame_decode.rs`, which the corpus replay test shares.)
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../common/frame_decode.rs"]
mod property;

fuzz_target!(|data: &[u8]| property::check(data));
