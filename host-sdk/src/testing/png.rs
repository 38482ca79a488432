//! "Decodable PNG", decided by decoding it fully with the `png` crate: signature, chunk CRCs,
//! the zlib stream and its checksum, and every row of the first frame.

use alloc::string::{String, ToString};
use alloc::vec;

/// Width and height of the PNG in `bytes`, or why it is not one.
pub(crate) fn decode(bytes: &[u8]) -> Result<(u32, u32), String> {
    let mut options = png::DecodeOptions::default();
    // The crate skips the zlib checksum by default; a damaged stream must not pass.
    options.set_ignore_adler32(false);
    let decoder = png::Decoder::new_with_options(std::io::Cursor::new(bytes), options);
    let mut reader = decoder.read_info().map_err(|e| e.to_string())?;
    let size = reader.output_buffer_size().ok_or("the image is too large to decode")?;
    let mut buf = vec![0u8; size];
    let frame = reader.next_frame(&mut buf).map_err(|e| e.to_string())?;
    Ok((frame.width, frame.height))
}

#[cfg(test)]
pub(crate) mod tests {
    use alloc::vec::Vec;

    use super::*;

    pub(crate) fn tiny_png() -> Vec<u8> {
        let mut out = Vec::new();
        let mut encoder = png::Encoder::new(&mut out, 3, 2);
        encoder.set_color(png::ColorType::Rgb);
        let mut writer = encoder.write_header().unwrap();
        writer.write_image_data(&[200; 18]).unwrap();
        writer.finish().unwrap();
        out
    }

    #[test]
    fn a_real_png_decodes_and_damage_is_found() {
        let good = tiny_png();
        assert_eq!(decode(&good), Ok((3, 2)));
        assert!(decode(b"not a png").is_err());
        assert!(decode(&good[..good.len() / 2]).is_err(), "truncated");
        let mut flipped = good.clone();
        // A byte inside the IDAT payload: the chunk CRC no longer matches.
        let at = good.windows(4).position(|w| w == b"IDAT").unwrap() + 6;
        flipped[at] ^= 0x40;
        assert!(decode(&flipped).is_err(), "damaged IDAT");
    }
}
