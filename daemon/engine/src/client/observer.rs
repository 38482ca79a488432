//! What the audit log sees of a call: the one hook in [`methods::call`], so JSON-1, MCP (per-app
//! and all-apps), the bridge and headless clients are recorded alike.
//!
//! Recorded: `actions/execute` of a write action (or of a name the app does not have: an
//! attempt to change something), `actions/batch` holding a write (or an unknown name), and
//! `tasks/cancel`; with `--audit-reads` also read actions, read-only batches, `state/inspect`,
//! `resources/read` and `view/render`. Never: `agent/info`, `actions/list`,
//! `actions/describe`, `tasks/get` (answered by the daemon, nothing reaches the app to act).
//!
//! The call path only clones what the call holds (a JSON-1 input is a shared fragment: a
//! reference count) and queues the record without blocking (`audit/writer.rs` hashes and
//! writes); the outcome is read from the result the client gets: a refusal (invalid params,
//! `not_executed`, `not_found`) is `refused`, `outcome_unknown` is `unknown`, never `failed`.
//!
//! Nothing of it waits in front of the client's answer: [`Observer::finish`] only notes the
//! finished call on its connection ([`ClientFate`]), and the connection settles it (the
//! `activity` notice made, the record queued) once the answers of the calls it just polled
//! were written or queued ([`ClientFate::settle`], called by `running.rs` after each poll).
//!
//! A client that stops sending (EOF, read error) may have gone away (killed) or only
//! half-closed its side and still wait for its answers. Records of calls that finish after
//! that wait until the connection knows whether their answers were written
//! ([`ClientFate::close`], shared by the per-app and the all-apps connections): when not, the
//! record says `unknown{client_disconnected}` with the app's own outcome in `appOutcome`: the
//! agent never learned what the app did.
//!
//! After the record, an app that asked for it in `hello` gets an `activity` notice (who, what,
//! outcome) queued without waiting; no room in its queue drops the notice and counts it
//! (`daemon/status.activityDropped`), the call is never delayed or failed by it.
//!
//! [`methods::call`]: super::methods::call

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use jfgui_proto::channel::ConsentAnswer;
use jfgui_proto::{ActionKind, Map, Payload, Value};

use super::Target;
use super::method::{Args, Method, MethodError};
use crate::PeerInfo;
use crate::app::{App, Registration};
use crate::audit::record::{ConsentNote, activity_client};
use crate::audit::{Action, AppRef, Audit, Client, Outcome, Protocol, Record, time};
use crate::consent::{Asker, Decided};

/// Who calls, for the audit log: fixed for a connection, except the protocol revision and
/// `clientInfo`, which MCP sets per request ([`Target::speaking`]).
#[derive(Debug, Clone)]
pub struct Caller {
    audit: Audit,
    client: Arc<Client>,
    app: Arc<AppRef>,
    protocol: Protocol,
    /// The client's text in `activity` notices while no `clientInfo` names it, made once.
    notice_client: Arc<str>,
    /// The connection's client, shared by every call on it.
    fate: ClientFate,
}

/// What became of a connection's client, shared by every call on the connection (to its app,
/// or to any app on the all-apps server). Cheap to clone.
#[derive(Debug, Clone, Default)]
pub struct ClientFate(Arc<Mutex<Fate>>);

/// Whether the client stopped sending, the calls finished but not settled yet, and the records
/// of calls that finished after the client stopped.
#[derive(Debug, Default)]
struct Fate {
    stopped: bool,
    /// At most the connection's in-flight calls; emptied by every settle (its room kept).
    finished: Vec<Finished>,
    /// At most the connection's in-flight calls.
    parked: Vec<(Audit, Record)>,
}

/// A call whose outcome is known, waiting for its answer to go out first.
#[derive(Debug)]
struct Finished {
    audit: Audit,
    record: Record,
    /// The app and the client's text for its `activity` notice, when it asked for them.
    notice: Option<(App, Arc<str>)>,
}

