//! `jfgui-agent render ENDPOINT [-o FILE.png]`: the app renders its view (`view/render`, the
//! arguments of its `ui.render` action) and the resource that names (typically a PNG) is read
//! into FILE or stdout, as `read` does.

use std::path::PathBuf;

use clap::Args;
use jfgui_proto::{Map, Value};

use super::completions::candidates;
use super::read::download;
use super::{Context, daemon};
use crate::endpoint;
use crate::exit::{Exit, Failure};
use crate::input::InputArgs;
use crate::output::{Format, pretty, print_json, print_text};

/// `--input-json` of `render`.
pub const INPUT_HELP: &str =
    "The arguments of the app's ui.render as JSON text, e.g. '{\"scale\":2}' for Notepad";

/// Shown after `render --help`.
pub const AFTER_HELP: &str = "\
The input is the app's own: the arguments of its ui.render action (`describe ENDPOINT
ui.render` shows them; Notepad takes {\"scale\": 1..4}). The image goes to FILE (written whole, then renamed into place) or to stdout when that is not a
terminal. An app whose ui.render names no resource has its output printed instead.

Examples:
  jfgui-agent render notepad -o view.png
  jfgui-agent render notepad --input-json '{\"scale\":2}' > view.png";

/// Arguments of `render`.
#[derive(Debug, Args)]
pub struct RenderArgs {
    /// The app: slug, exact display name, or unique slug prefix.
    #[arg(add = candidates::endpoints())]
    pub endpoint: String,
    #[command(flatten)]
    pub input: InputArgs,
    /// Write the image to FILE instead of stdout.
    #[arg(short = 'o', long = "output", value_name = "FILE", value_hint = clap::ValueHint::FilePath)]
    pub output: Option<PathBuf>,
    /// Print a JSON summary (the render output, revision, file) instead of text; errors
    /// too. Needs -o, since stdout otherwise carries the image.
    #[arg(long, requires = "output")]
    pub json: bool,
}

/// Renders and saves the image.
pub async fn run(args: RenderArgs, ctx: Context, format: Format) -> Result<(), Failure> {
    let input = args.input.read()?;
    let daemon = daemon()?;
    let mut client = endpoint::client(&daemon, &args.endpoint, ctx.timeout, ctx.activate).await?;
    let mut params = Map::new();
    if let Some(input) = input {
        params.insert("input", input);
    }
    let mut result = client.request("view/render", params).await?;
    let output = result.get("output").cloned().unwrap_or(Value::Null);
    let Some(uri) = output.get("uri").and_then(Value::as_str) else {
        if args.output.is_some() {
            return Err(Failure::new(
                Exit::Protocol,
                "no_resource",
                format!(
                    "the app's ui.render named no resource to save: it returned {}",
                    pretty(&output).replace('\n', " ")
                ),
            ));
        }
        return print_text(&pretty(&output));
    };
    let got = download(&mut client, uri, args.output.as_deref()).await?;
    let Some(file) = &args.output else { return Ok(()) };
    if format == Format::Json {
        result.remove("protocolVersion");
        result.insert("file", file.to_string_lossy().as_ref());
        return print_json(&Value::Object(result));
    }
    print_text(&got.summary(uri, file))
}
