//! Progress bars on stderr (`tasks wait`, `call --wait`, `read`, `render`), drawn only when
//! stderr is a terminal: a piped or redirected run gets no bar at all, and stdout never
//! carries one, so results and raw bytes stay clean for scripts.

use std::io::{self, IsTerminal};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// How often the bar redraws at most (indicatif rate-limits itself too).
const REFRESH_HZ: u8 = 10;
/// How often a spinner turns while nothing is reported.
const TICK: Duration = Duration::from_millis(120);

/// A bar for one task or one download; invisible when stderr is not a terminal.
#[derive(Debug)]
pub struct Progress {
    bar: Option<ProgressBar>,
}

impl Progress {
    /// A bar for the deferred task `id`: a spinner until the app reports a total, then a bar
    /// of done/total units with the app's status message.
    pub fn task(id: &str) -> Progress {
        Progress::start(|| {
            let bar = ProgressBar::with_draw_target(None, target());
            bar.set_style(spinner_style());
            bar.set_prefix(format!("task {id}"));
            bar.set_message("running");
            bar.enable_steady_tick(TICK);
            bar
        })
    }

    /// A byte bar for reading `total` bytes of `uri`.
    pub fn bytes(uri: &str, total: u64) -> Progress {
        Progress::start(|| {
            let bar = ProgressBar::with_draw_target(Some(total), target());
            bar.set_style(
                ProgressStyle::with_template(
                    "{prefix} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec}",
                )
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> "),
            );
            bar.set_prefix(uri.to_string());
            bar
        })
    }

    fn start(make: impl FnOnce() -> ProgressBar) -> Progress {
        Progress { bar: io::stderr().is_terminal().then(make) }
    }

    /// Reports task progress: `done` of `total` units (total unknown: spinner), and a message.
    pub fn task_update(&self, done: u64, total: Option<u64>, message: Option<&str>) {
        let Some(bar) = &self.bar else { return };
        match total {
            Some(total) if bar.length() != Some(total) => {
                bar.set_length(total);
                bar.set_style(bar_style());
            }
            Some(_) => {}
            None => {
                if bar.length().is_some() {
                    bar.unset_length();
                    bar.set_style(spinner_style());
                }
            }
        }
        bar.set_position(done);
        let message = match (total, message) {
            (Some(_), m) => m.unwrap_or_default().to_string(),
            (None, Some(m)) => format!("{done} done ({m})"),
            (None, None) => format!("{done} done"),
        };
        bar.set_message(message);
    }

    /// Adds `n` bytes to a byte bar.
    pub fn advance(&self, n: u64) {
        if let Some(bar) = &self.bar {
            bar.inc(n);
        }
    }

    /// Removes the bar from the terminal (the result is printed after it).
    pub fn clear(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

impl Drop for Progress {
    /// An early return (an error) must not leave a half-drawn bar before its stderr line.
    fn drop(&mut self) {
        self.clear();
    }
}

fn target() -> ProgressDrawTarget {
    ProgressDrawTarget::stderr_with_hz(REFRESH_HZ)
}

fn spinner_style() -> ProgressStyle {
    ProgressStyle::with_template("{spinner} {prefix}: {msg}")
        .unwrap_or_else(|_| ProgressStyle::default_spinner())
}

fn bar_style() -> ProgressStyle {
    ProgressStyle::with_template("{prefix} [{bar:30}] {pos}/{len} {msg}")
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> ")
}
