//! Completion candidates asked from the running daemon: endpoint names (`apps/list`) and the
//! action names of the endpoint already typed (`actions/list`). Any failure (no daemon, no
//! such endpoint, a slow answer) yields no candidates and no output: a shell completion must
//! never print errors into the command line being edited.

use std::ffi::OsString;
use std::time::Duration;

use clap::CommandFactory;
use clap_complete::engine::{ArgValueCandidates, CompletionCandidate};

use super::super::{Cli, daemon};
use crate::endpoint;

/// How long a TAB may wait for the daemon: long enough for a busy machine, short enough
/// that a hung daemon does not freeze the shell.
const PATIENCE: Duration = Duration::from_secs(2);

/// The environment variable the bash and zsh scripts set to the index of the word being
/// completed (other shells pass the words up to the cursor).
const INDEX_VAR: &str = "_CLAP_COMPLETE_INDEX";

/// Completes an ENDPOINT argument with the enabled apps' slugs.
pub fn endpoints() -> ArgValueCandidates {
    ArgValueCandidates::new(endpoint_candidates)
}

/// Completes an ACTION argument with the actions of the endpoint named before it.
pub fn actions() -> ArgValueCandidates {
    ArgValueCandidates::new(action_candidates)
}

fn endpoint_candidates() -> Vec<CompletionCandidate> {
    ask(async {
        let apps = endpoint::list_apps(&daemon().ok()?, PATIENCE).await.ok()?;
        Some(
            apps.into_iter()
                .filter(|a| a.enabled)
                .map(|a| CompletionCandidate::new(a.slug).help(Some(a.display_name.into())))
                .collect(),
        )
    })
}

fn action_candidates() -> Vec<CompletionCandidate> {
    let Some(endpoint) = typed_endpoint(std::env::args_os()) else {
        return Vec::new();
    };
    ask(async move {
        let mut client =
            endpoint::client(&daemon().ok()?, &endpoint, PATIENCE, false).await.ok()?;
        let list = client.all_actions(None).await.ok()?;
        Some(
            list.iter()
                .filter_map(|a| {
                    let name = a.get("name")?.as_str()?;
                    let help = a.get("description").and_then(|d| d.as_str()).map(String::from);
                    Some(CompletionCandidate::new(name).help(help.map(Into::into)))
                })
                .collect(),
        )
    })
}

/// Runs `work` on a private runtime within [`PATIENCE`]; nothing on any failure.
fn ask(work: impl Future<Output = Option<Vec<CompletionCandidate>>>) -> Vec<CompletionCandidate> {
    let Ok(rt) = tokio::runtime::Builder::new_current_thread().enable_all().build() else {
        return Vec::new();
    };
    rt.block_on(async { tokio::time::timeout(PATIENCE, work).await.ok().flatten() })
        .unwrap_or_default()
}

/// The ENDPOINT of the command line being completed. The completion protocol runs us as
/// `jfgui-agent -- jfgui-agent WORDS...`; the words before the one under the cursor are
/// parsed leniently (they are an unfinished command line) to find the subcommand's endpoint.
fn typed_endpoint(args: impl IntoIterator<Item = OsString>) -> Option<String> {
    let mut words: Vec<OsString> = args.into_iter().skip_while(|a| a != "--").skip(1).collect();
    let current = std::env::var(INDEX_VAR)
        .ok()
        .and_then(|i| i.parse::<usize>().ok())
        .unwrap_or_else(|| words.len().saturating_sub(1));
    words.truncate(current);
    let matches = Cli::command().ignore_errors(true).try_get_matches_from(words).ok()?;
    let (_, sub) = matches.subcommand()?;
    sub.try_get_one::<String>("endpoint").ok().flatten().cloned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<OsString> {
        let mut v: Vec<OsString> = vec!["jfgui-agent".into(), "--".into()];
        v.extend(line.split(' ').map(OsString::from));
        v
    }

    #[test]
    fn the_endpoint_is_found_in_an_unfinished_command_line() {
        // Without the index variable (as here) the last word is the one being completed.
        assert_eq!(typed_endpoint(words("jfgui-agent call notepad ")), Some("notepad".into()));
        assert_eq!(
            typed_endpoint(words("jfgui-agent --timeout 5 describe Sketch document.")),
            Some("Sketch".into())
        );
        assert_eq!(typed_endpoint(words("jfgui-agent call ")), None);
        assert_eq!(typed_endpoint(words("jfgui-agent list ")), None);
    }
}
