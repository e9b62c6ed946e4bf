"""Parsing ``nvidia-smi --query-gpu`` and ``--query-compute-apps`` CSV output.

Columns are mapped by the header line when there is one (``--format=csv``, with or without
``nounits``): the header names the fields whatever order or set was asked for, so the same code
reads what we ask for and the dumps users attach to bug reports. Headerless output
(``noheader``) needs the field list it was asked with.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Sequence
from dataclasses import dataclass

from ..translation import gettext
from .clock_events import reasons_of_mask
from .errors import GpuReadError, error_from_output, gpu_lost, kind_of_message
from .model import Gpu, GpuProcess
from .readings import READING, READINGS
from .smi_values import mig_mode_value, number_value, says_gpu_lost, text_value

# nvidia-smi --query-gpu field -> Gpu attribute. Later entries of the same attribute are
# fallbacks (older or newer names of one reading).
GPU_NUMBER_FIELDS = {
    name: reading.field
    for reading in READINGS
    if reading.kind == "gauge"
    for name in reading.smi_csv
}
GPU_TEXT_FIELDS = {
    "uuid": "uuid",
    "name": "name",
    "gpu_name": "name",
    "pci.bus_id": "pci_bus_id",
    "gpu_bus_id": "pci_bus_id",
    "pstate": "performance_state",
}
# The clock event reasons as a bitmask: the name since driver 530, then the one before.
CLOCK_EVENT_FIELDS = READING["clock_throttle_reasons"].smi_csv

# What the sampler asks for on every read: a few ms per call, against tens to hundreds of ms
# for `-q -x`.
QUERY_GPU_FIELDS = (
    "index",
    "uuid",
    "name",
    "pci.bus_id",
    "utilization.gpu",
    "utilization.memory",
    "memory.total",
    "memory.used",
    "memory.free",
    "temperature.gpu",
    "power.draw",
    "power.limit",
    "fan.speed",
    "clocks.sm",
    "clocks.mem",
    "pstate",
    "utilization.encoder",
    "utilization.decoder",
    CLOCK_EVENT_FIELDS[0],
    "mig.mode.current",
    "driver_version",
)
QUERY_APPS_FIELDS = ("gpu_uuid", "pid", "process_name", "used_memory")

_KNOWN_FIELDS = {
    *GPU_NUMBER_FIELDS,
    *GPU_TEXT_FIELDS,
    *CLOCK_EVENT_FIELDS,
    "index",
    "mig.mode.current",
    "driver_version",
    "pid",
    "gpu_uuid",
    "process_name",
    "used_memory",
    "used_gpu_memory",
}
_UNIT_SUFFIX = re.compile(r"\s*\[[^\]]*\]\s*$")


@dataclass
class GpuRows:
    """The GPUs of a --query-gpu output, and the driver version when it was asked for."""

    gpus: list[Gpu]
    driver_version: str | None


@dataclass
class AppRow:
    """One row of --query-compute-apps: a process and the GPU it runs on."""

    gpu_uuid: str | None
    gpu_name: str | None
    gpu_bus_id: str | None
    process: GpuProcess


def field_name(header: str) -> str:
    """'memory.used [MiB]' -> 'memory.used'."""
    return _UNIT_SUFFIX.sub("", header).strip()


def _records(text: str, fields: Sequence[str] | None) -> list[dict[str, str]]:
    lines = [line for line in text.splitlines() if line.strip()]
    if fields is None:
        if not lines:
            raise GpuReadError("bad_output", gettext("nvidia-smi printed no CSV header"))
        names = [field_name(cell) for cell in _split(lines[0])]
        if not _KNOWN_FIELDS.intersection(names):
            raise _not_csv(text)
        lines = lines[1:]
    else:
        names = list(fields)
    records = []
    for line in lines:
        cells = _split(line)
        if len(cells) != len(names):
            if kind_of_message(line):
                raise error_from_output(text, 0)
            message = gettext(
                "nvidia-smi CSV row has {columns} columns where {expected} were expected"
            ).format(columns=len(cells), expected=len(names))
            raise GpuReadError("bad_output", message)
        records.append(dict(zip(names, cells)))
    return records


def _split(line: str) -> list[str]:
    return [cell.strip() for cell in next(csv.reader([line], skipinitialspace=True))]


def _not_csv(text: str) -> GpuReadError:
    if kind_of_message(text):
        return error_from_output(text, 0)
    first = text.strip().splitlines()[0][:120] if text.strip() else ""
    message = gettext("nvidia-smi printed no CSV header we know: {line}").format(line=repr(first))
    return GpuReadError("bad_output", message)


def parse_query_gpu(text: str, fields: Sequence[str] | None = None) -> GpuRows:
    """The GPUs of a ``--query-gpu`` output; ``fields`` only for headerless output."""
    gpus = []
    driver_version = None
    for position, record in enumerate(_records(text, fields)):
        index = number_value(record.get("index"))
        gpu = Gpu(index=int(index) if index is not None else position)
        # In the order of the maps, so that a field wins over its fallbacks.
        for name, attribute in GPU_NUMBER_FIELDS.items():
            if name in record and getattr(gpu, attribute) is None:
                setattr(gpu, attribute, number_value(record[name]))
        for name, attribute in GPU_TEXT_FIELDS.items():
            if name in record:
                setattr(gpu, attribute, text_value(record[name]))
        gpu.mig_mode = mig_mode_value(record.get("mig.mode.current"))
        gpu.clock_throttle_reasons = _clock_event_reasons(record)
        driver_version = driver_version or text_value(record.get("driver_version"))
        if any(says_gpu_lost(raw) for raw in record.values()):
            gpu.error = gpu_lost(gpu.index)
        gpus.append(gpu)
    return GpuRows(gpus=gpus, driver_version=driver_version)


def _clock_event_reasons(record: dict[str, str]) -> list[str] | None:
    """The reasons of the bitmask ('0x0000000000000004' -> ['sw_power_cap']); None when the
    query did not ask for it or the GPU does not say."""
    for name in CLOCK_EVENT_FIELDS:
        mask = text_value(record.get(name))
        if mask is not None:
            try:
                return reasons_of_mask(int(mask, 16))
            except ValueError:
                return None  # not a bitmask: a message in its place
    return None


def parse_compute_apps(text: str, fields: Sequence[str] | None = None) -> list[AppRow]:
    """The processes of a ``--query-compute-apps`` output; ``fields`` only when headerless."""
    rows = []
    for record in _records(text, fields):
        pid = number_value(record.get("pid"))
        if pid is None:
            raise GpuReadError("bad_output", gettext("nvidia-smi process row without a pid"))
        memory = record.get("used_memory", record.get("used_gpu_memory"))
        process = GpuProcess(
            pid=int(pid),
            used_memory_mib=number_value(memory),
            name=text_value(record.get("process_name")),
            type="C",
        )
        rows.append(
            AppRow(
                gpu_uuid=text_value(record.get("gpu_uuid")),
                gpu_name=text_value(record.get("gpu_name")),
                gpu_bus_id=text_value(record.get("gpu_bus_id")),
                process=process,
            )
        )
    return rows
