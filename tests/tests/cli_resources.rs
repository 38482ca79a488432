//! Resources, rendering and batches from the command line: `read ENDPOINT URI
//! [-o FILE]` byte for byte (Notepad's export at its largest, and a 1 MiB resource of the test
//! app), `render -o FILE.png` producing a PNG that decodes, the terminal rules, and `batch`
//! in order and atomically.

use std::path::{Path, PathBuf};

use jfgui_tests::cli::{Run, daemon_with_notepad, run_agent, run_agent_in_pty};
use jfgui_tests::{Daemon, PATIENCE, Proc, TempDir, TestApp, Watchdog, blob};
use serde_json::json;

fn run(rt: &Path, args: &[&str]) -> Run {
    let r = run_agent(rt, args, b"");
    r.assert_no_panic();
    r
}

fn run_with(rt: &Path, args: &[&str], stdin: &[u8]) -> Run {
    let r = run_agent(rt, args, stdin);
    r.assert_no_panic();
    r
}

struct World {
    dir: TempDir,
    rt: PathBuf,
    _daemon: Daemon,
    _app: Proc,
}

fn notepad_world(args: &[&str]) -> World {
    let dir = TempDir::new();
    let rt = dir.rt();
    let (daemon, app) = daemon_with_notepad(&rt, args);
    World { dir, rt, _daemon: daemon, _app: app }
}

/// A document of about 190 KB (Notepad keeps at most 192 KiB) mixing one-, two- and
/// three-byte characters and line breaks, so any re-encoding or lost chunk would show.
fn big_text() -> String {
    let words = ["plain", "déjà", "naïve", "✓ done", "Ελληνικά", "tab\there", "x"];
    let mut text = String::new();
    let mut i = 0usize;
    while text.len() < 190_000 {
        text.push_str(words[i % words.len()]);
        text.push(if i % 11 == 10 { '\n' } else { ' ' });
        i += 1;
    }
    text
}

#[test]
fn read_of_the_largest_export_is_byte_identical() {
    let _w = Watchdog::arm(PATIENCE * 4);
    let w = notepad_world(&["--export-ms", "300"]);
    let text = big_text();
    // Inserted in pieces within the action's 65536-character bound, each at the caret.
    let chars: Vec<char> = text.chars().collect();
    for piece in chars.chunks(60_000) {
        let input = json!({"text": piece.iter().collect::<String>()}).to_string();
        let r = run_with(
            &w.rt,
            &[
                "call",
                "notepad",
                "document.text.insert",
                "--input-file",
                "-",
                "--expected-revision",
                "auto",
            ],
            input.as_bytes(),
        );
        r.assert_code(0);
    }
    let r = run(
        &w.rt,
        &["call", "notepad", "document.export", "--expected-revision", "auto", "--wait"],
    );
    r.assert_code(0);
    assert_eq!(r.json()["task"]["result"]["size"], text.len(), "{}", r.stdout);

    let file = w.dir.path().join("document.txt");
    let r = run(&w.rt, &["read", "notepad", "export://document.txt", "-o", file.to_str().unwrap()]);
    r.assert_code(0);
    assert_eq!(
        r.stdout.trim(),
        format!(
            "wrote export://document.txt (text/plain; charset=utf-8, {} bytes) to {}",
            text.len(),
            file.display()
        )
    );
    assert!(r.stderr.is_empty(), "no progress bar when piped: {:?}", r.stderr);
    assert!(std::fs::read(&file).unwrap() == text.as_bytes(), "the file differs from the text");
    // Nothing else was left beside it (the temporary name was renamed).
    let names: Vec<_> =
        std::fs::read_dir(w.dir.path()).unwrap().flatten().map(|e| e.file_name()).collect();
    assert!(!names.iter().any(|n| n.to_string_lossy().contains(".part-")), "{names:?}");

    // To stdout (piped), the same bytes; --json summarises a file download.
    let r = run(&w.rt, &["read", "notepad", "export://document.txt"]);
    r.assert_code(0);
    assert!(r.stdout_bytes == text.as_bytes(), "stdout differs from the text");
    let again = w.dir.path().join("again.txt");
    let r = run(
        &w.rt,
        &["read", "notepad", "export://document.txt", "-o", again.to_str().unwrap(), "--json"],
    );
    r.assert_code(0);
    assert_eq!(
        r.json(),
        json!({"uri": "export://document.txt", "mimeType": "text/plain; charset=utf-8",
               "size": text.len(), "file": again.to_str().unwrap()})
    );
}

