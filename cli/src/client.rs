//! A small JSON-RPC 2.0 line client over a `transport` connection: the control socket `agentd.sock`
//! and the per-app endpoint sockets (named pipes on Windows) speak the same framing (one
//! strict-JSON object per line). Every line in and out goes through `jfgui_proto::parse` / `encode`
//! with the default limits.

use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use jfgui_proto::locations::Refusal;
use jfgui_proto::{Limits, Map, Value};
use tokio::io::{AsyncWriteExt, BufReader};

use crate::exit::{Exit, Failure};
use crate::line::{Line, LineReader};
use crate::transport::{self, Reader, Writer};

/// Which kind of socket a client talks to; decides how a failed connect is reported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Peer {
    /// `agentd.sock`: missing means the daemon is not running.
    Control,
    /// `apps/SLUG.sock`: missing means the endpoint went away.
    Endpoint(String),
}

/// One open connection with a request counter.
pub struct Client {
    reader: LineReader<BufReader<Reader>>,
    writer: Writer,
    peer: Peer,
    next_id: u64,
    answered: bool,
    timeout: Duration,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("peer", &self.peer)
            .field("next_id", &self.next_id)
            .finish_non_exhaustive()
    }
}

/// Connects to `path`, mapping the OS error to the CLI's exit codes.
pub async fn connect_stream(path: &Path, peer: &Peer) -> Result<(Reader, Writer), Failure> {
    transport::connect(path).await.map_err(|e| connect_failure(path, peer, &e))
}

/// The failure for a connect error on `path`. A refusal by the client-side trust checks is exit 5
/// with the refusal's one line, which names the directory (path, owner uid, mode) or the listener's
/// uid.
pub fn connect_failure(path: &Path, peer: &Peer, e: &io::Error) -> Failure {
    if let Some(refusal) = Refusal::find(e) {
        let reason = match refusal {
            Refusal::Dir { .. } => "untrusted_runtime_dir",
            _ => "untrusted_peer",
        };
        return Failure::new(Exit::Refused, reason, refusal.to_string());
    }
    match (e.kind(), peer) {
        (io::ErrorKind::PermissionDenied, _) => Failure::new(
            Exit::Refused,
            "permission_denied",
            format!("cannot connect to {}: {e}", path.display()),
        ),
        (io::ErrorKind::NotFound | io::ErrorKind::ConnectionRefused, Peer::Control) => {
            Failure::new(Exit::Daemon, "daemon_not_running", transport::not_running(path))
        }
        (io::ErrorKind::NotFound | io::ErrorKind::ConnectionRefused, Peer::Endpoint(slug)) => {
            Failure::new(
                Exit::NotFound,
                "endpoint_not_found",
                format!("endpoint '{slug}' is gone (the app exited or was disabled)"),
            )
        }
        _ => Failure::new(
            Exit::Daemon,
            "connect_failed",
            format!("cannot connect to {}: {e}", path.display()),
        ),
    }
}

impl Client {
    /// Opens a connection to `path`; `timeout` bounds each request.
    pub async fn connect(path: PathBuf, peer: Peer, timeout: Duration) -> Result<Client, Failure> {
        let stream = connect_stream(&path, &peer).await?;
        Ok(Client::from_stream(stream, peer, timeout))
    }

    /// Wraps a connected stream.
    pub fn from_stream((read, writer): (Reader, Writer), peer: Peer, timeout: Duration) -> Client {
        Client {
            reader: LineReader::new(BufReader::new(read), Limits::DEFAULT.max_bytes),
            writer,
            peer,
            next_id: 1,
            answered: false,
            timeout,
        }
    }

