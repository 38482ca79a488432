//! A JSON number kept as its exact token, with exact (never rounding) integer conversion.

use core::fmt;

use alloc::boxed::Box;

use super::{JsonError, JsonErrorKind};

/// A JSON number exactly as written, e.g. `"12"`, `"-0"`, `"1.0"`, `"1e400"`.
///
/// The token always matches the RFC 8259 number grammar. Equality (and hashing) is token
/// equality (`1.0` and `1` are different tokens); use [`Number::to_u64`] / [`Number::to_i64`]
/// to compare values.
#[derive(Clone)]
pub struct Number {
    repr: Repr,
}

/// Longest token stored inline: every `u64` and `i64` fits (20 bytes), and so do most floats.
const INLINE: usize = 22;

/// Short tokens live inside the value, so parsing a number allocates only for long ones.
#[derive(Clone)]
enum Repr {
    /// An ASCII token of `len` bytes.
    Inline {
        len: u8,
        bytes: [u8; INLINE],
    },
    Heap(Box<str>),
}

impl PartialEq for Number {
    fn eq(&self, other: &Number) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for Number {}

impl core::hash::Hash for Number {
    fn hash<H: core::hash::Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

impl Number {
    /// Checks `token` against the RFC 8259 number grammar.
    ///
    /// ```
    /// # use jfgui_proto::Number;
    /// assert!(Number::from_token("-12.5e3").is_ok());
    /// assert!(Number::from_token("012").is_err());
    /// assert!(Number::from_token("+1").is_err());
    /// ```
    pub fn from_token(token: &str) -> Result<Number, JsonError> {
        match grammar_len(token.as_bytes()) {
            Some(n) if n == token.len() => Ok(Number::from_checked_token(token)),
            _ => Err(JsonError::new(JsonErrorKind::InvalidNumber, 0)),
        }
    }

    /// Wraps a token the parser has already checked.
    pub(crate) fn from_checked_token(token: &str) -> Number {
        debug_assert_eq!(grammar_len(token.as_bytes()), Some(token.len()));
        let repr = match u8::try_from(token.len()) {
            Ok(len) if token.len() <= INLINE => {
                let mut bytes = [0; INLINE];
                bytes[..token.len()].copy_from_slice(token.as_bytes());
                Repr::Inline { len, bytes }
            }
            _ => Repr::Heap(Box::from(token)),
        };
        Number { repr }
    }

    /// The exact token.
    pub fn as_str(&self) -> &str {
        match &self.repr {
            // Inline tokens were copied from a `&str`, so this cannot fail; "" keeps it total.
            Repr::Inline { len, bytes } => {
                core::str::from_utf8(&bytes[..usize::from(*len)]).unwrap_or("")
            }
            Repr::Heap(token) => token,
        }
    }

    /// The token's bytes (ASCII), without the UTF-8 check of [`Number::as_str`].
    pub(crate) fn as_bytes(&self) -> &[u8] {
        match &self.repr {
            Repr::Inline { len, bytes } => &bytes[..usize::from(*len)],
            Repr::Heap(token) => token.as_bytes(),
        }
    }

    /// The exact value as `u64` when the number is integral and in range.
    ///
    /// Integral spellings with a fraction or exponent count: `1.0` → 1, `1e3` → 1000,
    /// `100E-2` → 1; `1.5`, `12E-1`, `-1` and `18446744073709551616` give `None`, never a
    /// rounded or wrapped value. `-0` is 0.
    pub fn to_u64(&self) -> Option<u64> {
        let (negative, magnitude) = exact_integer(self.as_bytes())?;
        if negative && magnitude != 0 { None } else { u64::try_from(magnitude).ok() }
    }

    /// The exact value as `i64` when the number is integral and in range (see [`Number::to_u64`]).
    pub fn to_i64(&self) -> Option<i64> {
        let (negative, magnitude) = exact_integer(self.as_bytes())?;
        let signed = if negative {
            -i128::try_from(magnitude).ok()?
        } else {
            i128::try_from(magnitude).ok()?
        };
        i64::try_from(signed).ok()
    }

