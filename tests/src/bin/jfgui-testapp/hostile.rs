//! Hostile registrations and unsolicited messages: an app that is legal
//! but as costly as the rules allow, so the daemon's fairness and totals can be measured and
//! tested against a real host-sdk app.
//!
//! - `--name-bytes N`: the display name repeated (with ` · `) to N bytes, cut at a character
//!   boundary; a single argv string is limited to 128 KiB on Linux, so longer names are built
//!   here.
//! - `--bulk-actions N` with `--description-bytes B` (default 1000): N extra read actions
//!   `bulk.00000`… whose descriptions are B bytes of lower-case prose that never contains `zzz`.
//! - `--huge-schema BYTES`: one read action `huge.describe` whose input schema is a string enum
//!   of about BYTES bytes of 200-byte values (at most 4096 of them, the members bound).
//! - `--unsolicited-tasks N`: once registered, N `task` updates (`running`) for ids the daemon
//!   never saw in a reply.

use jfgui_host_sdk::{ActionSpec, Property, Schema, schema};

use crate::host::ACTIONS;

/// Length of each `huge.describe` enum value.
const ENUM_VALUE_BYTES: usize = 200;

/// What `--bulk-actions`, `--description-bytes` and `--huge-schema` ask for.
#[derive(Debug, Clone, Copy)]
pub struct Registration {
    /// Extra `bulk.*` actions.
    pub bulk_actions: usize,
    /// Bytes of each bulk action's description.
    pub description_bytes: usize,
    /// Approximate bytes of the `huge.describe` input schema (0: no such action).
    pub huge_schema: usize,
}

impl Default for Registration {
    fn default() -> Self {
        Registration { bulk_actions: 0, description_bytes: 1000, huge_schema: 0 }
    }
}

impl Registration {
    /// The test app's actions plus the hostile ones. Leaked: the app registers once per process
    /// and `ActionSpec` holds `'static` data (it is declared as statics by real apps).
    pub fn actions(&self) -> &'static [ActionSpec] {
        if self.bulk_actions == 0 && self.huge_schema == 0 {
            return ACTIONS;
        }
        let mut all: Vec<ActionSpec> = ACTIONS.to_vec();
        for i in 0..self.bulk_actions {
            let name = leak(format!("bulk.{i:05}"));
            let description = leak(prose(self.description_bytes, i));
            all.push(
                ActionSpec::read(name, description).schemas(&schema::EMPTY_OBJECT, &schema::OBJECT),
            );
        }
        if self.huge_schema > 0 {
            let values: Vec<&'static str> = (0..(self.huge_schema / ENUM_VALUE_BYTES).min(4096))
                .map(|i| leak(format!("{i:0width$}", width = ENUM_VALUE_BYTES)))
                .collect();
            let choice: &'static Schema = Box::leak(Box::new(Schema::String {
                max_length: None,
                one_of: Some(Vec::leak(values)),
            }));
            let properties: &'static [Property] =
                Vec::leak(vec![Property { name: "choice", schema: choice, required: true }]);
            let input: &'static Schema =
                Box::leak(Box::new(Schema::Object { properties, additional: false }));
            all.push(
                ActionSpec::read("huge.describe", "An action whose input schema is very large.")
                    .schemas(input, &schema::OBJECT),
            );
        }
        Vec::leak(all)
    }
}

fn leak(s: String) -> &'static str {
    String::leak(s)
}

/// `len` bytes of lower-case text without `zzz`, varied by `seed`.
fn prose(len: usize, seed: usize) -> String {
    const WORDS: [&str; 8] =
        ["alpha ", "beta ", "gamma ", "delta ", "omega ", "kappa ", "sigma ", "theta "];
    let mut s = String::with_capacity(len + 8);
    let mut i = seed;
    while s.len() < len {
        s.push_str(WORDS[i % WORDS.len()]);
        i = i.wrapping_mul(31).wrapping_add(7);
    }
    s.truncate(len);
    s
}

/// `base` repeated with ` · ` to `len` bytes, cut at a character boundary.
pub fn long_name(base: &str, len: usize) -> String {
    let mut s = String::with_capacity(len + 8);
    while s.len() < len {
        if !s.is_empty() {
            s.push_str(" · ");
        }
        s.push_str(base);
    }
    let mut cut = len;
    while !s.is_char_boundary(cut) {
        cut -= 1;
    }
    s.truncate(cut);
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_registration_has_what_was_asked() {
        let r = Registration { bulk_actions: 10, description_bytes: 300, huge_schema: 20_000 };
        let actions = r.actions();
        assert_eq!(actions.len(), ACTIONS.len() + 11);
        let bulk = actions.iter().find(|a| a.name == "bulk.00003").unwrap();
        assert_eq!(bulk.description.len(), 300);
        assert!(!bulk.description.contains("zzz"));
        let huge = actions.iter().find(|a| a.name == "huge.describe").unwrap();
        let Schema::Object { properties, .. } = huge.input else { panic!("object schema") };
        let Schema::String { one_of: Some(values), .. } = properties[0].schema else {
            panic!("enum")
        };
        assert_eq!(values.len(), 100);
    }

    #[test]
    fn long_names_are_cut_at_a_char_boundary() {
        let n = long_name("Lång", 1001);
        assert!(n.len() <= 1001 && n.len() >= 998);
        assert!(n.starts_with("Lång · Lång"));
    }
}
