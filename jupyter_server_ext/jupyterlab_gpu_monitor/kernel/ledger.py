"""What each notebook of this server held of the GPUs, as counters a lab's Prometheus keeps for
months: GPU-seconds busy and idle-held, energy, and the most memory held.

Each read closes the interval since the read before: what a kernel held then, on a GPU in the
state it was in then, counts for the whole interval, attributed by the kernel's share of the
GPU's memory in use (two notebooks holding 10 GiB each of an idle GPU's 20 GiB idle-hold it
half each). An interval longer than ``MAX_GAP_SECONDS`` (the server slept, or nobody read the
GPUs) counts for nothing: what happened in it is unknown.

Notebooks are keyed by their label (``notebook_label``), not by kernel: a restart of a notebook
counts on in its series. So that a server scraped for months does not grow its series with
every notebook ever opened, at most ``MAX_ENTRIES`` notebook-and-GPU entries are kept; past
that the one least recently active, and inactive now, goes (a counter Prometheus sees end; if
that notebook comes back, its series starts again from 0, which ``increase()`` reads as a
reset).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from ..contract import constant
from ..gpu.model import Gpu, Snapshot
from ..machine.model import rate_seconds
from .join import KernelGpuUsage

HELD_MEMORY_MIB = constant("HeldMemoryMib")
LOW_UTILIZATION_PERCENT = constant("LowUtilizationPercent")
# Longer than Prometheus' usual scrape interval (1 min), whose scrapes wake the Sampler.
MAX_GAP_SECONDS = 180.0
MAX_ENTRIES = 256
NOTEBOOK_LABELS = ("hash", "path", "none")


def notebook_label(path: str | None, mode: str) -> str:
    """A notebook as the lab's series name it: its path; a hash of it (the default: the same
    notebook is the same label on every server, and a reader of the lab's Prometheus learns no
    other user's notebook names); or nothing (per user only). A kernel without a notebook
    (a console, a kernel started through the API) is ""."""
    if not path or mode == "none":
        return ""
    if mode == "path":
        return path
    return hashlib.sha256(path.encode()).hexdigest()[:12]


@dataclass
class NotebookGpuAccount:
    """What one notebook has held of one GPU since this server started (or since the entry
    was last evicted)."""

    notebook: str
    gpu_index: int
    gpu_uuid: str
    busy_seconds: float = 0.0
    idle_held_seconds: float = 0.0
    energy_joules: float = 0.0
    # Whether some of the energy is power integrated over time: the GPU has no energy counter.
    energy_estimated: bool = False
    peak_memory_mib: float = 0.0
    last_active: float = 0.0  # when it last held memory


@dataclass(frozen=True)
class _Held:
    """One read's state of a GPU and what each notebook held there."""

    gpu: Gpu
    by_notebook: Mapping[str, float]  # notebook label -> MiB held


