//! Prompts under load and faults, with Notepad asking on its own terminal (so a prompt stays
//! open until the test answers): nobody answering in time, the calling client going away, a
//! hundred calls at once, the app killed while prompts wait, and a cancel racing the user's
//! yes. Nothing is applied unless allowed, and the document says so.

use std::thread;

use jfgui_tests::cli::{daemon_with_notepad, run_agent};
use jfgui_tests::consent::{
    audit_record, clear, document, final_state, notepad_asking, notepad_in_terminal, waiting_task,
};
use jfgui_tests::{LineClient, PATIENCE, TempDir, Watchdog, wait_until};
use serde_json::{Value, json};

#[test]
fn a_prompt_nobody_answers_is_withdrawn_at_the_deadline() {
    let _w = Watchdog::arm(PATIENCE * 2);
    let dir = TempDir::new();
    let rt = dir.rt();
    let (_daemon, _app, terminal, endpoint) = notepad_asking(&rt, &["--confirm-timeout", "1s"]);
    let (mut client, response) = clear(&endpoint);
    let id = waiting_task(&response);
    let task = final_state(&mut client, &id);
    assert_eq!(
        (task["state"].as_str(), task["error"]["class"].as_str(), task["error"]["reason"].as_str()),
        (Some("failed"), Some("not_executed"), Some("confirmation_timeout")),
        "{task}"
    );
    assert_eq!(task["consent"]["answer"], "timeout", "{task}");
    assert!(terminal.wait_for("no longer waits"), "the prompt closed: {:?}", terminal.text());
    assert_eq!(document(&endpoint), ("hello".to_string(), 0));
    let record = audit_record(&rt, |r| r["consent"]["answer"] == "timeout");
    assert_eq!(record["outcome"]["refused"]["reason"], "confirmation_timeout", "{record}");
}

#[test]
fn a_client_that_goes_away_takes_its_prompt_with_it() {
    let _w = Watchdog::arm(PATIENCE * 2);
    let dir = TempDir::new();
    let rt = dir.rt();
    let (_daemon, _app, terminal, endpoint) = notepad_asking(&rt, &[]);
    let (client, response) = clear(&endpoint);
    let id = waiting_task(&response);
    assert!(terminal.wait_for("wants to: Clear the document"), "{:?}", terminal.text());
    drop(client);
    assert!(terminal.wait_for("no longer waits"), "the prompt closed: {:?}", terminal.text());
    let mut other = LineClient::connect(&endpoint).unwrap();
    let task = final_state(&mut other, &id);
    assert_eq!(task["state"], "cancelled", "{task}");
    assert_eq!(task["consent"]["answer"], "cancelled", "{task}");
    assert_eq!(document(&endpoint).0, "hello");
}

#[test]
fn of_a_hundred_calls_at_once_sixteen_wait_and_the_rest_are_refused_at_once() {
    let _w = Watchdog::arm(PATIENCE * 3);
    let dir = TempDir::new();
    let rt = dir.rt();
    let (_daemon, _app, _terminal, endpoint) = notepad_asking(&rt, &[]);
    let calls: Vec<_> = (0..100)
        .map(|_| {
            let endpoint = endpoint.clone();
            thread::spawn(move || clear(&endpoint))
        })
        .collect();
    // The connections stay open (a client that leaves withdraws its prompt) until counted.
    let answered: Vec<(LineClient, Value)> = calls.into_iter().map(|c| c.join().unwrap()).collect();
    let waiting =
        answered.iter().filter(|(_, r)| r["result"]["task"]["awaiting"] == "confirmation");
    let refused = answered.iter().filter(|(_, r)| {
        r["error"]["code"] == 1000
            && r["error"]["data"]["reason"] == "too_many_pending_confirmations"
    });
    assert_eq!((waiting.count(), refused.count()), (16, 84));
    assert_eq!(document(&endpoint).0, "hello");
}

