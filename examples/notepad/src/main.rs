//! `jfgui-notepad`: a GUI-less model of a text editor that registers with jfgui-agentd (the
//! example app the README's quick start and every cross-process test use).
//!
//! Under `JFGUI_HOST_CHANNEL=stdio` (or `--agent-stdio`) it runs headless: the host channel on
//! stdin/stdout, enabled, until stdin ends. Otherwise it connects to the user's daemon
//! (`host.sock` in the runtime dir), reconnecting whenever the daemon restarts, enabled only
//! with `--agent-enable`. Diagnostics and prompts go to stderr; stdout carries only frames.
//! A call that needs the user's yes is answered as `--confirm` says (`terminal.rs`).
//! `--let-agents-start on|off` writes or removes its launch file and exits; a Notepad the
//! daemon started from it (`JFGUI_ACTIVATED=1`) registers enabled.

mod args;
mod terminal;

use std::io;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use jfgui_example_notepad::{Clock, Notepad};
use jfgui_host_sdk::Dispatcher;
use jfgui_host_sdk::channel::{HostChannel, Identity};
use jfgui_host_sdk::connector::{Connector, DEFAULT_BUDGET, headless_requested, serve_stdio};
use jfgui_host_sdk::launch::{let_agents_start_me, started_by_agent, stop_letting_agents_start};

use crate::args::{Command, USAGE};

/// The process's monotonic clock, from when it started.
#[derive(Debug)]
struct SystemClock(Instant);

impl Clock for SystemClock {
    fn now(&self) -> Duration {
        self.0.elapsed()
    }
}

fn main() -> ExitCode {
    let args = match args::parse(std::env::args_os().skip(1)) {
        Ok(Command::Run(a)) => a,
        Ok(Command::Help) => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("jfgui-notepad: {e}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    if let Some(on) = args.let_agents_start {
        return let_agents_start(&args.name, on);
    }
    let clock = Box::new(SystemClock(Instant::now()));
    let app = match Notepad::new(&args.text, args.export_time, clock) {
        Ok(app) => app,
        Err(e) => {
            eprintln!("jfgui-notepad: --text: {}", e.message);
            return ExitCode::from(2);
        }
    };
    let headless = args.agent_stdio || headless_requested();
    let (prompter, typed) = terminal::prompter(args.confirm, headless);
    let mut app = app.with_prompter(prompter);
    let mut dispatcher = match Dispatcher::new(&app) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("jfgui-notepad: invalid registration: {e}");
            return ExitCode::FAILURE;
        }
    };
    // Running headless is the user's explicit enable: whoever started
    // `jfgui-agent headless APP` asked for agent access.
    // Started by the daemon from the launch file: the file is the user's yes.
    let activated = started_by_agent();
    let enabled = headless || args.agent_enable || activated;
    dispatcher.set_enabled(enabled);
    let identity = Identity { display_name: args.name.clone(), pid: std::process::id() };
    // Ask for the daemon's `activity` notices (unless `--no-activity`): the app reports each
    // on stderr.
    let channel = HostChannel::new(dispatcher, identity);
    let channel =
        if args.activity { channel.and_then(HostChannel::with_activity) } else { channel };
    let channel = match channel {
        Ok(e) => e,
        Err(e) => {
            eprintln!("jfgui-notepad: {e}");
            return ExitCode::FAILURE;
        }
    };

    if headless {
        return match serve_stdio(&mut app, channel) {
            Ok(()) => ExitCode::SUCCESS,
            // The peer went away while we were answering: the same as stdin EOF.
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("jfgui-notepad: host channel on stdio: {e}");
                ExitCode::FAILURE
            }
        };
    }

    let mut connector = match Connector::new(channel) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("jfgui-notepad: cannot locate the daemon: {e}");
            return ExitCode::FAILURE;
        }
    };
    eprintln!(
        "jfgui-notepad: {} ({}), daemon socket {}",
        args.name,
        match (activated, enabled) {
            (true, _) => "started by an agent: agent access enabled",
            (false, true) => "agent access enabled",
            (false, false) => "agent access disabled",
        },
        connector.address().display()
    );
    let e = serve(&mut connector, &mut app, typed.as_ref());
    eprintln!("jfgui-notepad: {e}");
    ExitCode::FAILURE
}

/// `--let-agents-start on|off`: the launch file starts this program with the other arguments
/// it was given now (literally; no shell).
fn let_agents_start(name: &str, on: bool) -> ExitCode {
    let result = if on {
        let mut kept = Vec::new();
        let mut args = std::env::args().skip(1);
        while let Some(arg) = args.next() {
            match arg.as_str() {
                "--let-agents-start" => {
                    args.next();
                }
                a if a.starts_with("--let-agents-start=") => {}
                _ => kept.push(arg),
            }
        }
        let kept: Vec<&str> = kept.iter().map(String::as_str).collect();
        let_agents_start_me(name, &kept)
            .map(|path| format!("agents may start {name} ({})", path.display()))
    } else {
        stop_letting_agents_start(name).map(|removed| {
            if removed {
                format!("agents may no longer start {name}")
            } else {
                format!("agents could not start {name}")
            }
        })
    };
    match result {
        Ok(message) => {
            eprintln!("jfgui-notepad: {message}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("jfgui-notepad: {e}");
            ExitCode::FAILURE
        }
    }
}

/// How often the loop looks for an answer typed on the terminal while a prompt is open.
const ANSWER_POLL: Duration = Duration::from_millis(100);

/// host-sdk's `connector::run`, plus the answers typed on the terminal: handed to the
/// channel at once (their update goes out, and a yes runs at the poll after). Returns only
/// when waiting itself fails.
fn serve(
    connector: &mut Connector,
    app: &mut Notepad,
    typed: Option<&terminal::Typed>,
) -> io::Error {
    loop {
        let mut wait = connector.poll(app, DEFAULT_BUDGET);
        if let Some(typed) = typed {
            let answers = typed.take();
            for (ticket, answer) in &answers {
                if let Err(e) = connector.channel_mut().answer(ticket, *answer) {
                    eprintln!("jfgui-notepad: the answer to {ticket} was ignored: {e}");
                }
            }
            if !answers.is_empty() {
                continue;
            }
            if typed.asking() {
                wait.timeout = Some(wait.timeout.map_or(ANSWER_POLL, |t| t.min(ANSWER_POLL)));
            }
        }
        // Work due now (requests beyond the budget, an allowed call, a retry): no wait.
        if wait.timeout == Some(Duration::ZERO) {
            continue;
        }
        if let Err(e) = connector.wait(&wait) {
            return e;
        }
    }
}
