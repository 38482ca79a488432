"""Fixtures of the other-languages suite: a private runtime dir, the real daemon, the real
CLI, processes that never outlive their test, and an Xvfb display.

Binaries come from ``$JFGUI_BIN_DIR`` (default: the repository's ``target/debug``), where
run.sh builds jfgui-agentd, jfgui-agent and the C example. A missing binary or tool fails the
test: nothing here is skipped.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

import pytest

REPO = Path(__file__).resolve().parents[2]
BIN_DIR = Path(os.environ.get("JFGUI_BIN_DIR") or REPO / "target" / "debug")
PATIENCE_S = 30.0


def binary(name: str) -> Path:
    """A built binary (fails the test when it is missing)."""
    path = BIN_DIR / name
    if not os.access(path, os.X_OK):
        pytest.fail(f"{path} is missing: run tests/other-languages/run.sh (it builds it)")
    return path


def tool(name: str) -> str:
    """A program on PATH (fails the test when it is missing)."""
    found = shutil.which(name)
    if found is None:
        pytest.fail(f"{name} is not installed (run.sh installs it with apt-get)")
    return found


def wait_for(condition: Callable[[], Any], what: str, timeout: float = PATIENCE_S) -> Any:
    """Polls `condition` until it returns something truthy; fails after `timeout`."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.05)


@dataclass
class Result:
    """One finished `jfgui-agent` run."""

    code: int
    stdout: str
    stderr: str

    def json(self) -> Any:
        return json.loads(self.stdout)


@dataclass
class World:
    """A private runtime dir, the processes started in it, and the CLI pointed at it."""

    scratch: Path
    env: dict[str, str]
    procs: list[tuple[subprocess.Popen[bytes], str]] = field(default_factory=list)

    @property
    def runtime(self) -> Path:
        return self.scratch / "rt"

    def start(self, command: list[str], name: str, env: Optional[dict[str, str]] = None) -> subprocess.Popen[bytes]:
        """Starts a process whose stderr goes to SCRATCH/NAME.log; stopped at teardown."""
        log = open(self.scratch / f"{name}.log", "wb")
        proc = subprocess.Popen(command, env=env or self.env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log)
        log.close()
        self.procs.append((proc, name))
        return proc

    def log(self, name: str) -> str:
        return (self.scratch / f"{name}.log").read_text(errors="replace")

    def agent(self, *args: str) -> Result:
        """Runs `jfgui-agent ARGS` (JSON output when stdout is a pipe)."""
        done = subprocess.run(
            [str(binary("jfgui-agent")), *args],
            env=self.env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=PATIENCE_S,
        )
        return Result(done.returncode, done.stdout.decode(), done.stderr.decode())

    def agent_waiting(self, *args: str) -> subprocess.Popen[bytes]:
        """Starts `jfgui-agent ARGS` without waiting for it: a call of an action that asks the
        user stays connected until the user answered. `finished` collects it."""
        return subprocess.Popen([str(binary("jfgui-agent")), *args], env=self.env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    @staticmethod
    def finished(proc: subprocess.Popen[bytes]) -> Result:
        out, err = proc.communicate(timeout=PATIENCE_S)
        return Result(proc.returncode, out.decode(), err.decode())

    def start_daemon(self) -> None:
        daemon = self.start([str(binary("jfgui-agentd"))], "jfgui-agentd")
        wait_for(
            lambda: daemon.poll() is not None or self.agent("status").code == 0,
            "the daemon to answer",
        )
        assert daemon.poll() is None, self.log("jfgui-agentd")

    def app(self, slug: str) -> Optional[dict[str, Any]]:
        """The app's entry in `jfgui-agent list`."""
        listed = self.agent("list", "--json")
        assert listed.code == 0, listed
        apps: list[dict[str, Any]] = listed.json()["apps"]
        return next((a for a in apps if a["slug"] == slug), None)

    def wait_enabled(self, slug: str, enabled: bool = True) -> dict[str, Any]:
        entry: dict[str, Any] = wait_for(
            lambda: (a := self.app(slug)) is not None and a["enabled"] == enabled and a,
            f"{slug} listed with enabled={enabled}",
        )
        return entry

    def stop(self, proc: subprocess.Popen[bytes]) -> Optional[int]:
        """SIGTERM, then SIGKILL after PATIENCE_S; the exit status."""
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(PATIENCE_S)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        return proc.returncode


@pytest.fixture
def world() -> Iterator[World]:
    scratch = Path(tempfile.mkdtemp(prefix="jfo-"))  # short: socket paths are bounded
    # The user's own state (audit log, grants) and launch files stay out of the test: a grant
    # left there would answer a prompt the test expects.
    env = dict(
        os.environ,
        JFGUI_RUNTIME_DIR=str(scratch / "rt"),
        JFGUI_LOG="info",
        XDG_STATE_HOME=str(scratch / "state"),
        XDG_DATA_HOME=str(scratch / "data"),
    )
    env.pop("XDG_RUNTIME_DIR", None)
    env.pop("JFGUI_AUDIT_DIR", None)
    w = World(scratch, env)
    try:
        yield w
    finally:
        for proc, _ in reversed(w.procs):
            w.stop(proc)
        shutil.rmtree(scratch, ignore_errors=True)


@pytest.fixture
def display() -> Iterator[str]:
    """A fresh Xvfb display (`:N`), which picks its own free number."""
    read, write = os.pipe()
    xvfb = subprocess.Popen(
        [tool("Xvfb"), "-displayfd", str(write), "-screen", "0", "1024x768x24", "-nolisten", "tcp"],
        pass_fds=(write,),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    os.close(write)
    try:
        with os.fdopen(read) as reader:
            number = reader.readline().strip()
        if not number:
            pytest.fail(f"Xvfb did not start (status {xvfb.poll()})")
        yield f":{number}"
    finally:
        xvfb.terminate()
        try:
            xvfb.wait(PATIENCE_S)
        except subprocess.TimeoutExpired:
            xvfb.kill()
            xvfb.wait()
