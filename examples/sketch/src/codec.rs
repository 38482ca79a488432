//! JSON ↔ model: action inputs read into shapes and patches, the canvas written as the
//! `canvas.get` answer. The schemas in `actions.rs` have already checked the shape of every
//! input; what they cannot say (exactly two numbers per point, a colour's spelling) is checked
//! here.

use jfgui_host_sdk::{ActionError, Map, Number, Value, host_error};

use crate::canvas::{Canvas, Item};
use crate::shape::{Color, Kind, Patch, Point, Shape};

/// Stroke width when an input gives none.
pub const DEFAULT_WIDTH: f32 = 2.0;

/// A `shape.add` input.
pub fn shape_input(input: &Value) -> Result<Shape, ActionError> {
    let kind =
        input.get("kind").and_then(Value::as_str).and_then(Kind::parse).ok_or_else(|| {
            host_error("invalid_kind", &format!("kind is one of {}", Kind::NAMES.join(", ")))
        })?;
    let points = points(input.get("points").unwrap_or(&Value::Null))?;
    let color = input.get("color").map(color).transpose()?.unwrap_or(Color::BLACK);
    let width = input.get("width").map(number).unwrap_or(DEFAULT_WIDTH);
    let fill = input.get("fill").map(fill).transpose()?.flatten();
    Ok(Shape { kind, points, color, width, fill })
}

/// A `shape.update` input: the shape id and the patch.
pub fn patch_input(input: &Value) -> Result<(u64, Patch), ActionError> {
    let patch = Patch {
        points: input.get("points").map(points).transpose()?,
        color: input.get("color").map(color).transpose()?,
        width: input.get("width").map(number),
        fill: input.get("fill").map(fill).transpose()?,
    };
    Ok((id_input(input), patch))
}

/// The `id` of an input whose schema requires a positive integer.
pub fn id_input(input: &Value) -> u64 {
    // The schema guarantees an integer ≥ 1; one beyond u64 names no shape either way.
    input.get("id").and_then(Value::as_u64).unwrap_or(u64::MAX)
}

/// The canvas as `canvas.get` answers it.
pub fn canvas_value(canvas: &Canvas) -> Value {
    let (width, height) = canvas.size();
    let mut m = Map::new();
    m.insert("width", width);
    m.insert("height", height);
    m.insert("shapes", Value::Array(canvas.items().iter().map(|i| item_value(i)).collect()));
    m.insert("undoDepth", canvas.undo_depth() as u64);
    m.insert("redoDepth", canvas.redo_depth() as u64);
    Value::Object(m)
}

/// The output of an edit: counts, and the new id for `shape.add`.
pub fn summary(canvas: &Canvas, id: Option<u64>) -> Value {
    let mut m = Map::new();
    if let Some(id) = id {
        m.insert("id", id);
    }
    m.insert("shapeCount", canvas.items().len() as u64);
    m.insert("undoDepth", canvas.undo_depth() as u64);
    m.insert("redoDepth", canvas.redo_depth() as u64);
    Value::Object(m)
}

/// One shape with its id.
pub fn item_value(item: &Item) -> Value {
    let s = &item.shape;
    let mut m = Map::new();
    m.insert("id", item.id);
    m.insert("kind", s.kind.name());
    let points = s.points.iter().map(|p| Value::Array(vec![num(p.x), num(p.y)])).collect();
    m.insert("points", Value::Array(points));
    m.insert("color", s.color.to_hex());
    m.insert("width", num(s.width));
    if let Some(fill) = s.fill {
        m.insert("fill", fill.to_hex());
    }
    Value::Object(m)
}

/// A shape as the input of `shape.add` (the window's gestures use the same action).
pub fn shape_value(shape: &Shape) -> Value {
    let mut m = Map::new();
    m.insert("kind", shape.kind.name());
    m.insert("points", points_value(&shape.points));
    m.insert("color", shape.color.to_hex());
    m.insert("width", num(shape.width));
    if let Some(fill) = shape.fill {
        m.insert("fill", fill.to_hex());
    }
    Value::Object(m)
}

