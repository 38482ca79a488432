//! The over-the-wire [`Target`] of `check`: each host-channel call the checks make becomes its
//! JSON control protocol 1 request on the app's endpoint, through the daemon, as any client
//! would send it; the one listing JSON-1 lacks, the resources, is MCP `resources/list` on a
//! second connection to the same endpoint. The checks run on a blocking thread, so each
//! request is driven to its answer on the CLI's runtime.

use std::time::Duration;

use jfgui_host_sdk::testing::{Reply, Target};
use jfgui_proto::channel::{
    ActionInfo, BatchEntry, BatchOutcome, Call, CallResult, ResourceChunk, ResourceInfo,
    TaskSnapshot,
};
use jfgui_proto::{ActionError, ErrorClass, Map, Payload, Reason, Value, from_value};
use tokio::runtime::Handle;

use crate::client::Client;
use crate::endpoint;
use crate::exit::{Exit, Failure};
use crate::transport::Daemon;

/// How long [`Target::pause`] lets deferred work advance between two looks at a task.
const PAUSE: Duration = Duration::from_millis(50);

/// The MCP revision whose per-request envelope lets one `resources/list` go without a
/// handshake.
const MCP_MODERN: &str = "2026-07-28";

/// The app's endpoint, spoken to as a JSON-1 client.
pub struct Wire {
    client: Client,
    daemon: Daemon,
    slug: String,
    timeout: Duration,
    runtime: Handle,
}

impl std::fmt::Debug for Wire {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Wire").field("slug", &self.slug).finish_non_exhaustive()
    }
}

impl Wire {
    /// `client` is connected to the endpoint of `slug`; requests are driven on `runtime`.
    pub fn new(client: Client, daemon: Daemon, slug: String, timeout: Duration) -> Wire {
        Wire { client, daemon, slug, timeout, runtime: Handle::current() }
    }

    /// One JSON-1 request: its result, the app's error, or the failure that ends the run.
    fn request(&mut self, method: &str, params: Map) -> Result<Reply<Map>, Failure> {
        match self.runtime.block_on(self.client.request(method, params)) {
            Ok(result) => Ok(Ok(result)),
            Err(failure) => action_error(&failure).map(Err).ok_or(failure),
        }
    }

    fn resources(&mut self) -> Result<Reply<CallResult>, Failure> {
        let mut meta = Map::new();
        meta.insert("io.modelcontextprotocol/protocolVersion", MCP_MODERN);
        meta.insert("io.modelcontextprotocol/clientCapabilities", Map::new());
        let mut params = Map::new();
        params.insert("_meta", meta);
        let result = self.runtime.block_on(async {
            let mut mcp = endpoint::client(&self.daemon, &self.slug, self.timeout, false).await?;
            mcp.request("resources/list", params).await
        });
        let rows = match result {
            Ok(mut result) => match result.remove("resources") {
                Some(Value::Array(rows)) => rows,
                _ => return Err(malformed("resources/list", "without a `resources` array")),
            },
            // An app that lists none is not offered resources/* at all.
            Err(f) if f.reason == "no_resources" => Vec::new(),
            Err(f) => return Err(f),
        };
        let resources = rows
            .into_iter()
            .map(from_value::<ResourceInfo>)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| {
                malformed("resources/list", &format!("a resource row it cannot read ({e})"))
            })?;
        Ok(Ok(CallResult::Resources { resources }))
    }
}

impl Target for Wire {
    // Boxed: a failure is rare and ends the run, and the checks' results stay small.
    type Error = Box<Failure>;

    fn actions(&mut self) -> Result<Vec<ActionInfo>, Box<Failure>> {
        let listed = self.runtime.block_on(self.client.all_actions(None))?;
        let mut out = Vec::with_capacity(listed.len());
        for row in listed {
            let Some(name) = row.get("name").and_then(Value::as_str) else {
                return Err(malformed("actions/list", "a row without a name").into());
            };
            let mut params = Map::new();
            params.insert("action", name);
            let mut result =
                self.runtime.block_on(self.client.request("actions/describe", params))?;
            let action = result.remove("action").unwrap_or(Value::Null);
            out.push(from_value::<ActionInfo>(action).map_err(|e| {
                malformed("actions/describe", &format!("an action it cannot read ({e})"))
            })?);
        }
        Ok(out)
    }

