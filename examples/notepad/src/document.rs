//! The editor model: text, selection, undo/redo, revision, and transactions with real
//! rollback. Positions are character (Unicode scalar value) offsets.

use jfgui_host_sdk::{ActionError, host_error};

/// Largest document in bytes: the whole text must fit into one `document.get` / inspect
/// string, whose decoded size is bounded at 256 KiB (the strict-JSON string bound); this leaves room for escapes.
pub const MAX_TEXT_BYTES: usize = 192 * 1024;

/// Undo steps kept (oldest dropped first), which bounds memory at
/// `MAX_UNDO × MAX_TEXT_BYTES`.
pub const MAX_UNDO: usize = 64;

/// A half-open character range `[start, end)`; the caret when empty.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Selection {
    /// First selected character.
    pub start: usize,
    /// One past the last selected character.
    pub end: usize,
}

/// What one undo step restores.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Snapshot {
    text: String,
    selection: Selection,
}

/// Everything a rollback restores.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Saved {
    text: String,
    selection: Selection,
    undo: Vec<Snapshot>,
    redo: Vec<Snapshot>,
    revision: u64,
}

/// The document. Every change of text or selection moves the revision by one and (outside a
/// transaction) adds one undo step; a call that changes nothing moves nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Document {
    text: String,
    selection: Selection,
    undo: Vec<Snapshot>,
    redo: Vec<Snapshot>,
    revision: u64,
    transaction: Option<Box<Saved>>,
}

impl Document {
    /// A document holding `text` with the caret at its end, at revision 1.
    pub fn new(text: &str) -> Result<Document, ActionError> {
        check_size(text.len())?;
        let end = text.chars().count();
        Ok(Document {
            text: text.to_string(),
            selection: Selection { start: end, end },
            undo: Vec::new(),
            redo: Vec::new(),
            revision: 1,
            transaction: None,
        })
    }

    /// The text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The selection.
    pub fn selection(&self) -> Selection {
        self.selection
    }

    /// The revision.
    pub fn revision(&self) -> u64 {
        self.revision
    }

    /// Undo steps available.
    pub fn undo_depth(&self) -> usize {
        self.undo.len()
    }

    /// Redo steps available.
    #[cfg(test)]
    pub fn redo_depth(&self) -> usize {
        self.redo.len()
    }

    /// Length in characters.
    pub fn len(&self) -> usize {
        self.text.chars().count()
    }

    /// Replaces the selection with `text`; the caret ends after it.
    pub fn insert(&mut self, text: &str) -> Result<(), ActionError> {
        let Selection { start, end } = self.selection;
        self.replace(start, end, text)
    }

    /// Replaces `[start, end)` with `text`; the caret ends after it.
    pub fn replace(&mut self, start: usize, end: usize, text: &str) -> Result<(), ActionError> {
        let (a, b) = self.byte_range(start, end)?;
        check_size(self.text.len() - (b - a) + text.len())?;
        let mut new = String::with_capacity(self.text.len() - (b - a) + text.len());
        new.push_str(&self.text[..a]);
        new.push_str(text);
        new.push_str(&self.text[b..]);
        let caret = start + text.chars().count();
        self.apply(new, Selection { start: caret, end: caret });
        Ok(())
    }

    /// Deletes `[start, end)`; the caret ends at `start`.
    pub fn delete(&mut self, start: usize, end: usize) -> Result<(), ActionError> {
        self.replace(start, end, "")
    }

    /// Selects `[start, end)`.
    pub fn select(&mut self, start: usize, end: usize) -> Result<(), ActionError> {
        self.byte_range(start, end)?;
        self.apply(self.text.clone(), Selection { start, end });
        Ok(())
    }

    /// Restores the state before the last step.
    pub fn undo(&mut self) -> Result<(), ActionError> {
        let prev = self
            .undo
            .pop()
            .ok_or_else(|| host_error("nothing_to_undo", "there is nothing to undo"))?;
        let current = self.snapshot();
        self.redo.push(current);
        self.restore(prev);
        Ok(())
    }

    /// Re-applies the last undone step.
    pub fn redo(&mut self) -> Result<(), ActionError> {
        let next = self
            .redo
            .pop()
            .ok_or_else(|| host_error("nothing_to_redo", "there is nothing to redo"))?;
        let current = self.snapshot();
        push_bounded(&mut self.undo, current);
        self.restore(next);
        Ok(())
    }

    /// Starts a transaction: remembers everything a rollback must restore; changes until the
    /// commit add no undo steps of their own.
    pub fn begin(&mut self) {
        self.transaction = Some(Box::new(Saved {
            text: self.text.clone(),
            selection: self.selection,
            undo: self.undo.clone(),
            redo: self.redo.clone(),
            revision: self.revision,
        }));
    }

    /// Keeps the transaction's changes as one undo step (none if nothing changed).
    pub fn commit(&mut self) {
        if let Some(saved) = self.transaction.take()
            && saved.revision != self.revision
        {
            push_bounded(&mut self.undo, Snapshot { text: saved.text, selection: saved.selection });
            self.redo.clear();
        }
    }

    /// Restores text, selection, undo and redo history and revision from `begin`.
    pub fn rollback(&mut self) {
        if let Some(saved) = self.transaction.take() {
            let Saved { text, selection, undo, redo, revision } = *saved;
            self.text = text;
            self.selection = selection;
            self.undo = undo;
            self.redo = redo;
            self.revision = revision;
        }
    }

