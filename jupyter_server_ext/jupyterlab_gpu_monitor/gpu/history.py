"""The Sampler's memory: a bounded ring of readings, served as columnar deltas."""

from __future__ import annotations

import itertools
import math
import operator
import sys
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from .. import blocking
from ..machine.model import MACHINE_SERIES
from .model import Snapshot
from .readings import HISTORY_FIELDS

# One GPU at one moment, compactly: (uuid, index, name, *HISTORY_FIELDS values).
_GpuRow = tuple
# A read: its time, its GPUs, the machine's MACHINE_SERIES values (None when not read), and
# how far apart the Sampler was reading when it made it (its interval, or the period of a client
# that asks seldom: see Sampler.snapshot).
_Point = tuple[float, tuple[_GpuRow, ...], "tuple | None", float]


# A GPU's (uuid, index): the same pairs in the same order, the same GPUs.
_gpu_key = operator.itemgetter(0, 1)


def _gpu_runs(points: Sequence[_Point]) -> Iterable[tuple[int, int, tuple, tuple]]:
    """The points' GPU rows transposed at C speed (zip, slices): ``(start, end, (uuid, index),
    rows)`` for each GPU of each run of consecutive points whose GPUs are the same ones in the
    same order (one run in all, unless a GPU came or went). An hour of 8 GPUs is 576,000
    values, and a Python loop over each held the GIL that the event loop and the GPU reads need
    for a sixth of a second per panel opening (tests/test_starvation.py); between GPUs, bulk
    work gives way to a read."""
    start = 0
    for layout, run in itertools.groupby(points, lambda point: tuple(map(_gpu_key, point[1]))):
        end = start + sum(1 for _ in run)
        each_gpu = zip(*[point[1] for point in points[start:end]])
        for gpu, rows in zip(layout, each_gpu):
            blocking.give_way()
            yield start, end, gpu, rows
        start = end


def _intern(text: str | None) -> str | None:
    # The same few names and UUIDs repeat in every point: keep one copy of each.
    return sys.intern(text) if text is not None else None


