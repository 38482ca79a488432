//! `jfgui-testapp`: the fault-injecting test app, built on host-sdk: knobs crash,
//! hang or fail it at chosen points, and its state and mutation ledger persist on disk.
//!
//! ```text
//! jfgui-testapp [--agent-enable] [--agent-stdio] [--name NAME] [--socket PATH]
//!               [--state FILE] [--ledger FILE] [--fault ACTION:KNOB]...
//!               [--stall-handshake] [--no-read] [--blob BYTES]
//!               [--name-bytes N] [--bulk-actions N] [--description-bytes B]
//!               [--huge-schema BYTES] [--unsolicited-tasks N]
//!               [--render] [--broken-rollback] [--blob-total-lies]
//! ```
//!
//! - `--agent-enable`: enable agent access (without it the app registers disabled).
//! - `--agent-stdio` (or `JFGUI_HOST_CHANNEL=stdio`): the host channel on stdin/stdout, enabled.
//! - `--name NAME`: display name (default `Test App`).
//! - `--socket PATH`: the daemon's host socket (default: `host.sock` in the runtime dir).
//! - `--state FILE`: persisted state `{counter, text, revision}`, loaded at start and replaced
//!   on every commit by write-temp, fsync, rename, fsync-dir; a restart shows what was
//!   committed.
//! - `--ledger FILE` (keep it outside the runtime dir): one fsynced line per applied mutation,
//!   `request-id action revision-before revision-after committed|rolled-back`. The request id
//!   is the input's optional `tag` member, else `d<daemon request id>` (`.<index>` inside a
//!   batch). Outside a transaction a mutation is persisted and journalled before the reply;
//!   inside one its lines are written at commit (`committed`) or rollback (`rolled-back`).
//! - `--fault ACTION:KNOB` (repeatable), knobs:
//!   `hang` (block forever in the call: the app's single thread stops, as in a stuck modal
//!   loop), `sleep=MS` (before applying), `abort-before-apply`, `abort-after-apply` (apply,
//!   persist, journal, then `abort()` before replying), `abort-in-batch-after=N` (inside an
//!   atomic batch, `abort()` once N calls were applied, before commit), `fail-in-batch-at=N`
//!   (fail with `failed/host_error{code:"injected"}` as batch call N), `huge-output=BYTES`
//!   (output `{"data":"x"×BYTES}`, or above 64 KiB `{"data":["x"×65536,…]}` with BYTES x's
//!   in all, so the 256 KiB string bound is not what stops it), `bad-output-schema` (output a string), `reply-twice`,
//!   `reply-unknown-id` (reply under id `u64::MAX − id`), `running-result=BYTES` (after a
//!   deferred reply, a `running` update of that task carrying a result of BYTES bytes).
//!   Broken contracts for `jfgui-agent check`: `moves-revision` (a read that moves the
//!   revision), `ignores-revision` (the call's `expectedRevision` is replaced by the current
//!   revision before the dispatcher sees it, so a stale write applies), `ignores-cancel`
//!   (`job.run`: the task never honours a cancel and runs at least 60 s), `not-png`
//!   (`ui.render`: the view's bytes are not a PNG).
//! - `--render`: register `ui.render` (read), which draws the counter into the PNG resource
//!   `render://view.png`.
//! - `--broken-rollback`: a rollback restores the counter and text but not the revision.
//! - `--blob-total-lies`: reads of `blob://data.bin` report a `totalSize` 1 KiB beyond the
//!   bytes they serve.
//! - `--stall-handshake`: connect and never send `hello`. `--no-read`: stop reading the host
//!   channel once registered (the process stays alive).
//! - `--blob BYTES`: offer the resource `blob://data.bin` (`application/octet-stream`), the
//!   BYTES bytes of `jfgui_tests::blob` (so a test knows every byte it must read back).
//! - Hostile but legal registrations (`--name-bytes`, `--bulk-actions`, `--description-bytes`,
//!   `--huge-schema`) and `--unsolicited-tasks N`: see `hostile.rs`.
//!
//! Actions: `counter.add {by: -1000..1000, tag?}` and `text.append {text, tag?}` (writes,
//! transaction domain `state`), `state.get {}` (read), `job.run {ms}` (write, domain `state`,
//! deferred task that completes after `ms` unless cancelled). Exit: 0 when the peer closes, 1 on an error,
//! 2 on a usage error. The app does not reconnect; the harness restarts it.

mod host;
mod hostile;
mod knobs;
mod store;
mod wire;

use std::path::PathBuf;
use std::process::ExitCode;

use jfgui_host_sdk::Dispatcher;
use jfgui_host_sdk::channel::{HostChannel, Identity};
use jfgui_host_sdk::connector::headless_requested;

