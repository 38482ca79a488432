//! The drawing: shapes with stable ids in paint order, the revision, undo/redo and
//! transactions with real rollback. No GUI types: the window, the agent actions and the unit
//! tests all change it through these methods.
//!
//! One change = one revision step and (outside a transaction) one undo step: a user gesture
//! arrives as one call (the window commits a drag on release), an agent call as one call, and
//! a committed transaction collapses into one undo step however many calls it held.

use std::sync::Arc;

use jfgui_host_sdk::{ActionError, host_error};

use crate::shape::{Patch, Point, Shape};

/// Most shapes on the canvas.
pub const MAX_SHAPES: usize = 256;
/// Most points over all shapes. With [`MAX_SHAPES`] it keeps `canvas.get`'s answer within the
/// JSON bounds of one message (16 384 values: three per point, about eight per shape).
pub const MAX_TOTAL_POINTS: usize = 4096;
/// Undo steps kept (oldest dropped first). Steps share unchanged shapes (`Arc`), so memory
/// grows with what changed, not with the canvas.
pub const MAX_UNDO: usize = 64;

/// A shape on the canvas.
#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    /// Stable id: never reused while the canvas lives (undo and redo keep ids).
    pub id: u64,
    /// The shape.
    pub shape: Shape,
}

type Items = Vec<Arc<Item>>;

/// Everything a rollback restores.
#[derive(Debug, Clone, PartialEq)]
struct Saved {
    items: Items,
    undo: Vec<Items>,
    redo: Vec<Items>,
    revision: u64,
    next_id: u64,
}

/// The drawing.
#[derive(Debug, Clone, PartialEq)]
pub struct Canvas {
    width: u32,
    height: u32,
    items: Items,
    undo: Vec<Items>,
    redo: Vec<Items>,
    revision: u64,
    next_id: u64,
    transaction: Option<Box<Saved>>,
}

impl Canvas {
    /// An empty canvas of `width` × `height` units at revision 1.
    pub fn new(width: u32, height: u32) -> Canvas {
        Canvas {
            width,
            height,
            items: Vec::new(),
            undo: Vec::new(),
            redo: Vec::new(),
            revision: 1,
            next_id: 1,
            transaction: None,
        }
    }

    /// The canvas size in units.
    pub fn size(&self) -> (u32, u32) {
        (self.width, self.height)
    }

    /// The shapes, bottom first (paint order).
    pub fn items(&self) -> &[Arc<Item>] {
        &self.items
    }

    /// The shape with `id`.
    pub fn get(&self, id: u64) -> Option<&Item> {
        self.items.iter().map(Arc::as_ref).find(|i| i.id == id)
    }

    /// The revision: moves with every change, and only then.
    pub fn revision(&self) -> u64 {
        self.revision
    }

    /// Undo steps available.
    pub fn undo_depth(&self) -> usize {
        self.undo.len()
    }

    /// Redo steps available.
    pub fn redo_depth(&self) -> usize {
        self.redo.len()
    }

    /// The topmost shape that `p` touches (see [`Shape::hit`]).
    pub fn hit(&self, p: Point, tolerance: f32) -> Option<u64> {
        self.items.iter().rev().find(|i| i.shape.hit(p, tolerance)).map(|i| i.id)
    }

    /// Adds `shape` on top; returns its id.
    pub fn add(&mut self, shape: Shape) -> Result<u64, ActionError> {
        shape.check()?;
        let id = self.next_id;
        let mut items = self.items.clone();
        items.push(Arc::new(Item { id, shape }));
        self.apply(items)?;
        self.next_id += 1;
        Ok(id)
    }

    /// Changes some fields of shape `id`. A patch that changes nothing is no change.
    pub fn update(&mut self, id: u64, patch: &Patch) -> Result<(), ActionError> {
        let pos = self.position(id)?;
        let shape = patch.apply(&self.items[pos].shape);
        shape.check()?;
        let mut items = self.items.clone();
        items[pos] = Arc::new(Item { id, shape });
        self.apply(items)
    }

    /// Removes shape `id`.
    pub fn delete(&mut self, id: u64) -> Result<(), ActionError> {
        let pos = self.position(id)?;
        let mut items = self.items.clone();
        items.remove(pos);
        self.apply(items)
    }

    /// Removes every shape (one undo step). Clearing an empty canvas is no change.
    pub fn clear(&mut self) -> Result<(), ActionError> {
        self.apply(Vec::new())
    }