impl ClientFate {
    /// Closes the connection whose reading side `ended` (`"eof"` and `"read error"`: the
    /// client stopped sending, it may be gone) with `finish`, which lets the calls running
    /// deliver their answers and says whether every one was written. The records of calls
    /// that finished after the client stopped go to the log then, as
    /// `unknown{client_disconnected}` if their answers were not written.
    pub async fn close(&self, ended: &str, finish: impl Future<Output = bool>) {
        if matches!(ended, "eof" | "read error") {
            self.lock().stopped = true;
        }
        let delivered = finish.await;
        // `finish` drove the calls to their end, each poll settling; this is for the rest.
        self.settle();
        let parked = std::mem::take(&mut self.lock().parked);
        for (audit, record) in parked {
            audit.submit(if delivered { record } else { record.undelivered() });
        }
    }

    /// Settles the calls finished since the last settle, in the order they finished: the
    /// `activity` notice for the app (no room in its queue: dropped and counted), then the
    /// record, logged now or parked until [`ClientFate::close`] when the client stopped.
    /// Called by the connection after the answers of the calls it polled went out.
    pub fn settle(&self) {
        let mut guard = self.lock();
        let fate = &mut *guard;
        for Finished { audit, record, notice } in fate.finished.drain(..) {
            if let Some((app, client)) = notice
                && !app.notify(&record.activity(&client))
            {
                audit.activity_dropped_one();
            }
            if fate.stopped {
                fate.parked.push((audit, record));
            } else {
                audit.submit(record);
            }
        }
    }

    /// Notes a finished call for the next [`ClientFate::settle`].
    fn finished(&self, call: Finished) {
        self.lock().finished.push(call);
    }

    fn lock(&self) -> MutexGuard<'_, Fate> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Caller {
    /// The caller of a connection from `peer` to the app `registration` describes (JSON-1 until
    /// MCP says otherwise); `fate` is the connection's.
    pub fn new(
        audit: Audit,
        peer: PeerInfo,
        asker: &Asker,
        registration: &Registration,
        fate: ClientFate,
    ) -> Caller {
        let agent = asker.may_grant().then(|| (asker.exe().to_owned(), asker.pid()));
        let client = Client::new(peer.uid, peer.pid, peer.transport, agent);
        Caller {
            audit,
            notice_client: activity_client(&client, None).into(),
            client: Arc::new(client),
            app: Arc::new(AppRef {
                slug: registration.slug().to_owned(),
                display_name: registration.display_name().to_owned(),
                pid: registration.pid(),
            }),
            protocol: Protocol::Json1,
            fate,
        }
    }

    /// The connection's client.
    pub fn fate(&self) -> &ClientFate {
        &self.fate
    }

    /// The same caller speaking `protocol`.
    pub fn speaking(mut self, protocol: Protocol) -> Caller {
        self.protocol = protocol;
        self
    }
}

/// One recorded call between [`Observer::start`] and [`Observer::finish`].
#[derive(Debug)]
pub struct Observer {
    caller: Caller,
    started: Instant,
    time_ms: u64,
    method: Method,
    action: Action,
    input: Option<Payload>,
    expected_revision: Option<u64>,
    /// The app, when it asked for `activity` notices.
    notify: Option<App>,
}