#[test]
fn read_of_a_1_mib_resource_is_byte_identical_with_progress_on_a_terminal_only() {
    let _w = Watchdog::arm(PATIENCE * 4);
    let dir = TempDir::new();
    let rt = dir.rt();
    let daemon = Daemon::start(&rt, &[]);
    let size = 1 << 20;
    let _app = TestApp::start(&rt, dir.path(), "Blob App", &["--blob", &size.to_string()]);
    daemon.wait_endpoint("blob-app");
    let expected = blob(size);

    let file = dir.path().join("data.bin");
    let r = run(&rt, &["read", "blob-app", "blob://data.bin", "-o", file.to_str().unwrap()]);
    r.assert_code(0);
    assert!(r.stderr.is_empty(), "no progress bar when piped: {:?}", r.stderr);
    assert!(std::fs::read(&file).unwrap() == expected, "the 1 MiB download differs");

    let shown = dir.path().join("shown.bin");
    let r = run_agent_in_pty(
        &rt,
        &["read", "blob-app", "blob://data.bin", "-o", shown.to_str().unwrap()],
    );
    r.assert_no_panic().assert_code(0);
    assert!(r.stdout.contains("blob://data.bin ["), "no progress bar: {:?}", r.stdout);
    assert!(r.stdout.contains("1.00 MiB"), "no byte count: {:?}", r.stdout);
    assert!(std::fs::read(&shown).unwrap() == expected, "the download under a pty differs");

    // A binary resource is not written to a terminal; nothing is.
    let r = run_agent_in_pty(&rt, &["read", "blob-app", "blob://data.bin"]);
    r.assert_code(2);
    assert!(r.stdout.contains("error[binary_to_terminal]"), "{:?}", r.stdout);
    assert!(r.stdout.len() < 400, "bytes reached the terminal: {} bytes", r.stdout.len());
}

#[test]
fn read_errors_leave_no_file_behind() {
    let _w = Watchdog::arm(PATIENCE * 3);
    let w = notepad_world(&[]);
    let file = w.dir.path().join("x.txt");
    let f = file.to_str().unwrap();
    // Nothing exported yet: not found, exit 1, no file.
    let r = run(&w.rt, &["read", "notepad", "export://document.txt", "-o", f, "--json"]);
    r.assert_error(1, "resource");
    assert_eq!(r.json()["error"]["code"], 1004);
    assert!(!file.exists());
    // The message names the resource.
    let r = run(&w.rt, &["read", "notepad", "export://document.txt"]);
    r.assert_error(1, "resource");
    assert!(r.stderr.contains("export://document.txt"), "{}", r.stderr);
    // A directory that does not exist.
    let missing = w.dir.path().join("no/such/dir/view.png");
    let r = run(&w.rt, &["render", "notepad", "-o", missing.to_str().unwrap()]);
    r.assert_error(2, "output_failed");
    // --json needs -o (stdout would carry the bytes).
    let r = run(&w.rt, &["read", "notepad", "export://document.txt", "--json"]);
    r.assert_code(2);
    assert_eq!(r.json()["exitCode"], 2);
}

#[test]
fn text_without_a_final_newline_gets_one_on_a_terminal_only() {
    let _w = Watchdog::arm(PATIENCE * 3);
    let w = notepad_world(&["--export-ms", "50", "--text", "no newline"]);
    run(&w.rt, &["call", "notepad", "document.export", "--expected-revision", "auto", "--wait"])
        .assert_code(0);
    let piped = run(&w.rt, &["read", "notepad", "export://document.txt"]);
    piped.assert_code(0);
    assert_eq!(piped.stdout, "no newline");
    assert!(piped.stderr.is_empty(), "{}", piped.stderr);
    let shown = run_agent_in_pty(&w.rt, &["read", "notepad", "export://document.txt"]);
    shown.assert_code(0);
    assert!(
        shown.stdout.contains("no newline\r\n(no newline at the end of the resource)"),
        "{:?}",
        shown.stdout
    );
}

#[test]
fn render_writes_a_png_that_decodes() {
    let _w = Watchdog::arm(PATIENCE * 3);
    let w = notepad_world(&["--text", "Hello, render!\nsecond line"]);
    let file = w.dir.path().join("view.png");
    let r = run(&w.rt, &["render", "notepad", "-o", file.to_str().unwrap(), "--json"]);
    r.assert_code(0);
    let j = r.json();
    assert_eq!(j["output"]["uri"], "render://view.png", "{j}");
    assert_eq!(j["output"]["mimeType"], "image/png", "{j}");
    assert_eq!(j["file"], file.to_str().unwrap());
    let bytes = std::fs::read(&file).unwrap();
    assert_eq!(bytes.len() as u64, j["output"]["size"].as_u64().unwrap());
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "PNG signature");
    let decoder = png::Decoder::new(std::io::Cursor::new(&bytes));
    let mut reader = decoder.read_info().expect("a PNG header");
    let mut pixels = vec![0; reader.output_buffer_size().expect("a bounded image")];
    let frame = reader.next_frame(&mut pixels).expect("PNG data that decodes");
    assert_eq!(u64::from(frame.width), j["output"]["width"].as_u64().unwrap());
    assert_eq!(u64::from(frame.height), j["output"]["height"].as_u64().unwrap());
    // Some ink on white: the text was drawn.
    let drawn = &pixels[..frame.buffer_size()];
    assert!(drawn.iter().any(|&p| p < 0x80) && drawn.contains(&0xFF));

    // Piped stdout gets the same image; a terminal gets an error instead of bytes.
    let r = run_agent(&w.rt, &["render", "notepad"], b"");
    r.assert_code(0);
    assert!(r.stdout_bytes == bytes, "stdout is not the same PNG");
    let r = run_agent_in_pty(&w.rt, &["render", "notepad"]);
    r.assert_code(2);
    assert!(r.stdout.contains("error[binary_to_terminal]"), "{:?}", r.stdout);
}

