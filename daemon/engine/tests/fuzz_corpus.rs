//! Replays the committed corpus of the `registration` fuzz target (`fuzz/corpus/registration/`)
//! through its property (`fuzz/common/registration.rs`, shared with the target), so CI
//! exercises the daemon's side of a registration with it on stable without libFuzzer.

use std::path::Path;

#[path = "../../../fuzz/common/registration.rs"]
mod registration;

#[path = "../../../fuzz/common/replay.rs"]
mod replay;

#[test]
fn registration_corpus_keeps_the_fuzz_property() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus/registration");
    replay::replay(&corpus, "registration", 500, registration::check);
}
