"""Running a command the server depends on (nvidia-smi, conda, an environment's python):
an argv list, never a shell, never longer than its timeout, never more output than the cap,
never left running."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Awaitable, Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")

# What a command may print before it is stopped: 16 times the `nvidia-smi -q -x` of an
# 8-GPU server (about 230 KB), far beyond any conda export. More is a broken or hostile tool,
# and holding or parsing it would cost every request the server answers meanwhile.
MAX_OUTPUT_BYTES = 4 * 1024 * 1024
# How much of the output is read at a time.
_CHUNK_BYTES = 64 * 1024


class CommandTimeout(Exception):
    """The command did not finish in time; it and what it started were killed."""


class OutputTooLarge(Exception):
    """The command printed more than ``MAX_OUTPUT_BYTES``; it and what it started were killed."""

    def __init__(self, limit_bytes: int):
        super().__init__(f"printed more than {limit_bytes} bytes")
        self.limit_mib = limit_bytes / (1024 * 1024)


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


async def _read_capped(stream: asyncio.StreamReader | None, limit_bytes: int) -> bytes:
    if stream is None:
        return b""
    chunks: list[bytes] = []
    size = 0
    while chunk := await stream.read(_CHUNK_BYTES):
        size += len(chunk)
        if size > limit_bytes:
            raise OutputTooLarge(limit_bytes)
        chunks.append(chunk)
    return b"".join(chunks)


async def _output(process: asyncio.subprocess.Process, limit_bytes: int) -> tuple[bytes, bytes]:
    # Both pipes at once: a command that fills the one not read would wait for ever.
    output, errors = await asyncio.gather(
        _read_capped(process.stdout, limit_bytes), _read_capped(process.stderr, limit_bytes)
    )
    await process.wait()
    return output, errors


async def _discard_rest(process: asyncio.subprocess.Process) -> None:
    # A reader stopped at the cap leaves its pipe paused, and wait() also waits for the pipes to
    # close: read what is left. The command was killed, so the end comes at once.
    for stream in (process.stdout, process.stderr):
        while stream is not None and await stream.read(_CHUNK_BYTES):
            pass


async def run_command(
    argv: Sequence[str],
    timeout_seconds: float,
    *,
    merge_stderr: bool = False,
) -> Finished:
    """Run ``argv`` and wait for it, at most ``timeout_seconds``.

    The command gets a process group of its own, so that a timeout, too much output, or the
    server stopping while it runs, kills what it started too. Raises OSError when it cannot be
    started (FileNotFoundError, PermissionError), CommandTimeout and OutputTooLarge.
    """
    process = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT if merge_stderr else asyncio.subprocess.PIPE,
        start_new_session=True,
    )
    try:
        output, errors = await asyncio.wait_for(_output(process, MAX_OUTPUT_BYTES), timeout_seconds)
    except asyncio.TimeoutError:
        raise CommandTimeout(f"did not finish within {timeout_seconds:g} s") from None
    finally:
        if process.returncode is None:
            _kill_group(process)
            await _discard_rest(process)
            await process.wait()
    return Finished(
        returncode=process.returncode,
        stdout=output.decode("utf-8", errors="replace"),
        stderr=errors.decode("utf-8", errors="replace"),
    )


class SharedRuns:
    """Runs of a command that concurrent requests share: a request for a run already under way
    waits for that one instead of starting another, and at most ``limit`` different runs go at
    once (a conda run costs seconds and hundreds of MB)."""

    def __init__(self, limit: int):
        self._limit = limit
        self._slots: asyncio.Semaphore | None = None  # made in the loop that runs
        self._running: dict[Hashable, asyncio.Future] = {}

    async def run(self, key: Hashable, start: Callable[[], Awaitable[T]]) -> T:
        """The result of ``start()``, or of the run with the same ``key`` under way."""
        running = self._running.get(key)
        if running is None:
            running = asyncio.ensure_future(self._in_a_slot(start))
            self._running[key] = running
            running.add_done_callback(lambda done: self._finished(key, done))
        # Shielded: one request giving up must not end the run the others wait for.
        return await asyncio.shield(running)

    async def _in_a_slot(self, start: Callable[[], Awaitable[T]]) -> T:
        if self._slots is None:
            self._slots = asyncio.Semaphore(self._limit)
        async with self._slots:
            return await start()

    def _finished(self, key: Hashable, done: asyncio.Future) -> None:
        self._running.pop(key, None)
        if not done.cancelled():
            done.exception()  # retrieved: every waiter may have given up
