"""What each kernel uses of the machine: the CPU and resident memory of its process and of
every process it started (``!python train.py``, DataLoader workers), at each read.

On Linux each process of a kernel's tree costs two small reads, ``/proc/<pid>/stat`` (CPU ticks,
resident pages, start time) and ``/proc/<pid>/task/<pid>/children``, whatever else runs on the
machine: no scan of the whole process table; the join of the GPU processes and the user's own
GPU processes reuse these reads (``process_reads``). CPU use is the ticks a tree spent between
two reads over the time between them, in percent of one core (as ``top`` counts: a kernel busy
on four cores is at 400 %). Elsewhere, or where the kernel has no ``children`` files, psutil
walks the tree.

An idle kernel's tree is walked every ``SETTLED_SECONDS``, not at every read: its processes
start and end when it runs a cell, and its figures between two walks are the last walk's (its
CPU over the time between the two walks before). A kernel turning busy is walked at the next
read. Past the moment's budget (``process_reads.READ_BUDGET``), the trees due are walked in
turns, the longest unwalked first, and keep their last walk's figures meanwhile; a kernel new
to the reads is walked at once.

The ``children`` file lists what a process's main thread started, which is where a notebook
starts processes (its cells run there); a child started from another thread is counted once it
is a child of one of those.
"""

from __future__ import annotations

import math
import time
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

import psutil

from ..machine.model import MIB, rate_seconds
from ..machine.process_reads import (
    KeptFiles,
    LifelongFacts,
    ProcessReads,
    ProcessStat,
    in_turns,
)

# How many processes one kernel's tree is walked for, at most: a fork bomb in a cell must not
# make each read walk it all.
MAX_TREE_PROCESSES = 512
# How often an idle kernel's tree is walked: 150 idle notebooks on a shared server would
# otherwise cost more at each read than the GPUs' own reading.
SETTLED_SECONDS = 10.0


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
class _Walk:
    """A kernel's tree as last walked."""

    pid: int
    at: float  # time.monotonic() of the walk
    members: dict[int, ProcessStat]
    use: KernelUse


@dataclass
class _Measured:
    """A process as last read (``read_processes``)."""

    stat: ProcessStat
    at: float  # time.monotonic() of the read
    use: ProcessUse


