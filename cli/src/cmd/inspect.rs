//! `jfgui-agent inspect ENDPOINT [--input-json J]`: the app's state (`state/inspect`).

use clap::Args;
use jfgui_proto::{Map, Value};

use super::completions::candidates;
use super::{Context, JsonFlag, daemon};
use crate::endpoint;
use crate::exit::Failure;
use crate::input::InputArgs;
use crate::output::{Format, pretty, print_json, print_text};

/// `--input-json` of `inspect`.
pub const INPUT_HELP: &str =
    "The app's query as JSON text, e.g. '{\"sinceRevision\":3}' for Notepad";

/// Shown after `inspect --help`.
pub const AFTER_HELP: &str = "\
Prints the app's state and the revision it is at. The input is the app's own query: Notepad
takes {\"sinceRevision\": N} and answers {\"unchanged\": true} when nothing changed since N.
Output is JSON whenever stdout is not a terminal.

Examples:
  jfgui-agent inspect notepad
  jfgui-agent inspect notepad --input-json '{\"sinceRevision\":1}'";

/// Arguments of `inspect`.
#[derive(Debug, Args)]
pub struct InspectArgs {
    /// The app: slug, exact display name, or unique slug prefix.
    #[arg(add = candidates::endpoints())]
    pub endpoint: String,
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub out: JsonFlag,
}

/// Prints the `state/inspect` result (JSON when piped), or the state and revision as text.
pub async fn run(args: InspectArgs, ctx: Context, format: Format) -> Result<(), Failure> {
    let input = args.input.read()?;
    let daemon = daemon()?;
    let mut client = endpoint::client(&daemon, &args.endpoint, ctx.timeout, ctx.activate).await?;
    let mut params = Map::new();
    if let Some(input) = input {
        params.insert("input", input);
    }
    let result = client.request("state/inspect", params).await?;
    if format == Format::Json {
        return print_json(&Value::Object(result));
    }
    let state = result.get("state").map_or_else(String::new, pretty);
    let revision = result.get("revision").map_or_else(|| String::from("?"), pretty);
    print_text(&format!("{state}\nrevision: {revision}"))
}
