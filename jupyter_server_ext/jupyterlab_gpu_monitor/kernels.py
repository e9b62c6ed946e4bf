"""Who holds the GPU: GPU processes joined to this server's kernels and their notebooks.

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
import math
import os
import pwd
import time
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from typing import Any

import psutil

from . import blocking
from .gpu.model import GpuProcess, Snapshot
from .machine.kernel_usage import KernelUsageReader, KernelUse
from .machine.process_reads import ProcessReads, in_turns

log = logging.getLogger(__name__)

# The inode of the initial PID namespace (PROC_PID_INIT_INO in the Linux sources).
INITIAL_PID_NAMESPACE = "pid:[4026531836]"


@dataclass(frozen=True)
class RunningKernel:
    """One of this server's kernels, and the notebook or console it serves."""

    kernel_id: str
    name: str
    # The kernel's local process; None for a remote kernel (gateway), which has none here.
    pid: int | None
    execution_state: str | None = None
    session_path: str | None = None
    session_type: str | None = None


@dataclass
class KernelGpuUsage:
    """GPU memory one kernel (its process and descendants) holds on one GPU."""

    kernel_id: str
    path: str | None
    gpu_index: int
    gpu_uuid: str | None
    gpu_name: str | None
    memory_used_mib: float
    utilization_gpu: float | None


@dataclass
class KernelMachine:
    """One kernel's CPU and memory, with its notebook or console."""

    kernel_id: str
    path: str | None
    use: KernelUse


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


class SessionsOfKernels:
    """Kernel id -> its session (notebook or console). Listing the sessions costs a kernel
    model per session (5 ms a read with 200 notebooks open), so the list is kept while neither
    the kernels nor jupyter_server's session table change (sqlite counts the rows its
    connection changed); a session manager without that table is listed at every read."""

    def __init__(self, session_manager: Any):
        self._manager = session_manager
        self._listed: dict[str, dict] = {}
        self._listed_for: tuple | None = None

    async def by_kernel(self, kernel_ids: list[str]) -> dict[str, dict]:
        if self._manager is None:
            return {}
        version = self._table_version()
        key = (tuple(kernel_ids), version)
        if version is None or key != self._listed_for:
            try:
                listed = await self._manager.list_sessions()
            except Exception as error:  # its database (a file, or a custom manager's store)
                log.warning("kernels listed without their notebooks: %s", error)
                return {}
            self._listed = {(session.get("kernel") or {}).get("id"): session for session in listed}
            # Read after the listing: it deletes the rows of kernels that died.
            self._listed_for = (key[0], self._table_version())
        return self._listed

    def _table_version(self) -> int | None:
        connection = getattr(self._manager, "connection", None)
        changes = getattr(connection, "total_changes", None)
        return changes if isinstance(changes, int) else None


class KernelListing:
    """This server's kernels with their process and session (notebook or console path), read
    at every read of the GPUs: each kernel's manager is looked up once, and a kernel whose
    process, state and session are as at the read before is the same object, not a new one."""

    def __init__(self, kernel_manager: Any, session_manager: Any):
        self._kernel_manager = kernel_manager
        self._sessions = SessionsOfKernels(session_manager)
        self._listed: dict[str, tuple[Any, RunningKernel]] = {}

    async def kernels(self) -> list[RunningKernel]:
        """The kernels now; without their sessions, with a warning, when the session manager
        fails."""
        kernel_ids = list(self._kernel_manager.list_kernel_ids())
        by_kernel = await self._sessions.by_kernel(kernel_ids)
        listed = {}
        for kernel_id in kernel_ids:
            manager, before = self._listed.get(kernel_id, (None, None))
            if manager is None:
                try:
                    manager = self._kernel_manager.get_kernel(kernel_id)
                except KeyError:
                    continue  # shut down since it was listed
            session = by_kernel.get(kernel_id, {})
            now = (
                getattr(getattr(manager, "provisioner", None), "pid", None),
                getattr(manager, "execution_state", None),
                session.get("path"),
                session.get("type"),
            )
            if before is None or now != (
                before.pid,
                before.execution_state,
                before.session_path,
                before.session_type,
            ):
                before = RunningKernel(kernel_id, getattr(manager, "kernel_name", ""), *now)
            listed[kernel_id] = (manager, before)
        self._listed = listed
        return [kernel for _, kernel in listed.values()]


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