    /// Every action of the endpoint (matching `query`), all pages of `actions/list` merged.
    pub async fn all_actions(&mut self, query: Option<&str>) -> Result<Vec<Value>, Failure> {
        let mut actions: Vec<Value> = Vec::new();
        let mut cursor: Option<Value> = None;
        for _ in 0..MAX_PAGES {
            let mut params = Map::new();
            if let Some(q) = query {
                params.insert("query", q);
            }
            if let Some(c) = cursor.take() {
                params.insert("cursor", c);
            }
            params.insert("limit", 100u64);
            let mut page = self.request("actions/list", params).await?;
            match page.remove("actions") {
                Some(Value::Array(items)) => actions.extend(items),
                _ => return Err(malformed("without an `actions` array")),
            }
            match page.remove("nextCursor") {
                None | Some(Value::Null) => return Ok(actions),
                Some(next) => cursor = Some(next),
            }
        }
        Err(malformed(&format!("more than {MAX_PAGES} pages")))
    }

    /// Sends one request and waits for its answer: the `result` object, or the failure the
    /// answer (or its absence) means.
    pub async fn request(&mut self, method: &str, params: Map) -> Result<Map, Failure> {
        let id = self.next_id;
        self.next_id += 1;
        let mut request = Map::new();
        request.insert("jsonrpc", "2.0");
        request.insert("id", id);
        request.insert("method", method);
        request.insert("params", params);
        let mut line =
            jfgui_proto::encode(&Value::Object(request), &Limits::DEFAULT).map_err(|e| {
                Failure::usage(
                    e.kind().as_str(),
                    format!("the request for {method} is too big to send: {e}"),
                )
            })?;
        line.push(b'\n');
        let mutating = matches!(method, "actions/execute" | "actions/batch");
        if let Err(e) = self.writer.write_all(&line).await {
            return Err(self.lost(method, false, true, &e.to_string()));
        }
        let answer = match tokio::time::timeout(self.timeout, self.reader.next()).await {
            Err(_) => {
                return Err(Failure::new(
                    Exit::OutcomeUnknown,
                    "timeout",
                    format!(
                        "no answer to {method} within {} s; the outcome is unknown: inspect the state before retrying",
                        self.timeout.as_secs()
                    ),
                ));
            }
            Ok(Err(e)) => {
                let unread = e.kind() == io::ErrorKind::ConnectionReset;
                return Err(self.lost(method, mutating, unread, &e.to_string()));
            }
            Ok(Ok(None)) => return Err(self.lost(method, mutating, false, "end of stream")),
            Ok(Ok(Some(Line::TooLong))) => {
                return Err(Failure::new(
                    Exit::Protocol,
                    "response_too_large",
                    format!("the answer to {method} exceeds {} bytes", Limits::DEFAULT.max_bytes),
                ));
            }
            Ok(Ok(Some(Line::Complete(bytes)))) => bytes,
        };
        self.answered = true;
        let value = jfgui_proto::parse(&answer, &Limits::DEFAULT).map_err(|e| {
            Failure::new(
                Exit::Protocol,
                "malformed_response",
                format!("the answer to {method} is not strict JSON: {e}"),
            )
        })?;
        interpret(&value, id, method)
    }

    /// The next notification's `params` (for a stream the daemon sends after answering, like
    /// `audit/follow`), without a time bound; `None` when the peer closes.
    pub async fn next_notification(&mut self) -> Result<Option<Map>, Failure> {
        let lost = |detail: &str| {
            Failure::new(Exit::Daemon, "connection_lost", format!("the stream ended: {detail}"))
        };
        loop {
            let bytes = match self.reader.next().await {
                Ok(Some(Line::Complete(bytes))) => bytes,
                Ok(Some(Line::TooLong)) => continue,
                Ok(None) => return Ok(None),
                Err(e) => return Err(lost(&e.to_string())),
            };
            let value = jfgui_proto::parse(&bytes, &Limits::DEFAULT).map_err(|e| {
                Failure::new(Exit::Protocol, "malformed_response", format!("not strict JSON: {e}"))
            })?;
            if let Some(Value::Object(params)) = value.get("params") {
                return Ok(Some(params.clone()));
            }
        }
    }

    /// Waits until the peer closes the connection (for `browser-bridge`, which holds its
    /// control connection open: the daemon keeps the bridge exactly as long).
    pub async fn closed(&mut self) {
        while let Ok(Some(_)) = self.reader.next().await {}
    }

