//! Word-at-a-time (SWAR) search for the end of a plain run inside a JSON string, shared by the
//! parser and the encoder: long strings are what large messages are made of.

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = 0x8080_8080_8080_8080;

/// True for the bytes a JSON string cannot carry literally: the quote, the backslash and the
/// control characters, plus `EXTRA` (the encoder passes 0xE2, the lead byte of U+2028/U+2029;
/// the parser passes 0, which is a control character anyway).
const fn is_special<const EXTRA: u8>(b: u8) -> bool {
    b < 0x20 || b == b'"' || b == b'\\' || b == EXTRA
}

/// High bit set in every byte of `w` that equals `b`, and possibly in bytes above the lowest
/// such byte (borrows only propagate upwards), so only the lowest flag is exact.
const fn flag_equal(w: u64, b: u8) -> u64 {
    let x = w ^ (ONES * b as u64);
    x.wrapping_sub(ONES) & !x & HIGH
}

/// The first offset in `from..end` holding a special byte (see `is_special`), or `end`.
pub(super) fn plain_run_end<const EXTRA: u8>(bytes: &[u8], from: usize, end: usize) -> usize {
    let end = end.min(bytes.len());
    let mut i = from;
    while i + 8 <= end {
        let Ok(word) = <[u8; 8]>::try_from(&bytes[i..i + 8]) else { break };
        let w = u64::from_le_bytes(word);
        let below_space = w.wrapping_sub(ONES * 0x20) & !w & HIGH;
        let flagged = below_space
            | flag_equal(w, b'"')
            | flag_equal(w, b'\\')
            | if EXTRA == 0 { 0 } else { flag_equal(w, EXTRA) };
        if flagged != 0 {
            return i + (flagged.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while i < end && !is_special::<EXTRA>(bytes[i]) {
        i += 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use alloc::vec;

    use super::*;

    fn naive<const EXTRA: u8>(buf: &[u8], from: usize, end: usize) -> usize {
        (from..end).find(|&i| is_special::<EXTRA>(buf[i])).unwrap_or(end)
    }

    #[test]
    fn word_at_a_time_scan_matches_the_byte_scan() {
        for filler in [b'a', 0xe9] {
            for special in 0..=255u8 {
                for at in 0..20 {
                    for second in [None, Some(b'"'), Some(0x1f), Some(0xe2), Some(0xff)] {
                        let mut buf = vec![filler; 24];
                        buf[at] = special;
                        if let Some(b) = second {
                            buf[(at + 1) % 24] = b;
                        }
                        for from in [0, 1, 3] {
                            for end in [at, 17, 24] {
                                let end = end.max(from);
                                assert_eq!(
                                    plain_run_end::<0>(&buf, from, end),
                                    naive::<0>(&buf, from, end),
                                    "{special} at {at}, {from}..{end}"
                                );
                                assert_eq!(
                                    plain_run_end::<0xE2>(&buf, from, end),
                                    naive::<0xE2>(&buf, from, end),
                                    "{special} at {at}, {from}..{end}"
                                );
                            }
                        }
                    }
                }
            }
        }
    }
}
