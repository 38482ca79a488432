//! `jfgui-agent read ENDPOINT URI [-o FILE]`: a resource of the app, read in chunks
//! (`resources/read`, at most 64 KiB each), decoded and written as raw bytes to FILE or
//! stdout, with a byte progress bar on a terminal for a resource of more than one chunk.
//! [`download`] is shared with `render`.

use std::fs::File;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

use base64::Engine as _;
use clap::Args;
use jfgui_proto::{Map, Value};

use super::completions::candidates;
use super::{Context, daemon};
use crate::client::Client;
use crate::endpoint;
use crate::exit::{Exit, Failure};
use crate::output::progress::Progress;
use crate::output::{Format, print_json, print_text, write_stdout};

/// Shown after `read --help`.
pub const AFTER_HELP: &str = "\
URI is the app's own resource identifier, never a file path (e.g. export://document.txt after
a completed document.export). The bytes go to FILE (written whole, then renamed into place:
a failed read leaves no partial file) or to stdout; a binary resource is not written to a
terminal. A resource of more than one chunk (64 KiB) shows a progress bar on stderr when
stderr is a terminal.

Examples:
  jfgui-agent call notepad document.export --expected-revision auto --wait
  jfgui-agent read notepad export://document.txt
  jfgui-agent read notepad export://document.txt -o document.txt";

/// Arguments of `read`.
#[derive(Debug, Args)]
pub struct ReadArgs {
    /// The app: slug, exact display name, or unique slug prefix.
    #[arg(add = candidates::endpoints())]
    pub endpoint: String,
    /// The resource, e.g. `export://document.txt`.
    pub uri: String,
    /// Write the bytes to FILE instead of stdout.
    #[arg(short = 'o', long = "output", value_name = "FILE", value_hint = clap::ValueHint::FilePath)]
    pub output: Option<PathBuf>,
    /// Print a JSON summary (uri, mimeType, size, file) instead of text; errors too. Needs
    /// -o, since stdout otherwise carries the bytes.
    #[arg(long, requires = "output")]
    pub json: bool,
}

/// Reads the resource into the file or stdout.
pub async fn run(args: ReadArgs, ctx: Context, format: Format) -> Result<(), Failure> {
    let daemon = daemon()?;
    let mut client = endpoint::client(&daemon, &args.endpoint, ctx.timeout, ctx.activate).await?;
    let got = download(&mut client, &args.uri, args.output.as_deref()).await?;
    let Some(file) = &args.output else { return Ok(()) };
    if format == Format::Json {
        let mut out = Map::new();
        out.insert("uri", args.uri.as_str());
        out.insert("mimeType", got.mime_type.as_str());
        out.insert("size", got.size);
        out.insert("file", file.to_string_lossy().as_ref());
        return print_json(&Value::Object(out));
    }
    print_text(&got.summary(&args.uri, file))
}

/// What a download wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Downloaded {
    /// The resource's MIME type, as the app reported it.
    pub mime_type: String,
    /// Bytes written.
    pub size: u64,
}

impl Downloaded {
    /// The line printed after writing to `file`.
    pub fn summary(&self, uri: &str, file: &Path) -> String {
        format!("wrote {uri} ({}, {} bytes) to {}", self.mime_type, self.size, file.display())
    }
}

/// Reads `uri` chunk by chunk into `file` (or stdout) and checks that the chunks add up to the
/// size the app announced.
pub async fn download(
    client: &mut Client,
    uri: &str,
    file: Option<&Path>,
) -> Result<Downloaded, Failure> {
    let mut chunk = Chunk::read(client, uri, 0).await?;
    let (mime_type, total) = (chunk.mime_type.clone(), chunk.total);
    let mut sink = Sink::open(file, &mime_type, uri)?;
    let progress = if total > CHUNK { Some(Progress::bytes(uri, total)) } else { None };
    let mut offset = 0u64;
    loop {
        sink.write(&chunk.data)?;
        offset += chunk.data.len() as u64;
        if let Some(p) = &progress {
            p.advance(chunk.data.len() as u64);
        }
        if chunk.eof {
            break;
        }
        chunk = Chunk::read(client, uri, offset).await?;
        if chunk.total != total || chunk.mime_type != mime_type {
            return Err(malformed(uri, "changed while it was being read"));
        }
    }
    if offset != total {
        return Err(malformed(uri, &format!("ended after {offset} of {total} bytes")));
    }
    sink.commit()?;
    Ok(Downloaded { mime_type, size: total })
}

/// The largest chunk `resources/read` returns (64 KiB); a resource larger than this is
/// "large" and gets a progress bar.
const CHUNK: u64 = 65_536;

/// One decoded `resources/read` answer.
#[derive(Debug)]
struct Chunk {
    mime_type: String,
    total: u64,
    data: Vec<u8>,
    eof: bool,
}

