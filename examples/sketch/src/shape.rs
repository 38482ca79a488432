//! Shapes: kind, geometry and style, the bounds that keep one shape small, and the geometric
//! questions the canvas asks (bounds, hit test, translation). No GUI types: the window and the
//! PNG renderer turn these into painter shapes in `paint.rs`.

use jfgui_host_sdk::{ActionError, host_error};

/// Most points in one shape (a freehand stroke; the others have exactly two).
pub const MAX_POINTS_PER_SHAPE: usize = 1024;
/// Coordinates are finite and within ±this many canvas units, so every computation on them
/// stays exact enough in `f32` and a shape cannot be placed absurdly far away.
pub const COORD_LIMIT: f32 = 16_384.0;
/// Thinnest stroke width.
pub const MIN_WIDTH: f32 = 0.5;
/// Thickest stroke width.
pub const MAX_WIDTH: f32 = 64.0;

/// A point in canvas units (the canvas's top-left corner is the origin, y grows downwards).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    /// Horizontal position.
    pub x: f32,
    /// Vertical position.
    pub y: f32,
}

impl Point {
    /// The point at `(x, y)`.
    pub const fn new(x: f32, y: f32) -> Point {
        Point { x, y }
    }
}

/// An sRGB colour with straight (not premultiplied) alpha.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Color {
    /// Red.
    pub r: u8,
    /// Green.
    pub g: u8,
    /// Blue.
    pub b: u8,
    /// Opacity (255: opaque).
    pub a: u8,
}

/// Colour names accepted besides `#rrggbb` / `#rrggbbaa` (models like to say "red").
const NAMED: &[(&str, [u8; 3])] = &[
    ("black", [0, 0, 0]),
    ("white", [255, 255, 255]),
    ("red", [255, 0, 0]),
    ("green", [0, 128, 0]),
    ("blue", [0, 0, 255]),
    ("yellow", [255, 255, 0]),
    ("orange", [255, 165, 0]),
    ("purple", [128, 0, 128]),
    ("gray", [128, 128, 128]),
];

impl Color {
    /// Opaque black, the default ink.
    pub const BLACK: Color = Color::rgb(0, 0, 0);

    /// An opaque colour.
    pub const fn rgb(r: u8, g: u8, b: u8) -> Color {
        Color { r, g, b, a: 255 }
    }

    /// Parses `#rrggbb`, `#rrggbbaa` or one of a few names (case-insensitive).
    pub fn parse(text: &str) -> Option<Color> {
        if let Some(hex) = text.strip_prefix('#') {
            if !(hex.len() == 6 || hex.len() == 8) || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                return None;
            }
            let byte = |i: usize| u8::from_str_radix(&hex[i..i + 2], 16).ok();
            let a = if hex.len() == 8 { byte(6)? } else { 255 };
            return Some(Color { r: byte(0)?, g: byte(2)?, b: byte(4)?, a });
        }
        NAMED
            .iter()
            .find(|(name, _)| name.eq_ignore_ascii_case(text))
            .map(|(_, [r, g, b])| Color::rgb(*r, *g, *b))
    }

    /// `#rrggbb` for opaque colours, `#rrggbbaa` otherwise.
    pub fn to_hex(self) -> String {
        let Color { r, g, b, a } = self;
        if a == 255 {
            format!("#{r:02x}{g:02x}{b:02x}")
        } else {
            format!("#{r:02x}{g:02x}{b:02x}{a:02x}")
        }
    }
}

/// What a shape is; its points mean different things per kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A straight line from the first point to the second.
    Line,
    /// An axis-aligned rectangle with two opposite corners as its points.
    Rectangle,
    /// An axis-aligned ellipse inscribed in the rectangle of its two points.
    Ellipse,
    /// A freehand stroke: a polyline through 2 to [`MAX_POINTS_PER_SHAPE`] points.
    Stroke,
}

impl Kind {
    /// Every kind's name, as the actions spell it.
    pub const NAMES: &'static [&'static str] = &["line", "rectangle", "ellipse", "stroke"];

    /// The name actions use.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Line => "line",
            Kind::Rectangle => "rectangle",
            Kind::Ellipse => "ellipse",
            Kind::Stroke => "stroke",
        }
    }

    /// The kind named `name`.
    pub fn parse(name: &str) -> Option<Kind> {
        [Kind::Line, Kind::Rectangle, Kind::Ellipse, Kind::Stroke]
            .into_iter()
            .find(|k| k.name() == name)
    }

    /// Whether the kind has an inside that can be filled.
    pub fn fillable(self) -> bool {
        matches!(self, Kind::Rectangle | Kind::Ellipse)
    }
}

/// One shape's geometry and style.
#[derive(Debug, Clone, PartialEq)]
pub struct Shape {
    /// What it is.
    pub kind: Kind,
    /// Its points (see [`Kind`]).
    pub points: Vec<Point>,
    /// Outline (or line) colour.
    pub color: Color,
    /// Outline (or line) width in canvas units.
    pub width: f32,
    /// Fill colour of a rectangle or ellipse.
    pub fill: Option<Color>,
}

