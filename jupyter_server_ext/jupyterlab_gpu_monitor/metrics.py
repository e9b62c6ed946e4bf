"""Prometheus exposition of the Sampler's latest read, for ``GET <base_url>/gpu-monitor/metrics``.

The series follow Prometheus' naming rules (base units: ratios, bytes, watts, hertz). The GPU
series mirror the DCGM exporter's fields one to one (each HELP names its ``DCGM_FI_*`` twin), so
that a query, alert or dashboard written for DCGM translates by name and a constant factor; the
machine's name their node-exporter (or cAdvisor, for a container) twins. The labels of a GPU are
``gpu`` (index), ``uuid``, ``name`` and ``host`` (so that a lab's Prometheus finds one GPU that
several servers of a machine report); of the machine's, ``scope`` (``container`` or ``host``);
of a kernel's, ``kernel_id``, ``notebook`` (as ``GpuMonitor.metrics_notebook_label`` says),
``host`` and ``user``. The notebooks' GPU ledger (``kernel/ledger.py``) is a set of counters per
notebook and GPU, for the lab's GPU-hours.
"""

from __future__ import annotations

import getpass
import ipaddress
import logging
import os
import socket
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.exposition import choose_encoder
from prometheus_client.registry import Collector, CollectorRegistry

from ._version import __version__
from .gpu.clock_events import CLOCK_EVENT_BITS
from .gpu.errors import ERROR_KINDS
from .gpu.model import MIB, Gpu, Snapshot
from .gpu.readings import DCGM_ENGINE_ACTIVE, READINGS, Reading
from .gpu.sampler import Sampler
from .kernel.ledger import NotebookGpuAccount, notebook_label
from .kernel.usage import KernelUse
from .machine.model import MachineReading

log = logging.getLogger(__name__)

GPU_LABELS = ("gpu", "uuid", "name", "host")
MIG_LABELS = (*GPU_LABELS, "gpu_i_id", "gpu_i_profile")
KERNEL_MACHINE_LABELS = ("kernel_id", "notebook", "host", "user")
KERNEL_LABELS = (*KERNEL_MACHINE_LABELS, "gpu", "uuid")
LEDGER_LABELS = ("notebook", "host", "user", "gpu", "uuid")

# The readings /metrics exports as they are: each as its ``metric`` series (a counter where the
# reading only grows), times its ``metric_factor`` to the series' base unit, with its help and
# DCGM's name for it.
GPU_SERIES = tuple(
    reading for reading in READINGS if reading.metric is not None and reading.kind == "gauge"
)


def series_name(reading: Reading) -> str:
    """A reading's series as a query names it: the exposition adds ``_total`` to a counter."""
    return f"{reading.metric}_total" if reading.counter else str(reading.metric)


