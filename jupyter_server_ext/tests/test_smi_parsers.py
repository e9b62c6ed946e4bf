"""The nvidia-smi parsers against every real capture: the numbers read are the capture's."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from jupyterlab_gpu_monitor.gpu.errors import ERROR_KINDS, HINTS, error_from_output, kind_of_message
from jupyterlab_gpu_monitor.gpu.model import MIG_UNAVAILABLE
from jupyterlab_gpu_monitor.gpu.nvidia_smi import parse_saved_output
from jupyterlab_gpu_monitor.gpu.nvml import read_error
from jupyterlab_gpu_monitor.gpu.smi_csv import field_name, parse_compute_apps, parse_query_gpu
from jupyterlab_gpu_monitor.gpu.smi_list import parse_list
from jupyterlab_gpu_monitor.gpu.smi_xml import parse_xml

from .replay import SMI_FIXTURES, captures

XML_CAPTURES = captures("xml", "*.xml")
QUERY_GPU_CAPTURES = [p for p in captures("csv", "*.csv") if "compute-apps" not in p.name]
APPS_CAPTURES = captures("csv", "*compute-apps*.csv")
ERROR_CAPTURES = captures("errors")

# The field lists of the captures saved with `noheader`, from fixtures/PROVENANCE.md.
HEADERLESS_FIELDS = {
    "gpu-query-noheader-nounits-fan-na-newer-driver.csv": "memory.total,memory.free,memory.used,"
    "temperature.gpu,fan.speed,utilization.gpu,utilization.memory",
    "gpu-query-noheader-nounits-fan-not-supported-older-driver.csv": "memory.total,memory.free,"
    "memory.used,temperature.gpu,fan.speed,utilization.gpu,utilization.memory",
    "gtx1070ti-query-gpu-noheader-nounits.csv": "fan.speed,memory.total,memory.used,memory.free,"
    "pstate,temperature.gpu,name,uuid,compute_mode,utilization.gpu,utilization.memory,index",
}


def read(path: Path) -> str:
    return path.read_text()


def test_every_capture_folder_holds_captures():
    assert len(XML_CAPTURES) >= 20
    assert len(QUERY_GPU_CAPTURES) >= 10
    assert len(APPS_CAPTURES) >= 4
    assert len(ERROR_CAPTURES) >= 9


# --- XML: every capture, cross-checked against the text itself ---------------------------


def _gpu_sections(text: str) -> list[str]:
    """Each <gpu> element's text without its MIG devices and processes (which have their own
    fb_memory_usage and used_memory), found with plain regular expressions."""
    sections = re.split(r"<gpu id=", text)[1:]
    cut = r"<(mig_devices|processes|accounted_processes)>.*?</\1>"
    return [re.sub(cut, "", section, flags=re.S) for section in sections]


def _tag(section: str, path: str) -> str | None:
    pattern = r".*?".join(f"<{name}>" for name in path.split("/")) + r"([^<]*)<"
    match = re.search(pattern, section, flags=re.S)
    return match.group(1).strip() if match else None


def _number_in(raw: str | None) -> float | None:
    match = re.match(r"-?\d+(\.\d+)?", raw or "")
    return float(match.group(0)) if match else None


@pytest.mark.parametrize("capture", XML_CAPTURES, ids=lambda p: p.name)
def test_xml_capture_parses_to_the_numbers_in_it(capture: Path):
    text = read(capture)
    snapshot = parse_xml(text, timestamp=1.0)
    sections = _gpu_sections(text)
    assert len(snapshot.gpus) == len(sections) >= 1
    assert snapshot.driver_version == _tag(text, "driver_version")
    for index, (gpu, section) in enumerate(zip(snapshot.gpus, sections)):
        assert gpu.index == index
        assert gpu.name == _tag(section, "product_name")
        assert gpu.uuid == _tag(section, "uuid")
        assert gpu.memory_total_mib == _number_in(_tag(section, "fb_memory_usage/total"))
        assert gpu.memory_used_mib == _number_in(_tag(section, "fb_memory_usage/used"))
        assert gpu.utilization_gpu == _number_in(_tag(section, "utilization/gpu_util"))
        assert gpu.temperature_c == _number_in(_tag(section, "temperature/gpu_temp"))
        slowdown = _number_in(_tag(section, "temperature/gpu_temp_slow_threshold"))
        if slowdown is not None:
            assert gpu.temperature_slowdown_c == slowdown
        assert gpu.fan_speed_pct == _number_in(_tag(section, "fan_speed"))
        assert gpu.performance_state == _tag(section, "performance_state")
        assert gpu.memory_clock_mhz == _number_in(_tag(section, "clocks/mem_clock"))
        sent = _number_in(_tag(section, "pci/tx_util"))
        assert gpu.pcie_sent_bytes_per_second == (None if sent is None else sent * 1024)
    pids = [int(p) for p in re.findall(r"<process_info>.*?<pid>(\d+)</pid>", text, flags=re.S)]
    assert [p.pid for gpu in snapshot.gpus for p in gpu.processes] == pids


@pytest.mark.parametrize(
    "name, slowdowns",
    [
        ("tesla-v100s-pcie-32gb-x8-driver-460.73.01-v11.xml", [87] * 8),
        ("rtx-a5000-x2-driver-590.44-v13-2procs.xml", [95, 95]),
        # Thresholds as T.Limit margins: GPU 0 at 29 °C, 58 below T.Limit, slowing 2 past it
        # (whole degrees each: one GPU to the next differs by one).
        ("h100-80gb-hbm3-x8-driver-580.105.08-v13.xml", [89, 88, 88, 89, 89, 89, 89, 88]),
        # 40 °C, 43 below T.Limit, slowing 2 past it.
        ("rtx4090-driver-535.86-v12.xml", [85]),
        # A partial document without any threshold.
        ("gtx1070ti-partial-fields-v10.xml", [None]),
    ],
)
def test_the_slowdown_temperature_is_read_as_degrees_or_from_t_limit_margins(name, slowdowns):
    snapshot = parse_xml(read(SMI_FIXTURES / "xml" / name), 1.0)
    assert [gpu.temperature_slowdown_c for gpu in snapshot.gpus] == slowdowns


@pytest.mark.parametrize(
    "name, reasons",
    [
        # Two GeForce cards of one machine: one idle, one held at its power limit.
        ("rtx2080ti-x2-ecc-na-driver-410.73-v10.xml", [["gpu_idle"], ["sw_power_cap"]]),
        # An idle RTX 3090 whose power limit holds it (driver 530 renamed the element).
        ("rtx3090-driver-590.44-v13.xml", [["sw_power_cap"]]),
        # Under load at P2, nothing holds it.
        ("rtx3080-driver-595.58-v13.xml", [[]]),
        # A partial document without the element.
        ("gtx1070ti-partial-fields-v10.xml", [None]),
    ],
)
def test_what_holds_the_clocks_down_is_read_under_either_name(name, reasons):
    snapshot = parse_xml(read(SMI_FIXTURES / "xml" / name), 1.0)
    assert [gpu.clock_throttle_reasons for gpu in snapshot.gpus] == reasons


@pytest.mark.parametrize(
    "name, received_mib_per_second",
    [
        # An RTX 3080 loading a batch: 14.1 GiB/s from the host, the bus's 20 ms sample.
        ("rtx3080-driver-595.58-v13.xml", [14396.8]),
        # Eight V100S, each fed at its own pace.
        ("tesla-v100s-pcie-32gb-x8-driver-460.73.01-v11.xml", [18.6, 38.1, 40.0]),
        # A partial document without the element.
        ("gtx1070ti-partial-fields-v10.xml", [None]),
    ],
)
def test_pcie_throughput_is_read_in_bytes_per_second(name, received_mib_per_second):
    gpus = parse_xml(read(SMI_FIXTURES / "xml" / name), 1.0).gpus[:3]
    received = [gpu.pcie_received_bytes_per_second for gpu in gpus]
    assert [None if r is None else round(r / 2**20, 1) for r in received] == (
        received_mib_per_second
    )


@pytest.mark.parametrize(
    "name, health",
    [
        # Pascal retires pages; its 3 corrected errors are lifetime (aggregate) counts, not
        # since the driver loaded.
        ("tesla-p100-pcie-16gb-driver-510.47-v11.xml", (0, 0, 0, None, False)),
        # The V100S's DTD v11 counts single- and double-bit errors.
        ("tesla-v100s-pcie-32gb-x8-driver-460.73.01-v11.xml", (0, 0, 0, None, False)),
        # Hopper remaps rows, SRAM and DRAM errors counted apart.
        ("h100-80gb-hbm3-x8-driver-580.105.08-v13.xml", (0, 0, None, 0, False)),
        # A GeForce card has no ECC, and remaps rows since Ampere.
        ("rtx4090-driver-535.86-v12.xml", (None, None, None, 0, False)),
        ("rtx2080-x2-driver-590.44-v13.xml", (None, None, None, None, None)),
    ],
)
def test_memory_errors_and_repairs_are_read_for_each_generation(name, health):
    gpu = parse_xml(read(SMI_FIXTURES / "xml" / name), 1.0).gpus[0]
    assert (
        gpu.ecc_errors_corrected,
        gpu.ecc_errors_uncorrected,
        gpu.retired_pages,
        gpu.remapped_rows,
        gpu.memory_repair_pending,
    ) == health


def test_a100_in_mig_mode_lists_its_instances_and_says_why_utilisation_is_missing():
    snapshot = parse_xml(
        read(SMI_FIXTURES / "xml/a100-sxm4-80gb-mig-4instances-driver-535.54-v12.xml"), 1.0
    )
    assert (snapshot.driver_version, snapshot.cuda_version) == ("535.54.03", "12.2")
    (gpu,) = snapshot.gpus  # attached_gpus says 4; the capture holds one <gpu>
    assert gpu.name == "NVIDIA A100-SXM4-80GB"
    assert gpu.mig_mode == "enabled"
    assert [d.gpu_instance_id for d in gpu.mig_devices] == [3, 4, 5, 6]
    assert {(d.memory_total_mib, d.memory_used_mib) for d in gpu.mig_devices} == {(19968, 12)}
    assert gpu.utilization_gpu is None
    assert gpu.unavailable["utilization_gpu"] == MIG_UNAVAILABLE
    assert (gpu.memory_total_mib, gpu.memory_used_mib) == (81920, 50)
    assert (gpu.power_draw_w, gpu.power_limit_w) == (67.03, 500.0)
    assert gpu.sm_clock_mhz == 1275


def test_two_a5000s_keep_nvidia_smi_order_and_their_processes():
    snapshot = parse_xml(read(SMI_FIXTURES / "xml/rtx-a5000-x2-driver-590.44-v13-2procs.xml"), 1.0)
    assert snapshot.cuda_version == "13.1"
    assert [gpu.index for gpu in snapshot.gpus] == [0, 1]
    processes = [(p.pid, p.type, p.used_memory_mib) for g in snapshot.gpus for p in g.processes]
    assert all(kind == "C" for _, kind, _ in processes)
    assert processes[0] == (100477, "C", 22430)
    assert snapshot.gpus[0].processes[0].name == "/root/src/llama.cpp/build/bin/llama-server"


def test_windows_wddm_processes_have_no_memory_figure_rather_than_zero():
    snapshot = parse_xml(
        read(SMI_FIXTURES / "xml/rtx2080-windows-wddm-driver-516.59-v11-26procs.xml"), 1.0
    )
    processes = snapshot.gpus[0].processes
    assert len(processes) == 26
    assert all(p.used_memory_mib is None for p in processes)
    assert processes[0].type == "C+G"


def test_partial_v10_document_without_driver_still_gives_its_gpu():
    snapshot = parse_xml(read(SMI_FIXTURES / "xml/gtx1070ti-partial-fields-v10.xml"), 1.0)
    assert snapshot.driver_version is None
    (gpu,) = snapshot.gpus
    assert (gpu.memory_total_mib, gpu.memory_used_mib, gpu.fan_speed_pct) == (4096, 42, 100)
    assert gpu.power_draw_w is None  # N/A in the capture
    assert gpu.mig_mode is None


def test_old_driver_power_readings_are_found():
    snapshot = parse_xml(read(SMI_FIXTURES / "xml/tesla-p100-pcie-16gb-driver-510.47-v11.xml"), 1.0)
    gpu = snapshot.gpus[0]
    assert gpu.power_draw_w is not None and gpu.power_limit_w == 250.0


# --- CSV ----------------------------------------------------------------------------------


def _header_and_row(path: Path, fields: str | None) -> dict[str, str]:
    lines = [line for line in read(path).splitlines() if line.strip()]
    names = fields.split(",") if fields else [field_name(c) for c in lines[0].split(", ")]
    return dict(zip(names, (c.strip() for c in lines[-1].split(", "))))


@pytest.mark.parametrize("capture", QUERY_GPU_CAPTURES, ids=lambda p: p.name)
def test_query_gpu_capture_parses_to_the_numbers_in_it(capture: Path):
    fields = HEADERLESS_FIELDS.get(capture.name)
    rows = parse_query_gpu(read(capture), fields.split(",") if fields else None)
    cells = _header_and_row(capture, fields)
    gpu = rows.gpus[-1]
    for field, attribute in (
        ("memory.used", "memory_used_mib"),
        ("memory.free", "memory_free_mib"),
        ("utilization.gpu", "utilization_gpu"),
        ("temperature.gpu", "temperature_c"),
        ("fan.speed", "fan_speed_pct"),
        ("power.draw", "power_draw_w"),
    ):
        if field in cells:
            assert getattr(gpu, attribute) == _number_in(cells[field]), field
    if "name" in cells:
        assert gpu.name == cells["name"]


@pytest.mark.parametrize(
    "name, readings",
    [
        # Driver 465 names the bitmask clocks_throttle_reasons.active and has no encoder field.
        ("rtx2080super-ubuntu2004-465.27-query-gpu.csv", ("P8", 405, None, ["gpu_idle"])),
        # Driver 590: clocks_event_reasons.active, an H100 under load.
        ("h100-80gb-hbm3-590.48.01-query-gpu-load.csv", ("P0", 2619, 0, [])),
        # Fields asked by name, without the reasons.
        ("tesla-p100-510-query-gpu-csv-nounits.csv", ("P0", 715, None, None)),
    ],
)
def test_query_gpu_gives_the_performance_state_memory_clock_and_clock_reasons(name, readings):
    (gpu,) = parse_query_gpu(read(SMI_FIXTURES / "csv" / name)).gpus
    assert (
        gpu.performance_state,
        gpu.memory_clock_mhz,
        gpu.encoder_utilization,
        gpu.clock_throttle_reasons,
    ) == readings


def test_headerless_query_needs_and_uses_its_field_list():
    text = read(SMI_FIXTURES / "csv/gtx1070ti-query-gpu-noheader-nounits.csv")
    with pytest.raises(Exception) as raised:
        parse_query_gpu(text)
    assert getattr(raised.value, "kind", None) == "bad_output"
    fields = HEADERLESS_FIELDS["gtx1070ti-query-gpu-noheader-nounits.csv"].split(",")
    (gpu,) = parse_query_gpu(text, fields).gpus
    assert (gpu.index, gpu.name, gpu.utilization_gpu, gpu.memory_used_mib) == (
        1,
        "GeForce GTX 1070 Ti",
        100,
        553,
    )


@pytest.mark.parametrize(
    "name",
    [
        "gpu-query-noheader-nounits-fan-na-newer-driver.csv",
        "gpu-query-noheader-nounits-fan-not-supported-older-driver.csv",
    ],
)
def test_fan_that_is_not_reported_is_null_not_zero(name: str):
    (gpu,) = parse_query_gpu(
        read(SMI_FIXTURES / "csv" / name), HEADERLESS_FIELDS[name].split(",")
    ).gpus
    assert gpu.fan_speed_pct is None
    assert (gpu.memory_total_mib, gpu.temperature_c) == (2004, 44)


def test_unknown_error_cell_is_null_and_the_rest_of_the_row_is_read():
    path = SMI_FIXTURES / "csv/rtx2080ti-windows-442.19-query-gpu-csv-nounits-unknown-error.csv"
    (gpu,) = parse_query_gpu(read(path)).gpus
    assert (gpu.utilization_gpu, gpu.power_draw_w, gpu.power_limit_w) == (100, 228.82, 210.0)
    assert gpu.error is None


def test_h100_power_draw_prefers_the_plain_field_over_its_variants():
    rows = parse_query_gpu(read(SMI_FIXTURES / "csv/h100-80gb-hbm3-590.48.01-query-gpu-load.csv"))
    (gpu,) = rows.gpus
    assert rows.driver_version == "590.48.01"
    assert (gpu.power_draw_w, gpu.power_limit_w, gpu.sm_clock_mhz) == (631.95, 700.0, 1980)
    assert gpu.mig_mode == "disabled"


@pytest.mark.parametrize("capture", APPS_CAPTURES, ids=lambda p: p.name)
def test_compute_apps_capture_gives_each_process_with_its_memory(capture: Path):
    lines = [line for line in read(capture).splitlines() if line.strip()][1:]
    apps = parse_compute_apps(read(capture))
    assert [app.process.pid for app in apps] == [int(line.split(", ")[5]) for line in lines]
    assert [app.process.used_memory_mib for app in apps] == [
        _number_in(line.split(", ")[-1]) for line in lines
    ]


def test_mig_listing_names_profiles_and_instance_uuids():
    (gpu,) = parse_list(read(SMI_FIXTURES / "csv/h100-mig-3g-2g-1g-1g-list-gpus-L.txt"))
    assert gpu.name == "NVIDIA H100 80GB HBM3"
    assert [d.profile for d in gpu.mig_devices] == ["3g.40gb", "2g.20gb", "1g.10gb", "1g.10gb"]
    assert gpu.mig_devices[1].uuid == "MIG-00000001-0000-0000-0000-000000000001"


# --- error captures -------------------------------------------------------------------------

ERROR_KIND_OF_CAPTURE = {
    "device-handle-gpu-is-lost.txt": "gpu_lost",
    "driver-not-loaded-couldnt-communicate.txt": "driver_not_loaded",
    "libnvidia-ml-so-not-found.txt": "not_installed",
    "no-devices-were-found.txt": "no_devices",
    "nvml-driver-library-version-mismatch-nvml-570.124.txt": "version_mismatch",
    "nvml-driver-library-version-mismatch.txt": "version_mismatch",
    "nvml-unknown-error-in-container.txt": "unknown",
}


@pytest.mark.parametrize("capture", ERROR_CAPTURES, ids=lambda p: p.name)
def test_every_error_capture_becomes_a_typed_error_with_a_hint(capture: Path):
    error = error_from_output(read(capture), 9)
    assert error.kind in ERROR_KINDS
    assert error.message and error.message in " ".join(read(capture).split())
    assert error.hint == HINTS[error.kind]


@pytest.mark.parametrize("name,kind", sorted(ERROR_KIND_OF_CAPTURE.items()))
def test_error_capture_maps_to_its_kind(name: str, kind: str):
    assert error_from_output(read(SMI_FIXTURES / "errors" / name), 9).kind == kind


# nvidia-smi's words on machines our captures do not come from (WSL 2, containers, newer
# drivers), as their users reported them, and NVML's own error strings as nvidia-smi prints
# them after "Failed to initialize NVML: ". A reason is read by what it says.
REPORTED_MESSAGES = [
    # microsoft/WSL#9938, #10289, #14339: WSL 2 on a Windows driver or server that refuses it.
    ("Failed to initialize NVML: GPU access blocked by the operating system\n"
     "Failed to properly shut down NVML: GPU access blocked by the operating system", "permission"),
    # microsoft/WSL#11755
    ("Failed to initialize NVML: N/A\nFailed to properly shut down NVML: N/A", "unknown"),
    ("Failed to initialize NVML: Insufficient Permissions", "permission"),
    ("Failed to initialize NVML: The operating system has blocked the request", "permission"),
    ("Failed to initialize NVML: Driver Not Loaded", "driver_not_loaded"),
    ("Failed to initialize NVML: RM has detected an NVML/RM version mismatch.", "version_mismatch"),
    ("Failed to initialize NVML: NVML Shared Library Not Found", "not_installed"),
    ("Failed to initialize NVML: GPU not found", "no_devices"),
    ("Failed to initialize NVML: GPU requires restart", "gpu_lost"),
    ("Failed to initialize NVML: Timeout", "timeout"),
    ("Unable to determine the device handle for GPU 0000:3B:00.0: GPU is lost.  Reboot the "
     "system to recover this GPU", "gpu_lost"),
    ("Unable to determine the device handle for GPU0000:02:00.0: Unknown Error", "unknown"),
    ("nvidia-smi: error while loading shared libraries: libnvidia-ml.so.1: cannot open shared "
     "object file: No such file or directory", "not_installed"),
]  # fmt: skip


@pytest.mark.parametrize(("message", "kind"), REPORTED_MESSAGES, ids=lambda m: m[:48])
def test_a_failure_outside_the_captures_is_read_by_what_its_reason_says(message, kind):
    error = error_from_output(message + "\n", 9)
    assert error.kind == kind
    assert error.hint == HINTS[kind]


def test_nvml_exception_without_a_code_we_know_is_read_by_its_words():
    assert (
        read_error(RuntimeError("GPU access blocked by the operating system")).kind == "permission"
    )
    assert read_error(RuntimeError("something new")).kind == "unknown"


@pytest.mark.parametrize("capture", captures("errors", "nvlink-*"), ids=lambda p: p.name)
def test_nvlink_messages_are_not_mistaken_for_a_gpu_state(capture: Path):
    assert kind_of_message(read(capture)) is None
    assert error_from_output(read(capture), 0).kind == "bad_output"
    assert error_from_output(read(capture), 3).kind == "unknown"


# --- saved dumps, as `jupyter-gpu-monitor snapshot --from` reads them -----------------------


@pytest.mark.parametrize(
    "capture",
    XML_CAPTURES
    + [p for p in QUERY_GPU_CAPTURES if p.name not in HEADERLESS_FIELDS]
    + APPS_CAPTURES,
    ids=lambda p: p.name,
)
def test_saved_output_is_recognised_by_its_shape(capture: Path):
    snapshot = parse_saved_output(read(capture))
    assert snapshot.error is None
    if "idle-header-only" not in capture.name:
        assert snapshot.gpus
