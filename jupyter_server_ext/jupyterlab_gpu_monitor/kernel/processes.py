"""Who runs each GPU process, and in which kernel's tree: the driver's pids joined to this
server's kernels.

The driver reports pids. A pid belongs to one of this server's kernels when it is the kernel's
own process (its provisioner's pid) or descends from it (``!python train.py`` in a cell,
DataLoader workers). The process tree is read once per sample, lazily: only the GPU processes
and their ancestors are looked at, each at most once; a GPU process the driver reported at the
read before keeps its join, checked again in turns (``JoinedRows``).

The driver's pids are those of the initial PID namespace. In a container they may not exist
here, or belong to another process: there a pid is only trusted when ``NSpid`` in
``/proc/<pid>/status`` says which host pid a local process has, and otherwise reported as not
visible, never guessed.
"""

from __future__ import annotations

import logging
import os
import pwd
import time
from collections.abc import Collection, Iterable
from dataclasses import dataclass

import psutil

from ..gpu.model import GpuProcess, Snapshot
from ..machine.process_reads import ProcessReads, in_turns
from .listing import RunningKernel

log = logging.getLogger(__name__)

# The inode of the initial PID namespace (PROC_PID_INIT_INO in the Linux sources).
INITIAL_PID_NAMESPACE = "pid:[4026531836]"


@dataclass
class _Owner:
    uid: int
    user: str | None
    started: float


class ProcessTree:
    """One read's view of who runs what: parents and owners read from the moment's process
    table (``reads``), each process at most once, only for the GPU processes and their
    ancestors."""

    def __init__(self, reads: ProcessReads | None = None, own_uid: int | None = None):
        self.own_uid = os.getuid() if own_uid is None else own_uid
        self.reads = reads or ProcessReads()
        self._initial_namespace = in_initial_pid_namespace()
        self._users: dict[int, str] = {}
        self._host_to_local: dict[int, int] | None = None

    @property
    def pids_read(self) -> int:
        """How many processes this read looked at."""
        return self.reads.pids_read

    def parent(self, pid: int) -> int | None:
        """The parent of a local pid; None when the pid does not exist (or cannot be read)."""
        stat = self.reads.stat(pid)
        return stat.parent if stat is not None else None

    def owner(self, pid: int) -> _Owner | None:
        """Who runs a local pid and since when; None when it does not exist."""
        uid = self.reads.real_uid(pid)
        started = self.reads.started_at(pid)
        if uid is None or started is None:
            return None
        return _Owner(uid=uid, user=self._user(uid), started=started)

    def _user(self, uid: int) -> str:
        if uid not in self._users:
            try:
                self._users[uid] = pwd.getpwuid(uid).pw_name
            except KeyError:
                self._users[uid] = str(uid)  # a uid without a passwd entry (common in containers)
        return self._users[uid]

    def local_pid(self, driver_pid: int) -> int | None:
        """The local pid of a pid the driver reported, or None when it is not visible here."""
        if self._initial_namespace:
            return driver_pid if self.reads.stat(driver_pid) is not None else None
        if self._host_to_local is None:
            self._host_to_local = _host_pids_seen_here()
        return self._host_to_local.get(driver_pid)

    def kernel_pid_of(self, pid: int, kernel_pids: Collection[int]) -> int | None:
        """The kernel process among ``kernel_pids`` that is ``pid`` or one of its ancestors."""
        seen = set()
        while pid is not None and pid > 1 and pid not in seen:
            if pid in kernel_pids:
                return pid
            seen.add(pid)
            pid = self.parent(pid)
        return None


def in_initial_pid_namespace() -> bool:
    """Whether this process sees the pids the driver reports (no container PID namespace)."""
    try:
        return os.readlink("/proc/self/ns/pid") == INITIAL_PID_NAMESPACE
    except OSError:
        return True  # no /proc namespace links (not Linux): pids are the system's own


def _host_pids_seen_here() -> dict[int, int]:
    """Outermost pid -> local pid, for the processes whose NSpid shows more than one level."""
    translated = {}
    for process in psutil.process_iter(["pid"]):
        try:
            with open(f"/proc/{process.pid}/status") as status:
                for line in status:
                    if line.startswith("NSpid:"):
                        levels = [int(value) for value in line.split()[1:]]
                        if len(levels) > 1:
                            translated[levels[0]] = levels[-1]
                        break
        except OSError:
            continue
    return translated


