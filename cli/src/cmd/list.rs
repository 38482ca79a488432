//! `jfgui-agent list`: the apps registered with the daemon (`apps/list` on the control socket).

use clap::Args;
use jfgui_proto::Value;

use super::{Context, JsonFlag, daemon};
use crate::client::{Client, Peer};
use crate::endpoint::{parse_apps, request_all_apps};
use crate::exit::Failure;
use crate::output::{Format, print_json, print_text, table};

/// Arguments of `list`.
#[derive(Debug, Args)]
pub struct ListArgs {
    #[command(flatten)]
    pub out: JsonFlag,
}

/// Prints the apps: the daemon's `apps/list` result as JSON, or a table.
pub async fn run(ctx: Context, format: Format) -> Result<(), Failure> {
    let daemon = daemon()?;
    let mut control = Client::connect(daemon.control(), Peer::Control, ctx.timeout).await?;
    let result = request_all_apps(&mut control).await?;
    let apps = parse_apps(&result)?;
    if format == Format::Json {
        return print_json(&Value::Object(result));
    }
    if apps.is_empty() {
        return print_text("no apps are registered");
    }
    let rows: Vec<Vec<String>> = apps
        .iter()
        .map(|a| {
            vec![
                a.slug.clone(),
                String::from(match (a.running, a.enabled) {
                    (false, _) => "not running",
                    (true, true) => "yes",
                    (true, false) => "no",
                }),
                a.pid.map_or_else(|| String::from("-"), |p| p.to_string()),
                a.action_count.map_or_else(|| String::from("-"), |n| n.to_string()),
                a.display_name.clone(),
            ]
        })
        .collect();
    print_text(&table(&["ENDPOINT", "ENABLED", "PID", "ACTIONS", "NAME"], &rows))
}