def measure_own_processes(
    own: list[tuple[GpuProcess, int]], reader: KernelUsageReader, reads: ProcessReads
) -> None:
    """Give the user's own GPU processes (``join``'s answer) their command line, CPU and host
    memory. Blocking (reads /proc): call it off the event loop."""
    uses = reader.read_processes({pid for _, pid in own}, reads)
    for process, pid in own:
        use = uses.get(pid)
        if use is not None:
            process.command = use.command
            process.cpu_percent = use.cpu_percent
            process.host_memory_mib = use.memory_rss_mib


def join_and_measure(
    snapshot: Snapshot,
    kernels: list[RunningKernel],
    kernel_pids: dict[str, int],
    reader: KernelUsageReader,
    rows: JoinedRows,
) -> dict[str, KernelUse]:
    """Join the snapshot's processes to the kernels, give the user's own their use of the
    machine, and return each kernel's (``kernel_pids``: kernel id -> its local pid; an idle
    kernel's as last walked, see ``kernel_usage``). Blocking (reads /proc): call it off the
    event loop."""
    # One moment's process table for all three: a GPU process is most often in a kernel's
    # tree, and so are its ancestors, so the join and the measure read again nothing the walk
    # read; they check and measure the GPU processes of the trees walked at no cost.
    reads = reader.moment()
    idle = {kernel.kernel_id for kernel in kernels if kernel.execution_state == "idle"}
    uses = reader.read(kernel_pids, reads, settled=idle)
    measure_own_processes(join(snapshot, kernels, ProcessTree(reads), rows), reader, reads)
    return uses


def withhold_commands(snapshot: Snapshot) -> dict[int, str]:
    """Take every process's command line out of the snapshot: id(process) -> command line."""
    withheld = {}
    for gpu in snapshot.gpus:
        for process in gpu.processes:
            if process.name is not None:
                withheld[id(process)] = process.name
                process.name = None
    return withheld


def release_commands(snapshot: Snapshot, withheld: dict[int, str], everyone: bool) -> None:
    """Give back the command lines of the processes the join proved are this server's user's
    own, or of every process when ``everyone`` (``show_other_users_commands``)."""
    for gpu in snapshot.gpus:
        for process in gpu.processes:
            if everyone or process.own is True:
                process.name = withheld.get(id(process))


def kernel_usage(snapshot: Snapshot, kernels: Iterable[RunningKernel]) -> list[KernelGpuUsage]:
    """Per kernel and GPU, the memory its processes hold (a joined snapshot)."""
    paths = {kernel.kernel_id: kernel.session_path for kernel in kernels}
    usage: dict[tuple[str, int], KernelGpuUsage] = {}
    for gpu in snapshot.gpus:
        for process in gpu.processes:
            if process.kernel_id not in paths:
                continue
            key = (process.kernel_id, gpu.index)
            entry = usage.get(key)
            if entry is None:
                entry = usage[key] = KernelGpuUsage(
                    kernel_id=process.kernel_id,
                    path=paths[process.kernel_id],
                    gpu_index=gpu.index,
                    gpu_uuid=gpu.uuid,
                    gpu_name=gpu.name,
                    memory_used_mib=0,
                    utilization_gpu=gpu.utilization_gpu,
                )
            entry.memory_used_mib += process.used_memory_mib or 0
    return list(usage.values())