class History:
    """The last ``history_seconds`` of readings; never more points than fit that span at the
    sampling interval, whatever the clock does."""

    def __init__(self, history_seconds: float, interval_seconds: float):
        self.history_seconds = history_seconds
        self.interval_seconds = interval_seconds
        self._points: deque[_Point] = deque(
            maxlen=max(1, math.ceil(history_seconds / interval_seconds))
        )

    def __len__(self) -> int:
        return len(self._points)

    @property
    def capacity(self) -> int:
        """The most points it ever holds."""
        return self._points.maxlen or 0

    def copy(self) -> History:
        """A copy to read in a worker thread while this one goes on recording (a deque may not
        change while it is iterated). The points are shared, not copied: it costs a list of
        references, made at C speed."""
        twin = History(self.history_seconds, self.interval_seconds)
        twin._points = self._points.copy()
        return twin

    def append(self, snapshot: Snapshot, spacing_seconds: float | None = None) -> None:
        """Keep a reading's numbers: a failed read's machine only (a read with neither is not
        kept). ``spacing_seconds``: how far apart reads were being made, the interval when
        None."""
        if snapshot.error is not None and snapshot.machine is None:
            return
        self._points.append(self._point(snapshot, spacing_seconds))
        horizon = snapshot.timestamp - self.history_seconds
        while self._points and self._points[0][0] < horizon:
            self._points.popleft()

    def seed(self, snapshots: Iterable[Snapshot]) -> None:
        """Put readings from before the oldest one kept in front of it: the past a source
        remembers (Prometheus), so that charts are full on first open. Only what fits the span
        and the bound is kept, newest first; nothing kept already is displaced."""
        oldest = self._points[0][0] if self._points else math.inf
        older = sorted(
            (s for s in snapshots if (s.error is None or s.machine) and s.timestamp < oldest),
            key=lambda snapshot: snapshot.timestamp,
        )
        if not older:
            return
        newest = self._points[-1][0] if self._points else older[-1].timestamp
        room = self.capacity - len(self._points)
        kept = [s for s in older if s.timestamp >= newest - self.history_seconds]
        kept = kept[-room:] if room > 0 else []
        self._points.extendleft(self._point(snapshot) for snapshot in reversed(kept))

    def _point(self, snapshot: Snapshot, spacing_seconds: float | None = None) -> _Point:
        rows = tuple(
            (_intern(gpu.uuid), gpu.index, _intern(gpu.name), *self._values(gpu))
            for gpu in snapshot.gpus
        )
        machine = snapshot.machine
        values = None if machine is None else tuple(getattr(machine, f) for f in MACHINE_SERIES)
        return (snapshot.timestamp, rows, values, spacing_seconds or self.interval_seconds)

    @staticmethod
    def _values(gpu) -> tuple:
        return tuple(getattr(gpu, name) for name in HISTORY_FIELDS)

    def since(self, since: float | None) -> dict[str, Any]:
        """The points after ``since`` (all when None), one column per GPU and field, one per
        machine field (null when no point has the machine), and each point's spacing."""
        points: list[_Point] = []
        # Clients poll for the last few points: walk back from the newest.
        for point in reversed(self._points):
            if since is not None and point[0] <= since:
                break
            points.append(point)
        points.reverse()
        count = len(points)
        columns: dict[Any, dict[str, Any]] = {}
        for start, end, (uuid, index), rows in _gpu_runs(points):
            column = columns.get(uuid or index)
            if column is None:
                column = {"index": index, "uuid": uuid, "name": rows[0][2]}
                column.update({field: [None] * count for field in HISTORY_FIELDS})
                columns[uuid or index] = column
            values = itertools.islice(zip(*rows), 3, None)
            for field, series in zip(HISTORY_FIELDS, values):
                column[field][start:end] = series
        machine: dict[str, list] | None = None
        if any(point[2] is not None for point in points):
            blank = (None,) * len(MACHINE_SERIES)
            read = zip(*(blank if point[2] is None else point[2] for point in points))
            machine = {series: list(values) for series, values in zip(MACHINE_SERIES, read)}
        return {
            "interval_seconds": self.interval_seconds,
            "history_seconds": self.history_seconds,
            "timestamps": [point[0] for point in points],
            "spacing_seconds": [point[3] for point in points],
            "gpus": sorted(columns.values(), key=lambda column: column["index"]),
            "machine": machine,
        }

    def utilization_between(
        self, start: float, end: float
    ) -> tuple[list[float], dict[int, tuple[str | None, list[float | None]]]]:
        """The reads from ``start`` to ``end`` (both included): their times and, per GPU index,
        its name and utilisation at each (None at a read it was missing from). Costs the reads
        in the span, not the whole ring."""
        points = list(
            itertools.islice(
                self._points, first_at(self._points, start), first_after(self._points, end)
            )
        )
        utilization = operator.itemgetter(3 + HISTORY_FIELDS.index("utilization_gpu"))
        gpus: dict[int, tuple[str | None, list[float | None]]] = {}
        for run_start, run_end, (_, index), rows in _gpu_runs(points):
            known = gpus.get(index)
            if known is None:
                known = gpus[index] = (rows[0][2], [None] * len(points))
            known[1][run_start:run_end] = map(utilization, rows)
        return [point[0] for point in points], gpus


def first_at(points: Sequence[tuple], timestamp: float) -> int:
    """The position of the first point at or after ``timestamp`` (a binary search)."""
    return _bisect(points, lambda time: time < timestamp)


def first_after(points: Sequence[tuple], timestamp: float) -> int:
    """The position of the first point after ``timestamp`` (a binary search)."""
    return _bisect(points, lambda time: time <= timestamp)


def _bisect(points: Sequence[tuple], before: Callable[[float], bool]) -> int:
    # bisect's key= needs Python 3.10.
    low, high = 0, len(points)
    while low < high:
        middle = (low + high) // 2
        if before(points[middle][0]):
            low = middle + 1
        else:
            high = middle
    return low
