//! The Notepad keeps the contracts agents rely on: host-sdk's `testing` checks (those of
//! `jfgui-agent check --mutate`) run in-process against the real `Notepad` host and its
//! dispatcher, with no daemon, as any app's own `cargo test` can.

use std::time::{Duration, Instant};

use jfgui_example_notepad::{Clock, Notepad};
use jfgui_host_sdk::Dispatcher;
use jfgui_host_sdk::testing::{self, Check, Level, Options};

#[derive(Debug)]
struct Wall(Instant);

impl Clock for Wall {
    fn now(&self) -> Duration {
        self.0.elapsed()
    }
}

#[test]
fn notepad_passes_the_checks_in_process() {
    let mut app = Notepad::new("hello", Duration::from_secs(2), Box::new(Wall(Instant::now())))
        .expect("a notepad");
    let mut dispatcher = Dispatcher::new(&app).expect("the registration is valid");
    let report = testing::check(&mut dispatcher, &mut app, &Options::mutate());
    report.assert_passed();
    let passed = |check| report.findings.iter().any(|f| f.check == check && f.level == Level::Pass);
    for check in [Check::Render, Check::TaskCancel, Check::AtomicBatch] {
        assert!(passed(check), "{check:?} passed:\n{report}");
    }
}
