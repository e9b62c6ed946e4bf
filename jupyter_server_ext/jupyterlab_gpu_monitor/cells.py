"""Which cell used the GPU: a kernel's GPU footprint over the time spans its cells ran.

The Sampler's history holds every GPU's utilisation; ``KernelHistory`` holds, for the same
reads, how much memory each kernel (its process and descendants) held on each GPU and how busy
their CPUs were. A span's figures come from the reads that fall inside it, at the server's full
resolution.
"""

from __future__ import annotations

import itertools
import math
from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from .gpu.history import History, first_after, first_at
from .kernels import KernelGpuUsage
from .machine.kernel_usage import KernelUse

# kernel id -> {GPU index: MiB held}, at one read.
_Holdings = dict[str, dict[int, float]]
# kernel id -> its processes' CPU since the read before, in percent of one core.
_Cpu = dict[str, float]


class KernelHistory:
    """Per read, the GPU memory each kernel held and its CPU; bounded like the Sampler's
    History."""

    def __init__(self, history_seconds: float, interval_seconds: float):
        self.history_seconds = history_seconds
        self.interval_seconds = interval_seconds
        self._points: deque[tuple[float, _Holdings, _Cpu]] = deque(
            maxlen=max(1, math.ceil(history_seconds / interval_seconds))
        )

    def __len__(self) -> int:
        return len(self._points)

    def copy(self) -> KernelHistory:
        """A copy to read in a worker thread while this one goes on recording (see
        ``History.copy``)."""
        twin = KernelHistory(self.history_seconds, self.interval_seconds)
        twin._points = self._points.copy()
        return twin

    def append(
        self,
        timestamp: float,
        usage: Iterable[KernelGpuUsage],
        machine_use: Mapping[str, KernelUse],
    ) -> None:
        """Record one read's per-kernel GPU memory and CPU."""
        holdings: _Holdings = {}
        for entry in usage:
            holdings.setdefault(entry.kernel_id, {})[entry.gpu_index] = entry.memory_used_mib
        cpu = {
            kernel_id: use.cpu_percent
            for kernel_id, use in machine_use.items()
            if use.cpu_percent is not None
        }
        self._points.append((timestamp, holdings, cpu))
        while self._points and self._points[0][0] < timestamp - self.history_seconds:
            self._points.popleft()

    def knows(self, kernel_id: str) -> bool:
        """Whether a read still kept saw the kernel."""
        return any(kernel_id in holdings or kernel_id in cpu for _, holdings, cpu in self._points)

    def held_between(
        self, kernel_id: str, start: float, end: float
    ) -> dict[float, dict[int, float]]:
        """Read time -> {GPU index: MiB} the kernel held, for the reads from start to end."""
        return {
            timestamp: holdings.get(kernel_id, {})
            for timestamp, holdings, _cpu in self._between(start, end)
        }

    def cpu_between(self, kernel_id: str, start: float, end: float) -> list[float]:
        """The kernel's CPU (percent of one core) at each read from start to end that
        measured it."""
        return [cpu[kernel_id] for _, _, cpu in self._between(start, end) if kernel_id in cpu]

    def _between(self, start: float, end: float) -> Iterator[tuple[float, _Holdings, _Cpu]]:
        for point in itertools.islice(self._points, first_at(self._points, start), None):
            if point[0] > end:
                break
            yield point

    def held_before(
        self, kernel_id: str, timestamp: float, within: float
    ) -> dict[int, float] | None:
        """{GPU index: MiB} the kernel held at the last read at or before ``timestamp``; None
        when no read was made in the ``within`` seconds before it (nobody watched)."""
        position = first_after(self._points, timestamp) - 1
        if position < 0 or self._points[position][0] < timestamp - within:
            return None
        return self._points[position][1].get(kernel_id, {})


# How many times over the reads of the history one request's spans may cover. A kernel runs
# one cell at a time, so the runs of one kernel cover each read at most once (and share a read
# where one ends as the next starts); twice leaves room. More is not a notebook's request, and
# each read covered costs work.
SPAN_READS_PER_HISTORY = 2


