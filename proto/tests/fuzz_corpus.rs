//! Replays the committed fuzz corpora (`fuzz/corpus/json_parse/`, `frame_decode/`,
//! `line_decode/`) through the properties of those fuzz targets (`fuzz/common/`, shared with
//! the targets), so CI exercises them on stable without libFuzzer.

use std::path::{Path, PathBuf};

#[path = "../../fuzz/common/json_parse.rs"]
mod json_parse;

#[path = "../../fuzz/common/frame_decode.rs"]
mod frame_decode;

#[path = "../../fuzz/common/line_decode.rs"]
mod line_decode;

#[path = "../../fuzz/common/replay.rs"]
mod replay;

fn corpus(target: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus").join(target)
}

#[test]
fn json_parse_corpus_keeps_the_fuzz_property() {
    replay::replay(&corpus("json_parse"), "json_parse", 1000, json_parse::check);
}

#[test]
fn frame_decode_corpus_keeps_the_fuzz_property() {
    replay::replay(&corpus("frame_decode"), "frame_decode", 500, frame_decode::check);
}

#[test]
fn line_decode_corpus_keeps_the_fuzz_property() {
    replay::replay(&corpus("line_decode"), "line_decode", 100, line_decode::check);
}
