//! SVG text for the drawing: one element per shape, in paint order, with the same geometry
//! the painter uses (strokes centred on outlines; SVG's default butt caps and miter joins, as
//! egui draws paths).

use std::fmt::Write;

use crate::canvas::Item;
use crate::shape::{Color, Kind};

/// The document's opening: size, view box and the white paper.
pub fn header(width: u32, height: u32) -> String {
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\">\n\
         <rect width=\"{width}\" height=\"{height}\" fill=\"#ffffff\"/>\n"
    )
}

/// The document's end.
pub const FOOTER: &str = "</svg>\n";

/// Appends one shape's element to `out`.
pub fn write_item(out: &mut String, item: &Item) {
    let s = &item.shape;
    let (min, max) = s.bounds();
    let id = item.id;
    // Writing into a String cannot fail.
    let _ = match s.kind {
        Kind::Line => write!(
            out,
            "<line id=\"shape-{id}\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" fill=\"none\"",
            s.points[0].x, s.points[0].y, s.points[1].x, s.points[1].y
        ),
        Kind::Rectangle => write!(
            out,
            "<rect id=\"shape-{id}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"{}",
            min.x,
            min.y,
            max.x - min.x,
            max.y - min.y,
            paint("fill", s.fill)
        ),
        Kind::Ellipse => write!(
            out,
            "<ellipse id=\"shape-{id}\" cx=\"{}\" cy=\"{}\" rx=\"{}\" ry=\"{}\"{}",
            (min.x + max.x) / 2.0,
            (min.y + max.y) / 2.0,
            (max.x - min.x) / 2.0,
            (max.y - min.y) / 2.0,
            paint("fill", s.fill)
        ),
        Kind::Stroke => {
            let points: Vec<String> = s.points.iter().map(|p| format!("{},{}", p.x, p.y)).collect();
            write!(out, "<polyline id=\"shape-{id}\" points=\"{}\" fill=\"none\"", points.join(" "))
        }
    };
    let _ = writeln!(out, "{} stroke-width=\"{}\"/>", paint("stroke", Some(s.color)), s.width);
}

/// ` NAME="#rrggbb"` plus ` NAME-opacity="…"` for translucent colours (SVG 1.1 has no
/// `#rrggbbaa`), or ` NAME="none"`.
fn paint(name: &str, color: Option<Color>) -> String {
    match color {
        None => format!(" {name}=\"none\""),
        Some(c) => {
            let hex = Color { a: 255, ..c }.to_hex();
            if c.a == 255 {
                format!(" {name}=\"{hex}\"")
            } else {
                format!(" {name}=\"{hex}\" {name}-opacity=\"{:.3}\"", f32::from(c.a) / 255.0)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shape::{Point, Shape};

    fn item(kind: Kind, fill: Option<Color>) -> Item {
        Item {
            id: 3,
            shape: Shape {
                kind,
                points: vec![Point::new(10.0, 20.0), Point::new(30.5, 60.0)],
                color: Color { r: 255, g: 0, b: 0, a: 128 },
                width: 2.0,
                fill,
            },
        }
    }

    fn element(item: &Item) -> String {
        let mut out = String::new();
        write_item(&mut out, item);
        out
    }

    #[test]
    fn every_kind_becomes_its_element() {
        assert_eq!(
            element(&item(Kind::Rectangle, Some(Color::rgb(0, 0, 255)))),
            "<rect id=\"shape-3\" x=\"10\" y=\"20\" width=\"20.5\" height=\"40\" fill=\"#0000ff\" stroke=\"#ff0000\" stroke-opacity=\"0.502\" stroke-width=\"2\"/>\n"
        );
        assert_eq!(
            element(&item(Kind::Ellipse, None)),
            "<ellipse id=\"shape-3\" cx=\"20.25\" cy=\"40\" rx=\"10.25\" ry=\"20\" fill=\"none\" stroke=\"#ff0000\" stroke-opacity=\"0.502\" stroke-width=\"2\"/>\n"
        );
        assert!(element(&item(Kind::Line, None)).starts_with(
            "<line id=\"shape-3\" x1=\"10\" y1=\"20\" x2=\"30.5\" y2=\"60\" fill=\"none\" stroke="
        ));
        assert!(
            element(&item(Kind::Stroke, None))
                .starts_with("<polyline id=\"shape-3\" points=\"10,20 30.5,60\" fill=\"none\"")
        );
        assert!(header(640, 400).contains("viewBox=\"0 0 640 400\""));
    }
}