    fn call(&mut self, call: &Call) -> Result<Reply<CallResult>, Box<Failure>> {
        let mut params = Map::new();
        let method = match call {
            Call::Execute(c) => {
                params = execute_params(&c.action, &c.input, c.expected_revision);
                "actions/execute"
            }
            Call::Batch(b) => {
                let calls: Vec<Value> = b
                    .calls
                    .iter()
                    .map(|c| {
                        Value::Object(execute_params(&c.action, &c.input, c.expected_revision))
                    })
                    .collect();
                params.insert("calls", calls);
                params.insert("atomic", b.atomic);
                params.insert("stopOnError", b.stop_on_error);
                "actions/batch"
            }
            Call::Revision {} => "agent/info",
            Call::Inspect { input } => {
                params.insert("input", input.clone());
                "state/inspect"
            }
            Call::ListResources {} => return Ok(self.resources()?),
            Call::ReadResource(r) => {
                params.insert("uri", r.uri.as_str());
                params.insert("offset", r.offset);
                params.insert("limit", r.limit);
                "resources/read"
            }
            Call::Render { input } => {
                params.insert("input", input.clone());
                "view/render"
            }
            Call::CancelTask { id } => {
                params.insert("id", id.as_str());
                "tasks/cancel"
            }
        };
        let result = match self.request(method, params)? {
            Ok(result) => result,
            Err(e) => return Ok(Err(e)),
        };
        Ok(result_of(call, method, result).map(Ok)?)
    }

    fn task(&mut self, id: &str) -> Result<Reply<TaskSnapshot>, Box<Failure>> {
        let mut params = Map::new();
        params.insert("id", id);
        Ok(match self.request("tasks/get", params)? {
            Ok(mut result) => Ok(task(&mut result, "tasks/get")?),
            Err(e) => Err(e),
        })
    }

    fn pause(&mut self) {
        std::thread::sleep(PAUSE);
    }
}

fn execute_params(action: &str, input: &Payload, expected: Option<u64>) -> Map {
    let mut m = Map::new();
    m.insert("action", action);
    m.insert("input", input.clone().into_value());
    if let Some(revision) = expected {
        m.insert("expectedRevision", revision);
    }
    m
}

/// The JSON-1 result of `method` as the [`CallResult`] the host channel would carry.
fn result_of(call: &Call, method: &str, mut result: Map) -> Result<CallResult, Failure> {
    result.remove("protocolVersion");
    let revision = |r: &Map| {
        r.get("revision")
            .and_then(Value::as_u64)
            .ok_or_else(|| malformed(method, "without a revision"))
    };
    Ok(match call {
        Call::Execute(_) if result.contains_key("task") => {
            CallResult::Deferred { revision: revision(&result)?, task: task(&mut result, method)? }
        }
        Call::Execute(_) => CallResult::Executed {
            revision: revision(&result)?,
            output: result.remove("output").unwrap_or(Value::Null).into(),
        },
        Call::Batch(_) => {
            let Some(Value::Array(rows)) = result.remove("results") else {
                return Err(malformed(method, "without a `results` array"));
            };
            let results = rows
                .into_iter()
                .map(|row| batch_entry(row, method))
                .collect::<Result<Vec<_>, _>>()?;
            CallResult::Batch { results, revision: revision(&result)? }
        }
        Call::Revision {} => CallResult::Revision { revision: revision(&result)? },
        Call::Inspect { .. } => CallResult::Inspected {
            revision: revision(&result)?,
            state: result.remove("state").unwrap_or(Value::Null),
        },
        Call::ReadResource(_) => CallResult::Chunk(
            from_value::<ResourceChunk>(Value::Object(result))
                .map_err(|e| malformed(method, &format!("a chunk it cannot read ({e})")))?,
        ),
        Call::Render { .. } => CallResult::Rendered {
            revision: revision(&result)?,
            output: result.remove("output").unwrap_or(Value::Null),
        },
        Call::CancelTask { .. } => CallResult::Task(task(&mut result, method)?),
        // Answered over MCP by `Wire::resources`, never through here.
        Call::ListResources {} => return Err(malformed(method, "for a listing JSON-1 lacks")),
    })
}

fn task(result: &mut Map, method: &str) -> Result<TaskSnapshot, Failure> {
    let task = result.remove("task").unwrap_or(Value::Null);
    from_value::<TaskSnapshot>(task)
        .map_err(|e| malformed(method, &format!("a task it cannot read ({e})")))
}

fn batch_entry(row: Value, method: &str) -> Result<BatchEntry, Failure> {
    let Value::Object(mut row) = row else {
        return Err(malformed(method, "a result that is not an object"));
    };
    let index = row
        .get("index")
        .and_then(Value::as_u64)
        .and_then(|i| u32::try_from(i).ok())
        .ok_or_else(|| malformed(method, "a result without an index"))?;
    let outcome = if let Some(output) = row.remove("output") {
        BatchOutcome::Output(output)
    } else if row.contains_key("task") {
        BatchOutcome::Task(task(&mut row, method)?)
    } else {
        let error = row.remove("error").unwrap_or(Value::Null);
        BatchOutcome::Error(
            ActionError::from_wire(&error)
                .ok_or_else(|| malformed(method, "a result with neither output, task nor error"))?,
        )
    };
    Ok(BatchEntry { index, outcome })
}