    /// Restores the shapes before the last step. Undo is a change: the revision moves on.
    pub fn undo(&mut self) -> Result<(), ActionError> {
        let prev = self
            .undo
            .pop()
            .ok_or_else(|| host_error("nothing_to_undo", "there is nothing to undo"))?;
        self.redo.push(std::mem::replace(&mut self.items, prev));
        self.revision += 1;
        Ok(())
    }

    /// Re-applies the last undone step.
    pub fn redo(&mut self) -> Result<(), ActionError> {
        let next = self
            .redo
            .pop()
            .ok_or_else(|| host_error("nothing_to_redo", "there is nothing to redo"))?;
        let current = std::mem::replace(&mut self.items, next);
        push_bounded(&mut self.undo, current);
        self.revision += 1;
        Ok(())
    }

    /// Starts a transaction: remembers everything a rollback restores; changes until the
    /// commit add no undo steps of their own.
    pub fn begin(&mut self) {
        self.transaction = Some(Box::new(Saved {
            items: self.items.clone(),
            undo: self.undo.clone(),
            redo: self.redo.clone(),
            revision: self.revision,
            next_id: self.next_id,
        }));
    }

    /// Keeps the transaction's changes as one undo step (none if nothing changed).
    pub fn commit(&mut self) {
        if let Some(saved) = self.transaction.take()
            && saved.revision != self.revision
        {
            push_bounded(&mut self.undo, saved.items);
            self.redo.clear();
        }
    }

    /// Restores shapes, history, revision and id counter as they were at `begin`.
    pub fn rollback(&mut self) {
        if let Some(saved) = self.transaction.take() {
            let Saved { items, undo, redo, revision, next_id } = *saved;
            self.items = items;
            self.undo = undo;
            self.redo = redo;
            self.revision = revision;
            self.next_id = next_id;
        }
    }

    fn position(&self, id: u64) -> Result<usize, ActionError> {
        self.items.iter().position(|i| i.id == id).ok_or_else(|| {
            host_error(
                "no_such_shape",
                &format!("there is no shape with id {id}; read the canvas with canvas.get"),
            )
        })
    }

    /// Makes `items` the drawing if it differs, within the totals.
    fn apply(&mut self, items: Items) -> Result<(), ActionError> {
        if items == self.items {
            return Ok(());
        }
        if items.len() > MAX_SHAPES {
            return Err(host_error(
                "too_many_shapes",
                &format!("the canvas holds at most {MAX_SHAPES} shapes"),
            ));
        }
        let points: usize = items.iter().map(|i| i.shape.points.len()).sum();
        if points > MAX_TOTAL_POINTS {
            return Err(host_error(
                "too_many_points",
                &format!("the canvas holds at most {MAX_TOTAL_POINTS} points over all shapes"),
            ));
        }
        let before = std::mem::replace(&mut self.items, items);
        if self.transaction.is_none() {
            push_bounded(&mut self.undo, before);
            self.redo.clear();
        }
        self.revision += 1;
        Ok(())
    }
}