/// Changes to some of a shape's fields.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Patch {
    /// New points.
    pub points: Option<Vec<Point>>,
    /// New outline colour.
    pub color: Option<Color>,
    /// New outline width.
    pub width: Option<f32>,
    /// New fill (`Some(None)` removes it).
    pub fill: Option<Option<Color>>,
}

impl Patch {
    /// `shape` with this patch applied (not yet checked).
    pub fn apply(&self, shape: &Shape) -> Shape {
        Shape {
            kind: shape.kind,
            points: self.points.clone().unwrap_or_else(|| shape.points.clone()),
            color: self.color.unwrap_or(shape.color),
            width: self.width.unwrap_or(shape.width),
            fill: self.fill.unwrap_or(shape.fill),
        }
    }
}

impl Shape {
    /// Checks the point count for the kind, every coordinate, the width and the fill.
    pub fn check(&self) -> Result<(), ActionError> {
        let n = self.points.len();
        let count_ok = match self.kind {
            Kind::Stroke => (2..=MAX_POINTS_PER_SHAPE).contains(&n),
            _ => n == 2,
        };
        if !count_ok {
            let want = match self.kind {
                Kind::Stroke => format!("2 to {MAX_POINTS_PER_SHAPE} points"),
                _ => "exactly 2 points".to_string(),
            };
            return Err(host_error(
                "invalid_points",
                &format!("a {} takes {want}, not {n}", self.kind.name()),
            ));
        }
        if let Some(p) = self.points.iter().find(|p| !in_range(p.x) || !in_range(p.y)) {
            return Err(host_error(
                "out_of_range",
                &format!("point ({}, {}) is outside ±{COORD_LIMIT} canvas units", p.x, p.y),
            ));
        }
        if !(MIN_WIDTH..=MAX_WIDTH).contains(&self.width) {
            return Err(host_error(
                "invalid_width",
                &format!("width must be {MIN_WIDTH} to {MAX_WIDTH}, not {}", self.width),
            ));
        }
        if self.fill.is_some() && !self.kind.fillable() {
            return Err(host_error(
                "not_fillable",
                &format!("a {} has no inside to fill", self.kind.name()),
            ));
        }
        Ok(())
    }

    /// The smallest axis-aligned box holding every point, as (min, max).
    pub fn bounds(&self) -> (Point, Point) {
        let mut min = Point::new(f32::INFINITY, f32::INFINITY);
        let mut max = Point::new(f32::NEG_INFINITY, f32::NEG_INFINITY);
        for p in &self.points {
            min = Point::new(min.x.min(p.x), min.y.min(p.y));
            max = Point::new(max.x.max(p.x), max.y.max(p.y));
        }
        (min, max)
    }

    /// Whether `p` touches the shape: its outline or line within half its width plus
    /// `tolerance`, or its inside when filled.
    pub fn hit(&self, p: Point, tolerance: f32) -> bool {
        let reach = self.width / 2.0 + tolerance;
        match self.kind {
            Kind::Line | Kind::Stroke => {
                self.points.windows(2).any(|s| segment_distance(p, s[0], s[1]) <= reach)
            }
            Kind::Rectangle => {
                let (min, max) = self.bounds();
                let inside = (min.x..=max.x).contains(&p.x) && (min.y..=max.y).contains(&p.y);
                let corners = [min, Point::new(max.x, min.y), max, Point::new(min.x, max.y)];
                (inside && self.fill.is_some())
                    || (0..4)
                        .any(|i| segment_distance(p, corners[i], corners[(i + 1) % 4]) <= reach)
            }
            Kind::Ellipse => {
                let (min, max) = self.bounds();
                let (cx, cy) = ((min.x + max.x) / 2.0, (min.y + max.y) / 2.0);
                let (rx, ry) = ((max.x - min.x) / 2.0, (max.y - min.y) / 2.0);
                // Normalised radius of p; 1.0 on the outline. The band around the outline is
                // scaled by the smaller radius, which is exact enough for picking.
                let r = (((p.x - cx) / rx.max(1e-3)).powi(2) + ((p.y - cy) / ry.max(1e-3)).powi(2))
                    .sqrt();
                let band = reach / rx.min(ry).max(1e-3);
                (r <= 1.0 && self.fill.is_some()) || (r - 1.0).abs() <= band
            }
        }
    }

    /// The shape's points moved by `(dx, dy)`.
    pub fn moved_points(&self, dx: f32, dy: f32) -> Vec<Point> {
        self.points.iter().map(|p| Point::new(p.x + dx, p.y + dy)).collect()
    }
}

fn in_range(v: f32) -> bool {
    v.is_finite() && v.abs() <= COORD_LIMIT
}