/// The document's text and undo depth.
fn state(rt: &Path) -> serde_json::Value {
    run(rt, &["inspect", "notepad"]).json()
}

#[test]
fn batches_run_in_order_or_all_or_nothing() {
    let _w = Watchdog::arm(PATIENCE * 3);
    let w = notepad_world(&["--text", "ab"]);
    let start = state(&w.rt);
    let rev = start["revision"].as_u64().unwrap();

    // In order: the second call fails, so the third is not attempted (stopOnError).
    let calls = json!([
        {"action": "document.text.insert", "input": {"text": "1"}, "expectedRevision": rev},
        {"action": "no.such.action"},
        {"action": "document.get"}
    ])
    .to_string();
    let r = run_with(&w.rt, &["batch", "notepad", "--input-file", "-"], calls.as_bytes());
    r.assert_error(1, "unknown_action");
    assert!(r.stderr.contains("call 1 failed"), "{}", r.stderr);
    let j = r.json();
    let results = j["results"].as_array().unwrap();
    assert_eq!(results.len(), 2, "{j}");
    assert!(results[0]["output"].is_object() && results[1]["error"].is_object(), "{j}");
    let after = state(&w.rt);
    assert_eq!(after["state"]["text"], "ab1");

    // --keep-going attempts every call.
    let rev = after["revision"].as_u64().unwrap();
    let calls = json!([
        {"action": "no.such.action"},
        {"action": "document.text.insert", "input": {"text": "2"}, "expectedRevision": rev}
    ])
    .to_string();
    let r = run_with(&w.rt, &["batch", "notepad", "--input-json", &calls, "--keep-going"], b"");
    r.assert_error(1, "unknown_action");
    assert_eq!(r.json()["results"].as_array().unwrap().len(), 2);
    assert_eq!(state(&w.rt)["state"]["text"], "ab12");

    // Atomic and valid: both happen as one undoable change.
    let before = state(&w.rt);
    let rev = before["revision"].as_u64().unwrap();
    let calls = json!([
        {"action": "document.text.insert", "input": {"text": "X"}, "expectedRevision": rev},
        {"action": "document.text.insert", "input": {"text": "Y"}, "expectedRevision": rev}
    ]);
    let file = w.dir.path().join("calls.json");
    std::fs::write(&file, calls.to_string()).unwrap();
    let r = run(&w.rt, &["batch", "notepad", "--input-file", file.to_str().unwrap(), "--atomic"]);
    r.assert_code(0);
    assert_eq!(r.json()["results"].as_array().unwrap().len(), 2);
    let after = state(&w.rt);
    assert_eq!(after["state"]["text"], "ab12XY");
    assert_eq!(after["state"]["undoDepth"], before["state"]["undoDepth"].as_u64().unwrap() + 1);

    // Atomic with a bad call: one error naming it, and nothing happened.
    let rev = after["revision"].as_u64().unwrap();
    let calls = json!({"calls": [
        {"action": "document.text.insert", "input": {"text": "Z"}, "expectedRevision": rev},
        {"action": "no.such.action"}
    ]})
    .to_string();
    let r =
        run_with(&w.rt, &["batch", "notepad", "--input-json", &calls, "--atomic", "--json"], b"");
    r.assert_error(1, "batch_preflight");
    assert!(r.stderr.contains("call 1: "), "{}", r.stderr);
    assert_eq!(r.json()["error"]["data"]["index"], 1);
    assert_eq!(state(&w.rt), after, "an atomic batch that failed changed nothing");

    // Input that is not a batch is a usage error before anything is sent.
    run(&w.rt, &["batch", "notepad", "--input-json", "{\"a\":1}"]).assert_error(2, "invalid_batch");
    run(&w.rt, &["batch", "notepad"]).assert_error(2, "missing_argument");
    run(&w.rt, &["batch", "notepad", "--atomic", "--keep-going", "--input-json", "[]"])
        .assert_error(2, "conflicting_arguments");
}
