"""The kernel side of the server as the routes and ``/metrics`` reach it: one object, kept in
the web app's settings, with typed parts."""

from __future__ import annotations

from .cells import KernelHistory
from .join import KernelGpuUsage, KernelJoin, KernelMachine
from .ledger import NotebookLedger


class KernelService:
    """This server's kernels joined to the GPUs at every read (``join``), each kernel's
    figures kept for its cells (``history``), and what each notebook held of the GPUs
    (``ledger``)."""

    def __init__(self, join: KernelJoin, history: KernelHistory, ledger: NotebookLedger):
        self.join = join
        self.history = history
        self.ledger = ledger

    def gpu_memory(self) -> list[KernelGpuUsage]:
        """What each kernel holds on each GPU at the latest read."""
        return self.join.usage

    def machine_uses(self) -> list[KernelMachine]:
        """Each kernel's CPU and memory at the latest read, with its notebook."""
        return self.join.machine_uses()
