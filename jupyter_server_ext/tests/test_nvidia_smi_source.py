"""The nvidia-smi source, running a fake nvidia-smi that replays real captures."""

from __future__ import annotations

import time

import pytest
from jupyterlab_gpu_monitor.gpu import lost_gpus, nvidia_smi
from jupyterlab_gpu_monitor.gpu.errors import GpuReadError
from jupyterlab_gpu_monitor.gpu.lost_gpus import lost_bus_id, short_bus_id
from jupyterlab_gpu_monitor.gpu.model import MIG_UNAVAILABLE
from jupyterlab_gpu_monitor.gpu.nvidia_smi import (
    XML_FACTS,
    NvidiaSmiSource,
    merge,
    name_mig_devices,
)
from jupyterlab_gpu_monitor.gpu.smi_list import parse_list
from jupyterlab_gpu_monitor.gpu.smi_xml import parse_xml

from .replay import SMI_FIXTURES, captures
from .test_smi_parsers import ERROR_KIND_OF_CAPTURE


async def test_a_read_gives_live_csv_numbers_and_slow_xml_facts(fake_smi):
    snapshot = await NvidiaSmiSource().sample()
    assert snapshot.source == "nvidia-smi"
    assert snapshot.driver_version == "590.48.01"  # from the CSV query
    assert snapshot.cuda_version == "13.1"  # only the XML has it
    (gpu,) = snapshot.gpus
    assert (gpu.name, gpu.utilization_gpu, gpu.memory_used_mib) == (
        "NVIDIA H100 80GB HBM3",
        100,
        19818,
    )
    assert [(p.pid, p.used_memory_mib) for p in gpu.processes] == [
        (11327, 2566),
        (11328, 1542),
        (11345, 15690),
    ]


async def test_the_xml_is_read_once_for_many_cheap_reads(fake_smi):
    fake_smi.replay("xml/rtx-a5000-x2-driver-590.44-v13-2procs.xml")  # one machine throughout
    source = NvidiaSmiSource()
    for _ in range(4):
        await source.sample()
    assert len(fake_smi.calls("-q -x")) == 1
    assert len(fake_smi.calls("--query-gpu=")) == 4
    assert len(fake_smi.calls("--query-compute-apps=")) == 4


async def test_idle_gpu_with_header_only_process_list_has_no_processes(fake_smi):
    fake_smi.replay(
        "xml/rtx3080-driver-595.58-v13.xml",
        "csv/l40s-595.80-query-gpu-idle.csv",
        "csv/h100-80gb-hbm3-590.48.01-compute-apps-idle-header-only.csv",
    )
    (gpu,) = (await NvidiaSmiSource().sample()).gpus
    assert gpu.processes == []
    assert gpu.fan_speed_pct is None  # [N/A] on the L40S


@pytest.mark.parametrize("name,kind", sorted(ERROR_KIND_OF_CAPTURE.items()))
async def test_nvidia_smi_error_output_becomes_the_typed_error(fake_smi, name, kind):
    fake_smi.fail(SMI_FIXTURES / "errors" / name)
    with pytest.raises(GpuReadError) as raised:
        await NvidiaSmiSource().sample()
    assert raised.value.kind == kind


@pytest.mark.parametrize("capture", captures("errors"), ids=lambda p: p.name)
async def test_every_error_capture_fails_the_read_with_a_message(fake_smi, capture):
    fake_smi.fail(capture, exit_status=0)
    with pytest.raises(GpuReadError) as raised:
        await NvidiaSmiSource().sample()
    assert raised.value.message and raised.value.hint


async def test_missing_binary_is_not_installed(no_nvidia_smi):
    with pytest.raises(GpuReadError) as raised:
        await NvidiaSmiSource().sample()
    assert raised.value.kind == "not_installed"
    assert "nvidia-smi was not found" in raised.value.message


async def test_hung_nvidia_smi_times_out_and_the_next_read_recovers(fake_smi):
    source = NvidiaSmiSource(timeout_seconds=0.5)
    fake_smi.mode("hang")
    started = time.monotonic()
    with pytest.raises(GpuReadError) as raised:
        await source.sample()
    assert raised.value.kind == "timeout"
    assert time.monotonic() - started < 3
    fake_smi.mode(None)
    assert (await source.sample()).gpus[0].utilization_gpu == 100


