//! The rules of calls that wait for the user, each proven on a small board whose every
//! mutation is counted: checks first, the waiting task, nothing run before the yes went out,
//! the revision checked again, deny, withdraw, cancel, the bound, batches asking once, local
//! calls never asking, stray answers ignored.

use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

use jfgui_proto::channel::{
    Agent, Awaiting, BatchCall, Call, CallResult, Consent, ConsentAnswer, ExecuteCall,
    TaskSnapshot, TaskState, WithdrawReason,
};
use jfgui_proto::{ActionError, ActionSpec, Map, Property, Reason, Schema, Value, schema};

use crate::test_support::{call, empty};
use crate::{
    Answer, Availability, Confirmation, Context, Dispatcher, Execution, Host,
    MAX_PENDING_CONFIRMATIONS, StrayAnswer,
};

static ADD_INPUT: Schema = Schema::Object {
    properties: &[Property { name: "by", schema: &schema::INTEGER, required: true }],
    additional: false,
};

const fn board(spec: ActionSpec) -> ActionSpec {
    ActionSpec { undo: true, transaction: Some("board"), ..spec }
}

static ACTIONS: &[ActionSpec] = &[
    board(ActionSpec::write("board.add", "Add to the board.").schemas(&ADD_INPUT, &schema::OBJECT)),
    board(
        ActionSpec::write("board.clear", "Clear the board.").titled("Clear the board").confirmed(),
    ),
    ActionSpec::read("board.peek", "Read the board, once the user allows.").confirmed(),
    ActionSpec::write("board.export", "Export (a task), once the user allows.").confirmed(),
];

#[derive(Debug, Default)]
struct Board {
    value: i64,
    revision: u64,
    saved: Option<(i64, u64)>,
    /// Host calls that ran an action.
    ran: usize,
    /// What `confirm` answers (`None`: later).
    answer_now: Option<Answer>,
    /// Every confirmation asked, in order.
    asked: Vec<Confirmation>,
    /// Every prompt withdrawn, in order.
    withdrawn: Vec<String>,
    /// When set, every action is unavailable.
    modal: bool,
}

impl Board {
    fn new() -> Board {
        Board { revision: 1, value: 5, ..Board::default() }
    }
}

impl Host for Board {
    fn actions(&self) -> &[ActionSpec] {
        ACTIONS
    }
    fn revision(&self) -> u64 {
        self.revision
    }
    fn capabilities(&self) -> u64 {
        0
    }
    fn availability(&self, _action: &ActionSpec) -> Availability {
        if self.modal {
            Availability::Unavailable {
                code: "modal".into(),
                explanation: "A dialog is open.".into(),
            }
        } else {
            Availability::Available
        }
    }
    fn execute(
        &mut self,
        cx: &mut Context<'_>,
        action: &ActionSpec,
        input: &Value,
    ) -> Result<Execution, ActionError> {
        self.ran += 1;
        match action.name {
            "board.add" => {
                self.value += input.get("by").and_then(Value::as_i64).unwrap_or(0);
                self.revision += 1;
            }
            "board.clear" => {
                self.value = 0;
                self.revision += 1;
            }
            "board.export" => {
                cx.tasks().start("export-1")?;
                return Ok(Execution::Deferred("export-1".into()));
            }
            _ => {}
        }
        let mut m = Map::new();
        m.insert("value", self.value);
        Ok(Execution::Output(Value::Object(m)))
    }
    fn supports_transaction(&self, domain: &str) -> bool {
        domain == "board"
    }
    fn begin_transaction(&mut self, _domains: &[&str]) -> Result<(), ActionError> {
        self.saved = Some((self.value, self.revision));
        Ok(())
    }
    fn commit_transaction(&mut self) {
        self.saved = None;
    }
    fn rollback_transaction(&mut self) {
        if let Some((value, revision)) = self.saved.take() {
            (self.value, self.revision) = (value, revision);
        }
    }
    fn confirm(&mut self, confirmation: &Confirmation) -> Option<Answer> {
        self.asked.push(confirmation.clone());
        self.answer_now
    }
    fn withdraw_confirmation(&mut self, ticket: &str) {
        self.withdrawn.push(ticket.into());
    }
}

/// A host that keeps `Host::confirm`'s default.
#[derive(Debug)]
struct NoUi(Board);

