//! Log output: `tracing` events to stderr only (stdout stays free for nothing: the daemon
//! prints no data), filtered by `JFGUI_LOG`, else `RUST_LOG`, else `info`; text or JSON lines.

use tracing_subscriber::EnvFilter;

use crate::config::LogFormat;

/// The filter used when neither variable is set.
pub const DEFAULT_FILTER: &str = "info";

/// Installs the global subscriber. A bad filter is reported on stderr and replaced by the
/// default, so a typo in `RUST_LOG` never keeps the daemon from starting.
pub fn init(format: LogFormat) {
    let (filter, problem) = filter_from(|name| std::env::var(name).ok());
    // Colours only for a person at a terminal, never in journald or a captured log file.
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(ansi);
    match format {
        LogFormat::Text => builder.init(),
        LogFormat::Json => builder.json().init(),
    }
    if let Some(problem) = problem {
        tracing::warn!("{problem}; using the default filter {DEFAULT_FILTER:?}");
    }
}

/// The filter from `JFGUI_LOG`, else `RUST_LOG`, else the default, and what was wrong if a
/// set variable did not parse.
fn filter_from(env: impl Fn(&str) -> Option<String>) -> (EnvFilter, Option<String>) {
    for name in ["JFGUI_LOG", "RUST_LOG"] {
        if let Some(spec) = env(name).filter(|s| !s.trim().is_empty()) {
            return match EnvFilter::try_new(&spec) {
                Ok(filter) => (filter, None),
                Err(e) => (
                    EnvFilter::new(DEFAULT_FILTER),
                    Some(format!("{name}={spec:?} is not a valid filter: {e}")),
                ),
            };
        }
    }
    (EnvFilter::new(DEFAULT_FILTER), None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| vars.iter().find(|(k, _)| *k == name).map(|(_, v)| (*v).to_string())
    }

    #[test]
    fn jfgui_log_wins_then_rust_log_then_info() {
        let (f, p) = filter_from(env(&[("JFGUI_LOG", "debug"), ("RUST_LOG", "trace")]));
        assert_eq!(f.to_string(), "debug");
        assert!(p.is_none());
        let (f, _) = filter_from(env(&[("RUST_LOG", "trace")]));
        assert_eq!(f.to_string(), "trace");
        let (f, _) = filter_from(env(&[]));
        assert_eq!(f.to_string(), "info");
    }

    #[test]
    fn bad_filter_falls_back_with_a_message() {
        let (f, p) = filter_from(env(&[("JFGUI_LOG", "=[")]));
        assert_eq!(f.to_string(), "info");
        assert!(p.unwrap().contains("JFGUI_LOG"));
    }
}
