"""What each kernel uses of the machine: the CPU and resident memory of its process and of
every process it started (``!python train.py``, DataLoader workers), at each read.

On Linux each process of a kernel's tree costs two small reads, ``/proc/<pid>/stat`` (CPU ticks,
resident pages, start time) and ``/proc/<pid>/task/<pid>/children``, whatever else runs on the
machine: no scan of the whole process table. CPU use is the ticks a tree spent between two reads
over the time between them, in percent of one core (as ``top`` counts: a kernel busy on four
cores is at 400 %). Elsewhere, or where the kernel has no ``children`` files, psutil walks the
tree.

The ``children`` file lists what a process's main thread started, which is where a notebook
starts processes (its cells run there); a child started from another thread is counted once it
is a child of one of those.
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass
from pathlib import Path

import psutil

from .model import MIB

# How many processes one kernel's tree is walked for, at most: a fork bomb in a cell must not
# make each read walk it all.
MAX_TREE_PROCESSES = 512
# The most of a command line kept: enough for a script and its arguments, not a megabyte of
# them (a process's arguments may be as long as the system allows).
MAX_COMMAND_CHARS = 1000


@dataclass
class KernelUse:
    """One kernel's use of the machine at a read."""

    # CPU use since the read before, in percent of one core; None at the first read.
    cpu_percent: float | None
    # Resident memory of the kernel and its descendants, in MiB.
    memory_rss_mib: float
    # How many processes the tree has, the kernel's own included.
    processes: int


@dataclass
class ProcessUse:
    """One process's use of the machine at a read (its own, not its children's)."""

    # CPU use since the read before, in percent of one core; None at its first read.
    cpu_percent: float | None
    memory_rss_mib: float
    # The command line, its arguments joined by spaces; None when it cannot be read.
    command: str | None


@dataclass
class _Sample:
    started: int  # the process's start time, in clock ticks after boot (tells reused pids apart)
    ticks: int  # user and system CPU time, in clock ticks


