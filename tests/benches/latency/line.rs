//! Newline-framed JSON-RPC lines as every line path of the bench sends and checks them: a
//! request or reply split around its id (so a call builds its request and checks its reply
//! without parsing or allocating), and a connection that exchanges one line for one line over
//! a Unix socket or a child's stdio.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;

use jfgui_tests::PATIENCE;

use crate::load::Client;

/// The id a [`Template`] is cut at: digits that occur nowhere else in a bench line.
const SENTINEL: u64 = 987_654_321;

/// A line with its JSON-RPC id cut out: `head` ID `tail`.
#[derive(Debug, Clone)]
pub struct Template {
    head: String,
    tail: String,
}

impl Template {
    /// Splits `line`, which carries the id [`SENTINEL`] once (built by `with_id`).
    pub fn new(with_id: impl Fn(u64) -> String) -> Template {
        let line = with_id(SENTINEL);
        let digits = SENTINEL.to_string();
        let at = line.find(&digits).expect("the sentinel id is in the line");
        assert_eq!(line.matches(&digits).count(), 1, "the sentinel id occurs once: {line}");
        Template { head: line[..at].to_string(), tail: line[at + digits.len()..].to_string() }
    }

    /// Writes the line for `id` (without newline) into `out`, replacing what it held.
    pub fn write(&self, id: u64, out: &mut Vec<u8>) {
        out.clear();
        out.extend_from_slice(self.head.as_bytes());
        write!(out, "{id}").expect("write to a Vec");
        out.extend_from_slice(self.tail.as_bytes());
    }

    /// Whether `line` (without newline) is exactly this template with `id`.
    pub fn matches(&self, line: &str, id: u64) -> bool {
        line.len() > self.head.len() + self.tail.len()
            && line.starts_with(&self.head)
            && line.ends_with(&self.tail)
            && line[self.head.len()..line.len() - self.tail.len()].parse() == Ok(id)
    }

    /// The line for `id`, for messages.
    pub fn line(&self, id: u64) -> String {
        format!("{}{id}{}", self.head, self.tail)
    }
}

/// One line out, one line back, over any byte stream pair.
#[derive(Debug)]
pub struct LineConn<R, W> {
    reader: BufReader<R>,
    writer: W,
    out: Vec<u8>,
    /// The last reply, without its newline.
    pub reply: String,
}

impl LineConn<UnixStream, UnixStream> {
    /// Connects to the Unix socket `path`.
    pub fn unix(path: &Path) -> io::Result<Self> {
        let stream = UnixStream::connect(path)?;
        stream.set_read_timeout(Some(PATIENCE))?;
        stream.set_write_timeout(Some(PATIENCE))?;
        Ok(LineConn::new(stream.try_clone()?, stream))
    }
}

impl<R: Read, W: Write> LineConn<R, W> {
    /// A connection reading `reader`, writing `writer`.
    pub fn new(reader: R, writer: W) -> Self {
        LineConn {
            reader: BufReader::with_capacity(64 * 1024, reader),
            writer,
            out: Vec::with_capacity(512),
            reply: String::with_capacity(8 * 1024),
        }
    }

    /// Sends `request` with `id` (one write, newline included) and reads the reply line into
    /// [`LineConn::reply`].
    pub fn exchange(&mut self, request: &Template, id: u64) -> io::Result<()> {
        request.write(id, &mut self.out);
        self.out.push(b'\n');
        self.writer.write_all(&self.out)?;
        self.writer.flush()?;
        self.read_reply()
    }

    /// Sends one raw line (a notification) without waiting for anything.
    pub fn send(&mut self, line: &str) -> io::Result<()> {
        self.out.clear();
        self.out.extend_from_slice(line.as_bytes());
        self.out.push(b'\n');
        self.writer.write_all(&self.out)?;
        self.writer.flush()
    }

    /// Reads one line into [`LineConn::reply`] (newline removed).
    pub fn read_reply(&mut self) -> io::Result<()> {
        self.reply.clear();
        if self.reader.read_line(&mut self.reply)? == 0 {
            return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "closed before the reply"));
        }
        if self.reply.ends_with('\n') {
            self.reply.pop();
        }
        Ok(())
    }

    /// Closes the writing side (the peer reads EOF) and hands back the reading side.
    pub fn close_writer(self) -> BufReader<R> {
        self.reader
    }

    /// Checks the last reply against `expected` for `id`.
    pub fn check(&self, expected: &Template, id: u64) -> Result<(), String> {
        if expected.matches(&self.reply, id) {
            Ok(())
        } else {
            Err(format!("reply to id {id}:\n  got  {}\n  want {}", self.reply, expected.line(id)))
        }
    }
}

/// A client on a Unix socket whose replies follow a template (the JSON relay's and the
/// daemon's JSON-1 clients).
pub struct UnixClient {
    conn: LineConn<UnixStream, UnixStream>,
    request: Template,
    reply: Template,
}

impl UnixClient {
    /// Connects to `path`; calls send `request` and expect `reply`.
    pub fn connect(path: &Path, request: &Template, reply: &Template) -> io::Result<UnixClient> {
        Ok(UnixClient {
            conn: LineConn::unix(path)?,
            request: request.clone(),
            reply: reply.clone(),
        })
    }
}

impl Client for UnixClient {
    fn roundtrip(&mut self, id: u64) -> io::Result<()> {
        self.conn.exchange(&self.request, id)
    }

    fn check(&self, id: u64) -> Result<(), String> {
        self.conn.check(&self.reply, id)
    }
}
