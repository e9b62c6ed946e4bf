"""Parsing ``nvidia-smi -q -x``: every fact of every GPU, across DTD versions 10 to 13.

Element names moved between driver generations (``power_readings/power_draw`` became
``gpu_power_readings/power_draw`` and then ``instant_power_draw``); each reading lists the
paths it has had, newest first, and takes the first that holds a value.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from ..translation import gettext
from .clock_events import CLOCK_EVENT_BITS
from .errors import GpuReadError, error_from_output, gpu_lost, kind_of_message
from .model import Gpu, GpuProcess, MigDevice, Snapshot
from .readings import READINGS
from .smi_values import Number, mig_mode_value, number_value, says_gpu_lost, text_value

# The element of the clock throttle reasons, and the prefix of each reason's, newest name first
# (renamed "event reasons" in driver 530).
_THROTTLE_ELEMENTS = (
    ("clocks_event_reasons", "clocks_event_reason_"),
    ("clocks_throttle_reasons", "clocks_throttle_reason_"),
)
# Why a reading is null under MIG; translated where it is used.


def _number(element: ET.Element, *paths: str) -> Number | None:
    for path in paths:
        value = number_value(element.findtext(path))
        if value is not None:
            return value
    return None


def _int(element: ET.Element, path: str) -> int | None:
    value = number_value(element.findtext(path))
    return int(value) if value is not None else None


def parse_xml(text: str, timestamp: float) -> Snapshot:
    """The snapshot in an ``nvidia-smi -q -x`` document; a typed error if it is not one."""
    try:
        root = ET.fromstring(text)
    except ET.ParseError as error:
        if kind_of_message(text):
            raise error_from_output(text, 0) from None
        message = gettext("nvidia-smi printed malformed XML ({error})").format(error=error)
        raise GpuReadError("bad_output", message) from None
    if root.tag != "nvidia_smi_log":
        message = gettext("nvidia-smi XML has root <{tag}>, not <nvidia_smi_log>")
        raise GpuReadError("bad_output", message.format(tag=root.tag))
    gpus = [_gpu(element, index) for index, element in enumerate(root.findall("gpu"))]
    return Snapshot(
        source="nvidia-smi",
        timestamp=timestamp,
        driver_version=text_value(root.findtext("driver_version")),
        cuda_version=text_value(root.findtext("cuda_version")),
        gpus=gpus,
    )


def _gpu(element: ET.Element, index: int) -> Gpu:
    # nvidia-smi numbers GPUs in the order it lists them (PCI bus order), not by minor number.
    gpu = Gpu(
        index=index,
        uuid=text_value(element.findtext("uuid")),
        name=text_value(element.findtext("product_name")),
        pci_bus_id=text_value(element.findtext("pci/pci_bus_id")) or element.get("id"),
        mig_mode=mig_mode_value(element.findtext("mig_mode/current_mig")),
    )
    for reading in READINGS:
        if reading.smi_xml:
            value = _number(element, *reading.smi_xml)
            factor = reading.smi_xml_factor
            setattr(gpu, reading.field, value if value is None or factor == 1 else value * factor)
    if gpu.temperature_slowdown_c is None:
        gpu.temperature_slowdown_c = _slowdown_from_tlimit(element)
    gpu.performance_state = text_value(element.findtext("performance_state"))
    gpu.clock_throttle_reasons = _throttle_reasons(element)
    _read_memory_health(gpu, element)
    gpu.explain_mig()
    gpu.mig_devices = [_mig_device(mig) for mig in element.findall("mig_devices/mig_device")]
    processes = (_process(info) for info in element.findall("processes/process_info"))
    gpu.processes = [process for process in processes if process is not None]
    if any(says_gpu_lost(child.text) for child in element.iter()):
        gpu.error = gpu_lost(index)
    return gpu


def _throttle_reasons(element: ET.Element) -> list[str] | None:
    """The reasons marked Active, named and ordered as the other sources name them; None when
    not reported."""
    for container, prefix in _THROTTLE_ELEMENTS:
        reasons = element.find(container)
        if reasons is None:
            continue
        states = {
            child.tag.removeprefix(prefix): text_value(child.text)
            for child in reasons
            if child.tag.startswith(prefix)
        }
        if any(state is not None for state in states.values()):
            return [name for _bit, name in CLOCK_EVENT_BITS if states.get(name) == "Active"]
    return None


def _total(element: ET.Element, *paths: str) -> int | None:
    """The sum of the counts at ``paths`` that are reported; None when none is."""
    values = [_int(element, path) for path in paths]
    known = [value for value in values if value is not None]
    return sum(known) if known else None


def _read_memory_health(gpu: Gpu, element: ET.Element) -> None:
    """ECC errors since the driver loaded, and memory retired or remapped for good."""
    if element.find("ecc_errors/volatile/single_bit") is not None:
        # Before DTD v12: single- and double-bit totals.
        gpu.ecc_errors_corrected = _int(element, "ecc_errors/volatile/single_bit/total")
        gpu.ecc_errors_uncorrected = _int(element, "ecc_errors/volatile/double_bit/total")
    else:
        gpu.ecc_errors_corrected = _total(
            element, "ecc_errors/volatile/sram_correctable", "ecc_errors/volatile/dram_correctable"
        )
        gpu.ecc_errors_uncorrected = _total(
            element,
            "ecc_errors/volatile/sram_uncorrectable",
            "ecc_errors/volatile/sram_uncorrectable_parity",
            "ecc_errors/volatile/sram_uncorrectable_secded",
            "ecc_errors/volatile/dram_uncorrectable",
        )
    gpu.retired_pages = _total(
        element,
        "retired_pages/multiple_single_bit_retirement/retired_count",
        "retired_pages/double_bit_retirement/retired_count",
    )
    gpu.remapped_rows = _total(
        element, "remapped_rows/remapped_row_corr", "remapped_rows/remapped_row_unc"
    )
    pending = [
        text_value(element.findtext(path))
        for path in ("retired_pages/pending_retirement", "remapped_rows/remapped_row_pending")
    ]
    if any(state is not None for state in pending):
        gpu.memory_repair_pending = "Yes" in pending


def _slowdown_from_tlimit(element: ET.Element) -> Number | None:
    """The slowdown temperature of a board that reports its thresholds as T.Limit margins
    (drivers from 530 on some boards: H100, RTX 4090): ``gpu_temp_tlimit`` is how many degrees
    the GPU is below its T.Limit, and the slowdown threshold is a margin too (-2: two degrees
    past T.Limit), so the threshold is the temperature plus its margin less the threshold's."""
    temperature = _number(element, "temperature/gpu_temp")
    margin = _number(element, "temperature/gpu_temp_tlimit")
    threshold = _number(element, "temperature/gpu_temp_slow_tlimit_threshold")
    if temperature is None or margin is None or threshold is None:
        return None
    return temperature + margin - threshold


def _mig_device(element: ET.Element) -> MigDevice:
    index = _int(element, "index")
    return MigDevice(
        index=index if index is not None else 0,
        gpu_instance_id=_int(element, "gpu_instance_id"),
        compute_instance_id=_int(element, "compute_instance_id"),
        memory_total_mib=_number(element, "fb_memory_usage/total"),
        memory_used_mib=_number(element, "fb_memory_usage/used"),
    )


def _process(element: ET.Element) -> GpuProcess | None:
    pid = _int(element, "pid")
    if pid is None:
        return None
    return GpuProcess(
        pid=pid,
        used_memory_mib=_number(element, "used_memory"),
        name=text_value(element.findtext("process_name")),
        type=text_value(element.findtext("type")),
        gpu_instance_id=_int(element, "gpu_instance_id"),
    )
