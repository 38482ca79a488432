//! `jfgui-agent tasks ENDPOINT get|wait|cancel ID`: the deferred tasks an action started
//! (`tasks/get`, `tasks/cancel`). `wait` polls until the task ends, with a progress bar on a
//! terminal, and exits with the task's outcome; `call --wait` follows a task the same way.

use std::time::Duration;

use clap::{Args, ValueEnum};
use jfgui_proto::{Map, Value};

use super::completions::candidates;
use super::{Context, JsonFlag, daemon};
use crate::client::Client;
use crate::endpoint;
use crate::exit::{Exit, Failure};
use crate::output::progress::Progress;
use crate::output::{Format, pretty, print_json, print_text};

/// Shown after `tasks --help`.
pub const AFTER_HELP: &str = "\
get prints the task's state (running with its progress, cancelling, completed with its result,
failed with its error, cancelled) and exits 0 whatever that state is.
wait follows the task until it ends, with a progress bar on stderr when stderr is a terminal,
then prints the result and exits with the task's outcome: 0 completed; failed: the code of its
error (1, or 6 when the outcome is unknown, e.g. the app went away); 1 cancelled. --timeout
bounds the wait (exit 6; the task goes on). Ctrl-C stops waiting, not the task.
cancel asks the app to stop the task at its next safe checkpoint and prints `cancelling` (or
the final state of a task that already ended); `wait` then reports `cancelled`.
Output is JSON whenever stdout is not a terminal.

Examples:
  jfgui-agent call notepad document.export --expected-revision auto
  jfgui-agent tasks notepad wait export-1
  jfgui-agent tasks notepad cancel export-1";

/// How soon the first poll follows the start of a wait.
const FIRST_POLL: Duration = Duration::from_millis(100);
/// The slowest poll: a long task is asked about twice a second.
const MAX_POLL: Duration = Duration::from_millis(500);

/// What to do with the task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TaskOp {
    /// Print its current state.
    Get,
    /// Follow it until it ends; exit with its outcome.
    Wait,
    /// Ask the app to stop it.
    Cancel,
}

/// Arguments of `tasks`.
#[derive(Debug, Args)]
pub struct TasksArgs {
    /// The app: slug, exact display name, or unique slug prefix.
    #[arg(add = candidates::endpoints())]
    pub endpoint: String,
    /// What to do with the task.
    #[arg(value_enum)]
    pub op: TaskOp,
    /// The task id, as the action's result named it (e.g. `export-1`).
    pub id: String,
    #[command(flatten)]
    pub out: JsonFlag,
}

/// Runs `get`, `wait` or `cancel`.
pub async fn run(args: TasksArgs, ctx: Context, format: Format) -> Result<(), Failure> {
    let daemon = daemon()?;
    let mut client = endpoint::client(&daemon, &args.endpoint, ctx.timeout, ctx.activate).await?;
    match args.op {
        TaskOp::Get => {
            let result = get(&mut client, &args.id).await?;
            print_state(&result, format)
        }
        TaskOp::Cancel => {
            let mut params = Map::new();
            params.insert("id", args.id.as_str());
            let result = client.request("tasks/cancel", params).await?;
            print_state(&result, format)
        }
        TaskOp::Wait => {
            let result = follow(&mut client, &args.endpoint, &args.id, ctx.wait).await?;
            finish(&result, format)
        }
    }
}

/// Polls `tasks/get` until task `id` is in a final state (with a progress bar on a terminal)
/// and returns that last answer. `limit` bounds the whole wait.
pub async fn follow(
    client: &mut Client,
    endpoint: &str,
    id: &str,
    limit: Option<Duration>,
) -> Result<Map, Failure> {
    follow_until(client, endpoint, id, limit, |t| t.is_final()).await
}

/// Polls task `id` while it waits for the user's answer in the app (`awaiting`), keeping the
/// connection open: the daemon withdraws the prompt of a call whose client went away. Returns
/// the first answer that no longer waits.
pub async fn follow_while_asked(
    client: &mut Client,
    endpoint: &str,
    id: &str,
    limit: Option<Duration>,
) -> Result<Map, Failure> {
    follow_until(client, endpoint, id, limit, |t| t.is_final() || !t.awaits()).await
}

