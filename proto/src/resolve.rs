//! Which app a user's name for it means: exact slug, then exact display name, then a
//! unique prefix of an enabled app's slug. One rule for every place that takes such a name:
//! the CLI's ENDPOINT argument and the `app` argument of the all-apps MCP server.

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

#[cfg(test)]
mod tests {
    use super::*;

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
