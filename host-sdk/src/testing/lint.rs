//! The declaration lint: what a model reading `actions/describe` needs from each action. Every
//! problem is a WARN (the app works, but agents will misuse it); an action without any is one
//! PASS.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use jfgui_proto::Value;
use jfgui_proto::channel::ActionInfo;

use super::report::{Check, Finding, Level, Subject};

/// One finding per problem of each action, or one PASS for an action without any.
pub(crate) fn lint(actions: &[ActionInfo]) -> Vec<Finding> {
    let mut out = Vec::new();
    for action in actions {
        let subject = Subject::Action(action.name.clone());
        let before = out.len();
        let mut warn = |why: String, fix: &str| {
            out.push(Finding {
                level: Level::Warn,
                check: Check::Lint,
                subject: subject.clone(),
                why,
                fix: String::from(fix),
            });
        };
        if let Some(why) = description_problem(action) {
            warn(
                why,
                "say in a sentence or two what it does, what it needs and what it changes: models pick actions by their descriptions",
            );
        }
        if let Some(why) = input_problem(&action.input_schema) {
            warn(
                why,
                "declare the input as an object that refuses unknown members (\"additionalProperties\": false; in Rust Schema::Object { additional: false, .. }), so a misspelt member is refused instead of ignored",
            );
        }
        if declares_nothing(&action.output_schema) {
            warn(
                String::from(
                    "declares no output schema (any object), so clients cannot know what comes back",
                ),
                "declare the output's members (\"outputSchema\"; in Rust .schemas(input, output)); MCP clients show it as the tool's outputSchema",
            );
        }
        if !is_noun_verb(&action.name) {
            warn(
                format!("the name {:?} is not in dotted noun.verb form", action.name),
                "name it noun.verb in lower case, e.g. document.export or shape.delete",
            );
        }
        if out.len() == before {
            out.push(Finding {
                level: Level::Pass,
                check: Check::Lint,
                subject,
                why: String::from("described, object input refusing unknown members, output declared, noun.verb name"),
                fix: String::new(),
            });
        }
    }
    out
}

fn description_problem(action: &ActionInfo) -> Option<String> {
    let description = action.description.trim();
    if description.is_empty() {
        Some(String::from("has no description"))
    } else if description.eq_ignore_ascii_case(&action.name) {
        Some(String::from("its description only repeats its name"))
    } else if description.chars().count() <= action.name.chars().count() {
        Some(format!("its description {description:?} is no longer than its name"))
    } else {
        None
    }
}

fn input_problem(schema: &Value) -> Option<String> {
    if schema.get("type").and_then(Value::as_str) != Some("object") {
        return Some(String::from("its input schema is not an object"));
    }
    (schema.get("additionalProperties") != Some(&Value::Bool(false)))
        .then(|| String::from("its input schema accepts unknown members"))
}

/// `{}` or the default any-object schema (`{"type":"object","properties":{}}`).
fn declares_nothing(schema: &Value) -> bool {
    let Some(m) = schema.as_object() else { return false };
    m.is_empty()
        || (m.len() == 2
            && schema.get("type").and_then(Value::as_str) == Some("object")
            && schema.get("properties").and_then(Value::as_object).is_some_and(|p| p.is_empty()))
}

/// Two or more dot-separated parts, each a lower-case letter followed by lower-case letters,
/// digits, `_` or `-`.
fn is_noun_verb(name: &str) -> bool {
    let mut parts = 0;
    for part in name.split('.') {
        let mut chars = part.chars();
        let starts = chars.next().is_some_and(|c| c.is_ascii_lowercase());
        if !starts
            || !chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-')
        {
            return false;
        }
        parts += 1;
    }
    parts >= 2
}

#[cfg(test)]
mod tests {
    use jfgui_proto::{ActionSpec, Property, Schema, schema};

    use super::*;

    static TEXT: Schema = Schema::Object {
        properties: &[Property { name: "text", schema: &schema::STRING, required: true }],
        additional: false,
    };
    static SUMMARY: Schema = Schema::Object {
        properties: &[Property { name: "length", schema: &schema::UNSIGNED, required: true }],
        additional: false,
    };

    fn findings(spec: ActionSpec) -> Vec<(Level, String)> {
        lint(&[spec.info().unwrap()]).into_iter().map(|f| (f.level, f.why)).collect()
    }

    #[test]
    fn a_good_declaration_is_one_pass() {
        let good = ActionSpec::write("document.text.insert", "Insert text at the caret.")
            .schemas(&TEXT, &SUMMARY);
        assert_eq!(findings(good).len(), 1);
        assert_eq!(findings(good)[0].0, Level::Pass);
    }

    #[test]
    fn each_problem_is_one_warning() {
        let w = |spec| findings(spec).into_iter().map(|(_, why)| why).collect::<Vec<_>>();
        assert_eq!(
            w(ActionSpec::read("counter", "counter").schemas(&schema::OBJECT, &schema::OBJECT)),
            [
                "its description only repeats its name",
                "its input schema accepts unknown members",
                "declares no output schema (any object), so clients cannot know what comes back",
                "the name \"counter\" is not in dotted noun.verb form",
            ]
        );
        assert_eq!(
            w(ActionSpec::read("a.get", "").schemas(&schema::ANY, &SUMMARY)),
            ["has no description", "its input schema is not an object"]
        );
        assert_eq!(
            w(ActionSpec::read("doc.get", "Get").schemas(&schema::EMPTY_OBJECT, &schema::ANY))[0],
            "its description \"Get\" is no longer than its name"
        );
    }

    #[test]
    fn noun_verb_names() {
        for ok in ["document.get", "ui.render", "shape.set_fill", "a1.b-2.c"] {
            assert!(is_noun_verb(ok), "{ok}");
        }
        for bad in ["counter", "Document.get", "doc..get", ".get", "doc.", "doc.Get", "1doc.get"] {
            assert!(!is_noun_verb(bad), "{bad}");
        }
    }
}
