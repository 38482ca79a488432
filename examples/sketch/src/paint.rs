//! The one painter: shapes of the model turned into egui's painter shapes (`epaint`). The
//! window hands them to egui, which tessellates them and draws the triangles with OpenGL;
//! `ui.render` tessellates the very same shapes with egui's tessellator and fills the triangles
//! on the CPU (`render.rs`). So the PNG an agent sees is the window's geometry, not a second
//! drawing of the model.

use eframe::egui::epaint::{
    self, Color32, CornerRadius, EllipseShape, Pos2, Rect, RectShape, Stroke, StrokeKind, Vec2,
};

use crate::canvas::Canvas;
use crate::shape::{Color, Kind, Point, Shape};

/// The canvas background.
pub const PAPER: Color32 = Color32::WHITE;

/// Where canvas units land on the screen: `screen = origin + zoom × canvas`, in points.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct View {
    /// The canvas's top-left corner.
    pub origin: Pos2,
    /// Points per canvas unit.
    pub zoom: f32,
}

impl View {
    /// A canvas point on the screen.
    pub fn to_screen(self, p: Point) -> Pos2 {
        Pos2::new(self.origin.x + p.x * self.zoom, self.origin.y + p.y * self.zoom)
    }

    /// A screen position in canvas units.
    pub fn to_canvas(self, pos: Pos2) -> Point {
        Point::new((pos.x - self.origin.x) / self.zoom, (pos.y - self.origin.y) / self.zoom)
    }
}

/// A model colour as egui's (premultiplied) colour.
pub fn color32(c: Color) -> Color32 {
    Color32::from_rgba_unmultiplied(c.r, c.g, c.b, c.a)
}

/// The paper and every shape, bottom first.
pub fn scene(canvas: &Canvas, view: &View, out: &mut Vec<epaint::Shape>) {
    out.push(paper(canvas.size(), view));
    out.extend(canvas.items().iter().map(|i| shape(&i.shape, view)));
}

/// The paper of a canvas of `size` units.
pub fn paper(size: (u32, u32), view: &View) -> epaint::Shape {
    let rect =
        Rect::from_min_size(view.origin, Vec2::new(size.0 as f32, size.1 as f32) * view.zoom);
    epaint::Shape::rect_filled(rect, CornerRadius::ZERO, PAPER)
}

/// One shape.
pub fn shape(s: &Shape, view: &View) -> epaint::Shape {
    let stroke = Stroke::new(s.width * view.zoom, color32(s.color));
    let fill = s.fill.map_or(Color32::TRANSPARENT, color32);
    let ends = || {
        let (min, max) = s.bounds();
        Rect::from_min_max(view.to_screen(min), view.to_screen(max))
    };
    match s.kind {
        Kind::Line => epaint::Shape::line_segment(
            [view.to_screen(s.points[0]), view.to_screen(s.points[1])],
            stroke,
        ),
        Kind::Rectangle => epaint::Shape::Rect(RectShape::new(
            ends(),
            CornerRadius::ZERO,
            fill,
            stroke,
            // Centred on the outline, as SVG strokes are, so the export matches the window.
            StrokeKind::Middle,
        )),
        Kind::Ellipse => {
            let r = ends();
            epaint::Shape::Ellipse(EllipseShape {
                center: r.center(),
                radius: r.size() / 2.0,
                fill,
                stroke,
            })
        }
        Kind::Stroke => {
            epaint::Shape::line(s.points.iter().map(|p| view.to_screen(*p)).collect(), stroke)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn views_map_both_ways() {
        let v = View { origin: Pos2::new(10.0, 20.0), zoom: 2.0 };
        assert_eq!(v.to_screen(Point::new(1.0, 2.0)), Pos2::new(12.0, 24.0));
        assert_eq!(v.to_canvas(Pos2::new(12.0, 24.0)), Point::new(1.0, 2.0));
    }

    #[test]
    fn colours_are_premultiplied_for_egui() {
        assert_eq!(color32(Color::rgb(255, 0, 0)), Color32::RED);
        let half = color32(Color { r: 255, g: 0, b: 0, a: 128 });
        assert_eq!((half.r(), half.a()), (128, 128));
    }
}
