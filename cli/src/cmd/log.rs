//! `jfgui-agent log`: the audit log (who changed what in which app), read from the files the
//! daemon writes (`audit.jsonl` and its rotated `.1`–`.3`, oldest first), filtered, and with
//! `--follow` streamed live through the control method `audit/follow` (never by polling).
//!
//! A table on a terminal; JSON lines (the records exactly as stored) otherwise or with `--json`.

use std::collections::{BTreeSet, HashSet};
use std::path::PathBuf;

use clap::Args;
use jfgui_engine::audit::{AuditFile, KEPT_FILES, location, time};
use jfgui_proto::{Limits, Map, Value};

use super::{Context, daemon};
use crate::client::{Client, Peer};
use crate::exit::{Exit, Failure};
use crate::output::{Format, print_text, write_stdout};

/// The help after the options.
pub const AFTER_HELP: &str = "\
Every call that reached an app and could change it is recorded (reads too when the daemon runs \
with --audit-reads): time, client (pid, executable, transport, protocol, MCP client name), \
the agent behind it as the operating system names it (the program that started the gateway), \
app, action, input size and SHA-256, revision before and after, outcome, duration. A call of an \
action that asks first also records how it was decided: asked the user (and the answer, in a \
record of its own), or allowed by a grant. The log is \
$XDG_STATE_HOME/jfgui-agent/audit.jsonl (see jfgui-agentd --help for other systems); \
`jfgui-agent status` shows the directory in use.

Examples:
  jfgui-agent log --since 1h
  jfgui-agent log --app notepad --client claude-code
  jfgui-agent log --since 2026-12-01T09:00:00Z --json
  jfgui-agent log --follow";

/// Arguments of `log`.
#[derive(Debug, Args)]
pub struct LogArgs {
    /// Only calls to this app (its endpoint slug or display name).
    #[arg(long, value_name = "ENDPOINT")]
    pub app: Option<String>,
    /// Only records from this long ago (30s, 10m, 2h, 7d) or from this UTC time
    /// (2026-12-01T09:00:00Z).
    #[arg(long, value_name = "DURATION|TIME")]
    pub since: Option<String>,
    /// Only calls by this client: its pid, its MCP client name, or its executable (path or
    /// file name).
    #[arg(long, value_name = "PID|NAME")]
    pub client: Option<String>,
    /// After the records so far, print new ones as they are written, until interrupted.
    #[arg(long)]
    pub follow: bool,
    /// Print the records as JSON lines (the default when stdout is not a terminal).
    #[arg(long)]
    pub json: bool,
}

/// Prints the matching records, then (`--follow`) new ones.
pub async fn run(args: LogArgs, ctx: Context, format: Format) -> Result<(), Failure> {
    let filter = Filter::new(&args, time::now_ms())?;
    let mut printer = Printer { format, header: false, apps: SeenApps::default() };
    if !args.follow {
        let dir = audit_dir(ctx).await?;
        for line in read_lines(&dir) {
            printer.line(&filter, &line)?;
        }
        if let Some(unseen) = unseen_app(&args, &printer.apps, &dir) {
            eprintln!("jfgui-agent: {unseen}");
        }
        return Ok(());
    }
    let daemon = daemon()?;
    let mut control = Client::connect(daemon.control(), Peer::Control, ctx.timeout).await?;
    let status = control.request("daemon/status", Map::new()).await?;
    // Subscribed before reading the files: nothing written meanwhile is missed, and what is
    // both in the files and in the stream is printed once.
    control.request("audit/follow", Map::new()).await?;
    let since_subscribing = time::now_ms().saturating_sub(2_000);
    let mut recent = HashSet::new();
    if let Some(dir) = status_dir(&status) {
        for line in read_lines(&dir) {
            if record_time(&line).is_some_and(|t| t >= since_subscribing) {
                recent.insert(line.clone());
            }
            printer.line(&filter, &line)?;
        }
        if let Some(unseen) = unseen_app(&args, &printer.apps, &dir) {
            eprintln!("jfgui-agent: {unseen}; following");
        }
    }
    while let Some(params) = control.next_notification().await? {
        let Some(record) = params.get("record") else { continue };
        let line = jfgui_proto::encode(record, &Limits::DEFAULT).unwrap_or_default();
        if recent.remove(&line) {
            continue;
        }
        printer.line(&filter, &line)?;
    }
    Err(Failure::new(Exit::Daemon, "connection_lost", "the daemon closed the audit stream"))
}

