"""The Prometheus source: readings that a DCGM exporter or nvidia_gpu_exporter already feeds to
Prometheus, read through its HTTP API. For JupyterHub on Kubernetes and cluster nodes, where the
notebook's container cannot run nvidia-smi but the node's exporter is scraped anyway.

One ``/api/v1/query`` per read fetches every series we use at once; which exporter the node runs
is decided from what comes back (DCGM when both do). A second query beside it asks when each
GPU was last sampled, so that a GPU its exporter stopped reporting shows as lost (see
staleness.py). ``/api/v1/query_range`` fills the history once, when the panel is first opened.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from .. import blocking
from ..translation import N_, gettext
from .clock_events import reasons_of_mask
from .errors import GpuReadError, gpu_lost
from .model import MIB, Gpu, GpuProcess, MigDevice, Snapshot
from .prometheus_api import PrometheusApi
from .readings import DCGM_ENGINE_ACTIVE, DCGM_RESERVED, READING, READINGS
from .staleness import SeenGpus, gpu_key

# Series name -> the reading it is: the gauges of either exporter (with the factor to the
# snapshot's unit), and the series of the readings
# made of more than one series or of a code (each under its names before and after a rename).
_DCGM_FIELDS = {
    series: (reading.field, reading.dcgm_factor)
    for reading in READINGS
    if reading.kind == "gauge"
    for series in reading.dcgm
}
_SMI_FIELDS = {
    series: (reading.field, reading.exporter_factor)
    for reading in READINGS
    if reading.kind == "gauge"
    for series in reading.exporter
}
_CODED = {
    series: reading
    for reading in READINGS
    if reading.kind != "gauge"
    for series in (*reading.dcgm, *reading.exporter)
}
DCGM_UTILIZATION = READING["utilization_gpu"].dcgm[0]
DCGM_MEMORY_USED = READING["memory_used_mib"].dcgm[0]
DCGM_MEMORY_FREE = READING["memory_free_mib"].dcgm[0]

# The last XID error of a GPU; XID 79 is a GPU that fell off the bus (its other series then go
# blank or stale), which NVML and nvidia-smi call lost.
DCGM_XID = "DCGM_FI_DEV_XID_ERRORS"
XID_FALLEN_OFF_BUS = 79
SMI_INFO = "nvidia_smi_gpu_info"
SMI_INDEX = "nvidia_smi_index"
SMI_MIG_MODE = "nvidia_smi_mig_mode_current"
SMI_APP_MEMORY = "nvidia_smi_compute_app_used_memory_bytes"
# Exporters before 2022 have no driver_version label on nvidia_smi_gpu_info, only this gauge.
SMI_DRIVER_VERSION = "nvidia_smi_driver_version"

SERIES_NAMES = tuple(
    sorted(
        {*_DCGM_FIELDS, *_SMI_FIELDS, *_CODED}
        | {DCGM_RESERVED, DCGM_ENGINE_ACTIVE, DCGM_XID}
        | {SMI_INFO, SMI_INDEX, SMI_MIG_MODE, SMI_APP_MEMORY, SMI_DRIVER_VERSION}
    )
)

# The series whose sample times tell when a GPU was last reported, in pairs of a DCGM exporter
# series and an nvidia_gpu_exporter one (never one label set, so one timestamp() takes both).
# Every default counter set of either exporter has them; one is enough, as a GPU's series stop
# together, and three keep a lab's own counter list that lacks one from hiding its GPUs. Not
# the XID series: the driver may go on reporting the XID of a GPU that is otherwise silent.
HEARTBEAT_SERIES = (
    (READING["sm_clock_mhz"].dcgm[0], SMI_INDEX),
    (READING["temperature_c"].dcgm[0], READING["temperature_c"].exporter[0]),
    (DCGM_MEMORY_USED, READING["memory_used_mib"].exporter[0]),
)
# The labels that tell GPUs apart in both exporters (see staleness.gpu_key).
GPU_LABELS = ("UUID", "uuid", "gpu")

# DCGM's "no value" sentinels (DCGM_FT_FP64_BLANK = 2**47, DCGM_FT_INT64_BLANK = 2**63 - 16,
# and the codes above them) leak into dcgm-exporter's output, as its own README shows with
# 9223372036854775794. No reading we use comes anywhere near.
DCGM_BLANK = 2.0**47

# A chart is a few hundred pixels wide: more points than this from query_range are wasted.
HISTORY_POINTS = 1000

# Translated when an error is made (see PrometheusApi).
HINTS = {
    "not_installed": N_(
        "Set c.GpuMonitor.prometheus_url to the Prometheus that scrapes this node's GPU "
        "exporter (e.g. 'http://prometheus-server.monitoring'), or choose another "
        "GpuMonitor.source."
    ),
    "unreachable": N_(
        "Check GpuMonitor.prometheus_url and that Prometheus is up and reachable from this "
        "machine (`curl <url>/-/ready`); in Kubernetes a NetworkPolicy may keep the notebook "
        "pod from it."
    ),
    "timeout": N_(
        "Prometheus did not answer in time: it may be overloaded or far away. "
        "GpuMonitor.command_timeout sets the limit."
    ),
    "permission": N_(
        "Prometheus, or the proxy in front of it, wants credentials: put a bearer token in "
        "the file that GpuMonitor.prometheus_bearer_token_file names."
    ),
    "no_devices": N_(
        "Check that the node's DCGM exporter or nvidia_gpu_exporter is scraped, and "
        "GpuMonitor.prometheus_selector against its labels, e.g. with "
        "`count by (Hostname, pod) (DCGM_FI_DEV_FB_USED)` in Prometheus."
    ),
    "bad_output": N_(
        "Check that GpuMonitor.prometheus_url is the address Prometheus (or Thanos, Mimir...) "
        "serves /api/v1/query under, and that GpuMonitor.prometheus_selector is a selector "
        'like {Hostname="node-7"}.'
    ),
}

Sample = tuple[dict[str, str], float]


def selector_matchers(selector: str) -> str:
    """The label matchers inside a selector like ``{Hostname="node-7"}`` ("" for none).

    Raises ValueError when it is not written in braces; Prometheus checks the rest.
    """
    text = selector.strip()
    if not text:
        return ""
    if not (text.startswith("{") and text.endswith("}")):
        raise ValueError(
            f'a Prometheus selector is written in braces, like {{Hostname="node-7"}}, '
            f"not {selector!r}"
        )
    return text[1:-1].strip().rstrip(",")


def _names_selector(names: Iterable[str], matchers: str) -> str:
    return f'{{__name__=~"{"|".join(names)}"{", " + matchers if matchers else ""}}}'


def series_query(selector: str) -> str:
    """One PromQL selector for every series this source reads, narrowed by ``selector``."""
    return _names_selector(SERIES_NAMES, selector_matchers(selector))


def heartbeat_query(selector: str) -> str:
    """One PromQL query for the time of each GPU's newest sample, narrowed by ``selector``.

    ``timestamp()`` drops the series' names, and refuses an answer in which two series are then
    alike: the series of one GPU are taken one pair at a time, each marked apart before the
    newest of a GPU is kept.
    """
    matchers = selector_matchers(selector)
    terms = " or ".join(
        f"label_replace(timestamp({_names_selector(pair, matchers)}), "
        f'"heartbeat", "{number}", "", "")'
        for number, pair in enumerate(HEARTBEAT_SERIES)
    )
    return f"max by ({', '.join(GPU_LABELS)}) ({terms})"


def newest_samples(result: list[dict[str, Any]]) -> dict[str, float]:
    """The time of each GPU's newest sample, by ``staleness.gpu_key``, from the answer to
    ``heartbeat_query``."""
    newest: dict[str, float] = {}
    for series in result:
        labels = series["metric"]
        if "UUID" in labels:
            uuid = labels["UUID"]
        elif "uuid" in labels:
            uuid = f"GPU-{labels['uuid']}"  # as _smi_snapshot writes it
        else:
            uuid = None
        key = gpu_key(uuid, _index(labels.get("gpu")))
        newest[key] = max(newest.get(key, -math.inf), float(series["value"][1]))
    return newest


def _scaled(value: float | None, factor: float = 1) -> float | int | None:
    if value is None:
        return None
    scaled = float(value) * factor
    # NaN and ±Inf are Prometheus values but not JSON ones (a browser's JSON.parse rejects them).
    if not math.isfinite(scaled):
        return None
    # Rounded: 0.11 * 100 is 11.000000000000002, and the panel should show what nvidia-smi did.
    scaled = round(scaled, 6)
    return int(scaled) if scaled.is_integer() else scaled


def _index(text: str | None) -> int:
    try:
        return int(text or 0)
    except ValueError:
        return 0


def _dcgm_reading(value: float) -> float | None:
    return None if value >= DCGM_BLANK else value


def _read_coded(gpu: Gpu, name: str, value: float) -> None:
    """A series of a reading made of more than one series or of a code into ``gpu``; other
    series, and values no count or code can be (NaN, negative), are left alone."""
    reading = _CODED.get(name)
    if reading is None or not math.isfinite(value) or value < 0:
        return
    if reading.kind == "sum":
        setattr(gpu, reading.field, (getattr(gpu, reading.field) or 0) + int(value))
    elif reading.kind == "any":
        setattr(gpu, reading.field, bool(getattr(gpu, reading.field)) or value > 0)
    elif reading.kind == "pstate":
        # 32 is NVML's "unknown"; P0 to P15 are 0 to 15.
        setattr(gpu, reading.field, f"P{int(value)}" if 0 <= value <= 15 else None)
    elif reading.kind == "reasons":
        setattr(gpu, reading.field, reasons_of_mask(int(value)))


def _dcgm_snapshot(samples: list[Sample], timestamp: float) -> Snapshot:
    gpus: dict[str, Gpu] = {}
    reserved: dict[str, float | None] = {}
    instances: dict[str, dict[str, MigDevice]] = defaultdict(dict)
    instance_free: dict[tuple[str, str], float | None] = {}
    driver_version = None
    for labels, value in samples:
        name = labels["__name__"]
        if not name.startswith("DCGM_"):
            continue
        key = labels.get("UUID") or labels.get("gpu", "")
        gpu = gpus.get(key)
        if gpu is None:
            gpu = gpus[key] = Gpu(
                index=_index(labels.get("gpu")),
                uuid=labels.get("UUID"),
                name=labels.get("modelName"),
                pci_bus_id=labels.get("pci_bus_id"),
            )
        driver_version = driver_version or labels.get("DCGM_FI_DRIVER_VERSION")
        reading = _dcgm_reading(value)
        instance_id = labels.get("GPU_I_ID")
        if instance_id is not None:
            device = instances[key].setdefault(
                instance_id,
                MigDevice(
                    index=0,
                    gpu_instance_id=_index(instance_id),
                    profile=labels.get("GPU_I_PROFILE"),
                ),
            )
            if name == DCGM_ENGINE_ACTIVE:
                device.utilization_gpu = _scaled(reading, 100)
            elif name == DCGM_MEMORY_USED:
                device.memory_used_mib = _scaled(reading)
            elif name == DCGM_MEMORY_FREE:
                instance_free[(key, instance_id)] = reading
        elif name in _DCGM_FIELDS:
            field, factor = _DCGM_FIELDS[name]
            setattr(gpu, field, _scaled(reading, factor))
        elif name == DCGM_RESERVED:
            reserved[key] = reading
        elif name == DCGM_XID:
            if reading == XID_FALLEN_OFF_BUS:
                gpu.error = gpu_lost(gpu.index)
        elif reading is not None:
            _read_coded(gpu, name, reading)
    for key, gpu in gpus.items():
        if gpu.memory_total_mib is None and None not in (gpu.memory_used_mib, gpu.memory_free_mib):
            # dcgm-exporter's default counters have no FB_TOTAL; nvidia-smi's total is the sum.
            gpu.memory_total_mib = _scaled(
                gpu.memory_used_mib + gpu.memory_free_mib + (reserved.get(key) or 0)
            )
        devices = sorted(instances[key].values(), key=lambda device: device.gpu_instance_id)
        for position, device in enumerate(devices):
            device.index = position
            free = instance_free.get((key, str(device.gpu_instance_id)))
            if device.memory_used_mib is not None and free is not None:
                device.memory_total_mib = _scaled(device.memory_used_mib + free)
        gpu.mig_devices = devices
        if devices:
            gpu.mig_mode = "enabled"
        elif gpu.utilization_gpu is not None:
            gpu.mig_mode = "disabled"  # DCGM has GPU_UTIL only outside MIG
        if gpu.utilization_gpu is None:
            gpu.unavailable["utilization_gpu"] = (
                gettext("not available under MIG; each instance's is {series}").format(
                    series=DCGM_ENGINE_ACTIVE
                )
                if devices
                else gettext("{series} is not in Prometheus").format(series=DCGM_UTILIZATION)
            )
    return Snapshot(
        source="prometheus",
        timestamp=timestamp,
        driver_version=driver_version,
        gpus=sorted(gpus.values(), key=lambda gpu: gpu.index),
    )


def _smi_snapshot(samples: list[Sample], timestamp: float) -> Snapshot:
    gpus: dict[str, Gpu] = {}
    driver_version = cuda_version = old_driver_version = None
    for labels, value in samples:
        name = labels["__name__"]
        uuid = labels.get("uuid")
        if not name.startswith("nvidia_smi_") or uuid is None:
            continue
        # nvidia_gpu_exporter drops nvidia-smi's "GPU-" prefix; the snapshot keeps it, as the
        # other sources do, so that the same GPU has the same id whichever way it is read.
        gpu = gpus.setdefault(uuid, Gpu(index=0, uuid=f"GPU-{uuid}"))
        if name == SMI_INFO:
            gpu.name = labels.get("name")
            gpu.pci_bus_id = labels.get("pci_bus_id")
            driver_version = driver_version or labels.get("driver_version")
            cuda_version = cuda_version or labels.get("cuda_version")
        elif name == SMI_INDEX:
            gpu.index = int(value)
        elif name == SMI_MIG_MODE:
            gpu.mig_mode = "enabled" if value else "disabled"
        elif name == SMI_APP_MEMORY:
            gpu.processes.append(
                GpuProcess(
                    pid=_index(labels.get("pid")),
                    used_memory_mib=_scaled(value, 1 / MIB),
                    name=labels.get("process_name"),
                    type="C",
                )
            )
        elif name == SMI_DRIVER_VERSION:
            old_driver_version = f"{value:g}"
        elif name in _SMI_FIELDS:
            field, factor = _SMI_FIELDS[name]
            setattr(gpu, field, _scaled(value, factor))
        else:
            _read_coded(gpu, name, value)
    for gpu in gpus.values():
        gpu.processes.sort(key=lambda process: process.pid)
        gpu.explain_mig()
    return Snapshot(
        source="prometheus",
        timestamp=timestamp,
        driver_version=driver_version or old_driver_version,
        cuda_version=cuda_version,
        gpus=sorted(gpus.values(), key=lambda gpu: gpu.index),
    )


def snapshot_from_samples(samples: Iterable[Sample], timestamp: float) -> Snapshot:
    """The snapshot that the series of one moment describe: DCGM exporter series when there
    are any, else nvidia_gpu_exporter's. No GPU among them gives a snapshot without GPUs."""
    samples = list(samples)
    if has_dcgm(samples):
        return _dcgm_snapshot(samples, timestamp)
    return _smi_snapshot(samples, timestamp)


