//! The nine stable MCP tools and `tools/call`: each tool is one JSON-1 method, its
//! arguments are that method's params and its `structuredContent` is that method's result.
//!
//! App actions are reached through these tools (search, describe, execute), never published one
//! tool per action: the tool set stays fixed, small and cacheable, whatever the app registers.
//! Names use only letters, digits and `_` (Claude Desktop drops the whole set for one dotted
//! name).
//!
//! Output schemas accept both outcomes: a success (the JSON-1 result) and a tool error
//! (`{error{code,class,reason,message,data}}`), as `anyOf` over the required members. Both
//! official SDK clients validate `structuredContent` of successes against `outputSchema`; the
//! error branch keeps clients that also validate errors satisfied. Every root is
//! `type: "object"` (2025-11-25 requires it; the TS SDK v1 checks it) and every property schema
//! is an object, never a boolean schema (the TS SDK v1 rejects those).

use std::sync::OnceLock;

use jfgui_proto::{ActionError, ErrorClass, Map, Payload, Value};

use super::backend::Backend;
use super::rpc::{INTERNAL_ERROR, INVALID_PARAMS, RpcError, object, to_text};
use super::seen;
use super::tool_schemas::{self as schemas, JsonSchema, Properties};
use crate::client::method::{Method, MethodError};

/// One tool: its MCP face and the JSON-1 method behind it.
struct ToolDef {
    name: &'static str,
    method: Method,
    title: &'static str,
    description: &'static str,
    /// JSON Schema of the arguments (= the JSON-1 params).
    input: fn() -> JsonSchema,
    /// JSON Schema properties of the success result (= the JSON-1 result).
    output: fn() -> Properties,
    /// Members every success result has.
    output_required: &'static [&'static str],
    /// Reads only (`readOnlyHint`); otherwise it may change the app's state.
    read_only: bool,
    /// Repeating the call has no further effect (`idempotentHint`).
    idempotent: bool,
}

