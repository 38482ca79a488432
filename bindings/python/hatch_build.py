"""Build hook of the jfgui-host wheel: compiles libjfgui_host (the Rust crate jfgui-host-capi)
with Cargo and puts it inside the package, so the installed package needs neither Rust nor an
environment variable to find it.

The library has no Python ABI (the package reaches it through ``ctypes``), so the wheel is
tagged ``py3-none-PLATFORM``: any Python 3, this machine's platform (``linux_x86_64`` on Linux,
which says "built against this machine's glibc"; a ``manylinux`` tag is only honest for a
library built on an old enough glibc, e.g. in a manylinux container, and checked with
auditwheel). Editable installs build nothing: the package then loads the library from the
Cargo target dir (``cargo build -p jfgui-host-capi --release``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

#: The Cargo profile of the bundled library: the one the release binaries ship with (stripped).
PROFILE = "dist"
CRATE = "jfgui-host-capi"


#: The suffixes of a dynamic library (the crate also builds a static one and an rlib).
DYNAMIC_SUFFIXES = (".so", ".dylib", ".dll")


def wheel_platform() -> str:
    """This interpreter's most specific platform tag that claims no manylinux/musllinux
    policy (what hatchling's own inferred tags use)."""
    from packaging.tags import sys_tags

    return next(t.platform for t in sys_tags() if "manylinux" not in t.platform and "musllinux" not in t.platform)


def build_library(workspace: Path) -> Path:
    """Runs Cargo and returns the cdylib it reports (cargo's JSON messages name the file, so
    the target dir and profile layout never have to be guessed)."""
    cargo = os.environ.get("CARGO") or shutil.which("cargo")
    if cargo is None:
        raise RuntimeError(
            "building the jfgui-host wheel compiles libjfgui_host with Cargo, which is not on PATH: "
            "install Rust (https://rustup.rs), or install a prebuilt jfgui-host wheel instead"
        )
    command = [
        cargo, "build", "--locked", "--profile", PROFILE, "-p", CRATE,
        "--manifest-path", str(workspace / "Cargo.toml"),
        "--message-format", "json-render-diagnostics",
    ]
    print("jfgui-host: " + " ".join(command), file=sys.stderr)
    done = subprocess.run(command, stdout=subprocess.PIPE, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"cargo build of {CRATE} failed (status {done.returncode}; its errors are above)")
    for line in done.stdout.splitlines():
        message: dict[str, Any] = json.loads(line)
        if message.get("reason") == "compiler-artifact" and message["target"]["name"] == "jfgui_host":
            for name in message["filenames"]:
                if Path(name).suffix in DYNAMIC_SUFFIXES:
                    return Path(name)
    raise RuntimeError(f"cargo build of {CRATE} reported no dynamic library")


class LibraryHook(BuildHookInterface):
    """Bundles the freshly built library into the wheel and tags the wheel for this platform."""

    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel" or version == "editable":
            return
        # bindings/python -> bindings -> the workspace
        workspace = Path(self.root).resolve().parents[1]
        if not (workspace / "host-sdk" / "capi" / "Cargo.toml").is_file():
            raise RuntimeError(
                f"the Rust workspace is not at {workspace}: build the jfgui-host wheel from a checkout "
                "of jfgui-agentd (`pip wheel bindings/python`), not from an sdist"
            )
        library = build_library(workspace)
        build_data["force_include"][str(library)] = f"jfgui_host/{library.name}"
        build_data["pure_python"] = False
        build_data["tag"] = f"py3-none-{wheel_platform()}"
