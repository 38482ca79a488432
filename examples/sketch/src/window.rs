//! The window (eframe/egui): a toolbar (tools, colours, width, undo/redo, delete, clear, zoom),
//! the canvas (draw, select, move), the agent bar (the "Agent access" toggle, the endpoint,
//! the last agent action), and the modal that asks the user when an agent's call needs their
//! yes ("`<agent>` wants to: Clear the canvas": Allow once, Always allow `<agent>`, Deny).
//!
//! Every frame first pumps the host channel ([`AgentLink::pump`]), so an agent's change is on
//! screen in the frame that answers it. The user's edits go through the same actions as an
//! agent's (`execute_local`: same checks, no expected revision), one call per gesture: a drag
//! is previewed while it lasts and committed on release, so it is one revision and one undo
//! step.

use std::time::Instant;

use eframe::egui::{
    self, Align, Color32, Key, KeyboardShortcut, Layout as UiLayout, Modifiers, Pos2, Rect,
    Response, Sense, Stroke, StrokeKind, Ui, Vec2,
};
use jfgui_host_sdk::{Answer, Map, Value};

use crate::app::{Layout, PixelRect, PromptLayout, Sketch};
use crate::codec;
use crate::launch::LaunchSetting;
use crate::link::{AgentLink, LinkState};
use crate::paint::{self, View};
use crate::shape::{Color, Kind, MAX_POINTS_PER_SHAPE, Point, Shape};

/// The zoom levels the toolbar steps through.
const ZOOMS: &[f32] = &[0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 4.0];
/// Screen points within which a click picks a shape.
const PICK_TOLERANCE: f32 = 4.0;
/// A freehand stroke keeps a new point once the pointer moved this many screen points.
const STROKE_STEP: f32 = 2.0;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tool {
    Select,
    Line,
    Rectangle,
    Ellipse,
    Freehand,
}

/// A drag in progress, previewed until release.
#[derive(Debug, Clone, PartialEq)]
enum Gesture {
    /// A new shape; its points so far.
    Draw(Kind, Vec<Point>),
    /// Shape `id` dragged from one canvas point to another.
    Move { id: u64, from: Point, to: Point },
}

/// The eframe app.
#[derive(Debug)]
pub struct Window {
    app: Sketch,
    link: AgentLink,
    tool: Tool,
    ink: Color32,
    fill: Option<Color32>,
    width: f32,
    zoom: f32,
    selected: Option<u64>,
    gesture: Option<Gesture>,
    /// The last refused user edit, shown in the agent bar.
    notice: Option<String>,
    /// "Let agents start Sketch".
    launch: LaunchSetting,
}

impl Window {
    /// A window over `app`, talking to the daemon through `link`.
    pub fn new(app: Sketch, link: AgentLink, launch: LaunchSetting) -> Window {
        Window {
            app,
            link,
            tool: Tool::Line,
            ink: Color32::BLACK,
            fill: None,
            width: 3.0,
            zoom: 1.0,
            selected: None,
            gesture: None,
            notice: None,
            launch,
        }
    }

    fn local(&mut self, action: &str, input: &Value) {
        self.notice = self.link.local(&mut self.app, action, input).err().map(|e| e.message);
        if let Some(id) = self.selected
            && self.app.canvas().get(id).is_none()
        {
            self.selected = None;
        }
    }

    fn shortcuts(&mut self, ctx: &egui::Context) {
        let (redo, undo, delete, zoom_in, zoom_out, zoom_reset) = ctx.input_mut(|i| {
            // Shift+Ctrl+Z first: the plain Ctrl+Z shortcut would match it too.
            let redo = i.consume_shortcut(&KeyboardShortcut::new(
                Modifiers::COMMAND | Modifiers::SHIFT,
                Key::Z,
            )) || i.consume_shortcut(&KeyboardShortcut::new(Modifiers::COMMAND, Key::Y));
            let undo = i.consume_shortcut(&KeyboardShortcut::new(Modifiers::COMMAND, Key::Z));
            let delete = i.consume_key(Modifiers::NONE, Key::Delete)
                || i.consume_key(Modifiers::NONE, Key::Backspace);
            let zoom_in = i.consume_shortcut(&KeyboardShortcut::new(Modifiers::COMMAND, Key::Plus))
                || i.consume_shortcut(&KeyboardShortcut::new(Modifiers::COMMAND, Key::Equals));
            let zoom_out =
                i.consume_shortcut(&KeyboardShortcut::new(Modifiers::COMMAND, Key::Minus));
            let zoom_reset =
                i.consume_shortcut(&KeyboardShortcut::new(Modifiers::COMMAND, Key::Num0));
            (redo, undo, delete, zoom_in, zoom_out, zoom_reset)
        });
        if redo {
            self.local("edit.redo", &empty());
        } else if undo {
            self.local("edit.undo", &empty());
        }
        if delete {
            self.delete_selected();
        }
        if zoom_in {
            self.step_zoom(1);
        }
        if zoom_out {
            self.step_zoom(-1);
        }
        if zoom_reset {
            self.zoom = 1.0;
        }
    }

