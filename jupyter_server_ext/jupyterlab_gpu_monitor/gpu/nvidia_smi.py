"""The nvidia-smi source: cheap CSV queries on every read, the full XML now and then."""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from typing import Any, Callable, TypeVar

from .. import blocking
from ..subprocesses import CommandTimeout, OutputTooLarge, run_command
from ..translation import gettext
from .errors import GpuReadError, error_from_output, kind_of_message
from .lost_gpus import LostGpus
from .model import Gpu, GpuProcess, Snapshot
from .smi_csv import (
    CLOCK_EVENT_FIELDS,
    QUERY_APPS_FIELDS,
    QUERY_GPU_FIELDS,
    AppRow,
    field_name,
    parse_compute_apps,
    parse_query_gpu,
)
from .smi_list import parse_list
from .smi_xml import parse_xml

T = TypeVar("T")

# Driver, CUDA version and MIG layout change rarely; `-q -x` costs tens to hundreds of ms.
STATIC_REFRESH_SECONDS = 30.0
_INVALID_FIELD = re.compile(r'Field "([^"]+)" is not a valid field to query')
# A field an older driver knows by another name, asked for by that name when it is rejected.
_OLDER_FIELD_NAMES = dict([CLOCK_EVENT_FIELDS])
# What no --query-gpu read asks for, taken from the XML: the board's slowdown threshold (no CSV
# field names it), its memory's health, which changes seldom, and the PCIe throughput: no CSV
# field has it, and nvidia-smi samples the bus 20 ms per direction per GPU for it, so it is
# sampled only as often as the XML is read (every STATIC_REFRESH_SECONDS).
XML_FACTS = (
    "temperature_slowdown_c",
    "pcie_sent_bytes_per_second",
    "pcie_received_bytes_per_second",
    "ecc_errors_corrected",
    "ecc_errors_uncorrected",
    "retired_pages",
    "remapped_rows",
    "memory_repair_pending",
)


async def run_nvidia_smi(executable: str, args: Sequence[str], timeout_seconds: float) -> str:
    """nvidia-smi's output; a typed error when it is missing, fails, or hangs (then killed)."""
    try:
        finished = await run_command([executable, *args], timeout_seconds, merge_stderr=True)
    except FileNotFoundError:
        message = gettext("nvidia-smi was not found ({path})").format(path=executable)
        raise GpuReadError("not_installed", message) from None
    except PermissionError:
        message = gettext("nvidia-smi may not be run by this user ({path})")
        raise GpuReadError("permission", message.format(path=executable)) from None
    except CommandTimeout:
        message = gettext("nvidia-smi did not answer within {seconds} s")
        raise GpuReadError("timeout", message.format(seconds=f"{timeout_seconds:g}")) from None
    except OutputTooLarge as error:
        message = gettext("nvidia-smi printed more than {size} MiB")
        size = f"{error.limit_mib:g}"
        raise GpuReadError("bad_output", message.format(size=size)) from None
    if finished.returncode != 0:
        raise error_from_output(finished.stdout, finished.returncode)
    return finished.stdout


