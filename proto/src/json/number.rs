//! A JSON number kept as its exact token, with exact (never rounding) integer conversion.

use core::fmt;

use alloc::boxed::Box;

use super::{JsonError, JsonErrorKind};

/// A JSON number exactly as written, e.g. `"12"`, `"-0"`, `"1.0"`, `"1e400"`.
///
/// The token always matches the RFC 8259 number grammar. Equality is token equality (`1.0` and
/// `1` are different tokens); use [`Number::to_u64`] / [`Number::to_i64`] to compare values.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Number {
    token: Box<str>,
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
            Some(n) if n == token.len() => Ok(Number { token: Box::from(token) }),
            _ => Err(JsonError::new(JsonErrorKind::InvalidNumber, 0)),
        }
    }

    /// Wraps a token the parser has already checked.
    pub(crate) fn from_checked_token(token: &str) -> Number {
        debug_assert_eq!(grammar_len(token.as_bytes()), Some(token.len()));
        Number { token: Box::from(token) }
    }

    /// The exact token.
    pub fn as_str(&self) -> &str {
        &self.token
    }

    /// The exact value as `u64` when the number is integral and in range.
    ///
    /// Integral spellings with a fraction or exponent count: `1.0` → 1, `1e3` → 1000,
    /// `100E-2` → 1; `1.5`, `12E-1`, `-1` and `18446744073709551616` give `None`, never a
    /// rounded or wrapped value. `-0` is 0.
    pub fn to_u64(&self) -> Option<u64> {
        let (negative, magnitude) = exact_integer(self.token.as_bytes())?;
        if negative && magnitude != 0 { None } else { u64::try_from(magnitude).ok() }
    }

    /// The exact value as `i64` when the number is integral and in range (see [`Number::to_u64`]).
    pub fn to_i64(&self) -> Option<i64> {
        let (negative, magnitude) = exact_integer(self.token.as_bytes())?;
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
        todo!("parse the token as f64")
    }
}

/// Length of the longest prefix of `bytes` that is an RFC 8259 number, or `None` when no
/// number starts there. Shared by the parser and [`Number::from_token`].
pub(crate) fn grammar_len(bytes: &[u8]) -> Option<usize> {
    let _ = bytes;
    todo!("RFC 8259 number grammar")
}

/// `(negative, magnitude)` of an integral token whose magnitude fits in `u128`; `None` for
/// non-integral or larger values. Works on the decimal digits and exponent, so it is exact and
/// linear in the token length whatever the exponent (`1e999999999` is simply out of range).
fn exact_integer(token: &[u8]) -> Option<(bool, u128)> {
    let _ = token;
    todo!("exact integral conversion")
}

impl fmt::Debug for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.token)
    }
}

impl fmt::Display for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.token)
    }
}

impl From<u64> for Number {
    fn from(n: u64) -> Self {
        Number { token: alloc::format!("{n}").into_boxed_str() }
    }
}

impl From<i64> for Number {
    fn from(n: i64) -> Self {
        Number { token: alloc::format!("{n}").into_boxed_str() }
    }
}
