//! Links `jfgui-agentd` with packed relative relocations (`DT_RELR`, the linker's
//! `-z pack-relative-relocs`) where the toolchain and the C library support them. The binary
//! is position-independent, so the loader adjusts every pointer in its tables at start-up:
//! with the usual RELA format it reads 24 bytes per pointer (110 KB for 4500 pointers, all
//! resident once read), with RELR a 1.4 KB bitmap; the idle daemon is about 0.17 MiB smaller
//! (docs/PERFORMANCE.md, "Idle memory"). Nothing else changes.
//!
//! glibc loads RELR binaries since 2.36, and the linker records that need
//! (`GLIBC_ABI_DT_RELR`), so an older glibc refuses the binary with a clear message. Whether
//! this machine can is probed: an empty C program with one such pointer is linked with the
//! flag (any message from the linker, such as an older one's "option ignored", counts as no)
//! and run. Without support, or when cross-compiling, the binary is linked as before.

use std::path::Path;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let env = |k: &str| std::env::var(k).unwrap_or_default();
    let native = env("TARGET") == env("HOST");
    if native && env("CARGO_CFG_TARGET_OS") == "linux" && env("CARGO_CFG_TARGET_ENV") == "gnu" {
        let out = std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR");
        if relr_works(Path::new(&out)) {
            println!("cargo:rustc-link-arg-bin=jfgui-agentd=-Wl,-z,pack-relative-relocs");
        }
    }
}

/// Links and runs the probe with the C compiler Rust links with (`cc` unless configured).
fn relr_works(dir: &Path) -> bool {
    let linker = std::env::var("RUSTC_LINKER").unwrap_or_else(|_| "cc".into());
    let source = dir.join("relr-probe.c");
    let program = dir.join("relr-probe");
    // `p` holds an address, which a position-independent program only gets through a
    // relative relocation: if the loader skipped it, the read below would fault.
    let probe = "static int x;\nint *p = &x;\nint main(void) { return *p; }\n";
    if std::fs::write(&source, probe).is_err() {
        return false;
    }
    let linked = Command::new(linker)
        .args(["-fPIE", "-pie", "-Wl,-z,pack-relative-relocs", "-o"])
        .arg(&program)
        .arg(&source)
        .output()
        .is_ok_and(|o| o.status.success() && o.stderr.is_empty());
    linked && Command::new(&program).status().is_ok_and(|s| s.success())
}
