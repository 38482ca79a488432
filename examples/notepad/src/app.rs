//! The notepad as a [`Host`]: actions mapped onto the document, inspection with
//! `sinceRevision`, the `document` transaction domain, the export task and the resources.
//! Having no window, it shows the daemon's `activity` notices ("last agent action") as lines
//! on stderr, at most one write per [`REFRESH_INTERVAL`](crate::status::REFRESH_INTERVAL)
//! ([`AgentStatus`]).

use std::fmt;
use std::time::Duration;

use jfgui_host_sdk::{
    ActionError, ActionSpec, Activity, Answer, Confirmation, Context, Execution, Host, Map,
    Property, Reason, ResourceBytes, ResourceInfo, Schema, TaskTable, Value, schema,
};

use crate::actions::{ACTIONS, DOCUMENT};
use crate::document::{Document, Selection};
use crate::export::{Clock, EXPORT_MIME, EXPORT_URI, Exports};
use crate::render::{Rendering, render};
use crate::status::AgentStatus;

/// The PNG `ui.render` produces.
pub const RENDER_URI: &str = "render://view.png";

static INSPECT_INPUT: Schema = Schema::Object {
    properties: &[Property { name: "sinceRevision", schema: &schema::UNSIGNED, required: false }],
    additional: false,
};

/// Who answers when a call needs the user's yes (`document.clear`): the binary's terminal
/// prompt or its `--confirm allow|deny`. A notepad without one cannot ask, so such calls never
/// run (`no_confirmation_ui`).
pub trait Prompter: fmt::Debug {
    /// Asks about `confirmation`: the answer now, or `None` when it is shown and the answer
    /// comes later ([`Dispatcher::answer`](jfgui_host_sdk::Dispatcher::answer)).
    fn ask(&mut self, confirmation: &Confirmation) -> Option<Answer>;
    /// The prompt for `ticket` is withdrawn: stop asking.
    fn withdraw(&mut self, ticket: &str);
}

/// The app: a document, its exports and the last rendering.
#[derive(Debug)]
pub struct Notepad {
    doc: Document,
    clock: Box<dyn Clock>,
    exports: Exports,
    exported: Option<Vec<u8>>,
    view: Option<Rendering>,
    /// The "last agent action" display.
    status: AgentStatus,
    prompter: Option<Box<dyn Prompter>>,
}

impl Notepad {
    /// A notepad holding `text`, whose exports take `export_time` as told by `clock`.
    pub fn new(
        text: &str,
        export_time: Duration,
        clock: Box<dyn Clock>,
    ) -> Result<Notepad, ActionError> {
        Ok(Notepad {
            doc: Document::new(text)?,
            clock,
            exports: Exports::new(export_time),
            exported: None,
            view: None,
            status: AgentStatus::default(),
            prompter: None,
        })
    }

    /// The same notepad, asking `prompter` when a call needs the user's yes.
    pub fn with_prompter(self, prompter: Box<dyn Prompter>) -> Notepad {
        Notepad { prompter: Some(prompter), ..self }
    }

    /// The document (tests look at it directly).
    #[cfg(test)]
    pub fn document(&self) -> &Document {
        &self.doc
    }

    /// The text, for a view of it (edits go through the actions).
    pub fn text(&self) -> &str {
        self.doc.text()
    }

    /// The selection, for a view of it.
    pub fn selection(&self) -> Selection {
        self.doc.selection()
    }

    fn summary(&self) -> Value {
        let mut m = Map::new();
        m.insert("length", self.doc.len() as u64);
        m.insert("selection", selection(self.doc.selection()));
        Value::Object(m)
    }

    fn edit(&mut self, name: &str, input: &Value) -> Result<(), ActionError> {
        let pos = |key: &str| {
            // The schema guarantees a non-negative integer; one beyond usize is simply out of
            // range for any document.
            input
                .get(key)
                .and_then(Value::as_u64)
                .map_or(usize::MAX, |n| usize::try_from(n).unwrap_or(usize::MAX))
        };
        let text = || input.get("text").and_then(Value::as_str).unwrap_or("");
        match name {
            "document.text.insert" => self.doc.insert(text()),
            "document.text.replace" => self.doc.replace(pos("start"), pos("end"), text()),
            "document.text.delete" => self.doc.delete(pos("start"), pos("end")),
            "selection.set" => self.doc.select(pos("start"), pos("end")),
            "document.clear" => self.doc.delete(0, self.doc.len()),
            "edit.undo" => self.doc.undo(),
            "edit.redo" => self.doc.redo(),
            other => Err(ActionError::new(
                Reason::UnknownAction { action: other.to_string(), suggestions: Vec::new() },
                format!("the notepad has no action named {other:?}"),
            )),
        }
    }

    fn render_view(&mut self, scale: u32) -> &Rendering {
        self.view.insert(render(self.doc.text(), self.doc.selection(), scale))
    }
}

fn selection(s: Selection) -> Value {
    let mut m = Map::new();
    m.insert("start", s.start as u64);
    m.insert("end", s.end as u64);
    Value::Object(m)
}

impl Host for Notepad {
    fn actions(&self) -> &[ActionSpec] {
        ACTIONS
    }

