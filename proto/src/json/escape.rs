//! How the encoder writes strings, in its one form: every escape it uses and no other, so
//! that a string written twice comes out byte for byte the same (the parser relies on it to
//! keep fragments in that form, the daemon's audit lines to match the encoder), and how an
//! encoding is escaped again inside a string (MCP's text twin of a result).

use alloc::vec::Vec;

use super::scan::plain_run_end;

/// Writes `s` quoted, in the encoder's one form: runs that need no escaping are copied whole,
/// the quote, the backslash, the control characters (the short forms where JSON has one, else
/// `\u00xx`) and U+2028/U+2029 escaped. Public for writers that lay out a fixed
/// message shape themselves (the daemon's audit lines): their strings must come out exactly
/// as [`encode`](super::encode) writes them.
pub fn write_string(s: &str, out: &mut Vec<u8>) {
    let bytes = s.as_bytes();
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    let mut run_start = 0;
    let mut i = 0;
    loop {
        i = plain_run_end::<0xE2>(bytes, i, bytes.len());
        // `i` is at an ASCII byte or at the lead byte 0xE2, so a character starts there.
        let Some(c) = s.get(i..).and_then(|rest| rest.chars().next()) else { break };
        if let Some(escape) = escape_for(c) {
            out.extend_from_slice(&bytes[run_start..i]);
            out.extend_from_slice(escape.as_bytes());
            run_start = i + c.len_utf8();
        }
        i += c.len_utf8();
    }
    out.extend_from_slice(&bytes[run_start..]);
    out.push(b'"');
}

/// The escape sequence of one character, as the encoder writes it.
pub(super) struct Escape {
    bytes: [u8; 6],
    len: usize,
}

impl Escape {
    pub(super) fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len]
    }
}

/// How the encoder escapes `c` inside a string, or `None` when it writes `c` as it is: the
/// quote, the backslash and the control characters must be escaped (the short forms where
/// JSON has one, else `\u00xx` in lower case), and U+2028/U+2029 are, so that no output holds
/// a literal line break for JavaScript readers. Nothing else is.
pub(super) fn escape_for(c: char) -> Option<Escape> {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let short = |b: u8| Escape { bytes: [b'\\', b, 0, 0, 0, 0], len: 2 };
    let code = u32::from(c);
    Some(match c {
        '"' => short(b'"'),
        '\\' => short(b'\\'),
        '\n' => short(b'n'),
        '\r' => short(b'r'),
        '\t' => short(b't'),
        '\u{8}' => short(b'b'),
        '\u{c}' => short(b'f'),
        '\u{0}'..='\u{1f}' | '\u{2028}' | '\u{2029}' => {
            let digit = |shift: u32| HEX[((code >> shift) & 0xF) as usize];
            Escape { bytes: [b'\\', b'u', digit(12), digit(8), digit(4), digit(0)], len: 6 }
        }
        _ => return None,
    })
}

/// Appends `encoded`, our encoder's output, escaped as the contents of a JSON string. That
/// output holds no control character and no literal line separator (the encoder escapes them),
/// so of the encoder's string rule only `"` and `\` apply.
pub(super) fn escape_into(encoded: &[u8], out: &mut Vec<u8>) {
    out.reserve(encoded.len());
    let mut rest = encoded;
    while let Some(i) = rest.iter().position(|&b| b == b'"' || b == b'\\') {
        out.extend_from_slice(&rest[..i]);
        out.extend_from_slice(&[b'\\', rest[i]]);
        rest = &rest[i + 1..];
    }
    out.extend_from_slice(rest);
}