impl Host for NoUi {
    fn actions(&self) -> &[ActionSpec] {
        ACTIONS
    }
    fn revision(&self) -> u64 {
        self.0.revision
    }
    fn capabilities(&self) -> u64 {
        0
    }
    fn execute(
        &mut self,
        cx: &mut Context<'_>,
        action: &ActionSpec,
        input: &Value,
    ) -> Result<Execution, ActionError> {
        self.0.execute(cx, action, input)
    }
}

fn by(n: i64) -> Value {
    let mut m = Map::new();
    m.insert("by", n);
    Value::Object(m)
}

fn clear(expected: u64) -> ExecuteCall {
    call("board.clear", empty(), Some(expected))
}

fn consent(granted: Option<u64>) -> Box<Consent> {
    Box::new(Consent {
        agent: Agent {
            exe: "/usr/bin/claude".into(),
            pid: Some(42),
            says: Some("claude-code 1.2".into()),
            transport: "all-apps-mcp".into(),
        },
        granted,
        may_grant: true,
    })
}

fn enabled() -> (Dispatcher, Board) {
    let host = Board::new();
    let mut d = Dispatcher::new(&host).unwrap();
    d.set_enabled(true);
    (d, host)
}

/// The waiting task a call answered with.
fn waiting(r: Result<CallResult, ActionError>) -> TaskSnapshot {
    match r {
        Ok(CallResult::Deferred { task, .. }) => task,
        other => panic!("expected a waiting task, got {other:?}"),
    }
}

fn task(d: &Dispatcher, id: &str) -> TaskSnapshot {
    d.tasks().get(id).cloned().unwrap()
}

fn reason_of(t: &TaskSnapshot) -> &'static str {
    t.error.as_ref().map_or("-", |e| e.reason.as_str())
}

fn answer_of(t: &TaskSnapshot) -> Option<ConsentAnswer> {
    t.consent.map(|c| c.answer)
}

#[test]
fn every_check_runs_before_asking_and_a_refused_call_asks_nothing() {
    let mut host = Board::new();
    let mut d = Dispatcher::new(&host).unwrap();
    let refused = |d: &mut Dispatcher, host: &mut Board, c: ExecuteCall| {
        d.execute(host, 1, &c).unwrap_err().reason
    };
    assert_eq!(refused(&mut d, &mut host, clear(1)), Reason::Disabled);
    d.set_enabled(true);
    assert_eq!(
        refused(&mut d, &mut host, call("board.clear", empty(), None)),
        Reason::RevisionRequired
    );
    assert_eq!(refused(&mut d, &mut host, clear(7)), Reason::StaleRevision { current_revision: 1 });
    assert!(matches!(
        refused(&mut d, &mut host, call("board.clear", by(1), Some(1))),
        Reason::SchemaViolation { .. }
    ));
    host.modal = true;
    assert!(matches!(refused(&mut d, &mut host, clear(1)), Reason::Unavailable { .. }));
    assert!(host.asked.is_empty(), "nobody is asked about a call that would be refused");
    assert_eq!(d.tasks().active_len(), 0);
    assert_eq!((host.ran, host.value), (0, 5));
}

#[test]
fn a_confirm_call_waits_as_a_task_and_runs_only_once_its_yes_was_taken_for_the_daemon() {
    let (mut d, mut host) = enabled();
    let t = waiting(d.execute(&mut host, 7, &clear(1)));
    assert_eq!((t.state, t.awaiting), (TaskState::Running, Some(Awaiting::Confirmation)));
    assert_eq!(
        t.progress.as_ref().and_then(|p| p.message.as_deref()),
        Some("waiting for you to allow Clear the board")
    );
    assert_eq!(host.asked.len(), 1);
    let asked = &host.asked[0];
    assert_eq!(
        (asked.ticket.as_str(), asked.title(), asked.input()),
        (t.id.as_str(), "Clear the board", &empty())
    );
    assert_eq!((asked.agent.as_ref(), asked.may_always, asked.batch_len), (None, false, None));
    // The reply carries the task's creation: no task message repeats it.
    assert!(d.take_task_events().is_empty());

    d.answer(&t.id, Answer::Allow).unwrap();
    assert_eq!(d.run_allowed(&mut host), 0, "the yes has not gone out yet");
    assert_eq!((host.ran, host.value), (0, 5));
    let events = d.take_task_events();
    assert_eq!(events.len(), 1);
    let allowed = &events[0];
    assert_eq!(
        (allowed.state, allowed.awaiting, answer_of(allowed)),
        (TaskState::Running, None, Some(ConsentAnswer::Allow))
    );
    assert_eq!(d.allowed_to_run(), 1);

    assert_eq!(d.run_allowed(&mut host), 1);
    assert_eq!((host.ran, host.value, host.revision), (1, 0, 2));
    let done = task(&d, &t.id);
    assert_eq!(
        (done.state, answer_of(&done), done.awaiting),
        (TaskState::Completed, Some(ConsentAnswer::Allow), None)
    );
    let result = done.result.unwrap();
    assert_eq!(result.get("revision").and_then(Value::as_u64), Some(2));
    assert_eq!(result.get("output").and_then(|o| o.get("value")).and_then(Value::as_i64), Some(0));
    assert_eq!(d.take_task_events().len(), 1, "the completion is reported");
    assert_eq!(d.run_allowed(&mut host), 0, "a call runs once");
}