async def test_garbage_output_is_bad_output(fake_smi):
    fake_smi.mode("garbage")
    with pytest.raises(GpuReadError) as raised:
        await NvidiaSmiSource().sample()
    assert raised.value.kind == "bad_output"


async def test_field_an_old_driver_rejects_is_dropped_and_asked_without(fake_smi):
    fake_smi.replay(
        "xml/rtx2080ti-x2-ecc-na-driver-410.73-v10.xml",
        "csv/rtx2080super-ubuntu2004-465.27-query-gpu.csv",
        "csv/rtx2080super-linux-595.71.05-compute-apps-load.csv",
    )
    fake_smi.reject_field("mig.mode.current")
    source = NvidiaSmiSource()
    assert (await source.sample()).gpus[0].memory_used_mib == 344
    await source.sample()
    queries = fake_smi.calls("--query-gpu=")
    assert "mig.mode.current" in queries[0]
    assert all("mig.mode.current" not in query for query in queries[1:])
    assert len(queries) == 3  # rejected once, then two good reads


async def test_clock_reasons_are_asked_by_their_older_name_where_the_new_one_is_rejected(
    fake_smi,
):
    # Drivers before 530 know the bitmask as clocks_throttle_reasons.active only.
    fake_smi.replay("xml/rtx2080ti-x2-ecc-na-driver-410.73-v10.xml")
    fake_smi.reject_field("clocks_event_reasons.active")
    source = NvidiaSmiSource()
    snapshot = await source.sample()
    assert [g.clock_throttle_reasons for g in snapshot.gpus] == [["gpu_idle"], ["sw_power_cap"]]
    queries = fake_smi.calls("--query-gpu=")
    assert "clocks_event_reasons.active" in queries[0]
    assert "clocks_throttle_reasons.active" in queries[1]


async def test_mig_enabled_xml_asks_for_the_listing_but_only_trusts_the_same_gpu(fake_smi):
    fake_smi.replay(
        "xml/a100-sxm4-80gb-mig-4instances-driver-535.54-v12.xml",
        "csv/h100-80gb-hbm3-590.48.01-query-gpu-load.csv",
        "csv/h100-80gb-hbm3-590.48.01-compute-apps-idle-header-only.csv",
        listing="csv/h100-mig-3g-2g-1g-1g-list-gpus-L.txt",
    )
    static = await NvidiaSmiSource()._read_static()
    assert fake_smi.calls("-L")  # asked because the XML shows MIG enabled
    # The listing is of another GPU (an H100): its profiles must not label the A100's instances.
    assert [d.profile for d in static.gpus[0].mig_devices] == [None] * 4


def test_listing_names_the_instances_of_the_gpu_it_lists():
    (gpu,) = parse_xml(
        (SMI_FIXTURES / "xml/a100-sxm4-80gb-mig-4instances-driver-535.54-v12.xml").read_text(), 1.0
    ).gpus
    (listed,) = parse_list((SMI_FIXTURES / "csv/h100-mig-3g-2g-1g-1g-list-gpus-L.txt").read_text())
    listed.uuid = gpu.uuid
    name_mig_devices([gpu], [listed])
    assert [(d.gpu_instance_id, d.profile) for d in gpu.mig_devices] == [
        (3, "3g.40gb"),
        (4, "2g.20gb"),
        (5, "1g.10gb"),
        (6, "1g.10gb"),
    ]
    assert gpu.mig_devices[0].uuid == "MIG-00000000-0000-0000-0000-000000000000"


def test_merge_keeps_mig_instances_and_says_why_utilisation_is_missing():
    static = parse_xml(
        (SMI_FIXTURES / "xml/a100-sxm4-80gb-mig-4instances-driver-535.54-v12.xml").read_text(), 1.0
    )
    live = parse_xml(
        (SMI_FIXTURES / "xml/a100-sxm4-80gb-mig-4instances-driver-535.54-v12.xml").read_text(), 2.0
    ).gpus
    for gpu in live:
        gpu.mig_devices, gpu.mig_mode, gpu.unavailable = [], None, {}
    merged = merge(static, live, [], None, 2.0)
    (gpu,) = merged.gpus
    assert gpu.mig_mode == "enabled" and len(gpu.mig_devices) == 4
    assert gpu.unavailable == {
        "utilization_gpu": MIG_UNAVAILABLE,
        "utilization_memory": MIG_UNAVAILABLE,
    }
    assert merged.driver_version == "535.54.03"


