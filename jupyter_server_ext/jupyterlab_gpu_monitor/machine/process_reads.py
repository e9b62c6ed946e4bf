"""One moment's view of the process table, read once whoever asks.

A read of the GPUs looks at processes three ways: each kernel's tree (its CPU and memory), the
join of the GPU processes to the kernels (parents, owners, start times) and the user's own GPU
processes (their CPU, memory and command line). Most of these are the same processes: here
each one's ``/proc/<pid>/stat`` is read at most once a moment, and what a process keeps for its
life (its real user, its command line) once in its life. On Linux the files are read with
``os.read``, a fraction of psutil's cost per field, and the two read at every moment (``stat``
and ``children``) are kept open while their process is read (``KeptFiles``); elsewhere psutil
reads the same facts. Those who read processes known from an earlier moment take turns within
``READ_BUDGET`` (``in_turns``).
"""

from __future__ import annotations

import functools
import os
import weakref
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

import psutil

# How many processes a moment reads past those new to the reads. On a shared server with hundreds
# of kernels and GPU processes, what was read before is read again in turns, the longest unread
# first, and keeps its last figures meanwhile: a read's cost stops growing with the server (with
# 200 kernels, 50 of them training, each tree and GPU process is read every few seconds). A
# server of a few dozen kernels has every process read at every read.
READ_BUDGET = 64

Key = TypeVar("Key")

# The most of a command line kept: enough for a script and its arguments, not a megabyte of
# them (a process's arguments may be as long as the system allows).
MAX_COMMAND_CHARS = 1000


# How many /proc files KeptFiles keeps open at most, and the share of this process's limit on
# open files it may take: the rest is the server's (each kernel alone holds five sockets).
MAX_KEPT_FILES = 2048
KEPT_FILES_SHARE = 4
# How many moments a process's files stay open without being read: longer than a tree waits
# for its turn (see READ_BUDGET) or an idle kernel for its walk (usage.SETTLED_SECONDS).
KEPT_FILES_MOMENTS = 60


class ProcessStat(NamedTuple):
    """A live process's ``/proc/<pid>/stat``, the fields read here (a tuple: made for every
    process at every read, at a third of a frozen dataclass's cost)."""

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


class KeptFiles:
    """The ``/proc/<pid>/...`` files read at every moment, kept open from one to the next: a
    kept file is read again with one ``pread``, where opening it costs an open, a read and a
    close (together three times as long, and a third of a read with 200 kernels).

    An open /proc file stays bound to its process: once that process is gone its stat answers
    ESRCH and its children nothing, even when the pid has gone to another process since. So a
    failed read closes the pid's files, and its path is opened anew: a new process with the
    pid is read as new. A pid not read for ``KEPT_FILES_MOMENTS`` has its files closed; past
    the limit, files are opened and closed at each read as before."""

    def __init__(self, limit: int | None = None):
        self._limit = _kept_files_limit() if limit is None else limit
        self._files: dict[int, dict[str, int]] = {}  # pid -> file name -> descriptor
        self._used: dict[int, int] = {}  # pid -> the moment it was last read at
        self._count = 0
        self._moment = 0
        # Closed with their holder (a server's join lives as long as the server).
        weakref.finalize(self, _close_all, self._files)

    def read(self, path: str, pid: int, name: str) -> bytes:
        """``path``, the file ``name`` of process ``pid``; raises OSError as ``os.open`` and
        ``os.read`` do."""
        files = self._files.get(pid)
        descriptor = files.get(name) if files is not None else None
        if descriptor is not None:
            try:
                text = os.pread(descriptor, 4096, 0)
            except OSError:
                self.forget(pid)  # its process is gone: the path may name another now
            else:
                self._used[pid] = self._moment
                return text
        descriptor = os.open(path, os.O_RDONLY)
        try:
            text = os.read(descriptor, 4096)
        except BaseException:
            os.close(descriptor)
            raise
        if self._count < self._limit:
            self._files.setdefault(pid, {})[name] = descriptor
            self._used[pid] = self._moment
            self._count += 1
        else:
            os.close(descriptor)
        return text

    def forget(self, pid: int) -> None:
        """Close the files of ``pid``'s process."""
        for descriptor in self._files.pop(pid, {}).values():
            os.close(descriptor)
            self._count -= 1
        self._used.pop(pid, None)

    def next_moment(self) -> None:
        """A new moment; now and then, close the files of processes no longer read."""
        self._moment += 1
        if self._moment % 16 == 0:
            stale = [
                pid
                for pid, moment in self._used.items()
                if self._moment - moment > KEPT_FILES_MOMENTS
            ]
            for pid in stale:
                self.forget(pid)


