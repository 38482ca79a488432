//! Durable state and the mutation ledger, both outside the runtime dir.
//!
//! The state file is replaced on every commit by writing a temporary file, fsyncing it,
//! renaming it over the old one and fsyncing the directory, so after a crash it holds exactly
//! the last committed state. The ledger gets one fsynced line per applied mutation:
//! `request-id action revision-before revision-after committed|rolled-back`.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use jfgui_proto::{Limits, Map, Value, encode, parse};

/// The app's state.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct State {
    /// A counter.
    pub counter: i64,
    /// Appended text.
    pub text: String,
    /// Moves by one per applied mutation.
    pub revision: u64,
}

impl State {
    /// Reads `path`, or the initial state (revision 0) when it does not exist.
    pub fn load(path: Option<&Path>) -> io::Result<State> {
        let Some(path) = path else { return Ok(State::default()) };
        let bytes = match std::fs::read(path) {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(State::default()),
            Err(e) => return Err(e),
        };
        let bad = |what: &str| {
            io::Error::new(io::ErrorKind::InvalidData, format!("{}: {what}", path.display()))
        };
        let v = parse(&bytes, &Limits::DEFAULT).map_err(|e| bad(&e.to_string()))?;
        Ok(State {
            counter: v.get("counter").and_then(Value::as_i64).ok_or_else(|| bad("counter"))?,
            text: v.get("text").and_then(Value::as_str).ok_or_else(|| bad("text"))?.to_string(),
            revision: v.get("revision").and_then(Value::as_u64).ok_or_else(|| bad("revision"))?,
        })
    }

    /// Replaces `path` atomically with this state.
    pub fn save(&self, path: &Path) -> io::Result<()> {
        let mut m = Map::new();
        m.insert("counter", self.counter);
        m.insert("text", self.text.as_str());
        m.insert("revision", self.revision);
        let bytes = encode(&Value::Object(m), &Limits::DEFAULT)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e.to_string()))?;
        let tmp = temp_path(path);
        {
            let mut f = File::create(&tmp)?;
            f.write_all(&bytes)?;
            f.sync_all()?;
        }
        std::fs::rename(&tmp, path)?;
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            File::open(dir)?.sync_all()?;
        }
        Ok(())
    }
}

fn temp_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().map(|n| n.to_os_string()).unwrap_or_default();
    name.push(".tmp");
    path.with_file_name(name)
}

/// One ledger line before its verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The input's `tag` if given, else `d<daemon request id>[.<batch index>]`.
    pub request: String,
    /// The action.
    pub action: String,
    /// Revision before the mutation.
    pub before: u64,
    /// Revision after it.
    pub after: u64,
}

/// The append-only ledger (absent when no `--ledger` was given).
#[derive(Debug)]
pub struct Ledger {
    file: Option<File>,
}

impl Ledger {
    /// Opens `path` for appending.
    pub fn open(path: Option<&Path>) -> io::Result<Ledger> {
        let file = match path {
            Some(p) => Some(OpenOptions::new().create(true).append(true).open(p)?),
            None => None,
        };
        Ok(Ledger { file })
    }

    /// Appends and fsyncs one line per entry.
    pub fn write(&mut self, entries: &[Entry], verdict: &str) -> io::Result<()> {
        let Some(f) = self.file.as_mut() else { return Ok(()) };
        if entries.is_empty() {
            return Ok(());
        }
        let mut text = String::new();
        for e in entries {
            text.push_str(&format!(
                "{} {} {} {} {verdict}\n",
                e.request, e.action, e.before, e.after
            ));
        }
        f.write_all(text.as_bytes())?;
        f.sync_data()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_round_trips_and_ledger_appends() {
        let dir = std::env::temp_dir().join(format!("jfgui-testapp-store-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("state.json");
        assert_eq!(State::load(Some(&path)).unwrap(), State::default());
        let s = State { counter: -3, text: "a\nb".into(), revision: 9 };
        s.save(&path).unwrap();
        assert_eq!(State::load(Some(&path)).unwrap(), s);
        assert!(!temp_path(&path).exists());

        let lpath = dir.join("ledger");
        let mut l = Ledger::open(Some(&lpath)).unwrap();
        let e = Entry { request: "t1".into(), action: "counter.add".into(), before: 0, after: 1 };
        l.write(std::slice::from_ref(&e), "committed").unwrap();
        l.write(&[e], "rolled-back").unwrap();
        assert_eq!(
            std::fs::read_to_string(&lpath).unwrap(),
            "t1 counter.add 0 1 committed\nt1 counter.add 0 1 rolled-back\n"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