    /// The nearest `f64` (lossy by nature; for display and float-typed fields only). Tokens
    /// beyond the `f64` range give infinity.
    pub fn to_f64(&self) -> f64 {
        // Every RFC 8259 token is also valid Rust float syntax, and core's parser is correctly
        // rounded and saturates to infinity; NaN is unreachable.
        self.as_str().parse().unwrap_or(f64::NAN)
    }

    /// The nearest `f32` (rounded once, straight from the token).
    pub(crate) fn to_f32(&self) -> f32 {
        self.as_str().parse().unwrap_or(f32::NAN)
    }

    /// The exact value as `u128` (see [`Number::to_u64`]).
    pub(crate) fn to_u128(&self) -> Option<u128> {
        let (negative, magnitude) = exact_integer(self.as_bytes())?;
        if negative && magnitude != 0 { None } else { Some(magnitude) }
    }

    /// The exact value as `i128` (see [`Number::to_u64`]).
    pub(crate) fn to_i128(&self) -> Option<i128> {
        let (negative, magnitude) = exact_integer(self.as_bytes())?;
        if negative {
            // -2^127 is the one magnitude that fits only when negative.
            0i128.checked_sub_unsigned(magnitude)
        } else {
            i128::try_from(magnitude).ok()
        }
    }

    /// The shortest token that reads back as exactly `f`, or `None` for NaN and infinities,
    /// which JSON cannot hold.
    pub(crate) fn from_f64(f: f64) -> Option<Number> {
        f.is_finite().then(|| {
            Number::from_float_text(
                f.abs() >= 1e16 || (f != 0.0 && f.abs() < 1e-6),
                format_args!("{f}"),
                format_args!("{f:e}"),
            )
        })
    }

    /// As [`Number::from_f64`], with the shortest digits of the `f32` itself (so `0.1f32` is
    /// `0.1`, not `0.10000000149011612`).
    pub(crate) fn from_f32(f: f32) -> Option<Number> {
        f.is_finite().then(|| {
            Number::from_float_text(
                f.abs() >= 1e16 || (f != 0.0 && f.abs() < 1e-6),
                format_args!("{f}"),
                format_args!("{f:e}"),
            )
        })
    }

    /// Core's `Display` and `LowerExp` both print the shortest round-trip digits; positional
    /// notation reads best for ordinary magnitudes and exponent notation keeps extreme ones
    /// short (`1e300` instead of 301 digits). A positional integral float gets `.0` so the
    /// token still looks like a float, as serde_json writes it.
    fn from_float_text(
        exponent_form: bool,
        plain: fmt::Arguments<'_>,
        exp: fmt::Arguments<'_>,
    ) -> Number {
        let mut text =
            if exponent_form { alloc::fmt::format(exp) } else { alloc::fmt::format(plain) };
        if !exponent_form && !text.contains('.') {
            text.push_str(".0");
        }
        Number::from_checked_token(&text)
    }

    /// The exact token of an integer.
    pub(crate) fn from_u128(n: u128) -> Number {
        Number::from_checked_token(&alloc::format!("{n}"))
    }

