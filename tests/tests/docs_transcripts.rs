//! The docs' transcripts, executed: every `$ jfgui-agent ...` line of a `text` block in
//! `README.md` and `docs/*.md` runs in a terminal (what the reader's shell would do) against a
//! real daemon and Notepad, and the screen must show what the doc shows after it, line for
//! line. The blocks of one file run in order against one fresh daemon and Notepad
//! (`jfgui-notepad --agent-enable`), so each file reads as one session; `$ echo $?` checks the
//! exit code of the command before it.
//!
//! What may differ, and nothing else: process ids (the daemon's, Notepad's and the CLI's own),
//! the calling agent in the audit table (`bash[PID]`: the program that ran the CLI, the reader's
//! shell or this suite), timestamps (`2026-01-01T00:00:00.000Z`), the runtime directory
//! (shown as `/run/user/UID/jfgui-agent`) and how many spaces align a column. Blocks marked
//! `<!-- transcript: NAME -->` drive another app and are executed by
//! `tests/other-languages/test_docs.py` instead.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use jfgui_tests::terminal::run_in_terminal;
use jfgui_tests::{Daemon, Proc, TempDir, Watchdog, audit_dir, bin_dir, notepad};
use regex_lite::Regex;

/// One `$ ...` line of a doc and what the doc shows after it.
#[derive(Debug)]
struct Step {
    /// `file:line`, for failure messages.
    at: String,
    command: String,
    expected: Vec<String>,
}

/// The transcripts of one Markdown file, in order.
fn transcripts(path: &Path, text: &str) -> Vec<Step> {
    let mut steps = Vec::new();
    let mut lines = text.lines().enumerate();
    let mut skip_next = false;
    while let Some((_, line)) = lines.next() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("<!-- transcript:") {
            skip_next = true;
            continue;
        }
        let Some(lang) = trimmed.strip_prefix("```") else { continue };
        let indent = line.len() - trimmed.len();
        let mut block = Vec::new();
        for (n, l) in lines.by_ref() {
            if l.trim() == "```" {
                break;
            }
            block.push((n + 1, l.get(indent..).unwrap_or(l.trim_start())));
        }
        if std::mem::take(&mut skip_next) || lang != "text" {
            continue;
        }
        if !block.iter().any(|(_, l)| l.starts_with("$ jfgui-agent ")) {
            continue;
        }
        for (n, l) in block {
            if let Some(command) = l.strip_prefix("$ ") {
                let at = format!("{}:{n}", path.display());
                steps.push(Step { at, command: command.to_string(), expected: Vec::new() });
            } else if let Some(step) = steps.last_mut() {
                step.expected.push(l.to_string());
            } else {
                panic!("{}:{n}: a transcript block must start with `$ `", path.display());
            }
        }
    }
    steps
}

/// A fresh daemon with one Notepad, and a home and a working directory for the commands.
struct World {
    dir: TempDir,
    daemon: Daemon,
    app: Proc,
    last_status: Option<i32>,
}

impl World {
    fn start() -> World {
        let dir = TempDir::new();
        let rt = dir.rt();
        let daemon = Daemon::start(&rt, &[]);
        let app = notepad(&rt, &["--agent-enable"]);
        daemon.wait_endpoint("notepad");
        std::fs::create_dir_all(dir.path().join("home")).expect("home");
        World { dir, daemon, app, last_status: None }
    }

    /// `command` through `sh -c` in a terminal, with the built binaries first on `PATH`.
    fn run(&mut self, command: &str) -> Vec<String> {
        let path = format!(
            "{}:{}",
            bin_dir().display(),
            std::env::var("PATH").unwrap_or_else(|_| "/usr/bin:/bin".into())
        );
        let mut cmd = Command::new("sh");
        cmd.args(["-c", command])
            .current_dir(self.dir.path())
            .env("PATH", path)
            .env("HOME", self.dir.path().join("home"))
            .env("TERM", "xterm-256color")
            .env("JFGUI_RUNTIME_DIR", self.dir.rt())
            .env_remove("XDG_RUNTIME_DIR")
            .env("JFGUI_AUDIT_DIR", audit_dir(&self.dir.rt()));
        let screen = run_in_terminal(cmd);
        self.last_status = screen.status.code();
        screen.lines
    }