@pytest.mark.parametrize("capture", captures("xml", "*.xml"), ids=lambda p: p.name)
async def test_one_xml_capture_replays_its_whole_machine(fake_smi, capture):
    fake_smi.replay(f"xml/{capture.name}")
    expected = parse_xml(capture.read_text(), 0.0)
    snapshot = await NvidiaSmiSource().sample()

    # The slowdown temperature and the memory's health have no --query-gpu field: they come
    # from the XML read now and then.
    def readings(gpu):
        return (
            gpu.error and (gpu.error.kind, gpu.error.message),
            gpu.name,
            gpu.memory_used_mib,
            gpu.utilization_gpu,
            gpu.performance_state,
            gpu.clock_throttle_reasons,
            *(getattr(gpu, attribute) for attribute in XML_FACTS),
        )

    assert [readings(g) for g in snapshot.gpus] == [readings(g) for g in expected.gpus]
    compute = [[p.pid for p in g.processes if "C" in (p.type or "")] for g in expected.gpus]
    assert [[p.pid for p in g.processes] for g in snapshot.gpus] == compute


async def test_a_lost_gpu_of_the_xml_stays_lost_beside_the_healthy_one(fake_smi):
    # Two GB200: every reading of GPU 1 in the XML says "GPU is lost"; the CSV has none of it.
    fake_smi.replay("xml/gb200-x2-gpu1-lost-driver-580.65-v13.xml")
    healthy, lost = (await NvidiaSmiSource().sample()).gpus
    assert healthy.error is None and healthy.utilization_gpu == 50
    assert healthy.ecc_errors_uncorrected == 5
    assert (lost.index, lost.pci_bus_id) == (1, "0000:0B:00.0")
    assert lost.error.kind == "gpu_lost"
    assert lost.error.message == "GPU 1 is lost"
    assert "sudo nvidia-smi -r" in lost.error.hint


V100S_X8 = "xml/tesla-v100s-pcie-32gb-x8-driver-460.73.01-v11.xml"


async def test_one_gpu_lost_failing_nvidia_smi_as_a_whole_keeps_the_other_seven(fake_smi):
    # An older driver: with GPU 1 of the 8x V100S off the bus, every call that reaches it fails
    # with the real "Unable to determine the device handle" message, and no GPU is printed.
    fake_smi.replay(V100S_X8)
    source = NvidiaSmiSource()
    before = await source.sample()
    fake_smi.lose("0000:00:0E.0")
    after = await source.sample()
    assert [gpu.index for gpu in after.gpus] == list(range(8))
    lost = after.gpus[1]
    assert (lost.pci_bus_id, lost.name) == ("00000000:00:0E.0", "Tesla V100S-PCIE-32GB")
    assert (lost.error.kind, lost.error.message) == ("gpu_lost", "GPU 1 is lost")
    assert lost.utilization_gpu is None and lost.processes == []
    # The seven others read as before, their processes included.
    healthy = [gpu for gpu in after.gpus if gpu.index != 1]
    expected = [gpu for gpu in before.gpus if gpu.index != 1]
    assert [(g.uuid, g.utilization_gpu, g.memory_used_mib) for g in healthy] == [
        (g.uuid, g.utilization_gpu, g.memory_used_mib) for g in expected
    ]
    assert [[p.pid for p in g.processes] for g in healthy] == [[37305]] * 7
    assert all(gpu.error is None for gpu in healthy)
    # Asked by id from then on: no read waits on the lost GPU's failure again.
    others = ",".join(f"0000:00:{slot}.0" for slot in ("0D", "0F", "10", "11", "12", "13", "14"))
    calls = len(fake_smi.calls())
    await source.sample()
    assert all(call.endswith(f"-i {others}") for call in fake_smi.calls()[calls:])


async def test_a_lost_gpu_reset_is_read_whole_again(fake_smi, monkeypatch):
    # A whole read is tried again after each refresh period (none here): a reset GPU is back.
    monkeypatch.setattr(nvidia_smi, "STATIC_REFRESH_SECONDS", 0.0)
    fake_smi.replay(V100S_X8)
    source = NvidiaSmiSource()
    await source.sample()
    fake_smi.lose("0000:00:0E.0", "0000:00:12.0")
    lost = [gpu.index for gpu in (await source.sample()).gpus if gpu.error]
    assert lost == [1, 5]
    fake_smi.lose()
    back = await source.sample()
    assert [gpu.error for gpu in back.gpus] == [None] * 8
    assert back.gpus[1].utilization_gpu == 75
    assert not fake_smi.calls()[-1].endswith(".0")  # all GPUs, without -i