# Readings DCGM gives as a sum or a code: (series, Gpu field, what it is and its twin).
_DCGM_OF_CODED = {"sum": " + ", "any": ", ", "pstate": ", "}
GPU_CODED_SERIES = tuple(
    (
        reading.metric,
        reading.field,
        f"{reading.help} (DCGM: {_DCGM_OF_CODED[reading.kind].join(reading.dcgm)})",
    )
    for reading in READINGS
    if reading.metric is not None and reading.kind in _DCGM_OF_CODED
)
CLOCK_EVENT_REASON = "jupyter_gpu_clock_event_reason"
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
# (series, MachineReading field, factor to the base unit, its scope field, what it is and its
# twin)
MACHINE_SERIES = (
    (
        "jupyter_machine_cpu_utilization_ratio",
        "cpu_percent",
        0.01,
        "cpu_scope",
        "CPU in use, fraction of the scope's cores (node-exporter: 1 - the idle share of "
        "node_cpu_seconds_total; cAdvisor: container_cpu_usage_seconds_total's rate / quota)",
    ),
    (
        "jupyter_machine_cpu_cores",
        "cpu_cores",
        1,
        "cpu_scope",
        "Cores of the scope: the container's CPU quota, or the node's logical CPUs "
        "(cAdvisor: container_spec_cpu_quota / container_spec_cpu_period)",
    ),
    (
        "jupyter_machine_memory_used_bytes",
        "memory_used_mib",
        MIB,
        "memory_scope",
        "Memory in use (node-exporter: node_memory_MemTotal_bytes - node_memory_MemAvailable_bytes;"
        " cAdvisor: container_memory_working_set_bytes)",
    ),
    (
        "jupyter_machine_memory_total_bytes",
        "memory_total_mib",
        MIB,
        "memory_scope",
        "Memory there is: the container's limit or the node's memory (node-exporter: "
        "node_memory_MemTotal_bytes; cAdvisor: container_spec_memory_limit_bytes)",
    ),
    (
        "jupyter_machine_swap_used_bytes",
        "swap_used_mib",
        MIB,
        "memory_scope",
        "Swap in use (node-exporter: node_memory_SwapTotal_bytes - node_memory_SwapFree_bytes)",
    ),
    (
        "jupyter_machine_swap_total_bytes",
        "swap_total_mib",
        MIB,
        "memory_scope",
        "Swap there is (node-exporter: node_memory_SwapTotal_bytes)",
    ),
)
# Throughput between the last two reads, per second (node-exporter: the rate of its counter).
MACHINE_RATES = (
    (
        "jupyter_machine_disk_read_bytes_per_second",
        "disk_read_bytes_per_second",
        "Read from the node's disks (node-exporter: rate(node_disk_read_bytes_total))",
    ),
    (
        "jupyter_machine_disk_written_bytes_per_second",
        "disk_write_bytes_per_second",
        "Written to the node's disks (node-exporter: rate(node_disk_written_bytes_total))",
    ),
    (
        "jupyter_machine_network_receive_bytes_per_second",
        "network_received_bytes_per_second",
        "Received on the server's network interfaces "
        "(node-exporter: rate(node_network_receive_bytes_total))",
    ),
    (
        "jupyter_machine_network_transmit_bytes_per_second",
        "network_sent_bytes_per_second",
        "Sent on the server's network interfaces "
        "(node-exporter: rate(node_network_transmit_bytes_total))",
    ),
)
FILESYSTEM_FREE = "jupyter_machine_filesystem_avail_bytes"
FILESYSTEM_SIZE = "jupyter_machine_filesystem_size_bytes"
KERNEL_CPU = "jupyter_kernel_cpu_utilization_ratio"
KERNEL_RESIDENT = "jupyter_kernel_memory_resident_bytes"
KERNEL_MEMORY = "jupyter_gpu_kernel_memory_used_bytes"
KERNEL_IDLE_HELD = "jupyter_gpu_kernel_idle_held_seconds"
SERVER_INFO = "jupyter_server_info"
LEDGER_BUSY = "jupyter_notebook_gpu_busy_seconds"  # counters: the exposition adds _total
LEDGER_IDLE_HELD = "jupyter_notebook_gpu_idle_held_seconds"
LEDGER_ENERGY = "jupyter_notebook_gpu_energy_joules"
LEDGER_PEAK = "jupyter_notebook_gpu_memory_peak_bytes"
SOURCE_UP = "jupyter_gpu_source_up"
READS = "jupyter_gpu_reads"  # counters: the exposition adds _total
READ_ERRORS = "jupyter_gpu_read_errors"

# Every series name this endpoint can produce, as a query names it.
SERIES_NAMES = (
    *(series_name(reading) for reading in GPU_SERIES),
    *(name for name, _, _ in GPU_CODED_SERIES),
    CLOCK_EVENT_REASON,
    *(name for name, _, _, _ in MIG_SERIES),
    *(name for name, *_ in MACHINE_SERIES),
    *(name for name, *_ in MACHINE_RATES),
    FILESYSTEM_FREE,
    FILESYSTEM_SIZE,
    KERNEL_CPU,
    KERNEL_RESIDENT,
    KERNEL_MEMORY,
    KERNEL_IDLE_HELD,
    SERVER_INFO,
    f"{LEDGER_BUSY}_total",
    f"{LEDGER_IDLE_HELD}_total",
    f"{LEDGER_ENERGY}_total",
    LEDGER_PEAK,
    SOURCE_UP,
    f"{READS}_total",
    f"{READ_ERRORS}_total",
)


