"""The node's memory, swap and disk counters read straight from ``/proc``, as psutil reads them
on Linux, at a fraction of its cost: one ``/proc/meminfo`` for memory and swap (psutil reads it
twice, and ``/proc/vmstat`` for swap counters nobody here shows), and ``/proc/diskstats`` summed
over the whole disks, whose names (``/sys/block``) are listed once in a while instead of looked
up line by line at every read. Elsewhere (no such files) the reader falls back to psutil."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import NamedTuple

# The unit of /proc/diskstats' sector counts, whatever the disk's own sector size.
_SECTOR_BYTES = 512
# How long a listing of the whole disks stands: a disk attached shows within this.
DISKS_SECONDS = 30.0


class Memory(NamedTuple):
    """Bytes, as psutil counts them: used is total less available (swap: less free)."""

    total: int
    used: int
    swap_total: int
    swap_used: int


def read_meminfo(system_root: Path) -> Memory | None:
    """None where the file is missing or lacks a field (not Linux, a kernel before 3.14)."""
    try:
        with open(system_root / "proc/meminfo", "rb") as handle:
            text = handle.read()
    except OSError:
        return None
    kib = {}
    for line in text.splitlines():
        fields = line.split()
        if len(fields) >= 2:
            kib[fields[0]] = int(fields[1])
    try:
        total, available = kib[b"MemTotal:"], kib[b"MemAvailable:"]
        swap_total, swap_free = kib[b"SwapTotal:"], kib[b"SwapFree:"]
    except KeyError:
        return None
    used, swap_used = total - available, swap_total - swap_free
    return Memory(total * 1024, used * 1024, swap_total * 1024, swap_used * 1024)


class DiskCounters:
    """Bytes read and written by the whole disks since boot (partitions are in their disk)."""

    def __init__(self, system_root: Path):
        self._root = system_root
        self._disks: set[str] = set()
        self._listed_at: float | None = None

    def read(self, now: float | None = None) -> tuple[int, int] | None:
        """(read, written); None where there is no /proc/diskstats."""
        now = time.monotonic() if now is None else now
        if self._listed_at is None or now - self._listed_at >= DISKS_SECONDS:
            try:
                # /sys/block names a disk with "!" where its device path has "/" (cciss!c0d0).
                self._disks = {
                    name.replace("!", "/") for name in os.listdir(self._root / "sys/block")
                }
            except OSError:
                self._disks = set()
            self._listed_at = now
        try:
            with open(self._root / "proc/diskstats", "rb") as handle:
                lines = handle.read().decode("ascii", "replace").splitlines()
        except OSError:
            return None
        read = written = 0
        for line in lines:
            # major minor name reads merged sectors-read ms writes merged sectors-written ...
            fields = line.split()
            if len(fields) >= 10 and fields[2] in self._disks:
                read += int(fields[5])
                written += int(fields[9])
        return read * _SECTOR_BYTES, written * _SECTOR_BYTES
