//! The web Notepad's state behind the wasm exports: the shared Notepad model, its dispatcher
//! inside host-sdk's bridge channel, the page's clock, and the user's own edits.
//!
//! The user types into a `<textarea>`; the page hands over the whole new text and selection,
//! and [`Page::user_edit`] turns the difference into `document.text.replace` and
//! `selection.set` through [`Dispatcher::execute_local`](jfgui_host_sdk::Dispatcher): the same
//! model, schemas and revision as an agent's call, without the agent-only checks (the enabled
//! switch and `expectedRevision`), so every keystroke moves the revision an agent must name.

use std::cell::Cell;
use std::rc::Rc;
use std::time::Duration;

use jfgui_example_notepad::{Clock, Notepad, Selection};
use jfgui_host_sdk::bridge::BridgeChannel;
use jfgui_host_sdk::bridge::web::WebApp;
use jfgui_host_sdk::channel::Identity;
use jfgui_host_sdk::{ActionError, Dispatcher, Host, Map, Value};

/// The name agents see; the daemon derives the slug `web-notepad` from it.
pub const DISPLAY_NAME: &str = "Web Notepad";

/// How long `document.export` runs (the native default of `--export-ms`).
pub const EXPORT_TIME: Duration = Duration::from_millis(2000);

/// The page's time as the page last told it (`performance.now()`); the export task reads it.
#[derive(Debug, Clone, Default)]
struct PageClock(Rc<Cell<Duration>>);

impl Clock for PageClock {
    fn now(&self) -> Duration {
        self.0.get()
    }
}

/// One page's Notepad and its link to the bridge.
#[derive(Debug)]
pub struct Page {
    app: Notepad,
    link: BridgeChannel,
    clock: PageClock,
}

impl Page {
    /// A page holding `text`, agent access off until [`Page::set_enabled`].
    pub fn new(text: &str) -> Result<Page, String> {
        let clock = PageClock::default();
        let app =
            Notepad::new(text, EXPORT_TIME, Box::new(clock.clone())).map_err(|e| e.message)?;
        let dispatcher = Dispatcher::new(&app).map_err(|e| e.to_string())?;
        let identity = Identity { display_name: DISPLAY_NAME.into(), pid: 0 };
        Ok(Page { app, link: BridgeChannel::new(dispatcher, identity), clock })
    }

    /// The user's edit: the textarea now holds `text` with `selection` (character offsets).
    /// Returns whether the document changed; on an error (the text would be too long, say)
    /// the document is as before and the page shows it again.
    pub fn user_edit(&mut self, text: &str, selection: Selection) -> Result<bool, ActionError> {
        let before = self.app.revision();
        if let Some((start, end, inserted)) = difference(self.app.text(), text) {
            let mut input = Map::with_capacity(3);
            input.insert("start", start as u64);
            input.insert("end", end as u64);
            input.insert("text", inserted);
            self.local("document.text.replace", input)?;
        }
        if self.app.selection() != selection {
            let mut input = Map::with_capacity(2);
            input.insert("start", selection.start as u64);
            input.insert("end", selection.end as u64);
            self.local("selection.set", input)?;
        }
        Ok(self.app.revision() != before)
    }

    fn local(&mut self, action: &str, input: Map) -> Result<(), ActionError> {
        let dispatcher = self.link.dispatcher_mut();
        dispatcher.execute_local(&mut self.app, action, &Value::Object(input)).map(drop)
    }

    /// What the page shows, as JSON: `{"text", "selection": {"start", "end"}, "revision",
    /// "enabled"}` (offsets in characters).
    pub fn view(&self) -> Vec<u8> {
        let mut selection = Map::with_capacity(2);
        selection.insert("start", self.app.selection().start as u64);
        selection.insert("end", self.app.selection().end as u64);
        let mut view = Map::with_capacity(4);
        view.insert("text", self.app.text());
        view.insert("selection", selection);
        view.insert("revision", self.app.revision());
        view.insert("enabled", self.link.dispatcher().is_enabled());
        let limits = jfgui_proto::Limits { max_bytes: usize::MAX, ..jfgui_proto::Limits::DEFAULT };
        // The document is bounded well within the default value limits; only the byte bound
        // is lifted, for the escapes a large text may need.
        jfgui_proto::encode(&Value::Object(view), &limits).unwrap_or_default()
    }
}

impl WebApp for Page {
    fn parts(&mut self) -> (&mut BridgeChannel, &mut dyn Host) {
        (&mut self.link, &mut self.app)
    }

    /// The page's clock is monotonic: an earlier time than the last is ignored.
    fn set_time(&mut self, now: Duration) {
        if now > self.clock.0.get() {
            self.clock.0.set(now);
        }
    }
}

/// The smallest replacement turning `old` into `new`: `(start, end, text)` in characters, or
/// `None` when they are equal. The common prefix is taken first, so typing the same letter
/// twice in a row is seen as an insertion after the first.
fn difference<'a>(old: &str, new: &'a str) -> Option<(usize, usize, &'a str)> {
    if old == new {
        return None;
    }
    let (mut prefix_chars, mut prefix_bytes) = (0, 0);
    for (a, b) in old.chars().zip(new.chars()) {
        if a != b {
            break;
        }
        prefix_chars += 1;
        prefix_bytes += a.len_utf8();
    }
    let (old_rest, new_rest) = (&old[prefix_bytes..], &new[prefix_bytes..]);
    let (mut suffix_chars, mut suffix_bytes) = (0, 0);
    for (a, b) in old_rest.chars().rev().zip(new_rest.chars().rev()) {
        if a != b {
            break;
        }
        suffix_chars += 1;
        suffix_bytes += a.len_utf8();
    }
    let end = prefix_chars + old_rest.chars().count() - suffix_chars;
    Some((prefix_chars, end, &new_rest[..new_rest.len() - suffix_bytes]))
}

#[cfg(test)]
mod tests;
