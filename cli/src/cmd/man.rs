//! `jfgui-agent man [jfgui-agent|jfgui-agentd]`: the man pages, rendered from the clap
//! definitions at run time, so they can never disagree with `--help`. Packaging runs it at
//! build time (packaging/dist.sh, packaging/install.sh). One page per binary: clap_mangen
//! writes the title, NAME, SYNOPSIS, DESCRIPTION and OPTIONS; [`agent`] adds every subcommand
//! on the same page (there are no per-subcommand pages to refer to), and both add
//! ENVIRONMENT, FILES, EXIT STATUS and SEE ALSO.

mod agent;
mod agentd;

use clap::{Arg, Args, ValueEnum};
use roff::{Inline, Roff, bold, italic, roman};

use crate::exit::{Exit, Failure};
use crate::output::write_stdout;

/// Shown after `man --help`.
pub const AFTER_HELP: &str = "\
The installed packages carry both pages (man jfgui-agent, man jfgui-agentd).

Examples:
  jfgui-agent man > jfgui-agent.1 && man -l jfgui-agent.1
  jfgui-agent man jfgui-agentd > jfgui-agentd.1";

/// Which page.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Page {
    /// jfgui-agent(1), this command line.
    #[value(name = "jfgui-agent")]
    Agent,
    /// jfgui-agentd(1), the daemon.
    #[value(name = "jfgui-agentd")]
    Agentd,
}

/// Arguments of `man`.
#[derive(Debug, Args)]
pub struct ManArgs {
    /// The page to print.
    #[arg(value_enum, default_value = "jfgui-agent")]
    pub page: Page,
}

/// Prints the roff source of the page.
pub fn run(args: ManArgs) -> Result<(), Failure> {
    write_stdout(&render(args.page)?)
}

/// The roff source of `page`.
pub fn render(page: Page) -> Result<Vec<u8>, Failure> {
    let mut out = Vec::new();
    let written = match page {
        Page::Agent => agent::write(&mut out),
        Page::Agentd => agentd::write(&mut out),
    };
    written.map_err(|e| {
        Failure::new(Exit::Usage, "man_render_failed", format!("cannot render the man page: {e}"))
    })?;
    Ok(out)
}

/// The title, NAME and SYNOPSIS from clap_mangen, then DESCRIPTION from `description`
/// (paragraphs split at blank lines; clap_mangen's own would repeat the NAME line when there
/// is no long help), then OPTIONS, the top-level arguments as [`arguments`] writes them.
/// clap_mangen's SUBCOMMANDS section would point at pages that do not exist, and its EXTRA
/// section would repeat the sections below.
fn head(cmd: &clap::Command, description: &str, w: &mut dyn std::io::Write) -> std::io::Result<()> {
    let man = clap_mangen::Man::new(cmd.clone());
    man.render_title(w)?;
    man.render_name_section(w)?;
    man.render_synopsis_section(w)?;
    let mut roff = Roff::new();
    roff.control("SH", ["DESCRIPTION"]);
    for (i, paragraph) in description.split("\n\n").enumerate() {
        if i > 0 {
            roff.control("PP", []);
        }
        roff.text(prose(&paragraph.split_whitespace().collect::<Vec<_>>().join(" ")));
    }
    roff.control("SH", ["OPTIONS"]);
    arguments(&mut roff, cmd.get_arguments().filter(|a| !a.is_hide_set()));
    roff.to_writer(w)
}

/// Help text as man text: what `--help` quotes in backticks (a command, a name, a value) is
/// set in bold, as man pages show what is typed literally.
fn prose(text: &str) -> Vec<Inline> {
    text.split('`')
        .enumerate()
        .filter(|(_, part)| !part.is_empty())
        .map(|(i, part)| if i % 2 == 1 { bold(part) } else { roman(part) })
        .collect()
}

/// A section of `.TP` entries: a bold term and its text.
fn definitions(roff: &mut Roff, title: &str, entries: &[(&str, &str)]) {
    roff.control("SH", [title]);
    for (term, text) in entries {
        roff.control("TP", []);
        roff.text([bold(*term)]);
        roff.text(prose(text));
    }
}

/// Text kept line by line (examples, tables), as `--help` shows it.
fn verbatim(roff: &mut Roff, text: &str) {
    roff.control("nf", []);
    for line in text.lines() {
        roff.text(prose(line));
    }
    roff.control("fi", []);
}