    fn apply(&mut self, text: String, selection: Selection) {
        if text == self.text && selection == self.selection {
            return;
        }
        let before = Snapshot {
            text: std::mem::replace(&mut self.text, text),
            selection: std::mem::replace(&mut self.selection, selection),
        };
        if self.transaction.is_none() {
            push_bounded(&mut self.undo, before);
            self.redo.clear();
        }
        self.revision += 1;
    }

    fn snapshot(&self) -> Snapshot {
        Snapshot { text: self.text.clone(), selection: self.selection }
    }

    /// Undo and redo are changes too: the revision moves forward, never back.
    fn restore(&mut self, s: Snapshot) {
        self.text = s.text;
        self.selection = s.selection;
        self.revision += 1;
    }

    /// Byte offsets of the character range, or a host error naming what is wrong.
    fn byte_range(&self, start: usize, end: usize) -> Result<(usize, usize), ActionError> {
        if start > end {
            return Err(host_error(
                "invalid_range",
                &format!("start ({start}) is after end ({end})"),
            ));
        }
        let len = self.len();
        if end > len {
            return Err(host_error(
                "out_of_range",
                &format!("end ({end}) is past the end of the text ({len} characters)"),
            ));
        }
        let byte = |i: usize| self.text.char_indices().nth(i).map_or(self.text.len(), |(b, _)| b);
        Ok((byte(start), byte(end)))
    }
}

fn check_size(bytes: usize) -> Result<(), ActionError> {
    if bytes > MAX_TEXT_BYTES {
        return Err(host_error(
            "too_long",
            &format!("the document would be {bytes} bytes; at most {MAX_TEXT_BYTES} are allowed"),
        ));
    }
    Ok(())
}

fn push_bounded(stack: &mut Vec<Snapshot>, s: Snapshot) {
    if stack.len() >= MAX_UNDO {
        stack.remove(0);
    }
    stack.push(s);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(e: ActionError) -> String {
        match e.reason {
            jfgui_host_sdk::Reason::HostError { code: Some(c) } => c,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn edits_move_the_revision_only_on_change() {
        let mut d = Document::new("héllo").unwrap();
        assert_eq!((d.revision(), d.len(), d.selection()), (1, 5, Selection { start: 5, end: 5 }));
        d.insert(" wörld").unwrap();
        assert_eq!(d.text(), "héllo wörld");
        assert_eq!(d.revision(), 2);
        d.insert("").unwrap();
        assert_eq!(d.revision(), 2, "no change, no revision");
        d.select(1, 4).unwrap();
        d.insert("E").unwrap();
        assert_eq!(d.text(), "hEo wörld");
        assert_eq!(d.selection(), Selection { start: 2, end: 2 });
        d.replace(4, 9, "there").unwrap();
        assert_eq!(d.text(), "hEo there");
        d.delete(0, 4).unwrap();
        assert_eq!(d.text(), "there");
        assert_eq!(d.selection(), Selection { start: 0, end: 0 });
        d.select(0, 0).unwrap();
        assert_eq!(d.revision(), 6, "selecting the current selection is no change");
    }

    #[test]
    fn ranges_are_validated() {
        let mut d = Document::new("abc").unwrap();
        assert_eq!(code(d.replace(2, 1, "x").unwrap_err()), "invalid_range");
        assert_eq!(code(d.delete(0, 4).unwrap_err()), "out_of_range");
        assert_eq!(code(d.select(4, 4).unwrap_err()), "out_of_range");
        assert_eq!(code(d.insert(&"x".repeat(MAX_TEXT_BYTES)).unwrap_err()), "too_long");
        assert_eq!((d.text(), d.revision()), ("abc", 1));
    }

    #[test]
    fn undo_and_redo() {
        let mut d = Document::new("").unwrap();
        assert_eq!(code(d.undo().unwrap_err()), "nothing_to_undo");
        d.insert("a").unwrap();
        d.insert("b").unwrap();
        assert_eq!(d.undo_depth(), 2);
        d.undo().unwrap();
        assert_eq!(d.text(), "a");
        assert_eq!(d.revision(), 4, "undo is a change: the revision moves forward");
        d.redo().unwrap();
        assert_eq!(d.text(), "ab");
        d.undo().unwrap();
        d.undo().unwrap();
        assert_eq!((d.text(), d.undo_depth(), d.redo_depth()), ("", 0, 2));
        d.insert("z").unwrap();
        assert_eq!(d.redo_depth(), 0, "a new edit clears redo");
        assert_eq!(code(d.redo().unwrap_err()), "nothing_to_redo");
        for _ in 0..(MAX_UNDO + 10) {
            d.insert("x").unwrap();
        }
        assert_eq!(d.undo_depth(), MAX_UNDO);
    }

    #[test]
    fn rollback_restores_everything() {
        let mut d = Document::new("one").unwrap();
        d.insert(" two").unwrap();
        d.undo().unwrap();
        let before = d.clone();
        d.begin();
        d.insert(" three").unwrap();
        d.select(0, 1).unwrap();
        d.redo().unwrap();
        d.rollback();
        assert_eq!(d, before, "text, selection, undo, redo and revision");
    }

    #[test]
    fn a_committed_transaction_is_one_undo_step() {
        let mut d = Document::new("").unwrap();
        d.begin();
        d.insert("a").unwrap();
        d.insert("b").unwrap();
        d.select(0, 1).unwrap();
        d.commit();
        assert_eq!((d.text(), d.undo_depth(), d.revision()), ("ab", 1, 4));
        d.undo().unwrap();
        assert_eq!(d.text(), "");
        d.begin();
        d.commit();
        assert_eq!(d.undo_depth(), 0, "an empty transaction adds no step");
    }
}