#[test]
fn a_call_covered_by_a_grant_runs_at_once_and_the_prompt_gets_who_asks() {
    let (mut d, mut host) = enabled();
    let granted = ExecuteCall { consent: Some(consent(Some(3))), ..clear(1) };
    assert!(matches!(
        d.execute(&mut host, 1, &granted),
        Ok(CallResult::Executed { revision: 2, .. })
    ));
    assert!(host.asked.is_empty());
    let asking = ExecuteCall { consent: Some(consent(None)), ..clear(2) };
    waiting(d.execute(&mut host, 2, &asking));
    let asked = &host.asked[0];
    assert_eq!(asked.agent.as_ref().map(|a| a.exe.as_str()), Some("/usr/bin/claude"));
    assert!(asked.may_always);
    assert_eq!(asked.agent_name(), "claude");
}

#[test]
fn the_default_host_cannot_ask_so_nothing_runs() {
    let mut host = NoUi(Board::new());
    let mut d = Dispatcher::new(&host).unwrap();
    d.set_enabled(true);
    let t = waiting(d.execute(&mut host, 1, &clear(1)));
    let ended = task(&d, &t.id);
    assert_eq!(
        (ended.state, reason_of(&ended), answer_of(&ended)),
        (TaskState::Failed, "no_confirmation_ui", Some(ConsentAnswer::NoUi))
    );
    assert_eq!(ended.error.unwrap().class(), jfgui_proto::ErrorClass::NotExecuted);
    assert_eq!(d.take_task_events().len(), 1, "the failure follows the reply");
    assert_eq!(d.run_allowed(&mut host), 0);
    assert_eq!((host.0.ran, host.0.value), (0, 5));
}

#[test]
fn deny_fails_the_task_denied_by_user_and_nothing_runs() {
    let (mut d, mut host) = enabled();
    host.answer_now = Some(Answer::Deny);
    let t = waiting(d.execute(&mut host, 1, &clear(1)));
    let ended = task(&d, &t.id);
    assert_eq!(
        (ended.state, reason_of(&ended), answer_of(&ended)),
        (TaskState::Failed, "denied_by_user", Some(ConsentAnswer::Deny))
    );
    d.take_task_events();
    assert_eq!(d.run_allowed(&mut host), 0);
    assert_eq!((host.ran, host.value, host.revision), (0, 5, 1));
}

#[test]
fn an_answer_given_at_once_still_waits_for_its_update_to_go_out() {
    let (mut d, mut host) = enabled();
    host.answer_now = Some(Answer::AllowAlways);
    let t = waiting(d.execute(&mut host, 1, &clear(1)));
    assert_eq!(t.awaiting, Some(Awaiting::Confirmation), "the reply says it waited");
    assert_eq!(d.run_allowed(&mut host), 0);
    let events = d.take_task_events();
    assert_eq!(answer_of(&events[0]), Some(ConsentAnswer::AllowAlways));
    assert_eq!(d.run_allowed(&mut host), 1);
    let done = task(&d, &t.id);
    assert_eq!(
        (done.state, answer_of(&done)),
        (TaskState::Completed, Some(ConsentAnswer::AllowAlways))
    );
}

#[test]
fn the_revision_is_checked_again_when_an_allowed_call_runs() {
    let (mut d, mut host) = enabled();
    let t = waiting(d.execute(&mut host, 1, &clear(1)));
    // The user edits while the prompt is open.
    d.execute_local(&mut host, "board.add", &by(2)).unwrap();
    d.answer(&t.id, Answer::Allow).unwrap();
    d.take_task_events();
    d.run_allowed(&mut host);
    let ended = task(&d, &t.id);
    assert_eq!(ended.state, TaskState::Failed);
    assert_eq!(ended.error.unwrap().reason, Reason::StaleRevision { current_revision: 2 });
    assert_eq!((host.value, host.revision, host.ran), (7, 2, 1), "only the user's edit ran");
}