/// Points as `[[x, y], ...]`.
pub fn points_value(points: &[Point]) -> Value {
    Value::Array(points.iter().map(|p| Value::Array(vec![num(p.x), num(p.y)])).collect())
}

/// An `f32` as a JSON number: its shortest exact decimal spelling. Only finite values reach
/// here (shapes are checked), and Rust never prints an exponent, so the token is valid JSON.
pub fn num(v: f32) -> Value {
    Number::from_token(&format!("{v}")).map(Value::Number).unwrap_or(Value::Null)
}

fn number(v: &Value) -> f32 {
    // A schema-checked number; out-of-range values become infinite and fail the shape check.
    v.as_number().map_or(f32::NAN, |n| n.to_f64() as f32)
}

fn points(v: &Value) -> Result<Vec<Point>, ActionError> {
    let list = v.as_array().unwrap_or(&[]);
    list.iter()
        .map(|p| match p.as_array() {
            Some([x, y]) => Ok(Point::new(number(x), number(y))),
            _ => Err(host_error("invalid_points", "every point is [x, y]: two numbers")),
        })
        .collect()
}

fn color(v: &Value) -> Result<Color, ActionError> {
    let text = v.as_str().unwrap_or("");
    Color::parse(text).ok_or_else(|| {
        host_error(
            "invalid_color",
            &format!(
                "{text:?} is not a colour: use #rrggbb, #rrggbbaa or a basic name such as red"
            ),
        )
    })
}

fn fill(v: &Value) -> Result<Option<Color>, ActionError> {
    if v.is_null() { Ok(None) } else { color(v).map(Some) }
}

#[cfg(test)]
mod tests {
    use jfgui_host_sdk::Reason;

    use super::*;

    fn parse(json: &str) -> Value {
        jfgui_proto::parse(json.as_bytes(), &jfgui_proto::Limits::DEFAULT).unwrap()
    }

    fn code(e: ActionError) -> String {
        match e.reason {
            Reason::HostError { code: Some(c) } => c,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn shapes_read_with_defaults() {
        let s =
            shape_input(&parse(r#"{"kind":"ellipse","points":[[1,2],[30.5,40]],"fill":"blue"}"#))
                .unwrap();
        assert_eq!(s.kind, Kind::Ellipse);
        assert_eq!(s.points, vec![Point::new(1.0, 2.0), Point::new(30.5, 40.0)]);
        assert_eq!(
            (s.color, s.width, s.fill),
            (Color::BLACK, DEFAULT_WIDTH, Some(Color::rgb(0, 0, 255)))
        );
        let e = shape_input(&parse(r#"{"kind":"line","points":[[1],[2,3]]}"#)).unwrap_err();
        assert_eq!(code(e), "invalid_points");
        let e = shape_input(&parse(r##"{"kind":"line","points":[[1,1],[2,3]],"color":"#12"}"##))
            .unwrap_err();
        assert_eq!(code(e), "invalid_color");
    }

    #[test]
    fn patches_distinguish_absent_and_null_fill() {
        let (id, p) = patch_input(&parse(r#"{"id":7,"fill":null,"width":3}"#)).unwrap();
        assert_eq!((id, p.fill, p.width, p.points), (7, Some(None), Some(3.0), None));
        let (_, p) = patch_input(&parse(r#"{"id":7}"#)).unwrap();
        assert_eq!(p, Patch::default());
    }

    #[test]
    fn shapes_round_trip_through_json() {
        let shape = Shape {
            kind: Kind::Stroke,
            points: vec![Point::new(0.1, 2.0), Point::new(-3.25, 1e3)],
            color: Color { r: 1, g: 2, b: 3, a: 4 },
            width: 1.5,
            fill: None,
        };
        assert_eq!(shape_input(&shape_value(&shape)).unwrap(), shape);
        let item = item_value(&Item { id: 9, shape: shape.clone() });
        let text = jfgui_proto::encode(&item, &jfgui_proto::Limits::DEFAULT).unwrap();
        assert_eq!(
            String::from_utf8(text).unwrap(),
            r##"{"id":9,"kind":"stroke","points":[[0.1,2],[-3.25,1000]],"color":"#01020304","width":1.5}"##
        );
    }
}
