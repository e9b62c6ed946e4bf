"""PCIe and NVLink throughput through NVML, without holding a read on a sampling window.

NVML's byte counters (PCIe's in recent drivers, NVLink's on every NVLink GPU) are read with
the other figures, in one ``nvmlDeviceGetFieldValues`` call per GPU, and a rate is
the difference from the previous read. Where the PCIe counters are not supported,
``nvmlDeviceGetPcieThroughput`` is the only way, and it blocks 20 ms per direction while it
samples the bus: it is asked at most every ``PCIE_SAMPLE_SECONDS`` and its figure kept between.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Callable

from ..machine.model import rate_seconds
from .model import KIB, Gpu

# NvmlSource._field: one guarded NVML call, None when the device does not support it.
FieldReader = Callable[..., Any]

# nvml.h's field ids, fixed in its ABI (older bindings lack some of the names).
_PCIE_TX_BYTES = 197  # NVML_FI_DEV_PCIE_COUNT_TX_BYTES
_PCIE_RX_BYTES = 198  # NVML_FI_DEV_PCIE_COUNT_RX_BYTES
_NVLINK_TX_KIB = 138  # NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX, data payload in KiB
_NVLINK_RX_KIB = 139  # NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX
# The scope of an NVLink throughput field that sums every link of the GPU.
_ALL_LINKS = 0xFFFFFFFF
# (Gpu field, field id, scope, bytes per unit): each counter read, in one call per GPU.
COUNTERS = (
    ("pcie_sent_bytes_per_second", _PCIE_TX_BYTES, 0, 1),
    ("pcie_received_bytes_per_second", _PCIE_RX_BYTES, 0, 1),
    ("nvlink_sent_bytes_per_second", _NVLINK_TX_KIB, _ALL_LINKS, KIB),
    ("nvlink_received_bytes_per_second", _NVLINK_RX_KIB, _ALL_LINKS, KIB),
)
# How often the 20 ms PCIe sample is taken where the counters are not there.
PCIE_SAMPLE_SECONDS = 10.0
_SUCCESS = 0
# The sampled PCIe throughput's nvmlPcieUtilCounter_t by Gpu field; its unit is KB/s (as
# nvidia-smi prints it; KiB, as NVLink's).
_PCIE_UTIL = {"pcie_sent_bytes_per_second": 0, "pcie_received_bytes_per_second": 1}
_GPU_IS_LOST = 15


@dataclass
class _Count:
    value: int
    timestamp_us: int


@dataclass
class _PcieSample:
    taken_at: float  # time.monotonic()
    sent: float | None
    received: float | None


class LinkThroughput:
    """Turns each GPU's counters into rates across reads; one per NVML source."""

    def __init__(self, nvml: ModuleType, max_rate_seconds: float = math.inf):
        self._nvml = nvml
        # Counters further apart than this give no rate (see machine.model.rate_window).
        self._max_rate_seconds = max_rate_seconds
        self._counts: dict[tuple[str, str], _Count] = {}
        self._pcie_samples: dict[str, _PcieSample] = {}

    def fill(self, gpu: Gpu, handle: Any, field: FieldReader) -> None:
        """Set the GPU's four throughputs: null when the GPU has no such link or counter, and
        on the first read, which has nothing to take a difference from."""
        key = gpu.uuid or str(gpu.index)
        counts = self._read_counters(handle)
        for (attribute, _, _, unit), count in zip(COUNTERS, counts):
            setattr(gpu, attribute, self._rate(key, attribute, count, unit))
        counted = {
            attribute for (attribute, *_), count in zip(COUNTERS, counts) if count is not None
        }
        if not counted & _PCIE_UTIL.keys():
            sample = self._pcie_sample(key, gpu, handle, field)
            gpu.pcie_sent_bytes_per_second = sample.sent
            gpu.pcie_received_bytes_per_second = sample.received

    def _read_counters(self, handle: Any) -> list[_Count | None]:
        nvml = self._nvml
        fields = [(field_id, scope) for _, field_id, scope, _ in COUNTERS]
        try:
            values = nvml.nvmlDeviceGetFieldValues(handle, fields)
        except nvml.NVMLError as error:
            if error.value == _GPU_IS_LOST:
                raise
            return [None] * len(COUNTERS)  # a driver or binding without field values
        return [
            _Count(int(value.value.ullVal), int(value.timestamp))
            if value.nvmlReturn == _SUCCESS
            else None
            for value in values
        ]

    def _rate(self, key: str, attribute: str, count: _Count | None, unit: int) -> float | None:
        if count is None:
            self._counts.pop((key, attribute), None)
            return None
        previous = self._counts.get((key, attribute))
        self._counts[(key, attribute)] = count
        if previous is None or count.value < previous.value:
            return None  # the first count, or the counter was reset (a driver reload)
        seconds = rate_seconds(
            previous.timestamp_us / 1e6, count.timestamp_us / 1e6, self._max_rate_seconds
        )
        if seconds is None:
            return None
        return (count.value - previous.value) * unit / seconds

    def _pcie_sample(self, key: str, gpu: Gpu, handle: Any, field: FieldReader) -> _PcieSample:
        now = time.monotonic()
        sample = self._pcie_samples.get(key)
        if sample is not None and now - sample.taken_at < PCIE_SAMPLE_SECONDS:
            return sample
        sampled = [
            field(gpu, attribute, self._nvml.nvmlDeviceGetPcieThroughput, handle, counter)
            for attribute, counter in _PCIE_UTIL.items()
        ]
        sent, received = (None if kb is None else kb * KIB for kb in sampled)
        sample = _PcieSample(now, sent, received)
        self._pcie_samples[key] = sample
        return sample