    fn delete_selected(&mut self) {
        if let Some(id) = self.selected.take() {
            let mut m = Map::new();
            m.insert("id", id);
            self.local("shape.delete", &Value::Object(m));
        }
    }

    fn step_zoom(&mut self, by: isize) {
        let at = ZOOMS.iter().position(|z| *z >= self.zoom).unwrap_or(ZOOMS.len() - 1);
        self.zoom = ZOOMS[at.saturating_add_signed(by).min(ZOOMS.len() - 1)];
    }

    fn toolbar(&mut self, ui: &mut Ui) {
        ui.horizontal_wrapped(|ui| {
            for (tool, label) in [
                (Tool::Select, "Select"),
                (Tool::Line, "Line"),
                (Tool::Rectangle, "Rectangle"),
                (Tool::Ellipse, "Ellipse"),
                (Tool::Freehand, "Freehand"),
            ] {
                ui.selectable_value(&mut self.tool, tool, label);
            }
            ui.separator();
            ui.label("Ink");
            egui::color_picker::color_edit_button_srgba(
                ui,
                &mut self.ink,
                egui::color_picker::Alpha::OnlyBlend,
            );
            let mut filled = self.fill.is_some();
            if ui.checkbox(&mut filled, "Fill").changed() {
                self.fill = filled.then_some(Color32::LIGHT_BLUE);
            }
            if let Some(fill) = &mut self.fill {
                egui::color_picker::color_edit_button_srgba(
                    ui,
                    fill,
                    egui::color_picker::Alpha::OnlyBlend,
                );
            }
            ui.add(
                egui::DragValue::new(&mut self.width).range(0.5..=64.0).speed(0.1).prefix("width "),
            );
            ui.separator();
            let canvas = self.app.canvas();
            let (can_undo, can_redo) = (canvas.undo_depth() > 0, canvas.redo_depth() > 0);
            if ui.add_enabled(can_undo, egui::Button::new("Undo")).clicked() {
                self.local("edit.undo", &empty());
            }
            if ui.add_enabled(can_redo, egui::Button::new("Redo")).clicked() {
                self.local("edit.redo", &empty());
            }
            if ui.add_enabled(self.selected.is_some(), egui::Button::new("Delete")).clicked() {
                self.delete_selected();
            }
            let empty_canvas = self.app.canvas().items().is_empty();
            if ui.add_enabled(!empty_canvas, egui::Button::new("Clear")).clicked() {
                self.local("canvas.clear", &empty());
            }
            ui.separator();
            if ui.button("−").clicked() {
                self.step_zoom(-1);
            }
            ui.label(format!("{:.0} %", self.zoom * 100.0));
            if ui.button("+").clicked() {
                self.step_zoom(1);
            }
        });
    }

    /// The agent bar; returns the toggle's rectangle for the layout report.
    fn agent_bar(&mut self, ui: &mut Ui) -> Rect {
        let ctx = ui.ctx().clone();
        ui.horizontal(|ui| {
            let mut enabled = self.link.enabled();
            let toggle = ui.checkbox(&mut enabled, "Agent access");
            if toggle.changed() {
                self.link.set_enabled(&mut self.app, &ctx, enabled);
            }
            let mut allowed = self.launch.allowed();
            if ui.checkbox(&mut allowed, "Let agents start Sketch").changed()
                && let Err(e) = self.launch.set(allowed)
            {
                self.notice = Some(e);
            }
            if self.launch.started_by_agent() {
                ui.label("started by an agent: access on");
            }
            ui.separator();
            let channel = match (self.link.enabled(), self.link.state()) {
                (false, _) => "off: no agent can reach this window".to_string(),
                (true, LinkState::Registered(slug)) => format!("endpoint: {slug}"),
                (true, LinkState::Registering) => "registering with jfgui-agentd…".to_string(),
                (true, LinkState::Disconnected(why)) => {
                    format!("jfgui-agentd not reachable ({why}); retrying")
                }
            };
            ui.label(channel);
            ui.separator();
            let (line, next) = self.app.activity().describe(Instant::now());
            if let Some(next) = next {
                ctx.request_repaint_after(next);
            }
            let calls = self.app.activity().count();
            ui.label(line).on_hover_text(format!("{calls} agent calls since the app started"));
            if let Some(notice) = &self.notice {
                ui.with_layout(UiLayout::right_to_left(Align::Center), |ui| {
                    ui.colored_label(ui.visuals().warn_fg_color, notice);
                });
            }
            toggle.rect
        })
        .inner
    }

