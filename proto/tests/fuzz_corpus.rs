//! Replays the committed fuzz seeds (`fuzz/corpus/json_parse/`, `fuzz/corpus/line_decode/`)
//! through the same properties the `json_parse` and `line_decode` fuzz targets check, so CI
//! exercises them on stable without libFuzzer.

use std::path::Path;

use jfgui_proto::{JsonErrorKind, Limits, RawJson, encode, parse};

#[test]
fn json_parse_seeds_keep_the_fuzz_property() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus/json_parse");
    let mut replayed = 0;
    for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.unwrap().path();
        let data = std::fs::read(&path).unwrap();
        let limits = Limits::DEFAULT;
        let fragment = RawJson::parse(&data, &limits);
        if let Err(e) = parse(&data, &limits) {
            let f = fragment.as_ref().unwrap_err();
            assert_eq!((e.kind(), e.offset()), (f.kind(), f.offset()), "{}", path.display());
        }
        if let Ok(value) = parse(&data, &limits) {
            let fragment = fragment.unwrap();
            assert_eq!(fragment.to_value(), value, "{}", path.display());
            match encode(&value, &limits) {
                Ok(bytes) => {
                    assert!(!bytes.contains(&b'\n'), "{}", path.display());
                    assert_eq!(parse(&bytes, &limits).unwrap(), value, "{}", path.display());
                    assert_eq!(fragment.as_bytes(), bytes, "{}", path.display());
                }
                Err(e) => assert_eq!(e.kind(), JsonErrorKind::TooLarge, "{}", path.display()),
            }
        }
        replayed += 1;
    }
    assert!(replayed >= 10, "only {replayed} seeds in {}", dir.display());
}

#[path = "../../fuzz/common/line_decode.rs"]
mod line_decode;

#[test]
fn line_decode_seeds_keep_the_fuzz_property() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus/line_decode");
    let mut replayed = 0;
    for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.unwrap().path();
        let data = std::fs::read(&path).unwrap();
        line_decode::check(&data);
        replayed += 1;
    }
    assert!(replayed >= 5, "only {replayed} seeds in {}", dir.display());
}
