"""The table of GPU readings against what it names: the snapshot's fields, the REST contract and
the fields of nvidia-smi's real outputs."""

from __future__ import annotations

import dataclasses
import re

from jupyterlab_gpu_monitor.contract import document
from jupyterlab_gpu_monitor.gpu.model import Gpu
from jupyterlab_gpu_monitor.gpu.readings import HISTORY_FIELDS, READING, READINGS

from .replay import FIXTURES

# The schema's words for each unit, as its descriptions say them.
UNIT_WORDS = {
    "%": "percent",
    "MiB": "MiB",
    "°C": "degrees Celsius",
    "W": "watts",
    "J": "joules",
    "MHz": "MHz",
    "B/s": "per second",
}
# Gpu fields that are not a reading of the GPU: who it is, what runs on it, why it is null.
NOT_READINGS = {
    "index",
    "uuid",
    "name",
    "pci_bus_id",
    "mig_mode",
    "mig_devices",
    "processes",
    "processes_omitted",
    "unavailable",
    "error",
}


def test_every_reading_is_a_snapshot_field_the_contract_declares_in_its_unit():
    properties = document("gpus")["$defs"]["Gpu"]["properties"]
    fields = {field.name for field in dataclasses.fields(Gpu)}
    assert {reading.field for reading in READINGS} == fields - NOT_READINGS
    assert set(properties) == fields
    for reading in READINGS:
        described = properties[reading.field]["description"]
        if reading.unit:
            assert UNIT_WORDS[reading.unit] in described, reading.field
        assert reading.kind in {"gauge", "sum", "any", "pstate", "reasons"}, reading.field


def test_each_name_of_a_source_holds_one_reading():
    for source in ("smi_csv", "smi_xml", "dcgm", "exporter"):
        names = [name for reading in READINGS for name in getattr(reading, source)]
        assert len(names) == len(set(names)), source
    metrics = [reading.metric for reading in READINGS if reading.metric]
    assert len(metrics) == len(set(metrics))
    assert all(reading.dcgm for reading in READINGS), "DCGM names every reading"


def test_the_csv_names_are_fields_of_real_nvidia_smi_queries():
    headers = set()
    for capture in (FIXTURES / "nvidia-smi" / "csv").glob("*query-gpu*.csv"):
        first = capture.read_text().splitlines()[0]
        headers |= {re.sub(r"\s*\[.*\]$", "", name.strip()) for name in first.split(",")}
    for reading in READINGS:
        if reading.smi_csv:
            # nvidia-smi prints some under another name than it is asked for (clocks.sm comes
            # back as clocks.current.sm): one of its names is one it prints.
            assert set(reading.smi_csv) & headers, reading.field


def test_the_history_answers_each_reading_it_keeps():
    # GET gpus/history has a column per kept reading, and nothing else but the GPU's name.
    columns = set(document("gpus")["$defs"]["GpuSeries"]["properties"])
    assert columns - {"index", "uuid", "name"} == set(HISTORY_FIELDS)
    assert all(READING[field].kind == "gauge" for field in HISTORY_FIELDS)