static TOOLS: &[ToolDef] = &[
    ToolDef {
        name: "jfgui_actions_search",
        method: Method::ActionsList,
        title: "Search actions",
        description: "Find the actions the application offers (semantic commands such as inserting text or exporting). `query` filters by a case-insensitive substring of name or description; pages follow `nextCursor` (pass it back as `cursor`). With `describe: true` each match carries its inputSchema, so you can go straight to jfgui_actions_execute.",
        input: schemas::search_input,
        output: schemas::search_output,
        output_required: &["actions"],
        read_only: true,
        idempotent: true,
    },
    ToolDef {
        name: "jfgui_actions_describe",
        method: Method::ActionsDescribe,
        title: "Describe an action",
        description: "Get one action's full definition: inputSchema, outputSchema, read or write, undo and transaction domain. Not needed after jfgui_actions_search with `describe: true`.",
        input: schemas::describe_input,
        output: schemas::describe_output,
        output_required: &["action"],
        read_only: true,
        idempotent: true,
    },
    ToolDef {
        name: "jfgui_actions_execute",
        method: Method::ActionsExecute,
        title: "Execute an action",
        description: "Run one action; `input` must match its inputSchema. Write actions need `expectedRevision`, the latest revision you saw (jfgui_state_inspect or an earlier result). On stale_revision nothing happened: re-read the state, decide again, retry with data.currentRevision. Success gives `output` and the new `revision`; long-running actions give a `task` (jfgui_tasks_get, jfgui_tasks_cancel).",
        input: schemas::execute_input,
        output: schemas::execute_output,
        output_required: &["revision"],
        read_only: false,
        idempotent: false,
    },
    ToolDef {
        name: "jfgui_actions_batch",
        method: Method::ActionsBatch,
        title: "Execute several actions",
        description: "Run 1 to 128 action calls in order. `atomic: true`: all or none take effect (a failure names its call in data.index, its error in data.cause) and every expectedRevision is that of the state before the batch. Otherwise each expectedRevision is that of the moment its call runs, the batch stops at the first error unless `stopOnError` is false, and `results` has each attempted call's `output` or `error` by `index`.",
        input: schemas::batch_input,
        output: schemas::batch_output,
        output_required: &["revision"],
        read_only: false,
        idempotent: false,
    },
    ToolDef {
        name: "jfgui_state_inspect",
        method: Method::StateInspect,
        title: "Inspect the application state",
        description: "Read the application's state and its revision: to ground decisions, to get expectedRevision for a write, after stale_revision. `input` is application-defined (e.g. {\"sinceRevision\": N} answers {\"unchanged\": true} if nothing changed).",
        input: schemas::inspect_input,
        output: schemas::inspect_output,
        output_required: &["revision", "state"],
        read_only: true,
        idempotent: true,
    },
    ToolDef {
        name: "jfgui_tasks_get",
        method: Method::TasksGet,
        title: "Get a task",
        description: "Poll a task an action started (its `task.id`): running (with progress), cancelling, cancelled, completed (with result) or failed (with error).",
        input: schemas::tasks_get_input,
        output: schemas::task_output,
        output_required: &["task"],
        read_only: true,
        idempotent: true,
    },
    ToolDef {
        name: "jfgui_tasks_cancel",
        method: Method::TasksCancel,
        title: "Cancel a task",
        description: "Stop a running task: it becomes cancelling, then cancelled at the application's next safe point (poll jfgui_tasks_get); a finished task keeps its state.",
        input: schemas::tasks_cancel_input,
        output: schemas::task_output,
        output_required: &["task"],
        read_only: false,
        idempotent: true,
    },
    ToolDef {
        name: "jfgui_resources_read",
        method: Method::ResourcesRead,
        title: "Read a resource in chunks",
        description: "Read a resource (an export, a render: the `uri` an action returned) in chunks of up to 65536 bytes from `offset`; repeat with offset advanced by the bytes read until `eof`. Text and JSON chunks come as text, a whole small image as an image; `data` is always the base64 bytes.",
        input: schemas::resources_read_input,
        output: schemas::resources_read_output,
        output_required: &["uri", "mimeType", "offset", "totalSize", "data", "eof"],
        read_only: true,
        idempotent: true,
    },
    ToolDef {
        name: "jfgui_view_render",
        method: Method::ViewRender,
        title: "Render the view",
        description: "Render what the application shows and see it: the result carries the PNG as an image (at most 512 KiB; a larger one gives its `uri`, to read with jfgui_resources_read). Use it to check the visual result of your changes.",
        input: schemas::render_input,
        output: schemas::render_output,
        output_required: &["output", "revision"],
        read_only: true,
        idempotent: true,
    },
];

/// The all-apps server's own tool.
pub(crate) const APPS_LIST: &str = "jfgui_apps_list";

/// How a failed call looks, said once in each server's instructions (not in every schema).
pub(crate) const ERRORS_EXPLAINED: &str = "A failed call is a result with isError and structuredContent.error {code, class, reason, message, data}; class says what it means for you: not_executed (nothing happened; fix and retry), outcome_unknown (inspect the state before retrying), failed (the app reported failure), internal (a bug), not_found, invalid_params (the arguments do not fit the tool's inputSchema).";

/// The `Tool` objects of a one-app endpoint's `tools/list`, built once.
pub(crate) fn tool_list() -> &'static [Value] {
    static LIST: OnceLock<Vec<Value>> = OnceLock::new();
    LIST.get_or_init(|| TOOLS.iter().map(|t| t.to_tool(false)).collect())
}

/// The `Tool` objects of the all-apps server's `tools/list`, built once: `jfgui_apps_list`,
/// then the nine tools with the `app` argument.
pub(crate) fn all_apps_tool_list() -> &'static [Value] {
    static LIST: OnceLock<Vec<Value>> = OnceLock::new();
    LIST.get_or_init(|| {
        let apps = tool_value(
            APPS_LIST,
            "List applications",
            "List the user's applications: call this first. Every other jfgui_* tool takes an entry's `app` (or its exact displayName, or a unique prefix) as its `app` argument, optional while only one application is enabled. `enabled: false`: agent access is off; tell the user what `hint` says. `running: false`: installed, not running; a call naming it starts it (a few seconds). A restarted application keeps its `app`; one that is gone answers not_found/app (data.apps lists those there are).".to_owned(),
            schemas::apps_list_input(),
            schemas::output(schemas::apps_list_output(), &["apps"]),
            (true, true),
        );
        std::iter::once(apps).chain(TOOLS.iter().map(|t| t.to_tool(true))).collect()
    })
}