impl Observer {
    /// Starts observing a call of `method` with `params`, when it is one to record.
    pub fn start(target: &Target, method: Method, args: &Args) -> Option<Observer> {
        let params = &args.params;
        let caller = target.caller()?;
        let app = target.app();
        let reads = caller.audit.records_reads();
        let kind_of = |name: &str| app.registration().action(name).map(|a| a.kind);
        let changes = |name: &str| kind_of(name) != Some(ActionKind::Read);
        let name_of = |v: &Value| v.get("action").and_then(Value::as_str).unwrap_or("").to_owned();
        let revision_of = |v: &Map| v.get("expectedRevision").and_then(Value::as_u64);
        let (action, input, expected_revision) = match method {
            Method::ActionsExecute => {
                let name = params.get("action").and_then(Value::as_str).unwrap_or("");
                if !reads && !changes(name) {
                    return None;
                }
                let input = args.input().unwrap_or_else(|| Map::new().into());
                (Action::One(name.to_owned()), Some(input), revision_of(params))
            }
            Method::ActionsBatch => {
                let calls = params.get("calls").and_then(Value::as_array).unwrap_or(&[]);
                let names: Vec<String> = calls.iter().map(name_of).collect();
                if !reads && !names.iter().any(|n| changes(n)) {
                    return None;
                }
                let atomic = params.get("atomic").and_then(Value::as_bool).unwrap_or(false);
                let expected = calls.iter().find_map(|c| c.as_object().and_then(revision_of));
                let input = params.get("calls").cloned().map(Payload::Value);
                (Action::Calls { names, atomic }, input, expected)
            }
            Method::TasksCancel => {
                let id = params.get("id").and_then(Value::as_str).unwrap_or("");
                (Action::CancelTask(id.to_owned()), None, None)
            }
            Method::StateInspect | Method::ViewRender if reads => {
                let input = args.input().unwrap_or_else(|| Map::new().into());
                (Action::One(method.name().to_owned()), Some(input), None)
            }
            Method::ResourcesRead if reads => {
                (Action::One(method.name().to_owned()), Some(args.to_payload()), None)
            }
            _ => return None,
        };
        Some(Observer {
            caller: caller.clone(),
            started: Instant::now(),
            time_ms: time::now_ms(),
            method,
            action,
            input,
            expected_revision,
            notify: app.registration().wants_activity().then(|| app.clone()),
        })
    }

    /// What records the decision on the call's prompt, when the app reports it: a record of
    /// the same call whose outcome is the decision (`ok` for a yes, `refused` with the task's
    /// reason otherwise) and whose `consent` says how it was decided.
    pub fn decision(&self) -> Decided {
        let caller = self.caller.clone();
        let method = self.method.name();
        let action = self.action.clone();
        let started = self.started;
        Box::new(move |answer, grant| {
            let refused =
                |reason: &str| Outcome::Refused { class: "not_executed", reason: reason.into() };
            let outcome = match answer {
                ConsentAnswer::Allow | ConsentAnswer::AllowAlways => Outcome::Ok,
                ConsentAnswer::Deny => refused("denied_by_user"),
                ConsentAnswer::Timeout => refused("confirmation_timeout"),
                ConsentAnswer::NoUi => refused("no_confirmation_ui"),
                ConsentAnswer::Cancelled => refused("cancelled"),
            };
            caller.audit.submit(Record {
                time_ms: time::now_ms(),
                client: caller.client.clone(),
                protocol: caller.protocol.clone(),
                app: caller.app.clone(),
                method,
                action: action.clone(),
                input: None,
                expected_revision: None,
                revision: None,
                outcome,
                app_outcome: None,
                consent: Some(ConsentNote { asked: true, answer: Some(answer.as_str()), grant }),
                duration_us: u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX),
            });
        })
    }

    /// Notes how the call ended (`result` as the client gets it; `consent`, how a call of a
    /// `confirm` action went out); the connection records it (and notifies the app) once the
    /// answer went out ([`ClientFate::settle`]).
    pub fn finish(self, result: &Result<Payload, MethodError>, consent: Option<ConsentNote>) {
        let duration_us = u64::try_from(self.started.elapsed().as_micros()).unwrap_or(u64::MAX);
        let (revision, outcome) = match result {
            Ok(m) => (m.get("revision").and_then(Value::as_u64), batch_outcome(m)),
            Err(MethodError::InvalidParams { data, .. }) => {
                (None, Outcome::Refused { class: "invalid_params", reason: reason_of(data) })
            }
            Err(MethodError::Internal { .. }) => {
                (None, Outcome::Failed { class: "internal", reason: "internal".into() })
            }
            Err(MethodError::Action(e)) => {
                let data = e.reason.data();
                let current = data.get("currentRevision").and_then(Value::as_u64);
                (current, outcome_of(e.class().as_str(), e.reason.as_str().to_owned()))
            }
        };
        let Caller { audit, client, app, protocol, notice_client, fate } = self.caller;
        let record = Record {
            time_ms: self.time_ms,
            client,
            protocol,
            app,
            method: self.method.name(),
            action: self.action,
            input: self.input,
            expected_revision: self.expected_revision,
            revision,
            outcome,
            app_outcome: None,
            consent,
            duration_us,
        };
        let notice = self.notify.map(|app| (app, notice_client));
        fate.finished(Finished { audit, record, notice });
    }
}