class SpansTooCostly(ValueError):
    """The spans of one request cover more reads than a request may cost."""

    def __init__(self, reads: int, limit: int):
        super().__init__(
            f"the spans cover {reads} reads together; at most {limit} (twice the history, and "
            "one per span) may be asked for in one request"
        )


@dataclass
class Span:
    """A cell run: from ``execute_input`` to the ``idle`` that answered it, epoch seconds."""

    start: float
    end: float


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def attribute(
    kernel_id: str,
    spans: list[Span],
    gpu_history: History,
    kernel_history: KernelHistory,
) -> list[dict[str, Any]]:
    """Each span's peak GPU memory of the kernel, and the utilisation of the GPUs it held.

    A span shorter than two read intervals, or one the history does not cover, says so instead
    of inventing numbers. Each span costs the reads inside it, not the whole history, and all of
    them together at most ``SPAN_READS_PER_HISTORY`` times the history (else SpansTooCostly,
    found before any other work). Reads the histories while nothing changes them: a worker
    thread gets copies.
    """
    reads = sum(gpu_history.reads_between(span.start, span.end) for span in spans)
    limit = SPAN_READS_PER_HISTORY * gpu_history.capacity + len(spans)
    if reads > limit:
        raise SpansTooCostly(reads, limit)
    return [_figures(kernel_id, span, gpu_history, kernel_history) for span in spans]


def _figures(
    kernel_id: str, span: Span, gpu_history: History, kernel_history: KernelHistory
) -> dict[str, Any]:
    interval = gpu_history.interval_seconds
    times, utilization = gpu_history.utilization_between(span.start, span.end)
    # Reads more than two intervals apart: nobody watched, the server did not read.
    edges = [span.start, *times, span.end]
    result: dict[str, Any] = {
        "start": span.start,
        "end": span.end,
        "duration_seconds": span.end - span.start,
        "samples": len(times),
        "too_short": span.end - span.start < 2 * interval,
        "gap": any(later - earlier > 2 * interval for earlier, later in zip(edges, edges[1:])),
        "peak_memory_mib": None,
        "mean_utilization": None,
        "peak_utilization": None,
        "mean_cpu_percent": None,
        "gpus": [],
    }
    if result["too_short"] or not times:
        return result
    # Each read's CPU figure covers the interval before it: the reads in the span cover it.
    result["mean_cpu_percent"] = _mean(kernel_history.cpu_between(kernel_id, span.start, span.end))
    held = kernel_history.held_between(kernel_id, span.start, span.end)
    per_read = [held.get(timestamp, {}) for timestamp in times]
    # The GPUs the kernel held memory on during the span, and its total at each read.
    gpus = sorted({gpu for reading in per_read for gpu, mib in reading.items() if mib > 0})
    if not gpus:
        return result
    result["peak_memory_mib"] = max(sum(reading.values()) for reading in per_read)
    # What the kernel held as the cell started: the read just before it, else its first read
    # (the server was not reading then). The peak less this is what the cell added: a cell
    # after the model was loaded adds nothing, though its peak is the model's.
    at_start = kernel_history.held_before(kernel_id, span.start, 2 * interval)
    if at_start is None:
        at_start = per_read[0]
    everything = []
    for gpu in gpus:
        name, series = utilization.get(gpu, (None, []))
        values = [value for value in series if value is not None]
        everything += values
        result["gpus"].append(
            {
                "index": gpu,
                "name": name,
                "peak_memory_mib": max(reading.get(gpu, 0) for reading in per_read),
                "start_memory_mib": at_start.get(gpu, 0),
                "mean_utilization": _mean(values),
                "peak_utilization": max(values, default=None),
            }
        )
    result["mean_utilization"] = _mean(everything)
    result["peak_utilization"] = max(everything, default=None)
    return result
