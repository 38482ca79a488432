//! `document.export`: a deferred task that writes a snapshot of the drawing as SVG, shape by
//! shape, spread over the export time (`--export-ms`) so that its progress can be watched and
//! it can be cancelled. Every step is a cancellation checkpoint; a completed export hands the
//! bytes of the in-memory resource `export://drawing.svg` to the app.

use std::sync::Arc;
use std::time::{Duration, Instant};

use jfgui_host_sdk::{ActionError, Map, Progress, TaskTable, Value};

use crate::canvas::{Canvas, Item};
use crate::svg;

/// The resource a completed export produces (never a client-supplied path).
pub const EXPORT_URI: &str = "export://drawing.svg";
/// Its MIME type.
pub const EXPORT_MIME: &str = "image/svg+xml";

#[derive(Debug)]
struct Job {
    id: String,
    items: Vec<Arc<Item>>,
    svg: String,
    written: usize,
    revision: u64,
    started: Instant,
}

/// The running exports.
#[derive(Debug)]
pub struct Exports {
    duration: Duration,
    jobs: Vec<Job>,
    next_id: u64,
}

impl Exports {
    /// Exports that each take `duration`.
    pub fn new(duration: Duration) -> Exports {
        Exports { duration, jobs: Vec::new(), next_id: 1 }
    }

    /// Starts exporting `canvas` as it is now (later edits do not change this export).
    pub fn start(
        &mut self,
        tasks: &mut TaskTable,
        canvas: &Canvas,
        now: Instant,
    ) -> Result<String, ActionError> {
        let id = format!("export-{}", self.next_id);
        tasks.start(id.clone())?;
        self.next_id += 1;
        let (w, h) = canvas.size();
        self.jobs.push(Job {
            id: id.clone(),
            items: canvas.items().to_vec(),
            svg: svg::header(w, h),
            written: 0,
            revision: canvas.revision(),
            started: now,
        });
        Ok(id)
    }

    /// Advances every export to `now`: cancelled ones stop, due shapes are written and
    /// reported as progress, finished ones complete and hand their SVG to `produced`. Returns
    /// when the next step is due (`None`: no export is running).
    pub fn tick(
        &mut self,
        tasks: &mut TaskTable,
        now: Instant,
        mut produced: impl FnMut(Vec<u8>),
    ) -> Option<Duration> {
        let duration = self.duration;
        let mut next: Option<Duration> = None;
        self.jobs.retain_mut(|job| {
            if tasks.is_cancel_requested(&job.id) {
                let _ = tasks.cancelled(&job.id);
                return false;
            }
            let total = job.items.len();
            let elapsed = now.saturating_duration_since(job.started);
            let finished = elapsed >= duration;
            let due = if finished {
                total
            } else {
                // Shape i is written once i/total of the export time has passed.
                ((elapsed.as_nanos() * total as u128) / duration.as_nanos()) as usize
            };
            if due > job.written {
                for item in &job.items[job.written..due] {
                    svg::write_item(&mut job.svg, item);
                }
                job.written = due;
                let progress = Progress {
                    done: due as u64,
                    total: Some(total as u64),
                    message: Some(format!("wrote {due} of {total} shapes")),
                };
                let _ = tasks.progress(&job.id, progress);
            }
            if finished {
                job.svg.push_str(svg::FOOTER);
                let bytes = std::mem::take(&mut job.svg).into_bytes();
                let mut result = Map::new();
                result.insert("uri", EXPORT_URI);
                result.insert("mimeType", EXPORT_MIME);
                result.insert("size", bytes.len() as u64);
                result.insert("shapes", total as u64);
                result.insert("revision", job.revision);
                produced(bytes);
                let _ = tasks.complete(&job.id, Value::Object(result));
                return false;
            }
            let at = if job.written < total {
                job.started + duration.mul_f64((job.written + 1) as f64 / total as f64)
            } else {
                job.started + duration
            };
            let wait = at.saturating_duration_since(now);
            next = Some(next.map_or(wait, |n| n.min(wait)));
            true
        });
        next
    }
}

#[cfg(test)]
mod tests {
    use jfgui_host_sdk::TaskState;

    use super::*;
    use crate::shape::{Color, Kind, Point, Shape};

    fn canvas(shapes: usize) -> Canvas {
        let mut c = Canvas::new(100, 50);
        for i in 0..shapes {
            c.add(Shape {
                kind: Kind::Line,
                points: vec![Point::new(i as f32, 0.0), Point::new(i as f32, 10.0)],
                color: Color::BLACK,
                width: 1.0,
                fill: None,
            })
            .unwrap();
        }
        c
    }

    #[test]
    fn progress_counts_shapes_then_completes() {
        let mut tasks = TaskTable::new();
        let mut ex = Exports::new(Duration::from_millis(1000));
        let t0 = Instant::now();
        let c = canvas(4);
        let id = ex.start(&mut tasks, &c, t0).unwrap();
        let mut out = None;
        let next = ex.tick(&mut tasks, t0 + Duration::from_millis(600), |b| out = Some(b));
        let p = tasks.get(&id).unwrap().progress.clone().unwrap();
        assert_eq!((p.done, p.total), (2, Some(4)));
        assert_eq!(next, Some(Duration::from_millis(150)), "shape 3 is due at 750 ms");
        assert!(out.is_none());
        assert_eq!(ex.tick(&mut tasks, t0 + Duration::from_millis(1000), |b| out = Some(b)), None);
        let svg = String::from_utf8(out.unwrap()).unwrap();
        assert_eq!(svg.matches("<line ").count(), 4);
        assert!(svg.starts_with("<svg ") && svg.ends_with("</svg>\n"));
        let t = tasks.get(&id).unwrap();
        assert_eq!(t.state, TaskState::Completed);
        let result = t.result.as_ref().unwrap();
        assert_eq!(result.get("uri").and_then(Value::as_str), Some(EXPORT_URI));
        assert_eq!(result.get("revision").and_then(Value::as_u64), Some(c.revision()));
    }

    #[test]
    fn an_empty_canvas_exports_after_the_export_time() {
        let mut tasks = TaskTable::new();
        let mut ex = Exports::new(Duration::from_millis(100));
        let t0 = Instant::now();
        let id = ex.start(&mut tasks, &canvas(0), t0).unwrap();
        assert_eq!(ex.tick(&mut tasks, t0, |_| unreachable!()), Some(Duration::from_millis(100)));
        let mut out = None;
        ex.tick(&mut tasks, t0 + Duration::from_millis(100), |b| out = Some(b));
        assert_eq!(tasks.state(&id), Some(TaskState::Completed));
        assert!(String::from_utf8(out.unwrap()).unwrap().contains("<rect width=\"100\""));
    }

    #[test]
    fn cancellation_is_honoured_at_the_next_checkpoint() {
        let mut tasks = TaskTable::new();
        let mut ex = Exports::new(Duration::from_millis(1000));
        let t0 = Instant::now();
        let id = ex.start(&mut tasks, &canvas(3), t0).unwrap();
        ex.tick(&mut tasks, t0 + Duration::from_millis(400), |_| unreachable!());
        tasks.request_cancel(&id).unwrap();
        let mut produced = false;
        // Even when the export would have finished by now, the cancel wins.
        let next = ex.tick(&mut tasks, t0 + Duration::from_millis(5000), |_| produced = true);
        assert_eq!(tasks.state(&id), Some(TaskState::Cancelled));
        assert!(!produced && next.is_none());
    }
}