#[test]
fn an_app_killed_while_prompts_wait_ran_none_of_them() {
    let _w = Watchdog::arm(PATIENCE * 3);
    let dir = TempDir::new();
    let rt = dir.rt();
    let (daemon, app, terminal, endpoint) = notepad_asking(&rt, &[]);
    // The connections stay open: the calls wait for the user.
    let (_clients, ids): (Vec<LineClient>, Vec<String>) = (0..3)
        .map(|_| {
            let (client, response) = clear(&endpoint);
            let id = waiting_task(&response);
            (client, id)
        })
        .unzip();
    assert!(
        wait_until(PATIENCE, || terminal.text().matches("wants to").count() >= 1),
        "{:?}",
        terminal.text()
    );
    app.signal("KILL");
    drop(app);
    // The tasks of a departed app are answered by the next app of that name.
    assert!(wait_until(PATIENCE, || !endpoint.exists()), "the endpoint went");
    let (_again, _terminal) = notepad_in_terminal(&rt, "Notepad");
    daemon.wait_endpoint("notepad");
    for id in ids {
        let r = run_agent(&rt, &["tasks", "notepad", "get", &id, "--json"], b"");
        let task = &r.json()["task"];
        assert_eq!(
            (
                task["state"].as_str(),
                task["error"]["class"].as_str(),
                task["error"]["reason"].as_str()
            ),
            (Some("failed"), Some("not_executed"), Some("app_disconnected")),
            "{task}"
        );
    }
}

#[test]
fn a_cancel_racing_the_users_yes_has_one_winner() {
    let _w = Watchdog::arm(PATIENCE * 4);
    let dir = TempDir::new();
    let rt = dir.rt();
    let (_daemon, _app, mut terminal, endpoint) = notepad_asking(&rt, &[]);
    for round in 1..=3 {
        let before = document(&endpoint);
        let (mut client, response) = clear(&endpoint);
        let id = waiting_task(&response);
        assert!(
            wait_until(PATIENCE, || terminal.text().matches("wants to").count() >= round),
            "{:?}",
            terminal.text()
        );
        let cancel = {
            let (endpoint, id) = (endpoint.clone(), id.clone());
            thread::spawn(move || {
                let mut c = LineClient::connect(&endpoint).unwrap();
                c.call("tasks/cancel", json!({"protocolVersion": "1", "id": id})).unwrap()
            })
        };
        terminal.type_line("y");
        cancel.join().unwrap();
        let task = final_state(&mut client, &id);
        let after = document(&endpoint);
        match task["state"].as_str() {
            Some("completed") => {
                assert_eq!(task["consent"]["answer"], "allow", "{task}");
                assert_eq!(after, (String::new(), before.1 + 1), "allowed: cleared once");
            }
            Some("cancelled") => assert_eq!(after, before, "cancelled: nothing applied"),
            _ => panic!("one of the two must win: {task}"),
        }
        // Back to some text for the next round.
        if after.0.is_empty() {
            let mut c = LineClient::connect(&endpoint).unwrap();
            let at = jfgui_tests::consent::revision(&endpoint);
            c.call(
                "actions/execute",
                json!({"protocolVersion": "1", "action": "document.text.insert",
                    "input": {"text": "hello"}, "expectedRevision": at}),
            )
            .unwrap();
        }
    }
}

/// Notepad without a terminal cannot ask: the call fails no_confirmation_ui and the audit log
/// records how it was decided.
#[test]
fn an_app_that_cannot_ask_refuses_and_the_log_says_how() {
    let _w = Watchdog::arm(PATIENCE * 2);
    let dir = TempDir::new();
    let rt = dir.rt();
    let (_daemon, _app) = daemon_with_notepad(&rt, &["--text", "hello"]);
    let endpoint = rt.join("apps/notepad.sock");
    let (mut client, response) = clear(&endpoint);
    let id = waiting_task(&response);
    let task = final_state(&mut client, &id);
    assert_eq!(task["error"]["reason"], "no_confirmation_ui", "{task}");
    let record = audit_record(&rt, |r| r["consent"]["answer"] == "no_ui");
    assert_eq!(record["consent"]["by"], "user", "{record}");
}
