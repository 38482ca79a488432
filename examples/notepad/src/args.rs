//! Command-line flags, parsed by hand: seven flags do not need a parser crate.

use std::ffi::OsString;
use std::time::Duration;

/// The usage text (`--help`, and after a usage error).
pub const USAGE: &str = "\
usage: jfgui-notepad [--agent-enable] [--agent-stdio] [--no-activity] [--confirm ask|allow|deny]
                     [--name NAME] [--export-ms N] [--text TEXT] [--let-agents-start on|off]

  --agent-enable   enable agent access (without it the app registers disabled)
  --confirm MODE   how a call that needs your yes (document.clear) is answered: ask (default:
                   a prompt on this terminal, answered y/a/n; without a terminal nothing runs),
                   allow or deny (answered at once, for tests)
  --agent-stdio    speak the host channel on stdin/stdout (same as JFGUI_HOST_CHANNEL=stdio;
                   headless, and enabled)
  --no-activity    do not ask the daemon for `activity` notices (no \"last agent action\" line)
  --name NAME      display name (default: Notepad)
  --export-ms N    how long document.export runs, in milliseconds (default: 2000)
  --text TEXT      initial document (default: empty)
  --let-agents-start on|off
                   let agents start this Notepad (with the other flags given) when they call it,
                   or stop letting them: writes or removes its launch file, then exits. Started
                   so, it turns agent access on (JFGUI_ACTIVATED=1)";

/// Validated flags.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Args {
    /// `--agent-enable`.
    pub agent_enable: bool,
    /// `--agent-stdio`.
    pub agent_stdio: bool,
    /// Not `--no-activity`: ask for the daemon's `activity` notices.
    pub activity: bool,
    /// `--name`.
    pub name: String,
    /// `--export-ms`.
    pub export_time: Duration,
    /// `--text`.
    pub text: String,
    /// `--confirm`.
    pub confirm: Confirm,
    /// `--let-agents-start on|off`.
    pub let_agents_start: Option<bool>,
}

/// `--confirm`: who answers a call that needs the user's yes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Confirm {
    /// Ask on the terminal.
    Ask,
    /// Allow every such call at once.
    Allow,
    /// Deny every such call at once.
    Deny,
}

/// What the command line asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// Run.
    Run(Args),
    /// Print the usage and exit 0.
    Help,
}

/// Parses the arguments after the program name; `Err` is a one-line usage error.
pub fn parse(args: impl IntoIterator<Item = OsString>) -> Result<Command, String> {
    let mut out = Args {
        agent_enable: false,
        agent_stdio: false,
        activity: true,
        name: "Notepad".into(),
        export_time: Duration::from_millis(2000),
        text: String::new(),
        confirm: Confirm::Ask,
        let_agents_start: None,
    };
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let arg = arg.into_string().map_err(|a| format!("argument {a:?} is not valid UTF-8"))?;
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f.to_string(), Some(v.to_string())),
            _ => (arg, None),
        };
        let mut value = |name: &str| -> Result<String, String> {
            match inline.clone() {
                Some(v) => Ok(v),
                None => args
                    .next()
                    .ok_or_else(|| format!("{name} needs a value"))?
                    .into_string()
                    .map_err(|a| format!("the value of {name} ({a:?}) is not valid UTF-8")),
            }
        };
        match flag.as_str() {
            "--agent-enable" if inline.is_none() => out.agent_enable = true,
            "--agent-stdio" if inline.is_none() => out.agent_stdio = true,
            "--no-activity" if inline.is_none() => out.activity = false,
            "--name" => out.name = value("--name")?,
            "--text" => out.text = value("--text")?,
            "--confirm" => {
                out.confirm = match value("--confirm")?.as_str() {
                    "ask" => Confirm::Ask,
                    "allow" => Confirm::Allow,
                    "deny" => Confirm::Deny,
                    other => {
                        return Err(format!("--confirm takes ask, allow or deny, not {other:?}"));
                    }
                }
            }
            "--let-agents-start" => {
                out.let_agents_start = match value("--let-agents-start")?.as_str() {
                    "on" => Some(true),
                    "off" => Some(false),
                    other => {
                        return Err(format!("--let-agents-start takes on or off, not {other:?}"));
                    }
                }
            }
            "--export-ms" => {
                let v = value("--export-ms")?;
                let ms: u64 =
                    v.parse().map_err(|_| format!("--export-ms takes milliseconds, not {v:?}"))?;
                out.export_time = Duration::from_millis(ms);
            }
            "-h" | "--help" => return Ok(Command::Help),
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    Ok(Command::Run(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(args: &[&str]) -> Result<Command, String> {
        parse(args.iter().map(OsString::from))
    }

    #[test]
    fn flags() {
        let Command::Run(a) =
            run(&["--agent-enable", "--name", "Notepad 2", "--export-ms=50", "--text", "hi"])
                .unwrap()
        else {
            panic!()
        };
        assert!(a.agent_enable && !a.agent_stdio && a.activity);
        assert_eq!(
            (a.name.as_str(), a.export_time, a.text.as_str()),
            ("Notepad 2", Duration::from_millis(50), "hi")
        );
        let Command::Run(d) = run(&[]).unwrap() else { panic!() };
        assert_eq!((d.name.as_str(), d.export_time), ("Notepad", Duration::from_millis(2000)));
        assert_eq!(run(&["--help"]).unwrap(), Command::Help);
        let Command::Run(q) = run(&["--no-activity"]).unwrap() else { panic!() };
        assert!(!q.activity);
        assert_eq!(q.confirm, Confirm::Ask, "asking is the default");
        let Command::Run(c) = run(&["--confirm", "deny"]).unwrap() else { panic!() };
        assert_eq!(c.confirm, Confirm::Deny);
        let Command::Run(c) = run(&["--confirm=allow"]).unwrap() else { panic!() };
        assert_eq!(c.confirm, Confirm::Allow);
    }

    #[test]
    fn usage_errors() {
        assert!(run(&["--bogus"]).unwrap_err().contains("--bogus"));
        assert!(run(&["--name"]).unwrap_err().contains("needs a value"));
        assert!(run(&["--export-ms", "soon"]).is_err());
        assert!(run(&["--agent-enable=yes"]).is_err());
        assert!(run(&["--let-agents-start", "maybe"]).is_err());
        let Command::Run(a) = run(&["--let-agents-start=off"]).unwrap() else { panic!() };
        assert_eq!(a.let_agents_start, Some(false));
        assert!(run(&["--no-activity=yes"]).is_err());
        assert!(run(&["--confirm", "maybe"]).unwrap_err().contains("ask, allow or deny"));
        assert!(run(&["--confirm"]).unwrap_err().contains("needs a value"));
    }
}