    fn revision(&self) -> u64 {
        self.doc.revision()
    }

    /// The notepad's actions need no capability bits, and it has no platform layer granting
    /// any.
    fn capabilities(&self) -> u64 {
        0
    }

    fn execute(
        &mut self,
        cx: &mut Context<'_>,
        action: &ActionSpec,
        input: &Value,
    ) -> Result<Execution, ActionError> {
        match action.name {
            "document.get" => {
                let mut m = Map::new();
                m.insert("text", self.doc.text());
                m.insert("length", self.doc.len() as u64);
                m.insert("selection", selection(self.doc.selection()));
                Ok(Execution::Output(Value::Object(m)))
            }
            "document.export" => {
                let id = self.exports.start(
                    cx.tasks(),
                    self.doc.text(),
                    self.doc.revision(),
                    self.clock.now(),
                )?;
                Ok(Execution::Deferred(id))
            }
            "ui.render" => {
                let scale = input.get("scale").and_then(Value::as_u64).unwrap_or(1) as u32;
                let view = self.render_view(scale);
                let mut m = Map::new();
                m.insert("uri", RENDER_URI);
                m.insert("mimeType", "image/png");
                m.insert("width", view.width);
                m.insert("height", view.height);
                m.insert("size", view.png.len() as u64);
                Ok(Execution::Output(Value::Object(m)))
            }
            name => {
                self.edit(name, input)?;
                Ok(Execution::Output(self.summary()))
            }
        }
    }

    fn inspect(&mut self, input: &Value) -> Result<Value, ActionError> {
        INSPECT_INPUT.validate(input).map_err(|v| {
            ActionError::new(
                Reason::SchemaViolation { pointer: v.pointer },
                format!("state/inspect takes {{\"sinceRevision\"?: integer}}: {}", v.message),
            )
        })?;
        let mut m = Map::new();
        if input.get("sinceRevision").and_then(Value::as_u64) == Some(self.doc.revision()) {
            m.insert("unchanged", true);
        } else {
            m.insert("text", self.doc.text());
            m.insert("selection", selection(self.doc.selection()));
            m.insert("undoDepth", self.doc.undo_depth() as u64);
        }
        Ok(Value::Object(m))
    }

    fn supports_transaction(&self, domain: &str) -> bool {
        domain == DOCUMENT
    }

    fn begin_transaction(&mut self, _domains: &[&str]) -> Result<(), ActionError> {
        self.doc.begin();
        Ok(())
    }

    fn commit_transaction(&mut self) {
        self.doc.commit();
    }

    fn rollback_transaction(&mut self) {
        self.doc.rollback();
    }

    fn resources(&mut self) -> Vec<ResourceInfo> {
        let mut out = vec![ResourceInfo {
            uri: RENDER_URI.into(),
            name: "view.png".into(),
            mime_type: "image/png".into(),
            size: self.view.as_ref().map(|v| v.png.len() as u64),
        }];
        if let Some(bytes) = &self.exported {
            out.push(ResourceInfo {
                uri: EXPORT_URI.into(),
                name: "document.txt".into(),
                mime_type: EXPORT_MIME.into(),
                size: Some(bytes.len() as u64),
            });
        }
        out
    }

    fn resource(&mut self, uri: &str) -> Option<ResourceBytes<'_>> {
        match uri {
            RENDER_URI => {
                // Chunked reads need stable bytes: render once, then serve that rendering
                // until the next ui.render.
                if self.view.is_none() {
                    self.render_view(1);
                }
                self.view.as_ref().map(|v| ResourceBytes { mime_type: "image/png", bytes: &v.png })
            }
            EXPORT_URI => {
                self.exported.as_deref().map(|b| ResourceBytes { mime_type: EXPORT_MIME, bytes: b })
            }
            _ => None,
        }
    }

    fn tick(&mut self, tasks: &mut TaskTable) -> Option<Duration> {
        let now = self.clock.now();
        let mut produced = None;
        let next = self.exports.tick(tasks, now, |bytes| produced = Some(bytes));
        if let Some(bytes) = produced {
            self.exported = Some(bytes);
        }
        self.show_status(now);
        match (next, self.status.due_in(now)) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn activity(&mut self, activity: &Activity) {
        self.status.record(activity);
        // An idle display shows it at once; otherwise the next tick does, when it is due.
        self.show_status(self.clock.now());
    }

    fn confirm(&mut self, confirmation: &Confirmation) -> Option<Answer> {
        match &mut self.prompter {
            Some(prompter) => prompter.ask(confirmation),
            None => Some(Answer::NoUi),
        }
    }

    fn withdraw_confirmation(&mut self, ticket: &str) {
        if let Some(prompter) = &mut self.prompter {
            prompter.withdraw(ticket);
        }
    }
}

impl Notepad {
    /// Writes the "last agent action" lines when a refresh is due: one write for all of them
    /// (stderr is unbuffered).
    fn show_status(&mut self, now: Duration) {
        if let Some(text) = self.status.refresh(now) {
            let _ = std::io::Write::write_all(&mut std::io::stderr().lock(), text.as_bytes());
        }
    }
}

#[cfg(test)]
mod tests;
