"""The container's share of the machine: this process's cgroup, v2 or v1, read from its files.

Inside a container (Docker, Kubernetes, a Slurm job), the node's memory and cores are not what a
notebook may use: the cgroup's ``memory.max`` and ``cpu.max`` (v2), or ``memory.limit_in_bytes``
and ``cpu.cfs_quota_us`` (v1), are. Memory in use is counted as ``docker stats`` and the kubelet
count it: the cgroup's usage less its inactive file cache, which the kernel reclaims before it
kills anything.

The files are found once, from ``/proc/self/cgroup`` and ``/proc/self/mountinfo`` under a root
folder (``/`` on a live machine, a fixture tree in the tests). What is used is read at each read;
the limits, which change only when someone resizes the container, every ``LIMITS_SECONDS``.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

# More than any of the files read here holds (memory.stat: about 40 lines of counters).
_MOST_BYTES = 64 * 1024
# How long a limit read stands: `docker update --memory` or a resized pod shows within this.
LIMITS_SECONDS = 30.0

# A v1 limit at or above this is "no limit": the kernel writes PAGE_COUNTER_MAX rounded down to
# a page (9223372036854771712 on x86-64).
_V1_UNLIMITED = 2**62


@dataclass
class CgroupReading:
    """What this process's cgroup allows and uses; None where it sets no limit or says nothing."""

    version: int
    memory_limit_bytes: int | None = None
    # Usage less the inactive file cache, as `docker stats` shows it.
    memory_used_bytes: int | None = None
    swap_limit_bytes: int | None = None
    swap_used_bytes: int | None = None
    # The CPU quota in cores (cpu.max 200000 100000 is 2.0 cores).
    cpu_quota_cores: float | None = None
    # CPU time the cgroup has used since it was made, in seconds.
    cpu_usage_seconds: float | None = None


@dataclass
class _Mount:
    root: str
    mount_point: str
    fstype: str
    options: set[str]


@dataclass
class Cgroup:
    """Where this process's cgroup files are: the v2 folder, or the v1 controllers' folders."""

    version: int
    # Controller ("memory", "cpu", "cpuacct"; "" for v2) -> its folder.
    folders: dict[str, Path]
    # The limits last read, and when (time.monotonic()).
    _limits: CgroupReading | None = field(default=None, repr=False)
    _limits_at: float = field(default=0.0, repr=False)

    @staticmethod
    def locate(root: Path = Path("/")) -> Cgroup | None:
        """This process's cgroup: the v1 controllers where the memory controller is on v1 (a
        hybrid layout), else v2; None where there is none (not Linux, no cgroupfs mounted)."""
        memberships = _memberships(root)
        if memberships is None:
            return None
        mounts = _mounts(root)
        if "memory" in memberships:
            folders = {
                controller: _directory(root, memberships[controller], mounts, "cgroup", controller)
                for controller in ("memory", "cpu", "cpuacct")
                if controller in memberships
            }
            found = {name: folder for name, folder in folders.items() if folder is not None}
            return Cgroup(1, found) if "memory" in found else None
        if "" in memberships:
            folder = _directory(root, memberships[""], mounts, "cgroup2", None)
            return Cgroup(2, {"": folder}) if folder is not None else None
        return None

    def read(self, now: float | None = None) -> CgroupReading:
        """What the cgroup allows (as read within LIMITS_SECONDS) and uses now."""
        now = time.monotonic() if now is None else now
        if self._limits is None or now - self._limits_at >= LIMITS_SECONDS:
            self._limits = (
                _limits_v2(self.folders[""]) if self.version == 2 else _limits_v1(self.folders)
            )
            self._limits_at = now
        limits = self._limits
        if self.version == 2:
            return _used_v2(self.folders[""], limits)
        return _used_v1(self.folders, limits)


def _memberships(root: Path) -> dict[str, str] | None:
    """Controller -> this process's cgroup path; "" for the v2 hierarchy."""
    try:
        text = (root / "proc/self/cgroup").read_text()
    except OSError:
        return None
    memberships = {}
    for line in text.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, path = parts
        for controller in controllers.split(",") if controllers else [""]:
            memberships[controller] = path
    return memberships


def _mounts(root: Path) -> list[_Mount]:
    try:
        text = (root / "proc/self/mountinfo").read_text()
    except OSError:
        return []
    mounts = []
    for line in text.splitlines():
        # id parent major:minor root mount-point options [optional...] - fstype source super
        before, _, after = line.partition(" - ")
        fields, tail = before.split(), after.split()
        if len(fields) < 5 or len(tail) < 3:
            continue
        options = set(tail[2].split(","))
        mounts.append(_Mount(fields[3], _unescape(fields[4]), tail[0], options))
    return mounts