/// The apps the records read so far name, filtered or not.
#[derive(Debug, Default)]
struct SeenApps {
    slugs: BTreeSet<String>,
    display_names: BTreeSet<String>,
}

/// When `--app` names an app that no record of the log mentions (by slug or display name),
/// the note that says so, with the nearest slugs the log has. A note, not a failure: a log
/// without records of an app is a correct answer (a fresh install, a rotated log).
fn unseen_app(args: &LogArgs, seen: &SeenApps, dir: &std::path::Path) -> Option<String> {
    let app = args
        .app
        .as_deref()
        .filter(|app| !seen.slugs.contains(*app) && !seen.display_names.contains(*app))?;
    let mut note =
        format!("the audit log in {} has no record of an app named '{app}'", dir.display());
    let near = jfgui_proto::resolve::nearest(app, seen.slugs.iter().map(String::as_str));
    if !near.is_empty() {
        note.push_str(&format!("; did you mean {}?", near.join(", ")));
    }
    Some(note)
}

/// The log's directory: the one the running daemon reports, else this user's default.
async fn audit_dir(ctx: Context) -> Result<PathBuf, Failure> {
    let reported = match daemon() {
        Ok(d) => match Client::connect(d.control(), Peer::Control, ctx.timeout).await {
            Ok(mut c) => c.request("daemon/status", Map::new()).await.ok(),
            Err(_) => None,
        },
        Err(_) => None,
    };
    reported.as_ref().and_then(status_dir).or_else(location::default_dir).ok_or_else(|| {
        Failure::new(
            Exit::Usage,
            "no_audit_dir",
            format!("no audit log directory: set HOME, XDG_STATE_HOME or {}", location::DIR_ENV),
        )
    })
}

fn status_dir(status: &Map) -> Option<PathBuf> {
    status.get("auditDir").and_then(Value::as_str).map(PathBuf::from)
}

/// Every line of the log, oldest file first (missing files are skipped).
fn read_lines(dir: &std::path::Path) -> Vec<Vec<u8>> {
    let mut lines = Vec::new();
    for n in (0..KEPT_FILES).rev() {
        if let Ok(bytes) = std::fs::read(AuditFile::path(dir, n)) {
            lines
                .extend(bytes.split(|&b| b == b'\n').filter(|l| !l.is_empty()).map(<[u8]>::to_vec));
        }
    }
    lines
}

fn record_time(line: &[u8]) -> Option<u64> {
    let value = jfgui_proto::parse(line, &Limits::DEFAULT).ok()?;
    time::parse_rfc3339(value.get("time")?.as_str()?)
}

/// Which records to print.
#[derive(Debug)]
struct Filter {
    app: Option<String>,
    since_ms: Option<u64>,
    client: Option<String>,
}

impl Filter {
    fn new(args: &LogArgs, now_ms: u64) -> Result<Filter, Failure> {
        let since_ms = args.since.as_deref().map(|s| parse_since(s, now_ms)).transpose()?;
        Ok(Filter { app: args.app.clone(), since_ms, client: args.client.clone() })
    }

