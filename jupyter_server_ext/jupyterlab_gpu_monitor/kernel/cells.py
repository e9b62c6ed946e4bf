"""Which cell used the GPU: a kernel's GPU footprint over the time spans its cells ran.

The Sampler's history holds every GPU's utilisation; ``KernelHistory`` holds, for the same
reads, how much memory each kernel (its process and descendants) held on each GPU and how busy
their CPUs were. A span's figures come from the reads that fall inside it, at the server's full
resolution.
"""

from __future__ import annotations

import itertools
import math
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from .. import blocking
from ..gpu.history import History
from .join import KernelGpuUsage
from .usage import KernelUse

# The value of a CPU figure at a read that did not measure it (the kernel's first read, or a
# read it was not seen at).
_UNMEASURED = math.nan


class _Runs:
    """A figure read after read, kept as its changes: the read number where each run of equal
    values starts, and the value. A kernel holding 30 GiB for hours, or idle at 0 % CPU, costs
    one run, not one entry a read."""

    __slots__ = ("starts", "values")

    def __init__(self, starts: array | None = None, values: array | None = None):
        self.starts = starts if starts is not None else array("q")
        self.values = values if values is not None else array("d")

    def copy(self) -> _Runs:
        return _Runs(self.starts[:], self.values[:])

    def last(self, default: float) -> float:
        return self.values[-1] if self.values else default

    def set(self, read: int, value: float) -> None:
        """The value from this read on (reads come in order)."""
        if self.values:
            last = self.values[-1]
            if last == value or (math.isnan(last) and math.isnan(value)):
                return
        self.starts.append(read)
        self.values.append(value)

    def over(self, first: int, count: int, default: float) -> list[float]:
        """The values at ``count`` reads from ``first``: one search, then a run at a time."""
        run = bisect_right(self.starts, first)  # the first run that starts after ``first``
        value = self.values[run - 1] if run else default
        values: list[float] = []
        read, end = first, first + count
        while read < end:
            change = min(self.starts[run], end) if run < len(self.starts) else end
            values += itertools.repeat(value, change - read)
            read = change
            if run < len(self.starts):
                value = self.values[run]
                run += 1
        return values

    def forget_before(self, read: int) -> None:
        """Drop the runs that end before this read: the one it falls in stays."""
        keep = bisect_right(self.starts, read) - 1
        if keep > 0:
            del self.starts[:keep]
            del self.values[:keep]


class _Kernel:
    """One kernel's figures: its CPU and, per GPU index, the MiB it held (0 where none)."""

    __slots__ = ("cpu", "last_seen", "memory")

    def __init__(self) -> None:
        self.cpu = _Runs()
        self.memory: dict[int, _Runs] = {}
        self.last_seen = -1  # the read number it was last seen at

    def copy(self) -> _Kernel:
        twin = _Kernel()
        twin.cpu = self.cpu.copy()
        twin.memory = {gpu: runs.copy() for gpu, runs in self.memory.items()}
        twin.last_seen = self.last_seen
        return twin