#[test]
fn withdrawn_prompts_end_their_calls_and_the_host_is_told() {
    let (mut d, mut host) = enabled();
    let late = waiting(d.execute(&mut host, 1, &clear(1)));
    let gone = waiting(d.execute(&mut host, 2, &clear(1)));
    d.withdraw(&late.id, WithdrawReason::ConfirmationTimeout).unwrap();
    d.withdraw(&gone.id, WithdrawReason::ClientGone).unwrap();
    let t = task(&d, &late.id);
    assert_eq!(
        (t.state, reason_of(&t), answer_of(&t)),
        (TaskState::Failed, "confirmation_timeout", Some(ConsentAnswer::Timeout))
    );
    let t = task(&d, &gone.id);
    assert_eq!((t.state, answer_of(&t)), (TaskState::Cancelled, Some(ConsentAnswer::Cancelled)));
    assert!(host.withdrawn.is_empty(), "told at the next tick");
    d.tick(&mut host);
    assert_eq!(host.withdrawn, [late.id.clone(), gone.id.clone()]);
    // Answers after the withdrawal, and withdrawals of what waits no more, change nothing.
    assert_eq!(d.answer(&late.id, Answer::Allow), Err(StrayAnswer::Unknown));
    assert_eq!(d.withdraw(&gone.id, WithdrawReason::ClientGone), Err(StrayAnswer::Unknown));
    assert_eq!(d.withdraw("confirm-99", WithdrawReason::ClientGone), Err(StrayAnswer::Unknown));
    let answered = waiting(d.execute(&mut host, 3, &clear(1)));
    d.answer(&answered.id, Answer::Allow).unwrap();
    assert_eq!(
        d.withdraw(&answered.id, WithdrawReason::ConfirmationTimeout),
        Err(StrayAnswer::AlreadyAnswered)
    );
    d.take_task_events();
    d.run_allowed(&mut host);
    assert_eq!(task(&d, &answered.id).state, TaskState::Completed, "the yes came first");
    assert_eq!((host.ran, host.value), (1, 0));
}

#[test]
fn cancelling_a_waiting_call_withdraws_its_prompt_and_a_yes_before_the_cancel_wins() {
    let (mut d, mut host) = enabled();
    let t = waiting(d.execute(&mut host, 1, &clear(1)));
    let Ok(CallResult::Task(cancelled)) =
        d.handle(&mut host, 2, &Call::CancelTask { id: t.id.clone() })
    else {
        panic!("tasks/cancel answers the task")
    };
    assert_eq!(
        (cancelled.state, answer_of(&cancelled)),
        (TaskState::Cancelled, Some(ConsentAnswer::Cancelled))
    );
    d.tick(&mut host);
    assert_eq!(host.withdrawn, core::slice::from_ref(&t.id));
    assert_eq!(d.answer(&t.id, Answer::Allow), Err(StrayAnswer::Unknown));

    let t = waiting(d.execute(&mut host, 3, &clear(1)));
    d.answer(&t.id, Answer::Allow).unwrap();
    let Ok(CallResult::Task(cancelling)) =
        d.handle(&mut host, 4, &Call::CancelTask { id: t.id.clone() })
    else {
        panic!("tasks/cancel answers the task")
    };
    assert_eq!(cancelling.state, TaskState::Cancelling);
    d.take_task_events();
    d.run_allowed(&mut host);
    assert_eq!(task(&d, &t.id).state, TaskState::Completed);
    assert_eq!((host.ran, host.value), (1, 0), "exactly one of the two won");
}

#[test]
fn at_most_sixteen_calls_wait_and_the_next_is_refused_at_once() {
    let (mut d, mut host) = enabled();
    let tickets: Vec<String> = (0..MAX_PENDING_CONFIRMATIONS)
        .map(|i| waiting(d.execute(&mut host, i as u64, &clear(1))).id)
        .collect();
    let refused = d.execute(&mut host, 99, &clear(1)).unwrap_err();
    assert_eq!(refused.reason, Reason::TooManyPendingConfirmations);
    assert_eq!(host.asked.len(), MAX_PENDING_CONFIRMATIONS, "the seventeenth asks nobody");
    // An allowed call still counts until it ran; a denied one frees its place.
    d.answer(&tickets[0], Answer::Allow).unwrap();
    assert!(d.execute(&mut host, 100, &clear(1)).is_err());
    d.answer(&tickets[1], Answer::Deny).unwrap();
    waiting(d.execute(&mut host, 101, &clear(1)));
    let mut unique = tickets.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), tickets.len(), "every ticket is its own");
}