    /// The failure for a connection that broke during `method`. `unread`: the peer closed
    /// without reading the request (the write failed, or the read was reset because the
    /// request was still queued), which is what the peer check does. A plain end of stream
    /// means the peer read the request and then went away: not a refusal.
    fn lost(&self, method: &str, mutating: bool, unread: bool, detail: &str) -> Failure {
        let whom = match &self.peer {
            Peer::Control => String::from("jfgui-agentd"),
            Peer::Endpoint(slug) => format!("endpoint '{slug}'"),
        };
        if !self.answered && unread {
            // A peer that refuses us (peer check) closes right after accept, before reading.
            Failure::new(
                Exit::Refused,
                "refused",
                format!(
                    "{whom} closed the connection before answering {method} ({detail}): refused by the daemon's peer check"
                ),
            )
        } else if mutating {
            Failure::new(
                Exit::OutcomeUnknown,
                "connection_lost",
                format!(
                    "the connection to {whom} was lost during {method} ({detail}); the outcome is unknown: inspect the state before retrying"
                ),
            )
        } else {
            Failure::new(
                Exit::Daemon,
                "connection_lost",
                format!("the connection to {whom} was lost during {method} ({detail})"),
            )
        }
    }
}

/// Checks that `value` is the JSON-RPC response to request `id` and returns its result.
fn interpret(value: &Value, id: u64, method: &str) -> Result<Map, Failure> {
    let malformed = |what: &str| {
        Failure::new(Exit::Protocol, "malformed_response", format!("the answer to {method} {what}"))
    };
    let Some(object) = value.as_object() else {
        return Err(malformed("is not a JSON object"));
    };
    if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err(malformed("is not JSON-RPC 2.0"));
    }
    if let Some(error) = object.get("error") {
        return Err(Failure::from_rpc_error(error));
    }
    if object.get("id").and_then(Value::as_u64) != Some(id) {
        return Err(malformed("answers a different request id"));
    }
    match object.get("result") {
        Some(Value::Object(result)) => Ok(result.clone()),
        _ => Err(malformed("has no result object")),
    }
}

/// Pages of `actions/list` fetched at most: 100 actions each, far more than any app registers;
/// a daemon that keeps returning cursors beyond this is broken, not large.
const MAX_PAGES: usize = 1000;

