//! The grants methods of the control socket: `grants/list {}`, `grants/revoke {id | all}` and
//! `grants/allow {app, action, agent}` (pre-authorizing an agent, for apps without a UI and
//! for tests). Only the user's own processes reach the control socket; an agent that could
//! call these could as well edit `grants.json`, which has the same owner.

use jfgui_proto::{Map, Value};

use super::super::json1::{self, code};
use super::ControlError;
use crate::consent::{AddError, Grant, Grants, MAX_GRANTS};

/// The method names.
pub const METHODS: [&str; 3] = ["grants/list", "grants/revoke", "grants/allow"];

/// Answers `method`, one of [`METHODS`].
pub fn call(grants: &Grants, method: &str, mut params: Map) -> Result<Map, ControlError> {
    match method {
        "grants/revoke" => revoke(grants, &mut params),
        "grants/allow" => allow(grants, &mut params),
        _ => finish(params).map(|()| listed("grants", grants.list())),
    }
}

fn revoke(grants: &Grants, params: &mut Map) -> Result<Map, ControlError> {
    let id = params.remove("id");
    let all = params.remove("all");
    finish(std::mem::take(params))?;
    let which = match (id, all) {
        (Some(id), None) => Some(id.as_u64().ok_or_else(|| {
            invalid("invalid_type", "id", "Parameter \"id\" must be a grant id (an integer).")
        })?),
        (None, Some(Value::Bool(true))) => None,
        _ => {
            return Err(invalid(
                "missing_param",
                "id",
                "Name the grant to revoke (\"id\") or revoke them all (\"all\": true).",
            ));
        }
    };
    let revoked = grants.revoke(which);
    if let (Some(id), true) = (which, revoked.is_empty()) {
        let mut data = json1::reason_data("grant");
        data.insert("grant", id);
        let message = format!("No grant {id}; list them with grants/list.");
        return Err(ControlError { code: NOT_FOUND, message, data });
    }
    Ok(listed("revoked", revoked))
}

fn allow(grants: &Grants, params: &mut Map) -> Result<Map, ControlError> {
    let mut text = |name: &'static str| match params.remove(name) {
        Some(Value::String(s)) if !s.is_empty() => Ok(s),
        _ => Err(invalid(
            "missing_param",
            name,
            &format!("Parameter {name:?} is required: a non-empty string."),
        )),
    };
    let (app, action, agent) = (text("app")?, text("action")?, text("agent")?);
    finish(std::mem::take(params))?;
    if !std::path::Path::new(&agent).is_absolute() {
        return Err(invalid(
            "invalid_agent",
            "agent",
            "Parameter \"agent\" must be the agent's absolute executable path.",
        ));
    }
    match grants.add(&agent, &app, &action, "cli") {
        Ok(grant) => Ok(one_grant(grant)),
        Err(AddError::Full) => {
            let message = format!("There are {MAX_GRANTS} grants already; revoke some first.");
            Err(ControlError { code: BUSY, message, data: json1::reason_data("too_many_grants") })
        }
        Err(AddError::Invalid(what)) => {
            Err(invalid("out_of_range", what, "A text of the grant is too long."))
        }
    }
}

/// `not_found`, as the client protocols number it.
const NOT_FOUND: i64 = 1004;
/// `not_executed`, as the client protocols number it.
const BUSY: i64 = 1000;

fn grant_value(g: Grant) -> Value {
    jfgui_proto::to_value(&g).expect("a grant is strings and numbers")
}

fn one_grant(g: Grant) -> Map {
    let mut m = Map::with_capacity(1);
    m.insert("grant", grant_value(g));
    m
}

fn listed(key: &str, grants: Vec<Grant>) -> Map {
    let mut m = Map::with_capacity(1);
    m.insert(key, Value::Array(grants.into_iter().map(grant_value).collect()));
    m
}

fn finish(params: Map) -> Result<(), ControlError> {
    match params.keys().next() {
        None => Ok(()),
        Some(param) => {
            Err(invalid("unknown_param", param, &format!("Unknown parameter {param:?}.")))
        }
    }
}

fn invalid(reason: &str, param: &str, message: &str) -> ControlError {
    let mut data = json1::reason_data(reason);
    data.insert("param", param);
    ControlError { code: code::INVALID_PARAMS, message: message.to_owned(), data }
}
