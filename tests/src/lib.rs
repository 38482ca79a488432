//! Helpers for the cross-process suites: locate the built binaries, isolated runtime dirs.
