"""The machine at one read, in the units of the REST contract: percent, MiB, bytes per second."""

from __future__ import annotations

from dataclasses import dataclass, field

# Bytes in a MiB.
MIB = 1024 * 1024


def rate_window(interval_seconds: float) -> float:
    """The longest time between two reads over which a rate (CPU %, bytes per second) is still
    the current one: a few intervals, for a slow read, but not the pause of a Sampler that
    nobody watched, whose average would be shown, kept and exported as the present."""
    return max(3 * interval_seconds, 5.0)


def rate_seconds(since: float | None, now: float, window: float) -> float | None:
    """The time a rate from ``since`` to ``now`` is taken over; None where there is none: no
    ``since``, ``now`` not after it, or a time longer than ``window`` (see ``rate_window``).
    The one rule of every rate the server reports: the machine's, each kernel's and
    process's CPU, the GPUs' link throughput."""
    if since is None or now <= since or now - since > window:
        return None
    return now - since


@dataclass
class MachineReading:
    """The machine at one read, in the units of the REST contract; None where unknown."""

    # "container": the cgroup's limit and use; "host": the node's.
    cpu_scope: str
    # CPU in use, in percent of ``cpu_cores``; None at the first read.
    cpu_percent: float | None
    # The cores the scope has: the container's quota, or the node's logical CPUs.
    cpu_cores: float
    # Each logical CPU of the node, in percent; empty at the first read.
    cpu_core_percents: list[float]
    memory_scope: str
    memory_used_mib: float | None
    memory_total_mib: float | None
    swap_used_mib: float | None
    swap_total_mib: float | None
    # Bytes per second since the read before; None at the first read.
    disk_read_bytes_per_second: float | None
    disk_write_bytes_per_second: float | None
    network_received_bytes_per_second: float | None
    network_sent_bytes_per_second: float | None
    # The folder the notebooks are in (the server's root_dir) and its file system's room.
    root_dir: str
    root_dir_free_mib: float | None
    root_dir_total_mib: float | None
    # Why a reading is None, where it is known.
    unavailable: dict[str, str] = field(default_factory=dict)


# The machine's numbers the history keeps at each read, in this order.
MACHINE_SERIES = (
    "cpu_percent",
    "memory_used_mib",
    "memory_total_mib",
    "swap_used_mib",
    "disk_read_bytes_per_second",
    "disk_write_bytes_per_second",
    "network_received_bytes_per_second",
    "network_sent_bytes_per_second",
)