    /// Drop notices pass every filter but `--since`: a gap concerns every app and client.
    fn matches(&self, record: &Value) -> bool {
        let time = record.get("time").and_then(Value::as_str).and_then(time::parse_rfc3339);
        if self.since_ms.is_some_and(|since| time.is_none_or(|t| t < since)) {
            return false;
        }
        if record.get("dropped").is_some() {
            return true;
        }
        let text = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_owned);
        if let Some(app) = &self.app {
            let slug = text(record.get("app").and_then(|a| a.get("slug")));
            let name = text(record.get("app").and_then(|a| a.get("displayName")));
            if slug.as_ref() != Some(app) && name.as_ref() != Some(app) {
                return false;
            }
        }
        if let Some(wanted) = &self.client {
            let client = record.get("client");
            let pid = client.and_then(|c| c.get("pid")).and_then(Value::as_u64);
            let agent = client.and_then(|c| c.get("agent"));
            let agent_pid = agent.and_then(|a| a.get("pid")).and_then(Value::as_u64);
            let info = text(client.and_then(|c| c.get("clientInfo")).and_then(|i| i.get("name")));
            let exes = [client, agent].map(|c| text(c.and_then(|c| c.get("exe"))));
            let by_pid =
                wanted.parse::<u64>().ok().is_some_and(|p| pid == Some(p) || agent_pid == Some(p));
            let by_name = info.as_ref() == Some(wanted)
                || exes.iter().flatten().any(|exe| {
                    exe == wanted || exe.rsplit(['/', '\\']).next() == Some(wanted.as_str())
                });
            if !by_pid && !by_name {
                return false;
            }
        }
        true
    }
}

/// `--since`: a duration back from `now_ms` (`30s`, `10m`, `2h`, `7d`) or an RFC 3339 UTC time.
fn parse_since(text: &str, now_ms: u64) -> Result<u64, Failure> {
    if let Some(ms) = time::parse_rfc3339(text) {
        return Ok(ms);
    }
    let bad = || {
        Failure::usage(
            "invalid_since",
            format!(
                "--since {text:?} is neither a duration (30s, 10m, 2h, 7d) nor a UTC time like 2026-12-01T09:00:00Z"
            ),
        )
    };
    let split = text.find(|c: char| !c.is_ascii_digit()).ok_or_else(bad)?;
    let n: u64 = text[..split].parse().map_err(|_| bad())?;
    let unit_ms: u64 = match &text[split..] {
        "ms" => 1,
        "s" => 1_000,
        "m" => 60_000,
        "h" => 3_600_000,
        "d" => 86_400_000,
        _ => return Err(bad()),
    };
    Ok(now_ms.saturating_sub(n.saturating_mul(unit_ms)))
}

/// Prints records as JSON lines or table rows (fixed columns, so a followed log lines up).
struct Printer {
    format: Format,
    header: bool,
    apps: SeenApps,
}

impl Printer {
    fn line(&mut self, filter: &Filter, line: &[u8]) -> Result<(), Failure> {
        let Ok(record) = jfgui_proto::parse(line, &Limits::DEFAULT) else {
            // Not one of ours (a torn line after a crash, an edit): said, not fatal.
            eprintln!("jfgui-agent: skipped a line of the audit log that is not strict JSON");
            return Ok(());
        };
        if let Some(app) = record.get("app") {
            let name = |key| app.get(key).and_then(Value::as_str).map(str::to_owned);
            self.apps.slugs.extend(name("slug"));
            self.apps.display_names.extend(name("displayName"));
        }
        if !filter.matches(&record) {
            return Ok(());
        }
        if self.format == Format::Json {
            let mut out = line.to_vec();
            out.push(b'\n');
            return write_stdout(&out);
        }
        if !self.header {
            self.header = true;
            print_text(&row(["TIME", "CLIENT", "APP", "ACTION", "REVISION", "OUTCOME"]))?;
        }
        print_text(&row(cells(&record)))
    }
}

fn row(cells: [impl AsRef<str>; 6]) -> String {
    const WIDTHS: [usize; 5] = [24, 18, 12, 30, 10];
    let mut out = String::new();
    for (i, cell) in cells.iter().enumerate() {
        let cell = cell.as_ref();
        out.push_str(cell);
        if let Some(&w) = WIDTHS.get(i) {
            let pad = w.saturating_sub(cell.chars().count()) + 2;
            out.extend(std::iter::repeat_n(' ', pad));
        }
    }
    out
}

