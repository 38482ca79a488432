//! Running the real `jfgui-agent` binary in the CLI suites: isolated environment, stdin fed from
//! a thread, output captured, a hard deadline, and the checks every CLI error must pass (one
//! stderr line with its reason, never a panic or a backtrace).

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use crate::{Daemon, PATIENCE, Proc, agent, notepad};

/// What one run of `jfgui-agent` did.
#[derive(Debug)]
pub struct Run {
    /// Exit status.
    pub status: ExitStatus,
    /// Everything written to stdout (as text; invalid UTF-8 replaced).
    pub stdout: String,
    /// Everything written to stdout, byte for byte.
    pub stdout_bytes: Vec<u8>,
    /// Everything written to stderr.
    pub stderr: String,
}

impl Run {
    /// The exit code (panics, with the output, when killed by a signal).
    pub fn code(&self) -> i32 {
        self.status.code().unwrap_or_else(|| panic!("killed by a signal: {self:?}"))
    }

    /// Asserts the exit code, showing the output on failure.
    pub fn assert_code(&self, code: i32) -> &Run {
        assert_eq!(
            self.code(),
            code,
            "exit code; stdout:\n{}\nstderr:\n{}",
            self.stdout,
            self.stderr
        );
        self
    }

    /// Asserts a failure report: exactly one stderr line `jfgui-agent: error[REASON]: ...`.
    pub fn assert_error(&self, code: i32, reason: &str) -> &Run {
        self.assert_code(code);
        let lines: Vec<&str> = self.stderr.lines().collect();
        assert_eq!(lines.len(), 1, "one stderr line expected: {:?}", self.stderr);
        let prefix = format!("jfgui-agent: error[{reason}]: ");
        assert!(
            lines[0].starts_with(&prefix),
            "stderr {:?} does not start with {prefix:?}",
            lines[0]
        );
        self
    }

    /// Asserts that nothing looks like a Rust panic or backtrace.
    pub fn assert_no_panic(&self) -> &Run {
        for bad in ["panicked", "stack backtrace", "RUST_BACKTRACE"] {
            assert!(!self.stderr.contains(bad), "{bad:?} in stderr: {}", self.stderr);
        }
        self
    }

    /// stdout parsed as JSON lines.
    pub fn json_lines(&self) -> Vec<serde_json::Value> {
        self.stdout
            .lines()
            .map(|l| {
                serde_json::from_str(l)
                    .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {l:?}"))
            })
            .collect()
    }

    /// stdout as one JSON value.
    pub fn json(&self) -> serde_json::Value {
        let mut lines = self.json_lines();
        assert_eq!(lines.len(), 1, "one JSON line expected on stdout: {:?}", self.stdout);
        lines.remove(0)
    }
}

/// A `jfgui-agent` command for runtime dir `rt`, with a backtrace-friendly environment so a
/// panic would show (and fail [`Run::assert_no_panic`]).
pub fn agent_command(rt: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(agent());
    cmd.env("JFGUI_RUNTIME_DIR", rt)
        .env_remove("XDG_RUNTIME_DIR")
        .env("XDG_DATA_HOME", crate::data_dir(rt))
        .env("JFGUI_AUDIT_DIR", crate::audit_dir(rt))
        .env("RUST_BACKTRACE", "1")
        .args(args);
    cmd
}

/// Runs `jfgui-agent ARGS` on `rt` with `stdin` as its input; panics after [`PATIENCE`].
pub fn run_agent(rt: &Path, args: &[&str], stdin: &[u8]) -> Run {
    run_command(agent_command(rt, args), stdin)
}

/// Runs `jfgui-agent ARGS` on `rt` with a terminal as stdin, stdout and stderr (a pty made by
/// util-linux `script`, which Debian always has): what a person at a terminal sees. The
/// returned `stdout` is the whole transcript (stdout and stderr interleaved, escape sequences
/// and `\r` included); the exit code is jfgui-agent's.
pub fn run_agent_in_pty(rt: &Path, args: &[&str]) -> Run {
    let mut line = shell_quote(&agent().to_string_lossy());
    for arg in args {
        line.push(' ');
        line.push_str(&shell_quote(arg));
    }
    let mut cmd = Command::new("script");
    cmd.args(["--quiet", "--return", "--command", &line, "/dev/null"])
        .env("JFGUI_RUNTIME_DIR", rt)
        .env_remove("XDG_RUNTIME_DIR")
        .env("JFGUI_AUDIT_DIR", crate::audit_dir(rt))
        .env("TERM", "xterm")
        .env("RUST_BACKTRACE", "1");
    run_command(cmd, b"")
}

/// `s` in single quotes for `sh -c`.
pub fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// Runs a prepared command with `stdin` as its input, capturing stdout and stderr; the child is
/// killed and the test fails if it is still running after [`PATIENCE`].
pub fn run_command(mut cmd: Command, stdin: &[u8]) -> Run {
    let mut child = spawn_piped(&mut cmd);
    let mut input = child.stdin.take().expect("stdin");
    let data = stdin.to_vec();
    // The child may exit without reading everything: a write error is expected then.
    let feeder = thread::spawn(move || {
        let _ = input.write_all(&data);
    });
    let mut out = child.stdout.take().expect("stdout");
    let mut err = child.stderr.take().expect("stderr");
    let out_reader = thread::spawn(move || {
        let mut s = Vec::new();
        let _ = out.read_to_end(&mut s);
        s
    });
    let err_reader = thread::spawn(move || {
        let mut s = Vec::new();
        let _ = err.read_to_end(&mut s);
        s
    });
    let status = wait_patiently(&mut child, &format!("{cmd:?}"));
    let _ = feeder.join();
    let stdout_bytes = out_reader.join().expect("stdout reader");
    let stdout = String::from_utf8_lossy(&stdout_bytes).into_owned();
    let stderr = String::from_utf8_lossy(&err_reader.join().expect("stderr reader")).into_owned();
    Run { status, stdout, stdout_bytes, stderr }
}