def join(
    snapshot: Snapshot,
    kernels: Iterable[RunningKernel],
    tree: ProcessTree | None = None,
    rows: JoinedRows | None = None,
) -> list[tuple[GpuProcess, int]]:
    """Give each GPU process of the snapshot its user, start, kernel and notebook, in place;
    those ``rows`` joined at an earlier read as then, in turns joined again. A row that cannot
    be read is left unjoined on its own, with a warning. Returns the processes of this
    server's user, each with its local pid.

    Blocking (reads /proc): call it off the event loop.
    """
    tree = tree or ProcessTree()
    rows = rows or JoinedRows()
    by_pid = {kernel.pid: kernel for kernel in kernels if kernel.pid is not None}
    joined = rows.join(
        {process.pid for gpu in snapshot.gpus for process in gpu.processes}, tree, by_pid
    )
    own = []
    for gpu in snapshot.gpus:
        for process in gpu.processes:
            found = joined.get(process.pid)
            if found is None:
                continue  # could not be read (warned)
            process.visible = found.owner is not None
            if found.owner is None:
                continue
            process.user = found.owner.user
            process.started = found.owner.started
            process.own = found.owner.uid == tree.own_uid
            kernel = by_pid.get(found.kernel_pid)
            if kernel is not None:
                process.kernel_id = kernel.kernel_id
                process.session_path = kernel.session_path
            if process.own:
                own.append((process, found.local))
    return own


@dataclass(frozen=True)
class _Joined:
    """A GPU process as joined at a read."""

    local: int | None  # its local pid; None when it is not visible here
    owner: _Owner | None
    kernel_pid: int | None  # the kernel process whose tree it is in, if any
    at: float  # time.monotonic() of the join


class JoinedRows:
    """The GPU processes joined at the last read, by the driver's pid. A process the driver
    reports again is as it was joined (who runs it and which kernel started it do not change in
    its life), and is joined again in turns within the read's budget (``READ_BUDGET``): the
    pid may have gone to another process. A process first reported is joined at once."""

    def __init__(self) -> None:
        self._joined: dict[int, _Joined] = {}

    def join(
        self, pids: set[int], tree: ProcessTree, kernels: Collection[int]
    ) -> dict[int, _Joined]:
        """Driver pid -> its join now (``kernels``: the kernels' local pids), for the pids
        that could be read."""
        now = time.monotonic()
        before = self._joined
        joined = {}
        known = {pid for pid in pids if pid in before}
        for pid in pids - known:
            joined[pid] = self._join(pid, tree, kernels, now)
        # Those the moment has read (in a kernel's tree) are checked at no cost.
        waiting = {pid: before[pid].at for pid in known if not self._read_now(before[pid], tree)}
        turn = known - waiting.keys() | set(in_turns(waiting, tree.reads.spare()))
        for pid in known:
            found = before[pid]
            if pid in turn and not self._same_process(found, tree):
                found = self._join(pid, tree, kernels, now)
            elif pid in turn:
                found = _Joined(found.local, found.owner, found.kernel_pid, now)
            joined[pid] = found
        self._joined = {pid: found for pid, found in joined.items() if found is not None}
        return self._joined

    @staticmethod
    def _read_now(found: _Joined, tree: ProcessTree) -> bool:
        return found.local is not None and tree.reads.read_now(found.local)

    @staticmethod
    def _same_process(found: _Joined, tree: ProcessTree) -> bool:
        """Whether the process joined earlier is still the one with its pid: one read of its
        stat (a pid that went to another process has another start)."""
        if found.local is None or found.owner is None:
            return False
        return tree.reads.started_at(found.local) == found.owner.started

    @staticmethod
    def _join(pid: int, tree: ProcessTree, kernels: Collection[int], now: float) -> _Joined | None:
        try:
            local = tree.local_pid(pid) if pid > 0 else None
            owner = tree.owner(local) if local is not None else None
            if local is None or owner is None:
                return _Joined(None, None, None, now)
            return _Joined(local, owner, tree.kernel_pid_of(local, kernels), now)
        # One odd row (a driver's pid psutil refuses, a process gone mid-read) must not leave
        # the others unjoined: the join is what proves whose a process is.
        except Exception as error:
            log.warning("GPU process %r left unjoined: %s", pid, error)
            return None