/// Distance from `p` to the segment `a`–`b`.
fn segment_distance(p: Point, a: Point, b: Point) -> f32 {
    let (dx, dy) = (b.x - a.x, b.y - a.y);
    let len2 = dx * dx + dy * dy;
    let t = if len2 == 0.0 {
        0.0
    } else {
        (((p.x - a.x) * dx + (p.y - a.y) * dy) / len2).clamp(0.0, 1.0)
    };
    let (qx, qy) = (a.x + t * dx, a.y + t * dy);
    ((p.x - qx).powi(2) + (p.y - qy).powi(2)).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(e: ActionError) -> String {
        match e.reason {
            jfgui_host_sdk::Reason::HostError { code: Some(c) } => c,
            other => panic!("{other:?}"),
        }
    }

    fn rect(fill: Option<Color>) -> Shape {
        Shape {
            kind: Kind::Rectangle,
            points: vec![Point::new(10.0, 10.0), Point::new(50.0, 30.0)],
            color: Color::BLACK,
            width: 2.0,
            fill,
        }
    }

    #[test]
    fn colours_parse_and_print() {
        assert_eq!(Color::parse("#ff0000"), Some(Color::rgb(255, 0, 0)));
        assert_eq!(Color::parse("#00FF0080"), Some(Color { r: 0, g: 255, b: 0, a: 128 }));
        assert_eq!(Color::parse("Blue"), Some(Color::rgb(0, 0, 255)));
        for bad in ["", "#", "#12345", "#gg0000", "#1234567", "chartreuse", "#ff0000 "] {
            assert_eq!(Color::parse(bad), None, "{bad:?}");
        }
        assert_eq!(Color::rgb(255, 0, 16).to_hex(), "#ff0010");
        assert_eq!(Color { r: 1, g: 2, b: 3, a: 4 }.to_hex(), "#01020304");
    }

    #[test]
    fn kinds_round_trip() {
        for name in Kind::NAMES {
            assert_eq!(Kind::parse(name).unwrap().name(), *name);
        }
        assert_eq!(Kind::parse("circle"), None);
    }

    #[test]
    fn checks_name_what_is_wrong() {
        assert!(rect(None).check().is_ok());
        let mut s = rect(None);
        s.points.push(Point::new(1.0, 1.0));
        assert_eq!(code(s.check().unwrap_err()), "invalid_points");
        let mut s = rect(None);
        s.points[0].x = f32::NAN;
        assert_eq!(code(s.check().unwrap_err()), "out_of_range");
        s.points[0].x = COORD_LIMIT + 1.0;
        assert_eq!(code(s.check().unwrap_err()), "out_of_range");
        let mut s = rect(None);
        s.width = 0.0;
        assert_eq!(code(s.check().unwrap_err()), "invalid_width");
        let line = Shape { kind: Kind::Line, fill: Some(Color::BLACK), ..rect(None) };
        assert_eq!(code(line.check().unwrap_err()), "not_fillable");
        let stroke = Shape {
            kind: Kind::Stroke,
            points: vec![Point::new(0.0, 0.0); MAX_POINTS_PER_SHAPE + 1],
            ..rect(None)
        };
        assert_eq!(code(stroke.check().unwrap_err()), "invalid_points");
    }

    #[test]
    fn hit_tests_follow_the_geometry() {
        let outline = rect(None);
        assert!(outline.hit(Point::new(10.5, 20.0), 0.0), "on the left edge");
        assert!(!outline.hit(Point::new(30.0, 20.0), 2.0), "an unfilled inside is empty");
        assert!(rect(Some(Color::BLACK)).hit(Point::new(30.0, 20.0), 0.0));
        let line = Shape { kind: Kind::Line, ..rect(None) };
        assert!(line.hit(Point::new(30.0, 20.0), 0.0), "the midpoint of the diagonal");
        assert!(!line.hit(Point::new(30.0, 28.0), 1.0));
        let ellipse = Shape { kind: Kind::Ellipse, ..rect(None) };
        assert!(ellipse.hit(Point::new(10.0, 20.0), 0.5), "leftmost point of the outline");
        assert!(!ellipse.hit(Point::new(30.0, 20.0), 0.5), "centre of an unfilled ellipse");
        assert!(!ellipse.hit(Point::new(11.0, 11.0), 0.5), "the box corner is outside");
    }

    #[test]
    fn patches_and_translation() {
        let s = rect(None);
        let p = Patch { fill: Some(Some(Color::BLACK)), width: Some(4.0), ..Patch::default() };
        let t = p.apply(&s);
        assert_eq!((t.fill, t.width, &t.points), (Some(Color::BLACK), 4.0, &s.points));
        assert_eq!(Patch { fill: Some(None), ..Patch::default() }.apply(&t).fill, None);
        assert_eq!(s.moved_points(1.0, -2.0), vec![Point::new(11.0, 8.0), Point::new(51.0, 28.0)]);
        assert_eq!(s.bounds(), (Point::new(10.0, 10.0), Point::new(50.0, 30.0)));
    }
}