class KernelUsageReader:
    """Reads every kernel's tree once per read; remembers each process's CPU ticks for the
    next read. Blocking (reads /proc): call it off the event loop."""

    def __init__(self, proc: Path = Path("/proc"), max_rate_seconds: float = math.inf):
        self._proc = proc
        # CPU over a longer time than this is none (see model.rate_window).
        self._max_rate_seconds = max_rate_seconds
        self._linux = (proc / "self" / "stat").exists()
        self._ticks_per_second = os.sysconf("SC_CLK_TCK") if self._linux else 100
        self._page_size = os.sysconf("SC_PAGE_SIZE") if self._linux else 4096
        self._previous: dict[int, _Sample] = {}
        self._previous_at: float | None = None
        # The same for single processes (read_processes), remembered apart: they are read
        # on reads with GPU processes only.
        self._previous_processes: dict[int, _Sample] = {}
        self._previous_processes_at: float | None = None
        # What the last read() found of each process of the kernels' trees: a GPU process is
        # most often one of them, and read_processes then needs no /proc read of its own.
        self._trees_read: dict[int, tuple[_Sample, int]] = {}
        # (pid, start) -> its command line: read once in a process's life, not at every read.
        self._commands: dict[tuple[int, int], str | None] = {}

    def read(self, kernel_pids: dict[str, int]) -> dict[str, KernelUse]:
        """Kernel id -> its use now, for the kernels given with their process ids."""
        now = time.monotonic()
        elapsed = self._elapsed(self._previous_at, now)
        samples: dict[int, _Sample] = {}
        uses = {}
        self._trees_read = {}
        for kernel_id, pid in kernel_pids.items():
            tree = self._tree(pid)
            self._trees_read.update(tree)
            spent = 0
            rss = 0
            for member, (sample, resident) in tree.items():
                samples[member] = sample
                rss += resident
                before = self._previous.get(member)
                if before is not None and before.started == sample.started:
                    spent += sample.ticks - before.ticks
                elif self._previous_at is not None:
                    spent += sample.ticks  # started since the last read: all of it is new
            cpu = None
            if elapsed and elapsed > 0:
                cpu = 100 * spent / self._ticks_per_second / elapsed
            uses[kernel_id] = KernelUse(
                cpu_percent=cpu, memory_rss_mib=rss / MIB, processes=len(tree)
            )
        self._previous = samples
        self._previous_at = now
        return uses

    def read_processes(self, pids: set[int]) -> dict[int, ProcessUse]:
        """Local pid -> its use now, for the pids that still exist. Call it after ``read``
        of the same moment: a process of a kernel's tree is not read again."""
        now = time.monotonic()
        previous_at, self._previous_processes_at = self._previous_processes_at, now
        elapsed = self._elapsed(previous_at, now)
        samples = {}
        commands = {}
        uses = {}
        for pid in pids:
            read = self._trees_read.get(pid) or self._stat_of(pid)
            if read is None:
                continue
            sample, resident = read
            samples[pid] = sample
            before = self._previous_processes.get(pid)
            cpu = None
            if elapsed and before is not None and before.started == sample.started:
                cpu = 100 * (sample.ticks - before.ticks) / self._ticks_per_second / elapsed
            key = (pid, sample.started)
            commands[key] = self._commands[key] if key in self._commands else self._command(pid)
            uses[pid] = ProcessUse(cpu, resident / MIB, commands[key])
        self._previous_processes = samples
        self._commands = commands
        return uses

    def _stat_of(self, pid: int) -> tuple[_Sample, int] | None:
        return self._stat(pid) if self._linux else self._psutil_stat(pid)

    def _elapsed(self, previous_at: float | None, now: float) -> float | None:
        if previous_at is None or now - previous_at > self._max_rate_seconds:
            return None
        return now - previous_at

    def _command(self, pid: int) -> str | None:
        try:
            if self._linux:
                arguments = self._read(f"{self._proc}/{pid}/cmdline").split(b"\0")
                line = b" ".join(argument for argument in arguments if argument).decode(
                    errors="replace"
                )
            else:
                line = " ".join(psutil.Process(pid).cmdline())
        except (OSError, psutil.Error):
            return None
        return line[:MAX_COMMAND_CHARS] or None

    def _tree(self, pid: int) -> dict[int, tuple[_Sample, int]]:
        """Each process of the tree under ``pid`` (itself included): its sample and resident
        bytes. Empty when ``pid`` is gone."""
        if not self._linux:
            return self._tree_by_psutil(pid)
        found: dict[int, tuple[_Sample, int]] = {}
        waiting = [pid]
        while waiting and len(found) < MAX_TREE_PROCESSES:
            current = waiting.pop()
            if current in found:
                continue
            stat = self._stat(current)
            if stat is None:
                continue
            found[current] = stat
            children = self._children(current)
            if children is None:
                # No children files (a kernel built without CONFIG_PROC_CHILDREN).
                return self._tree_by_psutil(pid)
            waiting.extend(children)
        return found

    def _read(self, path: str) -> bytes:
        # os.open and os.read: half the cost of a Path's read_text, on every process each read.
        descriptor = os.open(path, os.O_RDONLY)
        try:
            return os.read(descriptor, 4096)
        finally:
            os.close(descriptor)

    def _stat(self, pid: int) -> tuple[_Sample, int] | None:
        try:
            text = self._read(f"{self._proc}/{pid}/stat")
        except OSError:
            return None
        # The command name is in parentheses and may hold spaces and parentheses itself.
        fields = text[text.rfind(b")") + 2 :].split()
        if fields[:1] == [b"Z"]:
            return None  # a zombie: it has exited and uses nothing, its parent has not reaped it
        try:
            ticks = int(fields[11]) + int(fields[12])  # utime, stime
            return _Sample(started=int(fields[19]), ticks=ticks), int(fields[21]) * self._page_size
        except (IndexError, ValueError):
            return None

    def _children(self, pid: int) -> list[int] | None:
        try:
            text = self._read(f"{self._proc}/{pid}/task/{pid}/children")
        except FileNotFoundError:
            # Gone since its stat was read: no children. Still there: no such files here.
            return None if (self._proc / str(pid)).exists() else []
        except OSError:
            return []
        return [int(child) for child in text.split()]

    def _tree_by_psutil(self, pid: int) -> dict[int, tuple[_Sample, int]]:
        found: dict[int, tuple[_Sample, int]] = {}
        try:
            root = psutil.Process(pid)
            members = [root, *root.children(recursive=True)[: MAX_TREE_PROCESSES - 1]]
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess, ValueError):
            return found
        for process in members:
            read = self._psutil_sample(process)
            if read is not None:
                found[process.pid] = read
        return found

    def _psutil_stat(self, pid: int) -> tuple[_Sample, int] | None:
        try:
            return self._psutil_sample(psutil.Process(pid))
        except (psutil.Error, ValueError):
            return None

    def _psutil_sample(self, process: psutil.Process) -> tuple[_Sample, int] | None:
        """What _stat reads from /proc, through psutil (not Linux, or no children files)."""
        try:
            if process.status() == psutil.STATUS_ZOMBIE:
                return None
            with process.oneshot():
                times = process.cpu_times()
                sample = _Sample(
                    started=int(process.create_time() * self._ticks_per_second),
                    ticks=round((times.user + times.system) * self._ticks_per_second),
                )
                return sample, process.memory_info().rss
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            return None
