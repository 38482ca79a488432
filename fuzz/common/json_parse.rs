//! The property of the `json_parse` fuzz target, shared with the corpus replay in
//! `proto/tests/fuzz_corpus.rs` so both check exactly the same thing.

use jfgui_proto::{Limits, RawJson, encode, parse};

/// The strict parser with the default bounds: whatever it accepts encodes (within the same
/// bounds) and parses back to an equal value, and parsing it as one fragment fails the same way
/// or gives exactly the encoding of that value.
pub fn check(data: &[u8]) {
    let limits = Limits::DEFAULT;
    let (value, fragment) = match (parse(data, &limits), RawJson::parse(data, &limits)) {
        (Ok(value), Ok(fragment)) => (value, fragment),
        (Err(a), Err(b)) => {
            assert_eq!((a.kind(), a.offset()), (b.kind(), b.offset()), "fragment parse differs");
            return;
        }
        (a, b) => panic!("parse and fragment parse disagree: {a:?} vs {b:?}"),
    };
    assert_eq!(fragment.to_value(), value, "fragment is not the value");
    // Escaping can grow a string up to six times, so only the size bound may refuse the
    // re-encoding of an accepted input.
    match encode(&value, &limits) {
        Ok(bytes) => {
            assert!(!bytes.contains(&b'\n'), "literal line break in encoder output");
            let again = parse(&bytes, &limits).expect("encoder output must parse");
            assert_eq!(again, value, "parse(encode(v)) != v");
            assert_eq!(fragment.as_bytes(), bytes, "fragment is not the encoding");
        }
        Err(e) => assert_eq!(e.kind(), jfgui_proto::JsonErrorKind::TooLarge, "{e}"),
    }
}
