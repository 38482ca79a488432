//! `jfgui-agent describe ENDPOINT ACTION`: one action's contract (`actions/describe`).

use clap::Args;
use jfgui_proto::{Map, Value};

use super::completions::candidates;
use super::{Context, JsonFlag, daemon};
use crate::endpoint;
use crate::exit::{Exit, Failure};
use crate::output::{Format, pretty, print_json, print_text};

/// Arguments of `describe`.
#[derive(Debug, Args)]
pub struct DescribeArgs {
    /// The app: slug, exact display name, or unique slug prefix.
    #[arg(add = candidates::endpoints())]
    pub endpoint: String,
    /// The action name, e.g. `document.text.replace`.
    #[arg(add = candidates::actions())]
    pub action: String,
    #[command(flatten)]
    pub out: JsonFlag,
}

/// Prints the `actions/describe` result as JSON, or as text with indented schemas.
pub async fn run(args: DescribeArgs, ctx: Context, format: Format) -> Result<(), Failure> {
    let daemon = daemon()?;
    let mut client = endpoint::client(&daemon, &args.endpoint, ctx.timeout, ctx.activate).await?;
    let mut params = Map::new();
    params.insert("action", args.action.as_str());
    let result = client.request("actions/describe", params).await.map_err(|f| {
        // The daemon's not_found answer does not repeat the name that was asked for.
        if f.reason != "action" {
            return f;
        }
        let near = f.suggestions.to_vec();
        f.with_message(format!(
            "endpoint '{}' has no action named \"{}\"; `jfgui-agent actions {}` lists them",
            args.endpoint, args.action, args.endpoint
        ))
        .with_suggestions(near)
    })?;
    if format == Format::Json {
        return print_json(&Value::Object(result));
    }
    let Some(action) = result.get("action").and_then(Value::as_object) else {
        return Err(Failure::new(
            Exit::Protocol,
            "malformed_response",
            "actions/describe answered without an `action` object",
        ));
    };
    print_text(&render(action))
}

fn render(action: &Map) -> String {
    let s = |k: &str| action.get(k).and_then(Value::as_str).unwrap_or("");
    let mut out = format!("{} ({})\n  {}\n", s("name"), s("kind"), s("description"));
    let mut facts = Vec::new();
    for key in ["capabilities", "undo", "transaction", "commandId"] {
        match action.get(key) {
            Some(Value::String(v)) => facts.push(format!("{key}: {v}")),
            Some(v @ (Value::Number(_) | Value::Bool(_))) => {
                facts.push(format!("{key}: {}", pretty(v)))
            }
            _ => {}
        }
    }
    if !facts.is_empty() {
        out.push_str(&facts.join("  "));
        out.push('\n');
    }
    for (key, title) in [("inputSchema", "input schema"), ("outputSchema", "output schema")] {
        if let Some(schema) = action.get(key) {
            out.push_str(&format!("{title}:\n{}\n", pretty(schema)));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use jfgui_proto::Limits;

    #[test]
    fn text_shows_kind_facts_and_schemas() {
        let v = jfgui_proto::parse(
            br#"{"name":"edit.undo","description":"Undo","kind":"write","inputSchema":{"type":"object"},"outputSchema":{},"capabilities":0,"undo":true,"transaction":"document"}"#,
            &Limits::DEFAULT,
        )
        .unwrap();
        let text = render(v.as_object().unwrap());
        assert!(
            text.starts_with(
                "edit.undo (write)\n  Undo\ncapabilities: 0  undo: true  transaction: document\n"
            ),
            "{text}"
        );
        assert!(
            text.contains("input schema:\n{\n  \"type\": \"object\"\n}\noutput schema:\n{}\n"),
            "{text}"
        );
    }
}
