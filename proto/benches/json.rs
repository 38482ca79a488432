//! Strict parse and encode of realistic messages against `serde_json::Value` on the same bytes.
//!
//! Run: `cargo bench -p jfgui-proto --bench json`. The goal is a strict parse within 1.5× of
//! `serde_json::from_slice::<serde_json::Value>`.

use std::fmt::Write as _;
use std::sync::LazyLock;

use divan::Bencher;
use divan::counter::BytesCount;
use jfgui_proto::{Limits, Value, encode, parse};

fn main() {
    divan::main();
}

const INPUTS: [&str; 3] = ["execute_1k", "describe_64k", "document_1m"];

/// A ~1 KiB `actions/execute` JSON-RPC request.
fn execute_request() -> String {
    let mut text = String::new();
    while text.len() < 700 {
        text.push_str("The quick brown fox jumps over the lazy dog. Ünïcödé \\\"quoted\\\"\\n");
    }
    format!(
        r#"{{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"actions/execute","params":{{"action":"document.text.replace","input":{{"range":{{"start":{{"line":12,"column":4}},"end":{{"line":12,"column":19}}}},"text":"{text}","flags":["preserve_case","whole_word"],"count":3,"scale":1.5e0}},"expectedRevision":1234567,"protocolVersion":"1"}}}}"#
    )
}

/// A ~64 KiB `actions/describe`-like result: a wide input schema with descriptions.
fn describe_result() -> String {
    let mut props = String::new();
    let mut i = 0;
    while props.len() < 62 * 1024 {
        if i > 0 {
            props.push(',');
        }
        write!(
            props,
            r#""field{i}":{{"type":"string","description":"Property number {i} of the document.text.replace action: what it does, its unit and its default.","maxLength":{},"enum":["alpha","beta","gamma"],"default":"alpha"}}"#,
            1000 + i
        )
        .unwrap();
        i += 1;
    }
    format!(
        r#"{{"jsonrpc":"2.0","id":7,"result":{{"protocolVersion":"1","action":{{"name":"document.text.replace","description":"Replaces a range of text.","kind":"write","inputSchema":{{"type":"object","properties":{{{props}}},"required":["field0"],"additionalProperties":false}},"outputSchema":{{"type":"object"}},"capabilities":3,"undo":true,"transaction":"document","commandId":4711}}}}}}"#
    )
}

/// A ~1 MiB document within the default bounds: large strings (256 KiB max each) and arrays.
fn document() -> String {
    let chunk = "Lorem ipsum dolor sit amet, consectetur adipiscing elit \u{e9}\u{20ac}. ";
    let big = chunk.repeat(240 * 1024 / chunk.len());
    let numbers: Vec<String> = (0..4000).map(|i| format!("{}", i * 7919 % 100_003)).collect();
    let rows: Vec<String> =
        (0..1000).map(|i| format!(r#"{{"id":{i},"name":"row {i}","ratio":0.{i:03}}}"#)).collect();
    format!(
        r#"{{"texts":["{big}","{big}","{big}","{big}"],"numbers":[{}],"rows":[{}],"tail":"a\tb\u0001"}}"#,
        numbers.join(","),
        rows.join(",")
    )
}

static DATA: LazyLock<[Vec<u8>; 3]> = LazyLock::new(|| {
    let data = [execute_request(), describe_result(), document()].map(String::into_bytes);
    for bytes in &data {
        // The inputs must be accepted by both parsers and fit the default bounds.
        parse(bytes, &Limits::DEFAULT).expect("benchmark input must parse");
        serde_json::from_slice::<serde_json::Value>(bytes).expect("serde_json must parse it");
    }
    data
});

fn input(name: &str) -> &'static [u8] {
    &DATA[INPUTS.iter().position(|n| *n == name).unwrap()]
}

mod parse_bytes {
    use super::*;

    #[divan::bench(args = INPUTS)]
    fn strict(bencher: Bencher<'_, '_>, name: &str) {
        let bytes = input(name);
        bencher
            .counter(BytesCount::new(bytes.len()))
            .bench(|| parse(divan::black_box(bytes), &Limits::DEFAULT).unwrap());
    }

    #[divan::bench(args = INPUTS)]
    fn serde_json_value(bencher: Bencher<'_, '_>, name: &str) {
        let bytes = input(name);
        bencher.counter(BytesCount::new(bytes.len())).bench(|| {
            serde_json::from_slice::<serde_json::Value>(divan::black_box(bytes)).unwrap()
        });
    }
}

mod encode_value {
    use super::*;

    #[divan::bench(args = INPUTS)]
    fn strict(bencher: Bencher<'_, '_>, name: &str) {
        let bytes = input(name);
        let value: Value = parse(bytes, &Limits::DEFAULT).unwrap();
        bencher
            .counter(BytesCount::new(bytes.len()))
            .bench(|| encode(divan::black_box(&value), &Limits::DEFAULT).unwrap());
    }

    #[divan::bench(args = INPUTS)]
    fn serde_json_value(bencher: Bencher<'_, '_>, name: &str) {
        let bytes = input(name);
        let value: serde_json::Value = serde_json::from_slice(bytes).unwrap();
        bencher
            .counter(BytesCount::new(bytes.len()))
            .bench(|| serde_json::to_vec(divan::black_box(&value)).unwrap());
    }
}