/// Waits for `child` to exit; kills it and fails the test, naming `what`, if it is still
/// running after [`PATIENCE`].
pub fn wait_patiently(child: &mut Child, what: &str) -> ExitStatus {
    let deadline = Instant::now() + PATIENCE;
    loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            return status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what} still running after {PATIENCE:?}");
        }
        thread::sleep(Duration::from_millis(10));
    }
}

/// Spawns `cmd` with stdin, stdout and stderr piped (panics, naming it, if it cannot start).
fn spawn_piped(cmd: &mut Command) -> Child {
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("spawn {cmd:?}: {e}"))
}

/// A daemon on `rt` and one example app (`--agent-enable` plus `app_args`) whose endpoint
/// `notepad` is up.
pub fn daemon_with_notepad(rt: &Path, app_args: &[&str]) -> (Daemon, Proc) {
    let daemon = Daemon::start(rt, &[]);
    let args: Vec<&str> = ["--agent-enable"].iter().chain(app_args).copied().collect();
    let app = notepad(rt, &args);
    daemon.wait_endpoint("notepad");
    (daemon, app)
}

/// Binds a Unix socket at `path` that reads requests and never answers (a hung app behind a
/// daemon, for the CLI's own `--timeout`); it lives until the test process ends.
pub fn silent_endpoint(path: &Path) {
    let listener = std::os::unix::net::UnixListener::bind(path)
        .unwrap_or_else(|e| panic!("bind {}: {e}", path.display()));
    thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            thread::spawn(move || {
                use std::io::BufRead;
                let mut sink = String::new();
                let mut reader = std::io::BufReader::new(stream);
                while reader.read_line(&mut sink).is_ok_and(|n| n > 0) {}
            });
        }
    });
}

/// An interactive `jfgui-agent` (a gateway): lines in on stdin, lines out of stdout with a
/// deadline, stderr collected; killed on drop.
#[derive(Debug)]
pub struct Session {
    child: Child,
    stdin: Option<std::process::ChildStdin>,
    lines: std::sync::mpsc::Receiver<String>,
    stderr: std::sync::Arc<std::sync::Mutex<Vec<u8>>>,
    /// The thread copying stderr into `stderr`: the child's exit does not mean it has read
    /// the last bytes yet, so [`Session::finish`] waits for it to see EOF.
    stderr_reader: thread::JoinHandle<()>,
}

impl Session {
    /// Starts `cmd` with piped stdio.
    pub fn start(mut cmd: Command) -> Session {
        let mut child = spawn_piped(&mut cmd);
        let stdout = child.stdout.take().expect("stdout");
        let (tx, lines) = std::sync::mpsc::channel();
        thread::spawn(move || {
            use std::io::BufRead;
            for line in std::io::BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stderr = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let mut err = child.stderr.take().expect("stderr");
        let sink = std::sync::Arc::clone(&stderr);
        let stderr_reader = thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = err.read(&mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock().unwrap_or_else(|e| e.into_inner()).extend_from_slice(&buf[..n]);
            }
        });
        let stdin = child.stdin.take();
        Session { child, stdin, lines, stderr, stderr_reader }
    }

    /// The gateway's pid.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Writes raw bytes to its stdin.
    pub fn send_bytes(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin still open");
        stdin.write_all(bytes).and_then(|()| stdin.flush()).expect("write to the gateway's stdin");
    }

    /// Writes one line.
    pub fn send(&mut self, line: &str) {
        self.send_bytes(format!("{line}\n").as_bytes());
    }

    /// The next stdout line as JSON (panics after [`PATIENCE`] or at EOF).
    pub fn recv(&mut self) -> serde_json::Value {
        let line = self.lines.recv_timeout(PATIENCE).unwrap_or_else(|e| {
            panic!("no stdout line from the gateway ({e}); stderr: {}", self.stderr())
        });
        serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {line:?}"))
    }

    /// Closes its stdin (EOF).
    pub fn close_stdin(&mut self) {
        self.stdin = None;
    }

    /// Waits for the exit (panics after [`PATIENCE`]); returns the status, the remaining
    /// stdout lines and everything it wrote to stderr.
    pub fn finish(mut self) -> (ExitStatus, Vec<String>, String) {
        let deadline = Instant::now() + PATIENCE;
        let status = loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                break status;
            }
            assert!(Instant::now() < deadline, "gateway still running; stderr: {}", self.stderr());
            thread::sleep(Duration::from_millis(10));
        };
        let mut rest = Vec::new();
        while let Ok(line) = self.lines.recv_timeout(Duration::from_secs(2)) {
            rest.push(line);
        }
        // A process that inherited the pipe could hold stderr open past the exit: bounded wait.
        let deadline = Instant::now() + PATIENCE;
        while !self.stderr_reader.is_finished() && Instant::now() < deadline {
            thread::sleep(Duration::from_millis(10));
        }
        let stderr = self.stderr();
        (status, rest, stderr)
    }

    /// What it wrote to stderr so far.
    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.stderr.lock().unwrap_or_else(|e| e.into_inner())).into_owned()
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
