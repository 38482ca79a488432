#!/usr/bin/env python3
"""Runs one MCP client check against a real jfgui-agentd and a real jfgui-notepad, the way a
user's session has them: the daemon in `$XDG_RUNTIME_DIR/jfgui-agent` with
`XDG_RUNTIME_DIR=/run/user/UID` (created 0700 when the machine has none, and removed again),
never through JFGUI_RUNTIME_DIR.

The client command gets in its environment: XDG_RUNTIME_DIR, JFGUI_AGENT (the gateway binary),
JFGUI_RECORDER (record.py), JFGUI_RECORD_DIR and JFGUI_PYTHON (an interpreter for the
recorder). A client starts `JFGUI_PYTHON JFGUI_RECORDER JFGUI_RECORD_DIR JFGUI_AGENT stdio
notepad --protocol mcp` exactly as its SDK starts servers by default: without passing an
environment, so the gateway sees only what the SDK gives it (HOME LOGNAME PATH SHELL TERM USER)
and must find the daemon through /run/user/UID. Afterwards the driver checks, for every server
process the client started, that it got no XDG_RUNTIME_DIR or JFGUI_RUNTIME_DIR and that every
line it wrote validates against the official MCP schema of its revision (schema_check.py).

With `--apps "Notes A,Notes B"` (the all-apps scenario of `jfgui-agent mcp`) the driver starts one
Notepad per display name instead (each with `--text "text of NAME"`), with `--disabled NAME`
one more whose agent access is off (as Sketch, Tk Notes and the web Notepad start; the client
gets its name as JFGUI_DISABLED_APP), and serves a control
socket whose path the client gets as JFGUI_CONTROL: one line per connection, answered with
`ok` or `error: ...` once done:

    kill-app NAME      stop that Notepad and wait until its endpoint is gone
    start-app NAME     start it again and wait until its endpoint is up
    stop-daemon        SIGTERM the daemon and wait for it to exit
    start-daemon       start a new daemon and wait until every running Notepad re-registered

Runs are serialized with a lock on /run (several checkouts may share a machine and its
/run/user/UID). Exits with the command's status, or 1 when the setup or the record check fails.

    driver.py --bin-dir target/debug -- python3 client_check.py --mode auto
"""

import argparse
import fcntl
import glob
import json
import os
import shutil
import signal
import subprocess
import sys
import socket
import tempfile
import threading
import time

import schema_check

SETUP_TIMEOUT_S = 20.0
HERE = os.path.dirname(os.path.abspath(__file__))
# What the official SDKs pass to a stdio server by default (and nothing else may reach it).
SDK_ENV = {"HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"}


def log(message: str) -> None:
    print(f"[driver] {message}", file=sys.stderr, flush=True)


def wait_for(path: str, proc: subprocess.Popen, what: str) -> None:
    deadline = time.monotonic() + SETUP_TIMEOUT_S
    while not os.path.exists(path):
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited with status {proc.returncode} before {path} appeared")
        if time.monotonic() > deadline:
            raise RuntimeError(f"{path} did not appear within {SETUP_TIMEOUT_S} s")
        time.sleep(0.05)


def stop(proc: subprocess.Popen, name: str) -> None:
    if proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        log(f"{name} ignored SIGTERM for 10 s; killing it")
        proc.kill()
        proc.wait()


class RunUser:
    """/run/user/UID as systemd-logind makes it (0700, ours), created when missing; on exit
    removes what it created: the dir (and /run/user), or only jfgui-agent inside an existing
    one."""

    def __init__(self) -> None:
        self.path = f"/run/user/{os.getuid()}"
        self.runtime = os.path.join(self.path, "jfgui-agent")
        self.created = []

    def __enter__(self) -> "RunUser":
        for path, mode in (("/run/user", 0o755), (self.path, 0o700)):
            if not os.path.isdir(path):
                os.mkdir(path, mode)
                os.chmod(path, mode)
                self.created.append(path)
        if os.path.lexists(self.runtime):
            raise RuntimeError(f"{self.runtime} exists: another daemon may run there; stop it first")
        self.created.append(self.runtime)
        return self

    def __exit__(self, *exc) -> None:
        for path in reversed(self.created):
            shutil.rmtree(path, ignore_errors=True)


