"""Two readings of the same GPUs compared field by field: every field of the model, so that a
field added to it is compared without a change here.

GPUs are matched by UUID (else by index), processes by pid, MIG instances by index. Numbers that
move within a second (utilisation, power, clocks, memory in use) may differ by a tolerance;
everything else must be equal. A value on one side and null on the other is a difference: it
is how a reading one source misses shows up.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from jupyterlab_gpu_monitor.gpu.model import Snapshot
from jupyterlab_gpu_monitor.gpu.readings import READINGS


@dataclass(frozen=True)
class Tolerance:
    """How far two readings of a moving number may be apart: the larger of an absolute
    amount and a fraction of the larger reading."""

    absolute: float
    relative: float = 0.0

    def allows(self, left: float, right: float) -> bool:
        """Whether ``left`` and ``right`` are within this tolerance of each other."""
        allowed = max(self.absolute, self.relative * max(abs(left), abs(right)))
        return abs(left - right) <= allowed

    def describe(self) -> str:
        """'20', '25 or 15 %': for the report."""
        if not self.relative:
            return f"{self.absolute:g}"
        return f"{self.absolute:g} or {self.relative * 100:g} %"


# Readings taken up to a second apart, on a GPU that a loop keeps busy: each GPU reading's
# tolerance is in its row of the readings table (why each is what it is, there), and the
# processes' and MIG instances' memory moves as the GPU's does.
TOLERANCES = {
    **{
        reading.field: Tolerance(*reading.tolerance)
        for reading in READINGS
        if reading.tolerance is not None
    },
    "processes.used_memory_mib": Tolerance(16),
    "mig_devices.memory_used_mib": Tolerance(16),
    "mig_devices.memory_total_mib": Tolerance(1),
}

# Fields that are not readings of the GPU, with why they are left out.
NOT_COMPARED = {
    "source": "names the source itself",
    "timestamp": "when each read was made",
    "unavailable": "each source words its reasons its own way",
    # What nvidia-smi has no field for, in its CSV or its XML.
    **{
        reading.field: "NVML's alone: nvidia-smi has no such field"
        for reading in READINGS
        if not reading.smi_csv and not reading.smi_xml
    },
    # Throughput over different windows (20 ms, or between two reads): a burst of copies
    # moves it by gigabytes per second from one to the other.
    **{
        reading.field: "sampled over different windows"
        for reading in READINGS
        if reading.unit == "B/s"
    },
    "processes.visible": "set by the kernel join, not by a source",
    "processes.user": "set by the kernel join, not by a source",
    "processes.started": "set by the kernel join, not by a source",
    "processes.own": "set by the kernel join, not by a source",
    "processes.kernel_id": "set by the kernel join, not by a source",
    "processes.session_path": "set by the kernel join, not by a source",
    "processes.command": "set by the kernel join, not by a source",
    "processes.cpu_percent": "set by the kernel join, not by a source",
    "processes.host_memory_mib": "set by the kernel join, not by a source",
    "processes.utilization_gpu": "NVML's alone: nvidia-smi's reads have no such figure",
}
# Fields compared on their own terms: the lists, matched item by item below.
_LISTS = ("gpus", "processes", "mig_devices")


@dataclass(frozen=True)
class Difference:
    """One field on which two readings disagree beyond its tolerance."""

    path: str  # where: 'gpus[GPU-…].processes[pid=42].used_memory_mib'
    field: str  # which field of the model: 'processes.used_memory_mib'
    left: Any
    right: Any
    tolerance: str | None = None

    def describe(self, left_name: str, right_name: str) -> str:
        """One line for the report."""
        within = f" (tolerance {self.tolerance})" if self.tolerance else ""
        return f"{self.path}: {left_name} {self.left!r} != {right_name} {self.right!r}{within}"


@dataclass
class Comparison:
    """What comparing two readings found: the differences, the fields both sides had values
    for (``compared``), and those both left null (``null``)."""

    differences: list[Difference] = dataclasses.field(default_factory=list)
    compared: set[str] = dataclasses.field(default_factory=set)
    null: set[str] = dataclasses.field(default_factory=set)

    def to_json(self) -> dict:
        """The comparison as comparisons.json holds it."""
        return {
            "differences": [dataclasses.asdict(difference) for difference in self.differences],
            "fields_compared": sorted(self.compared),
            "fields_null": sorted(self.null - self.compared),
        }


def compare(left: Snapshot, right: Snapshot, ignore: Iterable[str] = ()) -> Comparison:
    """Every field of two snapshots compared; ``ignore`` names fields one side cannot have
    (the CSV query has no CUDA version)."""
    walk = _Walk(frozenset(ignore))
    walk.items("", "", dataclasses.asdict(left), dataclasses.asdict(right))
    return walk.result


def compare_moment(
    subject: Snapshot, neighbours: list[Snapshot], ignore: Iterable[str] = ()
) -> Comparison:
    """``subject`` against readings taken just before and just after it: a field differs only
    where it differs from every neighbour, so that a value that moved between the reads is
    not counted when the subject saw one of its two values."""
    comparisons = [compare(neighbour, subject, ignore) for neighbour in neighbours]
    paths_in_all = set.intersection(*({d.path for d in c.differences} for c in comparisons))
    first = comparisons[0]
    return Comparison(
        differences=[d for d in first.differences if d.path in paths_in_all],
        compared=set.union(*(c.compared for c in comparisons)),
        null=set.union(*(c.null for c in comparisons)),
    )


class _Walk:
    def __init__(self, ignore: frozenset[str]):
        self.ignore = ignore
        self.result = Comparison()

    def items(self, path: str, prefix: str, left: dict, right: dict) -> None:
        for name in left.keys() | right.keys():
            field = prefix + name
            if field in NOT_COMPARED or field in self.ignore:
                continue
            where = f"{path}.{name}" if path else name
            if name in _LISTS:
                self.lists(where, name, left.get(name) or [], right.get(name) or [])
            else:
                self.value(where, field, left.get(name), right.get(name))

    def lists(self, path: str, name: str, left: list[dict], right: list[dict]) -> None:
        prefix = "" if name == "gpus" else f"{name}."
        left_by_key = {_key(name, item): item for item in left}
        right_by_key = {_key(name, item): item for item in right}
        for key in sorted(left_by_key.keys() | right_by_key.keys(), key=str):
            where = f"{path}[{key}]"
            if key not in left_by_key or key not in right_by_key:
                presence = {True: "present", False: "missing"}
                self.result.differences.append(
                    Difference(
                        where, name, presence[key in left_by_key], presence[key in right_by_key]
                    )
                )
                continue
            self.items(where, prefix, left_by_key[key], right_by_key[key])

    def value(self, path: str, field: str, left: Any, right: Any) -> None:
        if left is None and right is None:
            self.result.null.add(field)
            return
        if left is not None and right is not None:
            self.result.compared.add(field)
        tolerance = TOLERANCES.get(field)
        numbers = isinstance(left, (int, float)) and isinstance(right, (int, float))
        if tolerance is not None and numbers:
            if not tolerance.allows(left, right):
                self.result.differences.append(
                    Difference(path, field, left, right, tolerance.describe())
                )
        elif left != right:
            self.result.differences.append(Difference(path, field, left, right))


def _key(name: str, item: dict) -> str:
    if name == "gpus":
        return item.get("uuid") or f"index={item.get('index')}"
    if name == "processes":
        return f"pid={item.get('pid')}"
    return f"index={item.get('index')}"
