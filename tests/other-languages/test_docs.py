"""docs/INTEGRATING-C-PYTHON.md, executed: the Python program it shows is run as written, and
every `$ jfgui-agent ...` line of its transcripts is run against the app, its stdout compared
line by line (JSON compared as values) and its `jfgui-agent: error[...]` lines found on
stderr; the C check script and the pytest check run as written and pass."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys

from conftest import BIN_DIR, PATIENCE_S, REPO, World, binary

DOC = REPO / "docs" / "INTEGRATING-C-PYTHON.md"


def block(marker: str) -> str:
    """The fenced block right after `<!-- MARKER -->`, dedented."""
    text = DOC.read_text()
    match = re.search(rf"<!-- {re.escape(marker)} -->\s*\n(\s*)```\w+\n(.*?)\n\s*```", text, re.S)
    assert match, f"{marker} not found in {DOC}"
    indent = match.group(1)
    return "\n".join(line[len(indent) :] if line.startswith(indent) else line for line in match.group(2).split("\n"))


def check_transcript(world: World, marker: str) -> None:
    steps: list[tuple[str, list[str]]] = []
    for line in block(marker).splitlines():
        if line.startswith("$ "):
            steps.append((line[2:], []))
        else:
            steps[-1][1].append(line)
    assert steps, marker
    for command, expected in steps:
        args = shlex.split(command)
        assert args[0] == "jfgui-agent", command
        result = world.agent(*args[1:])
        out = [line for line in expected if not line.startswith("jfgui-agent: ")]
        err = [line for line in expected if line.startswith("jfgui-agent: ")]
        got = result.stdout.splitlines()
        assert [json.loads(line) for line in got] == [json.loads(line) for line in out], (command, result)
        for line in err:
            assert line in result.stderr.splitlines(), (command, result.stderr)


def test_the_c_section(world: World) -> None:
    world.start_daemon()
    counter = world.start([str(binary("c-counter")), "--agent-enable"], "c-counter")
    world.wait_enabled("c-counter")
    check_transcript(world, "transcript: c-counter")
    assert world.stop(counter) == 0, world.log("c-counter")


def test_the_python_section(world: World) -> None:
    world.start_daemon()
    program = world.scratch / "counter.py"
    program.write_text(block("program: py-counter"))
    app = world.start([sys.executable, str(program)], "py-counter")
    world.wait_enabled("py-counter")
    check_transcript(world, "transcript: py-counter")
    assert app.poll() is None, world.log("py-counter")


def test_the_c_check_script(world: World) -> None:
    script = world.scratch / "check.sh"
    script.write_text(block("script: c-check"))
    env = dict(world.env, PATH=f"{BIN_DIR}{os.pathsep}{world.env['PATH']}")
    env.pop("JFGUI_RUNTIME_DIR")
    done = subprocess.run(
        ["bash", str(script), str(binary("c-counter"))], cwd=world.scratch, env=env, capture_output=True, timeout=PATIENCE_S
    )
    assert done.returncode == 0, done.stderr.decode()
    report = json.loads((world.scratch / "check.json").read_text())
    assert report["app"] == "c-counter" and report["mutate"] and report["passed"], report


def test_the_python_check(world: World) -> None:
    (world.scratch / "counter.py").write_text(block("program: py-counter"))
    (world.scratch / "test_counter.py").write_text(block("program: py-check"))
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_counter.py"],
        cwd=world.scratch,
        env=world.env,
        capture_output=True,
        timeout=PATIENCE_S,
    )
    assert done.returncode == 0, done.stdout.decode() + done.stderr.decode()
    assert "1 passed" in done.stdout.decode(), done.stdout.decode()
