"""The nvidia-smi source, running a fake nvidia-smi that replays real captures."""

from __future__ import annotations

import time

import pytest
from jupyterlab_gpu_monitor.gpu.errors import GpuReadError
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