use crate::host::TestApp;
use crate::knobs::Faults;
use crate::store::Ledger;
use crate::wire::Behaviour;

#[derive(Debug, Default)]
struct Args {
    enable: bool,
    stdio: bool,
    name: Option<String>,
    socket: Option<PathBuf>,
    state: Option<PathBuf>,
    ledger: Option<PathBuf>,
    faults: Faults,
    behaviour: Behaviour,
    blob: usize,
    blob_lies: bool,
    broken_rollback: bool,
    render: bool,
    name_bytes: Option<usize>,
    registration: hostile::Registration,
}

fn parse() -> Result<Args, String> {
    let mut a = Args::default();
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut value = |flag: &str| it.next().ok_or_else(|| format!("{flag} needs a value"));
        match arg.as_str() {
            "--agent-enable" => a.enable = true,
            "--agent-stdio" => a.stdio = true,
            "--name" => a.name = Some(value("--name")?),
            "--socket" => a.socket = Some(value("--socket")?.into()),
            "--state" => a.state = Some(value("--state")?.into()),
            "--ledger" => a.ledger = Some(value("--ledger")?.into()),
            "--fault" => a.faults.add(&value("--fault")?)?,
            "--stall-handshake" => a.behaviour.stall_handshake = true,
            "--no-read" => a.behaviour.no_read = true,
            "--blob" => a.blob = count("--blob", value("--blob")?)?,
            "--blob-total-lies" => a.blob_lies = true,
            "--broken-rollback" => a.broken_rollback = true,
            "--render" => a.render = true,
            "--name-bytes" => a.name_bytes = Some(count(&arg, value(&arg)?)?),
            "--bulk-actions" => a.registration.bulk_actions = count(&arg, value(&arg)?)?,
            "--description-bytes" => {
                a.registration.description_bytes = count(&arg, value(&arg)?)?;
            }
            "--huge-schema" => a.registration.huge_schema = count(&arg, value(&arg)?)?,
            "--unsolicited-tasks" => {
                a.behaviour.unsolicited_tasks = count(&arg, value(&arg)?)?;
            }
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    Ok(a)
}

fn count(flag: &str, v: String) -> Result<usize, String> {
    v.parse().map_err(|_| format!("{flag} takes a count, not {v:?}"))
}

fn main() -> ExitCode {
    let args = match parse() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("jfgui-testapp: {e} (see the //! header of jfgui-testapp/main.rs)");
            return ExitCode::from(2);
        }
    };
    match run(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("jfgui-testapp: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: Args) -> std::io::Result<()> {
    let ledger = Ledger::open(args.ledger.as_deref())?;
    let mut app = TestApp::new(args.state.clone(), ledger, args.faults.clone())?
        .with_blob(jfgui_tests::blob(args.blob))
        .with_blob_lies(args.blob_lies)
        .with_broken_rollback(args.broken_rollback)
        .with_actions(args.registration.actions())
        .with_render(args.render);
    let headless = args.stdio || headless_requested();
    let mut dispatcher = Dispatcher::new(&app).map_err(std::io::Error::other)?;
    dispatcher.set_enabled(headless || args.enable);
    let name = args.name.unwrap_or_else(|| "Test App".into());
    let identity = Identity {
        display_name: match args.name_bytes {
            Some(len) => hostile::long_name(&name, len),
            None => name,
        },
        pid: std::process::id(),
    };
    let channel = HostChannel::new(dispatcher, identity).map_err(std::io::Error::other)?;
    if headless {
        return wire::serve(
            &mut app,
            channel,
            std::io::stdin(),
            std::io::stdout(),
            &args.faults,
            args.behaviour,
        );
    }
    connect_and_serve(&mut app, channel, args.socket, &args.faults, args.behaviour)
}

#[cfg(unix)]
fn connect_and_serve(
    app: &mut TestApp,
    channel: HostChannel,
    socket: Option<PathBuf>,
    faults: &Faults,
    behaviour: Behaviour,
) -> std::io::Result<()> {
    let path = match socket {
        Some(p) => p,
        None => jfgui_proto::locations::runtime_dir().map_err(std::io::Error::other)?.host_socket(),
    };
    let stream = std::os::unix::net::UnixStream::connect(&path)
        .map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
    wire::serve(app, channel, stream.try_clone()?, stream, faults, behaviour)
}

#[cfg(not(unix))]
fn connect_and_serve(
    _: &mut TestApp,
    _: HostChannel,
    _: Option<PathBuf>,
    _: &Faults,
    _: Behaviour,
) -> std::io::Result<()> {
    Err(std::io::Error::other("the test app connects to Unix sockets only; use --agent-stdio"))
}