class KernelUsageReader:
    """Reads every kernel's tree once per read; remembers each process's CPU ticks for the
    next read. Blocking (reads /proc): call it off the event loop."""

    def __init__(self, proc: Path = Path("/proc"), max_rate_seconds: float = math.inf):
        self._proc = proc
        # CPU over a longer time than this is none (see model.rate_window).
        self._max_rate_seconds = max_rate_seconds
        self._lifelong = LifelongFacts()
        self._kept = KeptFiles()
        self._walks: dict[str, _Walk] = {}
        self._previous_at: float | None = None
        # The same for single processes (read_processes), remembered apart: they are read
        # on reads with GPU processes only.
        self._processes: dict[int, _Measured] = {}
        self._previous_processes_at: float | None = None

    def moment(self) -> ProcessReads:
        """A new moment's view of the process table, for ``read``, ``read_processes`` and the
        join of the same read to share; what processes keep for life carried over."""
        self._lifelong.next_moment()
        self._kept.next_moment()
        return ProcessReads(self._proc, self._lifelong, self._kept)

    def read(
        self,
        kernel_pids: dict[str, int],
        reads: ProcessReads | None = None,
        settled: Collection[str] = (),
    ) -> dict[str, KernelUse]:
        """Kernel id -> its use now, for the kernels given with their process ids; those
        ``settled`` (idle) as last walked while that is recent."""
        reads = reads or self.moment()
        now = time.monotonic()
        # After a pause of the reads, nothing walked before it stands.
        paused = rate_seconds(self._previous_at, now, self._max_rate_seconds) is None
        walks = {}
        waiting: dict[str, float] = {}
        for kernel_id, pid in kernel_pids.items():
            before = self._walks.get(kernel_id)
            if before is not None and (paused or before.pid != pid):
                before = None  # from before the pause, or restarted: another process
            # New to the reads, or walked once with no CPU yet: walked now, whatever it costs.
            if before is None or before.use.cpu_percent is None:
                walks[kernel_id] = self._walk(pid, reads, now, before)
                continue
            walks[kernel_id] = before
            if kernel_id not in settled or now - before.at >= SETTLED_SECONDS:
                waiting[kernel_id] = before.at
        # The others in turns, within the moment's budget of processes (see READ_BUDGET).
        for kernel_id in in_turns(waiting, reads.spare(), lambda k: len(walks[k].members)):
            walks[kernel_id] = self._walk(kernel_pids[kernel_id], reads, now, walks[kernel_id])
        self._walks = walks
        self._previous_at = now
        return {kernel_id: walk.use for kernel_id, walk in walks.items()}

    def _walk(self, pid: int, reads: ProcessReads, now: float, before: _Walk | None) -> _Walk:
        """Walk a kernel's tree; its CPU since the walk ``before`` (none without one)."""
        tree = self._tree(pid, reads)
        spent = 0
        rss = 0
        for member, stat in tree.items():
            rss += stat.resident_bytes
            if before is None:
                continue
            earlier = before.members.get(member)
            if earlier is not None and earlier.started == stat.started:
                spent += stat.ticks - earlier.ticks
            else:
                spent += stat.ticks  # started since the last walk: all of it is new
        cpu = None
        if before is not None and now > before.at:
            cpu = 100 * spent / reads.ticks_per_second / (now - before.at)
        use = KernelUse(cpu_percent=cpu, memory_rss_mib=rss / MIB, processes=len(tree))
        return _Walk(pid, now, tree, use)

    def read_processes(
        self, pids: set[int], reads: ProcessReads | None = None
    ) -> dict[int, ProcessUse]:
        """Local pid -> its use now, for the pids that still exist; those read before and not
        this moment, in turns within its budget (see READ_BUDGET), the others as last read."""
        reads = reads or self.moment()
        now = time.monotonic()
        paused = rate_seconds(self._previous_processes_at, now, self._max_rate_seconds) is None
        self._previous_processes_at = now
        known = {} if paused else self._processes
        waiting = {pid: known[pid].at for pid in pids if pid in known and not reads.read_now(pid)}
        turn = set(in_turns(waiting, reads.spare()))
        measured = {}
        for pid in pids:
            if pid in waiting and pid not in turn:
                measured[pid] = known[pid]
                continue
            stat = reads.stat(pid)
            if stat is None:
                continue
            before = known.get(pid)
            if before is not None and before.stat.started != stat.started:
                before = None  # the pid went to another process
            cpu = None
            if before is not None and now > before.at:
                cpu = 100 * (stat.ticks - before.stat.ticks) / reads.ticks_per_second
                cpu /= now - before.at
            command = before.use.command if before is not None else reads.command(pid)
            use = ProcessUse(cpu, stat.resident_bytes / MIB, command)
            measured[pid] = _Measured(stat, now, use)
        self._processes = measured
        return {pid: entry.use for pid, entry in measured.items()}

    def _tree(self, pid: int, reads: ProcessReads) -> dict[int, ProcessStat]:
        """Each live process of the tree under ``pid`` (itself included). Empty when ``pid``
        is gone."""
        found: dict[int, ProcessStat] = {}
        waiting = [pid]
        while waiting and len(found) < MAX_TREE_PROCESSES:
            current = waiting.pop()
            if current in found:
                continue
            stat = reads.stat(current)
            if stat is None:
                continue
            found[current] = stat
            children = reads.children(current)
            if children is None:
                return self._tree_by_psutil(pid, reads)
            waiting.extend(children)
        return found

    def _tree_by_psutil(self, pid: int, reads: ProcessReads) -> dict[int, ProcessStat]:
        """The same through psutil's scan of the process table: not Linux, or no children
        files."""
        try:
            descendants = psutil.Process(pid).children(recursive=True)
        except (psutil.Error, ValueError):
            return {}
        members = [pid, *(child.pid for child in descendants[: MAX_TREE_PROCESSES - 1])]
        stats = {member: reads.stat(member) for member in members}
        return {member: stat for member, stat in stats.items() if stat is not None}
