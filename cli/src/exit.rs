//! The CLI's exit codes and the one error type every subcommand returns: an exit code, a
//! machine-readable reason and a one-sentence message.

use std::fmt;

use jfgui_proto::{Map, Value};

/// Exit codes, the same for every subcommand (`jfgui-agent --help` tables them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// Success (also stdin EOF in `stdio`).
    Ok = 0,
    /// The action answered with an application error: `not_executed`, `failed`, `not_found`
    /// (and `internal`, a bug in the host or the daemon); for `check`, a check FAILed.
    Action = 1,
    /// Bad command line or bad input given on it (malformed `--input-json`, missing file).
    Usage = 2,
    /// ENDPOINT (or the headless APP) not found, or ambiguous.
    NotFound = 3,
    /// The daemon is not running, or the connection to it was lost.
    Daemon = 4,
    /// Refused: the peer check or file permissions.
    Refused = 5,
    /// The outcome is unknown: timeout, or the app went away mid-call.
    OutcomeUnknown = 6,
    /// A protocol error: a JSON-RPC error, or an answer that is not the protocol.
    Protocol = 7,
}

/// The table printed after `--help` (kept in one place so `--help` and the man page say the
/// same; docs/CLI.md tables it for readers of the docs).
pub const EXIT_CODES_HELP: &str = "\
Exit codes (the same for every subcommand):
  0  ok (also stdin EOF in `stdio`)
  1  action error: not_executed, failed, not_found, internal (reason on stderr); check: a FAIL
  2  usage error (bad arguments, malformed --input-json, unreadable --input-file)
  3  endpoint not found or ambiguous (candidates on stderr); headless APP not found
  4  daemon not running, or the connection to it was lost
  5  refused (peer check, permission denied)
  6  outcome unknown (timeout, app gone mid-call): inspect before retrying
  7  protocol error (JSON-RPC error or malformed answer; also internal_bug)";

/// Why a subcommand stopped short of success.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// The process exit code.
    pub exit: Exit,
    /// Machine-readable reason, e.g. `stale_revision`, `daemon_not_running`.
    pub reason: String,
    /// One sentence for people; never contains a line break.
    pub message: String,
    /// The wire error object (`{code, message, data}`) when the failure came from a JSON-RPC
    /// error, so `--json` can print it unchanged.
    pub wire: Option<Value>,
    /// The command already printed its result on stdout (a batch with a failed call, a task
    /// that ended badly): the report is then the stderr line only, so stdout holds exactly one
    /// JSON value.
    pub result_printed: bool,
    /// The names nearest to a misspelled one ("did you mean"), nearest first.
    pub suggestions: Box<[String]>,
}

impl Failure {
    /// A failure without a wire error.
    pub fn new(exit: Exit, reason: impl Into<String>, message: impl Into<String>) -> Failure {
        let message: String = message.into();
        Failure {
            exit,
            reason: reason.into(),
            message: one_line(&message),
            wire: None,
            result_printed: false,
            suggestions: Box::default(),
        }
    }

    /// The same failure with the names nearest to the misspelled one, said in the message
    /// ("did you mean a, b?") and kept for `--json`. Nothing changes when there are none.
    pub fn with_suggestions(mut self, names: Vec<String>) -> Failure {
        if !names.is_empty() {
            self.message.push_str(&one_line(&format!("; did you mean {}?", names.join(", "))));
        }
        self.suggestions = names.into_boxed_slice();
        self
    }

    /// The same failure (exit code, reason, wire error) told in a better sentence.
    pub fn with_message(mut self, message: impl Into<String>) -> Failure {
        self.message = one_line(&message.into());
        self
    }

    /// Marks the failure as one whose result is already on stdout (see `result_printed`).
    pub fn after_result(mut self) -> Failure {
        self.result_printed = true;
        self
    }

    /// A usage error (exit 2).
    pub fn usage(reason: &str, message: impl Into<String>) -> Failure {
        Failure::new(Exit::Usage, reason, message)
    }