async def test_a_gpu_lost_before_the_first_read_is_placed_by_the_drivers_list(
    fake_smi, monkeypatch, tmp_path
):
    # The driver lists every GPU it has, lost ones too, as /proc/driver/nvidia/gpus/<bus id>/.
    # No such folder on this machine: the test lays out the 8x V100S's.
    for slot in ("0d", "0e", "0f", "10", "11", "12", "13", "14"):
        (tmp_path / "gpus" / f"0000:00:{slot}.0").mkdir(parents=True)
    monkeypatch.setattr(lost_gpus, "DRIVER_GPUS", tmp_path / "gpus")
    fake_smi.replay(V100S_X8)
    fake_smi.lose("0000:00:0E.0")
    snapshot = await NvidiaSmiSource().sample()
    lost = snapshot.gpus[1]
    assert (lost.index, lost.pci_bus_id, lost.error.message) == (1, "0000:00:0E.0", "GPU 1 is lost")
    assert [gpu.utilization_gpu for gpu in snapshot.gpus] == [97, None, 80, 23, 98, 98, 91, 99]


async def test_a_gpu_lost_with_nothing_to_read_around_it_fails_the_read(fake_smi):
    # Never read whole and no driver list (this machine): the failure names the GPU's bus id.
    fake_smi.replay(V100S_X8)
    fake_smi.lose("0000:00:0E.0")
    with pytest.raises(GpuReadError) as raised:
        await NvidiaSmiSource().sample()
    assert raised.value.kind == "gpu_lost"
    assert "GPU 0000:00:0E.0: GPU is lost" in raised.value.message


def test_bus_ids_in_every_form_nvidia_smi_and_the_driver_write_them():
    assert short_bus_id("00000000:0B:00.0") == "0000:0B:00.0"  # the XML's
    assert short_bus_id("0000:0b:00.0") == "0000:0B:00.0"  # /proc/driver/nvidia/gpus
    assert short_bus_id("GPU-5f0d") is None
    capture = (SMI_FIXTURES / "errors/device-handle-gpu-is-lost.txt").read_text()
    assert lost_bus_id(GpuReadError("gpu_lost", capture.strip())) == "0000:02:00.0"
    # Newer drivers leave out the space: "for GPU0000:07:00.0: Unknown Error" is not lost.
    squeezed = "Unable to determine the device handle for GPU0000:07:00.0: GPU is lost"
    assert lost_bus_id(GpuReadError("gpu_lost", squeezed)) == "0000:07:00.0"
    assert lost_bus_id(GpuReadError("unknown", squeezed.replace("GPU is lost", "x"))) is None


def test_a_gpu_the_csv_reads_again_is_no_longer_lost_for_the_older_xml():
    capture = (SMI_FIXTURES / "xml/gb200-x2-gpu1-lost-driver-580.65-v13.xml").read_text()
    static = parse_xml(capture, 0.0)
    # A reset brought GPU 1 back: the CSV of the next read has its numbers again.
    fresh = parse_xml(capture.replace("GPU is lost", "0"), 0.0).gpus
    merged = merge(static, fresh, [], "580.65.06", 1.0)
    assert [gpu.error for gpu in merged.gpus] == [None, None]


async def test_a_new_gpu_layout_is_read_at_once_not_at_the_next_refresh(fake_smi):
    source = NvidiaSmiSource()
    fake_smi.replay("xml/rtx3080-driver-595.58-v13.xml")
    before = await source.sample()
    assert before.gpus[0].mig_mode is None and before.cuda_version == "13.2"
    # The same server a moment later sees another GPU, in MIG mode (a swap, or a reboot).
    fake_smi.replay("xml/a100-sxm4-80gb-mig-4instances-driver-535.54-v12.xml")
    after = await source.sample()
    assert after.cuda_version == "12.2"
    assert after.gpus[0].mig_mode == "enabled" and len(after.gpus[0].mig_devices) == 4
    assert len(fake_smi.calls("-q -x")) == 2