def _unescape(path: str) -> str:
    # mountinfo writes a space as \040, a tab as \011, a newline as \012, a backslash as \134.
    for code, character in (("\\040", " "), ("\\011", "\t"), ("\\012", "\n"), ("\\134", "\\")):
        path = path.replace(code, character)
    return path


def _directory(
    root: Path, path: str, mounts: list[_Mount], fstype: str, controller: str | None
) -> Path | None:
    """The folder of the cgroup ``path`` in the hierarchy mounted as ``fstype`` (with
    ``controller`` among its options, for v1)."""
    for mount in mounts:
        if mount.fstype != fstype or (controller and controller not in mount.options):
            continue
        # A mount of a cgroup below the root (a container without cgroup namespaces, whose
        # /proc/self/cgroup names the whole path) shows that cgroup itself.
        relative = path
        if mount.root != "/" and (path == mount.root or path.startswith(mount.root + "/")):
            relative = path[len(mount.root) :]
        return root / mount.mount_point.lstrip("/") / relative.lstrip("/")
    return None


def _text(folder: Path, name: str) -> str | None:
    # os.open and os.read: half the cost of a Path's read_text, for files read at every read.
    try:
        descriptor = os.open(folder / name, os.O_RDONLY)
    except OSError:
        return None
    try:
        return os.read(descriptor, _MOST_BYTES).decode("ascii", "replace").strip()
    except OSError:
        return None
    finally:
        os.close(descriptor)


def _int(folder: Path, name: str) -> int | None:
    value = _text(folder, name)
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def _stat(folder: Path, name: str) -> dict[str, int]:
    stats = {}
    for line in (_text(folder, name) or "").splitlines():
        key, _, value = line.partition(" ")
        if value.strip().isdigit():
            stats[key] = int(value)
    return stats


def _limit_v2(folder: Path, name: str) -> int | None:
    value = _text(folder, name)
    return int(value) if value is not None and value.isdigit() else None


def _less(total: int | None, part: int | None) -> int | None:
    return None if total is None else max(0, total - (part or 0))


def _limits_v2(folder: Path) -> CgroupReading:
    reading = CgroupReading(version=2)
    reading.memory_limit_bytes = _limit_v2(folder, "memory.max")
    reading.swap_limit_bytes = _limit_v2(folder, "memory.swap.max")
    quota, _, period = (_text(folder, "cpu.max") or "").partition(" ")
    if quota.isdigit() and period.strip().isdigit() and int(period) > 0:
        reading.cpu_quota_cores = int(quota) / int(period)
    return reading


def _used_v2(folder: Path, limits: CgroupReading) -> CgroupReading:
    reading = replace(limits)
    reading.memory_used_bytes = _less(
        _int(folder, "memory.current"), _stat(folder, "memory.stat").get("inactive_file")
    )
    reading.swap_used_bytes = _int(folder, "memory.swap.current")
    usage = _stat(folder, "cpu.stat").get("usage_usec")
    reading.cpu_usage_seconds = usage / 1e6 if usage is not None else None
    return reading


def _limits_v1(folders: dict[str, Path]) -> CgroupReading:
    reading = CgroupReading(version=1)
    memory = folders.get("memory")
    if memory is not None:
        limit = _int(memory, "memory.limit_in_bytes")
        reading.memory_limit_bytes = limit if limit is not None and limit < _V1_UNLIMITED else None
        # memsw counts memory and swap together; without swap accounting the files are absent.
        both = _int(memory, "memory.memsw.limit_in_bytes")
        if both is not None and both < _V1_UNLIMITED and reading.memory_limit_bytes is not None:
            reading.swap_limit_bytes = max(0, both - reading.memory_limit_bytes)
    cpu = folders.get("cpu")
    if cpu is not None:
        quota = _int(cpu, "cpu.cfs_quota_us")
        period = _int(cpu, "cpu.cfs_period_us")
        if quota is not None and quota > 0 and period:
            reading.cpu_quota_cores = quota / period
    return reading


def _used_v1(folders: dict[str, Path], limits: CgroupReading) -> CgroupReading:
    reading = replace(limits)
    memory = folders.get("memory")
    if memory is not None:
        usage = _int(memory, "memory.usage_in_bytes")
        reading.memory_used_bytes = _less(
            usage, _stat(memory, "memory.stat").get("total_inactive_file")
        )
        used_both = _int(memory, "memory.memsw.usage_in_bytes")
        if used_both is not None and usage is not None:
            reading.swap_used_bytes = max(0, used_both - usage)
    cpuacct = folders.get("cpuacct")
    if cpuacct is not None:
        usage = _int(cpuacct, "cpuacct.usage")
        reading.cpu_usage_seconds = usage / 1e9 if usage is not None else None
    return reading
