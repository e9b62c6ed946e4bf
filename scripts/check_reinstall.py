#!/usr/bin/env python3
"""A second ``pip install .`` after a change in ``src/`` installs the change.

What a user of a checkout does: ``pip install .``, edit the TypeScript, ``pip install .``
again. The frontend's build is skipped when a production build is already there (so that a wheel
built from the sdist needs no Node.js); this checks that the second install builds the changed
sources, and that a third one without a change skips the build. It works on a copy of the
checkout (the files git tracks or would track) in a temporary folder, installs into a venv of its
own without dependencies (only the installed files are checked), and prints what it found.
Exit status 0 when all holds, 1 otherwise.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# A string of the main bundle: a plugin's description, which JupyterLab reads at start.
CHANGED_FILE = Path("src", "plugins", "serverStatus.ts")
CHANGED_TEXT = "description:"
SKIPPED = "the frontend is already built from these sources"


def copy_checkout(target: Path) -> None:
    """The checkout's files as a clone with its uncommitted changes would have them."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = REPO / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)


def pip_install(venv: Path, checkout: Path) -> str:
    """``pip install --no-deps -v <checkout>``; its output."""
    done = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "--no-deps", "-v", str(checkout)],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        sys.exit(f"pip install failed:\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}")
    return done.stdout + done.stderr


def installed_frontend(venv: Path) -> str:
    """The JavaScript of the labextension installed in ``venv``."""
    static = venv / "share" / "jupyter" / "labextensions" / "jupyterlab-gpu-monitor" / "static"
    return "".join(path.read_text(errors="replace") for path in sorted(static.glob("*.js")))


def main() -> int:
    """Install, change, install again, install once more; 0 when each did what it should."""
    with tempfile.TemporaryDirectory(prefix="gpu-monitor-reinstall-") as folder:
        checkout, venv = Path(folder, "checkout"), Path(folder, "venv")
        copy_checkout(checkout)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        print("pip install . (first install: builds the frontend)")
        pip_install(venv, checkout)
        marker = f"reinstall check {uuid.uuid4().hex}"
        if marker in installed_frontend(venv):
            sys.exit("the marker is in the frontend before the change")

        source = checkout / CHANGED_FILE
        text = source.read_text()
        if CHANGED_TEXT not in text:
            sys.exit(f"{CHANGED_FILE} has no {CHANGED_TEXT!r} to change")
        source.write_text(text.replace(CHANGED_TEXT, f"{CHANGED_TEXT} '{marker} ' +", 1))
        print(f"changed {CHANGED_FILE}; pip install . again")
        log = pip_install(venv, checkout)
        failures = []
        if SKIPPED in log:
            failures.append("the second install skipped the build of the changed sources")
        if marker not in installed_frontend(venv):
            failures.append("the second install did not install the changed frontend")

        print("pip install . a third time, nothing changed")
        log = pip_install(venv, checkout)
        if SKIPPED not in log:
            failures.append("the third install built the unchanged sources again")
        if marker not in installed_frontend(venv):
            failures.append("the third install lost the change")
    for failure in failures:
        print(f"FAILED: {failure}", file=sys.stderr)
    if not failures:
        print("OK: the change was built and installed, and the unchanged sources were not rebuilt")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
