//! Usage errors (exit 2). clap's message becomes the one-line report every failure gets,
//! keeping clap's suggestions and tips ("a similar subcommand exists: 'call'", "to pass
//! '--text' as a value, use '-- --text'") and pointing at the help of the subcommand being
//! parsed; under `--json` the error object also goes to stdout, as for every other failure.

use std::ffi::OsString;

use clap::CommandFactory;
use clap::error::ErrorKind;

use crate::cmd::Cli;
use crate::exit::{Exit, Failure};
use crate::output::{self, Format};

/// Reports `e` and exits: help and version as clap renders them (exit 0), a missing
/// subcommand with clap's help on stderr (exit 2), any other usage error as one line (exit 2).
pub fn exit_with(e: &clap::Error) -> ! {
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => e.exit(),
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = e.print();
            std::process::exit(Exit::Usage as i32);
        }
        kind => {
            let args: Vec<OsString> = std::env::args_os().collect();
            let help = help_command(&args);
            let failure = Failure::usage(reason(kind), one_line(&e.render().to_string(), &help));
            let format = if json_requested(args) { Format::Json } else { Format::Human };
            output::report(&failure, format);
            std::process::exit(Exit::Usage as i32);
        }
    }
}

/// The help to point at: that of the subcommand being parsed (found by a lenient parse, as
/// the arguments hold an error), else the top-level one.
fn help_command(args: &[OsString]) -> String {
    let sub = Cli::command()
        .ignore_errors(true)
        .try_get_matches_from(args)
        .ok()
        .and_then(|m| m.subcommand_name().map(String::from));
    match sub {
        Some(sub) => format!("jfgui-agent {sub} --help"),
        None => String::from("jfgui-agent --help"),
    }
}

/// clap's multi-line rendering as one sentence: the error and its tips, then `help`.
fn one_line(rendered: &str, help: &str) -> String {
    let mut text = String::new();
    for line in rendered.lines().map(str::trim) {
        // clap's usage block and its "For more information, try '--help'" end the message.
        if line.starts_with("Usage:") || line.starts_with("For more information") {
            break;
        }
        if line.is_empty() {
            continue;
        }
        let line = line.strip_prefix("error: ").unwrap_or(line);
        if !text.is_empty() {
            // "...were not provided:" and "[possible values: ...]" continue the sentence;
            // tips are new clauses.
            text.push_str(if text.ends_with(':') || line.starts_with('[') { " " } else { "; " });
        }
        text.push_str(line);
    }
    format!("{text} (see `{help}`)")
}

/// `--json` among the arguments (not after `--`, where they belong to someone else).
fn json_requested(args: impl IntoIterator<Item = OsString>) -> bool {
    args.into_iter().take_while(|a| a != "--").any(|a| a == "--json")
}

/// A stable name for each kind of usage error.
fn reason(kind: ErrorKind) -> &'static str {
    match kind {
        ErrorKind::InvalidSubcommand => "unknown_subcommand",
        ErrorKind::UnknownArgument => "unknown_argument",
        ErrorKind::InvalidValue | ErrorKind::ValueValidation => "invalid_value",
        ErrorKind::MissingRequiredArgument => "missing_argument",
        ErrorKind::ArgumentConflict => "conflicting_arguments",
        _ => "usage",
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    fn message(args: &[&str]) -> String {
        let e = Cli::try_parse_from(args).expect_err("a usage error");
        let args: Vec<OsString> = args.iter().map(OsString::from).collect();
        one_line(&e.render().to_string(), &help_command(&args))
    }

    #[test]
    fn clap_tips_survive_the_one_line_form() {
        let m = message(&["jfgui-agent", "cal"]);
        assert!(m.contains("unrecognized subcommand 'cal'"), "{m}");
        assert!(m.contains("similar subcommand exists: 'call'"), "{m}");
        assert!(m.ends_with("(see `jfgui-agent --help`)"), "{m}");
        let m = message(&["jfgui-agent", "headless", "jfgui-notepad", "--text", "hi"]);
        assert!(m.contains("use '-- --text'"), "{m}");
        assert!(m.ends_with("(see `jfgui-agent headless --help`)"), "{m}");
        assert!(!m.contains('\n'), "{m}");
    }

    #[test]
    fn the_help_named_is_the_subcommands() {
        let m = message(&["jfgui-agent", "call", "notepad"]);
        assert!(m.contains("required arguments were not provided: <ACTION>"), "{m}");
        assert!(m.ends_with("(see `jfgui-agent call --help`)"), "{m}");
        let m = message(&["jfgui-agent", "tasks", "notepad", "frob", "x"]);
        assert!(m.contains("for '<OP>' [possible values: get, wait, cancel]"), "{m}");
        assert!(m.ends_with("(see `jfgui-agent tasks --help`)"), "{m}");
    }

    #[test]
    fn json_is_requested_before_the_double_dash_only() {
        let args = |a: &[&str]| a.iter().map(OsString::from).collect::<Vec<_>>();
        assert!(json_requested(args(&["x", "list", "--json"])));
        assert!(!json_requested(args(&["x", "headless", "app", "--", "--json"])));
        assert!(!json_requested(args(&["x", "list"])));
    }
}
