//! What a client is told of an action call's result, in the client protocol's form
//! (docs/PROTOCOL.md, "Consent"): `{output, revision}`, `{task: {id, state}, revision}` or
//! `{results: [{index, output | task | error}], revision}`. A call that waited for the user's
//! confirmation ends as a task whose result is exactly this answer, so a client reads it the
//! same way whether the call ran at once or after a prompt.

use alloc::vec::Vec;

use super::{BatchOutcome, CallResult, TaskSnapshot, TaskState};
use crate::{Map, Value};

impl CallResult {
    /// The answer to `actions/execute` (an executed or deferred result) or `actions/batch`
    /// (a batch result); `None` for any other result.
    ///
    /// ```
    /// # use jfgui_proto::channel::CallResult;
    /// # use jfgui_proto::Value;
    /// let answer = CallResult::Executed { output: Value::from(1u64).into(), revision: 7 }.into_client_answer().unwrap();
    /// assert_eq!(answer.get("revision").and_then(Value::as_u64), Some(7));
    /// ```
    pub fn into_client_answer(self) -> Option<Map> {
        let (mut m, revision) = match self {
            CallResult::Executed { output, revision } => {
                (member("output", output.into_value()), revision)
            }
            CallResult::Deferred { task, revision } => (member("task", task.brief()), revision),
            CallResult::Batch { results, revision } => {
                let entries: Vec<Value> = results
                    .into_iter()
                    .map(|entry| {
                        let mut m = member("index", Value::from(entry.index));
                        let (name, value) = match entry.outcome {
                            BatchOutcome::Output(v) => ("output", v),
                            BatchOutcome::Task(t) => ("task", t.brief()),
                            BatchOutcome::Error(e) => ("error", e.to_wire()),
                        };
                        m.insert(name, value);
                        Value::Object(m)
                    })
                    .collect();
                (member("results", Value::Array(entries)), revision)
            }
            _ => return None,
        };
        m.insert("revision", revision);
        Some(m)
    }
}

impl TaskSnapshot {
    /// `{id, state}`: how an answer names a task it started.
    pub fn brief(&self) -> Value {
        let mut m = Map::with_capacity(2);
        m.insert("id", self.id.as_str());
        m.insert("state", self.state.as_str());
        Value::Object(m)
    }
}

impl TaskState {
    /// The wire name, e.g. `"cancelling"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            TaskState::Running => "running",
            TaskState::Cancelling => "cancelling",
            TaskState::Cancelled => "cancelled",
            TaskState::Completed => "completed",
            TaskState::Failed => "failed",
        }
    }
}

fn member(name: &str, value: Value) -> Map {
    let mut m = Map::with_capacity(2);
    m.insert(name, value);
    m
}

#[cfg(test)]
mod tests {
    use alloc::vec;

    use super::*;
    use crate::channel::BatchEntry;
    use crate::{ActionError, Limits, Reason};

    fn json(m: Map) -> alloc::string::String {
        let bytes = crate::encode(&Value::Object(m), &Limits::DEFAULT).unwrap();
        alloc::string::String::from_utf8(bytes).unwrap()
    }

    #[test]
    fn answers_are_the_client_protocol_forms() {
        let executed = CallResult::Executed { output: Value::from("x").into(), revision: 3 };
        assert_eq!(json(executed.into_client_answer().unwrap()), r#"{"output":"x","revision":3}"#);
        let task = TaskSnapshot::new("t", TaskState::Running);
        let deferred = CallResult::Deferred { task: task.clone(), revision: 4 };
        assert_eq!(
            json(deferred.into_client_answer().unwrap()),
            r#"{"task":{"id":"t","state":"running"},"revision":4}"#
        );
        let batch = CallResult::Batch {
            results: vec![
                BatchEntry { index: 0, outcome: BatchOutcome::Output(Value::Null) },
                BatchEntry { index: 1, outcome: BatchOutcome::Task(task) },
                BatchEntry {
                    index: 2,
                    outcome: BatchOutcome::Error(ActionError::new(Reason::Busy, "Busy.")),
                },
            ],
            revision: 5,
        };
        assert_eq!(
            json(batch.into_client_answer().unwrap()),
            r#"{"results":[{"index":0,"output":null},{"index":1,"task":{"id":"t","state":"running"}},{"index":2,"error":{"code":1000,"class":"not_executed","reason":"busy","message":"Busy.","data":{}}}],"revision":5}"#
        );
        assert_eq!(CallResult::Revision { revision: 1 }.into_client_answer(), None);
    }

    #[test]
    fn state_names_are_the_wire_names() {
        for state in [
            TaskState::Running,
            TaskState::Cancelling,
            TaskState::Cancelled,
            TaskState::Completed,
            TaskState::Failed,
        ] {
            assert_eq!(crate::to_value(&state).unwrap(), Value::from(state.as_str()));
        }
    }
}
