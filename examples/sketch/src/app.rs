//! Sketch as a [`Host`]: actions mapped onto the canvas, inspection with `sinceRevision`, the
//! `canvas` transaction domain, the SVG export task, the PNG rendering, the resources, the
//! feed of agent activity the window shows, and the calls waiting for the user's yes (the
//! window shows the first as a modal). No GUI types: the window owns a `Sketch` and tells it
//! where things are on screen ([`Layout`]); the tests drive it without a window.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use jfgui_host_sdk::{
    ActionError, ActionSpec, Answer, Confirmation, Context, Execution, Host, Map, Property, Reason,
    ResourceBytes, ResourceInfo, Schema, TaskTable, Value, schema,
};

use crate::actions::{ACTIONS, CANVAS};
use crate::activity::{Activity, ActivityFeed};
use crate::canvas::Canvas;
use crate::codec;
use crate::export::{EXPORT_MIME, EXPORT_URI, Exports};
use crate::frames::FrameStats;
use crate::render::{Rendering, pixels_per_unit, render};

/// The PNG `ui.render` produces.
pub const RENDER_URI: &str = "render://canvas.png";
/// The canvas size in units.
pub const CANVAS_SIZE: (u32, u32) = (640, 400);

static INSPECT_INPUT: Schema = Schema::Object {
    properties: &[Property { name: "sinceRevision", schema: &schema::UNSIGNED, required: false }],
    additional: false,
};

/// A rectangle in window coordinates, physical pixels.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct PixelRect {
    /// Left edge.
    pub x: f32,
    /// Top edge.
    pub y: f32,
    /// Width.
    pub width: f32,
    /// Height.
    pub height: f32,
}

/// Where the user sees things, as the window last drew them. Reported by `state/inspect` as
/// `view`, so tools that take screenshots (the GUI test suite) know where to look without
/// guessing from pixels.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Layout {
    /// Screen points per canvas unit.
    pub zoom: f32,
    /// Physical pixels per screen point.
    pub pixels_per_point: f32,
    /// The canvas's paper.
    pub canvas: PixelRect,
    /// The "Agent access" toggle.
    pub agent_toggle: PixelRect,
    /// The confirmation modal, while one is shown.
    pub prompt: Option<PromptLayout>,
}

/// Where the confirmation modal and its buttons are, for a test that clicks them.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PromptLayout {
    /// The call it asks about.
    pub ticket: String,
    /// The whole dialog.
    pub dialog: PixelRect,
    /// "Allow once".
    pub allow_once: PixelRect,
    /// "Always allow `<agent>`", when offered.
    pub always: Option<PixelRect>,
    /// "Deny".
    pub deny: PixelRect,
}

/// The app: the drawing, its exports, the last rendering and what agents did.
#[derive(Debug)]
pub struct Sketch {
    canvas: Canvas,
    exports: Exports,
    exported: Option<Vec<u8>>,
    rendering: Option<Rendering>,
    activity: ActivityFeed,
    layout: Option<Layout>,
    frames: FrameStats,
    /// Whether a window asks the user (headless, nobody could answer).
    asks: bool,
    /// Calls waiting for the user's answer, oldest first.
    prompts: VecDeque<Confirmation>,
}

impl Sketch {
    /// An empty drawing whose exports take `export_time`.
    pub fn new(export_time: Duration) -> Sketch {
        Sketch {
            canvas: Canvas::new(CANVAS_SIZE.0, CANVAS_SIZE.1),
            exports: Exports::new(export_time),
            exported: None,
            rendering: None,
            activity: ActivityFeed::default(),
            layout: None,
            frames: FrameStats::default(),
            asks: false,
            prompts: VecDeque::new(),
        }
    }

    /// The same app with a window that asks the user when a call needs their yes.
    pub fn asking(self) -> Sketch {
        Sketch { asks: true, ..self }
    }

    /// The call the window asks about now.
    pub fn prompt(&self) -> Option<&Confirmation> {
        self.prompts.front()
    }

    /// The user answered `ticket`: its prompt closes.
    pub fn answered(&mut self, ticket: &str) {
        self.prompts.retain(|c| c.ticket != ticket);
    }

    /// The drawing.
    pub fn canvas(&self) -> &Canvas {
        &self.canvas
    }

    /// What agents did.
    pub fn activity(&self) -> &ActivityFeed {
        &self.activity
    }

    /// The window reports where it drew things.
    pub fn set_layout(&mut self, layout: Layout) {
        self.layout = Some(layout);
    }

    /// The window's frame timings.
    pub fn frames_mut(&mut self) -> &mut FrameStats {
        &mut self.frames
    }

    fn apply(&mut self, name: &str, input: &Value) -> Result<Option<u64>, ActionError> {
        let c = &mut self.canvas;
        match name {
            "shape.add" => return c.add(codec::shape_input(input)?).map(Some),
            "shape.update" => {
                let (id, patch) = codec::patch_input(input)?;
                c.update(id, &patch)?
            }
            "shape.delete" => c.delete(codec::id_input(input))?,
            "canvas.clear" => c.clear()?,
            "edit.undo" => c.undo()?,
            "edit.redo" => c.redo()?,
            other => {
                return Err(ActionError::new(
                    Reason::UnknownAction { action: other.to_string(), suggestions: Vec::new() },
                    format!("Sketch has no action named {other:?}"),
                ));
            }
        }
        Ok(None)
    }
}

