//! D-Bus, the incumbent local IPC: client → bus → service → back on a private bus, with a
//! zbus client and a zbus service whose method answers the same bytes Notepad's
//! `document.get` result carries (one string). One service per document size, like one
//! Notepad per size.
//!
//! The bus is `dbus-broker` (through `dbus-broker-launch --scope user`, given its listening
//! socket by `systemd-socket-activate` as systemd would), or `dbus-daemon --session` where
//! dbus-broker is not installed; `JFGUI_BENCH_BUS=dbus-broker` (or `dbus-daemon`) insists on
//! one. Without either the rows are skipped with a message (a bench, not a test).
//!
//! `dbus-broker-launch` logs only to the journal and will not start without
//! `/run/systemd/journal/socket`. Where there is no journald (containers, CI) the bench runs it
//! in a private mount namespace (`unshare --mount`; for a non-root user also `--user
//! --map-root-user`) in which that path is a datagram socket the bench holds and never reads
//! (the launcher's log is lossy). Nothing outside the namespace changes.

use std::fs;
use std::io;
use std::os::unix::net::{UnixDatagram, UnixStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::thread;

use jfgui_tests::{PATIENCE, wait_until};

use crate::load::{Client, Target};
use crate::payload::Size;
use crate::probe;

const PATH: &str = "/org/jfgui/Bench";
const INTERFACE: &str = "org.jfgui.Bench1";

/// The bus name of the service for `size`.
fn bus_name(size: Size) -> String {
    format!("org.jfgui.Bench.{}", size.tag())
}

/// The service object: `Get(s action) -> s`.
struct Document {
    result: String,
}

#[zbus::interface(name = "org.jfgui.Bench1")]
impl Document {
    fn get(&self, action: &str) -> zbus::fdo::Result<String> {
        if action == "document.get" {
            Ok(self.result.clone())
        } else {
            Err(zbus::fdo::Error::InvalidArgs(format!("unknown action {action}")))
        }
    }
}

/// A private bus with the two services on it.
pub struct Bus {
    /// `dbus-broker` or `dbus-daemon`.
    pub name: &'static str,
    address: String,
    launcher: Child,
    /// The process that routes the messages (the broker, or dbus-daemon itself).
    router: u32,
    /// The journal stand-in, held open while the launcher runs.
    _journal: Option<UnixDatagram>,
}

impl Bus {
    /// Starts a bus in `dir` and one service per size answering `results[size]`; `None` (after
    /// printing why) when no bus can run here.
    pub fn start(dir: &Path, results: &[(Size, String)]) -> Option<Bus> {
        let wanted = std::env::var("JFGUI_BENCH_BUS").ok();
        let attempts: Vec<&str> = match wanted.as_deref() {
            Some("dbus-broker") => vec!["dbus-broker"],
            Some("dbus-daemon") => vec!["dbus-daemon"],
            Some(other) => panic!("JFGUI_BENCH_BUS={other}: use dbus-broker or dbus-daemon"),
            None => vec!["dbus-broker", "dbus-daemon"],
        };
        let mut why = Vec::new();
        for name in attempts {
            let started = match name {
                "dbus-broker" => broker(dir),
                _ => dbus_daemon(dir),
            };
            match started {
                Ok(mut bus) => {
                    for (size, result) in results {
                        bus.serve(*size, result.clone());
                    }
                    bus.find_router();
                    return Some(bus);
                }
                Err(e) => why.push(format!("{name}: {e}")),
            }
        }
        assert!(wanted.is_none(), "JFGUI_BENCH_BUS is set but the bus failed: {why:?}");
        println!("D-Bus rows skipped: {}", why.join("; "));
        None
    }

    /// Serves `result` as bus name [`bus_name`]`(size)` on a thread of its own (its own
    /// current-thread runtime), and waits until the name is owned.
    fn serve(&mut self, size: Size, result: String) {
        let (address, name) = (self.address.clone(), bus_name(size));
        let (tx, rx) = std::sync::mpsc::channel();
        thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime");
            rt.block_on(async move {
                let built = async {
                    zbus::connection::Builder::address(address.as_str())?
                        .name(name.as_str())?
                        .serve_at(PATH, Document { result })?
                        .build()
                        .await
                }
                .await;
                let failed = built.as_ref().err().map(ToString::to_string);
                let _ = tx.send(failed);
                if let Ok(_connection) = built {
                    std::future::pending::<()>().await;
                }
            });
        });
        match rx.recv_timeout(PATIENCE) {
            Ok(None) => {}
            Ok(Some(e)) => panic!("{}: D-Bus service {size:?} failed: {e}", self.name),
            Err(_) => panic!("{}: D-Bus service {size:?} did not start", self.name),
        }
    }

    /// dbus-broker-launch forks the broker once its socket is first used: the router is its
    /// child; dbus-daemon routes itself.
    fn find_router(&mut self) {
        if self.name == "dbus-broker" {
            let launcher = self.launcher.id();
            let found = wait_until(PATIENCE, || !probe::children(launcher).is_empty());
            assert!(found, "dbus-broker-launch started no broker");
            self.router = probe::children(launcher)[0];
        }
    }

    /// The router's pid.
    pub fn router(&self) -> u32 {
        self.router
    }

    /// The call path to the service for `size`, which must answer `result`.
    pub fn path(&self, size: Size, result: String) -> DbusPath {
        DbusPath {
            address: self.address.clone(),
            destination: bus_name(size),
            result,
            router: self.router,
        }
    }
}

impl Drop for Bus {
    fn drop(&mut self) {
        if self.router != self.launcher.id() {
            let _ = Command::new("kill").arg(self.router.to_string()).status();
        }
        let _ = self.launcher.kill();
        let _ = self.launcher.wait();
    }
}

