"""Which environment each kernelspec launches, from its ``argv`` (the way jupyter_client starts
it), without starting anything."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .locations import normal_path

# jupyter_client runs a kernelspec whose argv[0] is one of these with the server's own Python
# (KernelManager.format_kernel_cmd).
_SERVER_PYTHON = {
    "python",
    f"python{sys.version_info[0]}",
    f"python{sys.version_info[0]}.{sys.version_info[1]}",
}
# How far above an executable its prefix may be: <prefix>/bin/python, <prefix>/python.exe,
# <prefix>/lib/R/bin/R.
_PREFIX_DEPTH = 4
_CONDA_PROGRAMS = {"conda", "mamba", "micromamba"}


@dataclass(frozen=True)
class Launch:
    """What a kernelspec runs in: a prefix, or (``conda run -n NAME``) an environment name."""

    kernelspec: str
    prefix: str | None = None
    env_name: str | None = None


def prefix_of_executable(executable: str) -> str | None:
    """The environment an executable belongs to: the nearest folder above it that holds
    ``conda-meta/`` or ``pyvenv.cfg``. The path is taken as given, not resolved: a venv's
    ``bin/python`` is a symlink out of the venv."""
    folder = Path(normal_path(executable)).parent
    for _ in range(_PREFIX_DEPTH):
        if (folder / "conda-meta").is_dir() or (folder / "pyvenv.cfg").is_file():
            return str(folder)
        if folder.parent == folder:
            break
        folder = folder.parent
    return None


def launched_interpreter(program: str) -> str:
    """The program a kernelspec's argv[0] names, as jupyter_client runs it: ``python``,
    ``python3`` and ``python3.X`` are the server's own Python."""
    return sys.executable if program in _SERVER_PYTHON else program


def _option(argv: list[str], *names: str) -> str | None:
    for index, arg in enumerate(argv):
        for name in names:
            if arg == name and index + 1 < len(argv):
                return argv[index + 1]
            if name.startswith("--") and arg.startswith(name + "="):
                return arg.split("=", 1)[1]
    return None


def launch_of(name: str, spec: Mapping[str, Any]) -> Launch | None:
    """Where the kernelspec ``name`` runs: nb_conda_kernels' ``conda_env_path`` metadata, a
    ``conda run -p PREFIX`` / ``-n NAME`` wrapper, or the environment of argv[0]."""
    metadata = spec.get("metadata") or {}
    if isinstance(metadata, Mapping) and isinstance(metadata.get("conda_env_path"), str):
        return Launch(name, prefix=normal_path(metadata["conda_env_path"]))
    argv = [str(arg) for arg in spec.get("argv") or []]
    if not argv:
        return None
    program = Path(argv[0]).name.lower().removesuffix(".exe")
    if program in _CONDA_PROGRAMS and "run" in argv:
        prefix = _option(argv, "-p", "--prefix")
        if prefix:
            return Launch(name, prefix=normal_path(prefix))
        env_name = _option(argv, "-n", "--name")
        return Launch(name, env_name=env_name) if env_name else None
    executable = launched_interpreter(argv[0])
    if not os.path.isabs(executable):
        executable = shutil.which(executable) or ""
    prefix = prefix_of_executable(executable) if executable else None
    return Launch(name, prefix=prefix) if prefix else None


def launches(kernelspecs: Mapping[str, Mapping[str, Any]]) -> list[Launch]:
    """The launch of every kernelspec in ``KernelSpecManager.get_all_specs()``'s shape
    (``{name: {"resource_dir", "spec": {"argv", ...}}}``) whose environment can be told."""
    found = []
    for name, entry in kernelspecs.items():
        spec = entry.get("spec") if isinstance(entry, Mapping) else None
        launch = launch_of(name, spec) if isinstance(spec, Mapping) else None
        if launch is not None:
            found.append(launch)
    return found