fn malformed(what: &str) -> Failure {
    Failure::new(Exit::Protocol, "malformed_response", format!("actions/list answered {what}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Value {
        jfgui_proto::parse(s.as_bytes(), &Limits::DEFAULT).unwrap()
    }

    #[test]
    fn results_errors_and_garbage_are_told_apart() {
        let ok = interpret(&parse(r#"{"jsonrpc":"2.0","id":3,"result":{"a":1}}"#), 3, "m").unwrap();
        assert_eq!(ok.get("a").and_then(Value::as_u64), Some(1));
        let e = interpret(
            &parse(r#"{"jsonrpc":"2.0","id":3,"error":{"code":1004,"message":"no","data":{"reason":"action"}}}"#),
            3,
            "m",
        )
        .unwrap_err();
        assert_eq!((e.exit, e.reason.as_str()), (Exit::Action, "action"));
        for bad in [
            r#"[]"#,
            r#"{"id":3,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":4,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":3,"result":1}"#,
        ] {
            assert_eq!(interpret(&parse(bad), 3, "m").unwrap_err().exit, Exit::Protocol, "{bad}");
        }
    }

    #[test]
    fn connect_errors_map_to_exit_codes() {
        let p = Path::new("/x/agentd.sock");
        let e = |k| io::Error::from(k);
        assert_eq!(
            connect_failure(p, &Peer::Control, &e(io::ErrorKind::NotFound)).exit,
            Exit::Daemon
        );
        assert_eq!(
            connect_failure(p, &Peer::Control, &e(io::ErrorKind::ConnectionRefused)).reason,
            "daemon_not_running"
        );
        let ep = Peer::Endpoint("notepad".into());
        assert_eq!(connect_failure(p, &ep, &e(io::ErrorKind::NotFound)).exit, Exit::NotFound);
        assert_eq!(
            connect_failure(p, &ep, &e(io::ErrorKind::PermissionDenied)).exit,
            Exit::Refused
        );
    }

    /// A runtime dir planted by someone else, as far as one user can stage it: a dir writable by
    /// others is refused before connecting (exit 5, the line names the dir, owner and mode; the
    /// listener saw nothing), and "not running" names the dir looked in and how to start the daemon
    /// exactly there.
    #[cfg(unix)]
    #[tokio::test]
    async fn untrusted_dirs_are_refused_and_a_missing_daemon_names_its_dir() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("jfgui-cli-trust-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
        let path = dir.join("agentd.sock");
        let listener = tokio::net::UnixListener::bind(&path).unwrap();
        let f = Client::connect(path.clone(), Peer::Control, Duration::from_secs(10))
            .await
            .unwrap_err();
        assert_eq!((f.exit, f.reason.as_str()), (Exit::Refused, "untrusted_runtime_dir"), "{f}");
        assert!(f.message.contains(&format!("{} (owner uid", dir.display())), "{f}");
        assert!(f.message.contains("mode 0777"), "{f}");
        let accepted = tokio::time::timeout(Duration::from_millis(100), listener.accept()).await;
        assert!(accepted.is_err(), "the squatter's listener saw a connection");

        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
        drop(listener);
        std::fs::remove_file(&path).unwrap();
        let f = Client::connect(path.clone(), Peer::Control, Duration::from_secs(10))
            .await
            .unwrap_err();
        assert_eq!((f.exit, f.reason.as_str()), (Exit::Daemon, "daemon_not_running"), "{f}");
        assert!(
            f.message.contains(&format!("nothing listens in {}", dir.display()))
                && f.message.contains(&format!("--runtime-dir {} &", dir.display())),
            "{f}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn a_peer_that_closes_before_answering_is_a_refusal() {
        let dir = std::env::temp_dir().join(format!("jfgui-cli-client-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("refuse.sock");
        let _ = std::fs::remove_file(&path);
        let listener = tokio::net::UnixListener::bind(&path).unwrap();
        let server = tokio::spawn(async move {
            let (s, _) = listener.accept().await.unwrap();
            drop(s);
        });
        let mut c =
            Client::connect(path.clone(), Peer::Control, Duration::from_secs(10)).await.unwrap();
        server.await.unwrap();
        let f = c.request("daemon/status", Map::new()).await.unwrap_err();
        assert_eq!(f.exit, Exit::Refused, "{f}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A peer that read the request and then vanished (the daemon crashed mid-call) did not
    /// refuse anything: a write's outcome is unknown (exit 6), a read's connection was lost
    /// (exit 4). Telling the user "refused" would invite a blind retry of a write.
    #[cfg(unix)]
    #[tokio::test]
    async fn a_peer_that_reads_the_request_then_vanishes_is_a_lost_connection() {
        use tokio::io::AsyncBufReadExt;
        let dir = std::env::temp_dir().join(format!("jfgui-cli-lost-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for (method, exit) in
            [("actions/execute", Exit::OutcomeUnknown), ("actions/list", Exit::Daemon)]
        {
            let path = dir.join("vanish.sock");
            let _ = std::fs::remove_file(&path);
            let listener = tokio::net::UnixListener::bind(&path).unwrap();
            let server = tokio::spawn(async move {
                let (s, _) = listener.accept().await.unwrap();
                let mut line = String::new();
                tokio::io::BufReader::new(s).read_line(&mut line).await.unwrap();
            });
            let peer = Peer::Endpoint("notepad".into());
            let mut c = Client::connect(path.clone(), peer, Duration::from_secs(10)).await.unwrap();
            let f = c.request(method, Map::new()).await.unwrap_err();
            server.await.unwrap();
            assert_eq!(f.exit, exit, "{method}: {f}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
