"""Prometheus exposition of the Sampler's latest read, for ``GET <base_url>/gpu-monitor/metrics``.

The series follow Prometheus' naming rules (base units: ratios, bytes, watts, hertz) and mirror
the DCGM exporter's fields one to one (each HELP names its ``DCGM_FI_*`` twin), so that a query,
alert or dashboard written for DCGM translates by name and a constant factor. The labels of a
GPU are ``gpu`` (index), ``uuid`` and ``name``.
"""

from __future__ import annotations

import ipaddress
import logging
import socket
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, Protocol

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.exposition import choose_encoder
from prometheus_client.registry import Collector, CollectorRegistry

from .gpu.errors import ERROR_KINDS
from .gpu.model import MIB, Gpu, Snapshot
from .gpu.prometheus import DCGM_ENGINE_ACTIVE, FIELD_SERIES
from .gpu.sampler import Sampler

log = logging.getLogger(__name__)

GPU_LABELS = ("gpu", "uuid", "name")
MIG_LABELS = (*GPU_LABELS, "gpu_i_id", "gpu_i_profile")
KERNEL_LABELS = ("kernel_id", "path", "gpu", "uuid")

# (series, Gpu field, factor from the snapshot's unit to the series' base unit, what it is)
GPU_SERIES = (
    (
        "jupyter_gpu_utilization_ratio",
        "utilization_gpu",
        0.01,
        "Fraction of the last sample period in which a kernel ran on the GPU",
    ),
    (
        "jupyter_gpu_memory_copy_utilization_ratio",
        "utilization_memory",
        0.01,
        "Fraction of the last sample period in which device memory was read or written",
    ),
    ("jupyter_gpu_memory_used_bytes", "memory_used_mib", MIB, "Device memory in use"),
    ("jupyter_gpu_memory_free_bytes", "memory_free_mib", MIB, "Device memory free"),
    ("jupyter_gpu_memory_total_bytes", "memory_total_mib", MIB, "Device memory installed"),
    ("jupyter_gpu_temperature_celsius", "temperature_c", 1, "GPU core temperature"),
    (
        "jupyter_gpu_temperature_slowdown_celsius",
        "temperature_slowdown_c",
        1,
        "Temperature from which the GPU slows its clocks to cool down",
    ),
    ("jupyter_gpu_power_usage_watts", "power_draw_w", 1, "Power draw of the board"),
    ("jupyter_gpu_power_limit_watts", "power_limit_w", 1, "Power limit of the board"),
    ("jupyter_gpu_fan_speed_ratio", "fan_speed_pct", 0.01, "Fan speed, fraction of its maximum"),
    ("jupyter_gpu_sm_clock_hertz", "sm_clock_mhz", 1e6, "Clock of the streaming multiprocessors"),
)
MIG_SERIES = (
    (
        "jupyter_gpu_mig_utilization_ratio",
        "utilization_gpu",
        0.01,
        "Fraction of time the MIG instance's graphics engine was busy "
        f"(DCGM: {DCGM_ENGINE_ACTIVE})",
    ),
    (
        "jupyter_gpu_mig_memory_used_bytes",
        "memory_used_mib",
        MIB,
        "Device memory in use in the MIG instance (DCGM: DCGM_FI_DEV_FB_USED with GPU_I_ID)",
    ),
    (
        "jupyter_gpu_mig_memory_total_bytes",
        "memory_total_mib",
        MIB,
        "Device memory of the MIG instance (DCGM: FB_USED + FB_FREE with GPU_I_ID)",
    ),
)
KERNEL_MEMORY = "jupyter_gpu_kernel_memory_used_bytes"
SOURCE_UP = "jupyter_gpu_source_up"
READS = "jupyter_gpu_reads"  # counters: the exposition adds _total
READ_ERRORS = "jupyter_gpu_read_errors"

# Every series name this endpoint can produce, as a query names it.
SERIES_NAMES = (
    *(name for name, _, _, _ in GPU_SERIES),
    *(name for name, _, _, _ in MIG_SERIES),
    KERNEL_MEMORY,
    SOURCE_UP,
    f"{READS}_total",
    f"{READ_ERRORS}_total",
)


class KernelGpuMemory(Protocol):
    """What the kernel usage callable yields: the memory one kernel holds on one GPU."""

    kernel_id: str
    path: str | None
    gpu_index: int
    gpu_uuid: str | None
    memory_used_mib: float | None


def _base_unit(value: float | None, factor: float) -> float | None:
    return None if value is None else value * factor


def _gpu_labels(gpu: Gpu) -> list[str]:
    return [str(gpu.index), gpu.uuid or "", gpu.name or ""]