@dataclass(frozen=True)
class ServerIdentity:
    """Who this server is to a lab's Prometheus: its machine and its user, and how it names
    notebooks."""

    host: str
    user: str
    notebook_label: str = "hash"

    @classmethod
    def of(cls, host: str = "", user: str = "", notebook_label: str = "hash") -> ServerIdentity:
        """The identity the settings give, this machine's host name and this server's user
        where they leave it empty."""
        return cls(host or socket.gethostname(), user or _server_user(), notebook_label)

    def notebook(self, path: str | None) -> str:
        return notebook_label(path, self.notebook_label)


def _server_user() -> str:
    """The JupyterHub user the server runs for, else the user it runs as (its uid where the
    system has no name for it, as in a container started with an arbitrary uid)."""
    try:
        return os.environ.get("JUPYTERHUB_USER") or getpass.getuser()
    except (KeyError, OSError):
        return str(os.getuid())


class KernelMachineUse(Protocol):
    """What the kernel machine use callable yields: one kernel's CPU and memory."""

    kernel_id: str
    path: str | None
    use: KernelUse


class KernelGpuMemory(Protocol):
    """What the kernel usage callable yields: the memory one kernel holds on one GPU."""

    kernel_id: str
    path: str | None
    gpu_index: int
    gpu_uuid: str | None
    memory_used_mib: float | None


def _base_unit(value: float | None, factor: float) -> float | None:
    return None if value is None else value * factor


def _coded_value(value: str | bool | int | None) -> int | None:
    """'P8' -> 8, True -> 1, a count as it is."""
    if isinstance(value, str):
        return int(value.removeprefix("P"))
    return None if value is None else int(value)


def _gpu_labels(gpu: Gpu, host: str) -> list[str]:
    return [str(gpu.index), gpu.uuid or "", gpu.name or "", host]


def _per_gpu_family(
    family: GaugeMetricFamily | CounterMetricFamily,
    readings: Iterable[tuple[Gpu, float | None]],
    host: str,
) -> Iterator[Metric]:
    """The family (labelled by GPU) with a sample per GPU that has a value; nothing when none
    has."""
    for gpu, value in readings:
        if value is not None:
            family.add_metric(_gpu_labels(gpu, host), value)
    if family.samples:
        yield family