    /// The exact token of a signed integer.
    pub(crate) fn from_i128(n: i128) -> Number {
        Number::from_checked_token(&alloc::format!("{n}"))
    }
}

/// Length of the longest prefix of `bytes` that is an RFC 8259 number, or `None` when no
/// number starts there. Shared by the parser and [`Number::from_token`].
pub(crate) fn grammar_len(bytes: &[u8]) -> Option<usize> {
    let digits_from = |mut i: usize| {
        while i < bytes.len() && bytes[i].is_ascii_digit() {
            i += 1;
        }
        i
    };
    let mut i = usize::from(bytes.first() == Some(&b'-'));
    // int = zero / ( digit1-9 *DIGIT )
    i = match bytes.get(i) {
        Some(b'0') => i + 1,
        Some(b'1'..=b'9') => digits_from(i + 1),
        _ => return None,
    };
    // frac = decimal-point 1*DIGIT; without a digit the '.' is not part of the number.
    if bytes.get(i) == Some(&b'.') && bytes.get(i + 1).is_some_and(u8::is_ascii_digit) {
        i = digits_from(i + 2);
    }
    // exp = e [ minus / plus ] 1*DIGIT
    if matches!(bytes.get(i), Some(b'e' | b'E')) {
        let sign = usize::from(matches!(bytes.get(i + 1), Some(b'+' | b'-')));
        if bytes.get(i + 1 + sign).is_some_and(u8::is_ascii_digit) {
            i = digits_from(i + 2 + sign);
        }
    }
    Some(i)
}

/// `(negative, magnitude)` of an integral token whose magnitude fits in `u128`; `None` for
/// non-integral or larger values. Works on the decimal digits and exponent, so it is exact and
/// linear in the token length whatever the exponent (`1e999999999` is simply out of range).
fn exact_integer(token: &[u8]) -> Option<(bool, u128)> {
    let negative = token.first() == Some(&b'-');
    let body = &token[usize::from(negative)..];
    let mantissa_end = body.iter().position(|&b| b == b'e' || b == b'E').unwrap_or(body.len());
    let (mantissa, exponent) = body.split_at(mantissa_end);
    let (int_digits, frac_digits) = match mantissa.iter().position(|&b| b == b'.') {
        Some(dot) => (&mantissa[..dot], &mantissa[dot + 1..]),
        None => (mantissa, &[][..]),
    };
    // Saturate the exponent far beyond any value that matters: a u128 has 39 digits and a
    // mantissa is at most a few million digits (the message bound), so ±10^15 keeps every
    // comparison below exact while `1e999999999999999999999` costs only its own length.
    const EXP_CAP: i64 = 1_000_000_000_000_000;
    let mut exp: i64 = 0;
    if let Some((_, e)) = exponent.split_first() {
        let (minus, digits) = match e.split_first() {
            Some((b'-', rest)) => (true, rest),
            Some((b'+', rest)) => (false, rest),
            _ => (false, e),
        };
        for &d in digits {
            exp = (exp * 10 + i64::from(d - b'0')).min(EXP_CAP);
        }
        if minus {
            exp = -exp;
        }
    }
    // The value is D × 10^(exp − |frac|) with D the decimal digits of int and frac together.
    // Leading zeros of D add nothing; trailing zeros move into the exponent.
    let digits = int_digits.iter().chain(frac_digits);
    let leading_zeros = digits.clone().take_while(|&&d| d == b'0').count();
    let sig_len = int_digits.len() + frac_digits.len() - leading_zeros;
    if sig_len == 0 {
        return Some((negative, 0));
    }
    let significant = digits.clone().skip(leading_zeros);
    let trailing_zeros = digits.rev().take_while(|&&d| d == b'0').count();
    let scale = exp - frac_digits.len() as i64 + trailing_zeros as i64;
    if scale < 0 {
        return None;
    }
    let kept = sig_len - trailing_zeros;
    // u128::MAX has 39 digits: anything longer cannot fit, and this bounds the loop below.
    if kept as i64 + scale > 39 {
        return None;
    }
    let mut magnitude: u128 = 0;
    for &d in significant.take(kept) {
        magnitude = magnitude.checked_mul(10)?.checked_add(u128::from(d - b'0'))?;
    }
    for _ in 0..scale {
        magnitude = magnitude.checked_mul(10)?;
    }
    Some((negative, magnitude))
}

impl fmt::Debug for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Display for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl From<u64> for Number {
    fn from(n: u64) -> Self {
        Number::from_integer(false, n)
    }
}

impl From<i64> for Number {
    fn from(n: i64) -> Self {
        Number::from_integer(n < 0, n.unsigned_abs())
    }
}

impl Number {
    /// Writes the decimal token straight into the inline buffer (no formatting machinery, no
    /// allocation): integers are the most common numbers we produce.
    fn from_integer(negative: bool, mut magnitude: u64) -> Number {
        let mut digits = [0u8; 20];
        let mut start = digits.len();
        loop {
            start -= 1;
            digits[start] = b'0' + (magnitude % 10) as u8;
            magnitude /= 10;
            if magnitude == 0 {
                break;
            }
        }
        let mut bytes = [0; INLINE];
        let sign = usize::from(negative);
        bytes[0] = b'-';
        let len = digits.len() - start;
        bytes[sign..sign + len].copy_from_slice(&digits[start..]);
        // At most 21 bytes ("-" and 20 digits).
        Number { repr: Repr::Inline { len: (sign + len) as u8, bytes } }
    }
}

#[cfg(test)]
mod tests {
    use alloc::string::String;

