//! Which app a user's name for it means: exact slug, then exact display name, then a unique
//! prefix of an enabled app's slug. One rule for every place that takes such a name: the CLI's
//! ENDPOINT argument and the `app` argument of the all-apps MCP server. And, when a name means
//! nothing, the names nearest to it ([`nearest`]), for a "did you mean".

use alloc::vec::Vec;

/// An app as the resolution rule sees it.
pub trait Candidate {
    /// The endpoint slug.
    fn slug(&self) -> &str;
    /// The display name, intact.
    fn display_name(&self) -> &str;
    /// Whether agent access is enabled (only enabled apps have an endpoint).
    fn enabled(&self) -> bool;
}

/// What a name resolves to.
#[derive(Debug, PartialEq, Eq)]
pub enum Resolved<'a, T> {
    /// Exactly this enabled app.
    One(&'a T),
    /// Exactly this app, connected but not enabled.
    Disabled(&'a T),
    /// Several apps match at the first step that matches any: these.
    Ambiguous(Vec<&'a T>),
    /// Nothing matches.
    None,
}

/// Resolves `query` over `apps`: the first step with any match decides (exact slug, exact
/// display name, prefix of an enabled app's slug).
pub fn resolve<'a, T: Candidate>(query: &str, apps: &'a [T]) -> Resolved<'a, T> {
    let steps: [&dyn Fn(&T) -> bool; 3] =
        [&|a| a.slug() == query, &|a| a.display_name() == query, &|a| {
            a.enabled() && !query.is_empty() && a.slug().starts_with(query)
        }];
    for step in steps {
        let found: Vec<&T> = apps.iter().filter(|a| step(a)).collect();
        match found.as_slice() {
            [] => continue,
            [one] if one.enabled() => return Resolved::One(one),
            [one] => return Resolved::Disabled(one),
            _ => return Resolved::Ambiguous(found),
        }
    }
    Resolved::None
}

/// At most this many names are suggested: a short list a reader takes in at a glance.
pub const MAX_SUGGESTIONS: usize = 3;

/// The names of `names` nearest to `query`, for a "did you mean" after a misspelled action or
/// app name: those within a few edits (case-insensitive; up to a quarter of the query's length,
/// at least one), and those containing or contained in the query (3 characters or more), the
/// closest first, at most [`MAX_SUGGESTIONS`]. Empty when nothing is near.
pub fn nearest<'a>(query: &str, names: impl IntoIterator<Item = &'a str>) -> Vec<&'a str> {
    let query = query.to_lowercase();
    let within = (query.chars().count() / 4).max(1);
    let mut near: Vec<(usize, &'a str)> = names
        .into_iter()
        .filter_map(|name| {
            let lower = name.to_lowercase();
            let distance = edit_distance(&query, &lower);
            let overlaps = query.chars().count() >= 3
                && (lower.contains(query.as_str()) || query.contains(lower.as_str()));
            (distance <= within || overlaps).then_some((distance, name))
        })
        .collect();
    near.sort();
    near.dedup_by(|a, b| a.1 == b.1);
    near.into_iter().take(MAX_SUGGESTIONS).map(|(_, name)| name).collect()
}

/// Edits (insert, delete, substitute, swap two neighbours) that turn `a` into `b`, by
/// characters (the optimal string alignment distance).
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    // Three rows of the table: two back (for swaps), the last, the one being filled.
    let mut before: Vec<usize> = (0..=b.len()).collect();
    let mut last = before.clone();
    let mut row = alloc::vec![0; b.len() + 1];
    for i in 1..=a.len() {
        row[0] = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            row[j] = (last[j] + 1).min(row[j - 1] + 1).min(last[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                row[j] = row[j].min(before[j - 2] + 1);
            }
        }
        core::mem::swap(&mut before, &mut last);
        core::mem::swap(&mut last, &mut row);
    }
    last[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_names_come_first_and_far_ones_not_at_all() {
        let actions = ["document.text.insert", "document.text.delete", "document.get", "ui.render"];
        assert_eq!(nearest("document.text.insrt", actions), ["document.text.insert"]);
        assert_eq!(nearest("Document.Get", actions), ["document.get"]);
        // Swapped neighbours are one edit.
        assert_eq!(nearest("ui.redner", actions), ["ui.render"]);
        // A fragment of a longer name.
        assert_eq!(nearest("text", actions), ["document.text.delete", "document.text.insert"]);
        assert!(nearest("canvas.clear", actions).is_empty());
        assert!(nearest("", actions).is_empty());
        assert_eq!(nearest("notpad", ["notepad", "sketch", "notepad-2"]), ["notepad"]);
        assert_eq!(nearest("a", ["b", "c", "d", "e"]).len(), MAX_SUGGESTIONS);
    }

    #[test]
    fn edit_distance_counts_characters() {
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("ab", "ba"), 1);
        assert_eq!(edit_distance("é", "e"), 1);
    }

    struct A(&'static str, &'static str, bool);

    impl Candidate for A {
        fn slug(&self) -> &str {
            self.0
        }
        fn display_name(&self) -> &str {
            self.1
        }
        fn enabled(&self) -> bool {
            self.2
        }
    }

    const APPS: [A; 4] = [
        A("notes-a", "Notes A", true),
        A("notes-b", "Notes B", true),
        A("paint", "notes-a", true),
        A("sketch", "Sketch", false),
    ];

    fn slug(r: Resolved<'_, A>) -> Option<&'static str> {
        match r {
            Resolved::One(a) => Some(a.0),
            _ => None,
        }
    }

    #[test]
    fn slug_then_display_name_then_unique_prefix() {
        // The exact slug wins over another app's display name.
        assert_eq!(slug(resolve("notes-a", &APPS)), Some("notes-a"));
        assert_eq!(slug(resolve("Notes B", &APPS)), Some("notes-b"));
        assert_eq!(slug(resolve("pa", &APPS)), Some("paint"));
    }

    #[test]
    fn ambiguity_disabled_and_unknown_are_told_apart() {
        match resolve("notes", &APPS) {
            Resolved::Ambiguous(found) => {
                assert_eq!(found.iter().map(|a| a.0).collect::<Vec<_>>(), ["notes-a", "notes-b"]);
            }
            other => panic!("{:?}", other.is_none()),
        }
        assert!(matches!(resolve("Sketch", &APPS), Resolved::Disabled(A("sketch", ..))));
        // A disabled app is never reached by prefix.
        assert!(resolve("sk", &APPS).is_none());
        assert!(resolve("", &APPS).is_none());
    }

    impl<T> Resolved<'_, T> {
        fn is_none(&self) -> bool {
            matches!(self, Resolved::None)
        }
    }
}