/// What the tools that run actions add about actions that ask the user first.
const MAY_WAIT: &str = "An action with confirm: true may answer with a task awaiting \"confirmation\" while the user decides: poll it with jfgui_tasks_get; do not retry.";

impl ToolDef {
    /// The tool for a one-app endpoint, or with the `app` argument for the all-apps server.
    fn to_tool(&self, all_apps: bool) -> Value {
        let input = if all_apps { schemas::with_app((self.input)()) } else { (self.input)() };
        let description = if matches!(self.method, Method::ActionsExecute | Method::ActionsBatch) {
            format!("{} {MAY_WAIT}", self.description)
        } else {
            self.description.to_owned()
        };
        let output = schemas::output((self.output)(), self.output_required);
        tool_value(
            self.name,
            self.title,
            description,
            input,
            output,
            (self.read_only, self.idempotent),
        )
    }
}

/// Whether `tools/call` with `params` is answered from the daemon's own state (see
/// `Method::is_local`), so the connection runs it on its own task.
pub(crate) fn is_local(params: &Map) -> bool {
    let name = params.get("name").and_then(Value::as_str);
    TOOLS.iter().any(|t| Some(t.name) == name && t.method.is_local())
}

/// One `Tool` object; `(read_only, idempotent)` become the annotations.
fn tool_value(
    name: &str,
    title: &str,
    description: String,
    input: JsonSchema,
    output: JsonSchema,
    (read_only, idempotent): (bool, bool),
) -> Value {
    // The title is the tool's own `title` (both revisions have it), not repeated here.
    let mut annotations = object([("readOnlyHint", read_only.into())]);
    // Destructive and idempotent mean something only for tools that may write (the MCP tool
    // annotations).
    if !read_only {
        annotations.insert("destructiveHint", true);
        annotations.insert("idempotentHint", idempotent);
    }
    annotations.insert("openWorldHint", false);
    Value::Object(object([
        ("name", name.into()),
        ("title", title.into()),
        ("description", description.into()),
        ("inputSchema", input.into()),
        ("outputSchema", output.into()),
        ("annotations", Value::Object(annotations)),
    ]))
}

