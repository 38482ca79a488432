//! `ui.render`: the window's painter shapes (`paint.rs`) tessellated by egui's own tessellator
//! with egui's default options, and the triangles filled on the CPU the way the GPU fills them
//! (pixel centres, premultiplied colours interpolated across the triangle, "over" blending in
//! gamma space, as egui's renderers do), then encoded as an RGB PNG.

use eframe::egui::epaint::{Mesh, Pos2, TessellationOptions, Tessellator, Vertex};

use crate::canvas::Canvas;
use crate::paint::{self, View};

/// Largest scale `ui.render` accepts (pixels per canvas unit).
pub const MAX_SCALE: u32 = 4;

/// A rendered canvas.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rendering {
    /// The PNG file.
    pub png: Vec<u8>,
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
}

/// Pixels per canvas unit for `scale` (1 to [`MAX_SCALE`]), made smaller when the image would
/// be wider than `max_width` pixels (an agent asking for a small image: fewer tokens to look
/// at). Never below one pixel of width.
pub fn pixels_per_unit(canvas: &Canvas, scale: u32, max_width: Option<u32>) -> f32 {
    let scale = scale.clamp(1, MAX_SCALE) as f32;
    let (w, _) = canvas.size();
    match max_width {
        Some(max) if (w as f32 * scale) > max as f32 => max.max(1) as f32 / w as f32,
        _ => scale,
    }
}

/// The canvas at `scale` pixels per unit (see [`pixels_per_unit`]).
pub fn render(canvas: &Canvas, scale: f32) -> Rendering {
    let (w, h) = canvas.size();
    let pixels = |units: u32| ((units as f32 * scale).round() as u32).max(1);
    let mut raster = Raster::new(pixels(w), pixels(h));
    let mut shapes = Vec::new();
    paint::scene(canvas, &View { origin: Pos2::ZERO, zoom: 1.0 }, &mut shapes);
    // Shapes carry no text, so the font texture size and the prepared discs do not matter.
    let mut tessellator =
        Tessellator::new(scale, TessellationOptions::default(), [1, 1], Vec::new());
    for shape in shapes {
        let mut mesh = Mesh::default();
        tessellator.tessellate_shape(shape, &mut mesh);
        raster.fill(&mesh, scale);
    }
    Rendering { png: raster.encode(), width: raster.width, height: raster.height }
}

/// An opaque RGB image, white until painted (the paper's own feathered edge then blends with
/// white, as the window's blends with the panel around it).
struct Raster {
    width: u32,
    height: u32,
    rgb: Vec<[u8; 3]>,
}

impl Raster {
    fn new(width: u32, height: u32) -> Raster {
        Raster { width, height, rgb: vec![[255; 3]; width as usize * height as usize] }
    }

    /// Fills every triangle of `mesh` (positions in points, `scale` pixels per point).
    fn fill(&mut self, mesh: &Mesh, scale: f32) {
        for tri in mesh.indices.chunks_exact(3) {
            let v = |i: u32| &mesh.vertices[i as usize];
            self.triangle([v(tri[0]), v(tri[1]), v(tri[2])], scale);
        }
    }

    fn triangle(&mut self, v: [&Vertex; 3], scale: f32) {
        let mut p = v.map(|v| Pos2::new(v.pos.x * scale, v.pos.y * scale));
        let mut v = v;
        let mut area = edge(p[0], p[1], p[2]);
        if area == 0.0 {
            return;
        }
        if area < 0.0 {
            p.swap(1, 2);
            v.swap(1, 2);
            area = -area;
        }
        let colors = v.map(|v| v.color.to_array().map(f32::from));
        let clamp = |a: f32, max: u32| (a.max(0.0) as u32).min(max);
        let x0 = clamp(p.iter().map(|q| q.x).fold(f32::INFINITY, f32::min).floor(), self.width);
        let x1 = clamp(p.iter().map(|q| q.x).fold(f32::NEG_INFINITY, f32::max).ceil(), self.width);
        let y0 = clamp(p.iter().map(|q| q.y).fold(f32::INFINITY, f32::min).floor(), self.height);
        let y1 = clamp(p.iter().map(|q| q.y).fold(f32::NEG_INFINITY, f32::max).ceil(), self.height);
        for y in y0..y1 {
            for x in x0..x1 {
                let c = Pos2::new(x as f32 + 0.5, y as f32 + 0.5);
                let w = [edge(p[1], p[2], c), edge(p[2], p[0], c), edge(p[0], p[1], c)];
                let owned = [(1, 2), (2, 0), (0, 1)];
                if !w.iter().zip(owned).all(|(w, (a, b))| covers(*w, p[a], p[b])) {
                    continue;
                }
                let mut src = [0.0f32; 4];
                for (k, s) in src.iter_mut().enumerate() {
                    *s = (w[0] * colors[0][k] + w[1] * colors[1][k] + w[2] * colors[2][k]) / area;
                }
                let keep = 1.0 - src[3] / 255.0;
                let dst = &mut self.rgb[y as usize * self.width as usize + x as usize];
                for k in 0..3 {
                    dst[k] = (src[k] + f32::from(dst[k]) * keep).round().clamp(0.0, 255.0) as u8;
                }
            }
        }
    }

    fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        let mut encoder = png::Encoder::new(&mut out, self.width, self.height);
        encoder.set_color(png::ColorType::Rgb);
        encoder.set_depth(png::BitDepth::Eight);
        // Writing into a Vec cannot fail and the buffer has exactly width × height pixels, so
        // an error here is a bug in this function.
        let mut writer = encoder.write_header().expect("PNG header into memory");
        writer.write_image_data(self.rgb.as_flattened()).expect("PNG data of the announced size");
        writer.finish().expect("PNG trailer into memory");
        out
    }
}

/// Twice the signed area of `a b p`: positive when `p` is on the inner side of `a → b` for a
/// triangle of positive area (y grows downwards).
fn edge(a: Pos2, b: Pos2, p: Pos2) -> f32 {
    (b.x - a.x) * (p.y - a.y) - (b.y - a.y) * (p.x - a.x)
}

/// Whether a pixel centre with edge value `w` belongs to the triangle: inside, or exactly on
/// a top or left edge (the GPU's fill rule, so two triangles sharing an edge never both
/// blend the pixels on it).
fn covers(w: f32, a: Pos2, b: Pos2) -> bool {
    w > 0.0 || (w == 0.0 && ((a.y == b.y && b.x > a.x) || b.y < a.y))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shape::{Color, Kind, Point, Shape};

    fn decode(png_bytes: &[u8]) -> (u32, u32, Vec<u8>) {
        let decoder = png::Decoder::new(std::io::Cursor::new(png_bytes));
        let mut reader = decoder.read_info().unwrap();
        let mut buf = vec![0; reader.output_buffer_size().unwrap()];
        let info = reader.next_frame(&mut buf).unwrap();
        buf.truncate(info.buffer_size());
        (info.width, info.height, buf)
    }

    fn pixel(img: &(u32, u32, Vec<u8>), x: u32, y: u32) -> [u8; 3] {
        let i = ((y * img.0 + x) * 3) as usize;
        [img.2[i], img.2[i + 1], img.2[i + 2]]
    }

    #[test]
    fn shapes_land_where_the_model_says() {
        let mut c = Canvas::new(200, 100);
        let shape = |kind, a: (f32, f32), b: (f32, f32), fill| Shape {
            kind,
            points: vec![Point::new(a.0, a.1), Point::new(b.0, b.1)],
            color: Color::BLACK,
            width: 2.0,
            fill,
        };
        c.add(shape(Kind::Rectangle, (10.0, 10.0), (60.0, 50.0), Some(Color::rgb(255, 0, 0))))
            .unwrap();
        c.add(shape(Kind::Ellipse, (100.0, 20.0), (180.0, 80.0), Some(Color::rgb(0, 0, 255))))
            .unwrap();
        c.add(shape(Kind::Line, (0.0, 95.0), (200.0, 95.0), None)).unwrap();
        let r = render(&c, 1.0);
        let img = decode(&r.png);
        assert_eq!((img.0, img.1), (200, 100));
        assert_eq!(pixel(&img, 35, 30), [255, 0, 0], "inside the red rectangle");
        assert_eq!(pixel(&img, 10, 30), [0, 0, 0], "on its black outline");
        assert_eq!(pixel(&img, 140, 50), [0, 0, 255], "inside the blue ellipse");
        assert_eq!(pixel(&img, 101, 21), [255, 255, 255], "outside the ellipse, inside its box");
        assert_eq!(pixel(&img, 150, 95), [0, 0, 0], "on the line");
        assert_eq!(pixel(&img, 80, 60), [255, 255, 255], "paper");
        let r2 = decode(&render(&c, 2.0).png);
        assert_eq!((r2.0, r2.1), (400, 200));
        assert_eq!(pixel(&r2, 70, 60), [255, 0, 0]);
    }

    #[test]
    fn max_width_scales_the_image_down_and_never_up() {
        let c = Canvas::new(200, 100);
        assert_eq!(pixels_per_unit(&c, 2, None), 2.0);
        assert_eq!(pixels_per_unit(&c, 2, Some(1000)), 2.0);
        let small = pixels_per_unit(&c, 4, Some(50));
        assert_eq!(small, 0.25);
        let r = decode(&render(&c, small).png);
        assert_eq!((r.0, r.1), (50, 25));
    }

    #[test]
    fn translucent_shapes_blend_once() {
        let mut c = Canvas::new(40, 40);
        c.add(Shape {
            kind: Kind::Rectangle,
            points: vec![Point::new(0.0, 0.0), Point::new(40.0, 40.0)],
            color: Color { r: 0, g: 0, b: 0, a: 0 },
            width: 1.0,
            fill: Some(Color { r: 0, g: 0, b: 0, a: 128 }),
        })
        .unwrap();
        let img = decode(&render(&c, 1.0).png);
        // Every inner pixel, the diagonal shared by the two triangles included, is blended
        // exactly once: 255 × (1 − 128/255) = 127.
        for i in 2..38 {
            assert_eq!(pixel(&img, i, i), [127, 127, 127], "pixel ({i}, {i})");
        }
    }
}