    /// Maps an error object to an exit code: application errors by class (the code fixes the
    /// class: 1000–1004), everything in the JSON-RPC range is a protocol error. It takes both
    /// shapes the daemon sends: a JSON-RPC `error` (`{code, message, data{reason, ...}}`) and
    /// an action error inside a result (a batch call's or a failed task's:
    /// `{code, class, reason, message, data}`).
    pub fn from_rpc_error(error: &Value) -> Failure {
        let code = error.get("code").and_then(Value::as_i64);
        let data = error.get("data").and_then(Value::as_object);
        let message = error.get("message").and_then(Value::as_str).unwrap_or("no message given");
        let reason = data
            .and_then(|d| d.get("reason"))
            .or_else(|| error.get("reason"))
            .and_then(Value::as_str);
        let (exit, default_reason) = match code {
            Some(1001) => (Exit::OutcomeUnknown, "outcome_unknown"),
            Some(1000) => (Exit::Action, "not_executed"),
            Some(1002) => (Exit::Action, "failed"),
            Some(1003) => (Exit::Action, "internal"),
            Some(1004) => (Exit::Action, "not_found"),
            Some(-32700) => (Exit::Protocol, "parse_error"),
            Some(-32600) => (Exit::Protocol, "invalid_request"),
            Some(-32601) => (Exit::Protocol, "method_not_found"),
            Some(-32602) => (Exit::Protocol, "invalid_params"),
            Some(-32603) => (Exit::Protocol, "internal_error"),
            // Codes outside the JSON-RPC range are application errors (one code per class).
            Some(c) if !(-32768..=-32000).contains(&c) => (Exit::Action, "application_error"),
            _ => (Exit::Protocol, "protocol_error"),
        };
        let mut text = String::from(message);
        // Any app's message may omit the revision to retry with; ours already names it.
        if let Some(current) = data
            .and_then(|d| d.get("currentRevision"))
            .and_then(Value::as_u64)
            .filter(|current| !message.contains(&format!("current revision is {current}")))
        {
            text.push_str(&format!(" (current revision: {current})"));
        }
        if let Some(pointer) = data.and_then(|d| d.get("pointer")).and_then(Value::as_str) {
            text.push_str(&format!(" (at {})", if pointer.is_empty() { "/" } else { pointer }));
        }
        // Whatever the app wrote, say which resource was missing.
        if let Some(uri) = data
            .and_then(|d| d.get("resource"))
            .and_then(Value::as_str)
            .filter(|uri| !message.contains(uri))
        {
            text.push_str(&format!(" ({uri})"));
        }
        let suggestions = data
            .and_then(|d| d.get("suggestions"))
            .and_then(Value::as_array)
            .map(|names| names.iter().filter_map(Value::as_str).map(str::to_owned).collect())
            .unwrap_or_default();
        // A failed atomic batch names the call and carries that call's own error: say both.
        if let Some(cause) = data.and_then(|d| d.get("cause")) {
            let index = data.and_then(|d| d.get("index")).and_then(Value::as_u64);
            let inner = Failure::from_rpc_error(cause);
            match index {
                Some(i) => text.push_str(&format!("; call {i}: {}", inner.message)),
                None => text.push_str(&format!("; {}", inner.message)),
            }
        }
        Failure {
            exit,
            reason: reason.unwrap_or(default_reason).to_string(),
            message: one_line(&text),
            wire: Some(error.clone()),
            result_printed: false,
            suggestions: Box::default(),
        }
        .with_suggestions(suggestions)
    }

    /// The JSON printed on stdout for this failure under `--json`: the wire error when there is
    /// one, otherwise the same shape built from the reason and message.
    pub fn to_json(&self) -> Value {
        let error = match &self.wire {
            Some(wire) => wire.clone(),
            None => {
                let mut data = Map::new();
                data.insert("reason", self.reason.as_str());
                if !self.suggestions.is_empty() {
                    let names = self.suggestions.iter().map(|n| Value::from(n.as_str()));
                    data.insert("suggestions", Value::Array(names.collect()));
                }
                let mut error = Map::new();
                error.insert("message", self.message.as_str());
                error.insert("data", data);
                Value::Object(error)
            }
        };
        let mut out = Map::new();
        out.insert("error", error);
        out.insert("exitCode", self.exit as u64);
        Value::Object(out)
    }
}

impl Failure {
    /// The app's own error code (`data.code` of a `host_error`, e.g. `out_of_range`).
    fn app_code(&self) -> Option<&str> {
        self.wire.as_ref()?.get("data")?.get("code")?.as_str()
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.app_code() {
            // The prefix stays `error[REASON]: ` for scripts; the app's code leads the text.
            Some(code) => write!(f, "error[{}]: {}: {}", self.reason, one_line(code), self.message),
            None => write!(f, "error[{}]: {}", self.reason, self.message),
        }
    }
}