/// SEE ALSO: the other page, and where the protocols are described.
fn see_also(roff: &mut Roff, other: &str) {
    roff.control("SH", ["SEE ALSO"]);
    roff.text([
        bold(other),
        roman("(1), "),
        bold("systemctl"),
        roman("(1); the protocol reference docs/PROTOCOL.md and the README of jfgui-agentd, "),
        italic("https://github.com/jfgui/jfgui-agentd"),
        roman("."),
    ]);
}

/// One `.TP` entry per argument of a subcommand: `-o, --output <FILE>` or `<ENDPOINT>`, then
/// its help with possible values and default.
fn arguments<'a>(roff: &mut Roff, args: impl Iterator<Item = &'a Arg>) {
    for arg in args {
        let mut term = String::new();
        if let Some(short) = arg.get_short() {
            term.push_str(&format!("-{short}, "));
        }
        let value_names: Vec<String> = arg
            .get_value_names()
            .map(|names| names.iter().map(|n| format!("<{n}>")).collect())
            .unwrap_or_else(|| vec![format!("<{}>", arg.get_id().as_str().to_uppercase())]);
        let takes_value = arg.get_num_args().is_none_or(|n| n.takes_values());
        match arg.get_long() {
            Some(long) if takes_value => {
                term.push_str(&format!("--{long} {}", value_names.join(" ")))
            }
            Some(long) => term.push_str(&format!("--{long}")),
            None => term.push_str(&value_names.join(" ")),
        }
        let mut help =
            arg.get_long_help().or(arg.get_help()).map(ToString::to_string).unwrap_or_default();
        let values: Vec<String> = arg
            .get_possible_values()
            .iter()
            .filter(|v| !v.is_hide_set())
            .map(|v| v.get_name().to_string())
            .collect();
        if !values.is_empty() && takes_value {
            help.push_str(&format!(" [possible values: {}]", values.join(", ")));
        }
        let defaults: Vec<String> =
            arg.get_default_values().iter().map(|v| v.to_string_lossy().into_owned()).collect();
        if !defaults.is_empty() && takes_value {
            help.push_str(&format!(" [default: {}]", defaults.join(", ")));
        }
        roff.control("TP", []);
        roff.text([bold(term)]);
        roff.text(prose(&help));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(p: Page) -> String {
        String::from_utf8(render(p).unwrap()).unwrap()
    }

    #[test]
    fn the_cli_page_has_every_subcommand_and_the_sections_of_a_man_page() {
        let text = page(Page::Agent);
        for section in [
            "NAME",
            "SYNOPSIS",
            "DESCRIPTION",
            "OPTIONS",
            "COMMANDS",
            "ENVIRONMENT",
            "FILES",
            "EXIT STATUS",
            "SEE ALSO",
        ] {
            assert!(
                text.contains(&format!(".SH {section}"))
                    || text.contains(&format!(".SH \"{section}\"")),
                "{section} missing"
            );
        }
        use clap::CommandFactory;
        for sub in super::super::Cli::command().get_subcommands() {
            let name = sub.get_name().replace('-', "\\-");
            assert!(text.contains(&format!("jfgui\\-agent {name}")), "{name} missing");
        }
        // No references to per-subcommand pages, and the NAME line is said once.
        assert!(!text.contains("jfgui\\-agent\\-list"), "refers to a page that does not exist");
        assert_name_said_once(&text, "jfgui\\-agent");
    }

    /// NAME is `NAME \- summary`, and DESCRIPTION does not open with the summary again.
    fn assert_name_said_once(text: &str, name: &str) {
        let after = |heading: &str| {
            text.lines().skip_while(|l| *l != heading).nth(1).unwrap_or_default().to_string()
        };
        let name_line = after(".SH NAME");
        let summary = name_line
            .strip_prefix(&format!("{name} \\- "))
            .unwrap_or_else(|| panic!("NAME line {name_line:?}"));
        assert!(!summary.starts_with(name), "{name_line}");
        assert!(!after(".SH DESCRIPTION").starts_with(summary), "DESCRIPTION repeats NAME");
    }

    #[test]
    fn the_daemon_page_has_its_flags_and_exit_statuses() {
        let text = page(Page::Agentd);
        assert_name_said_once(&text, "jfgui\\-agentd");
        for needle in [
            "\\-\\-runtime\\-dir",
            "\\-\\-demo",
            "\\-\\-idle\\-exit",
            ".SH ENVIRONMENT",
            "JFGUI_LOG",
            "LISTEN_FDS",
            "EXIT STATUS",
        ] {
            assert!(text.contains(needle), "{needle} missing");
        }
    }
}