impl Host for Sketch {
    fn actions(&self) -> &[ActionSpec] {
        ACTIONS
    }

    fn revision(&self) -> u64 {
        self.canvas.revision()
    }

    /// Sketch's actions need no capability bits, and it has no platform layer granting any.
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
            "canvas.get" => Ok(Execution::Output(codec::canvas_value(&self.canvas))),
            "document.export" => {
                let id = self.exports.start(cx.tasks(), &self.canvas, Instant::now())?;
                Ok(Execution::Deferred(id))
            }
            "ui.render" => {
                let scale = input.get("scale").and_then(Value::as_u64).unwrap_or(1) as u32;
                let max_width = input.get("maxWidth").and_then(Value::as_u64);
                let max_width = max_width.map(|w| u32::try_from(w).unwrap_or(u32::MAX));
                let scale = pixels_per_unit(&self.canvas, scale, max_width);
                let r = self.rendering.insert(render(&self.canvas, scale));
                let mut m = Map::new();
                m.insert("uri", RENDER_URI);
                m.insert("mimeType", "image/png");
                m.insert("width", r.width);
                m.insert("height", r.height);
                m.insert("size", r.png.len() as u64);
                Ok(Execution::Output(Value::Object(m)))
            }
            name => {
                let id = self.apply(name, input)?;
                Ok(Execution::Output(codec::summary(&self.canvas, id)))
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
        if input.get("sinceRevision").and_then(Value::as_u64) == Some(self.canvas.revision()) {
            m.insert("unchanged", true);
        } else {
            m.insert("canvas", codec::canvas_value(&self.canvas));
        }
        if let Some(layout) = &self.layout {
            let mut view = layout_value(layout);
            if let (Value::Object(v), Some(frames)) = (&mut view, self.frames.value()) {
                v.insert("frames", frames);
            }
            m.insert("view", view);
        }
        if let Some(last) = self.activity.value() {
            m.insert("lastAgentAction", last);
        }
        Ok(Value::Object(m))
    }

    fn supports_transaction(&self, domain: &str) -> bool {
        domain == CANVAS
    }

    fn begin_transaction(&mut self, _domains: &[&str]) -> Result<(), ActionError> {
        self.canvas.begin();
        Ok(())
    }

    fn commit_transaction(&mut self) {
        self.canvas.commit();
    }

    fn rollback_transaction(&mut self) {
        self.canvas.rollback();
    }

    fn activity(&mut self, notice: &jfgui_host_sdk::Activity) {
        self.activity.record(Activity::from_notice(notice, Instant::now()));
    }

    fn confirm(&mut self, confirmation: &Confirmation) -> Option<Answer> {
        if !self.asks {
            return Some(Answer::NoUi);
        }
        self.prompts.push_back(confirmation.clone());
        None
    }

    fn withdraw_confirmation(&mut self, ticket: &str) {
        self.answered(ticket);
    }

    fn resources(&mut self) -> Vec<ResourceInfo> {
        let mut out = vec![ResourceInfo {
            uri: RENDER_URI.into(),
            name: "canvas.png".into(),
            mime_type: "image/png".into(),
            size: self.rendering.as_ref().map(|r| r.png.len() as u64),
        }];
        if let Some(bytes) = &self.exported {
            out.push(ResourceInfo {
                uri: EXPORT_URI.into(),
                name: "drawing.svg".into(),
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
                let canvas = &self.canvas;
                let r = self.rendering.get_or_insert_with(|| render(canvas, 1.0));
                Some(ResourceBytes { mime_type: "image/png", bytes: &r.png })
            }
            EXPORT_URI => {
                self.exported.as_deref().map(|b| ResourceBytes { mime_type: EXPORT_MIME, bytes: b })
            }
            _ => None,
        }
    }

    fn tick(&mut self, tasks: &mut TaskTable) -> Option<Duration> {
        let mut produced = None;
        let next = self.exports.tick(tasks, Instant::now(), |bytes| produced = Some(bytes));
        if let Some(bytes) = produced {
            self.exported = Some(bytes);
        }
        next
    }
}

fn layout_value(l: &Layout) -> Value {
    let rect = |r: &PixelRect| {
        let mut m = Map::new();
        m.insert("x", codec::num(r.x));
        m.insert("y", codec::num(r.y));
        m.insert("width", codec::num(r.width));
        m.insert("height", codec::num(r.height));
        Value::Object(m)
    };
    let mut m = Map::new();
    m.insert("zoom", codec::num(l.zoom));
    m.insert("pixelsPerPoint", codec::num(l.pixels_per_point));
    m.insert("canvas", rect(&l.canvas));
    m.insert("agentToggle", rect(&l.agent_toggle));
    if let Some(p) = &l.prompt {
        let mut prompt = Map::new();
        prompt.insert("ticket", p.ticket.as_str());
        prompt.insert("dialog", rect(&p.dialog));
        prompt.insert("allowOnce", rect(&p.allow_once));
        if let Some(always) = &p.always {
            prompt.insert("always", rect(always));
        }
        prompt.insert("deny", rect(&p.deny));
        m.insert("prompt", Value::Object(prompt));
    }
    Value::Object(m)
}

#[cfg(test)]
mod tests;