/// The table cells of a record: time, client, app, action, revision before → after (only the
/// unchanged one for a refused call), outcome.
fn cells(r: &Value) -> [String; 6] {
    let s = |v: Option<&Value>| v.and_then(Value::as_str).unwrap_or("").to_owned();
    let time = s(r.get("time"));
    if let Some(n) = r.get("dropped").and_then(Value::as_u64) {
        return [
            time,
            String::new(),
            String::new(),
            format!("({n} records dropped)"),
            String::new(),
            String::new(),
        ];
    }
    let client = r.get("client");
    let info = client.and_then(|c| c.get("clientInfo")).and_then(|i| i.get("name"));
    // The agent the OS named (the MCP client behind our gateway), else the peer itself.
    let agent = client.and_then(|c| c.get("agent"));
    let exe = s(agent.or(client).and_then(|c| c.get("exe")));
    let mut who = match (agent, info.and_then(Value::as_str)) {
        (None, Some(name)) => name.to_owned(),
        _ if !exe.is_empty() => exe.rsplit(['/', '\\']).next().unwrap_or(&exe).to_owned(),
        _ => s(client.and_then(|c| c.get("transport"))),
    };
    if let Some(pid) = agent.or(client).and_then(|c| c.get("pid")).and_then(Value::as_u64) {
        who.push_str(&format!("[{pid}]"));
    }
    let app = s(r.get("app").and_then(|a| a.get("slug")));
    let action = match (r.get("action"), r.get("calls"), r.get("task")) {
        (Some(a), _, _) => s(Some(a)),
        (_, Some(Value::Array(calls)), _) => {
            let names: Vec<&str> = calls.iter().filter_map(Value::as_str).collect();
            let atomic = r.get("atomic").and_then(Value::as_bool) == Some(true);
            format!("{}batch({})", if atomic { "atomic " } else { "" }, names.join(", "))
        }
        (_, _, Some(t)) => format!("cancel {}", s(Some(t))),
        _ => s(r.get("method")),
    };
    let rev =
        |v: Option<&Value>| v.and_then(Value::as_u64).map_or("-".to_owned(), |n| n.to_string());
    // A refused call changed nothing: its `revision` is the one it left as it was.
    let refused = r.get("outcome").and_then(|o| o.get("refused")).is_some();
    let revision = if refused {
        rev(r.get("revision"))
    } else {
        format!("{} → {}", rev(r.get("expectedRevision")), rev(r.get("revision")))
    };
    let mut outcome = match r.get("outcome") {
        Some(Value::String(o)) => o.clone(),
        Some(Value::Object(m)) => match m.iter().next() {
            Some((word, detail)) => format!("{word}: {}", s(detail.get("reason"))),
            None => String::new(),
        },
        _ => String::new(),
    };
    if let Some(consent) = r.get("consent") {
        outcome.push_str(&consent_text(consent));
    }
    [time, who, app, action, revision, outcome]
}

