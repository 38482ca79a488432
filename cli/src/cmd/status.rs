//! `jfgui-agent status`: the daemon's own status (`daemon/status` on the control socket).

use clap::Args;
use jfgui_proto::{Map, Value};

use super::{Context, JsonFlag, daemon};
use crate::client::{Client, Peer};
use crate::exit::Failure;
use crate::output::{Format, print_json, print_text};

/// Arguments of `status`.
#[derive(Debug, Args)]
pub struct StatusArgs {
    #[command(flatten)]
    pub out: JsonFlag,
}

/// Prints `{version, pid, uptimeMs, runtimeDir, apps, clients}`, the registration budget's use
/// and the audit log.
pub async fn run(ctx: Context, format: Format) -> Result<(), Failure> {
    let daemon = daemon()?;
    let mut control = Client::connect(daemon.control(), Peer::Control, ctx.timeout).await?;
    let result = control.request("daemon/status", Map::new()).await?;
    if format == Format::Json {
        return print_json(&Value::Object(result));
    }
    print_text(&render(&result))
}

fn render(status: &Map) -> String {
    let field = |k: &str| match status.get(k) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        Some(Value::Array(a)) => a.len().to_string(),
        // Windows: the daemon has no runtime dir (its endpoints are named pipes).
        Some(Value::Null) => String::from("none"),
        _ => String::from("?"),
    };
    let uptime =
        status.get("uptimeMs").and_then(Value::as_u64).map_or_else(|| String::from("?"), duration);
    format!(
        "jfgui-agentd {} (pid {}), up {uptime}\nruntime dir: {}\napps: {}\nclients: {}{}{}",
        field("version"),
        field("pid"),
        field("runtimeDir"),
        field("apps"),
        field("clients"),
        match (bytes(status, "registrationBytes"), bytes(status, "registrationBudget")) {
            (Some(used), Some(budget)) => format!("\nregistrations: {used} of {budget}"),
            _ => String::new(),
        },
        match status.get("auditDir") {
            Some(_) =>
                format!("\naudit log: {} ({} dropped)", field("auditDir"), field("auditDropped")),
            None => String::new(),
        },
    )
}

/// A byte count of `status`, in KiB or MiB with one decimal.
fn bytes(status: &Map, key: &str) -> Option<String> {
    let n = status.get(key)?.as_u64()?;
    let kib = n as f64 / 1024.0;
    Some(if kib < 1024.0 { format!("{kib:.1} KiB") } else { format!("{:.1} MiB", kib / 1024.0) })
}

fn duration(ms: u64) -> String {
    let s = ms / 1000;
    match (s / 3600, s / 60 % 60, s % 60) {
        (0, 0, sec) => format!("{sec}s"),
        (0, min, sec) => format!("{min}m {sec}s"),
        (h, min, _) => format!("{h}h {min}m"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uptime_reads_well() {
        assert_eq!(duration(999), "0s");
        assert_eq!(duration(61_000), "1m 1s");
        assert_eq!(duration(7_380_000), "2h 3m");
    }

    #[test]
    fn status_text_names_every_field() {
        let mut m = Map::new();
        m.insert("version", "0.1.0");
        m.insert("pid", 42u64);
        m.insert("uptimeMs", 5000u64);
        m.insert("runtimeDir", "/rt");
        m.insert("apps", 2u64);
        m.insert("clients", 1u64);
        assert_eq!(
            render(&m),
            "jfgui-agentd 0.1.0 (pid 42), up 5s\nruntime dir: /rt\napps: 2\nclients: 1"
        );
        m.insert("runtimeDir", Value::Null);
        assert!(render(&m).contains("runtime dir: none\n"), "{}", render(&m));
        m.insert("registrationBytes", 4_404_019u64);
        m.insert("registrationBudget", 64u64 << 20);
        assert!(render(&m).ends_with("\nregistrations: 4.2 MiB of 64.0 MiB"), "{}", render(&m));
        m.insert("registrationBytes", 2048u64);
        assert!(render(&m).ends_with("\nregistrations: 2.0 KiB of 64.0 MiB"), "{}", render(&m));
    }
}