class NotebookLedger:
    """Every notebook's account per GPU, advanced at each read (``record``)."""

    def __init__(self, label_mode: str = "hash"):
        if label_mode not in NOTEBOOK_LABELS:
            raise ValueError(f"a notebook label is one of {NOTEBOOK_LABELS}, not {label_mode!r}")
        self.label_mode = label_mode
        # Path -> label, so that a read hashes only the notebooks it has not seen.
        self._labels: dict[str | None, str] = {}
        # Hash -> path of the notebooks labelled here, the latest last: the lab names this
        # server's user's own notebooks by them (``own_names``), where the series hold hashes.
        self._names: dict[str, str] = {}
        self._accounts: dict[tuple[str, str], NotebookGpuAccount] = {}
        self._previous: tuple[float, list[_Held]] | None = None

    def accounts(self) -> list[NotebookGpuAccount]:
        return list(self._accounts.values())

    def own_names(self) -> dict[str, str]:
        """Hash -> path of the last ``MAX_ENTRIES`` notebooks that held a GPU here under a
        hash label: this server's user's own, whom the lab shows them by name."""
        return dict(self._names)

    def record(self, snapshot: Snapshot, usage: Iterable[KernelGpuUsage]) -> None:
        """Close the interval since the last read with the state of that read; keep this
        read's state for the next. A failed read leaves the ledger as it was: the interval
        closes at the next good read, if it comes in time."""
        if snapshot.error is not None:
            return
        now = snapshot.timestamp
        held = self._held(snapshot, usage)
        if self._previous is not None:
            since, before = self._previous
            seconds = rate_seconds(since, now, MAX_GAP_SECONDS)
            if seconds is not None:
                gpus_now = {gpu.uuid: gpu for gpu in snapshot.gpus if gpu.uuid}
                for state in before:
                    self._close(state, gpus_now.get(state.gpu.uuid), seconds, now)
        self._previous = (now, held)
        self._evict()

    def _held(self, snapshot: Snapshot, usage: Iterable[KernelGpuUsage]) -> list[_Held]:
        by_gpu: dict[str, dict[str, float]] = {}
        for entry in usage:
            if entry.gpu_uuid and entry.memory_used_mib > 0:
                label = self._labels.get(entry.path)
                if label is None:
                    if len(self._labels) > MAX_ENTRIES:
                        self._labels.clear()
                    label = self._labels[entry.path] = notebook_label(entry.path, self.label_mode)
                    self._name(label, entry.path)
                notebooks = by_gpu.setdefault(entry.gpu_uuid, {})
                notebooks[label] = notebooks.get(label, 0.0) + entry.memory_used_mib
        return [
            _Held(gpu, by_gpu[gpu.uuid])
            for gpu in snapshot.gpus
            if gpu.uuid in by_gpu and gpu.error is None
        ]

    def _name(self, label: str, path: str | None) -> None:
        """Keep the path a hash label stands for, the latest ``MAX_ENTRIES``."""
        if self.label_mode != "hash" or not path:
            return
        self._names.pop(label, None)
        self._names[label] = path
        if len(self._names) > MAX_ENTRIES:
            del self._names[next(iter(self._names))]

    def _close(self, state: _Held, gpu_now: Gpu | None, seconds: float, now: float) -> None:
        gpu = state.gpu
        in_use = max(gpu.memory_used_mib or 0.0, sum(state.by_notebook.values()))
        idle = gpu.utilization_gpu is not None and gpu.utilization_gpu < LOW_UTILIZATION_PERCENT
        energy, estimated = _energy(gpu, gpu_now, seconds)
        for notebook, mib in state.by_notebook.items():
            account = self._account(notebook, gpu)
            share = mib / in_use
            if mib >= HELD_MEMORY_MIB and gpu.utilization_gpu is not None:
                if idle:
                    account.idle_held_seconds += seconds * share
                else:
                    account.busy_seconds += seconds * share
            if energy is not None:
                account.energy_joules += energy * share
                account.energy_estimated |= estimated
            account.peak_memory_mib = max(account.peak_memory_mib, mib)
            account.last_active = now

    def _account(self, notebook: str, gpu: Gpu) -> NotebookGpuAccount:
        key = (notebook, str(gpu.uuid))
        account = self._accounts.get(key)
        if account is None:
            account = self._accounts[key] = NotebookGpuAccount(notebook, gpu.index, str(gpu.uuid))
        return account

    def _evict(self) -> None:
        """Past ``MAX_ENTRIES`` accounts, let those go that were active longest ago, never one
        holding memory at the latest read."""
        excess = len(self._accounts) - MAX_ENTRIES
        if excess <= 0:
            return
        active = {
            (notebook, str(state.gpu.uuid))
            for state in (self._previous[1] if self._previous else [])
            for notebook in state.by_notebook
        }
        idle = sorted(
            (account.last_active, key)
            for key, account in self._accounts.items()
            if key not in active
        )
        for _, key in idle[:excess]:
            del self._accounts[key]


def _energy(gpu: Gpu, gpu_now: Gpu | None, seconds: float) -> tuple[float | None, bool]:
    """The GPU's energy over the interval, in joules, and whether it is estimated: its energy
    counter's increase where it has one at both ends, else its power at the interval's start
    times the interval; None when neither is known."""
    start = gpu.energy_consumed_j
    end = gpu_now.energy_consumed_j if gpu_now is not None else None
    if start is not None and end is not None and end >= start:
        return end - start, False
    if gpu.power_draw_w is not None:
        return gpu.power_draw_w * seconds, True
    return None, False