class GpuCollector(Collector):
    """Turns the Sampler's latest snapshot (and this server's kernels' GPU memory) into metric
    families. It never reads the GPUs: the Sampler did, once for every client."""

    def __init__(
        self,
        sampler: Sampler,
        kernel_usage: Callable[[], Iterable[KernelGpuMemory]] | None = None,
        kernel_machine: Callable[[], Iterable[KernelMachineUse]] | None = None,
        identity: ServerIdentity | None = None,
        ledger: Callable[[], Iterable[NotebookGpuAccount]] | None = None,
        idle_held: Callable[[], Mapping[tuple[str, int], float]] | None = None,
    ):
        self._sampler = sampler
        self._kernel_usage = kernel_usage
        self._kernel_machine = kernel_machine
        self._identity = identity or ServerIdentity.of()
        self._ledger = ledger
        # (kernel id, GPU index) -> since when the kernel holds that GPU idle.
        self._idle_held = idle_held

    def collect(self) -> Iterator[Metric]:
        """The families of the latest read; GPU series only when it succeeded, since a failed
        read has no numbers (and stale ones would look current); the machine's and the
        kernels' whatever the GPUs did."""
        sampler = self._sampler
        snapshot = sampler.latest
        good = snapshot is not None and snapshot.error is None
        identity = self._identity
        info = GaugeMetricFamily(
            SERVER_INFO,
            "1: the machine and the user of this Jupyter server, and the extension's version",
            labels=["host", "user", "version"],
        )
        info.add_metric([identity.host, identity.user, __version__], 1)
        yield info
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
        if snapshot is not None and snapshot.machine is not None:
            yield from _machine_families(snapshot.machine)
        yield from self._kernel_machine_families()
        yield from self._ledger_families()
        if good:
            assert snapshot is not None
            yield from self._gpu_families(snapshot)
            yield from self._kernel_families(snapshot.timestamp)

    def _ledger_families(self) -> Iterator[Metric]:
        if self._ledger is None:
            return
        held = "by its share of the GPU's memory in use"
        busy = CounterMetricFamily(
            LEDGER_BUSY,
            "Seconds a notebook's kernels held at least the held-memory rule's MiB on a GPU at "
            f"or above the low-utilisation threshold, {held}",
            labels=LEDGER_LABELS,
        )
        idle = CounterMetricFamily(
            LEDGER_IDLE_HELD,
            "Seconds a notebook's kernels held at least the held-memory rule's MiB on a GPU "
            f"under the low-utilisation threshold (idle-held), {held}",
            labels=LEDGER_LABELS,
        )
        energy = CounterMetricFamily(
            LEDGER_ENERGY,
            f"Energy of a GPU while a notebook's kernels held memory there, {held}; "
            'estimated="true" where the GPU has no energy counter (power times time)',
            labels=[*LEDGER_LABELS, "estimated"],
        )
        peak = GaugeMetricFamily(
            LEDGER_PEAK,
            "The most GPU memory a notebook's kernels held on a GPU since this server started",
            labels=LEDGER_LABELS,
        )
        host, user = self._identity.host, self._identity.user
        for account in self._ledger():
            labels = [account.notebook, host, user, str(account.gpu_index), account.gpu_uuid]
            busy.add_metric(labels, account.busy_seconds)
            idle.add_metric(labels, account.idle_held_seconds)
            estimated = "true" if account.energy_estimated else "false"
            energy.add_metric([*labels, estimated], account.energy_joules)
            peak.add_metric(labels, account.peak_memory_mib * MIB)
        yield from (family for family in (busy, idle, energy, peak) if family.samples)

    def _kernel_machine_families(self) -> Iterator[Metric]:
        if self._kernel_machine is None:
            return
        try:
            uses = list(self._kernel_machine())
        except Exception:
            # The other series stand; the log says why these failed.
            log.exception("per-kernel CPU and memory for the metrics failed")
            return
        cpu = GaugeMetricFamily(
            KERNEL_CPU,
            "CPU used by a kernel of this server and the processes it started, fraction of one "
            "core (like the rate of process_cpu_seconds_total)",
            labels=KERNEL_MACHINE_LABELS,
        )
        resident = GaugeMetricFamily(
            KERNEL_RESIDENT,
            "Resident memory of a kernel of this server and the processes it started "
            "(like process_resident_memory_bytes)",
            labels=KERNEL_MACHINE_LABELS,
        )
        identity = self._identity
        for entry in uses:
            names = [entry.kernel_id, identity.notebook(entry.path), identity.host, identity.user]
            if entry.use.cpu_percent is not None:
                cpu.add_metric(names, entry.use.cpu_percent / 100)
            resident.add_metric(names, entry.use.memory_rss_mib * MIB)
        yield from (family for family in (cpu, resident) if family.samples)

    def _gpu_families(self, snapshot: Snapshot) -> Iterator[Metric]:
        gpus = snapshot.gpus
        host = self._identity.host
        for reading in GPU_SERIES:
            values = (
                _base_unit(getattr(gpu, reading.field), reading.metric_factor) for gpu in gpus
            )
            text = f"{reading.help} (DCGM: {reading.dcgm[0]})"
            family = CounterMetricFamily if reading.counter else GaugeMetricFamily
            yield from _per_gpu_family(
                family(str(reading.metric), text, labels=GPU_LABELS), zip(gpus, values), host
            )
        for name, field, text in GPU_CODED_SERIES:
            values = (_coded_value(getattr(gpu, field)) for gpu in gpus)
            family = GaugeMetricFamily(name, text, labels=GPU_LABELS)
            yield from _per_gpu_family(family, zip(gpus, values), host)
        reasons = GaugeMetricFamily(
            CLOCK_EVENT_REASON,
            "1 while the reason holds the GPU's clocks down, else 0 (DCGM: a bit of "
            "DCGM_FI_DEV_CLOCKS_EVENT_REASONS, formerly DCGM_FI_DEV_CLOCK_THROTTLE_REASONS)",
            labels=[*GPU_LABELS, "reason"],
        )
        for gpu in snapshot.gpus:
            if gpu.clock_throttle_reasons is None:
                continue
            for _bit, reason in CLOCK_EVENT_BITS:
                active = 1 if reason in gpu.clock_throttle_reasons else 0
                reasons.add_metric([*_gpu_labels(gpu, host), reason], active)
        if reasons.samples:
            yield reasons
        for name, field, factor, text in MIG_SERIES:
            family = GaugeMetricFamily(name, text, labels=MIG_LABELS)
            for gpu in snapshot.gpus:
                for device in gpu.mig_devices:
                    value = _base_unit(getattr(device, field), factor)
                    if value is not None:
                        instance = "" if device.gpu_instance_id is None else device.gpu_instance_id
                        labels = [*_gpu_labels(gpu, host), str(instance), device.profile or ""]
                        family.add_metric(labels, value)
            if family.samples:
                yield family

    def _kernel_families(self, now: float) -> Iterator[Metric]:
        """Each kernel's GPU memory per GPU, and how long it has held a GPU idle (as of the
        read at ``now``)."""
        if self._kernel_usage is None:
            return
        identity = self._identity
        memory: dict[tuple[str, ...], float] = defaultdict(float)
        idle_held: dict[tuple[str, ...], float] = {}
        try:
            since = self._idle_held() if self._idle_held is not None else {}
            for entry in self._kernel_usage():
                if entry.memory_used_mib is not None:
                    kernel = (entry.kernel_id, identity.notebook(entry.path))
                    gpu = (str(entry.gpu_index), entry.gpu_uuid or "")
                    labels = (*kernel, identity.host, identity.user, *gpu)
                    # Summed: two rows for one kernel and GPU would be a duplicate series.
                    memory[labels] += entry.memory_used_mib
                    held_since = since.get((entry.kernel_id, entry.gpu_index))
                    if held_since is not None:
                        idle_held[labels] = now - held_since
        except Exception:
            # The GPU series stand without the kernel join; the log says why it failed.
            log.exception("per-kernel GPU memory for the metrics failed")
            return
        family = GaugeMetricFamily(
            KERNEL_MEMORY,
            "GPU memory held by a kernel of this server and its child processes",
            labels=KERNEL_LABELS,
        )
        for labels, mib in memory.items():
            family.add_metric(list(labels), mib * MIB)
        held = GaugeMetricFamily(
            KERNEL_IDLE_HELD,
            "How long a kernel of this server has held a GPU idle: at least the held-memory "
            "rule's memory there, the GPU under the low-utilisation rule and the kernel idle",
            labels=KERNEL_LABELS,
        )
        for labels, seconds in idle_held.items():
            held.add_metric(list(labels), seconds)
        yield from (each for each in (family, held) if each.samples)


