//! Property tests of the instance generator: for arbitrary schemas of every kind, rendered to
//! JSON Schema as `actions/describe` shows them, the minimal instance validates against the
//! schema, it exists exactly when an independent oracle says some value does, and a violating
//! instance is refused.

use jfgui_proto::schema::{minimal_instance, violating_instance};
use jfgui_proto::{Property, Schema};
use proptest::prelude::*;

fn leak<T>(value: T) -> &'static T {
    Box::leak(Box::new(value))
}

fn leak_slice<T>(items: Vec<T>) -> &'static [T] {
    Box::leak(items.into_boxed_slice())
}

fn leak_str(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}

/// Short strings, some non-ASCII (lengths count characters, not bytes).
fn word() -> impl Strategy<Value = String> {
    "[ab\u{e9}\u{1d11e}]{0,4}"
}

fn arb_schema() -> impl Strategy<Value = Schema> {
    let bound = prop::option::of(-3i64..4);
    let leaf = prop_oneof![
        Just(Schema::Null),
        Just(Schema::Boolean),
        (bound.clone(), bound).prop_map(|(min, max)| Schema::Integer { min, max }),
        Just(Schema::Number),
        (prop::option::of(0u32..4), prop::option::of(prop::collection::vec(word(), 0..4)))
            .prop_map(|(max_length, one_of)| Schema::String {
                max_length,
                one_of: one_of.map(|l| leak_slice(l.into_iter().map(leak_str).collect())),
            }),
        Just(Schema::Any),
    ];
    leaf.prop_recursive(4, 48, 5, |inner| {
        prop_oneof![
            (inner.clone(), prop::option::of(0u32..3))
                .prop_map(|(items, max_items)| Schema::Array { items: leak(items), max_items }),
            (
                prop::collection::vec(
                    (
                        prop::sample::select(vec!["a", "b", "c", "a/~"]),
                        inner.clone(),
                        any::<bool>()
                    ),
                    0..4
                ),
                any::<bool>()
            )
                .prop_map(|(members, additional)| Schema::Object {
                    properties: leak_slice(
                        members
                            .into_iter()
                            .map(|(name, schema, required)| Property {
                                name,
                                schema: leak(schema),
                                required,
                            })
                            .collect()
                    ),
                    additional,
                }),
            prop::collection::vec(inner, 0..4).prop_map(|alts| Schema::AnyOf(leak_slice(alts))),
        ]
    })
}

/// Whether some value matches `schema`, decided on the `Schema` itself (not its rendering):
/// the oracle the generator is held to.
fn has_instance(schema: &Schema) -> bool {
    match schema {
        Schema::Null | Schema::Boolean | Schema::Number | Schema::Any | Schema::Array { .. } => {
            true
        }
        Schema::Integer { min, max } => !matches!((min, max), (Some(lo), Some(hi)) if lo > hi),
        Schema::String { max_length, one_of } => one_of.is_none_or(|choices| {
            choices.iter().any(|c| max_length.is_none_or(|m| c.chars().count() <= m as usize))
        }),
        // The validator checks a member against the first property of its name.
        Schema::Object { properties, .. } => properties.iter().filter(|p| p.required).all(|p| {
            properties.iter().find(|q| q.name == p.name).is_some_and(|q| has_instance(q.schema))
        }),
        Schema::AnyOf(alternatives) => alternatives.iter().any(has_instance),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2048, ..ProptestConfig::default() })]

    #[test]
    fn the_minimal_instance_validates_and_exists_exactly_when_some_value_does(schema in arb_schema()) {
        let rendered = schema.to_json_schema();
        match minimal_instance(&rendered) {
            Ok(value) => {
                prop_assert_eq!(schema.validate(&value), Ok(()), "generated {:?} for {:?}", value, rendered);
                prop_assert!(has_instance(&schema), "generated {:?} for an impossible schema", value);
            }
            Err(e) => {
                prop_assert!(!has_instance(&schema), "no instance ({}) for {:?}", e, rendered);
                prop_assert!(!e.message.is_empty());
            }
        }
    }

    #[test]
    fn the_violating_instance_is_refused(schema in arb_schema()) {
        let rendered = schema.to_json_schema();
        match violating_instance(&rendered) {
            Some(value) => prop_assert!(
                schema.validate(&value).is_err(),
                "{:?} accepted by {:?}", value, rendered
            ),
            // Only a schema that admits every kind of value has nothing to refuse.
            None => prop_assert!(matches!(schema, Schema::Any | Schema::AnyOf(_)), "{:?}", rendered),
        }
    }
}