fn push_bounded(stack: &mut Vec<Items>, items: Items) {
    if stack.len() >= MAX_UNDO {
        stack.remove(0);
    }
    stack.push(items);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shape::{Color, Kind};

    fn code(e: ActionError) -> String {
        match e.reason {
            jfgui_host_sdk::Reason::HostError { code: Some(c) } => c,
            other => panic!("{other:?}"),
        }
    }

    fn line(x: f32) -> Shape {
        Shape {
            kind: Kind::Line,
            points: vec![Point::new(x, 0.0), Point::new(x, 10.0)],
            color: Color::BLACK,
            width: 2.0,
            fill: None,
        }
    }

    fn ids(c: &Canvas) -> Vec<u64> {
        c.items().iter().map(|i| i.id).collect()
    }

    #[test]
    fn every_change_is_one_revision_and_one_undo_step() {
        let mut c = Canvas::new(640, 400);
        assert_eq!((c.revision(), c.undo_depth()), (1, 0));
        let a = c.add(line(1.0)).unwrap();
        let b = c.add(line(2.0)).unwrap();
        assert_eq!((a, b, c.revision(), c.undo_depth()), (1, 2, 3, 2));
        c.update(a, &Patch { width: Some(5.0), ..Patch::default() }).unwrap();
        assert_eq!(c.get(a).unwrap().shape.width, 5.0);
        c.update(a, &Patch { width: Some(5.0), ..Patch::default() }).unwrap();
        assert_eq!(c.revision(), 4, "a patch that changes nothing moves nothing");
        c.delete(b).unwrap();
        assert_eq!(ids(&c), vec![a]);
        c.clear().unwrap();
        c.clear().unwrap();
        assert_eq!((c.items().len(), c.revision(), c.undo_depth()), (0, 6, 5));
    }

    #[test]
    fn failures_change_nothing() {
        let mut c = Canvas::new(640, 400);
        c.add(line(1.0)).unwrap();
        let before = c.clone();
        assert_eq!(code(c.delete(99).unwrap_err()), "no_such_shape");
        assert_eq!(code(c.update(99, &Patch::default()).unwrap_err()), "no_such_shape");
        let bad = Patch { width: Some(0.0), ..Patch::default() };
        assert_eq!(code(c.update(1, &bad).unwrap_err()), "invalid_width");
        assert_eq!(code(c.add(Shape { width: 100.0, ..line(0.0) }).unwrap_err()), "invalid_width");
        assert_eq!(c, before);
    }

    #[test]
    fn totals_are_bounded() {
        let mut c = Canvas::new(640, 400);
        for i in 0..MAX_SHAPES {
            c.add(line(i as f32)).unwrap();
        }
        assert_eq!(code(c.add(line(0.0)).unwrap_err()), "too_many_shapes");
        let mut c = Canvas::new(640, 400);
        let stroke = |n: usize| Shape {
            kind: Kind::Stroke,
            points: vec![Point::new(1.0, 1.0); n],
            ..line(0.0)
        };
        for _ in 0..MAX_TOTAL_POINTS / 1024 {
            c.add(stroke(1024)).unwrap();
        }
        assert_eq!(code(c.add(line(0.0)).unwrap_err()), "too_many_points");
    }

    #[test]
    fn undo_and_redo_keep_ids_and_move_the_revision_forward() {
        let mut c = Canvas::new(640, 400);
        assert_eq!(code(c.undo().unwrap_err()), "nothing_to_undo");
        let a = c.add(line(1.0)).unwrap();
        c.delete(a).unwrap();
        c.undo().unwrap();
        assert_eq!((ids(&c), c.revision()), (vec![a], 4));
        c.redo().unwrap();
        assert!(c.items().is_empty());
        c.undo().unwrap();
        c.undo().unwrap();
        assert_eq!((c.items().len(), c.undo_depth(), c.redo_depth()), (0, 0, 2));
        let b = c.add(line(2.0)).unwrap();
        assert_eq!(b, 2, "ids are never reused, even after undo");
        assert_eq!(c.redo_depth(), 0, "a new change clears redo");
        assert_eq!(code(c.redo().unwrap_err()), "nothing_to_redo");
        for i in 0..(MAX_UNDO + 10) {
            c.add(line(i as f32)).unwrap();
        }
        assert_eq!(c.undo_depth(), MAX_UNDO);
    }

    #[test]
    fn rollback_restores_everything() {
        let mut c = Canvas::new(640, 400);
        let a = c.add(line(1.0)).unwrap();
        c.add(line(2.0)).unwrap();
        c.undo().unwrap();
        let before = c.clone();
        c.begin();
        c.add(line(3.0)).unwrap();
        c.delete(a).unwrap();
        c.clear().unwrap();
        c.rollback();
        assert_eq!(c, before, "shapes, undo, redo, revision and the id counter");
    }

    #[test]
    fn a_committed_transaction_is_one_undo_step() {
        let mut c = Canvas::new(640, 400);
        c.add(line(1.0)).unwrap();
        c.begin();
        c.add(line(2.0)).unwrap();
        c.add(line(3.0)).unwrap();
        c.commit();
        assert_eq!((c.items().len(), c.undo_depth(), c.revision()), (3, 2, 4));
        c.undo().unwrap();
        assert_eq!(c.items().len(), 1, "one undo removes the whole transaction");
        c.begin();
        c.commit();
        assert_eq!(c.undo_depth(), 1, "an empty transaction adds no step");
    }

    #[test]
    fn hit_finds_the_topmost_shape() {
        let mut c = Canvas::new(640, 400);
        let a = c.add(line(5.0)).unwrap();
        let b = c.add(line(5.0)).unwrap();
        assert_eq!(c.hit(Point::new(5.5, 5.0), 1.0), Some(b));
        c.delete(b).unwrap();
        assert_eq!(c.hit(Point::new(5.5, 5.0), 1.0), Some(a));
        assert_eq!(c.hit(Point::new(50.0, 5.0), 1.0), None);
    }
}