def kernels_summary(
    snapshot: Snapshot | None,
    kernels: list[RunningKernel],
    machine_use: dict[str, KernelUse] | None = None,
) -> list[dict]:
    """``GET kernels``: every kernel of this server with the GPU memory it holds, most first,
    and what it uses of the machine at the last read."""
    usage = kernel_usage(snapshot, kernels) if snapshot is not None else []
    summary = []
    for kernel in kernels:
        use = (machine_use or {}).get(kernel.kernel_id)
        gpus = [
            {
                "index": entry.gpu_index,
                "uuid": entry.gpu_uuid,
                "name": entry.gpu_name,
                "memory_used_mib": entry.memory_used_mib,
                "utilization_gpu": entry.utilization_gpu,
            }
            for entry in usage
            if entry.kernel_id == kernel.kernel_id
        ]
        summary.append(
            {
                "kernel_id": kernel.kernel_id,
                "name": kernel.name,
                "pid": kernel.pid,
                "remote": kernel.pid is None,
                "execution_state": kernel.execution_state,
                "session_path": kernel.session_path,
                "session_type": kernel.session_type,
                "memory_used_mib": sum(gpu["memory_used_mib"] for gpu in gpus),
                "gpus": gpus,
                "cpu_percent": use.cpu_percent if use is not None else None,
                "memory_rss_mib": use.memory_rss_mib if use is not None else None,
                "processes": use.processes if use is not None else None,
            }
        )
    return sorted(summary, key=lambda entry: -entry["memory_used_mib"])


class KernelJoin:
    """Joins every fresh snapshot with the running kernels, and keeps what each kernel holds
    on each GPU at the latest read (``usage``) and what it uses of the machine
    (``machine_use``)."""

    def __init__(
        self,
        kernel_manager: Any,
        session_manager: Any,
        show_other_users_commands: bool,
        max_rate_seconds: float = math.inf,
    ):
        self._listing = KernelListing(kernel_manager, session_manager)
        self._show_other_users_commands = show_other_users_commands
        self._machine = KernelUsageReader(max_rate_seconds=max_rate_seconds)
        self._rows = JoinedRows()
        self.usage: list[KernelGpuUsage] = []
        self.machine_use: dict[str, KernelUse] = {}
        # Kernel id -> its notebook or console, at the latest read.
        self._paths: dict[str, str | None] = {}
        # Whether the last walk of /proc did not return in time (logged once while it lasts).
        self._stalled = False

    async def kernels(self) -> list[RunningKernel]:
        """This server's kernels now."""
        return await self._listing.kernels()

    async def __call__(self, snapshot: Snapshot) -> None:
        # Deny by default: another user's command line can hold paths, hosts or tokens, so none
        # leaves the server unless the join below proves it may. Whatever fails before
        # release_commands leaves them withheld.
        withheld = withhold_commands(snapshot)
        try:
            kernels = await self.kernels()
        except Exception as error:
            # Whose each process is does not depend on the kernels: join without them.
            log.warning("the GPU processes are joined without kernels: %s", error)
            kernels = []
        local = {kernel.kernel_id: kernel.pid for kernel in kernels if kernel.pid is not None}
        self._paths = {kernel.kernel_id: kernel.session_path for kernel in kernels}
        # One trip to a MACHINE thread for all of it: each part reads /proc. Keyed: a walk
        # stuck on a process (one in uninterruptible sleep can hang a read of its /proc files)
        # leaves the next reads unjoined rather than stacking walks behind it.
        try:
            self.machine_use = await blocking.run(
                blocking.MACHINE,
                join_and_measure,
                snapshot,
                kernels,
                local,
                self._machine,
                self._rows,
                timeout_seconds=blocking.MACHINE_READ_SECONDS,
                key=self,
            )
        except blocking.TimedOut as late:
            if not self._stalled:
                log.warning("the GPU processes are not joined to the kernels: %s", late)
            self._stalled = True
            self.machine_use = {}
        else:
            self._stalled = False
        release_commands(snapshot, withheld, self._show_other_users_commands)
        self.usage = kernel_usage(snapshot, kernels)

    def machine_uses(self) -> list[KernelMachine]:
        """Each kernel's CPU and memory at the latest read, with its notebook."""
        return [
            KernelMachine(kernel_id, self._paths.get(kernel_id), use)
            for kernel_id, use in self.machine_use.items()
        ]