/// Runs `tools/call` with `params` (the request's params object): the era-neutral
/// `CallToolResult` members `content`, `structuredContent`, `isError`.
///
/// Protocol errors (malformed params, unknown tool, internal failures) are `Err`; everything the
/// tool itself reports, including arguments its method refuses, is a result with `isError`, so
/// the model sees why and can correct itself.
pub(crate) async fn call<B: Backend>(app: &B, params: &Map) -> Result<Payload, RpcError> {
    let name = match params.get("name") {
        Some(Value::String(name)) => name.as_str(),
        Some(other) => {
            return Err(RpcError::invalid_params(
                "invalid_tool_name",
                format!("tools/call params.name must be a string, not {}.", other.type_name()),
            ));
        }
        None => {
            return Err(RpcError::invalid_params(
                "missing_tool_name",
                "tools/call needs params.name, the tool to call.",
            ));
        }
    };
    let Some(tool) = TOOLS.iter().find(|t| t.name == name) else {
        if let Some(listed) = (name == APPS_LIST).then(|| app.apps_list()).flatten() {
            return match listed {
                Ok(result) => success(result.into(), Vec::new()),
                Err(error) => failure(error.to_wire(), hint(&error)),
            };
        }
        let mut data = object([("reason", "unknown_tool".into()), ("tool", name.into())]);
        let names = app.tool_list().iter().filter_map(|t| t.get("name").cloned());
        data.insert("tools", Value::Array(names.collect::<Vec<_>>()));
        return Err(RpcError::with_data(INVALID_PARAMS, format!("Unknown tool: {name}."), data));
    };
    let arguments = match params.get("arguments") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(arguments)) => arguments.clone(),
        Some(other) => {
            return Err(RpcError::invalid_params(
                "invalid_arguments",
                format!(
                    "tools/call params.arguments must be an object, not {}.",
                    other.type_name()
                ),
            ));
        }
    };
    match app.call(tool.method, arguments.clone()).await {
        Ok(result) => {
            let seen = seen::extra_content(app, tool.method, &arguments, &result).await;
            success(result, seen)
        }
        Err(MethodError::Action(error)) => failure(error.to_wire(), hint(&error)),
        Err(MethodError::InvalidParams { message, mut data }) => {
            let names_app = data.get("param").and_then(Value::as_str) == Some("app");
            let reason = match data.remove("reason") {
                Some(Value::String(reason)) => reason,
                _ => "invalid_params".to_owned(),
            };
            let error = object([
                ("code", INVALID_PARAMS.into()),
                ("class", "invalid_params".into()),
                ("reason", reason.into()),
                ("message", message.into()),
                ("data", Value::Object(data)),
            ]);
            let hint = if names_app {
                "Nothing happened: name the application with `app`, one of the `app` values in data.apps (jfgui_apps_list lists them all), and call again.".to_owned()
            } else {
                format!(
                    "Nothing happened: the arguments do not fit {}'s inputSchema; fix them and call again.",
                    tool.name
                )
            };
            failure(Value::Object(error), hint)
        }
        Err(MethodError::Internal { message }) => Err(RpcError::new(INTERNAL_ERROR, message)),
    }
}

/// The tool error that replaces a tool result too large for one message: same revision
/// decoration (`resultType`, `_meta`), `internal/response_too_large` inside.
pub(crate) fn too_large(result: &Payload, limit: usize) -> Payload {
    let error = ActionError::new(
        jfgui_proto::Reason::ResponseTooLarge { action: None },
        format!("The result does not fit in one {limit}-byte message."),
    );
    let hint = "Nothing was lost, but the answer is too large: ask for less (a smaller limit or page, a narrower state query) or read resources in chunks with jfgui_resources_read. If this was a write, it ran: inspect the state before retrying.".to_owned();
    let mut replaced = match failure(error.to_wire(), hint) {
        Ok(m) => m,
        Err(_) => Map::new().into(),
    };
    for key in ["resultType", "_meta"] {
        if let Some(v) = result.get(key) {
            replaced.insert(key, v.clone());
        }
    }
    replaced
}

/// A success: `structuredContent` is the JSON-1 result, its text twin the first content block,
/// then what a model should see of it (`seen`: an image, a text).
fn success(structured: Payload, seen: Vec<Payload>) -> Result<Payload, RpcError> {
    let text = to_text(&structured)?;
    let content = std::iter::once(text_block(text)).chain(seen).collect();
    Ok(Payload::object([
        ("content", Payload::Array(content)),
        ("structuredContent", structured),
        ("isError", false.into()),
    ]))
}

/// A tool error: `structuredContent {error}`, the same as text, then a sentence for the model
/// on what to do next.
fn failure(error: Value, hint: String) -> Result<Payload, RpcError> {
    let structured = Payload::from(object([("error", error)]));
    let text = to_text(&structured)?;
    Ok(Payload::object([
        ("content", Payload::Array(vec![text_block(text), text_block(hint.into())])),
        ("structuredContent", structured),
        ("isError", true.into()),
    ]))
}

fn text_block(text: Payload) -> Payload {
    Payload::object([("type", "text".into()), ("text", text)])
}

