//! Imports point one way: no module of any crate in the workspace refers to a sibling module
//! that refers back to it, directly or through other siblings (a parent and its own children
//! excepted). `jfgui_tests::imports` reads the sources; this suite walks every crate.

use std::fs;
use std::path::{Path, PathBuf};

use jfgui_tests::TempDir;
use jfgui_tests::imports::{Crate, crate_roots};

/// The workspace's package directories (the root manifest's `members`), and the fuzz targets'
/// own workspace.
fn packages() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("workspace root");
    let manifest = fs::read_to_string(root.join("Cargo.toml")).expect("root Cargo.toml");
    let members = manifest
        .lines()
        .find_map(|l| l.trim().strip_prefix("members = ["))
        .expect("a one-line members list");
    let mut dirs: Vec<PathBuf> =
        members.split('"').skip(1).step_by(2).map(|member| root.join(member)).collect();
    dirs.push(root.join("fuzz"));
    dirs
}

/// Every crate of the package in `dir`: its root files that are no other root's module.
fn crates(dir: &Path) -> Vec<Crate> {
    let read: Vec<Crate> = crate_roots(dir)
        .iter()
        .map(|root| Crate::read(root).unwrap_or_else(|e| panic!("{e}")))
        .collect();
    let modules: Vec<PathBuf> = read.iter().flat_map(|c| c.module_files()).collect();
    read.into_iter().filter(|c| !modules.contains(&c.root().to_path_buf())).collect()
}

#[test]
fn no_crate_has_an_import_cycle_between_sibling_modules() {
    let mut report = String::new();
    let mut walked = 0;
    for dir in packages() {
        for krate in crates(&dir) {
            walked += 1;
            for cycle in krate.cycles() {
                report.push_str(&cycle.to_string());
            }
        }
    }
    assert!(walked >= 10, "only {walked} crates found: is the members list read right?");
    assert!(report.is_empty(), "import cycles between sibling modules:\n{report}");
}

/// Writes `files` (path, text) under a fresh dir and reads the crate rooted at `lib.rs`.
fn synthetic(files: &[(&str, &str)]) -> (TempDir, Crate) {
    let dir = TempDir::new();
    for (path, text) in files {
        let file = dir.path().join(path);
        fs::create_dir_all(file.parent().unwrap()).unwrap();
        fs::write(file, text).unwrap();
    }
    let krate = Crate::read(&dir.path().join("lib.rs")).unwrap();
    (dir, krate)
}

#[test]
fn a_cycle_through_a_re_export_or_a_macro_is_found_and_parents_and_children_are_not_one() {
    let (_dir, krate) = synthetic(&[
        ("lib.rs", "mod a; mod b; mod c; pub use a::Thing;"),
        // a → b through a macro's tokens; a's child uses its parent and its grandparent.
        ("a.rs", "mod inner; pub struct Thing; fn f() { m!(crate::b::g()); }"),
        ("a/inner.rs", "use super::Thing; use crate::Thing as T;"),
        // b → a through the root's re-export of `a::Thing`.
        ("b.rs", "use super::Thing; pub fn g() {}"),
        // c → a only: not in the cycle.
        ("c.rs", "use crate::a;"),
    ]);
    let cycles = krate.cycles();
    assert_eq!(cycles.len(), 1, "{cycles:?}");
    assert_eq!(cycles[0].parent, Vec::<String>::new());
    assert_eq!(cycles[0].children, ["a", "b"]);
    assert_eq!(cycles[0].evidence.len(), 2);

    let (_dir, krate) = synthetic(&[
        ("lib.rs", "mod a; mod b; use a::x;"),
        ("a.rs", "pub fn x() {} #[cfg(test)] mod tests { use super::*; use crate::b::y; }"),
        ("b.rs", "pub fn y() {} fn z() { super::a::x(); }"),
    ]);
    // b → a; a's test module → b is no dependency of a (nothing imports a test module).
    assert!(krate.cycles().is_empty(), "{:?}", krate.cycles());
    let (_dir, krate) = synthetic(&[
        ("lib.rs", "mod a; mod b;"),
        ("a.rs", "pub fn x() {} fn w() { crate::b::y(); }"),
        ("b.rs", "pub fn y() {} fn z() { super::a::x(); }"),
    ]);
    assert_eq!(krate.cycles().len(), 1, "a → b → a in function bodies");
    let (_dir, krate) = synthetic(&[
        ("lib.rs", "mod a; mod b;"),
        ("a.rs", "pub fn x() {}"),
        ("b.rs", "fn z() { super::a::x(); }"),
    ]);
    assert!(krate.cycles().is_empty(), "b → a alone is no cycle");
}