def check_records(record_dir: str) -> list:
    """Problems found in the recorded sessions (none recorded is a problem too)."""
    files = sorted(glob.glob(os.path.join(record_dir, "*.jsonl")))
    if not files:
        return ["the client never started the recorded gateway"]
    schemas = schema_check.Schemas()
    problems, lines = [], 0
    for path in files:
        session = schema_check.Session(schemas)
        with open(path, encoding="utf-8") as f:
            entries = [json.loads(line) for line in f]
        env = set(entries[0]["env"]) if entries and "env" in entries[0] else None
        if env is None or not env <= SDK_ENV:
            problems.append(f"{path}: the gateway got more than the SDK default environment: {sorted(env or [])}")
        for entry in entries[1:]:
            if entry["dir"] == "in":
                session.sent(entry["line"])
            else:
                session.received(entry["line"])
        lines += session.checked
        problems += [f"{os.path.basename(path)}: {p}" for p in session.problems]
    log(f"{len(files)} gateway process(es), {lines} server line(s) validated against the official schemas")
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin-dir", required=True, help="directory with jfgui-agentd, jfgui-agent, jfgui-notepad")
    parser.add_argument("--export-ms", default="5000", help="how long Notepad's export task runs")
    parser.add_argument("--apps", help="comma-separated display names: one Notepad each and the control socket (all-apps)")
    parser.add_argument("--disabled", help="all-apps: the display name of one more Notepad, registered with agent access off")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- the client command")
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no client command given")
    bins = {name: os.path.join(os.path.abspath(args.bin_dir), name) for name in ("jfgui-agentd", "jfgui-agent", "jfgui-notepad")}
    for name, path in bins.items():
        if not os.access(path, os.X_OK):
            log(f"missing binary {path} (build {name} first)")
            return 1

    lock = os.open("/run", os.O_RDONLY)
    fcntl.flock(lock, fcntl.LOCK_EX)
    scratch = tempfile.mkdtemp(prefix="jfgui-mcp-")
    records = os.path.join(scratch, "records")
    os.mkdir(records)
    try:
        with RunUser() as run_user:
            if args.apps:
                status = run_all_apps(bins, args.apps.split(","), args.disabled, command, run_user, records, scratch)
            else:
                status = run(bins, args.export_ms, command, run_user, records)
        problems = check_records(records)
        for problem in problems:
            log(f"FAIL {problem}")
        return status if not problems else 1
    except (OSError, RuntimeError) as e:
        log(f"setup failed: {e}")
        return 1
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
        os.close(lock)


def run(bins: dict, export_ms: str, command: list, run_user: RunUser, records: str) -> int:
    """Starts the daemon and Notepad, runs the client, stops everything; the client's status."""
    env = {k: v for k, v in os.environ.items() if k not in ("JFGUI_RUNTIME_DIR", "XDG_RUNTIME_DIR")}
    env["XDG_RUNTIME_DIR"] = run_user.path
    env.setdefault("JFGUI_LOG", "info")
    procs = []
    try:
        daemon = subprocess.Popen([bins["jfgui-agentd"]], env=env, stdin=subprocess.DEVNULL)
        procs.append((daemon, "jfgui-agentd"))
        wait_for(os.path.join(run_user.runtime, "host.sock"), daemon, "jfgui-agentd")
        notepad = subprocess.Popen(
            [bins["jfgui-notepad"], "--agent-enable", "--export-ms", export_ms],
            env=env,
            stdin=subprocess.DEVNULL,
        )
        procs.append((notepad, "jfgui-notepad"))
        wait_for(os.path.join(run_user.runtime, "apps", "notepad.sock"), notepad, "jfgui-notepad")
        client_env = dict(
            env,
            JFGUI_AGENT=bins["jfgui-agent"],
            JFGUI_RECORDER=os.path.join(HERE, "record.py"),
            JFGUI_RECORD_DIR=records,
            JFGUI_PYTHON=sys.executable,
        )
        log(f"daemon and Notepad up in {run_user.runtime}; running {' '.join(command)}")
        status = subprocess.run(command, env=client_env, stdin=subprocess.DEVNULL).returncode
        log(f"client exited with status {status}")
        return status
    finally:
        for proc, name in reversed(procs):
            stop(proc, name)


def slug(name: str) -> str:
    """The daemon's slug rule for the simple names used here (letters, digits, spaces)."""
    return "-".join(name.lower().split())


def wait_gone(path: str) -> None:
    deadline = time.monotonic() + SETUP_TIMEOUT_S
    while os.path.exists(path):
        if time.monotonic() > deadline:
            raise RuntimeError(f"{path} still exists after {SETUP_TIMEOUT_S} s")
        time.sleep(0.05)


