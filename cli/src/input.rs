//! Action input from the command line: `--input-json J` or `--input-file F` (`-` = stdin),
//! parsed strictly with the default bounds before anything is sent.

use std::io::Read;
use std::path::{Path, PathBuf};

use clap::Args;
use jfgui_proto::{JsonErrorKind, Limits, Value};

use crate::exit::Failure;

/// The input options shared by `call`, `batch`, `inspect` and `render`; each of them says what
/// its input is (`mut_arg` in `cmd.rs`).
#[derive(Debug, Clone, Args)]
pub struct InputArgs {
    /// The input as JSON text.
    #[arg(long, value_name = "JSON", conflicts_with = "input_file")]
    pub input_json: Option<String>,
    /// Read that JSON from a file, or from stdin with `-`.
    #[arg(long, value_name = "FILE")]
    pub input_file: Option<PathBuf>,
}

impl InputArgs {
    /// The parsed input, if one was given.
    pub fn read(&self) -> Result<Option<Value>, Failure> {
        if let Some(text) = &self.input_json {
            return parse(text.as_bytes(), "--input-json").map(Some);
        }
        let Some(path) = &self.input_file else {
            return Ok(None);
        };
        let bytes = read_bounded(path)?;
        parse(&bytes, &format!("--input-file {}", path.display())).map(Some)
    }
}

fn parse(bytes: &[u8], origin: &str) -> Result<Value, Failure> {
    let limits = Limits::DEFAULT;
    jfgui_proto::parse(bytes, &limits).map_err(|e| {
        let bound = bound(e.kind(), &limits).map(|b| format!(" ({b})")).unwrap_or_default();
        Failure::usage(
            "invalid_input_json",
            format!("{origin} is not valid strict JSON: {e}{bound}"),
        )
    })
}

/// The bound a refused input crossed, stated so the user knows how far to cut (the parser's
/// error names only the kind and the offset).
fn bound(kind: JsonErrorKind, limits: &Limits) -> Option<String> {
    Some(match kind {
        JsonErrorKind::TooLarge => format!("the limit is {} bytes per message", limits.max_bytes),
        JsonErrorKind::TooDeep => format!("the limit is {} nesting levels", limits.max_depth),
        JsonErrorKind::TooManyValues => format!("the limit is {} values", limits.max_values),
        JsonErrorKind::TooManyMembers => {
            format!("the limit is {} members per array or object", limits.max_members)
        }
        JsonErrorKind::StringTooLong => {
            format!("the limit is {} bytes per string, after unescaping", limits.max_string_bytes)
        }
        _ => return None,
    })
}

/// Reads at most one byte more than the message bound, so a huge file is refused, not loaded.
fn read_bounded(path: &Path) -> Result<Vec<u8>, Failure> {
    let max = Limits::DEFAULT.max_bytes as u64;
    let mut bytes = Vec::new();
    let read = if path == Path::new("-") {
        std::io::stdin().lock().take(max + 1).read_to_end(&mut bytes)
    } else {
        std::fs::File::open(path).and_then(|f| f.take(max + 1).read_to_end(&mut bytes))
    };
    let shown =
        if path == Path::new("-") { String::from("stdin") } else { path.display().to_string() };
    read.map_err(|e| {
        Failure::usage("input_file_unreadable", format!("cannot read --input-file {shown}: {e}"))
    })?;
    if bytes.len() as u64 > max {
        return Err(Failure::usage(
            "too_large",
            format!("--input-file {shown} is larger than the {max}-byte message limit"),
        ));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(json: Option<&str>, file: Option<&str>) -> InputArgs {
        InputArgs { input_json: json.map(String::from), input_file: file.map(PathBuf::from) }
    }

    #[test]
    fn inline_json_is_parsed_strictly() {
        assert!(args(None, None).read().unwrap().is_none());
        let v = args(Some(r#"{"text":"hi"}"#), None).read().unwrap().unwrap();
        assert_eq!(v.get("text").and_then(Value::as_str), Some("hi"));
        for bad in ["{", r#"{"a":1,"a":2}"#, "", "{'a':1}"] {
            let e = args(Some(bad), None).read().unwrap_err();
            assert_eq!(
                (e.exit, e.reason.as_str()),
                (crate::exit::Exit::Usage, "invalid_input_json"),
                "{bad}"
            );
        }
    }

    #[test]
    fn a_crossed_bound_is_stated() {
        let long = format!(r#"{{"text":"{}"}}"#, "a".repeat(Limits::DEFAULT.max_string_bytes + 1));
        let e = args(Some(&long), None).read().unwrap_err();
        assert!(e.message.contains("262144 bytes per string"), "{}", e.message);
        let deep = format!("{}{}", "[".repeat(40), "]".repeat(40));
        let e = args(Some(&deep), None).read().unwrap_err();
        assert!(e.message.contains("32 nesting levels"), "{}", e.message);
    }

    #[test]
    fn files_are_read_bounded_and_missing_ones_are_usage_errors() {
        let dir = std::env::temp_dir().join(format!("jfgui-cli-input-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let good = dir.join("good.json");
        std::fs::write(&good, br#"{"n":12}"#).unwrap();
        let v = args(None, Some(good.to_str().unwrap())).read().unwrap().unwrap();
        assert_eq!(v.get("n").and_then(Value::as_u64), Some(12));
        let big = dir.join("big.json");
        std::fs::write(&big, vec![b' '; Limits::DEFAULT.max_bytes + 10]).unwrap();
        assert_eq!(args(None, Some(big.to_str().unwrap())).read().unwrap_err().reason, "too_large");
        let e = args(None, Some(dir.join("missing.json").to_str().unwrap())).read().unwrap_err();
        assert_eq!(e.reason, "input_file_unreadable");
        assert!(e.message.contains("missing.json"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