class NvidiaSmiSource:
    """Reads the GPUs by running nvidia-smi. Callers keep to one read at a time (the Sampler)."""

    name = "nvidia-smi"

    def __init__(self, executable: str = "nvidia-smi", timeout_seconds: float = 5.0):
        self._executable = executable
        self._timeout_seconds = timeout_seconds
        self._gpu_fields = list(QUERY_GPU_FIELDS)
        self._static: Snapshot | None = None
        self._static_read_at = 0.0
        self._lost = LostGpus(retry_seconds=STATIC_REFRESH_SECONDS)

    async def sample(self) -> Snapshot:
        """One snapshot of all GPUs; raises GpuReadError when nvidia-smi cannot give one."""
        try:
            return await self._sample()
        except GpuReadError:
            # Re-read the static facts after a failure: the driver may have changed.
            self._static = None
            raise

    def close(self) -> None:
        """Nothing to release: every read is its own process."""

    async def _sample(self) -> Snapshot:
        if self._lost.retry_whole():
            self._static = None
        while True:
            try:
                return self._lost.with_lost(await self._read())
            except GpuReadError as error:
                # One GPU lost fails the whole read on older drivers: read the others alone.
                if not self._lost.lose(error):
                    raise
                self._static = None  # it described the GPUs asked for before

    async def _read(self) -> Snapshot:
        stale = time.monotonic() - self._static_read_at > STATIC_REFRESH_SECONDS
        if self._static is None or stale:
            await self._refresh_static()
        rows = await self._query_gpus()
        if not _same_layout(self._static, rows.gpus):
            # A GPU swapped, or MIG switched on or off: the cached XML describes another layout.
            await self._refresh_static()
        listed = await self._run(
            [f"--query-compute-apps={','.join(QUERY_APPS_FIELDS)}", "--format=csv,nounits"]
        )
        apps = await self._parse(parse_compute_apps, listed)
        return merge(self._static, rows.gpus, apps, rows.driver_version, time.time())

    async def _refresh_static(self) -> None:
        self._static = await self._read_static()
        self._static_read_at = time.monotonic()

    async def _read_static(self) -> Snapshot:
        # Tens of ms of parsing for a large machine's XML: off the event loop.
        static = await self._parse(parse_xml, await self._run(["-q", "-x"]), time.time())
        if any(gpu.mig_mode == "enabled" for gpu in static.gpus):
            try:
                listed = await self._parse(parse_list, await self._run(["-L"]))
            except GpuReadError:
                listed = []  # profiles and MIG UUIDs are a nicety; the XML has the rest
            name_mig_devices(static.gpus, listed)
        return static

    async def _query_gpus(self):
        # Old drivers reject fields they do not know (mig.mode.current before 450): ask for
        # the field nvidia-smi names by its older name, or drop it, and ask again.
        while True:
            args = [f"--query-gpu={','.join(self._gpu_fields)}", "--format=csv,nounits"]
            try:
                # Parsed on a GPU thread, as every output here: megabytes of it must not hold
                # the event loop.
                return await self._parse(parse_query_gpu, await self._run(args))
            except GpuReadError as error:
                rejected = _INVALID_FIELD.search(error.message)
                if rejected is None or rejected.group(1) not in self._gpu_fields[3:]:
                    raise
                position = self._gpu_fields.index(rejected.group(1))
                older = _OLDER_FIELD_NAMES.get(rejected.group(1))
                if older is None:
                    del self._gpu_fields[position]
                else:
                    self._gpu_fields[position] = older

    async def _run(self, args: Sequence[str]) -> str:
        healthy = self._lost.healthy
        if healthy is not None:
            args = [*args, "-i", ",".join(healthy)]
        return await run_nvidia_smi(self._executable, args, self._timeout_seconds)

    async def _parse(self, parse: Callable[..., T], *args: Any) -> T:
        # On the GPU threads (see blocking.py), never behind other requests' work.
        try:
            return await blocking.run(
                blocking.GPU, parse, *args, timeout_seconds=self._timeout_seconds
            )
        except blocking.TimedOut:
            message = gettext("reading nvidia-smi's output took longer than {seconds} s")
            raise GpuReadError(
                "timeout", message.format(seconds=f"{self._timeout_seconds:g}")
            ) from None


def _same_layout(static: Snapshot, gpus: list[Gpu]) -> bool:
    """Whether the XML read earlier describes the GPUs the CSV query sees now (UUIDs and MIG
    modes; a CSV without them, from an old driver, cannot tell and counts as the same)."""
    known = {gpu.uuid: gpu.mig_mode for gpu in static.gpus}
    return all(
        gpu.uuid is None or (gpu.uuid in known and gpu.mig_mode in (None, known[gpu.uuid]))
        for gpu in gpus
    )


