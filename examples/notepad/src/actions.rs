//! The notepad's registration: every action spec and schema, written for a model
//! that reads them through `actions/describe`.

use jfgui_host_sdk::{ActionSpec, Property, Schema, schema};

/// The transaction domain of every edit: the whole document (text, selection, history).
pub const DOCUMENT: &str = "document";

static POSITION: Schema = Schema::Integer { min: Some(0), max: None };
static TEXT: Schema = Schema::String { max_length: Some(65_536), one_of: None };
static START: Property = Property { name: "start", schema: &POSITION, required: true };
static END: Property = Property { name: "end", schema: &POSITION, required: true };

static RANGE: Schema = Schema::Object { properties: &[START, END], additional: false };
static INSERT_INPUT: Schema = Schema::Object {
    properties: &[Property { name: "text", schema: &TEXT, required: true }],
    additional: false,
};
static REPLACE_INPUT: Schema = Schema::Object {
    properties: &[START, END, Property { name: "text", schema: &TEXT, required: true }],
    additional: false,
};
static RENDER_INPUT: Schema = Schema::Object {
    properties: &[Property {
        name: "scale",
        schema: &Schema::Integer { min: Some(1), max: Some(crate::render::MAX_SCALE as i64) },
        required: false,
    }],
    additional: false,
};

static SELECTION: Schema = Schema::Object { properties: &[START, END], additional: false };
static SUMMARY: Schema = Schema::Object {
    properties: &[
        Property { name: "length", schema: &schema::UNSIGNED, required: true },
        Property { name: "selection", schema: &SELECTION, required: true },
    ],
    additional: false,
};
static DOCUMENT_OUTPUT: Schema = Schema::Object {
    properties: &[
        Property { name: "text", schema: &schema::STRING, required: true },
        Property { name: "length", schema: &schema::UNSIGNED, required: true },
        Property { name: "selection", schema: &SELECTION, required: true },
    ],
    additional: false,
};
static RENDER_OUTPUT: Schema = Schema::Object {
    properties: &[
        Property { name: "uri", schema: &schema::STRING, required: true },
        Property { name: "mimeType", schema: &schema::STRING, required: true },
        Property { name: "width", schema: &schema::UNSIGNED, required: true },
        Property { name: "height", schema: &schema::UNSIGNED, required: true },
        Property { name: "size", schema: &schema::UNSIGNED, required: true },
    ],
    additional: false,
};

const fn edit(spec: ActionSpec, command_id: u32) -> ActionSpec {
    ActionSpec { undo: true, transaction: Some(DOCUMENT), command_id: Some(command_id), ..spec }
}

/// Every action, in registration order.
pub static ACTIONS: &[ActionSpec] = &[
    edit(
        ActionSpec::write(
            "document.text.insert",
            "Insert text at the selection, replacing any selected text; the caret ends after the inserted text. Positions everywhere are character offsets.",
        )
        .schemas(&INSERT_INPUT, &SUMMARY),
        100,
    ),
    edit(
        ActionSpec::write(
            "document.text.replace",
            "Replace the characters from start (inclusive) to end (exclusive) with text; 0 <= start <= end <= length. The caret ends after the new text.",
        )
        .schemas(&REPLACE_INPUT, &SUMMARY),
        101,
    ),
    edit(
        ActionSpec::write(
            "document.text.delete",
            "Delete the characters from start (inclusive) to end (exclusive); 0 <= start <= end <= length.",
        )
        .schemas(&RANGE, &SUMMARY),
        102,
    ),
    edit(
        ActionSpec::write(
            "selection.set",
            "Select the characters from start (inclusive) to end (exclusive); start == end places the caret.",
        )
        .schemas(&RANGE, &SUMMARY),
        103,
    ),
    edit(
        ActionSpec::write("edit.undo", "Undo the last change (an atomic batch is one change). Fails with nothing_to_undo when there is none.")
            .schemas(&schema::EMPTY_OBJECT, &SUMMARY),
        104,
    ),
    edit(
        ActionSpec::write("edit.redo", "Redo the last undone change. Fails with nothing_to_redo when there is none.")
            .schemas(&schema::EMPTY_OBJECT, &SUMMARY),
        105,
    ),
    edit(
        ActionSpec::write(
            "document.clear",
            "Delete the whole text (one undo step). The user is asked first: the call answers with a task that waits for their answer; follow it with tasks/get, do not retry.",
        )
        .schemas(&schema::EMPTY_OBJECT, &SUMMARY)
        .titled("Clear the document")
        .confirmed(),
        109,
    ),
    ActionSpec {
        command_id: Some(106),
        ..ActionSpec::read("document.get", "Read the whole text, its length in characters and the selection.")
            .schemas(&schema::EMPTY_OBJECT, &DOCUMENT_OUTPUT)
    },
    ActionSpec {
        transaction: Some(DOCUMENT),
        command_id: Some(107),
        ..ActionSpec::write(
            "document.export",
            "Export the text as the resource export://document.txt. Runs as a task: poll it with tasks/get, cancel it with tasks/cancel; the completed task's result names the resource to read.",
        )
    },
    ActionSpec {
        command_id: Some(108),
        ..ActionSpec::read(
            "ui.render",
            "Render the document (selection shaded) into the PNG resource render://view.png and return its size; read it with resources/read. Optional scale 1-4.",
        )
        .schemas(&RENDER_INPUT, &RENDER_OUTPUT)
    },
];
