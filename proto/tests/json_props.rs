//! Property tests of the strict JSON core: no input panics, `serde_json` agrees on what is JSON
//! (apart from the documented differences), and every value round-trips through encode/parse
//! and through the serde bridge.

use jfgui_proto::{
    JsonErrorKind, Limits, Map, Number, RawJson, Value, encode, from_value, parse, parse_with_raw,
    to_value,
};
use proptest::prelude::*;

/// Bytes that make up JSON, so mutations reach deep into the grammar, plus a few that break it.
fn json_byte() -> impl Strategy<Value = u8> {
    prop_oneof![
        8 => prop::sample::select(
            b"{}[],:\"\\/ \t\n\r0123456789-+.eEtruefalsn\\u\\ud800\\udc00abcdef\xc3\xa9".to_vec()
        ),
        1 => any::<u8>(),
    ]
}

/// A number token, sometimes with a big exponent or many digits.
fn number_token() -> impl Strategy<Value = String> {
    "-?(0|[1-9][0-9]{0,25})(\\.[0-9]{1,12})?([eE][+-]?[0-9]{1,3})?"
}

/// Strings with the characters that need care: quotes, backslashes, controls, U+2028/U+2029,
/// non-BMP characters.
fn tricky_string() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            4 => any::<char>(),
            1 => prop::sample::select(vec!['"', '\\', '\n', '\u{0}', '\u{1f}', '\u{2028}', '\u{2029}', '\u{7f}', '😀', '/']),
        ],
        0..12,
    )
    .prop_map(|chars| chars.into_iter().collect())
}

fn arb_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        number_token().prop_map(|t| Value::Number(Number::from_token(&t).unwrap())),
        tricky_string().prop_map(Value::String),
    ];
    leaf.prop_recursive(6, 64, 8, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..8).prop_map(Value::Array),
            prop::collection::btree_map(tricky_string(), inner, 0..8)
                .prop_map(|m| Value::Object(m.into_iter().collect::<Map>())),
        ]
    })
}

/// A syntactically valid document, rendered by our encoder, then mutated a little.
fn mutated_json() -> impl Strategy<Value = Vec<u8>> {
    (arb_value(), prop::collection::vec((any::<prop::sample::Index>(), 0u8..3, json_byte()), 0..4))
        .prop_map(|(v, edits)| {
            let mut bytes = encode(&v, &Limits::DEFAULT).unwrap();
            for (at, op, b) in edits {
                let i = at.index(bytes.len() + 1);
                match op {
                    0 => bytes.insert(i, b),
                    1 if i < bytes.len() => {
                        bytes.remove(i);
                    }
                    _ if i < bytes.len() => bytes[i] = b,
                    _ => bytes.push(b),
                }
            }
            bytes
        })
}

/// Structural equality where numbers compare by value as far as `serde_json` can hold them.
fn same(ours: &Value, theirs: &serde_json::Value) -> bool {
    match (ours, theirs) {
        (Value::Null, serde_json::Value::Null) => true,
        (Value::Bool(a), serde_json::Value::Bool(b)) => a == b,
        (Value::String(a), serde_json::Value::String(b)) => a == b,
        (Value::Number(a), serde_json::Value::Number(b)) => {
            if let Some(b) = b.as_u64() {
                a.to_u64() == Some(b)
            } else if let Some(b) = b.as_i64() {
                a.to_i64() == Some(b)
            } else {
                // serde_json's default float parser may be off by an ulp.
                let (a, b) = (a.to_f64(), b.as_f64().unwrap());
                a == b || (a - b).abs() <= a.abs().max(b.abs()) * 1e-15
            }
        }
        (Value::Array(a), serde_json::Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same(x, y))
        }
        (Value::Object(a), serde_json::Value::Object(b)) => {
            a.len() == b.len() && a.iter().all(|(k, v)| b.get(k).is_some_and(|w| same(v, w)))
        }
        _ => false,
    }
}

