//! The raw two-hop relay, the floor of any relay: client → relay → echo server → back, the
//! same newline-framed lines as the daemon path (the request line out, the daemon's own reply
//! line back), no parsing. The relay is a child process (`middle.rs`) with two threads per
//! client connection and its own upstream connection each; the echo server is a thread of the
//! bench that answers every line with the fixed reply.

use std::io::{self, BufRead, BufReader, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::thread;

use crate::line::{LineConn, Template};
use crate::load::{Client, Target};
use crate::middle::Relay;

/// Child side: relays every accepted connection to its own connection to `upstream`.
pub fn relay(listen: &Path, upstream: &Path) {
    let listener = UnixListener::bind(listen).expect("bind the raw relay");
    for stream in listener.incoming() {
        let Ok(client) = stream else { continue };
        let Ok(up) = UnixStream::connect(upstream) else { continue };
        let (Ok(c2), Ok(u2)) = (client.try_clone(), up.try_clone()) else { continue };
        thread::spawn(move || pump(client, up));
        thread::spawn(move || pump(u2, c2));
    }
}

/// Copies complete lines from `from` to `to` until EOF.
fn pump(from: UnixStream, mut to: UnixStream) {
    let mut r = BufReader::new(from);
    let mut line = Vec::new();
    while r.read_until(b'\n', &mut line).is_ok_and(|n| n > 0) {
        if to.write_all(&line).is_err() {
            return;
        }
        line.clear();
    }
    let _ = to.shutdown(std::net::Shutdown::Write);
}

/// Answers every line of every connection to `path` with `reply` (newline included).
fn echo_server(path: &Path, reply: Arc<String>) {
    let listener = UnixListener::bind(path).expect("bind the echo server");
    thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            let reply = Arc::clone(&reply);
            thread::spawn(move || {
                let Ok(mut w) = stream.try_clone() else { return };
                let mut r = BufReader::new(stream);
                let mut line = Vec::new();
                while r.read_until(b'\n', &mut line).is_ok_and(|n| n > 0) {
                    if w.write_all(reply.as_bytes()).is_err() {
                        return;
                    }
                    line.clear();
                }
            });
        }
    });
}

/// The raw relay path answering with `reply` (one line, without newline).
pub struct Raw {
    relay: Relay,
    request: Template,
    reply: Arc<String>,
}

impl Raw {
    /// Starts the echo server and the relay child in `dir`; `tag` names their sockets.
    pub fn start(dir: &Path, tag: &str, request: Template, reply: String) -> Raw {
        let echo: PathBuf = dir.join(format!("echo-{tag}.sock"));
        echo_server(&echo, Arc::new(format!("{reply}\n")));
        let relay = Relay::start("raw", dir, &format!("raw-{tag}"), &echo);
        Raw { relay, request, reply: Arc::new(reply) }
    }
}

impl Target for Raw {
    fn connect(&self) -> io::Result<Box<dyn Client>> {
        Ok(Box::new(RawClient {
            conn: LineConn::unix(&self.relay.listen)?,
            request: self.request.clone(),
            reply: Arc::clone(&self.reply),
        }))
    }

    fn middle_pids(&self) -> Vec<u32> {
        vec![self.relay.pid()]
    }

    fn allocations(&self) -> Option<u64> {
        self.relay.allocations()
    }
}

struct RawClient {
    conn: LineConn<UnixStream, UnixStream>,
    request: Template,
    reply: Arc<String>,
}

impl Client for RawClient {
    fn roundtrip(&mut self, id: u64) -> io::Result<()> {
        self.conn.exchange(&self.request, id)
    }

    /// The echo server's reply is fixed (it carries the id of the call it was captured from).
    fn check(&self, _id: u64) -> Result<(), String> {
        if self.conn.reply == *self.reply {
            Ok(())
        } else {
            Err(format!("got {}\n  want {}", self.conn.reply, self.reply))
        }
    }
}