class GpuCollector(Collector):
    """Turns the Sampler's latest snapshot (and this server's kernels' GPU memory) into metric
    families. It never reads the GPUs: the Sampler did, once for every client."""

    def __init__(
        self,
        sampler: Sampler,
        kernel_usage: Callable[[], Iterable[KernelGpuMemory]] | None = None,
    ):
        self._sampler = sampler
        self._kernel_usage = kernel_usage

    def collect(self) -> Iterator[Metric]:
        """The families of the latest read; GPU series only when it succeeded, since a failed
        read has no numbers (and stale ones would look current)."""
        sampler = self._sampler
        snapshot = sampler.latest
        good = snapshot is not None and snapshot.error is None
        up = GaugeMetricFamily(
            SOURCE_UP,
            "1 when the latest read of the GPUs succeeded, 0 when it failed",
            labels=["source"],
        )
        up.add_metric([sampler.source.name], 1 if good else 0)
        yield up
        yield CounterMetricFamily(
            READS, "Reads of the GPUs since the server started", sampler.reads
        )
        errors = CounterMetricFamily(
            READ_ERRORS, "Failed reads of the GPUs since the server started", labels=["kind"]
        )
        for kind in ERROR_KINDS:
            # Every kind from 0, so that increase() sees the first error of a kind.
            errors.add_metric([kind], sampler.read_errors.get(kind, 0))
        yield errors
        if good:
            assert snapshot is not None
            yield from self._gpu_families(snapshot)
            kernels = self._kernel_family()
            if kernels is not None:
                yield kernels

    @staticmethod
    def _gpu_families(snapshot: Snapshot) -> Iterator[Metric]:
        for name, field, factor, text in GPU_SERIES:
            family = GaugeMetricFamily(
                name, f"{text} (DCGM: {FIELD_SERIES[field][0]})", labels=GPU_LABELS
            )
            for gpu in snapshot.gpus:
                value = _base_unit(getattr(gpu, field), factor)
                if value is not None:
                    family.add_metric(_gpu_labels(gpu), value)
            if family.samples:
                yield family
        for name, field, factor, text in MIG_SERIES:
            family = GaugeMetricFamily(name, text, labels=MIG_LABELS)
            for gpu in snapshot.gpus:
                for device in gpu.mig_devices:
                    value = _base_unit(getattr(device, field), factor)
                    if value is not None:
                        instance = "" if device.gpu_instance_id is None else device.gpu_instance_id
                        labels = [*_gpu_labels(gpu), str(instance), device.profile or ""]
                        family.add_metric(labels, value)
            if family.samples:
                yield family

    def _kernel_family(self) -> Metric | None:
        if self._kernel_usage is None:
            return None
        memory: dict[tuple[str, str, str, str], float] = defaultdict(float)
        try:
            for entry in self._kernel_usage():
                if entry.memory_used_mib is not None:
                    labels = (entry.kernel_id, entry.path or "", str(entry.gpu_index))
                    # Summed: two rows for one kernel and GPU would be a duplicate series.
                    memory[(*labels, entry.gpu_uuid or "")] += entry.memory_used_mib
        except Exception:
            # The GPU series stand without the kernel join; the log says why it failed.
            log.exception("per-kernel GPU memory for the metrics failed")
            return None
        family = GaugeMetricFamily(
            KERNEL_MEMORY,
            "GPU memory held by a kernel of this server and its child processes",
            labels=KERNEL_LABELS,
        )
        for labels, mib in memory.items():
            family.add_metric(list(labels), mib * MIB)
        return family if family.samples else None


def render(
    sampler: Sampler,
    kernel_usage: Callable[[], Iterable[KernelGpuMemory]] | None,
    accept: str | None,
) -> tuple[bytes, str]:
    """The exposition of the latest read and its content type: OpenMetrics when the scraper
    asks for it (Prometheus does), else the text format 0.0.4."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(GpuCollector(sampler, kernel_usage))
    encoder, content_type = choose_encoder(accept or "")
    return encoder(registry), content_type


def peer_address(request: Any) -> str | None:
    """The IP address of the TCP peer a tornado request came over: the client itself, or the
    proxy in front of the server, whatever X-Forwarded-For or X-Real-IP say (tornado's
    ``remote_ip`` takes them when ``trust_xheaders`` is on). None for a Unix socket."""
    context = getattr(request.connection, "context", None)
    address = getattr(context, "address", None)
    family = getattr(context, "address_family", None)
    if family in (socket.AF_INET, socket.AF_INET6) and address:
        return address[0]
    return None


def in_networks(address: str | None, networks: Sequence[str]) -> bool:
    """Whether a client address lies in one of ``networks`` (CIDR strings)."""
    if not address or not networks:
        return False
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return False
    # A dual-stack socket reports an IPv4 client as ::ffff:a.b.c.d.
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return any(ip in ipaddress.ip_network(network, strict=False) for network in networks)
