//! `jfgui-sketch` (display name `Sketch`): a small vector drawing app with a real window that
//! the user draws in with the mouse and agents draw in through jfgui-agentd, the project's
//! flagship GUI example.
//!
//! | file | owns |
//! |---|---|
//! | `shape.rs`, `canvas.rs` | the document model (no GUI types): shapes, ids, revision, undo/redo, transactions |
//! | `actions.rs`, `codec.rs` | the registration and the JSON of inputs and outputs |
//! | `app.rs` | `Sketch`, the `Host`: actions, inspection, transactions, resources, the export task |
//! | `export.rs`, `svg.rs` | `document.export` (deferred, progress, cancellable) and its SVG |
//! | `paint.rs`, `render.rs` | the one painter (egui shapes) and `ui.render` (egui's tessellation filled on the CPU) |
//! | `activity.rs`, `frames.rs` | the "last agent action" feed; what pumping costs each frame |
//! | `link.rs`, `waker.rs` | the host channel in egui's event loop: a budget per frame, woken by the socket |
//! | `window.rs` | the window: toolbar, canvas gestures, agent bar, the modal asking the user |
//! | `launch.rs` | "Let agents start Sketch": its launch file, and whether an agent started it |
//!
//! Agent access is off until the user turns it on ("Agent access" in the window, or
//! `--agent-enable`), or an agent started Sketch from the launch file the user's "Let agents
//! start Sketch" wrote. Under `JFGUI_HOST_CHANNEL=stdio` (or `--agent-stdio`) it runs without a
//! window, serving the host channel on stdin/stdout as every host-sdk app does.

mod actions;
mod activity;
mod app;
mod args;
mod canvas;
mod codec;
mod export;
mod frames;
mod launch;
mod link;
mod paint;
mod render;
mod shape;
mod svg;
#[cfg(unix)]
mod waker;
mod window;

use std::io;
use std::process::ExitCode;

use clap::Parser;
use eframe::egui;
use jfgui_host_sdk::Dispatcher;
use jfgui_host_sdk::channel::{HostChannel, Identity};
use jfgui_host_sdk::connector::{Connector, headless_requested, serve_stdio};

use crate::app::Sketch;
use crate::args::Args;
use crate::launch::LaunchSetting;
use crate::link::AgentLink;
use crate::window::Window;

/// The window's first size: the 640 × 400 canvas at 100 % with the toolbar and agent bar.
const WINDOW_SIZE: [f32; 2] = [820.0, 560.0];

fn main() -> ExitCode {
    let args = Args::parse();
    let mut launch = LaunchSetting::read(&args.name);
    if let Some(on) = &args.let_agents_start {
        return match launch.set(on == "on") {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("jfgui-sketch: {e}");
                ExitCode::FAILURE
            }
        };
    }
    let headless = args.agent_stdio || headless_requested();
    // Headless, there is no window to ask in: calls that need the user's yes never run.
    let app = Sketch::new(args.export_time());
    let mut app = if headless { app } else { app.asking() };
    let mut dispatcher = match Dispatcher::new(&app) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("jfgui-sketch: invalid registration: {e}");
            return ExitCode::FAILURE;
        }
    };
    // Running headless is the user's explicit enable (like `jfgui-agent headless`); so is the
    // launch file the daemon started this process from.
    let enabled = headless || args.agent_enable || launch.started_by_agent();
    dispatcher.set_enabled(enabled);
    let identity = Identity { display_name: args.name.clone(), pid: std::process::id() };
    // The "last agent action" line comes from the daemon's `activity` notices.
    let channel = match HostChannel::new(dispatcher, identity).and_then(HostChannel::with_activity)
    {
        Ok(e) => e,
        Err(e) => {
            eprintln!("jfgui-sketch: {e}");
            return ExitCode::FAILURE;
        }
    };
    if headless {
        return match serve_stdio(&mut app, channel) {
            Ok(()) => ExitCode::SUCCESS,
            // The peer went away while we were answering: the same as stdin EOF.
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("jfgui-sketch: host channel on stdio: {e}");
                ExitCode::FAILURE
            }
        };
    }
    let connector = match Connector::new(channel) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("jfgui-sketch: cannot locate the daemon: {e}");
            return ExitCode::FAILURE;
        }
    };
    eprintln!(
        "jfgui-sketch: {} (agent access {}), daemon socket {}",
        args.name,
        match (launch.started_by_agent(), enabled) {
            (true, _) => "on: started by an agent",
            (false, true) => "on",
            (false, false) => "off until turned on in the window",
        },
        connector.address().display()
    );
    let options = eframe::NativeOptions {
        viewport: egui::ViewportBuilder::default()
            .with_title(args.name.as_str())
            .with_inner_size(WINDOW_SIZE),
        ..Default::default()
    };
    let result = eframe::run_native(
        &args.name,
        options,
        Box::new(move |cc| {
            let link = AgentLink::new(connector, &cc.egui_ctx)?;
            Ok(Box::new(Window::new(app, link, launch)))
        }),
    );
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("jfgui-sketch: cannot run the window: {e}");
            ExitCode::FAILURE
        }
    }
}