def has_dcgm(samples: list[Sample]) -> bool:
    """Whether the samples are a DCGM exporter's (any of its series among them)."""
    return any(labels["__name__"].startswith("DCGM_") for labels, _ in samples)


def snapshots_over_time(result: list[dict[str, Any]]) -> list[Snapshot]:
    """One snapshot per evaluation step of a ``query_range`` matrix, oldest first."""
    moments: dict[float, list[Sample]] = defaultdict(list)
    for series in result:
        for timestamp, value in series["values"]:
            moments[float(timestamp)].append((series["metric"], float(value)))
    snapshots = (snapshot_from_samples(moments[moment], moment) for moment in sorted(moments))
    return [snapshot for snapshot in snapshots if snapshot.gpus]


class PrometheusSource:
    """Reads GPUs from Prometheus' HTTP API without blocking the event loop.

    Every failure is a GpuReadError: ``timeout``; ``unknown`` when Prometheus cannot be reached
    or fails (5xx); ``permission`` for 401/403; ``no_devices`` when the selector matches no GPU
    series; ``bad_output`` when the answer is not Prometheus' (wrong URL, bad selector);
    ``not_installed`` when no URL is configured.
    """

    name = "prometheus"

    def __init__(
        self,
        url: str,
        selector: str = "",
        timeout_seconds: float = 5.0,
        bearer_token_file: str = "",
    ):
        self._url = url.rstrip("/")
        self._selector = selector
        self._query = series_query(selector)
        self._heartbeat_query = heartbeat_query(selector)
        self._seen = SeenGpus()
        self._timeout_seconds = timeout_seconds
        self._prometheus = PrometheusApi(
            url,
            gettext("GpuMonitor.prometheus_url is not set"),
            HINTS,
            timeout_seconds,
            bearer_token_file,
        )

    async def sample(self) -> Snapshot:
        """The GPUs as Prometheus last saw them, those it no longer hears from as lost; raises
        GpuReadError when it cannot tell."""
        result, heartbeats = await asyncio.gather(
            self._prometheus.api("query", {"query": self._query}),
            self._prometheus.api("query", {"query": self._heartbeat_query}),
            return_exceptions=True,
        )
        if isinstance(result, BaseException):
            raise result
        if isinstance(heartbeats, GpuReadError):
            # Readings without sample times: only a GPU that vanishes is told lost.
            heartbeats = []
        elif isinstance(heartbeats, BaseException):
            raise heartbeats
        samples = [(series["metric"], float(series["value"][1])) for series in result]
        snapshot = snapshot_from_samples(samples, time.time())
        if not snapshot.gpus:
            message = gettext(
                "Prometheus at {url} has no GPU series (DCGM_FI_DEV_* or nvidia_smi_*) "
                "matching {selector}"
            )
            selector = self._selector or gettext("any labels")
            raise GpuReadError(
                "no_devices",
                message.format(url=self._url, selector=selector),
                gettext(HINTS["no_devices"]),
            )
        # The answer's moment on Prometheus' clock, which its sample times are on.
        now = float(result[0]["value"][0])
        exporter = "DCGM" if has_dcgm(samples) else "nvidia_gpu_exporter"
        self._seen.mark_lost(snapshot, newest_samples(heartbeats), now, exporter)
        return snapshot

    async def history(self, start: float, end: float, step_seconds: float) -> list[Snapshot]:
        """The snapshots Prometheus holds between ``start`` and ``end`` (epoch seconds), at
        least ``step_seconds`` apart and never more than HISTORY_POINTS of them."""
        step = max(step_seconds, (end - start) / HISTORY_POINTS)
        result = await self._prometheus.api(
            "query_range",
            {
                "query": self._query,
                "start": f"{start:.3f}",
                "end": f"{end:.3f}",
                "step": f"{step:g}",
            },
        )
        # An hour of several GPUs is thousands of samples: converted on a GPU thread.
        try:
            return await blocking.run(
                blocking.GPU, snapshots_over_time, result, timeout_seconds=self._timeout_seconds
            )
        except blocking.TimedOut:
            message = gettext("converting Prometheus' history took longer than {seconds} s")
            seconds = f"{self._timeout_seconds:g}"
            raise GpuReadError(
                "timeout", message.format(seconds=seconds), gettext(HINTS["timeout"])
            ) from None

    def close(self) -> None:
        """Nothing to release: requests go through the event loop's shared HTTP client."""