/// What the model should do about an application error, in one or two sentences.
fn hint(error: &ActionError) -> String {
    use jfgui_proto::Reason;
    match &error.reason {
        Reason::StaleRevision { current_revision } => format!(
            "Nothing happened: the application changed and its current revision is {current_revision}. Re-read the state with jfgui_state_inspect, decide again, and retry with expectedRevision {current_revision}."
        ),
        Reason::RevisionRequired => "Nothing happened: write actions need expectedRevision. Get the current revision with jfgui_state_inspect and retry with it.".to_owned(),
        Reason::UnknownAction { .. } | Reason::Action { .. } => "No such action. Find the available actions with jfgui_actions_search.".to_owned(),
        Reason::App { .. } => "Nothing happened: no enabled application answers to that `app` value. data.apps lists the ones that are there (jfgui_apps_list too); an application that was restarted is reached again by the same value once it is back.".to_owned(),
        Reason::DaemonUnavailableUnsent => "Nothing happened: jfgui-agentd is not running where the gateway looks (the message says where, and which setting points elsewhere). Tell the user; the gateway keeps retrying, so call again once it runs.".to_owned(),
        Reason::DaemonUnavailable => "jfgui-agentd went away while this call was on its way: it may or may not have run. Once jfgui_apps_list answers again, inspect the state before retrying.".to_owned(),
        Reason::AppDisabled { .. } => "Nothing happened: tell the user to turn on agent access in that application (its \"Agent access\" setting), then call again.".to_owned(),
        Reason::SchemaViolation { pointer } => format!(
            "Nothing happened: the input does not match the action's inputSchema at \"{pointer}\". Check it with jfgui_actions_describe and retry."
        ),
        Reason::BatchPreflight { index, .. } => format!(
            "Nothing happened: call {index} of the batch cannot run (data.cause says why). Fix it and resend the batch."
        ),
        Reason::RolledBack { index, .. } => format!(
            "Call {index} of the atomic batch failed (data.cause says why); the application rolled the whole batch back, so nothing changed."
        ),
        _ => match error.class() {
            ErrorClass::NotExecuted => "Nothing happened; fix the cause and retry.".to_owned(),
            ErrorClass::OutcomeUnknown => "The outcome is unknown: it may or may not have happened. Inspect the state with jfgui_state_inspect before retrying.".to_owned(),
            ErrorClass::Failed => "The application reported a failure; inspect the state before deciding what to do next.".to_owned(),
            ErrorClass::Internal => "An internal error occurred in the application or the daemon; retrying the same call is unlikely to help.".to_owned(),
            ErrorClass::NotFound => "Not found: check the name or id you passed.".to_owned(),
        },
    }
}

#[cfg(test)]
mod tests {
    use jfgui_proto::Limits;

    use super::*;

