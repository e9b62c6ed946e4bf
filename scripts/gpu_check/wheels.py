"""What the GPU machine lacks, carried as wheels: made here with pip download (which resolves
the whole tree for the machine's Python and platform), installed there with no index.

The lent machine has Python 3.12 on x86-64 with torch and nvidia-ml-py, but no jupyter_server,
tornado or ipykernel, and no network.
"""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
import tempfile
from importlib import metadata
from pathlib import Path

PACKAGE = "jupyterlab-gpu-monitor"
# The server and kernel side of the check, beyond our own dependencies; pinned, like those, to
# the versions the tests run here.
CHECK_NEEDS = ("ipykernel", "jupyter_client", "tornado", "pyzmq", "traitlets")
PYTHON_VERSION = "3.12"
# The manylinux tags pip must be told one by one (it matches each exactly); x86-64 only.
PLATFORMS = (
    "manylinux_2_28_x86_64",
    "manylinux_2_27_x86_64",
    "manylinux_2_26_x86_64",
    "manylinux_2_24_x86_64",
    "manylinux_2_17_x86_64",
    "manylinux2014_x86_64",
    "manylinux_2_12_x86_64",
    "manylinux2010_x86_64",
    "manylinux_2_5_x86_64",
    "manylinux1_x86_64",
)
# Where they are installed there: PYTHONPATH, not the image's environment, which stays as it is.
SITE = Path(tempfile.gettempdir()) / "gpu-check-site"


def requirements() -> list[str]:
    """Our package's dependencies (not its extras) and the check's, each at the version
    installed here."""
    from packaging.requirements import Requirement  # here only: pip's own, for this end

    names = [
        Requirement(line).name
        for line in metadata.requires(PACKAGE) or []
        if "extra ==" not in line
    ]
    return [f"{name}=={metadata.version(name)}" for name in dict.fromkeys([*names, *CHECK_NEEDS])]


def prepare(folder: Path) -> int:
    """Download every wheel the check needs there into ``folder``; pip's exit status."""
    folder.mkdir(parents=True, exist_ok=True)
    # An earlier download's wheels would stay beside newer versions of the same packages, and
    # two versions of one package stop the whole install there.
    for stale in folder.glob("*.whl"):
        stale.unlink()
    platforms = [argument for tag in PLATFORMS for argument in ("--platform", tag)]
    command = [
        sys.executable, "-m", "pip", "download", "--only-binary=:all:",
        "--python-version", PYTHON_VERSION, "--implementation", "cp", *platforms,
        "--dest", str(folder), *requirements(),
    ]  # fmt: skip
    status = subprocess.run(command, check=False).returncode
    wheels = sorted(folder.glob("*.whl"))
    size_mib = sum(wheel.stat().st_size for wheel in wheels) / 2**20
    print(f"{len(wheels)} wheels, {size_mib:.1f} MiB in {folder}")
    return status


def install(folder: Path) -> str | None:
    """Install the wheels of ``folder`` (no index, no resolution: they are the whole tree) into
    ``SITE``, first on this process's path and on that of every process it starts; why not,
    when they did not install (the GPU steps run without them, the server step cannot)."""
    wheels = sorted(str(wheel) for wheel in folder.glob("*.whl"))
    if not wheels:
        return f"no wheels in {folder}: make them with --prepare-wheels {folder}"
    finished = subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps", "--no-compile",
         "--no-cache-dir", "--upgrade", "--target", str(SITE), *wheels],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    print(finished.stdout + finished.stderr, end="", flush=True)
    if finished.returncode != 0:
        return f"pip exited with {finished.returncode}: {finished.stderr[-600:]}"
    sys.path.insert(0, str(SITE))
    importlib.invalidate_caches()
    path = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join([str(SITE), path] if path else [str(SITE)])
    return None
