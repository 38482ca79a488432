//! `jfgui-agent actions ENDPOINT [--query Q]`: every action of an endpoint (`actions/list`,
//! all pages).

use clap::Args;
use jfgui_proto::{Map, Value};

use super::completions::candidates;
use super::{Context, JsonFlag, daemon};
use crate::client::Client;
use crate::endpoint;
use crate::exit::{Exit, Failure};
use crate::output::{Format, print_json, print_text, table};

/// Pages fetched at most: 100 actions each, far more than any app registers; a daemon that
/// keeps returning cursors beyond this is broken, not large.
const MAX_PAGES: usize = 1000;

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
    let mut client = endpoint::client(&daemon, &args.endpoint, ctx.timeout).await?;
    let actions = all(&mut client, args.query.as_deref()).await?;
    print(actions, format)
}

/// Every action of the endpoint (matching `query`), all pages merged.
pub async fn all(client: &mut Client, query: Option<&str>) -> Result<Vec<Value>, Failure> {
    let mut actions: Vec<Value> = Vec::new();
    let mut cursor: Option<Value> = None;
    for _ in 0..MAX_PAGES {
        let mut params = Map::new();
        if let Some(q) = query {
            params.insert("query", q);
        }
        if let Some(c) = cursor.take() {
            params.insert("cursor", c);
        }
        params.insert("limit", 100u64);
        let mut page = client.request("actions/list", params).await?;
        match page.remove("actions") {
            Some(Value::Array(items)) => actions.extend(items),
            _ => return Err(malformed("without an `actions` array")),
        }
        match page.remove("nextCursor") {
            None | Some(Value::Null) => return Ok(actions),
            Some(next) => cursor = Some(next),
        }
    }
    Err(malformed(&format!("more than {MAX_PAGES} pages")))
}

fn malformed(what: &str) -> Failure {
    Failure::new(Exit::Protocol, "malformed_response", format!("actions/list answered {what}"))
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