    use super::*;

    fn n(token: &str) -> Number {
        Number::from_token(token).unwrap()
    }

    #[test]
    fn grammar_accepts_rfc_8259_numbers() {
        for ok in ["0", "-0", "1", "-1", "10", "1.5", "0.1e1", "1e3", "1E+3", "100E-2", "-12.5e-3"]
        {
            assert_eq!(grammar_len(ok.as_bytes()), Some(ok.len()), "{ok}");
        }
    }

    #[test]
    fn grammar_rejects_what_rfc_8259_forbids() {
        for bad in ["012", "+1", ".5", "1.", "1e", "1e+", "-", "--1", "NaN", "Infinity", "0x1", ""]
        {
            assert!(Number::from_token(bad).is_err(), "{bad}");
        }
        // The longest valid prefix, which the parser then refuses to split a token at.
        assert_eq!(grammar_len(b"012"), Some(1));
        assert_eq!(grammar_len(b"1.e5"), Some(1));
        assert_eq!(grammar_len(b"1e+x"), Some(1));
        assert_eq!(grammar_len(b"-x"), None);
    }

    #[test]
    fn integral_spellings_convert_exactly() {
        assert_eq!(n("1.0").to_u64(), Some(1));
        assert_eq!(n("1e3").to_u64(), Some(1000));
        assert_eq!(n("100E-2").to_u64(), Some(1));
        assert_eq!(n("0.1e1").to_u64(), Some(1));
        assert_eq!(n("1.2300e2").to_u64(), Some(123));
        assert_eq!(n("-0").to_u64(), Some(0));
        assert_eq!(n("-0.0e5").to_i64(), Some(0));
        assert_eq!(n("0e-999999999").to_u64(), Some(0));
        assert_eq!(n("18446744073709551615").to_u64(), Some(u64::MAX));
        assert_eq!(n("1.8446744073709551615e19").to_u64(), Some(u64::MAX));
        assert_eq!(n("-9223372036854775808").to_i64(), Some(i64::MIN));
        assert_eq!(n("9223372036854775807").to_i64(), Some(i64::MAX));
        assert_eq!(n("-1").to_i64(), Some(-1));
        assert_eq!(n("-1e2").to_i64(), Some(-100));
    }

    #[test]
    fn non_integral_and_out_of_range_are_none_never_rounded() {
        for token in ["1.5", "12E-1", "1e-1", "0.5e0", "9007199254740993.5"] {
            assert_eq!(n(token).to_u64(), None, "{token}");
            assert_eq!(n(token).to_i64(), None, "{token}");
        }
        assert_eq!(n("-1").to_u64(), None);
        assert_eq!(n("18446744073709551616").to_u64(), None);
        assert_eq!(n("9223372036854775808").to_i64(), None);
        assert_eq!(n("-9223372036854775809").to_i64(), None);
        assert_eq!(n("123456789012345678901234567890").to_u64(), None);
        assert_eq!(n("1e400").to_u64(), None);
        assert_eq!(n("1e999999999").to_u64(), None);
        assert_eq!(n("1e99999999999999999999999999999").to_i64(), None);
        assert_eq!(n("9007199254740993.0").to_u64(), Some(9007199254740993));
    }

