//! Tidiness of the tracked sources and docs, checked as text (no binary is built or run).
//!
//! - **Cite only what the reader has.** Code, comments, crate docs, tests and docs never point
//!   at documents that are not in the repository (the requirement and fault catalogues, their
//!   section and fault ids, issue numbers): they state the rule itself, or link a heading of
//!   `docs/PROTOCOL.md`. Test names say the behaviour they hold, not an id.
//! - **Docs say how things are.** The Markdown files carry no journal: no times of day, no
//!   dated runs, no "this session" or "the ninth pass" (the history is in git).
//!
//! Every offending `file:line` is listed, with what matched, before the test fails.

use std::path::Path;
use std::process::Command;

use regex_lite::Regex;

/// Files that may contain what the rules look for: this file spells the patterns out, the lock
/// file and the official MCP schemas are not ours to word, and binary files are not text.
fn exempt(path: &str) -> bool {
    path == "tests/tests/tidy.rs"
        || path.ends_with("Cargo.lock")
        || path.ends_with("package-lock.json")
        || path.starts_with("tests/mcp-clients/schema/")
}

/// A citation of a document users never get, in any tracked text file.
const CITATIONS: &[(&str, &str)] = &[
    (r"\b(SPEC|FAULTS)\b", "names a requirement document that is not in the repository"),
    (r"\b(WIRE|DEPENDENCIES|STYLE)\.md\b", "names a document that is not in the repository"),
    (r"\b[Ii]ssues? #?[0-9]+|\bissue_[0-9]+", "cites an issue number"),
    (r"\bS(1[0-9]|[1-9])\b(\.[0-9]+)?", "cites a requirement section"),
    (r"§ ?[0-9A-Z]", "cites a section of a document"),
    (r"\bfn [a-h][0-9]{1,2}_", "a test named after a fault id"),
];

/// Journal words in the Markdown docs. Dates are allowed where they are MCP protocol revisions
/// (and inside timestamps printed by a command, `2026-01-01T...`).
const JOURNAL: &[(&str, &str)] = &[
    (r"\b([01]?[0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9])? ?(UTC|GMT|CET|CEST)\b", "a time of day"),
    (r"\bat ([01]?[0-9]|2[0-3]):[0-5][0-9]\b", "a time of day"),
    (
        r"(?i)\b(this|that|previous|last|next|earlier|later|first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth) (work |working )?session\b",
        "a work session",
    ),
    (
        r"(?i)\b(this|that|previous|last|next|first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth) pass\b",
        "a pass of work",
    ),
];

/// Dates that are MCP protocol revisions, or the made-up one an example sends to show the
/// answer to an unknown revision.
const PROTOCOL_REVISIONS: &[&str] =
    &["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28", "2099-01-01"];

/// Markdown files whose dates are facts of the file, not a journal: a changelog dates its
/// releases.
fn dates_allowed(path: &str) -> bool {
    path.ends_with("CHANGELOG.md")
}

#[test]
fn nothing_cites_documents_users_do_not_have_and_docs_keep_no_journal() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("workspace root");
    let citations = compile(CITATIONS);
    let journal = compile(JOURNAL);
    let date = Regex::new(r"\b20[0-9]{2}-[01][0-9]-[0-3][0-9]\b(T)?").expect("date pattern");
    let mut found = Vec::new();
    for path in tracked_files(root) {
        if exempt(&path) {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(root.join(&path)) else {
            continue; // not UTF-8: a binary file (an image), not prose
        };
        let markdown = path.ends_with(".md");
        for (index, line) in text.lines().enumerate() {
            let at =
                |what: &str, matched: &str| format!("{path}:{}: {what}: {matched:?}", index + 1);
            for (re, what) in &citations {
                if let Some(m) = re.find(line) {
                    found.push(at(what, m.as_str()));
                }
            }
            if !markdown {
                continue;
            }
            for (re, what) in &journal {
                if let Some(m) = re.find(line) {
                    found.push(at(what, m.as_str()));
                }
            }
            if dates_allowed(&path) {
                continue;
            }
            for c in date.captures_iter(line) {
                let day = c.get(0).expect("match").as_str().trim_end_matches('T');
                if c.get(1).is_none() && !PROTOCOL_REVISIONS.contains(&day) {
                    found.push(at("a dated run", day));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "{} lines cite what users do not have or keep a journal:\n{}",
        found.len(),
        found.join("\n")
    );
}

fn compile(rules: &[(&str, &'static str)]) -> Vec<(Regex, &'static str)> {
    rules
        .iter()
        .map(|(pattern, what)| {
            (Regex::new(pattern).unwrap_or_else(|e| panic!("{pattern}: {e}")), *what)
        })
        .collect()
}

/// The files git tracks (what a clone has), relative to the workspace root.
fn tracked_files(root: &Path) -> Vec<String> {
    let out = Command::new("git")
        .args(["ls-files", "-z"])
        .current_dir(root)
        .output()
        .unwrap_or_else(|e| panic!("the tidy test needs git to list the tracked files: {e}"));
    assert!(out.status.success(), "git ls-files failed: {}", String::from_utf8_lossy(&out.stderr));
    let files: Vec<String> = out
        .stdout
        .split(|&b| b == 0)
        .filter(|p| !p.is_empty())
        .map(|p| String::from_utf8_lossy(p).into_owned())
        .collect();
    assert!(files.iter().any(|f| f == "README.md"), "git ls-files listed no README.md in {root:?}");
    files
}
