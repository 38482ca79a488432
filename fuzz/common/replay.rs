//! The corpus replay the stable test suites run (`proto/tests/fuzz_corpus.rs`,
//! `daemon/engine/tests/fuzz_corpus.rs`): every input of a target's committed corpus through
//! that target's property, without libFuzzer.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;

/// Runs `check` on every input in `corpus` (the `target`'s directory), naming the input that
/// breaks it, and fails when there are fewer than `at_least` (a corpus that went missing must
/// not pass as replayed).
pub fn replay(corpus: &Path, target: &str, at_least: usize, check: impl Fn(&[u8])) {
    let mut replayed = 0;
    for entry in std::fs::read_dir(corpus).unwrap_or_else(|e| panic!("{}: {e}", corpus.display())) {
        let path = entry.unwrap().path();
        let data = std::fs::read(&path).unwrap();
        let outcome = catch_unwind(AssertUnwindSafe(|| check(&data)));
        assert!(outcome.is_ok(), "{} breaks the {target} property", path.display());
        replayed += 1;
    }
    assert!(replayed >= at_least, "only {replayed} inputs in {}", corpus.display());
}
