"""Running a command the server depends on (nvidia-smi, conda, an environment's python):
an argv list, never a shell, never longer than its timeout, never left running."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Sequence
from dataclasses import dataclass


class CommandTimeout(Exception):
    """The command did not finish in time; it and what it started were killed."""


@dataclass
class Finished:
    """A command that ran to its end."""

    returncode: int
    stdout: str
    stderr: str


def _kill_group(process: asyncio.subprocess.Process) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass  # it ended between the check and the kill


async def run_command(
    argv: Sequence[str], timeout_seconds: float, *, merge_stderr: bool = False
) -> Finished:
    """Run ``argv`` and wait for it, at most ``timeout_seconds``.

    The command gets a process group of its own, so that a timeout, or the server stopping
    while it runs, kills what it started too. Raises OSError when it cannot be started
    (FileNotFoundError, PermissionError) and CommandTimeout.
    """
    process = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT if merge_stderr else asyncio.subprocess.PIPE,
        start_new_session=True,
    )
    try:
        output, errors = await asyncio.wait_for(process.communicate(), timeout_seconds)
    except asyncio.TimeoutError:
        raise CommandTimeout(f"did not finish within {timeout_seconds:g} s") from None
    finally:
        if process.returncode is None:
            _kill_group(process)
            await process.wait()
    return Finished(
        returncode=process.returncode,
        stdout=output.decode("utf-8", errors="replace"),
        stderr=(errors or b"").decode("utf-8", errors="replace"),
    )
