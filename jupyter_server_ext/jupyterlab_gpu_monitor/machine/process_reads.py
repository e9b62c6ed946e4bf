"""One moment's view of the process table, read once whoever asks.

A read of the GPUs looks at processes three ways: each kernel's tree (its CPU and memory), the
join of the GPU processes to the kernels (parents, owners, start times) and the user's own GPU
processes (their CPU, memory and command line). Most of these are the same processes: here
each one's ``/proc/<pid>/stat`` is read at most once a moment, and what a process keeps for its
life (its real user, its command line) once in its life. On Linux the files are read with
``os.read``, a fraction of psutil's cost per field; elsewhere psutil reads the same facts.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil

# The most of a command line kept: enough for a script and its arguments, not a megabyte of
# them (a process's arguments may be as long as the system allows).
MAX_COMMAND_CHARS = 1000


@dataclass(frozen=True)
class ProcessStat:
    """A live process's ``/proc/<pid>/stat``, the fields read here."""

    parent: int
    started: int  # clock ticks after boot (tells a reused pid from the process that had it)
    ticks: int  # user and system CPU time, in clock ticks
    resident_bytes: int


class LifelongFacts:
    """What a process keeps for its life, by (fact, pid, start): read once, and forgotten once a
    moment passes without the process being looked at."""

    def __init__(self) -> None:
        self._kept: dict[tuple[str, int, int], Any] = {}
        self._seen: dict[tuple[str, int, int], Any] = {}

    def get(self, key: tuple[str, int, int], read: Callable[[], Any]) -> Any:
        value = self._kept[key] if key in self._kept else read()
        self._seen[key] = value
        return value

    def next_moment(self) -> None:
        self._kept, self._seen = self._seen, {}


@functools.lru_cache(maxsize=4)
def _system(proc: Path) -> tuple[bool, int, int]:
    """Whether ``proc`` is Linux's /proc, its clock ticks a second and page size: asked once,
    not at every read's moment."""
    if (proc / "self" / "stat").exists():
        return True, os.sysconf("SC_CLK_TCK"), os.sysconf("SC_PAGE_SIZE")
    return False, 100, 4096


class ProcessReads:
    """The process table at one moment, each process read at most once. Blocking (reads
    /proc): use it off the event loop."""

    def __init__(self, proc: Path = Path("/proc"), lifelong: LifelongFacts | None = None):
        self._proc = proc
        self.linux, self.ticks_per_second, self._page_size = _system(proc)
        self._lifelong = lifelong if lifelong is not None else LifelongFacts()
        self._stats: dict[int, ProcessStat | None] = {}
        self._boot_time: float | None = None

    @property
    def pids_read(self) -> int:
        """How many processes this moment looked at."""
        return len(self._stats)

    def stat(self, pid: int) -> ProcessStat | None:
        """None for a pid that is gone, a zombie (it uses nothing, its parent has not reaped
        it) or unreadable."""
        if pid not in self._stats:
            self._stats[pid] = self._read_stat(pid) if self.linux else self._psutil_stat(pid)
        return self._stats[pid]

    def children(self, pid: int) -> list[int] | None:
        """The processes ``pid``'s main thread started; None where the kernel has no
        ``children`` files (built without CONFIG_PROC_CHILDREN) or not on Linux."""
        if not self.linux:
            return None
        try:
            text = self._read(f"{self._proc}/{pid}/task/{pid}/children")
        except FileNotFoundError:
            # Gone since its stat was read: no children. Still there: no such files here.
            return None if (self._proc / str(pid)).exists() else []
        except OSError:
            return []
        return [int(child) for child in text.split()]

    def real_uid(self, pid: int) -> int | None:
        """The real user of a live process."""
        stat = self.stat(pid)
        if stat is None:
            return None
        return self._lifelong.get(("uid", pid, stat.started), lambda: self._read_uid(pid))

    def started_at(self, pid: int) -> float | None:
        """When a live process started, in seconds since the epoch."""
        stat = self.stat(pid)
        if stat is None:
            return None
        if self._boot_time is None:
            # /proc's start times count from boot; psutil's (elsewhere) from the epoch.
            self._boot_time = psutil.boot_time() if self.linux else 0.0
        return self._boot_time + stat.started / self.ticks_per_second

    def command(self, pid: int) -> str | None:
        """A live process's command line, its arguments joined by spaces."""
        stat = self.stat(pid)
        if stat is None:
            return None
        return self._lifelong.get(("command", pid, stat.started), lambda: self._read_command(pid))

    def _read(self, path: str) -> bytes:
        # os.open and os.read: half the cost of a Path's read_text, on every process each read.
        descriptor = os.open(path, os.O_RDONLY)
        try:
            return os.read(descriptor, 4096)
        finally:
            os.close(descriptor)

    def _read_stat(self, pid: int) -> ProcessStat | None:
        try:
            text = self._read(f"{self._proc}/{pid}/stat")
        except OSError:
            return None
        # The command name is in parentheses and may hold spaces and parentheses itself.
        fields = text[text.rfind(b")") + 2 :].split()
        if fields[:1] == [b"Z"]:
            return None
        try:
            return ProcessStat(
                parent=int(fields[1]),
                started=int(fields[19]),
                ticks=int(fields[11]) + int(fields[12]),  # utime, stime
                resident_bytes=int(fields[21]) * self._page_size,
            )
        except (IndexError, ValueError):
            return None

    def _read_uid(self, pid: int) -> int | None:
        try:
            if self.linux:
                for line in self._read(f"{self._proc}/{pid}/status").splitlines():
                    if line.startswith(b"Uid:"):
                        return int(line.split()[1])
                return None
            return psutil.Process(pid).uids().real
        except (OSError, psutil.Error, ValueError, IndexError):
            return None

    def _read_command(self, pid: int) -> str | None:
        try:
            if self.linux:
                arguments = self._read(f"{self._proc}/{pid}/cmdline").split(b"\0")
                line = b" ".join(argument for argument in arguments if argument).decode(
                    errors="replace"
                )
            else:
                line = " ".join(psutil.Process(pid).cmdline())
        except (OSError, psutil.Error):
            return None
        return line[:MAX_COMMAND_CHARS] or None

    def _psutil_stat(self, pid: int) -> ProcessStat | None:
        """What _read_stat reads from /proc, through psutil (not Linux)."""
        try:
            process = psutil.Process(pid)
            with process.oneshot():
                if process.status() == psutil.STATUS_ZOMBIE:
                    return None
                times = process.cpu_times()
                return ProcessStat(
                    parent=process.ppid(),
                    started=int(process.create_time() * self.ticks_per_second),
                    ticks=round((times.user + times.system) * self.ticks_per_second),
                    resident_bytes=process.memory_info().rss,
                )
        except (psutil.Error, ValueError):
            return None
