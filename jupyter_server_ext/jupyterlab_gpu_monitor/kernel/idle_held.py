"""GPUs held by idle notebooks: since when each kernel has held GPU memory and done nothing.

A kernel is idle-held on a GPU while, at every read, it holds at least the held-memory rule's
MiB there (``HeldMemoryMib`` in ``api_schema/rules.json``), the GPU's utilisation is under the
low-utilisation rule's (``LowUtilizationPercent``) and the kernel is idle. It is idle-held since
the read that first found it so, or since the kernel's last activity where that came later (a
cell run between two reads is use, though no read saw the kernel busy), and it ends at the first
read where any of the three fails. The server keeps it, so a page opened or reloaded later shows
the same duration as every other client, ``GET kernels`` and ``/metrics``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from ..contract import constant
from .join import KernelGpuUsage

HELD_MEMORY_MIB = constant("HeldMemoryMib")
LOW_UTILIZATION_PERCENT = constant("LowUtilizationPercent")


def holds_idle(memory_mib: float, utilization_gpu: float | None) -> bool:
    """Whether memory held on a GPU at that utilisation is held for nothing: enough memory to be
    a model or its data, on a GPU that barely computes (unknown utilisation is not idle)."""
    return (
        memory_mib >= HELD_MEMORY_MIB
        and utilization_gpu is not None
        and utilization_gpu < LOW_UTILIZATION_PERCENT
    )


class IdleHeld:
    """Since when each kernel has been idle-held on each GPU, from read to read."""

    def __init__(self) -> None:
        # (kernel id, GPU index) -> since when, in seconds since the epoch.
        self._since: dict[tuple[str, int], float] = {}

    def since(self) -> Mapping[tuple[str, int], float]:
        """(kernel id, GPU index) -> since when it is idle-held there, at the latest read."""
        return self._since

    def update(
        self,
        now: float,
        usage: Iterable[KernelGpuUsage],
        states: Mapping[str, str | None],
        last_activity: Callable[[str], float | None],
    ) -> None:
        """The read at ``now`` (seconds since the epoch): what each kernel holds on each GPU,
        each kernel's execution state, and when a kernel was last active (read only for the
        few that hold memory idle)."""
        since = {}
        for entry in usage:
            if states.get(entry.kernel_id) != "idle":
                continue
            if not holds_idle(entry.memory_used_mib, entry.utilization_gpu):
                continue
            key = (entry.kernel_id, entry.gpu_index)
            start = self._since.get(key, now)
            active = last_activity(entry.kernel_id)
            if active is not None:
                start = min(max(start, active), now)
            since[key] = start
        self._since = since
