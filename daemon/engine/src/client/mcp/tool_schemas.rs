//! The JSON Schemas of the nine tools' arguments and results, built as values: proto's
//! [`Schema`] renders what it can express (types, bounds, enums), and [`JsonSchema`] adds the
//! annotations a model reads (descriptions, defaults) and the few keywords `Schema` has no
//! field for (`minLength`, `minItems`, `contentEncoding`). The bounds come from the constants
//! the methods enforce, so a schema cannot promise more than the daemon accepts.
//!
//! Members come out in the order they are added, so the rendered list is stable byte for byte
//! (`tools.golden` pins it).

use jfgui_proto::channel::{MAX_BATCH_CALLS, MAX_RESOURCE_CHUNK};
use jfgui_proto::schema::{ANY, BOOLEAN, INTEGER, STRING};
use jfgui_proto::{MAX_ACTION_NAME, MAX_REVISION, Map, Schema, Value};

use crate::client::methods::{DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT};

/// A JSON Schema object under construction.
#[derive(Debug, Clone)]
pub(crate) struct JsonSchema(Map);

impl JsonSchema {
    /// `schema` as proto renders it.
    fn of(schema: &Schema) -> JsonSchema {
        match schema.to_json_schema() {
            Value::Object(m) => JsonSchema(m),
            other => unreachable!("Schema::to_json_schema renders objects, not {other:?}"),
        }
    }

    /// `{"type": name}`, for the containers: proto's object schema always lists its properties
    /// and its array schema needs a `static` item schema, where these are built as they go.
    fn typed(name: &str) -> JsonSchema {
        JsonSchema(Map::new()).with("type", name)
    }

    /// `{"type":"object"}`; [`JsonSchema::properties`] adds the members.
    fn object() -> JsonSchema {
        JsonSchema::typed("object")
    }

    /// An array of `items`.
    fn array(items: JsonSchema) -> JsonSchema {
        JsonSchema::typed("array").items(items)
    }

    /// An integer in `min..=max` (or unbounded above).
    fn integer(min: u64, max: Option<u64>) -> JsonSchema {
        let bound = |n: u64| Some(i64::try_from(n).unwrap_or(i64::MAX));
        JsonSchema::of(&Schema::Integer { min: bound(min), max: max.and_then(bound) })
    }

    /// A string of 1 to [`MAX_ACTION_NAME`] characters: an action name.
    fn action_name() -> JsonSchema {
        JsonSchema::of(&STRING).with("minLength", 1u64).with("maxLength", MAX_ACTION_NAME as u64)
    }

    fn with(mut self, key: &str, value: impl Into<Value>) -> JsonSchema {
        self.0.insert(key, value);
        self
    }

    fn describe(self, text: &str) -> JsonSchema {
        self.with("description", text)
    }

    fn properties<'a>(
        self,
        members: impl IntoIterator<Item = (&'a str, JsonSchema)>,
    ) -> JsonSchema {
        let props: Map = members.into_iter().map(|(k, v)| (k.to_owned(), v.into())).collect();
        self.with("properties", props)
    }

    fn required(self, names: &[&str]) -> JsonSchema {
        self.with("required", names.iter().map(|n| Value::from(*n)).collect::<Vec<_>>())
    }

    /// `additionalProperties: false`: unknown arguments are refused, as the methods do.
    fn closed(self) -> JsonSchema {
        self.with("additionalProperties", false)
    }

    fn items(self, items: JsonSchema) -> JsonSchema {
        self.with("items", items)
    }
}

impl From<JsonSchema> for Value {
    fn from(schema: JsonSchema) -> Value {
        Value::Object(schema.0)
    }
}

/// `input` with the all-apps server's `app` argument as its first property (the nine tools'
/// arguments are otherwise those of the one-app endpoint).
pub(crate) fn with_app(input: JsonSchema) -> JsonSchema {
    // Explained once, in jfgui_apps_list and the instructions, not in every tool.
    let app = JsonSchema::of(&STRING).with("minLength", 1u64).describe("See jfgui_apps_list.");
    let mut properties = Map::new();
    properties.insert("app", app);
    let JsonSchema(mut schema) = input;
    if let Some(Value::Object(own)) = schema.get("properties") {
        for (name, property) in own.iter() {
            properties.insert(name, property.clone());
        }
    }
    schema.insert("properties", properties);
    JsonSchema(schema)
}

/// Arguments of `jfgui_apps_list`: none.
pub(crate) fn apps_list_input() -> JsonSchema {
    JsonSchema::object().closed()
}

