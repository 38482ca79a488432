//! The cross-process suites, one test binary with a module per topic (a single link step
//! instead of one per file). Each module starts the real daemon, example apps and clients
//! through the helpers in `jfgui_tests`.

mod all_apps_mcp;
mod app_activation;
mod app_faults;
mod audit;
mod backpressure;
mod bridge_http;
mod bridge_recovery;
mod capi;
mod check;
mod cli_completions;
mod cli_daemon;
mod cli_errors;
mod cli_exit_codes;
mod cli_gateway;
mod cli_help;
mod cli_resources;
mod cli_tasks;
mod client_trust;
mod consent;
mod consent_faults;
mod consent_grants;
mod cross_uid;
mod daemon_faults;
mod diagnostics;
mod docs_transcripts;
mod endpoints;
mod fairness;
mod flood;
mod framing;
mod host_faults;
mod imports;
mod json1_bounds;
mod lifecycle;
mod registrations;
mod run_user;
mod runtime_dir;
mod single_instance;
mod sketch_headless;
mod slow_peers;
mod socket_activation;
mod tasks_on_app_exit;
mod tidy;
mod worker_threads;
