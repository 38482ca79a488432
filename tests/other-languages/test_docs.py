"""docs/INTEGRATING-C-PYTHON.md, executed: the Python program it shows is the example the package
ships (and bindings/python/README.md shows the same), that example is run from the installed
package, and every `$ jfgui-agent ...` line of its transcripts is run against the app, its
stdout compared line by line (JSON compared as values) and its `jfgui-agent: error[...]` lines
found on stderr; the C check script and the pytest check run as written and pass. The C program
of jfgui-host-capi's README is compiled against the header and the library, started, and
called."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

from conftest import BIN_DIR, PATIENCE_S, REPO, World, binary, tool

DOC = REPO / "docs" / "INTEGRATING-C-PYTHON.md"
PYTHON_README = REPO / "bindings" / "python" / "README.md"
COUNTER = REPO / "bindings" / "python" / "src" / "jfgui_host" / "examples" / "counter.py"
CAPI_README = REPO / "host-sdk" / "capi" / "README.md"


def block(marker: str, doc: Path = DOC) -> str:
    """The fenced block right after `<!-- MARKER -->` in `doc`, dedented."""
    text = doc.read_text()
    match = re.search(rf"<!-- {re.escape(marker)} -->\s*\n(\s*)```\w+\n(.*?)\n\s*```", text, re.S)
    assert match, f"{marker} not found in {doc}"
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


def test_the_python_programs_shown_are_the_shipped_example() -> None:
    source = COUNTER.read_text().rstrip("\n")
    assert block("program: py-counter") == source, f"{DOC} shows another program than {COUNTER}"
    assert block("program: py-counter", PYTHON_README) == source, f"{PYTHON_README} shows another program than {COUNTER}"


def test_the_python_section(world: World) -> None:
    world.start_daemon()
    app = world.start([sys.executable, "-m", "jfgui_host.examples.counter", "--agent-enable"], "py-counter")
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


def test_the_capi_readme_program(world: World) -> None:
    source = world.scratch / "greeter.c"
    source.write_text(block("c: greeter", CAPI_README))
    program = world.scratch / "greeter"
    include = REPO / "host-sdk" / "capi" / "include"
    # The flags of examples/c-counter/Makefile, linked against the library run.sh built.
    compiled = subprocess.run(
        [tool("cc"), "-std=c11", "-Wall", "-Wextra", "-Werror", "-pedantic", "-D_POSIX_C_SOURCE=200809L",
         f"-I{include}", "-o", str(program), str(source), f"-L{BIN_DIR}", "-ljfgui_host", f"-Wl,-rpath,{BIN_DIR}"],
        capture_output=True,
        text=True,
    )
    assert compiled.returncode == 0, compiled.stderr
    world.start_daemon()
    greeter = world.start([str(program)], "greeter")
    world.wait_enabled("greeter")
    result = world.agent("call", "greeter", "greeting.get")
    assert result.code == 0, result
    assert result.json()["output"] == {"text": "Hello from C"}, result
    assert greeter.poll() is None, world.log("greeter")
