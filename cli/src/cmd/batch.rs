//! `jfgui-agent batch ENDPOINT --input-file F [--atomic] [--keep-going]`: several actions in
//! one `actions/batch` request. The input is the array of calls
//! (`[{"action", "input"?, "expectedRevision"?}]`) or the whole params object
//! (`{"calls", "atomic"?, "stopOnError"?}`); the flags set `atomic` and `stopOnError`.

use clap::Args;
use jfgui_proto::{Map, Value};

use super::completions::candidates;
use super::{Context, JsonFlag, daemon, tasks};
use crate::endpoint;
use crate::exit::{Exit, Failure};
use crate::input::InputArgs;
use crate::output::{Format, compact, pretty, print_json, print_text, table};

/// `--input-json` of `batch`.
pub const INPUT_HELP: &str = "The calls as JSON text, e.g. '[{\"action\":\"document.get\"}]'";

/// Shown after `batch --help`.
pub const AFTER_HELP: &str = "\
The input holds the calls, in order: [{\"action\": NAME, \"input\": {...}, \"expectedRevision\": N}]
(or the actions/batch params {\"calls\": [...], \"atomic\": true}). Without --atomic the calls
run one after the other, each expectedRevision meaning the moment that call runs, and the first
failure stops the rest (--keep-going runs them all); every attempted call gets its own result,
and a failed call makes the exit code that of its error. With --atomic the app checks every
call first and then runs them as one transaction: all of them happen or none does (each
expectedRevision means the state before the batch), and a failure is one error naming the call.
Output is JSON whenever stdout is not a terminal.

Examples:
  jfgui-agent batch notepad --atomic --input-json '[{\"action\":\"document.text.insert\",\"input\":{\"text\":\"Hi\"},\"expectedRevision\":1},{\"action\":\"selection.set\",\"input\":{\"start\":0,\"end\":2},\"expectedRevision\":1}]'
  echo '[{\"action\":\"document.get\"}]' | jfgui-agent batch notepad --input-file -";

/// Arguments of `batch`.
#[derive(Debug, Args)]
pub struct BatchArgs {
    /// The app: slug, exact display name, or unique slug prefix.
    #[arg(add = candidates::endpoints())]
    pub endpoint: String,
    #[command(flatten)]
    pub input: InputArgs,
    /// All or nothing: check every call, then run them as one transaction.
    #[arg(long)]
    pub atomic: bool,
    /// Without --atomic: run every call even after one fails.
    #[arg(long, conflicts_with = "atomic")]
    pub keep_going: bool,
    #[command(flatten)]
    pub out: JsonFlag,
}

/// Sends the batch and prints each call's outcome.
pub async fn run(args: BatchArgs, ctx: Context, format: Format) -> Result<(), Failure> {
    let params = params(args.input.read()?, args.atomic, args.keep_going)?;
    let daemon = daemon()?;
    let mut client = endpoint::client(&daemon, &args.endpoint, ctx.timeout, ctx.activate).await?;
    let mut result = client.request("actions/batch", params).await?;
    // A batch with an action that asks the user first is one task: followed to its end (with
    // the connection open, which keeps the question asked), then its results are the batch's.
    if let Some(id) = result.get("task").and_then(|t| t.get("id")).and_then(Value::as_str) {
        let id = id.to_owned();
        let last = tasks::follow(&mut client, &args.endpoint, &id, ctx.wait).await?;
        match last.get("task").and_then(|t| t.get("result")).and_then(Value::as_object) {
            Some(answer)
                if last.get("task").and_then(|t| t.get("state"))
                    == Some(&Value::from("completed")) =>
            {
                result = answer.clone();
            }
            _ => return tasks::finish(&last, format),
        }
    }
    let Some(results) = result.get("results").and_then(Value::as_array) else {
        return Err(Failure::new(
            Exit::Protocol,
            "malformed_response",
            "actions/batch answered without a `results` array",
        ));
    };
    let failed = results.iter().find_map(|r| r.get("error").map(|e| (r.get("index"), e)));
    if format == Format::Json {
        print_json(&Value::Object(result.clone()))?;
    } else {
        print_text(&render(&result, results))?;
    }
    match failed {
        None => Ok(()),
        Some((index, error)) => {
            let f = Failure::from_rpc_error(error);
            let index =
                index.and_then(Value::as_u64).map_or_else(|| String::from("?"), |i| i.to_string());
            let message = format!("call {index} failed: {}", f.message);
            Err(f.with_message(message).after_result())
        }
    }
}

/// The `actions/batch` params from the input and the flags.
fn params(input: Option<Value>, atomic: bool, keep_going: bool) -> Result<Map, Failure> {
    let mut params = match input {
        None => {
            return Err(Failure::usage(
                "missing_argument",
                "batch needs the calls: --input-file F (or - for stdin) or --input-json J",
            ));
        }
        Some(Value::Array(calls)) => {
            let mut p = Map::new();
            p.insert("calls", calls);
            p
        }
        Some(Value::Object(p)) if p.get("calls").is_some() => p,
        Some(_) => {
            return Err(Failure::usage(
                "invalid_batch",
                "the batch input must be an array of calls or an object with `calls`",
            ));
        }
    };
    if atomic {
        params.insert("atomic", true);
    }
    if keep_going {
        params.insert("stopOnError", false);
    }
    Ok(params)
}

/// One row per attempted call (calls not attempted have no row), then the revision.
fn render(result: &Map, results: &[Value]) -> String {
    let rows: Vec<Vec<String>> = results
        .iter()
        .map(|r| {
            let index = r.get("index").map_or_else(|| String::from("?"), pretty);
            match (r.get("output"), r.get("error")) {
                (_, Some(error)) => vec![index, Failure::from_rpc_error(error).to_string()],
                (Some(output), None) => {
                    vec![index, format!("ok {}", compact(output))]
                }
                (None, None) => vec![index, String::from("?")],
            }
        })
        .collect();
    let revision = result.get("revision").map_or_else(|| String::from("?"), pretty);
    format!("{}revision: {revision}", table(&["CALL", "OUTCOME"], &rows))
}

#[cfg(test)]
mod tests {
    use super::*;
    use jfgui_proto::Limits;

    fn parse(s: &str) -> Value {
        jfgui_proto::parse(s.as_bytes(), &Limits::DEFAULT).unwrap()
    }

    #[test]
    fn calls_come_as_an_array_or_as_params_and_flags_add_to_them() {
        let p = params(Some(parse(r#"[{"action":"a"}]"#)), true, false).unwrap();
        assert_eq!(p.get("atomic"), Some(&Value::Bool(true)));
        assert_eq!(p.get("calls").and_then(Value::as_array).map(<[Value]>::len), Some(1));
        let p = params(Some(parse(r#"{"calls":[],"stopOnError":true}"#)), false, true).unwrap();
        assert_eq!(p.get("stopOnError"), Some(&Value::Bool(false)));
        assert_eq!(params(None, false, false).unwrap_err().exit, Exit::Usage);
        assert_eq!(
            params(Some(parse(r#"{"a":1}"#)), false, false).unwrap_err().reason,
            "invalid_batch"
        );
    }

    #[test]
    fn text_has_a_row_per_attempted_call() {
        let r = parse(
            r#"{"results":[{"index":0,"output":{"length":2}},{"index":1,"error":{"code":1000,"class":"not_executed","reason":"unknown_action","message":"no such action","data":{}}}],"revision":3}"#,
        );
        let map = r.as_object().unwrap();
        let text = render(map, map.get("results").unwrap().as_array().unwrap());
        assert_eq!(
            text,
            "CALL  OUTCOME\n0     ok {\"length\":2}\n1     error[unknown_action]: no such action\nrevision: 3"
        );
    }
}
