"""Who holds the GPU: at every read, the GPU processes joined to this server's kernels and their
notebooks (``processes``), each kernel's use of the machine measured (``usage``), and what each
kernel holds on each GPU kept for the routes, ``/metrics`` and the kernels' history.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .. import blocking
from ..gpu.model import GpuProcess, Snapshot
from ..machine.process_reads import ProcessReads
from .listing import KernelListing, RunningKernel
from .processes import JoinedRows, ProcessTree, join
from .usage import KernelUsageReader, KernelUse

log = logging.getLogger(__name__)


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
    idle_held: Mapping[tuple[str, int], float] | None = None,
) -> list[dict]:
    """``GET kernels``: every kernel of this server with the GPU memory it holds, most first,
    what it uses of the machine at the last read, and since when it holds a GPU idle
    (``idle_held``: (kernel id, GPU index) -> since when, see ``idle_held.py``)."""
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
                "idle_held_since": (idle_held or {}).get((kernel.kernel_id, entry.gpu_index)),
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
        # Kernel id -> its notebook or console, and its execution state, at the latest read.
        self._paths: dict[str, str | None] = {}
        self.states: dict[str, str | None] = {}
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
        self.states = {kernel.kernel_id: kernel.execution_state for kernel in kernels}
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

    def last_activity(self, kernel_id: str) -> float | None:
        """When the kernel last sent a message, in seconds since the epoch."""
        return self._listing.last_activity(kernel_id)

    def machine_uses(self) -> list[KernelMachine]:
        """Each kernel's CPU and memory at the latest read, with its notebook."""
        return [
            KernelMachine(kernel_id, self._paths.get(kernel_id), use)
            for kernel_id, use in self.machine_use.items()
        ]