class KernelHistory:
    """Per read, the GPU memory each kernel held and its CPU; bounded like the Sampler's
    History. Reads are numbered from the first; each kernel keeps its figures' changes, so
    what it costs grows with how often they change, not with the reads."""

    def __init__(self, history_seconds: float, interval_seconds: float):
        self.history_seconds = history_seconds
        self.interval_seconds = interval_seconds
        self.capacity = max(1, math.ceil(history_seconds / interval_seconds))
        # The reads' times; those before ``_head`` have aged out and go in batches.
        self._times = array("d")
        self._head = 0
        self._first_read = 0  # the number of the read at self._times[0]
        self._kernels: dict[str, _Kernel] = {}
        self._holding: set[str] = set()  # the kernels holding GPU memory at the last read
        self._uses: Mapping[str, KernelUse] = {}  # each kernel's use at the last read

    def __len__(self) -> int:
        return len(self._times) - self._head

    def copy(self, kernel_id: str) -> KernelHistory:
        """A copy of the reads and one kernel's figures, to read in a worker thread while this
        one goes on recording (see ``History.copy``)."""
        twin = KernelHistory(self.history_seconds, self.interval_seconds)
        twin._times = self._times[self._head :]
        twin._first_read = self._first_read + self._head
        if kernel_id in self._kernels:
            twin._kernels[kernel_id] = self._kernels[kernel_id].copy()
        return twin

    def append(
        self,
        timestamp: float,
        usage: Iterable[KernelGpuUsage],
        machine_use: Mapping[str, KernelUse],
    ) -> None:
        """Record one read's per-kernel GPU memory and CPU. A kernel whose reading is the read
        before's (an idle kernel's last walk: the same object) and that holds no GPU memory is
        only seen again: with 200 idle kernels, that is most of them at most reads."""
        read = self._first_read + len(self._times)
        self._times.append(timestamp)
        held: dict[str, dict[int, float]] = {}
        for entry in usage:
            held.setdefault(entry.kernel_id, {})[entry.gpu_index] = entry.memory_used_mib
        before = self._uses
        # Those holding memory now or at the read before, and those gone since, are recorded;
        # of the others, those with a new reading.
        visit = dict.fromkeys(itertools.chain(held, self._holding, before.keys() - machine_use))
        for kernel_id, use in machine_use.items():
            if kernel_id in visit:
                continue
            kernel = self._kernels.get(kernel_id)
            if kernel is None or use is not before.get(kernel_id):
                visit[kernel_id] = None
            elif use.cpu_percent is not None:
                kernel.last_seen = read
        for kernel_id in visit:
            self._record(kernel_id, read, machine_use.get(kernel_id), held.get(kernel_id))
        self._uses = machine_use
        self._age(timestamp)

    def _record(
        self, kernel_id: str, read: int, use: KernelUse | None, held: dict[int, float] | None
    ) -> None:
        """Record a kernel's figures at a read: its CPU (unmeasured without a reading) and
        the memory it held on each GPU (0 where none)."""
        kernel = self._kernels.get(kernel_id)
        if kernel is None:
            kernel = self._kernels[kernel_id] = _Kernel()
        cpu = use.cpu_percent if use is not None else None
        kernel.cpu.set(read, _UNMEASURED if cpu is None else cpu)
        holdings = held or {}
        for gpu in kernel.memory.keys() | holdings.keys():
            kernel.memory.setdefault(gpu, _Runs()).set(read, holdings.get(gpu, 0.0))
        if cpu is not None or holdings:
            kernel.last_seen = read
        if any(holdings.values()):
            self._holding.add(kernel_id)
        else:
            self._holding.discard(kernel_id)

    def _age(self, now: float) -> None:
        """Let the reads older than the history go, and with them, every capacity reads, the
        figures only they needed."""
        oldest = max(len(self._times) - self.capacity, self._head)
        while oldest < len(self._times) and self._times[oldest] < now - self.history_seconds:
            oldest += 1
        self._head = oldest
        if self._head < self.capacity:
            return
        del self._times[: self._head]
        self._first_read += self._head
        self._head = 0
        for kernel_id, kernel in list(self._kernels.items()):
            if kernel.last_seen < self._first_read and kernel_id not in self._holding:
                del self._kernels[kernel_id]
                continue
            kernel.cpu.forget_before(self._first_read)
            for runs in kernel.memory.values():
                runs.forget_before(self._first_read)

    def knows(self, kernel_id: str) -> bool:
        """Whether a read still kept saw the kernel."""
        kernel = self._kernels.get(kernel_id)
        return kernel is not None and kernel.last_seen >= self._first_read + self._head

    def _reads(self, start: float, end: float) -> range:
        """The positions in ``_times`` of the reads from start to end."""
        low = bisect_left(self._times, start, self._head)
        return range(low, bisect_right(self._times, end, low))

    def reads_between(self, kernel_id: str, start: float, end: float) -> KernelReads:
        """The kernel's figures at the reads from start to end."""
        reads = self._reads(start, end)
        kernel = self._kernels.get(kernel_id, _Kernel())
        first = self._first_read + reads.start
        return KernelReads(
            self._times[reads.start : reads.stop].tolist(),
            kernel.cpu.over(first, len(reads), _UNMEASURED),
            {gpu: runs.over(first, len(reads), 0.0) for gpu, runs in kernel.memory.items()},
        )

    def cpu_between(self, kernel_id: str, start: float, end: float) -> list[float]:
        """The kernel's CPU (percent of one core) at each read from start to end that
        measured it."""
        return _measured(self.reads_between(kernel_id, start, end).cpu)


class KernelReads(NamedTuple):
    """A kernel's figures at a run of reads."""

    times: list[float]
    # Percent of one core; NaN at a read that did not measure it.
    cpu: list[float]
    # Per GPU the kernel held memory on while the reads were kept, the MiB at each (0: none).
    memory: dict[int, list[float]]

    def held_before(self, timestamp: float, within: float) -> dict[int, float] | None:
        """{GPU index: MiB} the kernel held at the last read at or before ``timestamp``; None
        when no read was made in the ``within`` seconds before it (nobody watched)."""
        position = bisect_right(self.times, timestamp) - 1
        if position < 0 or self.times[position] < timestamp - within:
            return None
        return {gpu: mib[position] for gpu, mib in self.memory.items() if mib[position]}