    /// The modal for the call waiting for the user's answer, if one waits; returns where it
    /// and its buttons are, for the layout report (once they are drawn there). A withdrawn call's modal is gone at the
    /// next frame (the app drops it from its prompts).
    fn prompt(&mut self, ctx: &egui::Context) -> Option<PromptLayout> {
        let c = self.app.prompt()?.clone();
        let agent = c.agent_name();
        let ppp = ctx.pixels_per_point();
        let mut answer = None;
        let shown = egui::Modal::new(egui::Id::new(("confirmation", &c.ticket))).show(ctx, |ui| {
            // A new dialog's first frame only measures it (nothing is drawn, nothing is where
            // it will be): not reported, so no one clicks where no button is.
            let measuring = ui.is_sizing_pass();
            ui.set_max_width(460.0);
            ui.heading(format!("{agent} wants to: {}", c.summary()));
            ui.add_space(4.0);
            ui.label(format!("Asked by {}", c.agent_label())).on_hover_text(
                "The program that called, as the operating system knows it; what it says it is is only a claim.",
            );
            ui.separator();
            ui.horizontal(|ui| {
                let once = ui.button("Allow once");
                let always =
                    c.may_always.then(|| ui.button(format!("Always allow {agent}")));
                let deny = ui.button("Deny");
                if once.clicked() {
                    answer = Some(Answer::Allow);
                }
                if always.as_ref().is_some_and(Response::clicked) {
                    answer = Some(Answer::AllowAlways);
                }
                if deny.clicked() {
                    answer = Some(Answer::Deny);
                }
                (once.rect, always.map(|r| r.rect), deny.rect, measuring)
            })
            .inner
        });
        let (once, always, deny, measuring) = shown.inner;
        if let Some(answer) = answer {
            self.link.answer(&mut self.app, ctx, &c.ticket, answer);
        }
        if measuring {
            return None;
        }
        Some(PromptLayout {
            ticket: c.ticket,
            dialog: pixels(shown.response.rect, ppp),
            allow_once: pixels(once, ppp),
            always: always.map(|r| pixels(r, ppp)),
            deny: pixels(deny, ppp),
        })
    }

    /// The canvas; returns the paper's rectangle for the layout report.
    fn canvas(&mut self, ui: &mut Ui) -> Rect {
        egui::ScrollArea::both()
            .show(ui, |ui| {
                let (w, h) = self.app.canvas().size();
                let size = Vec2::new(w as f32, h as f32) * self.zoom;
                let (rect, response) = ui.allocate_exact_size(size, Sense::click_and_drag());
                // Whole pixels, so the window's pixels line up with ui.render's.
                let view = View { origin: rect.min.round(), zoom: self.zoom };
                self.handle_pointer(&response, &view);
                let painter = ui.painter_at(rect);
                let mut shapes = vec![paint::paper((w, h), &view)];
                for item in self.app.canvas().items() {
                    let moved = match &self.gesture {
                        Some(Gesture::Move { id, from, to }) if *id == item.id => Some(Shape {
                            points: item.shape.moved_points(to.x - from.x, to.y - from.y),
                            ..item.shape.clone()
                        }),
                        _ => None,
                    };
                    shapes.push(paint::shape(moved.as_ref().unwrap_or(&item.shape), &view));
                }
                if let Some(Gesture::Draw(kind, points)) = &self.gesture
                    && points.len() >= 2
                {
                    shapes.push(paint::shape(&self.new_shape(*kind, points.clone()), &view));
                }
                painter.extend(shapes);
                if let Some(item) = self.selected.and_then(|id| self.app.canvas().get(id)) {
                    let (min, max) = item.shape.bounds();
                    let pad = item.shape.width / 2.0 * self.zoom + 3.0;
                    let r =
                        Rect::from_min_max(view.to_screen(min), view.to_screen(max)).expand(pad);
                    painter.rect_stroke(
                        r,
                        0.0,
                        Stroke::new(1.0, Color32::from_rgb(0, 120, 215)),
                        StrokeKind::Outside,
                    );
                }
                Rect::from_min_size(view.origin, size)
            })
            .inner
    }