fn differential(bytes: &[u8]) -> Result<(), TestCaseError> {
    let ours = parse(bytes, &Limits::DEFAULT);
    let theirs = serde_json::from_slice::<serde_json::Value>(bytes);
    match (&ours, &theirs) {
        (Ok(a), Ok(b)) => prop_assert!(same(a, b), "different values: {a:?} vs {b:?}"),
        (Err(e), Err(_)) => prop_assert!(e.offset() <= bytes.len()),
        // Documented differences: serde_json lets duplicate keys through (last wins) and has no
        // value/member/string bounds and a deeper recursion limit.
        (Err(e), Ok(_)) => prop_assert!(
            e.kind() == JsonErrorKind::DuplicateKey || e.kind().is_bound(),
            "we reject what serde_json accepts: {e} in {:?}",
            String::from_utf8_lossy(bytes)
        ),
        // serde_json refuses numbers beyond f64 (`1e400`); we keep the token.
        (Ok(_), Err(e)) => prop_assert!(
            e.to_string().contains("number out of range"),
            "serde_json rejects what we accept: {e} in {:?}",
            String::from_utf8_lossy(bytes)
        ),
    }
    Ok(())
}

/// A document spelled the ways other writers spell JSON: whitespace around the structural
/// bytes, `\/`, upper-case `\u` escapes of non-ASCII characters. Inside strings the inserted
/// whitespace changes the value, which is fine: both parsers see the same bytes.
fn respelled_json() -> impl Strategy<Value = Vec<u8>> {
    (mutated_json(), prop::sample::select(vec![" ", "\n", "\r\n\t", ""]), any::<bool>()).prop_map(
        |(bytes, ws, escapes)| {
            let text = String::from_utf8_lossy(&bytes).into_owned();
            let mut out = String::new();
            for c in text.chars() {
                match c {
                    '/' if escapes => out.push_str("\\/"),
                    c if escapes && !c.is_ascii() && (c as u32) < 0x10000 => {
                        out.push_str(&format!("\\u{:04X}", c as u32))
                    }
                    '{' | '[' | ',' | ':' => {
                        out.push(c);
                        out.push_str(ws);
                    }
                    c => out.push(c),
                }
            }
            out.into_bytes()
        },
    )
}

/// Small bounds, so that every bound is broken somewhere in the generated documents.
fn tight_limits() -> impl Strategy<Value = Limits> {
    (1usize..8, 1usize..40, 1usize..8, 0usize..12).prop_map(|(depth, values, members, string)| {
        Limits {
            max_depth: depth,
            max_values: values,
            max_members: members,
            max_string_bytes: string,
            ..Limits::DEFAULT
        }
    })
}