    #[test]
    fn u128_and_i128_bounds() {
        assert_eq!(n("340282366920938463463374607431768211455").to_u128(), Some(u128::MAX));
        assert_eq!(n("340282366920938463463374607431768211456").to_u128(), None);
        assert_eq!(n("-170141183460469231731687303715884105728").to_i128(), Some(i128::MIN));
        assert_eq!(n("170141183460469231731687303715884105728").to_i128(), None);
        assert_eq!(n("-1").to_u128(), None);
    }

    #[test]
    fn hundred_thousand_digits_convert_in_one_pass() {
        let mut token = String::from("1");
        token.extend(core::iter::repeat_n('0', 100_000));
        assert_eq!(n(&token).to_u64(), None);
        let mut scaled = token.clone();
        scaled.push_str("e-100000");
        assert_eq!(n(&scaled).to_u64(), Some(1));
        let mut zeros = String::from("0.");
        zeros.extend(core::iter::repeat_n('0', 100_000));
        assert_eq!(n(&zeros).to_u64(), Some(0));
    }

    #[test]
    fn floats_are_lossy_but_saturate() {
        assert_eq!(n("1.5").to_f64(), 1.5);
        assert_eq!(n("1e400").to_f64(), f64::INFINITY);
        assert_eq!(n("-1e400").to_f64(), f64::NEG_INFINITY);
        assert_eq!(n("1e-400").to_f64(), 0.0);
    }

    #[test]
    fn float_tokens_are_shortest_round_trip() {
        assert_eq!(Number::from_f64(0.1).unwrap().as_str(), "0.1");
        assert_eq!(Number::from_f64(1.0).unwrap().as_str(), "1.0");
        assert_eq!(Number::from_f64(-0.0).unwrap().as_str(), "-0.0");
        assert_eq!(Number::from_f64(1e300).unwrap().as_str(), "1e300");
        assert_eq!(Number::from_f64(1.5e-7).unwrap().as_str(), "1.5e-7");
        assert_eq!(Number::from_f32(0.1).unwrap().as_str(), "0.1");
        assert!(Number::from_f64(f64::NAN).is_none());
        assert!(Number::from_f64(f64::INFINITY).is_none());
        for f in [0.1, 1.0 / 3.0, 123456.789, 5e-324, f64::MAX, f64::MIN_POSITIVE, -2.5e20] {
            assert_eq!(Number::from_f64(f).unwrap().to_f64(), f);
        }
    }

    #[test]
    fn integers_write_their_decimal_token() {
        for n in [0, 1, 9, 10, 12345, u64::MAX] {
            assert_eq!(Number::from(n).as_str(), alloc::format!("{n}"));
        }
        for n in [0, -1, -10, i64::MIN, i64::MAX] {
            assert_eq!(Number::from(n).as_str(), alloc::format!("{n}"));
            assert_eq!(Number::from(n).to_i64(), Some(n));
        }
    }

    #[test]
    fn short_and_long_tokens_behave_alike() {
        for len in [1, INLINE - 1, INLINE, INLINE + 1, 100] {
            let token = "7".repeat(len);
            let a = n(&token);
            assert_eq!(a.as_str(), token);
            assert_eq!(a.clone(), a);
            assert_ne!(a, n("8"));
            assert_eq!(alloc::format!("{a} {a:?}"), alloc::format!("{token} {token}"));
        }
    }

    #[test]
    fn equality_is_token_equality() {
        assert_ne!(n("1"), n("1.0"));
        assert_eq!(n("1.0"), n("1.0"));
        assert_eq!(n("1").to_u64(), n("1.0").to_u64());
    }
}
