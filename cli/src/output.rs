//! Output: JSON (one compact line, for scripts) or text (for people), the stdout rules (a closed
//! stdout ends the program quietly) and the one-line stderr report of a failure. Progress bars
//! (stderr, terminals only) live in [`progress`].

pub mod progress;

use std::io::{self, IsTerminal, Write};

use jfgui_proto::{Limits, Value};

use crate::exit::{Exit, Failure};

/// How a subcommand prints its result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Text for people.
    Human,
    /// One compact JSON value per line.
    Json,
}

impl Format {
    /// `--json` always means JSON; `piped_json` commands (`call`, `inspect`) also print JSON
    /// whenever stdout is not a terminal, so scripts never parse text.
    pub fn choose(json: bool, piped_json: bool) -> Format {
        if json || (piped_json && !io::stdout().is_terminal()) {
            Format::Json
        } else {
            Format::Human
        }
    }
}

/// The failure used when stdout has been closed by its reader: exit quietly with success, as
/// `head` users expect.
pub fn stdout_closed() -> Failure {
    Failure::new(Exit::Ok, "stdout_closed", "stdout was closed by its reader")
}

/// Writes `text` to stdout and flushes.
pub fn write_stdout(text: &[u8]) -> Result<(), Failure> {
    let mut out = io::stdout().lock();
    out.write_all(text).and_then(|()| out.flush()).map_err(|e| match e.kind() {
        io::ErrorKind::BrokenPipe => stdout_closed(),
        _ => Failure::new(Exit::Usage, "stdout_error", format!("cannot write to stdout: {e}")),
    })
}

/// Prints `value` as one line of compact JSON.
pub fn print_json(value: &Value) -> Result<(), Failure> {
    let mut line = encode(value)?;
    line.push(b'\n');
    write_stdout(&line)
}

/// Prints text followed by a newline.
pub fn print_text(text: &str) -> Result<(), Failure> {
    let mut line = String::with_capacity(text.len() + 1);
    line.push_str(text);
    if !line.ends_with('\n') {
        line.push('\n');
    }
    write_stdout(line.as_bytes())
}

fn encode(value: &Value) -> Result<Vec<u8>, Failure> {
    jfgui_proto::encode(value, &Limits::DEFAULT).map_err(|e| {
        Failure::new(Exit::Protocol, e.kind().as_str(), format!("cannot encode the answer: {e}"))
    })
}

/// `value` as indented JSON for people (number tokens and string escapes exactly as the strict
/// encoder writes them).
pub fn pretty(value: &Value) -> String {
    let mut out = String::new();
    pretty_into(value, 0, &mut out);
    out
}

fn pretty_into(value: &Value, indent: usize, out: &mut String) {
    let pad = |n: usize, out: &mut String| out.extend(std::iter::repeat_n("  ", n));
    match value {
        Value::Array(items) if !items.is_empty() => {
            out.push_str("[\n");
            for (i, item) in items.iter().enumerate() {
                pad(indent + 1, out);
                pretty_into(item, indent + 1, out);
                out.push_str(if i + 1 < items.len() { ",\n" } else { "\n" });
            }
            pad(indent, out);
            out.push(']');
        }
        Value::Object(map) if !map.is_empty() => {
            out.push_str("{\n");
            for (i, (key, item)) in map.iter().enumerate() {
                pad(indent + 1, out);
                out.push_str(&compact(&Value::from(key)));
                out.push_str(": ");
                pretty_into(item, indent + 1, out);
                out.push_str(if i + 1 < map.len() { ",\n" } else { "\n" });
            }
            pad(indent, out);
            out.push('}');
        }
        other => out.push_str(&compact(other)),
    }
}

/// `value` as one line of compact JSON through the strict encoder; a value it refuses (only
/// possible beyond the bounds, which nothing that came through the parser exceeds) is shown by
/// its type.
pub fn compact(value: &Value) -> String {
    match jfgui_proto::encode(value, &Limits::DEFAULT) {
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(_) => format!("<{} too large to show>", value.type_name()),
    }
}

/// Reports `failure`: one line on stderr (reason included), and under JSON output also the
/// error object on stdout so scripts see it where they read results.
pub fn report(failure: &Failure, format: Format) {
    if failure.exit == Exit::Ok {
        return;
    }
    if format == Format::Json && !failure.result_printed {
        // A closed stdout must not hide the stderr line below.
        let _ = print_json(&failure.to_json());
    }
    let _ = writeln!(io::stderr().lock(), "jfgui-agent: {failure}");
}

/// Pads `rows` into aligned columns (the last column is not padded).
pub fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    let header: Vec<String> = header.iter().map(|h| h.to_string()).collect();
    for row in std::iter::once(&header).chain(rows) {
        let last = row.len().saturating_sub(1);
        for (i, cell) in row.iter().enumerate() {
            out.push_str(cell);
            if i < last {
                let fill = widths[i] - cell.chars().count() + 2;
                out.extend(std::iter::repeat_n(' ', fill));
            }
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use jfgui_proto::Map;

    #[test]
    fn pretty_indents_and_keeps_tokens() {
        let v =
            jfgui_proto::parse(br#"{"a":[1.0,"x\ny"],"b":{},"c":[]}"#, &Limits::DEFAULT).unwrap();
        assert_eq!(
            pretty(&v),
            "{\n  \"a\": [\n    1.0,\n    \"x\\ny\"\n  ],\n  \"b\": {},\n  \"c\": []\n}"
        );
    }

    #[test]
    fn table_aligns_columns() {
        let t = table(&["SLUG", "NAME"], &[vec!["notepad".into(), "Notepad".into()]]);
        assert_eq!(t, "SLUG     NAME\nnotepad  Notepad\n");
    }

    #[test]
    fn json_error_shape_has_reason_and_exit_code() {
        let f = Failure::new(Exit::NotFound, "endpoint_not_found", "no such endpoint");
        let v = f.to_json();
        let mut data = Map::new();
        data.insert("reason", "endpoint_not_found");
        assert_eq!(v.get("error").and_then(|e| e.get("data")), Some(&Value::Object(data)));
    }
}
