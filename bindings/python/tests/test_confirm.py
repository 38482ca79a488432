"""Calls that wait for the user's yes, through the real libjfgui_host and a stand-in daemon:
``Host.confirm`` gets the call and who asks, answers now or later with ``Host.answer``; a
withdrawn prompt reaches ``withdraw_confirmation``; a host that cannot ask never runs the call."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Optional

import pytest

from jfgui_host import Answer, Confirmation, Host, action
from standin import StandIn, execute


class Board(Host):
    """A value an agent may reset only once the user said yes."""

    def __init__(self, name: str = "Board") -> None:
        super().__init__(name)
        self.value = 5
        self._revision = 1
        self.answer_now: Optional[Answer] = None
        self.asked: list[Confirmation] = []
        self.withdrawn: list[str] = []

    def revision(self) -> int:
        return self._revision

    def confirm(self, confirmation: Confirmation) -> Optional[Answer]:
        self.asked.append(confirmation)
        return self.answer_now

    def withdraw_confirmation(self, ticket: str) -> None:
        self.withdrawn.append(ticket)

    @action("board.reset", "Set the value to 0.", kind="write", title="Reset the board", confirm=True)
    def reset(self, input: Any) -> Any:
        self.value = 0
        self._revision += 1
        return {"value": self.value}


class Silent(Host):
    """Declares a confirm action but keeps the default ``confirm``."""

    def __init__(self) -> None:
        super().__init__("Silent")
        self.ran = False

    def revision(self) -> int:
        return 1

    @action("silent.reset", "Reset.", kind="write", confirm=True)
    def reset(self, input: Any) -> Any:
        self.ran = True
        return {}


@pytest.fixture
def runtime(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    scratch = Path(tempfile.mkdtemp(prefix="jfc-"))
    monkeypatch.setenv("JFGUI_RUNTIME_DIR", str(scratch / "rt"))
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    yield scratch / "rt"
    shutil.rmtree(scratch, ignore_errors=True)


def serve(host: Host, runtime: Path) -> tuple[StandIn, list[dict[str, Any]]]:
    stand_in = StandIn(runtime)
    host.set_enabled(True)
    host.connect()
    _, actions = stand_in.accept(host)
    return stand_in, actions


AGENT = {"exe": "/usr/bin/claude", "pid": 9, "says": "claude-code 1.2", "transport": "endpoint"}


def reset_call(consent: Optional[dict[str, Any]] = None) -> dict[str, Any]:
    call = execute("board.reset", expected=1)
    if consent is not None:
        call["execute"]["consent"] = consent
    return call


def ticket_of(outcome: dict[str, Any]) -> str:
    task = outcome["ok"]["deferred"]["task"]
    assert task["awaiting"] == "confirmation", task
    assert task["progress"]["message"] == "waiting for you to allow Reset the board"
    ticket: str = task["id"]
    return ticket


def test_the_declaration_carries_title_and_confirm(runtime: Path) -> None:
    with Board() as board:
        stand_in, actions = serve(board, runtime)
        assert (actions[0]["title"], actions[0]["confirm"]) == ("Reset the board", True)
        stand_in.close()


def test_a_yes_given_later_runs_the_call_after_its_update(runtime: Path) -> None:
    with Board() as board:
        s, _ = serve(board, runtime)
        ticket = ticket_of(s.request(board, reset_call({"agent": AGENT, "mayGrant": True})))
        asked = board.asked[0]
        assert (asked.ticket, asked.action, asked.title, asked.summary) == (ticket, "board.reset", "Reset the board", "Reset the board")
        assert (asked.agent_name, asked.may_always) == ("claude", True)
        assert asked.agent_label == '/usr/bin/claude (says it is "claude-code 1.2")'
        assert asked.agent == AGENT and asked.batch_len is None
        assert asked.calls[0]["description"] == "Set the value to 0."
        assert board.value == 5, "nothing runs before the answer"
        assert board.answer(ticket, Answer.ALLOW_ALWAYS) is True
        allowed = s.recv()["task"]
        assert (allowed["state"], allowed.get("awaiting"), allowed["consent"]) == ("running", None, {"answer": "allow_always"})
        done = s.recv()["task"]
        assert done["state"] == "completed" and done["result"] == {"output": {"value": 0}, "revision": 2}
        assert board.value == 0
        assert board.answer(ticket, Answer.DENY) is False, "a second answer is ignored"
        with pytest.raises(ValueError):
            board.answer(ticket, Answer.LATER)
        s.close()


def test_an_answer_now_and_a_no(runtime: Path) -> None:
    with Board() as board:
        s, _ = serve(board, runtime)
        board.answer_now = Answer.DENY
        ticket_of(s.request(board, reset_call()))
        assert board.asked[0].agent_name == "An unknown agent", "a daemon that does not say"
        denied = s.recv()["task"]
        assert (denied["state"], denied["error"]["reason"], denied["consent"]) == ("failed", "denied_by_user", {"answer": "deny"})
        assert board.value == 5
        # Covered by a standing grant: no prompt.
        granted = s.request(board, reset_call({"agent": AGENT, "granted": 4, "mayGrant": True}))
        assert granted["ok"]["executed"]["revision"] == 2
        assert len(board.asked) == 1
        s.close()


def test_a_cancelled_call_withdraws_its_prompt(runtime: Path) -> None:
    with Board() as board:
        s, _ = serve(board, runtime)
        ticket = ticket_of(s.request(board, reset_call()))
        cancelled = s.request(board, {"cancelTask": {"id": ticket}})
        assert cancelled["ok"]["task"]["state"] == "cancelled"
        assert board.withdrawn == [ticket]
        assert board.answer(ticket, Answer.ALLOW) is False
        s.send({"withdraw": {"task": ticket, "reason": "client_gone"}})
        board.pump()
        assert board.value == 5
        s.close()


def test_a_host_that_cannot_ask_never_runs_the_call(runtime: Path) -> None:
    with Silent() as silent:
        s, _ = serve(silent, runtime)
        outcome = s.request(silent, execute("silent.reset", expected=1))
        assert outcome["ok"]["deferred"]["task"]["awaiting"] == "confirmation"
        failed = s.recv()["task"]
        assert (failed["error"]["reason"], failed["consent"]) == ("no_confirmation_ui", {"answer": "no_ui"})
        assert not silent.ran
        s.close()