/// Keeping the value at `path` as a fragment changes nothing but its representation: the same
/// error at the same offset, or the same tree, with the fragment's bytes exactly the encoding
/// of the value it stands for.
fn fragment_agrees_with_tree(
    bytes: &[u8],
    limits: &Limits,
    path: &[&str],
) -> Result<(), TestCaseError> {
    let tree = parse(bytes, limits);
    let spliced = parse_with_raw(bytes, limits, path);
    let (tree, (mut spliced, fragment)) = match (tree, spliced) {
        (Ok(t), Ok(s)) => (t, s),
        (Err(a), Err(b)) => {
            prop_assert_eq!((a.kind(), a.offset()), (b.kind(), b.offset()));
            return Ok(());
        }
        (a, b) => return Err(TestCaseError::fail(format!("{a:?} vs {b:?}"))),
    };
    // Find the value at `path` in both and compare there.
    let mut t = &tree;
    let mut s = &mut spliced;
    for name in path {
        match (t.get(name), s) {
            (Some(tv), Value::Object(m)) => {
                t = tv;
                s = m.get_mut(name).unwrap();
            }
            (None, other) => {
                prop_assert!(fragment.is_none(), "a fragment where there is no value");
                prop_assert_eq!(&*other, t);
                return Ok(());
            }
            (Some(_), other) => {
                return Err(TestCaseError::fail(format!("not an object: {other:?}")));
            }
        }
    }
    let Some(raw) = fragment else {
        return Err(TestCaseError::fail(format!("no fragment at {path:?}: {s:?}")));
    };
    prop_assert_eq!(&*s, &Value::Null, "the fragment's place holds null");
    prop_assert_eq!(raw.as_bytes(), &encode(t, &Limits::DEFAULT).unwrap()[..]);
    prop_assert_eq!(&raw.to_value(), t);
    *s = raw.to_value();
    prop_assert_eq!(&spliced, &tree);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn a_fragment_is_parsed_like_its_tree(bytes in respelled_json(), limits in tight_limits()) {
        let wrapped = [b"{\"a\": {\"b\":".as_slice(), &bytes, b"}, \"c\":1}"].concat();
        for limits in [Limits::DEFAULT, limits] {
            fragment_agrees_with_tree(&bytes, &limits, &[])?;
            fragment_agrees_with_tree(&wrapped, &limits, &["a", "b"])?;
            fragment_agrees_with_tree(&wrapped, &limits, &["a"])?;
            fragment_agrees_with_tree(&wrapped, &limits, &["c"])?;
            if let Ok(raw) = RawJson::parse(&bytes, &limits) {
                prop_assert_eq!(raw.to_value(), parse(&bytes, &limits).unwrap());
            }
        }
    }

    #[test]
    fn never_panics_on_arbitrary_bytes(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
        let _ = parse(&bytes, &Limits::DEFAULT);
    }

    #[test]
    fn never_panics_on_json_like_bytes(bytes in prop::collection::vec(json_byte(), 0..256)) {
        if let Ok(v) = parse(&bytes, &Limits::DEFAULT) {
            let again = encode(&v, &Limits::DEFAULT).unwrap();
            prop_assert_eq!(parse(&again, &Limits::DEFAULT).unwrap(), v);
        }
    }

    #[test]
    fn agrees_with_serde_json_on_json_like_bytes(bytes in prop::collection::vec(json_byte(), 0..64)) {
        differential(&bytes)?;
    }

    #[test]
    fn agrees_with_serde_json_on_mutated_documents(bytes in mutated_json()) {
        differential(&bytes)?;
    }

    #[test]
    fn values_round_trip_through_encode_and_parse(v in arb_value()) {
        let bytes = encode(&v, &Limits::DEFAULT).unwrap();
        prop_assert!(!bytes.contains(&b'\n') && !bytes.contains(&b'\r'));
        let text = String::from_utf8(bytes.clone()).unwrap();
        prop_assert!(!text.contains(['\u{2028}', '\u{2029}']), "literal line separator");
        prop_assert_eq!(&parse(&bytes, &Limits::DEFAULT).unwrap(), &v);
        differential(&bytes)?;
    }

    #[test]
    fn values_round_trip_through_the_serde_bridge(v in arb_value()) {
        prop_assert_eq!(&to_value(&v).unwrap(), &v);
        prop_assert_eq!(&from_value::<Value>(v.clone()).unwrap(), &v);
    }

    #[test]
    fn integral_spellings_convert_exactly(n in any::<u64>(), shift in 0usize..25, frac_zeros in 0usize..4) {
        // n × 10^shift written with a negative exponent, n with a zero fraction, n scaled down
        // then up.
        let scaled = format!("{n}{}e-{shift}", "0".repeat(shift));
        prop_assert_eq!(Number::from_token(&scaled).unwrap().to_u64(), Some(n));
        let fraction = format!("{n}.{}", "0".repeat(frac_zeros + 1));
        prop_assert_eq!(Number::from_token(&fraction).unwrap().to_u64(), Some(n));
        let digits = n.to_string();
        if digits.len() > 1 {
            let (int, frac) = digits.split_at(1);
            let sci = format!("{int}.{frac}e{}", frac.len());
            prop_assert_eq!(Number::from_token(&sci).unwrap().to_u64(), Some(n));
            let negative = format!("-{sci}");
            prop_assert_eq!(Number::from_token(&negative).unwrap().to_u64(), None);
            prop_assert_eq!(Number::from_token(&negative).unwrap().to_i64(), i64::try_from(n).ok().map(|x| -x));
        }
        if n % 10 != 0 {
            let not_integral = format!("{n}e-1");
            prop_assert_eq!(Number::from_token(&not_integral).unwrap().to_u64(), None);
        }
    }

    #[test]
    fn integers_match_their_display(n in any::<i64>()) {
        let v = parse(n.to_string().as_bytes(), &Limits::DEFAULT).unwrap();
        prop_assert_eq!(v.as_i64(), Some(n));
        prop_assert_eq!(v.as_u64(), u64::try_from(n).ok());
        prop_assert_eq!(to_value(&n).unwrap(), v);
    }

    #[test]
    fn floats_round_trip_through_to_value(f in any::<f64>().prop_filter("finite", |f| f.is_finite())) {
        let v = to_value(&f).unwrap();
        let back = parse(&encode(&v, &Limits::DEFAULT).unwrap(), &Limits::DEFAULT).unwrap();
        prop_assert_eq!(from_value::<f64>(back).unwrap().to_bits(), f.to_bits());
    }
}
