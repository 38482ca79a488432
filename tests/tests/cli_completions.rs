//! Dynamic shell completion: endpoint names and the typed endpoint's action names
//! come from the running daemon, through the protocol the scripts of `jfgui-agent completions`
//! speak (`COMPLETE=bash`, the words after `--`), and through a real bash running the
//! registration script; with no daemon there are simply no such candidates, and no output on
//! stderr.

use std::path::Path;
use std::process::Command;

use jfgui_tests::cli::{
    Run, agent_command, daemon_with_notepad, run_agent, run_command, shell_quote,
};
use jfgui_tests::{PATIENCE, TempDir, Watchdog, agent};

/// The candidates `jfgui-agent` offers for the last of `words` (bash protocol).
fn complete(rt: &Path, words: &[&str]) -> Run {
    let mut cmd = agent_command(rt, &["--", "jfgui-agent"]);
    cmd.args(words).env("COMPLETE", "bash").env("_CLAP_COMPLETE_INDEX", words.len().to_string());
    let r = run_command(cmd, b"");
    r.assert_no_panic().assert_code(0);
    assert!(r.stderr.is_empty(), "completion wrote to stderr: {:?}", r.stderr);
    r
}

fn candidates(r: &Run) -> Vec<&str> {
    r.stdout.lines().collect()
}

const ACTIONS: [&str; 9] = [
    "document.text.insert",
    "document.text.replace",
    "document.text.delete",
    "selection.set",
    "edit.undo",
    "edit.redo",
    "document.get",
    "document.export",
    "ui.render",
];

#[test]
fn endpoints_and_actions_come_from_the_running_daemon() {
    let _w = Watchdog::arm(PATIENCE * 3);
    let dir = TempDir::new();
    let rt = dir.rt();
    let (_daemon, _app) = daemon_with_notepad(&rt, &[]);

    let r = complete(&rt, &["call", ""]);
    assert!(candidates(&r).contains(&"notepad"), "{:?}", r.stdout);
    let r = complete(&rt, &["describe", "no"]);
    assert_eq!(candidates(&r), ["notepad"]);

    let r = complete(&rt, &["call", "notepad", ""]);
    for action in ACTIONS {
        assert!(candidates(&r).contains(&action), "{action} missing: {:?}", r.stdout);
    }
    let r = complete(&rt, &["--timeout", "5", "describe", "Notepad", "document.t"]);
    assert_eq!(
        candidates(&r),
        ["document.text.insert", "document.text.replace", "document.text.delete"]
    );
    // Every command taking an ENDPOINT completes it.
    for sub in ["actions", "inspect", "stdio", "tasks", "read", "render", "batch"] {
        assert_eq!(candidates(&complete(&rt, &[sub, "not"])), ["notepad"], "{sub}");
    }
    // Subcommands, and the fixed values, still complete without the daemon's help.
    assert_eq!(candidates(&complete(&rt, &["ren"])), ["render"]);
    assert_eq!(candidates(&complete(&rt, &["tasks", "notepad", "w"])), ["wait"]);
}

#[test]
fn without_a_daemon_there_are_no_candidates_and_no_noise() {
    let _w = Watchdog::arm(PATIENCE * 2);
    let dir = TempDir::new();
    let rt = dir.rt();
    assert!(candidates(&complete(&rt, &["call", "no"])).is_empty());
    assert!(candidates(&complete(&rt, &["call", "notepad", "doc"])).is_empty());
    assert_eq!(candidates(&complete(&rt, &["cal"])), ["call"]);
}

#[test]
fn bash_runs_the_installed_script_against_the_daemon() {
    let _w = Watchdog::arm(PATIENCE * 3);
    let dir = TempDir::new();
    let rt = dir.rt();
    let (_daemon, _app) = daemon_with_notepad(&rt, &[]);
    let script = dir.path().join("jfgui-agent.bash");
    let r = run_agent(&rt, &["completions", "bash"], b"");
    r.assert_code(0);
    std::fs::write(&script, &r.stdout).unwrap();
    // What bash does at TAB: COMP_WORDS/COMP_CWORD set, the registered function called.
    let bin_dir = agent().parent().unwrap().to_path_buf();
    let program = format!(
        "source {}; COMP_WORDS=(jfgui-agent call notepad edit.); COMP_CWORD=3; \
         _clap_complete_jfgui_agent jfgui-agent edit. notepad; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        shell_quote(script.to_str().unwrap())
    );
    let mut cmd = Command::new("bash");
    cmd.args(["--noprofile", "--norc", "-c", &program])
        .env("PATH", format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap_or_default()))
        .env("JFGUI_RUNTIME_DIR", &rt)
        .env_remove("XDG_RUNTIME_DIR");
    let r = run_command(cmd, b"");
    r.assert_code(0);
    assert_eq!(r.stdout.lines().collect::<Vec<_>>(), ["edit.undo", "edit.redo"], "{r:?}");
}
