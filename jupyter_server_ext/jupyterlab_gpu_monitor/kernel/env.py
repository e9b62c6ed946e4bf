"""What the server sees of a kernel's environment, from its process alone (no round trip).

It works while the kernel is busy and for any kernel language. ``/proc/<pid>/environ`` is the
environment the kernel started with: a change the notebook makes later (``os.environ[...] =``)
only the in-kernel probe sees.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import asdict, dataclass
from pathlib import Path

import psutil

from ..conda.kernelspecs import prefix_of_executable

# The variables that decide which environment and which GPUs a kernel gets.
ENVIRONMENT_VARIABLES = (
    "CONDA_PREFIX",
    "CONDA_DEFAULT_ENV",
    "VIRTUAL_ENV",
    "CUDA_VISIBLE_DEVICES",
    "LD_LIBRARY_PATH",
)


@dataclass
class KernelProcessFacts:
    """A kernel's interpreter, the environment it belongs to, and its start-up variables."""

    pid: int
    interpreter: str | None  # what the kernel was launched with (argv[0], absolute)
    executable: str | None  # /proc/<pid>/exe: the real binary, symlinks resolved
    prefix: str | None  # the environment's root
    env_kind: str | None  # "conda", "venv" or "system"
    variables: dict[str, str | None]
    readable: bool = True  # False: another user's kernel, or gone

    def to_json(self) -> dict:
        """The facts as the REST API sends them."""
        return asdict(self)


def environment_root(interpreter: str) -> tuple[str | None, str | None]:
    """The prefix an interpreter belongs to and its kind (conda, venv, system): the environment
    a kernelspec's program is found in (``prefix_of_executable``: ``<prefix>/python.exe`` and
    ``<prefix>/lib/R/bin/R`` too), else the folder above a ``bin`` or ``Scripts``.

    A venv's ``bin/python`` is a symlink to the base interpreter, so the path the kernel was
    launched with says more than ``/proc/<pid>/exe``, which resolves it.
    """
    prefix = prefix_of_executable(interpreter) if interpreter else None
    if prefix is not None:
        return prefix, "conda" if Path(prefix, "conda-meta").is_dir() else "venv"
    path = Path(interpreter)
    if path.parent.name in ("bin", "Scripts"):
        return str(path.parent.parent), "system"
    return None, None


def kernel_process_facts(pid: int) -> KernelProcessFacts:
    """Read a kernel's process; blocking (reads /proc), call it off the event loop."""
    facts = KernelProcessFacts(
        pid=pid, interpreter=None, executable=None, prefix=None, env_kind=None, variables={}
    )
    try:
        process = psutil.Process(pid)
        with process.oneshot():
            cmdline = process.cmdline()
            environ = process.environ()
            facts.executable = process.exe() or None
            cwd = process.cwd()
    except (psutil.NoSuchProcess, psutil.ZombieProcess, psutil.AccessDenied):
        facts.readable = False
        return facts
    if cmdline:
        launched = cmdline[0]
        if os.sep not in launched:
            # `python` in a kernelspec: the one first on the kernel's own PATH.
            launched = shutil.which(launched, path=environ.get("PATH")) or launched
        facts.interpreter = os.path.join(cwd, launched)
    facts.prefix, facts.env_kind = environment_root(facts.interpreter or facts.executable or "")
    facts.variables = {name: environ.get(name) for name in ENVIRONMENT_VARIABLES}
    return facts