    fn handle_pointer(&mut self, response: &Response, view: &View) {
        let Some(pos) = response.interact_pointer_pos() else { return };
        let p = view.to_canvas(pos);
        if response.clicked() && self.tool == Tool::Select {
            self.selected = self.app.canvas().hit(p, PICK_TOLERANCE / self.zoom);
        }
        if response.drag_started() {
            // Where the press happened, not where the drag was recognised.
            let start =
                response.ctx.input(|i| i.pointer.press_origin()).map_or(p, |o| view.to_canvas(o));
            self.gesture = match self.tool {
                Tool::Select => {
                    self.selected = self.app.canvas().hit(start, PICK_TOLERANCE / self.zoom);
                    self.selected.map(|id| Gesture::Move { id, from: start, to: start })
                }
                Tool::Line => Some(Gesture::Draw(Kind::Line, vec![start, p])),
                Tool::Rectangle => Some(Gesture::Draw(Kind::Rectangle, vec![start, p])),
                Tool::Ellipse => Some(Gesture::Draw(Kind::Ellipse, vec![start, p])),
                Tool::Freehand => Some(Gesture::Draw(Kind::Stroke, vec![start, p])),
            };
        } else if response.dragged() {
            match &mut self.gesture {
                Some(Gesture::Draw(Kind::Stroke, points)) => {
                    let last = points[points.len() - 1];
                    let far = ((p.x - last.x).powi(2) + (p.y - last.y).powi(2)).sqrt() * self.zoom;
                    if far >= STROKE_STEP && points.len() < MAX_POINTS_PER_SHAPE {
                        points.push(p);
                    }
                }
                Some(Gesture::Draw(_, points)) => points[1] = p,
                Some(Gesture::Move { to, .. }) => *to = p,
                None => {}
            }
        }
        if response.drag_stopped() {
            self.commit_gesture();
        }
    }

    fn new_shape(&self, kind: Kind, points: Vec<Point>) -> Shape {
        Shape {
            kind,
            points,
            color: color(self.ink),
            width: self.width,
            fill: self.fill.filter(|_| kind.fillable()).map(color),
        }
    }

    /// One gesture, one call: one revision and one undo step.
    fn commit_gesture(&mut self) {
        match self.gesture.take() {
            Some(Gesture::Draw(kind, points)) => {
                let (min, max) =
                    Shape { points: points.clone(), ..self.new_shape(kind, Vec::new()) }.bounds();
                // A click without a drag draws nothing.
                if max.x - min.x >= 1.0 || max.y - min.y >= 1.0 {
                    let shape = self.new_shape(kind, points);
                    self.local("shape.add", &codec::shape_value(&shape));
                }
            }
            Some(Gesture::Move { id, from, to }) if from != to => {
                if let Some(item) = self.app.canvas().get(id) {
                    let mut m = Map::new();
                    m.insert("id", id);
                    m.insert(
                        "points",
                        codec::points_value(&item.shape.moved_points(to.x - from.x, to.y - from.y)),
                    );
                    self.local("shape.update", &Value::Object(m));
                }
            }
            _ => {}
        }
    }
}

impl eframe::App for Window {
    fn update(&mut self, ctx: &egui::Context, _frame: &mut eframe::Frame) {
        let started = Instant::now();
        let pump = self.link.pump(&mut self.app, ctx);
        self.shortcuts(ctx);
        egui::TopBottomPanel::top("tools").show(ctx, |ui| self.toolbar(ui));
        let toggle = egui::TopBottomPanel::bottom("agent").show(ctx, |ui| self.agent_bar(ui)).inner;
        let paper = egui::CentralPanel::default().show(ctx, |ui| self.canvas(ui)).inner;
        let prompt = self.prompt(ctx);
        let ppp = ctx.pixels_per_point();
        self.app.set_layout(Layout {
            zoom: self.zoom,
            pixels_per_point: ppp,
            canvas: pixels(paper, ppp),
            agent_toggle: pixels(toggle, ppp),
            prompt,
        });
        self.app.frames_mut().record(pump, started.elapsed());
    }

    fn on_exit(&mut self, _gl: Option<&eframe::glow::Context>) {
        self.link.close();
    }
}

fn empty() -> Value {
    Value::Object(Map::new())
}

fn color(c: Color32) -> Color {
    let [r, g, b, a] = c.to_srgba_unmultiplied();
    Color { r, g, b, a }
}

fn pixels(r: Rect, ppp: f32) -> PixelRect {
    let min: Pos2 = r.min * ppp;
    PixelRect { x: min.x, y: min.y, width: r.width() * ppp, height: r.height() * ppp }
}
