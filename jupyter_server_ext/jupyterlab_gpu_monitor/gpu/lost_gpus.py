"""GPUs nvidia-smi can no longer reach, and the healthy GPUs read around them.

An older driver's nvidia-smi fails as a whole when one GPU fell off the bus: "Unable to determine
the device handle for GPU 0000:02:00.0: GPU is lost", and no GPU is printed. The other GPUs still
answer when asked by id (``-i``), so the source asks for them alone and shows the lost one as
lost, by its index and its bus id, with what was last read of it.
"""

from __future__ import annotations

import re
import time
from dataclasses import replace
from pathlib import Path

from .errors import GpuReadError, gpu_lost
from .model import Gpu, Snapshot

# Where the driver lists its GPUs by bus id, one folder each, lost ones included: the GPUs
# there are when this server never had a whole read.
DRIVER_GPUS = Path("/proc/driver/nvidia/gpus")
_DEVICE_HANDLE = re.compile(
    r"Unable to determine the device handle for GPU\s*"
    r"(?P<bus>[0-9A-Fa-f]+:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7])"
)
_BUS_ID = re.compile(r"^(?P<domain>[0-9A-Fa-f]+):(?P<rest>[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7])$")


def short_bus_id(bus_id: str) -> str | None:
    """A bus id as nvidia-smi's messages and ``-i`` write it, "0000:0B:00.0", from the XML's
    "00000000:0B:00.0" or the driver's "0000:0b:00.0"; None when it is not one."""
    match = _BUS_ID.match(bus_id.strip())
    if match is None:
        return None
    return f"{int(match['domain'], 16):04X}:{match['rest'].upper()}"


def lost_bus_id(error: GpuReadError) -> str | None:
    """The bus id of the GPU a failed read names as lost; None for any other failure."""
    if error.kind != "gpu_lost":
        return None
    match = _DEVICE_HANDLE.search(error.message)
    return short_bus_id(match["bus"]) if match else None


def driver_bus_ids() -> list[str]:
    """The bus ids of every GPU the driver has, lost ones included; [] without the driver."""
    try:
        names = [entry.name for entry in DRIVER_GPUS.iterdir()]
    except OSError:
        return []
    return [bus for bus in map(short_bus_id, names) if bus is not None]


class LostGpus:
    """The GPUs found lost, what was last read of every GPU, and which to ask for instead of
    all. A GPU lost stays so until a whole read, tried every ``retry_seconds``, reaches it
    again (a reset or a reboot brings it back)."""

    def __init__(self, retry_seconds: float):
        self._retry_seconds = retry_seconds
        # By short bus id, as last read: one entry per GPU of the machine.
        self._known: dict[str, Gpu] = {}
        self._lost: dict[str, Gpu] = {}
        self._lost_at = 0.0
        # The bus ids to ask for while some are lost; set when one is lost, so that no call of
        # nvidia-smi reads the driver's folder (on the event loop) again.
        self._healthy: list[str] | None = None

    @property
    def healthy(self) -> list[str] | None:
        """The bus ids to ask nvidia-smi for (``-i``); None to ask for all."""
        return self._healthy

    def retry_whole(self) -> bool:
        """Whether to try a read of all GPUs again, forgetting the lost ones if so."""
        if not self._lost or time.monotonic() - self._lost_at < self._retry_seconds:
            return False
        self._lost = {}
        self._healthy = None
        return True

    def lose(self, error: GpuReadError) -> bool:
        """Note the GPU ``error`` names as lost; False when there is none to read around (no
        such GPU named, already lost, or no other GPU known)."""
        bus = lost_bus_id(error)
        if bus is None or bus in self._lost:
            return False
        everyone = self._all_bus_ids() | {bus}
        if len(everyone) - len(self._lost) < 2:
            return False
        # NVML numbers GPUs in the order of their bus ids: the index of one never read.
        index = sorted(everyone).index(bus)
        known = self._known.get(bus, Gpu(index=index, pci_bus_id=bus))
        self._lost[bus] = replace(known, error=gpu_lost(known.index))
        self._lost_at = time.monotonic()
        self._healthy = sorted(everyone - self._lost.keys())
        return True

    def with_lost(self, snapshot: Snapshot) -> Snapshot:
        """``snapshot`` (of the healthy GPUs) with the lost ones in their places; what it read
        is remembered."""
        for gpu in snapshot.gpus:
            bus = short_bus_id(gpu.pci_bus_id or "")
            if bus is not None:
                # Who it is, not what it read: a lost GPU shows no readings.
                self._known[bus] = Gpu(
                    index=gpu.index,
                    uuid=gpu.uuid,
                    name=gpu.name,
                    pci_bus_id=gpu.pci_bus_id,
                    memory_total_mib=gpu.memory_total_mib,
                )
        if self._lost:
            snapshot.gpus = sorted([*snapshot.gpus, *self._lost.values()], key=lambda g: g.index)
        return snapshot

    def _all_bus_ids(self) -> set[str]:
        return set(self._known) | set(driver_bus_ids())
