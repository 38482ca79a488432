//! Every example of every `jfgui-agent SUBCOMMAND --help`, executed as written: the shell
//! lines through `sh -c` against a fresh daemon and Notepad (`--agent-enable`), in the order
//! the help shows them, and the MCP client configurations (`{"command": ..., "args": [...]}`)
//! started as a client would start them and sent an `initialize`. Each must succeed; commands
//! that run until interrupted (`browser-bridge`, `log --follow`) must still be running after a
//! second and end cleanly on Ctrl-C.
//!
//! The browser subcommands run against a daemon with an open bridge and a scripted tab; what
//! only a running bridge knows is what their examples leave as placeholders (`PORT`, the token
//! `...`, the token file `F` or `/path/to/token`), and those are filled in.

use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::Command;
use std::thread;
use std::time::Duration;

use jfgui_tests::bridge::{AutoBrowser, BridgeRig};
use jfgui_tests::cli::{Run, run_command};
use jfgui_tests::serde_json::{self, Value};
use jfgui_tests::{Daemon, Proc, TempDir, Watchdog, agent, audit_dir, bin_dir, data_dir, notepad};

/// The subcommands `jfgui-agent --help` lists, without `help`.
fn subcommands() -> Vec<String> {
    let help = plain(&["--help"]);
    help.lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_string)
        .collect()
}

/// `jfgui-agent ARGS` without a daemon, expected to succeed (`--help`).
fn plain(args: &[&str]) -> String {
    let out = Command::new(agent()).args(args).output().expect("run jfgui-agent");
    assert!(out.status.success(), "jfgui-agent {args:?}: {out:?}");
    String::from_utf8(out.stdout).expect("UTF-8 help")
}

/// One example of a help text.
#[derive(Debug, PartialEq)]
enum Example {
    /// A line for the shell.
    Shell(String),
    /// An MCP client's server entry.
    Config(Value),
}

/// The examples of one help text: the indented lines after the `Example...` heading (a heading
/// may wrap), a JSON entry possibly over several lines.
fn examples(help: &str) -> Vec<Example> {
    let mut out = Vec::new();
    let mut json = String::new();
    let lines = help.lines().skip_while(|l| !l.starts_with("Example"));
    for line in lines.filter(|l| l.starts_with("  ")) {
        let line = line.trim();
        if json.is_empty() && !line.starts_with('{') {
            out.push(Example::Shell(line.to_string()));
            continue;
        }
        json.push_str(line);
        json.push(' ');
        if let Ok(v) = serde_json::from_str::<Value>(&json) {
            out.push(Example::Config(v));
            json.clear();
        }
    }
    assert!(json.is_empty(), "an example that is not JSON: {json}");
    out
}

/// What the examples run against.
struct World {
    dir: TempDir,
    _daemon: Option<Daemon>,
    _app: Option<Proc>,
    bridge: Option<(BridgeRig, AutoBrowser)>,
}

impl World {
    /// A daemon with Notepad, or for the browser subcommands one with a bridge and a tab.
    fn start(subcommand: &str) -> World {
        let dir = TempDir::new();
        for d in [
            ".cache",
            ".local/share/bash-completion/completions",
            ".local/share/zsh/site-functions",
            ".config/fish/completions",
        ] {
            std::fs::create_dir_all(dir.path().join("home").join(d)).expect("home dirs");
        }
        if subcommand.starts_with("browser-") {
            let rig = BridgeRig::start(&[]);
            let client = rig.connect("Web Notepad", true);
            let tab = AutoBrowser::start(rig.port, &rig.token, &client);
            rig.daemon.wait_endpoint("web-notepad");
            return World { dir, _daemon: None, _app: None, bridge: Some((rig, tab)) };
        }
        let rt = dir.rt();
        let daemon = Daemon::start(&rt, &[]);
        let app = notepad(&rt, &["--agent-enable"]);
        daemon.wait_endpoint("notepad");
        World { dir, _daemon: Some(daemon), _app: Some(app), bridge: None }
    }

    fn rt(&self) -> PathBuf {
        match &self.bridge {
            Some((rig, _)) => rig.daemon.rt.clone(),
            None => self.dir.rt(),
        }
    }

    /// The example with the bridge's port, token and token file in place of the placeholders.
    fn fill_in(&self, text: &str) -> String {
        let Some((rig, _)) = &self.bridge else { return text.to_string() };
        let file = rig.token_file.display().to_string();
        text.replace("PORT", &rig.port.to_string())
            .replace("JFGUI_BRIDGE_TOKEN=...", &format!("JFGUI_BRIDGE_TOKEN={}", rig.token))
            .replace("--token-file F", &format!("--token-file {file}"))
            .replace("/path/to/token", &file)
    }