/// Result of `jfgui_apps_list`: the registered apps, agent access on or off, then the installed
/// apps that are not running (`running: false`, no `pid`, `enabled` or `actionCount`).
pub(crate) fn apps_list_output() -> Properties {
    let entry = JsonSchema::object()
        .properties([
            ("app", JsonSchema::of(&STRING)),
            ("displayName", JsonSchema::of(&STRING)),
            ("pid", JsonSchema::integer(0, None)),
            ("enabled", JsonSchema::of(&BOOLEAN)),
            ("running", JsonSchema::of(&BOOLEAN)),
            ("actionCount", JsonSchema::integer(0, None)),
            ("hint", JsonSchema::of(&STRING)),
        ])
        .required(&["app", "displayName", "running"]);
    vec![("apps", JsonSchema::array(entry))]
}

/// Properties of a success result, in order.
pub(crate) type Properties = Vec<(&'static str, JsonSchema)>;

/// A tool's `outputSchema`: the success result's `properties` plus `error`, and `anyOf` over
/// the members each outcome has (see `tools.rs` for why both outcomes are described).
pub(crate) fn output(mut properties: Properties, required: &[&str]) -> JsonSchema {
    properties.push(("error", error()));
    let requires = |names: &[&str]| Value::from(JsonSchema(Map::new()).required(names));
    JsonSchema::object()
        .properties(properties)
        .with("anyOf", vec![requires(required), requires(&["error"])])
}

/// Error object of a failed call (JSON-1's error object, plus `invalid_params` for arguments the
/// method refused). Its members are explained once, in the instructions
/// (`tools::ERRORS_EXPLAINED`), not in every tool's schema (the token budget of `tools/list`).
fn error() -> JsonSchema {
    JsonSchema::object()
}

/// A deferred task as JSON-1 reports it.
fn task() -> JsonSchema {
    static STATES: Schema = Schema::String {
        max_length: None,
        one_of: Some(&["running", "cancelling", "cancelled", "completed", "failed"]),
    };
    JsonSchema::object()
        .properties([("id", JsonSchema::of(&STRING)), ("state", JsonSchema::of(&STATES))])
        // progress, result and error as jfgui_tasks_get's description names them.
        .required(&["id", "state"])
}

/// The revision a result reports (its bounds are those of `expectedRevision`, not repeated).
fn revision() -> JsonSchema {
    JsonSchema::of(&INTEGER).describe("Pass it as expectedRevision to the next write.")
}

/// `read` or `write`.
fn kind() -> JsonSchema {
    static KIND: Schema = Schema::String { max_length: None, one_of: Some(&["read", "write"]) };
    JsonSchema::of(&KIND)
}

/// The application-defined `input` object of inspect and render.
fn app_input(description: &str) -> JsonSchema {
    JsonSchema::object()
        .properties([("input", JsonSchema::object().describe(description))])
        .closed()
}

/// One task id argument.
fn task_id(description: &str) -> JsonSchema {
    JsonSchema::object()
        .properties([("id", JsonSchema::of(&STRING).describe(description))])
        .required(&["id"])
        .closed()
}

pub(crate) fn search_input() -> JsonSchema {
    JsonSchema::object()
        .properties([
            (
                "query",
                JsonSchema::of(&STRING).describe(
                    "Case-insensitive substring of the action name or description, e.g. \"text\".",
                ),
            ),
            ("cursor", JsonSchema::of(&STRING).describe("The nextCursor of the previous page.")),
            (
                "limit",
                JsonSchema::integer(1, Some(MAX_LIST_LIMIT)).with("default", DEFAULT_LIST_LIMIT),
            ),
            (
                "describe",
                JsonSchema::of(&BOOLEAN)
                    .with("default", false)
                    .describe("Also return each match's inputSchema."),
            ),
        ])
        .closed()
}

pub(crate) fn search_output() -> Properties {
    let entry = JsonSchema::object()
        .properties([
            ("name", JsonSchema::of(&STRING)),
            ("description", JsonSchema::of(&STRING)),
            ("kind", kind()),
            ("title", JsonSchema::of(&STRING)),
            ("confirm", JsonSchema::of(&BOOLEAN)),
            ("inputSchema", JsonSchema::of(&ANY)),
        ])
        .required(&["name", "description", "kind"]);
    vec![("actions", JsonSchema::array(entry)), ("nextCursor", JsonSchema::of(&STRING))]
}

pub(crate) fn describe_input() -> JsonSchema {
    JsonSchema::object()
        .properties([(
            "action",
            JsonSchema::action_name()
                .describe("The action name, as listed by jfgui_actions_search."),
        )])
        .required(&["action"])
        .closed()
}

pub(crate) fn describe_output() -> Properties {
    // The members are those the tool's description names; listing each one's type here would
    // only spend tokens.
    let action = JsonSchema::object().required(&[
        "name",
        "description",
        "kind",
        "inputSchema",
        "outputSchema",
    ]);
    vec![("action", action)]
}

pub(crate) fn execute_input() -> JsonSchema {
    JsonSchema::object()
        .properties([
            ("action", JsonSchema::action_name().describe("The action name.")),
            (
                "input",
                JsonSchema::object()
                    .describe("The action's arguments, matching its inputSchema. Defaults to {}."),
            ),
            (
                "expectedRevision",
                JsonSchema::integer(0, Some(MAX_REVISION)).describe(
                    "Required for write actions: the revision your decision is based on.",
                ),
            ),
        ])
        .required(&["action"])
        .closed()
}

pub(crate) fn execute_output() -> Properties {
    vec![
        (
            "output",
            JsonSchema::of(&ANY).describe("What the action returned (matches its outputSchema)."),
        ),
        ("task", task()),
        ("revision", revision()),
    ]
}

pub(crate) fn batch_input() -> JsonSchema {
    let call = JsonSchema::object()
        .properties([
            ("action", JsonSchema::action_name()),
            ("input", JsonSchema::object()),
            ("expectedRevision", JsonSchema::integer(0, Some(MAX_REVISION))),
        ])
        .required(&["action"])
        .closed();
    let calls = JsonSchema::typed("array")
        .with("minItems", 1u64)
        .with("maxItems", MAX_BATCH_CALLS as u64)
        .items(call);
    JsonSchema::object()
        .properties([
            ("calls", calls),
            ("atomic", JsonSchema::of(&BOOLEAN).with("default", false).describe("All or nothing.")),
            (
                "stopOnError",
                JsonSchema::of(&BOOLEAN)
                    .with("default", true)
                    .describe("Non-atomic batches: stop at the first error."),
            ),
        ])
        .required(&["calls"])
        .closed()
}

pub(crate) fn batch_output() -> Properties {
    let entry = JsonSchema::object()
        .properties([
            ("index", JsonSchema::of(&INTEGER)),
            ("output", JsonSchema::of(&ANY)),
            ("task", task()),
            ("error", error()),
        ])
        .required(&["index"]);
    // `task` instead of `results`: the batch waits for the user's yes.
    vec![("results", JsonSchema::array(entry)), ("task", task()), ("revision", revision())]
}

pub(crate) fn inspect_input() -> JsonSchema {
    app_input("Application-defined query, filter, paging or sinceRevision. Defaults to {}.")
}

pub(crate) fn inspect_output() -> Properties {
    vec![
        ("revision", revision()),
        ("state", JsonSchema::of(&ANY).describe("Application-defined state.")),
    ]
}

pub(crate) fn tasks_get_input() -> JsonSchema {
    task_id("The task id from the action's result.")
}

pub(crate) fn tasks_cancel_input() -> JsonSchema {
    task_id("The task id.")
}

pub(crate) fn task_output() -> Properties {
    vec![("task", task())]
}

pub(crate) fn resources_read_input() -> JsonSchema {
    let chunk = u64::from(MAX_RESOURCE_CHUNK);
    JsonSchema::object()
        .properties([
            (
                "uri",
                JsonSchema::of(&STRING)
                    .describe("The resource URI (app-owned; never a file path)."),
            ),
            (
                "offset",
                JsonSchema::integer(0, None)
                    .with("default", 0u64)
                    .describe("Byte offset to start at."),
            ),
            (
                "limit",
                JsonSchema::integer(1, Some(chunk))
                    .with("default", chunk)
                    .describe("Most bytes to return."),
            ),
        ])
        .required(&["uri"])
        .closed()
}

pub(crate) fn resources_read_output() -> Properties {
    vec![
        ("uri", JsonSchema::of(&STRING)),
        ("mimeType", JsonSchema::of(&STRING)),
        ("offset", JsonSchema::of(&INTEGER)),
        ("totalSize", JsonSchema::of(&INTEGER)),
        ("data", JsonSchema::of(&STRING).with("contentEncoding", "base64")),
        ("eof", JsonSchema::of(&BOOLEAN)),
    ]
}

pub(crate) fn render_input() -> JsonSchema {
    app_input("Arguments of the application's ui.render action. Defaults to {}.")
}

pub(crate) fn render_output() -> Properties {
    vec![
        (
            "output",
            JsonSchema::of(&ANY).describe("What ui.render returned, e.g. {uri, mimeType, size}."),
        ),
        ("revision", revision()),
    ]
}