def _machine_families(machine: MachineReading) -> Iterator[Metric]:
    for name, field, factor, scope, text in MACHINE_SERIES:
        value = _base_unit(getattr(machine, field), factor)
        if value is not None:
            family = GaugeMetricFamily(name, text, labels=["scope"])
            family.add_metric([getattr(machine, scope)], value)
            yield family
    for name, field, text in MACHINE_RATES:
        value = getattr(machine, field)
        if value is not None:
            yield GaugeMetricFamily(name, text, value=value)
    for name, field, text in (
        (FILESYSTEM_FREE, "root_dir_free_mib", "Free space where the notebooks are "
         "(node-exporter: node_filesystem_avail_bytes)"),
        (FILESYSTEM_SIZE, "root_dir_total_mib", "Size of the file system where the notebooks "
         "are (node-exporter: node_filesystem_size_bytes)"),
    ):  # fmt: skip
        value = _base_unit(getattr(machine, field), MIB)
        if value is not None:
            family = GaugeMetricFamily(name, text, labels=["path"])
            family.add_metric([machine.root_dir], value)
            yield family


def exposition_format(accept: str | None) -> tuple[Callable[[CollectorRegistry], bytes], str]:
    """The encoder and content type a scraper's Accept header asks for: OpenMetrics when it
    asks for it (Prometheus does), else the text format 0.0.4."""
    return choose_encoder(accept or "")


def render(collector: GpuCollector, encoder: Callable[[CollectorRegistry], bytes]) -> bytes:
    """The exposition of the latest read, by ``encoder`` (see ``exposition_format``)."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(collector)
    return encoder(registry)


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
