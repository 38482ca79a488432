"""Build hook of the jfgui-host package: bundle the already built native library.

The package itself is pure Python (ctypes); it needs libjfgui_host, which Cargo builds
(`cargo build -p jfgui-host-capi --release`). `pip install ./bindings/python` copies that library into
the package, so the installed package works without the source tree. The library is taken
from `$JFGUI_HOST_LIB` (a file) if set, else from the Cargo target dir
(`$CARGO_TARGET_DIR`, else the repository's `target/`), release build first, then debug.
Without one, the build stops with the command to run.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent


def library_name() -> str:
    if sys.platform == "win32":
        return "jfgui_host.dll"
    if sys.platform == "darwin":
        return "libjfgui_host.dylib"
    return "libjfgui_host.so"


def find_library() -> Path:
    explicit = os.environ.get("JFGUI_HOST_LIB")
    if explicit:
        path = Path(explicit)
        if not path.is_file():
            raise SystemExit(f"JFGUI_HOST_LIB={explicit} is not a file")
        return path
    target = Path(os.environ.get("CARGO_TARGET_DIR") or REPO / "target")
    for profile in ("release", "debug"):
        path = target / profile / library_name()
        if path.is_file():
            return path
    raise SystemExit(
        f"{library_name()} was not found in {target}/release or {target}/debug: "
        "build it first with `cargo build -p jfgui-host-capi --release` (or set JFGUI_HOST_LIB)"
    )


class BuildWithLibrary(build_py):
    """build_py that also copies the native library next to the package's modules."""

    def run(self) -> None:
        super().run()
        library = find_library()
        destination = Path(self.build_lib) / "jfgui_host" / library.name
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(library, destination)
        print(f"jfgui-host: bundled {library}", file=sys.stderr)


class BinaryDistribution(Distribution):
    """The wheel carries a native library, so it is platform-specific."""

    def has_ext_modules(self) -> bool:
        return True


setup(cmdclass={"build_py": BuildWithLibrary}, distclass=BinaryDistribution)