impl Chunk {
    async fn read(client: &mut Client, uri: &str, offset: u64) -> Result<Chunk, Failure> {
        let mut params = Map::new();
        params.insert("uri", uri);
        params.insert("offset", offset);
        let answer = client.request("resources/read", params).await?;
        let field = |k: &str| answer.get(k).ok_or_else(|| malformed(uri, &format!("has no {k}")));
        let text = |k: &str| {
            field(k)?.as_str().ok_or_else(|| malformed(uri, &format!("has a non-string {k}")))
        };
        let number =
            |k: &str| field(k)?.as_u64().ok_or_else(|| malformed(uri, &format!("has a bad {k}")));
        if number("offset")? != offset {
            return Err(malformed(uri, &format!("answered another offset than {offset}")));
        }
        let data = base64::engine::general_purpose::STANDARD
            .decode(text("data")?)
            .map_err(|e| malformed(uri, &format!("has data that is not base64 ({e})")))?;
        let total = number("totalSize")?;
        let eof = field("eof")?.as_bool().ok_or_else(|| malformed(uri, "has a non-boolean eof"))?;
        if offset + data.len() as u64 > total {
            return Err(malformed(uri, &format!("sent more than its {total} bytes")));
        }
        if data.is_empty() && !eof {
            return Err(malformed(uri, &format!("sent an empty chunk at {offset} before its end")));
        }
        Ok(Chunk { mime_type: text("mimeType")?.to_string(), total, data, eof })
    }
}

fn malformed(uri: &str, what: &str) -> Failure {
    Failure::new(Exit::Protocol, "malformed_response", format!("resource {uri} {what}"))
}

/// Where the bytes go: stdout, or a temporary file beside FILE that is renamed over FILE once
/// everything arrived (and removed if anything fails).
#[derive(Debug)]
enum Sink {
    /// `last` is the last byte written, so that text without a final newline on a terminal
    /// does not leave the shell's prompt on its last line.
    Stdout {
        terminal: bool,
        last: Option<u8>,
    },
    File {
        part: PathBuf,
        target: PathBuf,
        file: Option<File>,
    },
}

impl Sink {
    fn open(file: Option<&Path>, mime_type: &str, uri: &str) -> Result<Sink, Failure> {
        let Some(target) = file else {
            let terminal = std::io::stdout().is_terminal();
            if terminal && !is_text(mime_type) {
                return Err(Failure::usage(
                    "binary_to_terminal",
                    format!(
                        "{uri} is {mime_type}, not text: write it to a file with -o FILE, or pipe it"
                    ),
                ));
            }
            return Ok(Sink::Stdout { terminal, last: None });
        };
        let name = target.file_name().ok_or_else(|| {
            Failure::usage("invalid_output", format!("-o {} names no file", target.display()))
        })?;
        let mut part_name = std::ffi::OsString::from(".");
        part_name.push(name);
        part_name.push(format!(".part-{}", std::process::id()));
        let part = target.with_file_name(part_name);
        let created = File::create_new(&part).map_err(|e| output_error(target, &e))?;
        Ok(Sink::File { part, target: target.to_path_buf(), file: Some(created) })
    }

    fn write(&mut self, bytes: &[u8]) -> Result<(), Failure> {
        match self {
            Sink::Stdout { last, .. } => {
                *last = bytes.last().copied().or(*last);
                write_stdout(bytes)
            }
            Sink::File { target, file: Some(file), .. } => {
                file.write_all(bytes).map_err(|e| output_error(target, &e))
            }
            Sink::File { file: None, .. } => Ok(()),
        }
    }

    fn commit(mut self) -> Result<(), Failure> {
        if let Sink::Stdout { terminal: true, last: Some(last) } = self
            && last != b'\n'
        {
            // On stderr, so stdout carries exactly the resource's bytes.
            eprintln!("\n(no newline at the end of the resource)");
        }
        let Sink::File { part, target, file } = &mut self else { return Ok(()) };
        let synced = file.take().map_or(Ok(()), |f| f.sync_all());
        synced
            .and_then(|()| std::fs::rename(&*part, &*target))
            .map_err(|e| output_error(target, &e))
    }
}

impl Drop for Sink {
    /// A download that did not commit leaves nothing behind (after a commit the temporary
    /// name is gone and this fails harmlessly).
    fn drop(&mut self) {
        if let Sink::File { part, .. } = self {
            let _ = std::fs::remove_file(part);
        }
    }
}

fn output_error(target: &Path, e: &std::io::Error) -> Failure {
    let exit =
        if e.kind() == std::io::ErrorKind::PermissionDenied { Exit::Refused } else { Exit::Usage };
    Failure::new(exit, "output_failed", format!("cannot write {}: {e}", target.display()))
}

/// Text a terminal can show.
fn is_text(mime_type: &str) -> bool {
    let essence = mime_type.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
    essence.starts_with("text/")
        || essence == "application/json"
        || essence.ends_with("+json")
        || essence.ends_with("+xml")
        || essence == "application/xml"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_types_are_told_from_binary_ones() {
        for text in ["text/plain; charset=utf-8", "application/json", "image/svg+xml", "TEXT/X"] {
            assert!(is_text(text), "{text}");
        }
        for binary in ["image/png", "application/octet-stream", ""] {
            assert!(!is_text(binary), "{binary}");
        }
    }

    #[test]
    fn a_file_appears_only_when_committed() {
        let dir = std::env::temp_dir().join(format!("jfgui-cli-sink-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let target = dir.join("out.bin");
        let mut sink = Sink::open(Some(&target), "image/png", "render://x").unwrap();
        sink.write(b"abc").unwrap();
        drop(sink);
        assert!(std::fs::read_dir(&dir).unwrap().next().is_none(), "nothing left behind");
        let mut sink = Sink::open(Some(&target), "image/png", "render://x").unwrap();
        sink.write(b"abc").unwrap();
        sink.commit().unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"abc");
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