    #[test]
    fn nine_tools_with_client_safe_names() {
        let names: Vec<&str> =
            tool_list().iter().map(|t| t.get("name").and_then(Value::as_str).unwrap()).collect();
        assert_eq!(
            names,
            [
                "jfgui_actions_search",
                "jfgui_actions_describe",
                "jfgui_actions_execute",
                "jfgui_actions_batch",
                "jfgui_state_inspect",
                "jfgui_tasks_get",
                "jfgui_tasks_cancel",
                "jfgui_resources_read",
                "jfgui_view_render",
            ]
        );
        for name in names {
            // Claude Desktop's rule: ^[a-zA-Z0-9_-]{1,64}$
            assert!(!name.is_empty() && name.len() <= 64, "{name}");
            assert!(name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-'));
        }
    }

    #[test]
    fn every_schema_has_an_object_root_and_object_properties() {
        fn properties_are_objects(schema: &Value, path: &str) {
            if let Some(Value::Object(props)) = schema.get("properties") {
                for (k, v) in props.iter() {
                    assert!(v.as_object().is_some(), "{path}.{k} is not an object schema");
                    properties_are_objects(v, &format!("{path}.{k}"));
                }
            }
            if let Some(items) = schema.get("items") {
                properties_are_objects(items, &format!("{path}[]"));
            }
        }
        for tool in tool_list() {
            let name = tool.get("name").and_then(Value::as_str).unwrap();
            for key in ["inputSchema", "outputSchema"] {
                let schema = tool.get(key).unwrap();
                assert_eq!(schema.get("type").and_then(Value::as_str), Some("object"), "{name}");
                properties_are_objects(schema, &format!("{name}.{key}"));
            }
            let description = tool.get("description").and_then(Value::as_str).unwrap();
            assert!(description.len() > 80, "{name} needs a description a model can act on");
        }
    }

    #[test]
    fn write_tools_tell_the_model_about_expected_revision() {
        for tool in tool_list() {
            let name = tool.get("name").and_then(Value::as_str).unwrap();
            if name == "jfgui_actions_execute" || name == "jfgui_actions_batch" {
                let d = tool.get("description").and_then(Value::as_str).unwrap();
                assert!(d.contains("expectedRevision"), "{name}");
                assert!(d.contains("awaiting") && d.contains("do not retry"), "{name}");
            }
        }
        let execute = &tool_list()[2];
        let d = execute.get("description").and_then(Value::as_str).unwrap();
        assert!(d.contains("stale_revision") && d.contains("currentRevision"));
    }

    /// The rendered tool lists (one-app endpoint, all-apps server), one tool per line, as the
    /// official SDK clients last accepted them (`tests/mcp-clients/run.sh`). A deliberate
    /// change regenerates the files with `JFGUI_UPDATE_GOLDEN=1 cargo test -p jfgui-daemon
    /// tool_list_matches`.
    #[test]
    fn tool_list_matches_the_golden_file() {
        matches_golden(tool_list(), "tools.golden");
        matches_golden(all_apps_tool_list(), "tools-all-apps.golden");
    }

    fn matches_golden(list: &[Value], file: &str) {
        let path = format!("{}/src/client/mcp/{file}", env!("CARGO_MANIFEST_DIR"));
        let mut rendered = String::new();
        for tool in list {
            let line = jfgui_proto::encode(tool, &Limits::DEFAULT).unwrap();
            rendered.push_str(std::str::from_utf8(&line).unwrap());
            rendered.push('\n');
        }
        if std::env::var_os("JFGUI_UPDATE_GOLDEN").is_some() {
            std::fs::write(&path, &rendered).unwrap();
        }
        let golden = std::fs::read_to_string(&path).unwrap();
        for (got, want) in rendered.lines().zip(golden.lines()) {
            assert_eq!(got, want);
        }
        assert_eq!(rendered.lines().count(), golden.lines().count());
    }

    #[test]
    fn the_all_apps_list_is_apps_list_then_the_nine_with_app_first() {
        let list = all_apps_tool_list();
        assert_eq!(list.len(), 10);
        assert_eq!(list[0].get("name").and_then(Value::as_str), Some(APPS_LIST));
        for (all, one) in list[1..].iter().zip(tool_list()) {
            assert_eq!(all.get("name"), one.get("name"));
            let props = all.get("inputSchema").and_then(|s| s.get("properties")).unwrap();
            let props = props.as_object().unwrap();
            assert_eq!(props.keys().next(), Some("app"));
            // Everything else is the one-app schema, unchanged.
            let own = one.get("inputSchema").and_then(|s| s.get("properties")).unwrap();
            let own = own.as_object().unwrap();
            assert_eq!(props.len(), own.len() + 1);
            assert!(own.iter().all(|(k, v)| props.get(k) == Some(v)));
            assert_eq!(all.get("outputSchema"), one.get("outputSchema"));
            // The `app` argument is explained once, in jfgui_apps_list.
            assert_eq!(all.get("description"), one.get("description"));
        }
    }

    /// The all-apps `tools/list` result stays within 12 KiB (about 3,000 tokens a model pays
    /// on every session): what all tools share is said once, in jfgui_apps_list and the
    /// instructions.
    #[test]
    fn the_all_apps_tool_list_fits_in_12_kib() {
        let result = object([("tools", Value::Array(all_apps_tool_list().to_vec()))]);
        let bytes = jfgui_proto::encode(&Value::Object(result), &Limits::DEFAULT).unwrap();
        assert!(bytes.len() <= 12 * 1024, "{} bytes", bytes.len());
    }

    #[test]
    fn stale_revision_hint_names_the_current_revision() {
        let e = ActionError::new(
            jfgui_proto::Reason::StaleRevision { current_revision: 42 },
            "The document changed.",
        );
        let h = hint(&e);
        assert!(h.contains("42") && h.contains("expectedRevision 42"), "{h}");
    }
}
