//! Registrations that would fill the daemon: 24 apps each declaring 4 096 actions with 800-byte
//! descriptions (about 4 MiB each) cost the daemon at most 1.5× what they declared, and with a
//! registration budget the app that would pass it is refused `registration_too_large` (naming
//! the budget and its size) while every registered app and a newcomer keep being served, and
//! the daemon's peak RSS stays within its baseline, the budget and 16 MiB.

use std::path::Path;
use std::time::Duration;

use jfgui_tests::serde_json::{Value, json};
use jfgui_tests::{Daemon, LineClient, PATIENCE, TempDir, TestApp, Watchdog, json1, status_kib};

/// The heavy app: the test app's own actions plus bulk ones, 4 096 in all.
const HEAVY: &[&str] = &["--bulk-actions", "4092", "--description-bytes", "800"];

const KIB: u64 = 1024;

/// The bytes `endpoint`'s app declared: every action's registration entry as `actions/describe`
/// gives it, compactly encoded (the registration frames hold exactly these objects).
fn declared_bytes(endpoint: &Path) -> u64 {
    let mut client = LineClient::connect(endpoint).unwrap();
    let mut names = Vec::new();
    let mut params = json!({"limit": 100});
    loop {
        let page = client.call("actions/list", params.clone()).unwrap();
        let rows = page["result"]["actions"].as_array().unwrap_or_else(|| panic!("{page}"));
        names.extend(rows.iter().map(|r| r["name"].as_str().unwrap().to_string()));
        match page["result"]["nextCursor"].as_str() {
            Some(next) => params["cursor"] = next.into(),
            None => break,
        }
    }
    assert_eq!(names.len(), 4096);
    names
        .iter()
        .map(|name| {
            let r = client.call("actions/describe", json!({"action": name})).unwrap();
            let action = &r["result"]["action"];
            assert!(action.is_object(), "{r}");
            action.to_string().len() as u64
        })
        .sum()
}

fn rss_kib(d: &Daemon) -> u64 {
    status_kib(d.proc.pid(), "VmRSS").expect("the daemon's VmRSS")
}

fn assert_answers(endpoint: &Path) {
    let info = json1(endpoint, "agent/info", json!({}));
    assert!(info["revision"].is_u64(), "{info}");
}

#[test]
fn heavy_registrations_cost_at_most_one_and_a_half_times_their_declarations() {
    let _wd = Watchdog::arm(Duration::from_secs(600));
    let tmp = TempDir::new();
    // Room for all 24 (the shipped 64 MiB budget holds 14 of them).
    let d = Daemon::start(&tmp.rt(), &["--max-registration-bytes", "268435456"]);
    let dir = tmp.path();
    // One small app first, so what the first registration sets up is in the baseline.
    let _small = TestApp::start(&d.rt, dir, "Small", &[]);
    let small = d.wait_endpoint("small");
    assert_answers(&small);
    let baseline = rss_kib(&d);
    let mut heavy = Vec::new();
    let mut endpoints = Vec::new();
    for i in 1..=24 {
        heavy.push(TestApp::start(&d.rt, dir, &format!("Heavy {i}"), HEAVY));
        endpoints.push(d.wait_endpoint(&format!("heavy-{i}")));
    }
    let after = rss_kib(&d);
    let declared = declared_bytes(&endpoints[0]);
    let per_app = after.saturating_sub(baseline) * KIB / 24;
    println!(
        "daemon RSS {baseline} KiB -> {after} KiB with 24 heavy apps: {} KiB per app for {} KiB \
         declared ({:.2}x); registrationBytes {}",
        per_app / KIB,
        declared / KIB,
        per_app as f64 / declared as f64,
        d.status()["registrationBytes"]
    );
    assert!(
        per_app * 2 <= declared * 3,
        "{per_app} bytes of RSS per app for {declared} declared bytes (more than 1.5x)"
    );
    // Every one of them is served, and so is the small one.
    for endpoint in &endpoints {
        assert_answers(endpoint);
    }
    assert_answers(&small);
    d.assert_alive();
}

#[test]
fn the_app_that_would_pass_the_budget_is_refused_and_the_others_keep_working() {
    let _wd = Watchdog::arm(Duration::from_secs(300));
    let tmp = TempDir::new();
    // The shipped budget.
    const BUDGET: u64 = 64 << 20;
    let d = Daemon::start(&tmp.rt(), &[]);
    let dir = tmp.path();
    let baseline = rss_kib(&d);
    let mut admitted = Vec::new();
    let mut refused = None;
    for i in 1..=24 {
        let mut app = TestApp::start(&d.rt, dir, &format!("Heavy {i}"), HEAVY);
        let slug = format!("heavy-{i}");
        let path = d.rt.join("apps").join(format!("{slug}.sock"));
        let mut outcome = None;
        let settled = jfgui_tests::wait_until(PATIENCE, || {
            if d.apps().iter().any(|a| a["slug"] == slug.as_str()) && path.exists() {
                outcome = Some(true);
            } else if app.proc.try_status().is_some() {
                outcome = Some(false);
            }
            outcome.is_some()
        });
        assert!(settled, "{slug} neither registered nor refused:\n{}", app.proc.stderr());
        if outcome == Some(true) {
            admitted.push((app, d.wait_endpoint(&slug)));
        } else {
            refused = Some(app);
            break;
        }
    }
    let refused = refused.expect("some heavy app passes the 64 MiB budget");
    let why = refused.proc.stderr();
    assert!(why.contains("registration_too_large"), "refusal: {why}");
    assert!(why.contains(&BUDGET.to_string()), "the refusal names the budget: {why}");
    assert!(!admitted.is_empty(), "the first heavy app fits in 64 MiB");

    let status = d.status();
    let held = status["registrationBytes"].as_u64().expect("registrationBytes");
    assert_eq!(status["registrationBudget"], json!(BUDGET), "{status}");
    assert!(held <= BUDGET, "{status}");
    // The refused app was as heavy as the others, so it really would have passed the budget.
    let per_app = held / admitted.len() as u64;
    assert!(held + per_app > BUDGET, "{} apps hold {held} bytes: {status}", admitted.len());
    assert_eq!(d.apps().len(), admitted.len());
    // At its peak the daemon held the budget and what one registration costs while it is read.
    let peak = status_kib(d.proc.pid(), "VmHWM").expect("the daemon's VmHWM");
    println!(
        "{} heavy apps admitted within {BUDGET} bytes ({held} held); RSS baseline {baseline} KiB, \
         peak {peak} KiB",
        admitted.len()
    );
    assert!(
        peak <= baseline + BUDGET / KIB + 16 * KIB,
        "peak RSS {peak} KiB > baseline {baseline} KiB + budget + 16 MiB"
    );

    // Every registered app keeps working, and a small app still registers and answers.
    for (_, endpoint) in &admitted {
        assert_answers(endpoint);
    }
    let _small = TestApp::start(&d.rt, dir, "Small", &[]);
    assert_answers(&d.wait_endpoint("small"));
    let after: Value = d.status();
    assert!(after["registrationBytes"].as_u64().unwrap() > held, "{after}");
    d.assert_alive();
}