def _close_all(files: dict[int, dict[str, int]]) -> None:
    for named in files.values():
        for descriptor in named.values():
            os.close(descriptor)
    files.clear()


def _kept_files_limit() -> int:
    try:
        import resource  # POSIX only: elsewhere no file is kept (psutil reads there)
    except ImportError:
        return 0
    try:
        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    except (OSError, ValueError):
        return 0
    if soft == resource.RLIM_INFINITY:
        return MAX_KEPT_FILES
    return min(MAX_KEPT_FILES, soft // KEPT_FILES_SHARE)


def in_turns(
    waiting: Mapping[Key, float], spare: int, cost: Callable[[Key], int] = lambda _: 1
) -> list[Key]:
    """Of the keys ``waiting`` (each since the time it maps to), those whose turn it is: the
    longest waiting first, while their ``cost`` fits in ``spare``, and the first always, so
    that each has its turn however many new ones take the budget."""
    chosen: list[Key] = []
    for key in sorted(waiting, key=waiting.__getitem__):
        spare -= cost(key)
        if chosen and spare < 0:
            break
        chosen.append(key)
    return chosen


@functools.lru_cache(maxsize=4)
def _system(proc: Path) -> tuple[bool, int, int, float]:
    """Whether ``proc`` is Linux's /proc, its clock ticks a second, page size and boot time:
    asked once, not at every read's moment. /proc's start times count from boot; psutil's
    (elsewhere) from the epoch."""
    if (proc / "self" / "stat").exists():
        ticks, page = os.sysconf("SC_CLK_TCK"), os.sysconf("SC_PAGE_SIZE")
        return True, ticks, page, psutil.boot_time()
    return False, 100, 4096, 0.0


class ProcessReads:
    """The process table at one moment, each process read at most once. Blocking (reads
    /proc): use it off the event loop."""

    def __init__(
        self,
        proc: Path = Path("/proc"),
        lifelong: LifelongFacts | None = None,
        kept: KeptFiles | None = None,
    ):
        self._proc = proc
        self._prefix = str(proc)
        self.linux, self.ticks_per_second, self._page_size, self._boot_time = _system(proc)
        self._lifelong = lifelong if lifelong is not None else LifelongFacts()
        # The stat and children files kept open from an earlier moment; none: opened each time.
        self._kept = kept if kept is not None else KeptFiles(limit=0)
        self._stats: dict[int, ProcessStat | None] = {}

    @property
    def pids_read(self) -> int:
        """How many processes this moment looked at."""
        return len(self._stats)

    def spare(self) -> int:
        """How many more processes this moment may read for what waits its turn."""
        return max(0, READ_BUDGET - len(self._stats))

    def read_now(self, pid: int) -> bool:
        """Whether this moment has read ``pid`` already (reading it again costs nothing)."""
        return pid in self._stats

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
            text = self._kept.read(f"{self._prefix}/{pid}/task/{pid}/children", pid, "children")
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
            text = self._kept.read(f"{self._prefix}/{pid}/stat", pid, "stat")
        except OSError:
            return None
        # The command name is in parentheses and may hold spaces and parentheses itself.
        fields = text[text.rfind(b")") + 2 :].split()
        if fields[:1] == [b"Z"]:
            self._kept.forget(pid)  # it has ended: its files will tell nothing more
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
                for line in self._read(f"{self._prefix}/{pid}/status").splitlines():
                    if line.startswith(b"Uid:"):
                        return int(line.split()[1])
                return None
            return psutil.Process(pid).uids().real
        except (OSError, psutil.Error, ValueError, IndexError):
            return None

    def _read_command(self, pid: int) -> str | None:
        try:
            if self.linux:
                arguments = self._read(f"{self._prefix}/{pid}/cmdline").split(b"\0")
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
