"""Hatch build hook: what a wheel, sdist or editable install needs besides Python files.

- **The translation catalogues.** Each ``locale/<lang>/LC_MESSAGES/jupyterlab_gpu_monitor.po``
  of the package is compiled, next to itself, into the ``.mo`` the server's gettext reads and the
  ``.json`` JupyterLab's frontend loads, by jupyterlab-translate (the tool JupyterLab's language
  packs are built with; its own hatch hook expects a language pack's layout). The compiled files
  are not in git: the wheel takes them as artifacts, and an editable install reads them where they
  are written.
- **A frontend built from the sources as they are.** The jupyter-builder hook, which runs after
  this one, skips its build when the production build's licence file exists (so that a wheel
  built from our sdist, which carries the build, needs no Node.js). That alone would install a
  frontend built before a change in ``src/``: this hook keeps a hash of the frontend's sources
  beside the build and removes the licence file when they changed, so the build runs again.
  The hash is written before the build: one that fails leaves no licence file, and the next
  install builds again.
- **Node.js checked first**, when a build will run: Node.js 20 or newer, or one line saying what
  to install (Debian 12 ships 18), rather than a failure minutes into ``jlpm install``.
- **Saying what takes minutes.** pip shows a build's output only with ``-v`` ("Preparing
  metadata ... still running" otherwise), so what the build is doing also goes to the terminal
  when there is one.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

PACKAGE_DIR = Path("jupyter_server_ext", "jupyterlab_gpu_monitor")
LOCALE_DIR = PACKAGE_DIR / "locale"
LABEXTENSION_DIR = PACKAGE_DIR / "labextension"
# Written by a production build only (a development build empties static/ first); the
# jupyter-builder hook's skip-if-exists file (pyproject.toml).
PRODUCTION_BUILD_MARKER = LABEXTENSION_DIR / "static" / "third-party-licenses.json"
# The hash of the sources the build in LABEXTENSION_DIR was made from: beside that folder, which
# the build empties; not in the wheel (git ignores it), in the sdist (an artifact).
SOURCES_STAMP = PACKAGE_DIR / "labextension-sources.sha256"
# What the frontend's build reads: the TypeScript, styles and settings schemas, and the files
# that decide the dependencies and how they are compiled.
FRONTEND_FOLDERS = ("src", "style", "schema")
FRONTEND_FILES = ("package.json", "yarn.lock", ".yarnrc.yml", "tsconfig.json", "babel.config.js")
MIN_NODE_MAJOR = 20
NODE_HELP = (
    "install Node.js {major} or newer (https://nodejs.org; on Debian and Ubuntu NodeSource's "
    "packages, or `conda install -c conda-forge 'nodejs>={major}'`), or install the released "
    "wheel, which needs no Node.js: pip install jupyterlab-gpu-monitor"
)


def frontend_sources_hash(root: Path) -> str:
    """A SHA-256 of the frontend's source files: their paths and contents, in a stable order."""
    paths = [root / name for name in FRONTEND_FILES if (root / name).is_file()]
    for folder in FRONTEND_FOLDERS:
        paths.extend(path for path in (root / folder).rglob("*") if path.is_file())
    digest = hashlib.sha256()
    for path in sorted(paths, key=lambda path: path.relative_to(root).as_posix()):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def node_problem(node: str | None = None) -> str | None:
    """Why the Node.js on PATH (or ``node``) cannot build the frontend; None when it can."""
    node = node or shutil.which("node")
    if node is None:
        return "Building the frontend needs Node.js, and none is on PATH: " + NODE_HELP.format(
            major=MIN_NODE_MAJOR
        )
    try:
        version = subprocess.run(
            [node, "--version"], capture_output=True, text=True, timeout=30, check=True
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError) as error:
        return f"Building the frontend needs Node.js, and {node} does not run ({error}): " + (
            NODE_HELP.format(major=MIN_NODE_MAJOR)
        )
    major = re.match(r"v?(\d+)\.", version)
    if major is None or int(major[1]) < MIN_NODE_MAJOR:
        return (
            f"Building the frontend needs Node.js {MIN_NODE_MAJOR} or newer, and {node} is "
            f"{version or 'of an unknown version'}: " + NODE_HELP.format(major=MIN_NODE_MAJOR)
        )
    return None


class BuildHook(BuildHookInterface):
    """Compiles the catalogues, and makes the frontend's build run whenever its sources changed."""

    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        """Before the jupyter-builder hook: decide whether the frontend is built, and say so."""
        self._build_started = None
        if self.target_name == "wheel":
            self._compile_catalogues()
        if self.target_name not in ("wheel", "sdist") or os.environ.get("SKIP_JUPYTER_BUILDER"):
            return
        root = Path(self.root)
        sources = frontend_sources_hash(root)
        stamp = root / SOURCES_STAMP
        built = stamp.is_file() and stamp.read_text().strip() == sources
        if version == "standard" and built and (root / PRODUCTION_BUILD_MARKER).is_file():
            self._tell("jupyterlab-gpu-monitor: the frontend is already built from these sources")
            return
        problem = node_problem()
        if problem is not None:
            raise RuntimeError(problem)
        (root / PRODUCTION_BUILD_MARKER).unlink(missing_ok=True)
        stamp.write_text(sources + "\n")
        kind = "development" if version == "editable" else "production"
        self._tell(
            f"jupyterlab-gpu-monitor: building the frontend ({kind}) with Node.js: jlpm install, "
            "then the build; a few minutes the first time (about 600 MB into node_modules)"
        )
        self._build_started = time.monotonic()

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        """After the build: how long the frontend took."""
        if self._build_started is not None:
            seconds = time.monotonic() - self._build_started
            self._tell(f"jupyterlab-gpu-monitor: built in {seconds:.0f} s")

    def _compile_catalogues(self) -> None:
        from jupyterlab_translate.api import compile_po_file

        for catalogue in sorted((Path(self.root) / LOCALE_DIR).glob("*/LC_MESSAGES/*.po")):
            compile_po_file(catalogue)
            self.app.display_info(f"compiled {catalogue.relative_to(self.root)}")

    def _tell(self, message: str) -> None:
        """Into the build's log, and onto the terminal when pip holds the log back."""
        self.app.display_info(message)
        if sys.stdout.isatty():
            return
        try:
            with open("/dev/tty", "w") as terminal:
                terminal.write(f"\n{message}\n")
        except OSError:
            pass  # no terminal (CI, Windows): the log has it, shown by pip -v
