"""The "Let agents start <App>" helpers over the real libjfgui_host: the launch file written,
read back and removed under a private data dir, and refusals for programs the daemon would
not start."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from jfgui_host import (
    JfguiError,
    Status,
    agents_may_start,
    let_agents_start,
    started_by_agent,
    stop_letting_agents_start,
    this_program,
)


@pytest.fixture
def data_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    return tmp_path


def test_the_launch_file_is_written_read_and_removed(data_home: Path) -> None:
    program = data_home / "app"
    program.write_text("#!/bin/sh\n")
    program.chmod(0o700)
    assert not agents_may_start("Tk Notes")
    let_agents_start("Tk Notes", [str(program), "--title", "a; $(b)"])
    path = data_home / "jfgui-agent" / "apps" / "tk-notes.json"
    assert json.loads(path.read_text()) == {
        "displayName": "Tk Notes",
        "exec": [str(program), "--title", "a; $(b)"],
        "activatable": True,
    }
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert agents_may_start("Tk Notes")
    assert stop_letting_agents_start("Tk Notes")
    assert not stop_letting_agents_start("Tk Notes")
    assert not agents_may_start("Tk Notes")


def test_programs_the_daemon_would_not_start_are_refused(data_home: Path) -> None:
    loose = data_home / "loose"
    loose.write_text("")
    loose.chmod(0o777)
    for exec in (["relative/app"], [str(loose)], []):
        with pytest.raises(JfguiError) as refused:
            let_agents_start("X", exec)
        assert refused.value.status == Status.INVALID_ARGUMENT
    assert not (data_home / "jfgui-agent" / "apps" / "x.json").exists()


def test_this_program_and_started_by_agent(monkeypatch: pytest.MonkeyPatch) -> None:
    argv = this_program(["--flag"])
    assert os.path.isabs(argv[0]) and os.path.isabs(argv[1]) and argv[2:] == ["--flag"]
    monkeypatch.delenv("JFGUI_ACTIVATED", raising=False)
    assert not started_by_agent()