/// A batch result's outcome: its first failed call's (an atomic batch reports the one that
/// rolled it back); any other result is `ok`.
fn batch_outcome(result: &Payload) -> Outcome {
    let failed = result
        .get("results")
        .and_then(Value::as_array)
        .and_then(|entries| entries.iter().find_map(|e| e.get("error")));
    match failed {
        None => Outcome::Ok,
        Some(error) => {
            let class = error.get("class").and_then(Value::as_str).unwrap_or("failed");
            let reason = error.get("reason").and_then(Value::as_str).unwrap_or("").to_owned();
            outcome_of(class, reason)
        }
    }
}

fn outcome_of(class: &str, reason: String) -> Outcome {
    match class {
        "not_executed" => Outcome::Refused { class: "not_executed", reason },
        "not_found" => Outcome::Refused { class: "not_found", reason },
        "outcome_unknown" => Outcome::Unknown { reason },
        "internal" => Outcome::Failed { class: "internal", reason },
        _ => Outcome::Failed { class: "failed", reason },
    }
}

fn reason_of(data: &Map) -> String {
    data.get("reason").and_then(Value::as_str).unwrap_or("invalid_params").to_owned()
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::audit::record::CLIENT_DISCONNECTED;
    use crate::audit::{AuditConfig, AuditFile};

    /// `(action, outcome)` of every record in the log so far.
    async fn logged(audit: &Audit, dir: &std::path::Path) -> Vec<(String, String)> {
        assert!(audit.flush(Duration::from_secs(60)).await);
        let text = std::fs::read_to_string(AuditFile::path(dir, 0)).unwrap_or_default();
        text.lines()
            .map(|line| {
                let v = jfgui_proto::parse(line.as_bytes(), &jfgui_proto::Limits::DEFAULT).unwrap();
                let outcome = v.get("outcome").unwrap();
                let outcome = match outcome.as_str() {
                    Some(word) => word.to_owned(),
                    None => {
                        let unknown = outcome.get("unknown").unwrap();
                        unknown.get("reason").unwrap().as_str().unwrap().to_owned()
                    }
                };
                (v.get("action").unwrap().as_str().unwrap().to_owned(), outcome)
            })
            .collect()
    }

    #[tokio::test]
    async fn a_finished_call_is_recorded_once_when_its_connection_settles_it_never_before() {
        let dir = std::env::temp_dir().join(format!("jfgui-observer-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let audit = Audit::start(AuditConfig { dir: Some(dir.clone()), ..AuditConfig::default() });
        let fate = ClientFate::default();
        let finished = |action: &str| Finished {
            audit: audit.clone(),
            record: Record::sample(action.into()),
            notice: None,
        };
        fate.finished(finished("first"));
        assert_eq!(logged(&audit, &dir).await, [], "recorded before its answer went out");
        fate.settle();
        fate.settle();
        let ok = |a: &str| (a.to_owned(), "ok".to_owned());
        assert_eq!(logged(&audit, &dir).await, [ok("first")]);

        // The client stops sending: calls finishing then wait for the connection's end, and
        // their answers were not all written, so they are `client_disconnected`; a call the
        // last poll did not settle is settled by the close.
        let unknown = |a: &str| (a.to_owned(), CLIENT_DISCONNECTED.to_owned());
        let drain = fate.clone();
        let pending = finished("unsettled");
        let finish = async move {
            drain.finished(finished("second"));
            drain.settle();
            drain.finished(pending);
            false
        };
        fate.close("eof", finish).await;
        assert_eq!(
            logged(&audit, &dir).await,
            [ok("first"), unknown("second"), unknown("unsettled")]
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