/// Whether the `task` of answer `result` is in a final state.
pub fn is_final(result: &Map) -> bool {
    Task::of(result).is_ok_and(|t| t.is_final())
}

/// Whether the `task` of answer `result` waits for the user's answer.
pub fn awaits(result: &Map) -> bool {
    result.get("task").and_then(|t| t.get("awaiting")).is_some()
}

async fn follow_until(
    client: &mut Client,
    endpoint: &str,
    id: &str,
    limit: Option<Duration>,
    done: fn(&Task<'_>) -> bool,
) -> Result<Map, Failure> {
    let progress = Progress::task(id);
    let polling = async {
        let mut pause = FIRST_POLL;
        loop {
            let result = get(client, id).await.map_err(|f| gone_while_following(f, id))?;
            let task = Task::of(&result)?;
            if done(&task) {
                return Ok(result);
            }
            if let Some(p) = task.progress() {
                progress.task_update(p.done, p.total, p.message);
            }
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(MAX_POLL);
        }
    };
    let result = match limit {
        None => polling.await,
        Some(limit) => tokio::time::timeout(limit, polling).await.unwrap_or_else(|_| {
            Err(Failure::new(
                Exit::OutcomeUnknown,
                "timeout",
                format!(
                    "task {id} did not end within {} s; it goes on: follow it with `jfgui-agent tasks {endpoint} wait {id}` or stop it with `jfgui-agent tasks {endpoint} cancel {id}`",
                    limit.as_secs()
                ),
            ))
        }),
    };
    progress.clear();
    result
}

/// Prints the final state of a followed task and turns its outcome into the exit code.
pub fn finish(result: &Map, format: Format) -> Result<(), Failure> {
    let task = Task::of(result)?;
    match format {
        Format::Json => print_json(&Value::Object(result.clone()))?,
        Format::Human if task.state == "completed" => {
            let value = task.object.get("result").map_or_else(String::new, pretty);
            print_text(&format!("{value}\ntask {} completed", task.id))?;
        }
        // A task that failed or was cancelled is told by the error line alone.
        Format::Human => {}
    }
    task.outcome().map_err(|f| if format == Format::Json { f.after_result() } else { f })
}

async fn get(client: &mut Client, id: &str) -> Result<Map, Failure> {
    let mut params = Map::new();
    params.insert("id", id);
    client.request("tasks/get", params).await
}

/// The endpoint closes when its app goes away, and with it the task's fate is unknown here.
fn gone_while_following(failure: Failure, id: &str) -> Failure {
    if failure.reason != "connection_lost" {
        return failure;
    }
    Failure::new(
        Exit::OutcomeUnknown,
        "app_disconnected",
        format!(
            "{}; task {id} was still running, so its outcome is unknown: inspect the state",
            failure.message
        ),
    )
}

fn print_state(result: &Map, format: Format) -> Result<(), Failure> {
    if format == Format::Json {
        return print_json(&Value::Object(result.clone()));
    }
    print_text(&Task::of(result)?.describe())
}

/// The `task` object of a `tasks/get` or `tasks/cancel` answer.
#[derive(Debug)]
struct Task<'a> {
    object: &'a Map,
    id: &'a str,
    state: &'a str,
}

/// Progress as the app reported it.
#[derive(Debug)]
struct Reported<'a> {
    done: u64,
    total: Option<u64>,
    message: Option<&'a str>,
}

impl<'a> Task<'a> {
    fn of(result: &'a Map) -> Result<Task<'a>, Failure> {
        let malformed = |what: &str| {
            Failure::new(Exit::Protocol, "malformed_response", format!("the task answer {what}"))
        };
        let object = result
            .get("task")
            .and_then(Value::as_object)
            .ok_or_else(|| malformed("has no `task` object"))?;
        let id = object.get("id").and_then(Value::as_str).ok_or_else(|| malformed("has no id"))?;
        let state = object
            .get("state")
            .and_then(Value::as_str)
            .filter(|s| ["running", "cancelling", "completed", "failed", "cancelled"].contains(s))
            .ok_or_else(|| malformed("has no known state"))?;
        Ok(Task { object, id, state })
    }

    fn is_final(&self) -> bool {
        matches!(self.state, "completed" | "failed" | "cancelled")
    }

    fn awaits(&self) -> bool {
        self.object.get("awaiting").is_some()
    }

    fn progress(&self) -> Option<Reported<'a>> {
        let p = self.object.get("progress")?;
        Some(Reported {
            done: p.get("done").and_then(Value::as_u64)?,
            total: p.get("total").and_then(Value::as_u64),
            message: p.get("message").and_then(Value::as_str),
        })
    }