#[test]
fn a_batch_asks_once_listing_every_call_that_needs_a_yes() {
    let (mut d, mut host) = enabled();
    let batch = BatchCall {
        calls: vec![
            call("board.add", by(1), Some(1)),
            clear(2),
            call("board.add", by(4), Some(3)),
            call("board.peek", empty(), None),
        ],
        atomic: false,
        stop_on_error: true,
        consent: None,
    };
    let t = waiting(d.batch(&mut host, 1, &batch));
    assert_eq!(host.asked.len(), 1);
    let asked = &host.asked[0];
    let listed: Vec<(Option<u32>, &str)> =
        asked.calls.iter().map(|c| (c.index, c.action.name)).collect();
    assert_eq!(listed, [(Some(1), "board.clear"), (Some(3), "board.peek")]);
    assert_eq!(asked.batch_len, Some(4));
    assert_eq!(asked.summary(), "Clear the board, board.peek (in a batch of 4 calls)");
    assert_eq!(host.ran, 0, "no call of the batch runs before the yes");
    d.answer(&t.id, Answer::Allow).unwrap();
    d.take_task_events();
    d.run_allowed(&mut host);
    let done = task(&d, &t.id);
    assert_eq!(done.state, TaskState::Completed);
    let results =
        done.result.as_ref().and_then(|r| r.get("results")).and_then(Value::as_array).unwrap();
    assert_eq!(results.len(), 4);
    assert_eq!((host.value, host.revision, host.ran), (4, 4, 4));
}

#[test]
fn a_batch_that_would_be_refused_is_refused_whole_without_asking() {
    let (mut d, mut host) = enabled();
    for atomic in [false, true] {
        let batch = BatchCall {
            calls: vec![clear(1), call("board.add", Value::Null, Some(2))],
            atomic,
            stop_on_error: true,
            consent: None,
        };
        let e = d.batch(&mut host, 1, &batch).unwrap_err();
        assert!(matches!(e.reason, Reason::BatchPreflight { index: 1, .. }), "{e:?}");
    }
    // A non-atomic batch names revisions for states after its first write: those are checked
    // as each call runs, not before asking.
    let later = BatchCall {
        calls: vec![call("board.add", by(1), Some(1)), clear(2)],
        atomic: false,
        stop_on_error: true,
        consent: None,
    };
    waiting(d.batch(&mut host, 2, &later));
    let stale_first = BatchCall {
        calls: vec![call("board.add", by(1), Some(9)), clear(10)],
        atomic: false,
        stop_on_error: true,
        consent: None,
    };
    assert!(d.batch(&mut host, 3, &stale_first).is_err());
    assert_eq!((host.asked.len(), host.ran), (1, 0));
}

#[test]
fn an_allowed_atomic_batch_runs_its_preflight_again_against_its_revisions() {
    let (mut d, mut host) = enabled();
    let batch = BatchCall {
        calls: vec![call("board.add", by(1), Some(1)), clear(1)],
        atomic: true,
        stop_on_error: true,
        consent: None,
    };
    let t = waiting(d.batch(&mut host, 1, &batch));
    d.execute_local(&mut host, "board.add", &by(10)).unwrap();
    d.answer(&t.id, Answer::Allow).unwrap();
    d.take_task_events();
    d.run_allowed(&mut host);
    let ended = task(&d, &t.id);
    assert!(matches!(
        ended.error.as_ref().map(|e| &e.reason),
        Some(Reason::BatchPreflight { index: 0, .. })
    ));
    assert_eq!((host.value, host.revision), (15, 2), "nothing of the batch ran");
    // Unchanged state: the batch commits as one step.
    let t = waiting(d.batch(
        &mut host,
        2,
        &BatchCall { calls: vec![call("board.add", by(1), Some(2)), clear(2)], ..batch },
    ));
    d.answer(&t.id, Answer::Allow).unwrap();
    d.take_task_events();
    d.run_allowed(&mut host);
    assert_eq!(task(&d, &t.id).state, TaskState::Completed);
    assert_eq!(host.value, 0);
}

