//! `jfgui-agent apps`: the apps installed for activation (the launch files of the user's data
//! dir, judged by the rules the daemon applies) and whether each runs now; `apps forget NAME`
//! removes one, so agents can no longer start that app.

use clap::{Args, Subcommand};
use jfgui_proto::launch::{self, LaunchFile};
use jfgui_proto::{Map, Value};

use super::{Context, JsonFlag, daemon};
use crate::endpoint::list_apps;
use crate::exit::{Exit, Failure};
use crate::output::{Format, print_json, print_text, table};

/// The examples of `apps --help`.
pub const AFTER_HELP: &str = "\
Examples:
  jfgui-notepad --let-agents-start on    # what Notepad's setting does: its launch file
  jfgui-agent apps
  jfgui-agent apps --json
  jfgui-agent apps forget notepad

An app writes its launch file ($XDG_DATA_HOME/jfgui-agent/apps/SLUG.json) when its user turns
\"Let agents start <App>\" on; a call that names it while it is not running starts it. Files
that are not the user's alone (owner, modes, exec[0]) are listed as ignored, with the reason.";

/// Arguments of `apps`.
#[derive(Debug, Args)]
pub struct AppsArgs {
    #[command(subcommand)]
    pub action: Option<AppsAction>,
    #[command(flatten)]
    pub out: JsonFlag,
}

/// What `apps` does besides listing.
#[derive(Debug, Subcommand)]
pub enum AppsAction {
    /// Remove an app's launch file (by slug or display name): agents can no longer start it.
    #[command(after_help = "Example:\n  jfgui-agent apps forget notepad")]
    Forget {
        /// The app's slug or display name.
        name: String,
    },
}

/// Lists the installed apps, or forgets one.
pub async fn run(args: AppsArgs, ctx: Context, format: Format) -> Result<(), Failure> {
    let dir = launch::apps_dir().ok_or_else(|| {
        Failure::usage("no_data_dir", "neither XDG_DATA_HOME nor HOME names a directory")
    })?;
    let (found, ignored) = launch::read_dir(&dir);
    if let Some(AppsAction::Forget { name }) = args.action {
        return forget(&dir, &found, &name, format);
    }
    // Running apps, when the daemon is up; without it nothing runs as far as agents go.
    let running = match daemon() {
        Ok(daemon) => list_apps(&daemon, ctx.timeout).await.unwrap_or_default(),
        Err(_) => Vec::new(),
    };
    let is_running =
        |f: &LaunchFile| running.iter().any(|a| a.running && a.display_name == f.display_name);
    if format == Format::Json {
        let rows = found.iter().map(|f| {
            let mut m = Map::new();
            m.insert("slug", f.slug.as_str());
            m.insert("displayName", f.display_name.as_str());
            m.insert("exec", f.exec.iter().map(|a| Value::from(a.as_str())).collect::<Vec<_>>());
            m.insert("running", is_running(f));
            Value::Object(m)
        });
        let ignored = ignored.iter().map(|i| {
            let mut m = Map::new();
            m.insert("path", i.path.to_string_lossy().into_owned());
            m.insert("why", i.why.as_str());
            Value::Object(m)
        });
        let mut result = Map::new();
        result.insert("dir", dir.to_string_lossy().into_owned());
        result.insert("apps", Value::Array(rows.collect()));
        result.insert("ignored", Value::Array(ignored.collect()));
        return print_json(&Value::Object(result));
    }
    let mut text = if found.is_empty() {
        format!("no apps are installed for agents to start ({})", dir.display())
    } else {
        let rows: Vec<Vec<String>> = found
            .iter()
            .map(|f| {
                vec![
                    f.slug.clone(),
                    String::from(if is_running(f) { "yes" } else { "no" }),
                    f.display_name.clone(),
                    f.exec.join(" "),
                ]
            })
            .collect();
        table(&["APP", "RUNNING", "NAME", "EXEC"], &rows)
    };
    for i in &ignored {
        text.push_str(&format!("\nignored: {i}"));
    }
    print_text(&text)
}

fn forget(
    dir: &std::path::Path,
    found: &[LaunchFile],
    name: &str,
    format: Format,
) -> Result<(), Failure> {
    // An ignored file is forgotten by its slug too: removing is always safe.
    let slug = found
        .iter()
        .find(|f| f.slug == name || f.display_name == name)
        .map_or_else(|| name.to_string(), |f| f.slug.clone());
    let removed = launch::remove(dir, &slug)
        .map_err(|e| Failure::new(Exit::NotFound, "forget_failed", format!("{slug}: {e}")))?;
    if !removed {
        let message = format!("no launch file for '{name}' in {}", dir.display());
        return Err(Failure::new(Exit::NotFound, "app_not_installed", message));
    }
    if format == Format::Json {
        let mut m = Map::new();
        m.insert("forgotten", slug.as_str());
        return print_json(&Value::Object(m));
    }
    print_text(&format!("agents can no longer start {slug}"))
}
