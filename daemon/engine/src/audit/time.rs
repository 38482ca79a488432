//! Record time stamps: UTC milliseconds since the Unix epoch, written as RFC 3339 with
//! milliseconds (`2026-12-01T14:09:16.123Z`) and read back for `jfgui-agent log --since`.
//!
//! Civil dates are converted with Howard Hinnant's `days_from_civil` / `civil_from_days`
//! (proleptic Gregorian), so no time crate is needed for one format.

use std::io::Write as _;
use std::time::{SystemTime, UNIX_EPOCH};

/// Now, in UTC milliseconds since the epoch (0 if the clock is before 1970).
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// `ms` as `YYYY-MM-DDTHH:MM:SS.mmmZ`.
pub fn format_ms(ms: u64) -> String {
    let mut text = Vec::with_capacity(24);
    write_digits(ms, &mut text);
    String::from_utf8(text).expect("digits and separators are ASCII")
}

/// `ms` as the JSON string `"YYYY-MM-DDTHH:MM:SS.mmmZ"` (nothing in it needs escaping),
/// appended to `out`: a record line is written without a `String` for its time.
pub fn write_ms(ms: u64, out: &mut Vec<u8>) {
    out.push(b'"');
    write_digits(ms, out);
    out.push(b'"');
}

fn write_digits(ms: u64, out: &mut Vec<u8>) {
    let secs = ms / 1000;
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let (y, m, d) = civil_from_days(days);
    // Writing to a Vec cannot fail.
    let _ = write!(
        out,
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60,
        ms % 1000
    );
}

/// Parses `YYYY-MM-DDTHH:MM:SS[.fff]Z` (UTC; a space for `T` is accepted) into milliseconds.
pub fn parse_rfc3339(text: &str) -> Option<u64> {
    let b = text.as_bytes();
    let num = |r: std::ops::Range<usize>| -> Option<u64> {
        let s = text.get(r)?;
        (!s.is_empty() && s.bytes().all(|c| c.is_ascii_digit())).then(|| s.parse().ok())?
    };
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
        return None;
    }
    if b[13] != b':' || b[16] != b':' || !matches!(b[b.len() - 1], b'Z' | b'z') {
        return None;
    }
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, s) = (num(11..13)?, num(14..16)?, num(17..19)?);
    let millis = match &text[19..text.len() - 1] {
        "" => 0,
        frac if frac.starts_with('.') && frac.len() >= 2 => {
            let digits = &frac[1..];
            if !digits.bytes().all(|c| c.is_ascii_digit()) {
                return None;
            }
            let first3: String = digits.chars().chain("000".chars()).take(3).collect();
            first3.parse().ok()?
        }
        _ => return None,
    };
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || s > 60 {
        return None;
    }
    let days = days_from_civil(y as i64, mo as u32, d as u32);
    let secs = u64::try_from(days).ok()? * 86_400 + h * 3600 + mi * 60 + s;
    Some(secs * 1000 + millis)
}

fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = i64::from((m + 9) % 12);
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { yoe + era * 400 + 1 } else { yoe + era * 400 }, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_and_parses_round_trip() {
        assert_eq!(format_ms(0), "1970-01-01T00:00:00.000Z");
        // 2026-12-01T14:09:16.123Z, checked against `date -u -d @1796134156`.
        let ms = 1_796_134_156_123;
        assert_eq!(format_ms(ms), "2026-12-01T14:09:16.123Z");
        assert_eq!(parse_rfc3339("2026-12-01T14:09:16.123Z"), Some(ms));
        assert_eq!(parse_rfc3339("2026-12-01T14:09:16Z"), Some(ms - 123));
        assert_eq!(parse_rfc3339("2026-12-01 14:09:16.1234Z"), Some(ms));
        assert_eq!(format_ms(951_782_400_000), "2000-02-29T00:00:00.000Z");
        for ms in [0, 86_399_999, 951_782_400_000, 4_102_444_800_000] {
            assert_eq!(parse_rfc3339(&format_ms(ms)), Some(ms));
        }
    }

    #[test]
    fn rejects_what_is_not_utc_rfc3339() {
        for bad in [
            "",
            "2026-12-01",
            "2026-12-01T14:09:16",
            "2026-12-01T14:09:16+01:00",
            "2026-13-01T14:09:16Z",
            "2026-12-01T24:00:00Z",
            "2026-12-01T14:09:16.Z",
            "2026-12-01T14:09:16.1xZ",
            "20a6-12-01T14:09:16Z",
        ] {
            assert_eq!(parse_rfc3339(bad), None, "{bad:?}");
        }
    }
}