#[test]
fn local_calls_never_ask() {
    let (mut d, mut host) = enabled();
    assert!(matches!(
        d.execute_local(&mut host, "board.clear", &empty()),
        Ok(CallResult::Executed { .. })
    ));
    assert!(host.asked.is_empty());
    assert_eq!(host.value, 0);
}

#[test]
fn stray_and_repeated_answers_change_nothing() {
    let (mut d, mut host) = enabled();
    assert_eq!(d.answer("confirm-1", Answer::Allow), Err(StrayAnswer::Unknown));
    let t = waiting(d.execute(&mut host, 1, &clear(1)));
    d.answer(&t.id, Answer::Deny).unwrap();
    assert_eq!(d.answer(&t.id, Answer::Allow), Err(StrayAnswer::Unknown));
    let t = waiting(d.execute(&mut host, 2, &clear(1)));
    d.answer(&t.id, Answer::Allow).unwrap();
    assert_eq!(d.answer(&t.id, Answer::Deny), Err(StrayAnswer::AlreadyAnswered));
    // A host that ends the task itself leaves nothing to answer.
    let t2 = waiting(d.execute(&mut host, 3, &clear(1)));
    d.tasks_mut().cancelled(&t2.id).unwrap();
    assert_eq!(d.answer(&t2.id, Answer::Allow), Err(StrayAnswer::Unknown));
    d.take_task_events();
    assert_eq!(d.run_allowed(&mut host), 1);
    assert_eq!(host.ran, 1);
}

#[test]
fn turning_agent_access_off_ends_every_call_that_waits() {
    let (mut d, mut host) = enabled();
    let waits = waiting(d.execute(&mut host, 1, &clear(1)));
    let allowed = waiting(d.execute(&mut host, 2, &clear(1)));
    d.answer(&allowed.id, Answer::Allow).unwrap();
    d.take_task_events();
    d.set_enabled(false);
    let t = task(&d, &waits.id);
    assert_eq!((t.state, reason_of(&t)), (TaskState::Failed, "disabled"));
    d.tick(&mut host);
    assert_eq!(host.withdrawn, core::slice::from_ref(&waits.id));
    d.run_allowed(&mut host);
    assert_eq!(reason_of(&task(&d, &allowed.id)), "disabled");
    assert_eq!(host.ran, 0);
}

#[test]
fn a_confirmed_call_that_starts_a_task_announces_it() {
    let (mut d, mut host) = enabled();
    let t = waiting(d.execute(&mut host, 1, &call("board.export", empty(), Some(1))));
    assert_eq!(host.asked[0].title(), "board.export", "no title: the name");
    d.answer(&t.id, Answer::Allow).unwrap();
    d.take_task_events();
    d.run_allowed(&mut host);
    let events = d.take_task_events();
    let ids: Vec<(&str, TaskState)> = events.iter().map(|e| (e.id.as_str(), e.state)).collect();
    assert_eq!(ids, [("export-1", TaskState::Running), (t.id.as_str(), TaskState::Completed)]);
    let result = task(&d, &t.id).result.unwrap();
    assert_eq!(
        result.get("task").and_then(|t| t.get("id")).and_then(Value::as_str),
        Some("export-1")
    );
}

#[test]
fn a_lost_connection_ends_every_call_asked_about() {
    let (mut d, mut host) = enabled();
    let waits = waiting(d.execute(&mut host, 1, &clear(1)));
    let allowed = waiting(d.execute(&mut host, 2, &clear(1)));
    d.answer(&allowed.id, Answer::Allow).unwrap();
    d.abandon_confirmations();
    assert_eq!(task(&d, &waits.id).state, TaskState::Cancelled);
    assert_eq!(task(&d, &allowed.id).state, TaskState::Cancelled);
    d.take_task_events();
    assert_eq!(d.run_allowed(&mut host), 0);
    d.tick(&mut host);
    assert_eq!(host.withdrawn, core::slice::from_ref(&waits.id));
    assert_eq!(host.ran, 0);
}

#[test]
fn tickets_never_reuse_a_task_id_the_host_chose() {
    let (mut d, mut host) = enabled();
    d.tasks_mut().start("confirm-1").unwrap();
    let t = waiting(d.execute(&mut host, 1, &clear(1)));
    assert_eq!(t.id, "confirm-2");
}