/// The app's own error behind a JSON-1 error (`{code, message, data: {class, reason, ...}}`),
/// when it is one: an outcome the app decided. Anything else, including `outcome_unknown`
/// (the app hung or went away), ends the run.
fn action_error(failure: &Failure) -> Option<ActionError> {
    let wire = failure.wire.as_ref()?;
    let code = wire.get("code")?.as_i64()?;
    let mut data = wire.get("data")?.as_object()?.clone();
    data.remove("class");
    let name = data.remove("reason")?;
    let reason = Reason::from_parts(name.as_str()?, &data)?;
    let class = reason.class();
    (class.code() == code && class != ErrorClass::OutcomeUnknown).then(|| {
        ActionError::new(reason, wire.get("message").and_then(Value::as_str).unwrap_or(""))
    })
}

fn malformed(method: &str, what: &str) -> Failure {
    Failure::new(
        Exit::Protocol,
        "malformed_response",
        format!("the answer to {method} came {what}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Value {
        jfgui_proto::parse(s.as_bytes(), &jfgui_proto::Limits::DEFAULT).unwrap()
    }

    #[test]
    fn app_errors_are_rebuilt_and_outcome_unknown_is_not_one() {
        let stale = Failure::from_rpc_error(&parse(
            r#"{"code":1000,"message":"stale","data":{"class":"not_executed","reason":"stale_revision","currentRevision":7}}"#,
        ));
        assert_eq!(
            action_error(&stale).map(|e| e.reason),
            Some(Reason::StaleRevision { current_revision: 7 })
        );
        let preflight = Failure::from_rpc_error(&parse(
            r#"{"code":1000,"message":"not started","data":{"class":"not_executed","reason":"batch_preflight","index":1,"cause":{"code":1000,"class":"not_executed","reason":"schema_violation","message":"bad","data":{"pointer":"/x"}}}}"#,
        ));
        assert!(matches!(
            action_error(&preflight).map(|e| e.reason),
            Some(Reason::BatchPreflight { index: 1, .. })
        ));
        let gone = Failure::from_rpc_error(&parse(
            r#"{"code":1001,"message":"gone","data":{"class":"outcome_unknown","reason":"app_disconnected"}}"#,
        ));
        assert_eq!(action_error(&gone), None);
        let params = Failure::from_rpc_error(&parse(
            r#"{"code":-32602,"message":"bad","data":{"reason":"invalid_params"}}"#,
        ));
        assert_eq!(action_error(&params), None);
    }

    #[test]
    fn results_become_host_channel_results() {
        let execute = Call::Execute(jfgui_proto::channel::ExecuteCall {
            action: "a.b".into(),
            input: Value::Null.into(),
            expected_revision: None,
            consent: None,
        });
        let task =
            parse(r#"{"task":{"id":"t1","state":"running"},"revision":4,"protocolVersion":"1"}"#);
        match result_of(&execute, "actions/execute", task.as_object().unwrap().clone()).unwrap() {
            CallResult::Deferred { task, revision } => {
                assert_eq!((task.id.as_str(), revision), ("t1", 4))
            }
            other => panic!("{other:?}"),
        }
        let batch = Call::Batch(jfgui_proto::channel::BatchCall {
            calls: vec![],
            atomic: false,
            stop_on_error: true,
            consent: None,
        });
        let rows = parse(
            r#"{"results":[{"index":0,"output":{}},{"index":1,"error":{"code":1002,"class":"failed","reason":"host_error","message":"no","data":{"code":"x"}}}],"revision":9}"#,
        );
        match result_of(&batch, "actions/batch", rows.as_object().unwrap().clone()).unwrap() {
            CallResult::Batch { results, revision } => {
                assert_eq!((results.len(), revision), (2, 9));
                assert!(matches!(results[1].outcome, BatchOutcome::Error(_)));
            }
            other => panic!("{other:?}"),
        }
        let chunk = parse(
            r#"{"uri":"u","mimeType":"image/png","offset":0,"totalSize":3,"data":"AAAA","eof":true,"protocolVersion":"1"}"#,
        );
        let read = Call::ReadResource(jfgui_proto::channel::ReadResource {
            uri: "u".into(),
            offset: 0,
            limit: 3,
        });
        assert!(matches!(
            result_of(&read, "resources/read", chunk.as_object().unwrap().clone()),
            Ok(CallResult::Chunk(c)) if c.total_size == 3 && c.eof
        ));
    }
}
