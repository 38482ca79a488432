//! `jfgui-agent call ENDPOINT ACTION`: execute one action (`actions/execute`), with the input
//! from the command line and an optional expected revision (`auto` reads it first); with
//! `--wait`, a deferred action's task is followed to its end as `tasks ENDPOINT wait` does.

use clap::Args;
use jfgui_proto::{MAX_REVISION, Map, Value};

use super::completions::candidates;
use super::{Context, JsonFlag, daemon, tasks};
use crate::endpoint;
use crate::exit::{Exit, Failure};
use crate::input::InputArgs;
use crate::output::{Format, pretty, print_json, print_text};

/// `--input-json` of `call`.
pub const INPUT_HELP: &str =
    "The action's input as JSON text (`describe` shows its schema), e.g. '{\"text\":\"hi\"}'";

/// Shown after `call --help`.
pub const AFTER_HELP: &str = "\
Writes need --expected-revision (read it with `inspect`). `--expected-revision auto` reads the
app's current revision first and sends it: racy (another client may change the state in
between, then the call fails with stale_revision and nothing happens), meant for interactive
use, not scripts. Output is JSON whenever stdout is not a terminal.
A deferred action answers with a task (`task export-1 is running`); --wait follows it to its
end (a progress bar on stderr when it is a terminal), prints its result and exits with its
outcome, as `jfgui-agent tasks ENDPOINT wait ID` does. An action that asks the user first
(`describe` shows confirm) waits, connected, until the user answered in the app: leaving
withdraws the question.

Examples:
  jfgui-agent call notepad document.get
  jfgui-agent call notepad document.export --expected-revision auto --wait
  jfgui-agent call notepad document.text.insert --input-json '{\"text\":\"hi\"}' --expected-revision 1
  echo '{\"start\":0,\"end\":2,\"text\":\"Hello\"}' | jfgui-agent call notepad document.text.replace --input-file - --expected-revision auto";

/// `--expected-revision N|auto`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExpectedRevision {
    /// This exact revision.
    Exact(u64),
    /// The revision `agent/info` reports just before the call (racy).
    Auto,
}

fn parse_revision(s: &str) -> Result<ExpectedRevision, String> {
    if s == "auto" {
        return Ok(ExpectedRevision::Auto);
    }
    match s.parse::<u64>() {
        Ok(n) if n <= MAX_REVISION => Ok(ExpectedRevision::Exact(n)),
        _ => Err(format!("expected `auto` or an integer in 0..={MAX_REVISION}")),
    }
}

/// Arguments of `call`.
#[derive(Debug, Args)]
pub struct CallArgs {
    /// The app: slug, exact display name, or unique slug prefix.
    #[arg(add = candidates::endpoints())]
    pub endpoint: String,
    /// The action name, e.g. `document.text.insert`.
    #[arg(add = candidates::actions())]
    pub action: String,
    #[command(flatten)]
    pub input: InputArgs,
    /// The revision the call is meant for (required for writes), or `auto`.
    #[arg(long, value_name = "N|auto", value_parser = parse_revision, allow_hyphen_values = true)]
    pub expected_revision: Option<ExpectedRevision>,
    /// If the action starts a task, follow it until it ends and exit with its outcome.
    #[arg(long)]
    pub wait: bool,
    #[command(flatten)]
    pub out: JsonFlag,
}

/// Executes the action and prints the result (JSON when piped), or output and revision as text.
pub async fn run(args: CallArgs, ctx: Context, format: Format) -> Result<(), Failure> {
    let input = args.input.read()?;
    let daemon = daemon()?;
    let mut client = endpoint::client(&daemon, &args.endpoint, ctx.timeout, ctx.activate).await?;
    let revision = match args.expected_revision {
        None => None,
        Some(ExpectedRevision::Exact(n)) => Some(n),
        Some(ExpectedRevision::Auto) => {
            let info = client.request("agent/info", Map::new()).await?;
            let Some(n) = info.get("revision").and_then(Value::as_u64) else {
                return Err(Failure::new(
                    Exit::Protocol,
                    "malformed_response",
                    "agent/info answered without a revision",
                ));
            };
            Some(n)
        }
    };
    let mut params = Map::new();
    params.insert("action", args.action.as_str());
    if let Some(input) = input {
        params.insert("input", input);
    }
    if let Some(n) = revision {
        params.insert("expectedRevision", n);
    }
    let mut result = client.request("actions/execute", params).await?;
    let started = result.get("task").and_then(|t| t.get("id")).and_then(Value::as_str);
    if let (true, Some(id)) = (args.wait, started) {
        let last = tasks::follow(&mut client, &args.endpoint, id, ctx.wait).await?;
        return tasks::finish(&last, format);
    }
    // The action asks the user first: wait for the answer with the connection open (leaving
    // would withdraw the prompt), then report the task as it stands.
    if let (true, Some(id)) = (tasks::awaits(&result), started) {
        let id = id.to_owned();
        result = tasks::follow_while_asked(&mut client, &args.endpoint, &id, ctx.wait).await?;
        if tasks::is_final(&result) {
            return tasks::finish(&result, format);
        }
    }
    if format == Format::Json {
        return print_json(&Value::Object(result));
    }
    print_text(&render(&result))
}

fn render(result: &Map) -> String {
    let revision = result.get("revision").map_or_else(|| String::from("?"), pretty);
    if let Some(task) = result.get("task") {
        let s = |k: &str| task.get(k).and_then(Value::as_str).unwrap_or("?");
        return format!("task {} is {}\nrevision: {revision}", s("id"), s("state"));
    }
    let output = result.get("output").map_or_else(String::new, pretty);
    format!("{output}\nrevision: {revision}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use jfgui_proto::Limits;

    #[test]
    fn revisions_are_bounded_integers_or_auto() {
        assert_eq!(parse_revision("auto"), Ok(ExpectedRevision::Auto));
        assert_eq!(parse_revision("0"), Ok(ExpectedRevision::Exact(0)));
        assert_eq!(parse_revision("9007199254740991"), Ok(ExpectedRevision::Exact(MAX_REVISION)));
        for bad in ["9007199254740992", "-1", "1.0", "AUTO", ""] {
            assert!(parse_revision(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn text_shows_output_or_task_and_the_revision() {
        let parse = |s: &str| jfgui_proto::parse(s.as_bytes(), &Limits::DEFAULT).unwrap();
        let v = parse(r#"{"protocolVersion":"1","output":{"text":"hi"},"revision":4}"#);
        assert_eq!(render(v.as_object().unwrap()), "{\n  \"text\": \"hi\"\n}\nrevision: 4");
        let v =
            parse(r#"{"protocolVersion":"1","task":{"id":"t1","state":"running"},"revision":4}"#);
        assert_eq!(render(v.as_object().unwrap()), "task t1 is running\nrevision: 4");
    }
}
