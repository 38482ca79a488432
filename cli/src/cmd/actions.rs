//! `jfgui-agent actions ENDPOINT [--query Q]`: every action of an endpoint (`actions/list`,
//! all pages).

use clap::Args;
use jfgui_proto::{Map, Value};

use super::completions::candidates;
use super::{Context, JsonFlag, daemon};
use crate::endpoint;
use crate::exit::Failure;
use crate::output::{Format, print_json, print_text, table};

/// Arguments of `actions`.
#[derive(Debug, Args)]
pub struct ActionsArgs {
    /// The app: slug, exact display name, or unique slug prefix.
    #[arg(add = candidates::endpoints())]
    pub endpoint: String,
    /// Only actions whose name or description contains this (case-insensitive).
    #[arg(long, value_name = "Q")]
    pub query: Option<String>,
    #[command(flatten)]
    pub out: JsonFlag,
}

/// Prints `{actions:[{name,description,kind}]}` (all pages merged) or a table.
pub async fn run(args: ActionsArgs, ctx: Context, format: Format) -> Result<(), Failure> {
    let daemon = daemon()?;
    let mut client = endpoint::client(&daemon, &args.endpoint, ctx.timeout, ctx.activate).await?;
    let actions = client.all_actions(args.query.as_deref()).await?;
    print(actions, format)
}

fn print(actions: Vec<Value>, format: Format) -> Result<(), Failure> {
    if format == Format::Json {
        let mut out = Map::new();
        out.insert("actions", actions);
        return print_json(&Value::Object(out));
    }
    if actions.is_empty() {
        return print_text("no matching actions");
    }
    let field = |a: &Value, k: &str| a.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    let rows: Vec<Vec<String>> = actions
        .iter()
        .map(|a| vec![field(a, "name"), field(a, "kind"), field(a, "description")])
        .collect();
    print_text(&table(&["ACTION", "KIND", "DESCRIPTION"], &rows))
}