    /// The environment a user's shell would give: the built binaries on `PATH`, a home.
    fn env(&self, cmd: &mut Command) {
        let path = format!(
            "{}:{}",
            bin_dir().display(),
            std::env::var("PATH").unwrap_or_else(|_| "/usr/bin:/bin".into())
        );
        cmd.current_dir(self.dir.path())
            .env("PATH", path)
            .env("HOME", self.dir.path().join("home"))
            .env("JFGUI_RUNTIME_DIR", self.rt())
            .env_remove("XDG_RUNTIME_DIR")
            .env("XDG_DATA_HOME", data_dir(&self.rt()))
            .env("JFGUI_AUDIT_DIR", audit_dir(&self.rt()));
    }

    fn shell(&self, line: &str) -> Command {
        let mut cmd = Command::new("sh");
        cmd.args(["-c", &self.fill_in(line)]);
        self.env(&mut cmd);
        cmd
    }
}

/// Runs one example; panics, naming it, unless it did what its help says.
fn run_example(world: &World, subcommand: &str, example: &Example) {
    match example {
        Example::Shell(line) if line.contains("browser-bridge") || line.contains("--follow") => {
            until_interrupted(world, subcommand, line);
        }
        Example::Shell(line) => {
            let run = run_command(world.shell(line), b"");
            assert!(run.status.success(), "`{subcommand} --help` example `{line}`: {}", show(&run));
        }
        Example::Config(entry) => {
            assert_eq!(entry["command"], "jfgui-agent", "{subcommand}: {entry}");
            let args: Vec<String> = entry["args"]
                .as_array()
                .unwrap_or_else(|| panic!("{subcommand}: args is not an array: {entry}"))
                .iter()
                .map(|a| world.fill_in(a.as_str().expect("string argument")))
                .collect();
            let mut cmd = Command::new(agent());
            cmd.args(&args);
            world.env(&mut cmd);
            let initialize = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"help-example","version":"1"}}}"#;
            let run = run_command(cmd, format!("{initialize}\n").as_bytes());
            assert!(run.status.success(), "`{subcommand} --help` entry {entry}: {}", show(&run));
            let answer: Value = run
                .stdout
                .lines()
                .next()
                .and_then(|l| serde_json::from_str(l).ok())
                .unwrap_or_else(|| panic!("{subcommand}: no JSON answer: {}", show(&run)));
            assert_eq!(answer["result"]["protocolVersion"], "2025-11-25", "{subcommand}: {answer}");
        }
    }
}

/// A command that serves until Ctrl-C: running after a second, gone cleanly after SIGINT.
fn until_interrupted(world: &World, subcommand: &str, line: &str) {
    let cmd = world.shell(&format!("exec {line}"));
    let log = world.dir.path().join(format!("{subcommand}.log"));
    let mut proc = Proc::spawn(cmd, log);
    thread::sleep(Duration::from_secs(1));
    assert!(proc.try_status().is_none(), "`{line}` ended at once: {}", proc.stderr());
    if subcommand == "browser-bridge" {
        assert!(proc.stderr().contains("\"url\""), "no {{url, token, origin}}: {}", proc.stderr());
    }
    proc.signal("INT");
    let status = proc.wait_exit(Duration::from_secs(20)).expect("ends on SIGINT");
    assert!(
        status.success() || status.signal() == Some(libc::SIGINT),
        "`{line}` after Ctrl-C: {status:?}; stderr: {}",
        proc.stderr()
    );
}

fn show(run: &Run) -> String {
    format!("{:?}\nstdout:\n{}\nstderr:\n{}", run.status, run.stdout, run.stderr)
}

#[test]
fn every_help_example_runs_as_written() {
    let _wd = Watchdog::arm(Duration::from_secs(600));
    let subcommands = subcommands();
    assert!(subcommands.len() >= 15, "too few subcommands in --help: {subcommands:?}");
    let mut ran = 0;
    for sub in &subcommands {
        let examples = examples(&plain(&[sub, "--help"]));
        assert!(!examples.is_empty(), "`jfgui-agent {sub} --help` shows no example");
        let world = World::start(sub);
        for example in &examples {
            run_example(&world, sub, example);
            ran += 1;
        }
    }
    println!("{ran} examples of {} subcommands ran", subcommands.len());
}

#[test]
fn examples_are_read_off_the_help_as_a_reader_sees_them() {
    let help = "Usage: x\n\nExample (MCP client configuration; use the absolute path\nmay not include it):\n  {\"command\": \"jfgui-agent\", \"args\": [\"a\",\n   \"b\"]}\n  jfgui-agent list   # a comment\n";
    assert_eq!(
        examples(help),
        [
            Example::Config(serde_json::json!({"command": "jfgui-agent", "args": ["a", "b"]})),
            Example::Shell("jfgui-agent list   # a comment".into()),
        ]
    );
}