    /// `line` with what differs between runs replaced by placeholders.
    fn normalize_actual(&self, line: &str) -> String {
        let mut line = line.replace(&self.dir.rt().display().to_string(), "<RT>");
        for pid in [self.daemon.proc.pid(), self.app.pid()] {
            let re = Regex::new(&format!(r"\b{pid}\b")).expect("pid pattern");
            line = re.replace_all(&line, "<PID>").into_owned();
        }
        common(&line)
    }
}

/// What both sides normalize alike: timestamps and the calling agent with its pid.
fn common(line: &str) -> String {
    let time = Regex::new(r"\b20[0-9]{2}-[0-9]{2}-[0-9]{2}T[0-9:]{8}(\.[0-9]+)?Z").unwrap();
    let agent = Regex::new(r"[A-Za-z0-9_.+-]+\[[0-9]+\]").unwrap();
    let line = time.replace_all(line, "<TIME>");
    agent.replace_all(&line, "<AGENT>[<PID>]").into_owned()
}

fn normalize_expected(line: &str) -> String {
    let rt = Regex::new(r"/run/user/[0-9]+/jfgui-agent").unwrap();
    common(&rt.replace_all(line, "<RT>"))
}

/// The line as tokens: runs of spaces, runs of digits, `<PID>`, and everything else.
fn tokens(line: &str) -> Vec<String> {
    let re = Regex::new(r"\s+|<PID>|[0-9]+|[^\s0-9<]+|<").unwrap();
    re.find_iter(line).map(|m| m.as_str().to_string()).collect()
}

/// Whether the doc's line matches the screen's: the same tokens, except that any run of
/// spaces matches any other and `<PID>` on the screen matches a number in the doc.
fn matches(expected: &str, actual: &str) -> bool {
    let (e, a) = (tokens(expected), tokens(actual));
    e.len() == a.len()
        && e.iter().zip(&a).all(|(e, a)| {
            e == a
                || (e.trim().is_empty() && a.trim().is_empty())
                || (a == "<PID>" && e.bytes().all(|b| b.is_ascii_digit()))
        })
}

fn check_file(path: &Path, steps: &[Step]) {
    let mut world = World::start();
    for step in steps {
        let shown = if step.command == "echo $?" {
            vec![world.last_status.map_or("killed".into(), |c| c.to_string())]
        } else {
            assert!(
                step.command.starts_with("jfgui-agent "),
                "{}: only `jfgui-agent ...` and `echo $?` can be executed: {}",
                step.at,
                step.command
            );
            world.run(&step.command)
        };
        let actual: Vec<String> = shown.iter().map(|l| world.normalize_actual(l)).collect();
        let expected: Vec<String> = step.expected.iter().map(|l| normalize_expected(l)).collect();
        let same = expected.len() == actual.len()
            && expected.iter().zip(&actual).all(|(e, a)| matches(e, a));
        assert!(
            same,
            "{}: `{}` printed something else than {} shows.\n--- the doc:\n{}\n--- the screen:\n{}",
            step.at,
            step.command,
            path.display(),
            step.expected.join("\n"),
            shown.join("\n")
        );
    }
}

#[test]
fn every_cli_transcript_in_the_readme_and_docs_prints_what_it_shows() {
    let _wd = Watchdog::arm(Duration::from_secs(300));
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("workspace root");
    let mut files: Vec<PathBuf> = vec![root.join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .expect("docs/")
        .map(|e| e.expect("docs entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    files.extend(docs);
    let mut total = 0;
    for file in &files {
        let text = std::fs::read_to_string(file).expect("read the doc");
        let steps = transcripts(file.strip_prefix(root).unwrap_or(file), &text);
        total += steps.len();
        if !steps.is_empty() {
            check_file(file, &steps);
        }
    }
    let readme = std::fs::read_to_string(root.join("README.md")).expect("README.md");
    assert!(
        !transcripts(Path::new("README.md"), &readme).is_empty(),
        "README.md has no transcript: the quick start is expected to show one"
    );
    println!("{total} transcript commands executed in {} files", files.len());
}

#[test]
fn placeholders_and_alignment_are_all_that_may_differ() {
    assert!(matches("notepad   yes      22934  9", "notepad yes <PID> 9"));
    assert!(matches("{\"pid\":21579}", "{\"pid\":<PID>}"));
    assert!(!matches("revision: 2", "revision: 3"));
    assert!(!matches("Hello, world", "Hello,world"));
    assert!(!matches("{\"pid\":21579}", "{\"pid\":21580}"));
    assert_eq!(
        normalize_expected("2026-12-03T11:24:17.978Z  bash[15179]"),
        "<TIME>  <AGENT>[<PID>]"
    );
}
