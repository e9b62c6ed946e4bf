"""The conda command, for what only conda itself can tell: ``conda env export`` when a user
asks to go through conda, and ``conda info --json`` for the environments conda knows of.

Each run is an argv list (never a shell) under a timeout; a run that times out is killed with
whatever it started.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..subprocesses import CommandTimeout, OutputTooLarge, run_command
from ..translation import gettext
from .condarc import string_list
from .errors import CondaCommandError

# conda env export's flag for each style of export.STYLES.
_EXPORT_FLAGS = {
    "no-builds": ["--no-builds"],
    "from-history": ["--from-history"],
    "with-builds": [],
}


@dataclass
class CondaInfo:
    """What ``conda info --json`` says about environments: ``envs`` (which conda 4.3 lists
    without the root), ``root_prefix`` and ``envs_dirs``."""

    envs: list[str] = field(default_factory=list)
    root_prefix: str | None = None
    envs_dirs: list[str] = field(default_factory=list)


async def run_conda(conda: str, args: Sequence[str], timeout_seconds: float) -> str:
    """conda's standard output for ``conda <args>``. Raises CondaCommandError: not_installed,
    timeout, or failed (with the end of what conda printed on stderr)."""
    executable = shutil.which(conda)
    command = f"conda {' '.join(args)}"
    if executable is None:
        message = gettext("{conda} was not found on the PATH").format(conda=repr(conda))
        raise CondaCommandError("not_installed", message)
    try:
        finished = await run_command([executable, *args], timeout_seconds)
    except CommandTimeout:
        message = gettext("`{command}` did not finish within {seconds} s")
        raise CondaCommandError(
            "timeout", message.format(command=command, seconds=f"{timeout_seconds:g}")
        ) from None
    except OutputTooLarge as error:
        message = gettext("`{command}` printed more than {size} MiB")
        size = f"{error.limit_mib:g}"
        raise CondaCommandError("bad_output", message.format(command=command, size=size)) from None
    if finished.returncode != 0:
        said = " ".join(finished.stderr.split())[-500:]
        message = gettext("`{command}` exited with status {status}: {said}").format(
            command=command, status=finished.returncode, said=said or gettext("no message")
        )
        raise CondaCommandError("failed", message)
    return finished.stdout


async def conda_env_export(conda: str, prefix: str, style: str, timeout_seconds: float) -> str:
    """``conda env export --prefix PREFIX`` in one of ``export.STYLES``: conda's own YAML."""
    args = ["env", "export", "--prefix", prefix, *_EXPORT_FLAGS[style]]
    text = await run_conda(conda, args, timeout_seconds)
    if not text.lstrip().startswith("name:"):
        message = gettext("`conda env export` printed no environment: {output}")
        raise CondaCommandError("bad_output", message.format(output=repr(text.strip()[:200])))
    return text


async def conda_info(conda: str, timeout_seconds: float) -> CondaInfo:
    """``conda info --json``: the environments conda knows of, its root and envs folders."""
    text = await run_conda(conda, ["info", "--json"], timeout_seconds)
    try:
        info = json.loads(text)
    except ValueError:
        info = None
    if not isinstance(info, dict):
        message = gettext("`conda info --json` printed no JSON object: {output}")
        raise CondaCommandError("bad_output", message.format(output=repr(text.strip()[:200])))

    root = info.get("root_prefix")
    return CondaInfo(
        envs=string_list(info.get("envs")),
        root_prefix=root if isinstance(root, str) else None,
        envs_dirs=string_list(info.get("envs_dirs")),
    )
