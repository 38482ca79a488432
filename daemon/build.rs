//! The optimized daemon's code layout on Linux: the functions it runs at start-up, at idle and
//! per call (link/hot.txt, made by tests/benches/layout.sh) go first, in that order, in an
//! output section of their own. The kernel maps code in 64 KiB fault-around blocks; spread
//! over the whole binary, the few hundred functions an idle daemon runs made it map nearly all
//! of its 3.3 MiB of code (docs/PERFORMANCE.md, "Code layout").
//!
//! A linker script rather than lld's `--symbol-ordering-file`: its section patterns take `*`
//! for the crate hashes in the names, so one list holds for every profile, toolchain and lock
//! update (the hashes change with each), and GNU ld reads it too. The names are v0 ones
//! (.cargo/config.toml), which spell out a generic function's arguments, so the list names the
//! instances that run rather than all of them. mold and gold do not take `INSERT`, so a build
//! that selects either (`-C link-arg=-fuse-ld=...`) is left in the default order.

use std::env;
use std::fmt::Write as _;
use std::fs;
use std::path::Path;

const HOT: &str = "link/hot.txt";

fn main() {
    println!("cargo:rerun-if-changed={HOT}");
    // The v0 check below reads the flags; with `--target`, a change of them rebuilds the target
    // crates but not this (host) script, so ask for a rerun when the user's overrides change.
    println!("cargo:rerun-if-env-changed=RUSTFLAGS");
    println!("cargo:rerun-if-env-changed=CARGO_BUILD_RUSTFLAGS");
    let linux = env::var("CARGO_CFG_TARGET_OS").is_ok_and(|os| os == "linux");
    // Cargo's PROFILE is `release` for every profile that inherits from it (dist, web).
    let optimized = env::var("PROFILE").is_ok_and(|p| p == "release");
    let flags = env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    let other_linker = ["fuse-ld=mold", "fuse-ld=gold"].iter().any(|l| flags.contains(l));
    if !linux || !optimized || other_linker {
        return;
    }
    if !flags.contains("symbol-mangling-version=v0") {
        println!(
            "cargo:warning=jfgui-agentd is built in the default code layout (about 1.5 MiB more \
             resident when idle): it needs -Csymbol-mangling-version=v0, which RUSTFLAGS \
             replaced (.cargo/config.toml)"
        );
        return;
    }
    let hot = fs::read_to_string(HOT).expect("daemon/link/hot.txt (tests/benches/layout.sh)");
    let mut script = String::from("SECTIONS {\n  .text.hot : {\n");
    for function in hot.lines().filter(|l| !l.is_empty() && !l.starts_with('#')) {
        // LLVM puts functions it deems cold (`#[cold]`, panic paths) in `.text.unlikely.*`.
        writeln!(script, "    *(.text.{function} .text.unlikely.{function})").unwrap();
    }
    script.push_str("  }\n}\nINSERT BEFORE .text;\n");
    let out = Path::new(&env::var("OUT_DIR").unwrap()).join("hot.ld");
    fs::write(&out, script).unwrap();
    println!("cargo:rustc-link-arg-bin=jfgui-agentd=-Wl,-T,{}", out.display());
}