def _measured(cpu: list[float]) -> list[float]:
    return [value for value in cpu if not math.isnan(value)]


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
    of inventing numbers. The reads from the first span's start to the last one's end are read
    once (at most the whole history); each span then costs two searches and the reads inside
    it, and all of them together at most ``SPAN_READS_PER_HISTORY`` times the history (else
    SpansTooCostly, found before any span's figures). Reads the histories while nothing changes
    them: a worker thread gets copies.
    """
    if not spans:
        return []
    reads = _Reads(kernel_id, spans, gpu_history, kernel_history)
    covered = sum(len(reads.within(span)) for span in spans)
    limit = SPAN_READS_PER_HISTORY * gpu_history.capacity + len(spans)
    if covered > limit:
        raise SpansTooCostly(covered, limit)
    figures = []
    for span in spans:
        blocking.give_way()
        figures.append(reads.figures(span))
    return figures


class _Reads:
    """The figures of one request's reads, read once: the GPU history's times and each GPU's
    utilisation, and what the kernel held on each GPU at those times. A span is a slice of
    them: 2000 spans of 8 reads of 8 GPUs cost what their 128,000 values do, not 2000 walks
    of the histories (tests/test_starvation.py)."""

    def __init__(
        self,
        kernel_id: str,
        spans: list[Span],
        gpu_history: History,
        kernel_history: KernelHistory,
    ):
        self.interval = gpu_history.interval_seconds
        start = min(span.start for span in spans)
        end = max(span.end for span in spans)
        self.times, self.utilization = gpu_history.utilization_between(start, end)
        # From two intervals earlier: what the kernel held as the first span started.
        self.kernel = kernel_history.reads_between(kernel_id, start - 2 * self.interval, end)
        self.memory = _at_times(self.times, self.kernel.times, self.kernel.memory)

    def within(self, span: Span) -> range:
        """The positions in ``times`` of the reads from the span's start to its end."""
        low = bisect_left(self.times, span.start)
        return range(low, max(low, bisect_right(self.times, span.end)))

    def figures(self, span: Span) -> dict[str, Any]:
        interval = self.interval
        reads = self.within(span)
        times = self.times[reads.start : reads.stop]
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
        cpu = self.kernel.cpu[
            bisect_left(self.kernel.times, span.start) : bisect_right(self.kernel.times, span.end)
        ]
        result["mean_cpu_percent"] = _mean(_measured(cpu))
        held = {gpu: column[reads.start : reads.stop] for gpu, column in self.memory.items()}
        # The GPUs the kernel held memory on during the span, and its total at each read.
        gpus = sorted(gpu for gpu, column in held.items() if max(column) > 0)
        if not gpus:
            return result
        result["peak_memory_mib"] = max(map(sum, zip(*held.values())))
        # What the kernel held as the cell started: the read just before it, else its first
        # read (the server was not reading then). The peak less this is what the cell added: a
        # cell after the model was loaded adds nothing, though its peak is the model's.
        at_start = self.kernel.held_before(span.start, 2 * interval)
        if at_start is None:
            at_start = {gpu: column[0] for gpu, column in held.items() if column[0]}
        everything = []
        for gpu in gpus:
            name, series = self.utilization.get(gpu, (None, []))
            values = [value for value in series[reads.start : reads.stop] if value is not None]
            everything += values
            result["gpus"].append(
                {
                    "index": gpu,
                    "name": name,
                    "peak_memory_mib": max(held[gpu]),
                    "start_memory_mib": at_start.get(gpu, 0),
                    "mean_utilization": _mean(values),
                    "peak_utilization": max(values, default=None),
                }
            )
        result["mean_utilization"] = _mean(everything)
        result["peak_utilization"] = max(everything, default=None)
        return result


def _at_times(
    times: list[float], kernel_times: list[float], memory: dict[int, list[float]]
) -> dict[int, list[float]]:
    """The kernel's memory columns at the GPU history's reads: its figure at the read of the
    same time, 0 where it has none (both histories are written at every read, so their times
    are the same ones but where one of them was seeded or has aged differently)."""
    if kernel_times == times:
        return memory
    position = {timestamp: n for n, timestamp in enumerate(kernel_times)}
    at = [position.get(timestamp) for timestamp in times]
    return {gpu: [0.0 if n is None else column[n] for n in at] for gpu, column in memory.items()}
