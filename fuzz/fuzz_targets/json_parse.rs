//! Fuzz target: the strict parser with the default bounds. Whatever it accepts must encode
//! (within the same bounds) and parse back to an equal value.
#![no_main]

use jfgui_proto::{Limits, encode, parse};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let limits = Limits::DEFAULT;
    let Ok(value) = parse(data, &limits) else { return };
    // Escaping can grow a string up to six times, so only the size bound may refuse the
    // re-encoding of an accepted input.
    match encode(&value, &limits) {
        Ok(bytes) => {
            assert!(!bytes.contains(&b'\n'), "literal line break in encoder output");
            let again = parse(&bytes, &limits).expect("encoder output must parse");
            assert_eq!(again, value, "parse(encode(v)) != v");
        }
        Err(e) => assert_eq!(e.kind(), jfgui_proto::JsonErrorKind::TooLarge, "{e}"),
    }
});