/// Whether `program` is on `PATH`.
fn installed(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(program).is_file()))
}

fn spawn(mut cmd: Command, log: &Path) -> io::Result<Child> {
    cmd.stdin(Stdio::null()).stdout(Stdio::null()).stderr(fs::File::create(log)?).spawn()
}

/// Waits until `socket` accepts connections; the error carries the log.
fn wait_socket(child: &mut Child, socket: &Path, log: &Path) -> Result<(), String> {
    let up = wait_until(PATIENCE, || {
        UnixStream::connect(socket).is_ok() || child.try_wait().ok().flatten().is_some()
    });
    if up && child.try_wait().ok().flatten().is_none() {
        Ok(())
    } else {
        let _ = child.kill();
        let _ = child.wait();
        Err(format!("did not start; its log:\n{}", fs::read_to_string(log).unwrap_or_default()))
    }
}

/// dbus-broker through its launcher, socket-activated, in a mount namespace with a journal
/// stand-in where there is no journald.
fn broker(dir: &Path) -> Result<Bus, String> {
    for program in ["dbus-broker", "dbus-broker-launch", "systemd-socket-activate"] {
        if !installed(program) {
            return Err(format!("{program} is not installed (apt package dbus-broker)"));
        }
    }
    let socket = dir.join("broker.sock");
    let address = format!("unix:path={}", socket.display());
    let launch: Vec<String> = vec![
        "systemd-socket-activate".into(),
        "--listen".into(),
        socket.display().to_string(),
        "--fdname=dbus.socket".into(),
        // The launcher connects to its own bus as a client; it finds it here.
        "-E".into(),
        format!("DBUS_SESSION_BUS_ADDRESS={address}"),
        "-E".into(),
        format!("XDG_RUNTIME_DIR={}", dir.display()),
        "dbus-broker-launch".into(),
        "--scope".into(),
        "user".into(),
    ];
    let has_journal =
        UnixDatagram::unbound().and_then(|s| s.connect("/run/systemd/journal/socket")).is_ok();
    let (cmd, journal) = if has_journal {
        let mut cmd = Command::new(&launch[0]);
        cmd.args(&launch[1..]);
        (cmd, None)
    } else {
        let stand_in: PathBuf = dir.join("journal.sock");
        let journal =
            UnixDatagram::bind(&stand_in).map_err(|e| format!("journal stand-in: {e}"))?;
        let mut cmd = Command::new("unshare");
        if jfgui_tests::my_uid() != 0 {
            cmd.args(["--user", "--map-root-user"]);
        }
        cmd.args(["--mount", "--propagation", "private", "sh", "-c"])
            .arg(
                "mount -t tmpfs tmpfs /run && mkdir -p /run/systemd/journal \
                 && : > /run/systemd/journal/socket \
                 && mount --bind \"$0\" /run/systemd/journal/socket && exec \"$@\"",
            )
            .arg(&stand_in)
            .args(&launch);
        (cmd, Some(journal))
    };
    let log = dir.join("broker.log");
    let mut launcher = spawn(cmd, &log).map_err(|e| e.to_string())?;
    wait_socket(&mut launcher, &socket, &log)?;
    let router = launcher.id();
    Ok(Bus { name: "dbus-broker", address, launcher, router, _journal: journal })
}

/// `dbus-daemon --session` on a socket of ours.
fn dbus_daemon(dir: &Path) -> Result<Bus, String> {
    if !installed("dbus-daemon") {
        return Err("dbus-daemon is not installed".into());
    }
    let socket = dir.join("dbus-daemon.sock");
    let address = format!("unix:path={}", socket.display());
    let mut cmd = Command::new("dbus-daemon");
    cmd.args(["--session", "--nofork", "--nopidfile", "--print-address"])
        .arg(format!("--address={address}"));
    let log = dir.join("dbus-daemon.log");
    let mut daemon = spawn(cmd, &log).map_err(|e| e.to_string())?;
    wait_socket(&mut daemon, &socket, &log)?;
    let router = daemon.id();
    Ok(Bus { name: "dbus-daemon", address, launcher: daemon, router, _journal: None })
}

/// Calls `Get("document.get")` on the service for one size.
pub struct DbusPath {
    address: String,
    destination: String,
    result: String,
    router: u32,
}

impl Target for DbusPath {
    fn connect(&self) -> io::Result<Box<dyn Client>> {
        let rt =
            tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
        let connection = rt
            .block_on(async {
                zbus::connection::Builder::address(self.address.as_str())?.build().await
            })
            .map_err(io::Error::other)?;
        Ok(Box::new(DbusClient {
            rt,
            connection,
            destination: self.destination.clone(),
            result: self.result.clone(),
            reply: String::new(),
        }))
    }

    fn middle_pids(&self) -> Vec<u32> {
        vec![self.router]
    }
}

/// One bus connection; its runtime runs only while a call waits, like a blocking client.
struct DbusClient {
    rt: tokio::runtime::Runtime,
    connection: zbus::Connection,
    destination: String,
    result: String,
    reply: String,
}

impl Client for DbusClient {
    fn roundtrip(&mut self, _id: u64) -> io::Result<()> {
        let (connection, destination) = (&self.connection, self.destination.as_str());
        self.reply = self
            .rt
            .block_on(async {
                let message = connection
                    .call_method(
                        Some(destination),
                        PATH,
                        Some(INTERFACE),
                        "Get",
                        &("document.get",),
                    )
                    .await?;
                message.body().deserialize::<String>()
            })
            .map_err(io::Error::other)?;
        Ok(())
    }

    fn check(&self, _id: u64) -> Result<(), String> {
        if self.reply == self.result {
            Ok(())
        } else {
            Err(format!("got {}\n  want {}", self.reply, self.result))
        }
    }
}
