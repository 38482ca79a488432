//! `ui.render`: the document drawn with an 8×8 bitmap font into a grayscale PNG, the
//! selection shaded.

use font8x8::{BASIC_FONTS, LATIN_FONTS, UnicodeFonts};

use crate::document::Selection;

/// Columns drawn per line; longer lines are cut (the image is a view, not an export).
pub const MAX_COLUMNS: usize = 160;
/// Lines drawn; later lines are cut.
pub const MAX_LINES: usize = 200;
/// Largest scale factor `ui.render` accepts.
pub const MAX_SCALE: u32 = 4;

const GLYPH: usize = 8;
const PAD: usize = 4;
const WHITE: u8 = 0xFF;
const SHADE: u8 = 0xC8;
const INK: u8 = 0x00;

/// A rendered view.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rendering {
    /// The PNG file.
    pub png: Vec<u8>,
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
}

/// Draws `text` (at most [`MAX_LINES`] × [`MAX_COLUMNS`] characters) at `scale` (1 to
/// [`MAX_SCALE`]), shading the characters inside `selection`.
pub fn render(text: &str, selection: Selection, scale: u32) -> Rendering {
    let scale = scale.clamp(1, MAX_SCALE) as usize;
    let lines: Vec<&str> = text.split('\n').take(MAX_LINES).collect();
    let columns =
        lines.iter().map(|l| l.chars().count().min(MAX_COLUMNS)).max().unwrap_or(0).max(1);
    let width = (columns * GLYPH + 2 * PAD) * scale;
    let height = (lines.len() * GLYPH + 2 * PAD) * scale;
    let mut pixels = vec![WHITE; width * height];

    let mut index = 0; // character offset of the line start in the whole text
    for (row, line) in lines.iter().enumerate() {
        for (col, ch) in line.chars().enumerate() {
            if col < MAX_COLUMNS {
                let selected = (selection.start..selection.end).contains(&(index + col));
                draw(&mut pixels, width, scale, row, col, ch, selected);
            }
        }
        index += line.chars().count() + 1;
    }
    Rendering {
        png: encode(&pixels, width as u32, height as u32),
        width: width as u32,
        height: height as u32,
    }
}

fn draw(
    pixels: &mut [u8],
    width: usize,
    scale: usize,
    row: usize,
    col: usize,
    ch: char,
    selected: bool,
) {
    let glyph =
        BASIC_FONTS.get(ch).or_else(|| LATIN_FONTS.get(ch)).or_else(|| BASIC_FONTS.get('?'));
    let glyph = glyph.unwrap_or([0; 8]);
    let x0 = (PAD + col * GLYPH) * scale;
    let y0 = (PAD + row * GLYPH) * scale;
    for (gy, bits) in glyph.iter().enumerate() {
        for gx in 0..GLYPH {
            // font8x8 stores each row with the leftmost pixel in bit 0.
            let on = bits >> gx & 1 == 1;
            let value = match (on, selected) {
                (true, _) => INK,
                (false, true) => SHADE,
                (false, false) => continue,
            };
            for dy in 0..scale {
                let y = y0 + gy * scale + dy;
                let start = y * width + x0 + gx * scale;
                pixels[start..start + scale].fill(value);
            }
        }
    }
}

fn encode(pixels: &[u8], width: u32, height: u32) -> Vec<u8> {
    let mut out = Vec::new();
    let mut encoder = png::Encoder::new(&mut out, width, height);
    encoder.set_color(png::ColorType::Grayscale);
    encoder.set_depth(png::BitDepth::Eight);
    // Writing into a Vec cannot fail and the buffer has exactly width × height bytes, so an
    // error here is a bug in this function.
    let mut writer = encoder.write_header().expect("PNG header into memory");
    writer.write_image_data(pixels).expect("PNG data of the announced size");
    writer.finish().expect("PNG trailer into memory");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const SIGNATURE: [u8; 8] = [0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A];

    fn ihdr_size(png: &[u8]) -> (u32, u32) {
        // Signature, then the IHDR chunk: length, "IHDR", width, height (big-endian).
        assert_eq!(&png[12..16], b"IHDR");
        let w = u32::from_be_bytes(png[16..20].try_into().unwrap());
        let h = u32::from_be_bytes(png[20..24].try_into().unwrap());
        (w, h)
    }

    #[test]
    fn a_real_png_of_the_right_size() {
        let r = render("hello\nwörld!", Selection { start: 0, end: 3 }, 1);
        assert_eq!(&r.png[..8], &SIGNATURE);
        assert_eq!((r.width, r.height), (6 * 8 + 8, 2 * 8 + 8));
        assert_eq!(ihdr_size(&r.png), (r.width, r.height));
        let r2 = render("hello\nwörld!", Selection::default(), 3);
        assert_eq!((r2.width, r2.height), (r.width * 3, r.height * 3));
        assert_ne!(
            render("a", Selection::default(), 1).png,
            render("b", Selection::default(), 1).png
        );
    }

    #[test]
    fn empty_and_huge_documents_are_bounded() {
        let r = render("", Selection::default(), 1);
        assert_eq!((r.width, r.height), (8 + 8, 8 + 8));
        let long = "x".repeat(10_000);
        let r = render(&long, Selection::default(), 1);
        assert_eq!(r.width as usize, MAX_COLUMNS * 8 + 8);
        let many = "x\n".repeat(1000);
        assert_eq!(render(&many, Selection::default(), 1).height as usize, MAX_LINES * 8 + 8);
    }
}
