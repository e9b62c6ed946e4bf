"""scripts/gpu-check, the one run on a lent GPU: its comparison of two readings, and its dry run
(every step that runs without a GPU: the fake nvidia-smi replaying a real capture, a real
jupyter server, a real ipykernel with PyTorch's CPU build), so that the GPU run does not fail on
a typo."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
import tarfile
from types import SimpleNamespace

import pynvml
import pytest
from jupyterlab_gpu_monitor.gpu.nvidia_smi import NvidiaSmiSource
from jupyterlab_gpu_monitor.gpu.nvml import NvmlSource
from jupyterlab_gpu_monitor.gpu.smi_csv import QUERY_GPU_FIELDS
from jupyterlab_gpu_monitor.gpu.smi_xml import parse_xml

from .replay import REPO, SMI_FIXTURES
from .test_nvml_source import MIB, StandInNvml, a100_device
from .test_probe import environment

sys.path.insert(0, str(REPO / "scripts"))

from gpu_check import wheels
from gpu_check.compare import compare, compare_moment
from gpu_check.readings import agreement, nvml_memory, source_readings
from gpu_check.timing import loop_blocking, read_costs

CAPTURE = SMI_FIXTURES / "xml/tesla-v100s-pcie-32gb-x8-driver-460.73.01-v11.xml"
OUTPUT_FILES = {
    "captures.tar.gz",
    "comparisons.json",
    "timings.json",
    "server.json",
    "report.json",
    "report.txt",
    "jupyter-server.log",
}
# What every comparison of two nvidia-smi formats must have found on both sides.
READINGS = {
    "name", "uuid", "pci_bus_id", "memory_total_mib", "memory_used_mib", "utilization_gpu",
    "temperature_c", "power_draw_w", "power_limit_w", "sm_clock_mhz", "processes.pid",
    "processes.used_memory_mib",
}  # fmt: skip


def snapshot():
    return parse_xml(CAPTURE.read_text(), 0.0)


def test_one_field_apart_is_reported_with_its_name_and_gpu():
    left, right = snapshot(), snapshot()
    right.gpus[3].temperature_c += 5  # beyond the 2 °C two reads a second apart may differ
    right.gpus[5].utilization_gpu -= 10  # within what a second of a busy GPU moves
    (difference,) = compare(left, right).differences
    uuid = left.gpus[3].uuid
    assert (difference.field, difference.path) == ("temperature_c", f"gpus[{uuid}].temperature_c")
    assert (difference.left, difference.right, difference.tolerance) == (61, 66, "2")


def test_a_process_on_one_side_only_and_a_changed_name_are_differences():
    left, right = snapshot(), snapshot()
    right.gpus[0].processes.clear()
    right.gpus[1].name = "Tesla V100S-PCIE-16GB"
    found = {(d.field, d.left, d.right) for d in compare(left, right).differences}
    assert found == {
        ("processes", "present", "missing"),
        ("name", "Tesla V100S-PCIE-32GB", "Tesla V100S-PCIE-16GB"),
    }


def test_a_value_that_moved_between_the_reads_around_it_is_no_difference():
    before, subject, after = snapshot(), snapshot(), snapshot()
    before.gpus[0].memory_used_mib = 1000  # allocated between the two reads
    subject.gpus[0].memory_used_mib = after.gpus[0].memory_used_mib = 31689
    subject.gpus[1].memory_used_mib = 20000  # what neither neighbour saw
    (difference,) = compare_moment(subject, [before, after]).differences
    assert difference.path == f"gpus[{subject.gpus[1].uuid}].memory_used_mib"


def test_fields_both_sides_leave_null_are_told_apart_from_those_compared():
    left = snapshot()
    found = compare(left, copy.deepcopy(left)).to_json()
    assert found["differences"] == []
    assert READINGS <= set(found["fields_compared"])
    assert {"fan_speed_pct", "mig_mode"} <= set(found["fields_null"])  # the V100S has neither


class A10gNvml(StandInNvml):
    """NVML as it would answer on the machine of the A10G capture."""

    def nvmlSystemGetDriverVersion(self):
        return "515.105.01"

    def nvmlSystemGetCudaDriverVersion(self):
        return 11070


def a10g(**overrides) -> dict:
    """The A10G capture's readings as NVML's calls return them (its one process is Xorg, a
    graphics process, which neither NVML's compute list nor the CSV query lists). Ampere, as
    the A100 is: the same memory health calls answer alike."""
    device = a100_device(
        Name="NVIDIA A10G",
        UUID="GPU-9a9a6c50-2a47-2f51-a902-b82c3b127e94",
        PciInfo=SimpleNamespace(busId="00000000:00:1E.0"),
        MigMode=pynvml.NVMLError(pynvml.NVML_ERROR_NOT_SUPPORTED),
        UtilizationRates=SimpleNamespace(gpu=0, memory=0),
        MemoryInfo=SimpleNamespace(total=23028 * MIB, used=22 * MIB, free=22569 * MIB),
        Temperature=17,
        TemperatureThreshold=95,
        PowerUsage=25_580,
        EnforcedPowerLimit=300_000,
        FanSpeed=0,
        ClockInfo={pynvml.NVML_CLOCK_SM: 210, pynvml.NVML_CLOCK_MEM: 405},
        PerformanceState=8,
        CurrentClocksEventReasons=0x1,
        ComputeRunningProcesses=[],
    )
    return {**device, **overrides}


async def test_nvml_and_nvidia_smi_differing_in_one_reading_report_that_one(fake_smi):
    fake_smi.replay("xml/a10g-driver-515.105-v11-1proc.xml")
    nvml = NvmlSource(nvml=A10gNvml([a10g(Temperature=20)]))
    before_and_after, smi = await source_readings(nvml, NvidiaSmiSource())
    found = agreement("idle", smi, before_and_after)
    assert (found.left, found.right, found.neighbours) == ("nvml", "nvidia-smi", 2)
    differences = [(d.field, d.left, d.right) for d in found.comparison.differences]
    assert differences == [("temperature_c", 20, 17)]
    compared = set(found.comparison.compared)
    assert READINGS - {"processes.pid", "processes.used_memory_mib"} <= compared
    assert {"driver_version", "cuda_version", "fan_speed_pct"} <= compared


async def test_nvml_and_nvidia_smi_reads_are_timed_in_turns_and_the_loop_watched(fake_smi):
    fake_smi.replay("xml/a10g-driver-515.105-v11-1proc.xml")
    sources = {"nvml": NvmlSource(nvml=A10gNvml([a10g()])), "nvidia-smi": NvidiaSmiSource()}
    costs = await read_costs(sources, reads=2)
    assert [costs[name]["reads"] for name in sources] == [2, 2]
    # The first nvidia-smi read cycle also runs -q -x (its cost is in first_read_ms); the
    # figures themselves are not compared here: they depend on the machine's load.
    assert sum("-q" in call.split() for call in fake_smi.calls()) == 1
    smi = costs["nvidia-smi"]
    assert smi["first_read_ms"] > 0 and smi["min_ms"] <= smi["median_ms"] <= smi["max_ms"]
    blocking = await loop_blocking(sources["nvml"], seconds=0.5, interval_seconds=0.1)
    assert blocking["source"] == "nvml" and blocking["read_error"] is None
    assert blocking["reads"] >= 1 and blocking["reading"]["ticks"] >= 1


class MemoryNvml(A10gNvml):
    """NVML on a driver of 510 or later: v1 counts the reserved memory as used, v2 does not."""

    nvmlMemory_v2 = pynvml.nvmlMemory_v2

    def nvmlDeviceGetMemoryInfo(self, handle, version=None):
        if version is None:
            return SimpleNamespace(total=23028 * MIB, used=460 * MIB, free=22568 * MIB)
        if handle["MemoryInfo"] == "v1 only":
            raise pynvml.NVMLError(pynvml.NVML_ERROR_FUNCTION_NOT_FOUND)
        return SimpleNamespace(
            total=23028 * MIB, reserved=438 * MIB, used=22 * MIB, free=22568 * MIB
        )


def test_nvml_memory_gives_both_structures_and_why_one_is_missing():
    found = nvml_memory(MemoryNvml([a10g(), a10g(MemoryInfo="v1 only")]))
    assert found["0"]["v1"] == {"total": 23028 * MIB, "used": 460 * MIB, "free": 22568 * MIB}
    assert found["0"]["v2"]["reserved"] + found["0"]["v2"]["used"] == found["0"]["v1"]["used"]
    assert "NVMLError_FunctionNotFound" in found["1"]["v2"]["error"] and "used" in found["1"]["v1"]
    assert "NVMLError_LibraryNotFound" in nvml_memory()["error"]  # no driver here


def test_wheels_that_do_not_install_are_a_reason_not_the_end(tmp_path):
    assert wheels.install(tmp_path).startswith(f"no wheels in {tmp_path}")
    (tmp_path / "broken-1.0-py3-none-any.whl").write_bytes(b"not a zip")
    assert wheels.install(tmp_path).startswith("pip exited with")


@pytest.fixture(scope="module")
def dry_run(tmp_path_factory):
    """One dry run for the tests below (it takes about 20 s); its output folder."""
    out = tmp_path_factory.mktemp("gpu-check")
    kernel_python = environment("torch-cpu") / "bin" / "python"
    environ = {k: v for k, v in os.environ.items() if not k.startswith("FAKE_SMI_")}
    result = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "gpu-check"), "--dry-run", str(out),
         "--kernel-python", str(kernel_python)],
        capture_output=True, text=True, timeout=240, env=environ,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return out


def read(out, name: str):
    return json.loads((out / name).read_text())


def test_dry_run_writes_its_files_and_no_verdict_fails(dry_run):
    assert {path.name for path in dry_run.iterdir()} == OUTPUT_FILES  # the device returns 8
    report = read(dry_run, "report.json")
    assert report["mode"] == "dry-run" and report["failed"] == 0
    statuses = {verdict["name"]: verdict["status"] for verdict in report["verdicts"]}
    assert statuses["idle: nvml and nvidia-smi agree"] == "skip"  # no driver here
    assert statuses["busy: csv and xml agree"] == "pass"
    assert "0 of" in (dry_run / "report.txt").read_text().splitlines()[-1]


def test_dry_run_saves_each_output_byte_for_byte_with_the_fields_our_source_asks(dry_run):
    with tarfile.open(dry_run / "captures.tar.gz") as archive:
        names = set(archive.getnames())
        manifest = json.load(archive.extractfile("manifest.json"))
        xml = archive.extractfile("idle/q-x.xml").read()
        with_header = archive.extractfile("idle/query-gpu-csv-nounits.csv").read().decode()
        headerless = archive.extractfile("idle/query-gpu-csv-noheader-nounits.csv").read()
    assert {"idle/q-x.xml", "busy/query-compute-apps-csv.csv", "busy/plain.txt"} <= names
    assert len(names) == 2 * 8 + 1
    assert xml == CAPTURE.read_bytes()  # idle: the capture as it is (busy: our pid in it)
    assert with_header.splitlines()[0] == ", ".join(QUERY_GPU_FIELDS)
    assert headerless.decode().splitlines()[0].startswith("0, GPU-76098dc1")
    queries = [c["argv"][1] for c in manifest["captures"] if c["name"].startswith("query-gpu")]
    assert set(queries) == {f"--query-gpu={','.join(QUERY_GPU_FIELDS)}"}
    assert manifest["machine"]["mode"] == "dry-run"


def test_dry_run_compares_every_reading_of_both_nvidia_smi_formats(dry_run):
    comparisons = read(dry_run, "comparisons.json")["comparisons"]
    by_pair = {(c["phase"], c["left"], c["right"]): c for c in comparisons}
    for phase in ("idle", "busy"):
        for right in ("xml", "csv-units", "csv-noheader"):
            found = by_pair[(phase, "csv", right)]
            assert found["status"] == "pass" and found["differences"] == []
            assert READINGS <= set(found["fields_compared"]), (phase, right)
        nvml = by_pair[(phase, "nvml", "nvidia-smi")]
        assert nvml["status"] == "skip" and "not_installed" in nvml["skipped"]
    nvml_memory_bytes = read(dry_run, "comparisons.json")["nvml_memory_bytes"]
    assert {phase: set(found) for phase, found in nvml_memory_bytes.items()} == {
        "idle": {"error"},
        "busy": {"error"},
    }


def test_dry_run_joins_the_kernel_to_its_notebook_and_reports_its_memory(dry_run):
    server = read(dry_run, "server.json")
    kernel = server["kernels_entry"]
    joined = server["joined_processes"]
    # The capture's one process, on each of its 8 GPUs, is now the kernel.
    assert len(joined) == 8
    assert {(p["pid"], p["kernel_id"], p["session_path"]) for p in joined} == {
        (server["kernel"]["pid"], kernel["kernel_id"], "gpu-check.ipynb")
    }
    capture_memory = sum(p.used_memory_mib for gpu in snapshot().gpus for p in gpu.processes)
    assert kernel["memory_used_mib"] == capture_memory == server["spans"][0]["peak_memory_mib"]
    probed = server["probe_torch"]
    assert (probed["version"], probed["cuda"], probed["cuda_available"]) == (
        "2.13.0+cpu",
        None,
        False,
    )
    findings = [finding["id"] for finding in server["diagnosis"]["findings"]]
    assert sorted(findings) == server["expected_findings"]
    assert server["expected_findings"] == ["cpu-only-torch", "gpu-idle-while-holding-memory"]
    assert not any(server["contract_problems"].values())


def test_dry_run_times_the_nvidia_smi_cycle_and_says_why_nvml_is_not(dry_run):
    timings = read(dry_run, "timings.json")
    costs = timings["read_costs"]
    assert costs["nvidia-smi"]["reads"] == 3 and costs["nvidia-smi"]["median_ms"] > 0
    assert "not_installed" in costs["nvml"]["skipped"]
    assert timings["nvidia_smi_to_nvml_ratio"] is None
    loop = timings["event_loop"]["nvidia-smi"]
    assert loop["reads"] >= 2 and loop["read_error"] is None