class Stack:
    """The daemon and the Notepads of the all-apps scenario, restartable one by one."""

    def __init__(self, bins: dict, env: dict, run_user: RunUser) -> None:
        self.bins, self.env, self.run_user = bins, env, run_user
        self.daemon = None
        self.apps = {}
        self.disabled = set()

    def endpoint(self, name: str) -> str:
        return os.path.join(self.run_user.runtime, "apps", f"{slug(name)}.sock")

    def start_daemon(self) -> None:
        self.daemon = subprocess.Popen([self.bins["jfgui-agentd"]], env=self.env, stdin=subprocess.DEVNULL)
        wait_for(os.path.join(self.run_user.runtime, "mcp.sock"), self.daemon, "jfgui-agentd")
        for name, proc in self.apps.items():
            if name in self.disabled:
                self.wait_listed(name, proc)
            else:
                wait_for(self.endpoint(name), proc, name)

    def stop_daemon(self) -> None:
        stop(self.daemon, "jfgui-agentd")
        wait_gone(os.path.join(self.run_user.runtime, "mcp.sock"))

    def start_app(self, name: str) -> None:
        proc = subprocess.Popen(
            [self.bins["jfgui-notepad"], "--agent-enable", "--name", name, "--text", f"text of {name}"],
            env=self.env,
            stdin=subprocess.DEVNULL,
        )
        self.apps[name] = proc
        wait_for(self.endpoint(name), proc, name)

    def start_disabled(self, name: str) -> None:
        """A Notepad with agent access off: it registers but gets no endpoint, so wait until
        `jfgui-agent list` shows it."""
        proc = subprocess.Popen([self.bins["jfgui-notepad"], "--name", name], env=self.env, stdin=subprocess.DEVNULL)
        self.apps[name] = proc
        self.disabled.add(name)
        self.wait_listed(name, proc)

    def wait_listed(self, name: str, proc: subprocess.Popen) -> None:
        deadline = time.monotonic() + SETUP_TIMEOUT_S
        while True:
            listed = subprocess.run([self.bins["jfgui-agent"], "list", "--json"], env=self.env, capture_output=True, text=True)
            if listed.returncode == 0 and any(a.get("displayName") == name for a in json.loads(listed.stdout).get("apps", [])):
                return
            if proc.poll() is not None:
                raise RuntimeError(f"{name} exited with status {proc.returncode} before it registered")
            if time.monotonic() > deadline:
                raise RuntimeError(f"{name} did not register within {SETUP_TIMEOUT_S} s")
            time.sleep(0.05)

    def kill_app(self, name: str) -> None:
        stop(self.apps.pop(name), name)
        wait_gone(self.endpoint(name))

    def stop_all(self) -> None:
        for name, proc in list(self.apps.items()):
            stop(proc, name)
        if self.daemon is not None:
            stop(self.daemon, "jfgui-agentd")

    def command(self, line: str) -> str:
        verb, _, name = line.partition(" ")
        actions = {
            "kill-app": lambda: self.kill_app(name),
            "start-app": lambda: self.start_app(name),
            "stop-daemon": self.stop_daemon,
            "start-daemon": self.start_daemon,
        }
        if verb not in actions:
            return f"error: unknown command {line!r}"
        try:
            actions[verb]()
        except (OSError, RuntimeError, KeyError) as e:
            return f"error: {line}: {e}"
        log(f"control: {line}: done")
        return "ok"


def serve_control(stack: Stack, path: str) -> socket.socket:
    """Answers control lines (one per connection) in a thread of its own."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(4)

    def loop() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            with conn, conn.makefile("rw", encoding="utf-8") as f:
                answer = stack.command(f.readline().strip())
                f.write(answer + "\n")
                f.flush()

    threading.Thread(target=loop, daemon=True).start()
    return listener


def run_all_apps(bins: dict, names: list, disabled, command: list, run_user: RunUser, records: str, scratch: str) -> int:
    """The all-apps scenario: daemon, one Notepad per name (and the disabled one), the control
    socket; the client's status."""
    env = {k: v for k, v in os.environ.items() if k not in ("JFGUI_RUNTIME_DIR", "XDG_RUNTIME_DIR")}
    env["XDG_RUNTIME_DIR"] = run_user.path
    env.setdefault("JFGUI_LOG", "info")
    stack = Stack(bins, env, run_user)
    control = os.path.join(scratch, "control.sock")
    listener = None
    try:
        stack.start_daemon()
        for name in names:
            stack.start_app(name)
        if disabled:
            stack.start_disabled(disabled)
        listener = serve_control(stack, control)
        client_env = dict(
            env,
            JFGUI_AGENT=bins["jfgui-agent"],
            JFGUI_RECORDER=os.path.join(HERE, "record.py"),
            JFGUI_RECORD_DIR=records,
            JFGUI_PYTHON=sys.executable,
            JFGUI_CONTROL=control,
            JFGUI_DISABLED_APP=disabled or "",
        )
        log(f"daemon and {', '.join(names)} up in {run_user.runtime}; running {' '.join(command)}")
        status = subprocess.run(command, env=client_env, stdin=subprocess.DEVNULL).returncode
        log(f"client exited with status {status}")
        return status
    finally:
        if listener is not None:
            listener.close()
        stack.stop_all()


if __name__ == "__main__":
    sys.exit(main())
