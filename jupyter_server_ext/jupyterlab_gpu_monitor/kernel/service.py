"""The kernel side of the server as the routes and ``/metrics`` reach it: one object, kept in
the web app's settings, with typed parts."""

from __future__ import annotations

from ..gpu.model import Snapshot
from .cells import KernelHistory
from .idle_held import IdleHeld
from .join import KernelGpuUsage, KernelJoin, KernelMachine
from .ledger import NotebookLedger


class KernelService:
    """This server's kernels joined to the GPUs at every read (``join``), each kernel's
    figures kept for its cells (``history``), what each notebook held of the GPUs
    (``ledger``), and since when each kernel holds a GPU idle (``idle_held``)."""

    def __init__(self, join: KernelJoin, history: KernelHistory, ledger: NotebookLedger):
        self.join = join
        self.history = history
        self.ledger = ledger
        self.idle_held = IdleHeld()

    def record(self, snapshot: Snapshot) -> None:
        """Keep what the read ``snapshot``, joined to the kernels, says of them."""
        join = self.join
        self.history.append(snapshot.timestamp, join.usage, join.machine_use)
        self.ledger.record(snapshot, join.usage)
        self.idle_held.update(snapshot.timestamp, join.usage, join.states, join.last_activity)

    def gpu_memory(self) -> list[KernelGpuUsage]:
        """What each kernel holds on each GPU at the latest read."""
        return self.join.usage

    def machine_uses(self) -> list[KernelMachine]:
        """Each kernel's CPU and memory at the latest read, with its notebook."""
        return self.join.machine_uses()
