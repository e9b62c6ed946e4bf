"""Which cell used the GPU: a kernel's GPU footprint over the time spans its cells ran.

The Sampler's history holds every GPU's utilisation; ``KernelMemoryHistory`` holds, for the same
reads, how much memory each kernel (its process and descendants) held on each GPU. A span's
figures come from the reads that fall inside it, at the server's full resolution.
"""

from __future__ import annotations

import bisect
import math
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # kernels.py records into this module's history
    from .kernels import KernelGpuUsage

# (kernel id, GPU index) -> MiB held, at one read.
_Holdings = dict[tuple[str, int], float]


class KernelMemoryHistory:
    """Per read, the GPU memory each kernel held; bounded like the Sampler's History."""

    def __init__(self, history_seconds: float, interval_seconds: float):
        self.history_seconds = history_seconds
        self._points: deque[tuple[float, _Holdings]] = deque(
            maxlen=max(1, math.ceil(history_seconds / interval_seconds))
        )

    def __len__(self) -> int:
        return len(self._points)

    def append(self, timestamp: float, usage: Iterable[KernelGpuUsage]) -> None:
        """Record one read's per-kernel memory."""
        holdings = {(entry.kernel_id, entry.gpu_index): entry.memory_used_mib for entry in usage}
        self._points.append((timestamp, holdings))
        while self._points and self._points[0][0] < timestamp - self.history_seconds:
            self._points.popleft()

    def knows(self, kernel_id: str) -> bool:
        """Whether the kernel held GPU memory at any read still kept."""
        return any(kernel == kernel_id for _, held in self._points for kernel, _ in held)

    def held(self, kernel_id: str) -> dict[float, dict[int, float]]:
        """Timestamp -> {GPU index: MiB} for one kernel, over the whole history."""
        return {
            timestamp: {gpu: mib for (kernel, gpu), mib in held.items() if kernel == kernel_id}
            for timestamp, held in self._points
        }


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
    gpu_history: dict[str, Any],
    memory_history: KernelMemoryHistory,
) -> list[dict[str, Any]]:
    """Each span's peak GPU memory of the kernel, and the utilisation of the GPUs it held.

    ``gpu_history`` is ``History.since()`` output covering the spans. A span shorter than two
    read intervals, or one the history does not cover, says so instead of inventing numbers.
    """
    interval = gpu_history["interval_seconds"]
    times = gpu_history["timestamps"]
    columns = {column["index"]: column for column in gpu_history["gpus"]}
    held = memory_history.held(kernel_id)
    results = []
    for span in spans:
        first = bisect.bisect_left(times, span.start)
        last = bisect.bisect_right(times, span.end)
        inside = times[first:last]
        # Reads more than two intervals apart: nobody watched, the server did not read.
        edges = [span.start, *inside, span.end]
        gap = any(later - earlier > 2 * interval for earlier, later in zip(edges, edges[1:]))
        result: dict[str, Any] = {
            "start": span.start,
            "end": span.end,
            "duration_seconds": span.end - span.start,
            "samples": len(inside),
            "too_short": span.end - span.start < 2 * interval,
            "gap": gap,
            "peak_memory_mib": None,
            "mean_utilization": None,
            "peak_utilization": None,
            "gpus": [],
        }
        results.append(result)
        if result["too_short"] or not inside:
            continue
        # The GPUs the kernel held memory on during the span, and its total at each read.
        per_read = [held.get(timestamp, {}) for timestamp in inside]
        gpus = sorted({gpu for reading in per_read for gpu, mib in reading.items() if mib > 0})
        if not gpus:
            continue
        result["peak_memory_mib"] = max(sum(reading.values()) for reading in per_read)
        all_utilization = []
        for gpu in gpus:
            column = columns.get(gpu)
            utilization = [
                value
                for value in (column["utilization_gpu"][first:last] if column else [])
                if value is not None
            ]
            all_utilization += utilization
            result["gpus"].append(
                {
                    "index": gpu,
                    "name": column["name"] if column else None,
                    "peak_memory_mib": max(reading.get(gpu, 0) for reading in per_read),
                    "mean_utilization": _mean(utilization),
                    "peak_utilization": max(utilization, default=None),
                }
            )
        result["mean_utilization"] = _mean(all_utilization)
        result["peak_utilization"] = max(all_utilization, default=None)
    return results
