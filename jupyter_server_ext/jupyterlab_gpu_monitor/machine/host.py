"""The machine at one read: CPU, memory, swap, disk and network throughput, and the free space
where the notebooks are.

CPU and memory are the container's where its cgroup limits them (the share a notebook may use,
not the node's), the host's otherwise, and each reading says which (``cpu_scope``,
``memory_scope``). Disk and network throughput come from the counters this process sees: the
node's disks, and the network interfaces of its network namespace (a container's own).
"""

from __future__ import annotations

import math
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

import psutil

from .cgroup import Cgroup, CgroupReading
from .model import MIB, MachineReading, rate_seconds
from .proc_files import DiskCounters, Memory, read_meminfo


@dataclass
class _Counters:
    at: float
    cpu_seconds: float | None
    disk: tuple[int, int] | None
    network: tuple[int, int] | None


class MachineReader:
    """Reads the machine; remembers the counters of the read before, for rates. Blocking (reads
    /proc and /sys): call it off the event loop."""

    def __init__(
        self,
        root_dir: str,
        system_root: Path = Path("/"),
        max_rate_seconds: float = math.inf,
    ):
        self._root_dir = root_dir
        self._system_root = system_root
        self._cgroup = Cgroup.locate(system_root)
        self._disks = DiskCounters(system_root)
        self._previous: _Counters | None = None
        # Rates over a longer time than this are none (see model.rate_window).
        self._max_rate_seconds = max_rate_seconds

    def read(self) -> MachineReading:
        """The machine now."""
        now = time.monotonic()
        cgroup = self._cgroup.read(now) if self._cgroup is not None else None
        memory = read_meminfo(self._system_root)
        disk = self._disks.read(now)
        if disk is None:
            disk = _counter_pair(psutil.disk_io_counters, "read_bytes", "write_bytes")
        counters = _Counters(
            at=now,
            cpu_seconds=cgroup.cpu_usage_seconds if cgroup is not None else None,
            disk=disk,
            network=_counter_pair(psutil.net_io_counters, "bytes_recv", "bytes_sent"),
        )
        previous, self._previous = self._previous, counters
        since = previous.at if previous is not None else None
        elapsed = rate_seconds(since, now, self._max_rate_seconds)
        if elapsed is None:
            previous = None
        # Each core's use since the call before; the first call has nothing to measure.
        per_core = psutil.cpu_percent(percpu=True)
        if previous is None:
            per_core = []
        reading = MachineReading(
            cpu_scope="host",
            cpu_percent=sum(per_core) / len(per_core) if per_core else None,
            cpu_cores=float(psutil.cpu_count() or 1),
            cpu_core_percents=per_core,
            memory_scope="host",
            memory_used_mib=None,
            memory_total_mib=None,
            swap_used_mib=None,
            swap_total_mib=None,
            disk_read_bytes_per_second=_rate(previous and previous.disk, counters.disk, 0, elapsed),
            disk_write_bytes_per_second=_rate(
                previous and previous.disk, counters.disk, 1, elapsed
            ),
            network_received_bytes_per_second=_rate(
                previous and previous.network, counters.network, 0, elapsed
            ),
            network_sent_bytes_per_second=_rate(
                previous and previous.network, counters.network, 1, elapsed
            ),
            root_dir=self._root_dir,
            root_dir_free_mib=None,
            root_dir_total_mib=None,
        )
        total = _fill_memory(reading, memory)
        self._fill_root_dir(reading)
        if cgroup is not None:
            _limit_to_container(reading, cgroup, total, previous, counters, elapsed)
        return reading

    def _fill_root_dir(self, reading: MachineReading) -> None:
        try:
            usage = shutil.disk_usage(os.path.expanduser(self._root_dir))
        except OSError as error:
            reading.unavailable["root_dir_free_mib"] = error.strerror or str(error)
            return
        reading.root_dir_free_mib = usage.free / MIB
        reading.root_dir_total_mib = usage.total / MIB


def _fill_memory(reading: MachineReading, memory: Memory | None) -> int:
    """The node's memory and swap, from /proc/meminfo, else psutil's; its total in bytes."""
    if memory is not None:
        reading.memory_used_mib = memory.used / MIB
        reading.memory_total_mib = memory.total / MIB
        reading.swap_used_mib = memory.swap_used / MIB
        reading.swap_total_mib = memory.swap_total / MIB
        return memory.total
    host = psutil.virtual_memory()
    reading.memory_used_mib = (host.total - host.available) / MIB
    reading.memory_total_mib = host.total / MIB
    try:
        swap = psutil.swap_memory()
    except (OSError, RuntimeError) as error:  # no /proc/swaps, some containers
        reading.unavailable["swap_used_mib"] = str(error)
        return host.total
    reading.swap_used_mib = swap.used / MIB
    reading.swap_total_mib = swap.total / MIB
    return host.total


def _limit_to_container(
    reading: MachineReading,
    cgroup: CgroupReading,
    host_memory_bytes: int,
    previous: _Counters | None,
    counters: _Counters,
    elapsed: float | None,
) -> None:
    """The container's figures where its cgroup limits it below the node."""
    host_cores = reading.cpu_cores
    if cgroup.cpu_quota_cores is not None and cgroup.cpu_quota_cores < host_cores:
        reading.cpu_scope = "container"
        reading.cpu_cores = cgroup.cpu_quota_cores
        reading.cpu_percent = None
        if previous is not None and previous.cpu_seconds is not None and elapsed:
            spent = (counters.cpu_seconds or 0) - previous.cpu_seconds
            reading.cpu_percent = max(0.0, 100 * spent / elapsed / cgroup.cpu_quota_cores)
    limit = cgroup.memory_limit_bytes
    if limit is not None and limit < host_memory_bytes and cgroup.memory_used_bytes is not None:
        reading.memory_scope = "container"
        reading.memory_used_mib = cgroup.memory_used_bytes / MIB
        reading.memory_total_mib = limit / MIB
        # The container's swap where the cgroup accounts for it; none is no swap for it.
        reading.swap_used_mib = (cgroup.swap_used_bytes or 0) / MIB
        reading.swap_total_mib = (cgroup.swap_limit_bytes or 0) / MIB


def _counter_pair(read, first: str, second: str) -> tuple[int, int] | None:
    """Two of psutil's byte counters (in, out); None where the system has none (no disks in
    /proc/diskstats, some containers)."""
    try:
        counters = read()
    except (OSError, RuntimeError):
        return None
    return None if counters is None else (getattr(counters, first), getattr(counters, second))


def _rate(
    before: tuple[int, int] | None,
    now: tuple[int, int] | None,
    position: int,
    elapsed: float | None,
) -> float | None:
    if before is None or now is None or not elapsed:
        return None
    # A counter that went back (a disk removed, a wrapped counter) gives no rate.
    change = now[position] - before[position]
    return change / elapsed if change >= 0 else None
