//! The read-only checks: inspecting twice answers one revision, every read action runs with a
//! generated input and leaves the revision alone, `ui.render` answers a decodable PNG, and every
//! listed resource reads to its end in chunks whose sizes add up. Nothing here changes state
//! in an app that keeps the contracts.

use alloc::format;
use alloc::string::String;

use jfgui_proto::channel::{ActionInfo, Call, CallResult};
use jfgui_proto::schema::minimal_instance;
use jfgui_proto::{ActionKind, ErrorClass, Map, Value};

use super::png;
use super::report::{Check, Level, Subject};
use super::session::{ReadProblem, Session, show};
use super::target::Target;
use crate::RENDER_ACTION;

impl<T: Target> Session<'_, T> {
    /// `state/inspect` twice, nothing in between: one revision.
    pub(crate) fn check_inspect(&mut self) -> Result<(), T::Error> {
        let mut revisions = [0u64; 2];
        for slot in &mut revisions {
            let inspect = Call::Inspect { input: Value::Object(Map::new()) };
            let why = match self.target.call(&inspect)? {
                Ok(CallResult::Inspected { revision, .. }) => {
                    *slot = revision;
                    continue;
                }
                Ok(_) => String::from("state/inspect answered something other than a state"),
                Err(e) => format!("state/inspect with no input failed: {e}"),
            };
            self.push(
                Level::Warn,
                Check::Inspect,
                &Subject::App,
                why,
                "answer state/inspect with no input (agents read the state that way before every write)",
            );
            return Ok(());
        }
        match revisions {
            [a, b] if a == b => {
                self.pass(Check::Inspect, &Subject::App, format!("revision {a} both times"));
            }
            [a, b] => self.push(
                Level::Fail,
                Check::Inspect,
                &Subject::App,
                format!("inspecting twice moved the revision from {a} to {b}"),
                "inspect must not change state or the revision; move whatever changes there into a write",
            ),
        }
        Ok(())
    }

    /// Every read action, with its minimal input.
    pub(crate) fn check_reads(&mut self, actions: &[ActionInfo]) -> Result<(), T::Error> {
        for action in actions.iter().filter(|a| a.kind == ActionKind::Read) {
            self.check_read(action)?;
        }
        Ok(())
    }

    fn check_read(&mut self, action: &ActionInfo) -> Result<(), T::Error> {
        let subject = Subject::Action(action.name.clone());
        let input = match minimal_instance(&action.input_schema) {
            Ok(input) => input,
            Err(e) => {
                self.push(
                    Level::Warn,
                    Check::Read,
                    &subject,
                    format!("not run: {e}"),
                    "make the input schema satisfiable, so callers can form a valid input",
                );
                return Ok(());
            }
        };
        let Ok(before) = self.revision()? else { return Ok(()) };
        let reply = self.execute(&action.name, &input, None)?;
        let Ok(after) = self.revision()? else { return Ok(()) };
        let shown = show(&input);
        if after != before {
            let why =
                format!("a read with input {shown} moved the revision from {before} to {after}");
            self.push(
                Level::Fail,
                Check::Read,
                &subject,
                why,
                "a read must change nothing: make it a write, or stop moving the revision in it",
            );
            return Ok(());
        }
        match reply {
            Ok(_) => self.pass(
                Check::Read,
                &subject,
                format!("ran with input {shown}; the revision stayed {before}"),
            ),
            Err(e) if e.class() == ErrorClass::Internal => self.push(
                Level::Fail,
                Check::Read,
                &subject,
                format!("with input {shown} it answered an internal error: {}", e.message),
                "return an output that matches the declared output schema (or declare the schema the output has)",
            ),
            Err(e) => self.push(
                Level::Warn,
                Check::Read,
                &subject,
                format!("refused the generated input {shown}: {e}"),
                "accept every input the schema allows, or narrow the schema to what the action accepts",
            ),
        }
        Ok(())
    }

    /// `view/render` with `ui.render`'s minimal input; the resource it names must be a PNG.
    pub(crate) fn check_render(&mut self, actions: &[ActionInfo]) -> Result<(), T::Error> {
        let Some(action) = actions.iter().find(|a| a.name == RENDER_ACTION) else {
            return Ok(());
        };
        let subject = Subject::Action(action.name.clone());
        let fail = |s: &mut Self, why: String, fix: &str| {
            s.push(Level::Fail, Check::Render, &subject, why, fix);
        };
        let Ok(input) = minimal_instance(&action.input_schema) else {
            // The read check already reported the schema.
            return Ok(());
        };
        let output = match self.target.call(&Call::Render { input: input.clone() })? {
            Ok(CallResult::Rendered { output, .. }) => output,
            Ok(_) => {
                fail(
                    self,
                    String::from("view/render answered no rendering"),
                    "answer view/render through ui.render",
                );
                return Ok(());
            }
            Err(e) => {
                fail(
                    self,
                    format!("view/render with input {} failed: {e}", show(&input)),
                    "ui.render must render with any input its schema allows",
                );
                return Ok(());
            }
        };
        let Some(uri) = output.get("uri").and_then(Value::as_str) else {
            fail(
                self,
                format!(
                    "ui.render's output {} names no resource (no \"uri\" member)",
                    show(&output)
                ),
                "return {\"uri\", \"mimeType\", ...} naming the PNG resource the rendering produced",
            );
            return Ok(());
        };
        let uri = String::from(uri);
        let download = match self.read_all(&uri)? {
            Ok(download) => download,
            Err(problem) => {
                fail(
                    self,
                    format!("the rendering {uri} could not be read: {}", problem.why()),
                    "serve the rendered bytes through resources/read (see the resource check)",
                );
                return Ok(());
            }
        };
        match png::decode(&download.bytes) {
            Ok((width, height)) => self.pass(
                Check::Render,
                &subject,
                format!(
                    "{uri} is a {width}×{height} PNG ({} bytes, {})",
                    download.bytes.len(),
                    download.mime_type
                ),
            ),
            Err(why) => fail(
                self,
                format!(
                    "{uri} ({} bytes, {}) is not a decodable PNG: {why}",
                    download.bytes.len(),
                    download.mime_type
                ),
                "encode the view with a PNG encoder (e.g. the png crate) and serve exactly those bytes",
            ),
        }
        Ok(())
    }

    /// Every listed resource, read to its end.
    pub(crate) fn check_resources(&mut self) -> Result<(), T::Error> {
        let listed = match self.target.call(&Call::ListResources {})? {
            Ok(CallResult::Resources { resources }) => resources,
            Ok(_) | Err(_) => return Ok(()),
        };
        for resource in listed {
            let subject = Subject::Resource(resource.uri.clone());
            match self.read_all(&resource.uri)? {
                Ok(download) => {
                    let size = download.bytes.len() as u64;
                    if let Some(listed) = resource.size.filter(|&s| s != size) {
                        self.push(
                            Level::Fail,
                            Check::Resource,
                            &subject,
                            format!("listed with size {listed}, but it reads as {size} bytes"),
                            "list the size the resource has (or none while it is not known)",
                        );
                    } else if download.mime_type != resource.mime_type {
                        self.push(
                            Level::Fail,
                            Check::Resource,
                            &subject,
                            format!(
                                "listed as {}, but reads say {}",
                                resource.mime_type, download.mime_type
                            ),
                            "list and serve one MIME type",
                        );
                    } else {
                        self.pass(
                            Check::Resource,
                            &subject,
                            format!(
                                "{size} bytes in {} chunk{}, sizes adding up to totalSize",
                                download.chunks,
                                if download.chunks == 1 { "" } else { "s" }
                            ),
                        );
                    }
                }
                Err(ReadProblem::TooLarge(size)) => self.push(
                    Level::Warn,
                    Check::Resource,
                    &subject,
                    format!("not read: totalSize {size} is more than a check reads"),
                    "nothing to fix if the resource is really that large",
                ),
                Err(ReadProblem::Broken(why)) => self.push(
                    Level::Fail,
                    Check::Resource,
                    &subject,
                    why,
                    "serve the chunk asked for (offset, at most limit bytes) with the resource's real totalSize",
                ),
            }
        }
        Ok(())
    }
}