/// Keeps the stderr report on one line whatever the peer put into a message.
fn one_line(s: &str) -> String {
    s.chars().map(|c| if c.is_control() { ' ' } else { c }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(code: i64, reason: Option<&str>) -> Value {
        let mut data = Map::new();
        if let Some(r) = reason {
            data.insert("reason", r);
        }
        let mut e = Map::new();
        e.insert("code", code);
        e.insert("message", "boom\nsecond line");
        e.insert("data", data);
        Value::Object(e)
    }

    #[test]
    fn classes_map_to_the_spec_exit_codes() {
        let cases = [
            (1000, Exit::Action),
            (1001, Exit::OutcomeUnknown),
            (1002, Exit::Action),
            (1003, Exit::Action),
            (1004, Exit::Action),
            (-32700, Exit::Protocol),
            (-32600, Exit::Protocol),
            (-32601, Exit::Protocol),
            (-32602, Exit::Protocol),
            (-32603, Exit::Protocol),
            (-32050, Exit::Protocol),
            (4242, Exit::Action),
        ];
        for (code, exit) in cases {
            assert_eq!(Failure::from_rpc_error(&error(code, None)).exit, exit, "code {code}");
        }
    }

    #[test]
    fn reason_comes_from_data_and_message_stays_on_one_line() {
        let f = Failure::from_rpc_error(&error(1000, Some("stale_revision")));
        assert_eq!(f.reason, "stale_revision");
        assert!(!f.message.contains('\n'));
        assert_eq!(f.to_string(), "error[stale_revision]: boom second line");
        let f = Failure::from_rpc_error(&error(1004, None));
        assert_eq!(f.reason, "not_found");
    }

    #[test]
    fn stale_revision_names_the_current_revision() {
        let mut data = Map::new();
        data.insert("reason", "stale_revision");
        data.insert("currentRevision", 12u64);
        let mut e = Map::new();
        e.insert("code", 1000i64);
        e.insert("message", "stale");
        e.insert("data", data);
        let f = Failure::from_rpc_error(&Value::Object(e.clone()));
        assert!(f.message.contains("current revision: 12"), "{}", f.message);
        // A message that already names it is not repeated.
        e.insert("message", "expectedRevision 3 does not match: the current revision is 12; retry");
        let f = Failure::from_rpc_error(&Value::Object(e));
        assert_eq!(
            f.message,
            "expectedRevision 3 does not match: the current revision is 12; retry"
        );
    }

    #[test]
    fn action_errors_inside_results_keep_their_reason_and_batch_causes_are_named() {
        let parse = |s: &str| jfgui_proto::parse(s.as_bytes(), &jfgui_proto::Limits::DEFAULT);
        let call = parse(
            r#"{"code":1001,"class":"outcome_unknown","reason":"app_disconnected","message":"gone","data":{}}"#,
        )
        .unwrap();
        let f = Failure::from_rpc_error(&call);
        assert_eq!((f.exit, f.reason.as_str()), (Exit::OutcomeUnknown, "app_disconnected"));
        let batch = parse(
            r#"{"code":1000,"message":"the atomic batch was not started","data":{"reason":"batch_preflight","index":1,"cause":{"code":1000,"class":"not_executed","reason":"unknown_action","message":"no action \"nope\"","data":{"action":"nope"}}}}"#,
        )
        .unwrap();
        let f = Failure::from_rpc_error(&batch);
        assert_eq!(f.reason, "batch_preflight");
        assert_eq!(f.message, r#"the atomic batch was not started; call 1: no action "nope""#);
    }

    #[test]
    fn errors_name_the_app_code_the_resource_and_the_nearest_names() {
        let parse = |s: &str| jfgui_proto::parse(s.as_bytes(), &jfgui_proto::Limits::DEFAULT);
        let host = parse(
            r#"{"code":1002,"message":"the counter stays within -1000..1000","data":{"reason":"host_error","code":"out_of_range"}}"#,
        )
        .unwrap();
        assert_eq!(
            Failure::from_rpc_error(&host).to_string(),
            "error[host_error]: out_of_range: the counter stays within -1000..1000"
        );
        let missing = parse(
            r#"{"code":1004,"message":"no such resource","data":{"reason":"resource","resource":"export://nope.txt"}}"#,
        )
        .unwrap();
        assert_eq!(
            Failure::from_rpc_error(&missing).message,
            "no such resource (export://nope.txt)"
        );
        let misspelled = parse(
            r#"{"code":1000,"message":"no action \"document.gt\"","data":{"reason":"unknown_action","action":"document.gt","suggestions":["document.get"]}}"#,
        )
        .unwrap();
        assert_eq!(
            Failure::from_rpc_error(&misspelled).message,
            r#"no action "document.gt"; did you mean document.get?"#
        );
    }

    #[test]
    fn a_missing_code_is_a_protocol_error() {
        assert_eq!(Failure::from_rpc_error(&Value::Null).exit, Exit::Protocol);
    }

    #[test]
    fn json_form_carries_the_wire_error_or_the_reason() {
        let f = Failure::new(Exit::Daemon, "daemon_not_running", "no daemon");
        let j = f.to_json();
        assert_eq!(j.get("exitCode").and_then(Value::as_u64), Some(4));
        let reason = j.get("error").and_then(|e| e.get("data")).and_then(|d| d.get("reason"));
        assert_eq!(reason.and_then(Value::as_str), Some("daemon_not_running"));
        let wire = error(1002, Some("host_error"));
        let f = Failure::from_rpc_error(&wire);
        assert_eq!(f.to_json().get("error"), Some(&wire));
    }
}
