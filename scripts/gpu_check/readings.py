"""One moment of the GPUs read every way we read them, and the ways compared.

- NVML against nvidia-smi: our two sources, NVML read just before and just after nvidia-smi.
- The XML against the CSV queries: our parsers of nvidia-smi's two formats, on outputs of the
  same second (the XML between two CSV reads).
- The CSV with units, and without a header, against the CSV our source reads: what users
  paste into bug reports is read as what we ask for.
- NVML's two memory structures as they are, for a memory difference between the sources.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from jupyterlab_gpu_monitor.gpu.errors import GpuReadError
from jupyterlab_gpu_monitor.gpu.model import Snapshot
from jupyterlab_gpu_monitor.gpu.nvidia_smi import XML_FACTS, NvidiaSmiSource, merge
from jupyterlab_gpu_monitor.gpu.nvml import NvmlSource
from jupyterlab_gpu_monitor.gpu.smi_csv import QUERY_GPU_FIELDS, parse_compute_apps, parse_query_gpu
from jupyterlab_gpu_monitor.gpu.smi_xml import parse_xml

from .captures import Capture
from .compare import Comparison, compare_moment

# What the CSV queries cannot say, which the nvidia-smi source takes from the XML.
_NOT_IN_CSV = ("cuda_version", "mig_devices", "processes.gpu_instance_id", *XML_FACTS)


@dataclass
class Reading:
    """One way of reading the GPUs: its snapshot, or why there is none."""

    name: str
    snapshot: Snapshot | None = None
    failure: str | None = None


@dataclass
class Agreement:
    """One comparison of a moment: the reading named ``right`` against ``neighbours`` readings
    named ``left``, taken just before and just after it."""

    phase: str
    left: str
    right: str
    comparison: Comparison | None = None
    skipped: str | None = None
    neighbours: int = 0

    def to_json(self) -> dict:
        """As comparisons.json holds it."""
        found = self.comparison.to_json() if self.comparison is not None else {}
        return {
            "phase": self.phase,
            "left": self.left,
            "right": self.right,
            "status": "skip" if self.skipped else ("fail" if found["differences"] else "pass"),
            "skipped": self.skipped,
            "neighbours": self.neighbours,
            **found,
        }


async def source_readings(
    nvml: NvmlSource, nvidia_smi: NvidiaSmiSource
) -> tuple[list[Reading], Reading]:
    """NVML just before and just after one nvidia-smi read (warmed first, so that the XML it
    reads now and then is not inside the moment)."""
    try:
        await nvidia_smi.sample()
    except GpuReadError:
        pass  # the read below says why
    before = await _read("nvml", nvml)
    smi = await _read("nvidia-smi", nvidia_smi)
    after = await _read("nvml", nvml)
    return [before, after], smi


async def _read(name: str, source) -> Reading:
    try:
        return Reading(name, await source.sample())
    except GpuReadError as error:
        return Reading(name, failure=f"{error.kind}: {error.message}")


def csv_reading(name: str, gpus: Capture, apps: Capture, headerless: bool = False) -> Reading:
    """The snapshot of a --query-gpu and a --query-compute-apps output, joined as the source
    joins them but with nothing from the XML."""
    if not (gpus.ok and apps.ok):
        return Reading(name, failure=f"nvidia-smi failed: {(gpus.output + apps.output)[:300]}")
    try:
        rows = parse_query_gpu(gpus.output, QUERY_GPU_FIELDS if headerless else None)
        processes = parse_compute_apps(apps.output)
    except GpuReadError as error:
        return Reading(name, failure=f"{error.kind}: {error.message}")
    nothing_static = Snapshot(source=None, timestamp=0.0)
    return Reading(name, merge(nothing_static, rows.gpus, processes, rows.driver_version, 0.0))


def xml_reading(xml: Capture) -> Reading:
    """The snapshot of ``-q -x``, with only its compute processes (those the CSV lists)."""
    if not xml.ok:
        return Reading("xml", failure=f"nvidia-smi failed: {xml.output[:300]}")
    try:
        snapshot = parse_xml(xml.output, 0.0)
    except GpuReadError as error:
        return Reading("xml", failure=f"{error.kind}: {error.message}")
    for gpu in snapshot.gpus:
        gpu.processes = [p for p in gpu.processes if p.type and "C" in p.type]
    return Reading("xml", snapshot)


def agreement(phase: str, subject: Reading, neighbours: list[Reading], ignore=()) -> Agreement:
    """``subject`` compared with ``neighbours`` (the differences found against all of them);
    skipped, saying why, when a reading failed."""
    result = Agreement(phase, neighbours[0].name, subject.name, neighbours=len(neighbours))
    failed = [r for r in (subject, *neighbours) if r.snapshot is None]
    if failed:
        result.skipped = "; ".join(f"{r.name}: {r.failure}" for r in failed)
        return result
    result.comparison = compare_moment(subject.snapshot, [r.snapshot for r in neighbours], ignore)
    return result


def capture_agreements(phase: str, captured: dict[str, Capture]) -> list[Agreement]:
    """The XML against the CSV on either side of it; the CSV with units and without a header
    against the CSV the source reads."""
    apps = captured["query-compute-apps-csv-nounits.csv"]
    apps_with_units = captured["query-compute-apps-csv.csv"]
    ours = csv_reading("csv", captured["query-gpu-csv-nounits.csv"], apps)
    headerless = csv_reading(
        "csv-noheader", captured["query-gpu-csv-noheader-nounits.csv"], apps, headerless=True
    )
    with_units = csv_reading("csv-units", captured["query-gpu-csv.csv"], apps_with_units)
    # The XML's neighbour after it: the next GPU rows and the next process list.
    after = csv_reading(
        "csv", captured["query-gpu-csv-noheader-nounits.csv"], apps_with_units, headerless=True
    )
    return [
        agreement(phase, xml_reading(captured["q-x.xml"]), [ours, after], _NOT_IN_CSV),
        agreement(phase, with_units, [ours]),
        agreement(phase, headerless, [ours]),
    ]


def nvml_memory(nvml: Any = None) -> dict[str, Any]:
    """Each GPU's memory as NVML's v1 and v2 calls give it, in bytes, or why they did not
    (``nvml``: pynvml, or a stand-in). v1, what our NVML source reads, counts in ``used`` the
    memory the driver reserves for itself (hundreds of MiB since driver 510); v2 and
    nvidia-smi leave it out: a used-memory difference near ``reserved`` is that, not drift."""
    try:
        if nvml is None:
            import pynvml as nvml
        nvml.nvmlInit()
    except Exception as error:  # not installed, no driver
        return {"error": f"{type(error).__name__}: {error}"}
    # The image's own nvidia-ml-py may predate the v2 structure (11.510).
    version = getattr(nvml, "nvmlMemory_v2", None)
    try:
        gpus = {}
        for index in range(nvml.nvmlDeviceGetCount()):
            handle = nvml.nvmlDeviceGetHandleByIndex(index)
            gpus[str(index)] = {
                "v1": _memory(nvml.nvmlDeviceGetMemoryInfo, handle),
                "v2": _memory(nvml.nvmlDeviceGetMemoryInfo, handle, version)
                if version is not None
                else {"error": "this nvidia-ml-py has no nvmlMemory_v2"},
            }
        return gpus
    except nvml.NVMLError as error:
        return {"error": f"{type(error).__name__}: {error}"}
    finally:
        nvml.nvmlShutdown()


def _memory(call, *args) -> dict[str, Any]:
    try:
        found = call(*args)
    except Exception as error:  # NVMLError: a driver older than the v2 call (510)
        return {"error": f"{type(error).__name__}: {error}"}
    names = ("total", "reserved", "used", "free")
    return {name: getattr(found, name) for name in names if hasattr(found, name)}
