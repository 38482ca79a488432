//! Sketch's registration: every action spec and schema, written for a model that reads them
//! through `actions/describe`.

use jfgui_host_sdk::{ActionSpec, Property, Schema, schema};

use crate::render::MAX_SCALE;
use crate::shape::{Kind, MAX_POINTS_PER_SHAPE};

/// The transaction domain of every edit: the whole drawing (shapes, history, revision).
pub const CANVAS: &str = "canvas";

static POINT: Schema = Schema::Array { items: &schema::NUMBER, max_items: Some(2) };
static POINTS: Schema =
    Schema::Array { items: &POINT, max_items: Some(MAX_POINTS_PER_SHAPE as u32) };
static COLOR: Schema = Schema::String { max_length: Some(16), one_of: None };
static FILL: Schema = Schema::AnyOf(&[COLOR, Schema::Null]);
static KIND: Schema = Schema::String { max_length: None, one_of: Some(Kind::NAMES) };
static ID: Schema = Schema::Integer { min: Some(1), max: None };

static ID_PROPERTY: Property = Property { name: "id", schema: &ID, required: true };
static COLOR_PROPERTY: Property = Property { name: "color", schema: &COLOR, required: false };
static WIDTH_PROPERTY: Property =
    Property { name: "width", schema: &schema::NUMBER, required: false };
static FILL_PROPERTY: Property = Property { name: "fill", schema: &FILL, required: false };

static ADD_INPUT: Schema = Schema::Object {
    properties: &[
        Property { name: "kind", schema: &KIND, required: true },
        Property { name: "points", schema: &POINTS, required: true },
        COLOR_PROPERTY,
        WIDTH_PROPERTY,
        FILL_PROPERTY,
    ],
    additional: false,
};
static UPDATE_INPUT: Schema = Schema::Object {
    properties: &[
        ID_PROPERTY,
        Property { name: "points", schema: &POINTS, required: false },
        COLOR_PROPERTY,
        WIDTH_PROPERTY,
        FILL_PROPERTY,
    ],
    additional: false,
};
static DELETE_INPUT: Schema = Schema::Object { properties: &[ID_PROPERTY], additional: false };
static RENDER_INPUT: Schema = Schema::Object {
    properties: &[
        Property {
            name: "scale",
            schema: &Schema::Integer { min: Some(1), max: Some(MAX_SCALE as i64) },
            required: false,
        },
        Property {
            name: "maxWidth",
            schema: &Schema::Integer { min: Some(16), max: Some(u32::MAX as i64) },
            required: false,
        },
    ],
    additional: false,
};

/// The output of every edit: what the canvas holds now (and the new shape's id for
/// `shape.add`).
static SUMMARY: Schema = Schema::Object {
    properties: &[
        Property { name: "id", schema: &ID, required: false },
        Property { name: "shapeCount", schema: &schema::UNSIGNED, required: true },
        Property { name: "undoDepth", schema: &schema::UNSIGNED, required: true },
        Property { name: "redoDepth", schema: &schema::UNSIGNED, required: true },
    ],
    additional: false,
};
static SHAPE: Schema = Schema::Object {
    properties: &[
        ID_PROPERTY,
        Property { name: "kind", schema: &KIND, required: true },
        Property { name: "points", schema: &POINTS, required: true },
        Property { name: "color", schema: &COLOR, required: true },
        Property { name: "width", schema: &schema::NUMBER, required: true },
        FILL_PROPERTY,
    ],
    additional: false,
};
/// `canvas.get`'s output, also the `canvas` part of `state/inspect`.
pub static CANVAS_OUTPUT: Schema = Schema::Object {
    properties: &[
        Property { name: "width", schema: &schema::UNSIGNED, required: true },
        Property { name: "height", schema: &schema::UNSIGNED, required: true },
        Property {
            name: "shapes",
            schema: &Schema::Array { items: &SHAPE, max_items: None },
            required: true,
        },
        Property { name: "undoDepth", schema: &schema::UNSIGNED, required: true },
        Property { name: "redoDepth", schema: &schema::UNSIGNED, required: true },
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

const fn edit(spec: ActionSpec) -> ActionSpec {
    ActionSpec { undo: true, transaction: Some(CANVAS), ..spec }
}

/// Every action, in registration order.
pub static ACTIONS: &[ActionSpec] = &[
    ActionSpec::read(
        "canvas.get",
        "Read the canvas: its size in units (origin top-left, y down) and every shape, bottom first, with id, kind, points [[x,y],...], color (#rrggbb or #rrggbbaa), width and fill.",
    )
    .schemas(&schema::EMPTY_OBJECT, &CANVAS_OUTPUT),
    edit(
        ActionSpec::write(
            "shape.add",
            "Add a shape on top. kind: line (2 points: from, to), rectangle or ellipse (2 points: opposite corners of the box), stroke (freehand, 2 to 1024 points). color: #rrggbb, #rrggbbaa or a basic name such as red (default black); width 0.5-64 (default 2); fill: a colour for rectangle and ellipse. Returns the new shape's id.",
        )
        .schemas(&ADD_INPUT, &SUMMARY),
    ),
    edit(
        ActionSpec::write(
            "shape.update",
            "Change some fields of shape id: points, color, width, fill (null removes the fill). Moving a shape is an update of its points.",
        )
        .schemas(&UPDATE_INPUT, &SUMMARY),
    ),
    edit(
        ActionSpec::write(
            "shape.delete",
            "Delete shape id. The user is asked first: the call answers with a task that waits for their answer; follow it with tasks/get, do not retry.",
        )
        .schemas(&DELETE_INPUT, &SUMMARY)
        .titled("Delete a shape")
        .confirmed(),
    ),
    edit(
        ActionSpec::write(
            "canvas.clear",
            "Delete every shape (one undo step). The user is asked first: the call answers with a task that waits for their answer; follow it with tasks/get, do not retry.",
        )
        .schemas(&schema::EMPTY_OBJECT, &SUMMARY)
        .titled("Clear the canvas")
        .confirmed(),
    ),
    edit(
        ActionSpec::write(
            "edit.undo",
            "Undo the last change: one user gesture or one agent call (a committed atomic batch is one change). Fails with nothing_to_undo when there is none.",
        )
        .schemas(&schema::EMPTY_OBJECT, &SUMMARY),
    ),
    edit(
        ActionSpec::write("edit.redo", "Redo the last undone change. Fails with nothing_to_redo when there is none.")
            .schemas(&schema::EMPTY_OBJECT, &SUMMARY),
    ),
    ActionSpec::write(
        "document.export",
        "Export the drawing as the SVG resource export://drawing.svg. Runs as a task: follow it with tasks/get (progress counts shapes written), cancel it with tasks/cancel; the completed task's result names the resource to read.",
    ),
    ActionSpec::read(
        "ui.render",
        "Render the canvas (as the window paints it, without the selection) into the PNG resource render://canvas.png and return its size; read it with resources/read. Optional scale 1-4 (pixels per canvas unit) and maxWidth (pixels; the image is scaled down to fit, for a smaller result to look at).",
    )
    .schemas(&RENDER_INPUT, &RENDER_OUTPUT),
];