def name_mig_devices(gpus: list[Gpu], listed: list[Gpu]) -> None:
    """Copy the profile and MIG UUID of each instance from ``-L`` onto the XML's instances."""
    by_uuid = {gpu.uuid: gpu for gpu in listed}
    for gpu in gpus:
        named = by_uuid.get(gpu.uuid)
        if named is None:
            continue
        for device, listed_device in zip(gpu.mig_devices, named.mig_devices):
            device.uuid = listed_device.uuid
            device.profile = listed_device.profile


def merge(
    static: Snapshot,
    gpus: list[Gpu],
    apps: list[AppRow],
    driver_version: str | None,
    timestamp: float,
) -> Snapshot:
    """Fresh CSV readings joined with the XML's slower facts (MIG layout, process types)."""
    static_by_uuid = {gpu.uuid: gpu for gpu in static.gpus}
    for gpu in gpus:
        known = static_by_uuid.get(gpu.uuid)
        if known is not None:
            gpu.mig_mode = gpu.mig_mode or known.mig_mode
            gpu.mig_devices = known.mig_devices
            for attribute in XML_FACTS:
                setattr(gpu, attribute, getattr(known, attribute))
            if gpu.error is None and known.error is not None and not _has_readings(gpu):
                # The XML said why this GPU reads nothing (lost): the CSV only prints [N/A]
                # for it. A GPU whose readings came back (a reset) is no longer lost.
                gpu.error = known.error
        gpu.explain_mig()
        known_processes = {p.pid: p for p in known.processes} if known is not None else {}
        gpu.processes = [
            _with_xml_facts(app.process, known_processes.get(app.process.pid))
            for app in apps
            if app.gpu_uuid == gpu.uuid
        ]
    return Snapshot(
        source="nvidia-smi",
        timestamp=timestamp,
        driver_version=driver_version or static.driver_version,
        cuda_version=static.cuda_version,
        gpus=gpus,
    )


def _has_readings(gpu: Gpu) -> bool:
    return any(
        value is not None
        for value in (gpu.utilization_gpu, gpu.memory_used_mib, gpu.temperature_c, gpu.power_draw_w)
    )


def _with_xml_facts(process: GpuProcess, known: GpuProcess | None) -> GpuProcess:
    if known is not None:
        process.type = known.type or process.type
        process.gpu_instance_id = known.gpu_instance_id
    return process


def parse_saved_output(text: str, fields: Sequence[str] | None = None) -> Snapshot:
    """A snapshot from a saved nvidia-smi output: ``-q -x``, ``--query-gpu`` or
    ``--query-compute-apps`` CSV, or ``-L``; an error message it printed becomes its error."""
    stripped = text.lstrip()
    now = time.time()
    if stripped.startswith("<"):
        return parse_xml(text, now)
    if stripped.startswith("GPU ") and "(UUID: " in stripped.splitlines()[0]:
        return Snapshot(source="nvidia-smi", timestamp=now, gpus=parse_list(text))
    first_line = stripped.splitlines()[0] if stripped else ""
    names = fields or [field_name(cell) for cell in first_line.split(",")]
    if "pid" in names:
        apps = parse_compute_apps(text, fields)
        gpus: dict[str | None, Gpu] = {}
        for app in apps:
            gpu = gpus.setdefault(
                app.gpu_uuid,
                Gpu(
                    index=len(gpus), uuid=app.gpu_uuid, name=app.gpu_name, pci_bus_id=app.gpu_bus_id
                ),
            )
            gpu.processes.append(app.process)
        return Snapshot(source="nvidia-smi", timestamp=now, gpus=list(gpus.values()))
    if fields is None and kind_of_message(text):
        raise error_from_output(text, 0)
    rows = parse_query_gpu(text, fields)
    return Snapshot(
        source="nvidia-smi", timestamp=now, driver_version=rows.driver_version, gpus=rows.gpus
    )