/// How a call of an action that asks was decided: `; asked the user`, `; user: allow_always`,
/// `; allowed by grant(3)`.
fn consent_text(consent: &Value) -> String {
    let by = consent.get("by").and_then(Value::as_str).unwrap_or("user");
    match consent.get("answer").and_then(Value::as_str) {
        Some(answer) => format!("; {by}: {answer}"),
        None if consent.get("asked").and_then(Value::as_bool) == Some(true) => {
            "; asked the user".to_owned()
        }
        None => format!("; allowed by {by}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Value {
        jfgui_proto::parse(s.as_bytes(), &Limits::DEFAULT).unwrap()
    }

    const RECORD: &str = r#"{"time":"2026-12-01T14:27:03.379Z","client":{"uid":1000,"pid":16076,"exe":"/usr/bin/jfgui-agent","transport":"endpoint","protocol":"json-1","protocolRevision":"1"},"app":{"slug":"notepad","displayName":"Notepad","pid":15986},"method":"actions/execute","action":"document.text.insert","input":{"size":13,"sha256":"e7"},"expectedRevision":0,"revision":2,"outcome":{"refused":{"class":"not_executed","reason":"stale_revision"}},"durationUs":16449}"#;

    fn filter(app: Option<&str>, since: Option<&str>, client: Option<&str>) -> Filter {
        let args = LogArgs {
            app: app.map(str::to_owned),
            since: since.map(str::to_owned),
            client: client.map(str::to_owned),
            follow: false,
            json: false,
        };
        Filter::new(&args, time::parse_rfc3339("2026-12-01T15:00:00Z").unwrap()).unwrap()
    }

    #[test]
    fn filters_by_app_time_and_client() {
        let r = parse(RECORD);
        assert!(filter(None, None, None).matches(&r));
        assert!(filter(Some("notepad"), None, None).matches(&r));
        assert!(filter(Some("Notepad"), None, None).matches(&r));
        assert!(!filter(Some("sketch"), None, None).matches(&r));
        assert!(filter(None, Some("1h"), None).matches(&r));
        assert!(!filter(None, Some("30m"), None).matches(&r));
        assert!(filter(None, Some("2026-12-01T14:27:03Z"), None).matches(&r));
        assert!(filter(None, None, Some("16076")).matches(&r));
        assert!(filter(None, None, Some("jfgui-agent")).matches(&r));
        assert!(!filter(None, None, Some("claude")).matches(&r));
        let dropped = parse(r#"{"time":"2026-12-01T14:30:00.000Z","dropped":3}"#);
        assert!(filter(Some("sketch"), None, Some("1")).matches(&dropped));
    }

    #[test]
    fn bad_since_is_a_usage_error() {
        for bad in ["", "5", "5w", "yesterday", "-1h"] {
            assert!(parse_since(bad, 0).is_err(), "{bad}");
        }
        assert_eq!(parse_since("2s", 5_000).unwrap(), 3_000);
    }

    #[test]
    fn a_row_says_who_did_what_where_and_how_it_ended() {
        let row = cells(&parse(RECORD));
        assert_eq!(row[1], "jfgui-agent[16076]");
        assert_eq!(row[2], "notepad");
        assert_eq!(row[3], "document.text.insert");
        // Refused: the revision it left unchanged, once.
        assert_eq!(row[4], "2");
        assert_eq!(row[5], "refused: stale_revision");
        let applied = RECORD.replace(
            r#""outcome":{"refused":{"class":"not_executed","reason":"stale_revision"}}"#,
            r#""outcome":"ok""#,
        );
        assert_eq!(cells(&parse(&applied))[4], "0 → 2");
    }

    #[test]
    fn a_row_names_the_agent_and_who_allowed_it() {
        let asked = RECORD
            .replace(
                r#""transport":"endpoint","#,
                r#""transport":"endpoint","agent":{"exe":"/opt/bin/launcher","pid":77},"#,
            )
            .replace(
                r#""durationUs""#,
                r#""consent":{"asked":true,"answer":"allow_always","by":"user"},"durationUs""#,
            );
        let row = cells(&parse(&asked));
        assert_eq!(row[1], "launcher[77]");
        assert!(row[5].ends_with("; user: allow_always"), "{}", row[5]);
        assert!(filter(None, None, Some("launcher")).matches(&parse(&asked)));
        assert!(filter(None, None, Some("77")).matches(&parse(&asked)));
        let granted = RECORD.replace(
            r#""durationUs""#,
            r#""consent":{"asked":false,"by":"grant(3)"},"durationUs""#,
        );
        assert!(cells(&parse(&granted))[5].ends_with("; allowed by grant(3)"));
    }
}