    /// The exit a final state means: completed is success, failed is its error (with the
    /// error's exit code), cancelled is an action error.
    fn outcome(&self) -> Result<(), Failure> {
        match self.state {
            "completed" => Ok(()),
            "failed" => Err(match self.object.get("error") {
                Some(error) => Failure::from_rpc_error(error),
                None => Failure::new(
                    Exit::Action,
                    "failed",
                    format!("task {} failed without saying why", self.id),
                ),
            }),
            _ => Err(Failure::new(
                Exit::Action,
                "cancelled",
                format!("task {} was cancelled before it completed", self.id),
            )),
        }
    }

    /// One line (plus the result of a completed task) for people.
    fn describe(&self) -> String {
        let mut line = format!("task {}: {}", self.id, self.state);
        if let Some(p) = self.progress() {
            match p.total {
                Some(total) => line.push_str(&format!(", {}/{total}", p.done)),
                None => line.push_str(&format!(", {} done", p.done)),
            }
            if let Some(message) = p.message {
                line.push_str(&format!(" ({message})"));
            }
        }
        if let Some(error) = self.object.get("error") {
            line.push_str(&format!(": {}", Failure::from_rpc_error(error)));
        }
        if let Some(result) = self.object.get("result") {
            line.push_str(&format!("\n{}", pretty(result)));
        }
        line
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use jfgui_proto::Limits;

    fn answer(json: &str) -> Map {
        jfgui_proto::parse(json.as_bytes(), &Limits::DEFAULT).unwrap().as_object().unwrap().clone()
    }

    #[test]
    fn states_read_well_and_only_known_ones_are_accepted() {
        let running = answer(
            r#"{"task":{"id":"export-1","state":"running","progress":{"done":3,"total":10,"message":"exporting"}}}"#,
        );
        let task = Task::of(&running).unwrap();
        assert!(!task.is_final());
        assert_eq!(task.describe(), "task export-1: running, 3/10 (exporting)");
        let done = answer(r#"{"task":{"id":"t","state":"completed","result":{"size":3}}}"#);
        assert_eq!(Task::of(&done).unwrap().describe(), "task t: completed\n{\n  \"size\": 3\n}");
        let failed = answer(
            r#"{"task":{"id":"t","state":"failed","error":{"code":1001,"class":"outcome_unknown","reason":"app_disconnected","message":"gone","data":{}}}}"#,
        );
        assert_eq!(
            Task::of(&failed).unwrap().describe(),
            "task t: failed: error[app_disconnected]: gone"
        );
        for bad in
            [r#"{}"#, r#"{"task":{"id":"t","state":"paused"}}"#, r#"{"task":{"state":"running"}}"#]
        {
            assert_eq!(Task::of(&answer(bad)).unwrap_err().exit, Exit::Protocol, "{bad}");
        }
    }

    #[test]
    fn outcomes_map_to_exit_codes() {
        let failed = answer(
            r#"{"task":{"id":"t","state":"failed","error":{"code":1001,"class":"outcome_unknown","reason":"app_disconnected","message":"gone","data":{}}}}"#,
        );
        let f = Task::of(&failed).unwrap().outcome().unwrap_err();
        assert_eq!((f.exit, f.reason.as_str()), (Exit::OutcomeUnknown, "app_disconnected"));
        let cancelled = answer(r#"{"task":{"id":"t","state":"cancelled"}}"#);
        let f = Task::of(&cancelled).unwrap().outcome().unwrap_err();
        assert_eq!((f.exit, f.reason.as_str()), (Exit::Action, "cancelled"));
        let done = answer(r#"{"task":{"id":"t","state":"completed","result":{}}}"#);
        assert!(Task::of(&done).unwrap().outcome().is_ok());
    }
}
