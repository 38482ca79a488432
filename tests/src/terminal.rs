//! A command run the way a person runs it: in a pseudo-terminal (stdin, stdout and stderr all
//! the terminal, 100 columns), and what the screen then shows, as the text lines a reader of
//! the docs sees. The docs' transcripts are compared against this, so progress bars that are
//! drawn and erased leave nothing behind, as on a real terminal. [`Terminal`] is the same for
//! a program the test talks to while it runs (a prompt it answers).

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{FromRawFd, OwnedFd};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::thread;

use crate::cli::wait_patiently;
use crate::{PATIENCE, Proc, wait_until};

/// Columns of the terminal: wide enough that the CLI's tables do not wrap.
const COLUMNS: u16 = 100;

/// What one run in a terminal did.
#[derive(Debug)]
pub struct Screen {
    /// Exit status.
    pub status: ExitStatus,
    /// The lines the terminal shows afterwards, trailing spaces removed, with no trailing
    /// empty lines.
    pub lines: Vec<String>,
    /// Everything the command wrote, escape sequences included (for failure messages).
    pub raw: String,
}

/// Runs `cmd` with a new pseudo-terminal as its stdin, stdout and stderr; panics, naming it,
/// if it cannot start or is still running after [`PATIENCE`](crate::PATIENCE).
pub fn run_in_terminal(mut cmd: Command) -> Screen {
    let (master, slave) = open_pty();
    let stdio = |fd: &OwnedFd| Stdio::from(fd.try_clone().expect("dup the terminal"));
    cmd.stdin(stdio(&slave)).stdout(stdio(&slave)).stderr(stdio(&slave));
    let mut child = cmd.spawn().unwrap_or_else(|e| panic!("spawn {cmd:?}: {e}"));
    let what = format!("{cmd:?} in a terminal");
    drop(cmd); // the parent's copies of the terminal: the reader sees EOF once the child is gone
    drop(slave);
    let reader = thread::spawn(move || {
        let mut out = Vec::new();
        // EIO, not EOF, is what reading a terminal nobody holds any more returns.
        let _ = File::from(master).read_to_end(&mut out);
        out
    });
    let status = wait_patiently(&mut child, &what);
    let raw = String::from_utf8_lossy(&reader.join().expect("terminal reader")).into_owned();
    Screen { status, lines: render(&raw), raw }
}

/// The terminal of a program started with [`spawn_in_terminal`]: what it wrote so far, and a
/// keyboard.
#[derive(Debug)]
pub struct Terminal {
    keyboard: File,
    screen: Arc<Mutex<Vec<u8>>>,
}

/// Starts `cmd` with a new pseudo-terminal as its stdin, stdout and stderr, as a person starts
/// a program in a terminal window; the process is killed when the [`Proc`] drops.
pub fn spawn_in_terminal(mut cmd: Command) -> (Proc, Terminal) {
    let (master, slave) = open_pty();
    let stdio = |fd: &OwnedFd| Stdio::from(fd.try_clone().expect("dup the terminal"));
    cmd.stdout(stdio(&slave));
    let proc = Proc::start(cmd, stdio(&slave), stdio(&slave));
    drop(slave);
    let keyboard = File::from(master.try_clone().expect("dup the terminal"));
    let screen = Arc::new(Mutex::new(Vec::new()));
    let shown = Arc::clone(&screen);
    thread::spawn(move || {
        let mut master = File::from(master);
        let mut buf = [0u8; 4096];
        // EIO once the program is gone.
        while let Ok(n) = master.read(&mut buf) {
            if n == 0 {
                break;
            }
            shown.lock().unwrap().extend_from_slice(&buf[..n]);
        }
    });
    (proc, Terminal { keyboard, screen })
}

impl Terminal {
    /// Everything the program wrote, escape sequences included.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.screen.lock().unwrap()).into_owned()
    }

    /// Whether `needle` shows up within [`PATIENCE`].
    pub fn wait_for(&self, needle: &str) -> bool {
        wait_until(PATIENCE, || self.text().contains(needle))
    }

    /// Types `line` and Enter.
    pub fn type_line(&mut self, line: &str) {
        self.keyboard.write_all(format!("{line}\n").as_bytes()).expect("type into the terminal");
    }
}

/// A pseudo-terminal pair of [`COLUMNS`] by 24.
#[allow(unsafe_code)]
fn open_pty() -> (OwnedFd, OwnedFd) {
    let (mut master, mut slave) = (-1, -1);
    let size = libc::winsize { ws_row: 24, ws_col: COLUMNS, ws_xpixel: 0, ws_ypixel: 0 };
    // SAFETY: openpty writes two descriptors into the integers it is given and reads the
    // window size; no name buffer or termios is passed.
    let rc = unsafe {
        libc::openpty(&mut master, &mut slave, std::ptr::null_mut(), std::ptr::null(), &size)
    };
    assert_eq!(rc, 0, "openpty: {}", std::io::Error::last_os_error());
    // SAFETY: both descriptors were just opened by openpty and are owned by nobody else.
    unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) }
}

/// What a terminal shows after `raw` was written to it: `\r` returns to the start of the line,
/// `\n` starts a new one, text overwrites what is under the cursor, `ESC [ 2 K` clears the
/// line, `ESC [ K` clears to its end, `ESC [ N C` and `ESC [ N D` move the cursor; other
/// control sequences (colours, the cursor shown or hidden) change no text.
pub fn render(raw: &str) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line: Vec<char> = Vec::new();
    let mut col = 0;
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\r' => col = 0,
            '\n' => {
                lines.push(line.iter().collect::<String>().trim_end().to_string());
                line.clear();
                col = 0;
            }
            '\u{1b}' => {
                if chars.peek() != Some(&'[') {
                    chars.next();
                    continue;
                }
                chars.next();
                let mut params = String::new();
                let mut end = None;
                for c in chars.by_ref() {
                    if c.is_ascii_alphabetic() || c == '~' {
                        end = Some(c);
                        break;
                    }
                    params.push(c);
                }
                let n = params.parse::<usize>().unwrap_or(1);
                match (end, params.as_str()) {
                    (Some('K'), "2") => line.clear(),
                    (Some('K'), "" | "0") => line.truncate(col),
                    (Some('C'), _) => col += n,
                    (Some('D'), _) => col = col.saturating_sub(n),
                    _ => {}
                }
            }
            c if c.is_control() => {}
            c => {
                while line.len() < col {
                    line.push(' ');
                }
                if col < line.len() {
                    line[col] = c;
                } else {
                    line.push(c);
                }
                col += 1;
            }
        }
    }
    lines.push(line.iter().collect::<String>().trim_end().to_string());
    while lines.last().is_some_and(String::is_empty) {
        lines.pop();
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::render;

    #[test]
    fn a_progress_bar_drawn_and_cleared_leaves_only_the_output() {
        let raw = "task export-1 [=>  ] 1/10\r\u{1b}[2Ktask export-1 [===>] 9/10\r\u{1b}[2K{\r\n  \"size\": 12\r\n}\r\ntask export-1 completed\r\n";
        assert_eq!(render(raw), ["{", "  \"size\": 12", "}", "task export-1 completed"]);
    }

    #[test]
    fn colours_and_cursor_sequences_change_no_text() {
        assert_eq!(render("\u{1b}[?25l\u{1b}[1mbold\u{1b}[0m text\u{1b}[?25h\n\n"), ["bold text"]);
        assert_eq!(render("abcdef\r\u{1b}[3Cx\u{1b}[K\nnext"), ["abcx", "next"]);
    }
}
