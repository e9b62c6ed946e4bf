"""The NVML source: the real nvidia-ml-py where it runs here (no driver: it must say so), and
a stand-in device table for what only a GPU can show (unsupported fields, a lost GPU, MIG)."""

from __future__ import annotations

from collections import deque
from types import SimpleNamespace

import pynvml
import pytest
from jupyterlab_gpu_monitor.gpu.errors import GpuReadError
from jupyterlab_gpu_monitor.gpu.model import MIG_UNAVAILABLE
from jupyterlab_gpu_monitor.gpu.nvidia_smi import NvidiaSmiSource
from jupyterlab_gpu_monitor.gpu.nvml import NvmlSource
from jupyterlab_gpu_monitor.gpu.source import AutoSource

from .replay import SMI_FIXTURES

MIB = 1024 * 1024


async def test_real_nvml_without_a_driver_reports_not_installed():
    with pytest.raises(GpuReadError) as raised:
        await NvmlSource().sample()
    assert raised.value.kind == "not_installed"
    assert "NVML" in raised.value.message


async def test_auto_falls_back_to_nvidia_smi_when_nvml_cannot_start(fake_smi):
    source = AutoSource(NvmlSource(), NvidiaSmiSource())
    snapshot = await source.sample()
    assert snapshot.source == "nvidia-smi"
    assert source.current is not None and source.current.name == "nvidia-smi"


async def test_auto_reports_nvidia_smis_version_mismatch_over_a_missing_nvml(fake_smi):
    fake_smi.fail(SMI_FIXTURES / "errors/nvml-driver-library-version-mismatch-nvml-570.124.txt", 18)
    with pytest.raises(GpuReadError) as raised:
        await AutoSource(NvmlSource(), NvidiaSmiSource()).sample()
    assert raised.value.kind == "version_mismatch"


async def test_auto_reports_both_when_neither_nvml_nor_nvidia_smi_is_there(no_nvidia_smi):
    with pytest.raises(GpuReadError) as raised:
        await AutoSource(NvmlSource(), NvidiaSmiSource()).sample()
    assert raised.value.kind == "not_installed"
    assert raised.value.message == (
        "NVML: NVML Shared Library Not Found; nvidia-smi was not found (nvidia-smi)"
    )
    assert raised.value.hint.startswith("Install the NVIDIA driver")


async def test_auto_recovers_when_the_driver_comes_back(fake_smi):
    source = AutoSource(NvmlSource(), NvidiaSmiSource())
    fake_smi.fail(SMI_FIXTURES / "errors/driver-not-loaded-couldnt-communicate.txt")
    with pytest.raises(GpuReadError):
        await source.sample()
    fake_smi.replay(
        "xml/rtx3080-driver-595.58-v13.xml",
        "csv/rtx2080super-linux-595.71.05-query-gpu-load.csv",
        "csv/rtx2080super-linux-595.71.05-compute-apps-load.csv",
    )
    assert (await source.sample()).gpus[0].memory_used_mib == 819


async def test_auto_asks_a_failing_source_once_per_read(fake_smi):
    source = AutoSource(NvmlSource(), NvidiaSmiSource())
    await source.sample()
    fake_smi.fail(SMI_FIXTURES / "errors/driver-not-loaded-couldnt-communicate.txt")
    before = len(fake_smi.calls())
    with pytest.raises(GpuReadError) as raised:
        await source.sample()
    # A hung driver would otherwise cost two timeouts in every read.
    assert len(fake_smi.calls()) == before + 1
    assert raised.value.kind == "driver_not_loaded"


class StandInNvml:
    """The calls NvmlSource makes, answering from a device table and raising pynvml's own
    exceptions: a GPU machine's behaviour for a machine without one."""

    NVMLError = pynvml.NVMLError
    NVML_TEMPERATURE_GPU = pynvml.NVML_TEMPERATURE_GPU
    NVML_TEMPERATURE_THRESHOLD_SLOWDOWN = pynvml.NVML_TEMPERATURE_THRESHOLD_SLOWDOWN
    NVML_CLOCK_SM = pynvml.NVML_CLOCK_SM
    NVML_CLOCK_MEM = pynvml.NVML_CLOCK_MEM
    NVML_MEMORY_ERROR_TYPE_CORRECTED = pynvml.NVML_MEMORY_ERROR_TYPE_CORRECTED
    NVML_MEMORY_ERROR_TYPE_UNCORRECTED = pynvml.NVML_MEMORY_ERROR_TYPE_UNCORRECTED
    NVML_VOLATILE_ECC = pynvml.NVML_VOLATILE_ECC
    NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS = (
        pynvml.NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS
    )
    NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR = (
        pynvml.NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR
    )
    NVML_DEVICE_MIG_ENABLE = pynvml.NVML_DEVICE_MIG_ENABLE
    nvmlMemory_v2 = pynvml.nvmlMemory_v2

    def __init__(self, devices: list[dict]):
        self.devices = devices
        self.shut_down = False

    def _answer(self, handle: dict, key: str):
        value = handle[key]
        if isinstance(value, pynvml.NVMLError):
            # A new error per call, as pynvml raises: raising the table's own instance again
            # would lengthen its traceback at every read and keep every read's frames alive.
            raise pynvml.NVMLError(value.value)
        return value

    def nvmlInit(self):
        pass

    def nvmlShutdown(self):
        self.shut_down = True

    def nvmlDeviceGetCount(self):
        return len(self.devices)

    def nvmlSystemGetDriverVersion(self):
        return "550.54.15"

    def nvmlSystemGetCudaDriverVersion(self):
        return 12040

    def nvmlDeviceGetHandleByIndex(self, index):
        return self.devices[index]

    def __getattr__(self, name):
        # nvmlDeviceGetX(handle, *args) -> handle["X"]
        if not name.startswith("nvmlDeviceGet"):
            raise AttributeError(name)
        key = name[len("nvmlDeviceGet") :]
        return lambda handle, *args: self._answer(handle, key)

    def nvmlDeviceGetMemoryInfo(self, handle, version=None):
        # The v2 call (a version given) answers "MemoryInfo_v2" where the table has one.
        key = "MemoryInfo_v2" if version is not None and "MemoryInfo_v2" in handle else "MemoryInfo"
        return self._answer(handle, key)

    def nvmlDeviceGetClockInfo(self, handle, clock):
        return self._answer(handle, "ClockInfo")[clock]

    def nvmlDeviceGetTotalEccErrors(self, handle, error_type, counter):
        # A table of {error type: count} for the volatile counter, the only one read.
        assert counter == pynvml.NVML_VOLATILE_ECC
        return self._answer(handle, "TotalEccErrors")[error_type]

    def nvmlDeviceGetRetiredPages(self, handle, cause):
        return self._answer(handle, "RetiredPages")[cause]

    def nvmlDeviceGetFieldValues(self, handle, fields):
        """pynvml's own structs: from a table of {field id: [(µs, count) at each call]}, NOT
        SUPPORTED for an id the table lacks."""
        counters = self._answer(handle, "FieldValues")
        values = (pynvml.c_nvmlFieldValue_t * len(fields))()
        for value, (field_id, scope) in zip(values, fields):
            value.fieldId, value.scopeId = field_id, scope
            readings = counters.get(field_id)
            if not readings:
                value.nvmlReturn = pynvml.NVML_ERROR_NOT_SUPPORTED
                continue
            value.timestamp, value.value.ullVal = readings.pop(0)
            value.nvmlReturn = pynvml.NVML_SUCCESS
        return values

    def nvmlDeviceGetProcessUtilization(self, handle, since):
        """The samples newer than ``since`` (µs), NOT_FOUND when there are none, as NVML."""
        # The last few asked, for the tests: a benchmark reads for hours.
        handle.setdefault("utilization_asked_since", deque(maxlen=8)).append(since)
        newer = [s for s in self._answer(handle, "ProcessUtilization") if s.timeStamp > since]
        if not newer:
            raise pynvml.NVMLError(pynvml.NVML_ERROR_NOT_FOUND)
        return newer

    def nvmlDeviceGetPcieThroughput(self, handle, counter):
        handle["pcie_samples"] = handle.get("pcie_samples", 0) + 1
        return self._answer(handle, "PcieThroughput")[counter]

    def nvmlSystemGetProcessName(self, pid):
        return {4242: "python", 4343: "train.py"}.get(pid, "?")


def a100_device(**overrides) -> dict:
    """An A100-SXM4-80GB as NVML's calls answer for it, with ``overrides``."""
    device = {
        "Name": "NVIDIA A100-SXM4-80GB",
        "UUID": "GPU-1",
        "PciInfo": SimpleNamespace(busId="00000000:07:00.0"),
        "MigMode": (0, 0),
        "UtilizationRates": SimpleNamespace(gpu=87, memory=40),
        "MemoryInfo": SimpleNamespace(total=81920 * MIB, used=30000 * MIB, free=51920 * MIB),
        "Temperature": 61,
        # The A100-SXM4-80GB's, as the MIG capture's XML gives it.
        "TemperatureThreshold": 89,
        "PowerUsage": 312_500,
        "EnforcedPowerLimit": 400_000,
        # Millijoules since the driver loaded: a day at 312 W, about 7.5 kWh.
        "TotalEnergyConsumption": 26_956_800_000,
        "FanSpeed": pynvml.NVMLError(pynvml.NVML_ERROR_NOT_SUPPORTED),
        "ClockInfo": {pynvml.NVML_CLOCK_SM: 1410, pynvml.NVML_CLOCK_MEM: 1593},
        "PerformanceState": 0,
        # [percent busy, sampling period in µs]
        "EncoderUtilization": [0, 167000],
        "DecoderUtilization": [0, 167000],
        # Held at its power limit under load.
        "CurrentClocksEventReasons": 0x4,
        "TotalEccErrors": {
            pynvml.NVML_MEMORY_ERROR_TYPE_CORRECTED: 0,
            pynvml.NVML_MEMORY_ERROR_TYPE_UNCORRECTED: 0,
        },
        # Ampere remaps rows instead of retiring pages.
        "RetiredPages": pynvml.NVMLError(pynvml.NVML_ERROR_NOT_SUPPORTED),
        "RemappedRows": (0, 0, 0, 0),
        # No byte counters from this driver: PCIe is sampled instead (KB/s by direction).
        "FieldValues": {},
        "PcieThroughput": {
            pynvml.NVML_PCIE_UTIL_TX_BYTES: 341,
            pynvml.NVML_PCIE_UTIL_RX_BYTES: 439,
        },
        "ComputeRunningProcesses": [SimpleNamespace(pid=4242, usedGpuMemory=29000 * MIB)],
        # The driver's samples of each process's share of the SMs, in µs since the epoch.
        "ProcessUtilization": [
            SimpleNamespace(pid=4242, timeStamp=5_000_000, smUtil=80, memUtil=30),
            SimpleNamespace(pid=4242, timeStamp=5_166_000, smUtil=90, memUtil=35),
        ],
    }
    device.update(overrides)
    return device


async def test_unsupported_field_is_null_and_units_are_converted():
    nvml = StandInNvml([a100_device()])
    snapshot = await NvmlSource(nvml=nvml).sample()
    assert (snapshot.source, snapshot.driver_version, snapshot.cuda_version) == (
        "nvml",
        "550.54.15",
        "12.4",
    )
    (gpu,) = snapshot.gpus
    assert gpu.fan_speed_pct is None and "fan_speed_pct" not in gpu.unavailable
    assert (gpu.power_draw_w, gpu.power_limit_w) == (312.5, 400.0)
    assert gpu.energy_consumed_j == 26_956_800
    assert (gpu.temperature_c, gpu.temperature_slowdown_c) == (61, 89)
    assert (gpu.memory_used_mib, gpu.memory_total_mib, gpu.utilization_gpu) == (30000, 81920, 87)
    assert [(p.pid, p.name, p.used_memory_mib) for p in gpu.processes] == [(4242, "python", 29000)]


async def test_a_gpu_before_volta_has_no_energy_counter():
    pascal = a100_device(
        Name="Tesla P100-PCIE-16GB",
        TotalEnergyConsumption=pynvml.NVMLError(pynvml.NVML_ERROR_NOT_SUPPORTED),
    )
    (gpu,) = (await NvmlSource(nvml=StandInNvml([pascal])).sample()).gpus
    assert gpu.energy_consumed_j is None and "energy_consumed_j" not in gpu.unavailable


async def test_clocks_state_and_what_holds_them_are_read():
    (gpu,) = (await NvmlSource(nvml=StandInNvml([a100_device()])).sample()).gpus
    assert (gpu.sm_clock_mhz, gpu.memory_clock_mhz, gpu.performance_state) == (1410, 1593, "P0")
    assert gpu.clock_throttle_reasons == ["sw_power_cap"]
    assert (gpu.encoder_utilization, gpu.decoder_utilization) == (0, 0)


async def test_bits_of_several_reasons_are_each_named():
    hot = a100_device(CurrentClocksEventReasons=0x4 | 0x40 | 0x20000)  # and a bit newer than ours
    (gpu,) = (await NvmlSource(nvml=StandInNvml([hot])).sample()).gpus
    assert gpu.clock_throttle_reasons == ["sw_power_cap", "hw_thermal_slowdown"]


async def test_a_binding_older_than_the_event_reasons_name_reads_the_throttle_reasons():
    class OldBinding(StandInNvml):
        def __getattr__(self, name):
            if name == "nvmlDeviceGetCurrentClocksEventReasons":
                raise AttributeError(name)
            if name == "nvmlDeviceGetCurrentClocksThrottleReasons":
                return lambda handle: 0x1
            return super().__getattr__(name)

    (gpu,) = (await NvmlSource(nvml=OldBinding([a100_device()])).sample()).gpus
    assert gpu.clock_throttle_reasons == ["gpu_idle"]


async def test_memory_health_counts_errors_retired_pages_and_a_pending_repair():
    # A V100 (pages retired, no row remapping) with a bad cell: two pages retired for repeated
    # corrected errors, one for an uncorrected one, waiting for a reset.
    worn = a100_device(
        TotalEccErrors={
            pynvml.NVML_MEMORY_ERROR_TYPE_CORRECTED: 12,
            pynvml.NVML_MEMORY_ERROR_TYPE_UNCORRECTED: 1,
        },
        RetiredPages={
            pynvml.NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS: [0x1F000, 0x2A000],
            pynvml.NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR: [0x3C000],
        },
        RetiredPagesPendingStatus=pynvml.NVML_FEATURE_ENABLED,
        RemappedRows=pynvml.NVMLError(pynvml.NVML_ERROR_NOT_SUPPORTED),
    )
    (gpu,) = (await NvmlSource(nvml=StandInNvml([worn])).sample()).gpus
    assert (gpu.ecc_errors_corrected, gpu.ecc_errors_uncorrected) == (12, 1)
    assert (gpu.retired_pages, gpu.remapped_rows, gpu.memory_repair_pending) == (3, None, True)


async def test_memory_health_of_an_ampere_card_and_of_one_without_ecc():
    (a100,) = (await NvmlSource(nvml=StandInNvml([a100_device()])).sample()).gpus
    assert (a100.ecc_errors_corrected, a100.retired_pages, a100.remapped_rows) == (0, None, 0)
    assert a100.memory_repair_pending is False
    unsupported = pynvml.NVMLError(pynvml.NVML_ERROR_NOT_SUPPORTED)
    geforce = a100_device(TotalEccErrors=unsupported, RemappedRows=unsupported)
    (gpu,) = (await NvmlSource(nvml=StandInNvml([geforce])).sample()).gpus
    assert (gpu.ecc_errors_corrected, gpu.ecc_errors_uncorrected) == (None, None)
    assert (gpu.retired_pages, gpu.remapped_rows, gpu.memory_repair_pending) == (None, None, None)
    assert not gpu.unavailable


async def test_each_process_gets_its_share_of_the_gpu_since_the_read_before():
    device = a100_device(
        ComputeRunningProcesses=[
            SimpleNamespace(pid=4242, usedGpuMemory=29000 * MIB),
            SimpleNamespace(pid=4343, usedGpuMemory=1000 * MIB),  # holds memory, runs nothing
        ]
    )
    source = NvmlSource(nvml=StandInNvml([device]))
    (gpu,) = (await source.sample()).gpus
    assert [(p.pid, p.utilization_gpu) for p in gpu.processes] == [(4242, 85), (4343, 0)]
    # The next read asks for what came after the newest sample: nothing ran since.
    (gpu,) = (await source.sample()).gpus
    assert list(device["utilization_asked_since"]) == [0, 5_166_000]
    assert [p.utilization_gpu for p in gpu.processes] == [0, 0]
    unsupported = a100_device(ProcessUtilization=pynvml.NVMLError(pynvml.NVML_ERROR_NOT_SUPPORTED))
    (gpu,) = (await NvmlSource(nvml=StandInNvml([unsupported])).sample()).gpus
    assert gpu.processes[0].utilization_gpu is None and not gpu.unavailable


async def test_link_throughput_is_the_counters_difference_between_two_reads():
    # An H100 whose driver counts PCIe bytes and NVLink KiB: 1.2 GB to the GPU, 2 GiB over its
    # links in the half second between two reads.
    counting = a100_device(
        FieldValues={
            197: [(1_000_000, 10_000), (1_500_000, 60_000)],  # PCIe sent, bytes
            198: [(1_000_000, 5_000_000_000), (1_500_000, 5_600_000_000)],  # received
            138: [(1_000_000, 7), (1_500_000, 7)],  # NVLink sent, KiB
            139: [(1_000_000, 0), (1_500_000, 1024 * 1024)],  # received
        }
    )
    source = NvmlSource(nvml=StandInNvml([counting]))
    (first,) = (await source.sample()).gpus
    assert first.nvlink_received_bytes_per_second is None  # nothing to take a difference from
    (gpu,) = (await source.sample()).gpus
    assert (gpu.pcie_sent_bytes_per_second, gpu.pcie_received_bytes_per_second) == (100e3, 1.2e9)
    assert gpu.nvlink_sent_bytes_per_second == 0
    assert gpu.nvlink_received_bytes_per_second == 2 * 1024**3
    assert "pcie_samples" not in counting  # the 20 ms sampling call never ran
    assert not gpu.unavailable


async def test_link_throughput_over_a_pause_of_the_sampler_is_none():
    # Counters 20 s apart, where reads come every second: nobody watched meanwhile.
    paused = a100_device(FieldValues={139: [(1_000_000, 0), (21_000_000, 2**30)]})
    source = NvmlSource(nvml=StandInNvml([paused]), max_rate_seconds=3.0)
    await source.sample()
    (gpu,) = (await source.sample()).gpus
    assert gpu.nvlink_received_bytes_per_second is None


async def test_pcie_is_sampled_rarely_where_the_driver_has_no_counters():
    device = a100_device()
    source = NvmlSource(nvml=StandInNvml([device]))
    for _ in range(3):
        (gpu,) = (await source.sample()).gpus
        assert gpu.pcie_sent_bytes_per_second == 341 * 1024
        assert gpu.pcie_received_bytes_per_second == 439 * 1024
    assert device["pcie_samples"] == 2  # one sample per direction, kept between reads
    assert gpu.nvlink_sent_bytes_per_second is None  # no NVLink on this board


async def test_link_throughput_is_null_after_a_counter_reset_or_without_field_values():
    reset = a100_device(FieldValues={139: [(1_000_000, 9_000), (2_000_000, 10)]})
    source = NvmlSource(nvml=StandInNvml([reset]))
    await source.sample()
    (gpu,) = (await source.sample()).gpus
    assert gpu.nvlink_received_bytes_per_second is None  # a driver reload reset the counter
    unsupported = pynvml.NVMLError(pynvml.NVML_ERROR_NOT_SUPPORTED)
    old_driver = a100_device(
        FieldValues=pynvml.NVMLError(pynvml.NVML_ERROR_FUNCTION_NOT_FOUND),
        PcieThroughput=unsupported,
    )
    (gpu,) = (await NvmlSource(nvml=StandInNvml([old_driver])).sample()).gpus
    assert gpu.pcie_sent_bytes_per_second is None and gpu.nvlink_sent_bytes_per_second is None
    assert not gpu.unavailable


# An idle 80 GB card as driver 510+ reports it: v1's "used" counts the 480 MiB the driver
# reserves (the H100 capture's <reserved>), which nvidia-smi lists apart.
IDLE_V1 = SimpleNamespace(total=81559 * MIB, used=480 * MIB, free=81079 * MIB)
IDLE_V2 = SimpleNamespace(total=81559 * MIB, reserved=480 * MIB, used=0, free=81079 * MIB)


async def test_memory_used_leaves_out_what_the_driver_reserves_as_nvidia_smi_does():
    idle = a100_device(MemoryInfo=IDLE_V1, MemoryInfo_v2=IDLE_V2)
    (gpu,) = (await NvmlSource(nvml=StandInNvml([idle])).sample()).gpus
    assert (gpu.memory_used_mib, gpu.memory_free_mib, gpu.memory_total_mib) == (0, 81079, 81559)


async def test_memory_falls_back_to_v1_where_the_driver_has_no_v2_call():
    old_driver = a100_device(
        MemoryInfo=IDLE_V1,
        MemoryInfo_v2=pynvml.NVMLError(pynvml.NVML_ERROR_FUNCTION_NOT_FOUND),
    )
    (gpu,) = (await NvmlSource(nvml=StandInNvml([old_driver])).sample()).gpus
    assert gpu.memory_used_mib == 480 and "memory_total_mib" not in gpu.unavailable


async def test_lost_gpu_is_that_gpus_error_and_the_others_still_read():
    lost = a100_device(UUID="GPU-2", Name=pynvml.NVMLError(pynvml.NVML_ERROR_GPU_IS_LOST))
    snapshot = await NvmlSource(nvml=StandInNvml([a100_device(), lost])).sample()
    assert snapshot.error is None
    assert snapshot.gpus[0].error is None and snapshot.gpus[0].utilization_gpu == 87
    assert snapshot.gpus[1].error is not None and snapshot.gpus[1].error.kind == "gpu_lost"


async def test_field_denied_by_permission_is_null_with_the_reason():
    denied = a100_device(Temperature=pynvml.NVMLError(pynvml.NVML_ERROR_NO_PERMISSION))
    (gpu,) = (await NvmlSource(nvml=StandInNvml([denied])).sample()).gpus
    assert gpu.temperature_c is None
    assert gpu.unavailable["temperature_c"] == "Insufficient Permissions"


async def test_mig_gpu_lists_instances_and_their_processes_with_null_utilisation():
    instances = [
        a100_device(
            Name="NVIDIA A100-SXM4-80GB MIG 3g.40gb",
            UUID="MIG-a",
            GpuInstanceId=1,
            ComputeInstanceId=0,
            MemoryInfo=SimpleNamespace(total=40192 * MIB, used=20000 * MIB, free=20192 * MIB),
            ComputeRunningProcesses=[SimpleNamespace(pid=4343, usedGpuMemory=19000 * MIB)],
        ),
        a100_device(
            Name="NVIDIA A100-SXM4-80GB MIG 1g.10gb",
            UUID="MIG-b",
            GpuInstanceId=9,
            ComputeInstanceId=0,
            MemoryInfo=SimpleNamespace(total=9728 * MIB, used=0, free=9728 * MIB),
            ComputeRunningProcesses=[],
        ),
    ]
    slots = {0: instances[0], 2: instances[1]}

    class MigNvml(StandInNvml):
        def nvmlDeviceGetMigDeviceHandleByIndex(self, handle, slot):
            if slot not in slots:
                raise pynvml.NVMLError(pynvml.NVML_ERROR_NOT_FOUND)
            return slots[slot]

    parent = a100_device(
        MigMode=(1, 1),
        UtilizationRates=pynvml.NVMLError(pynvml.NVML_ERROR_NOT_SUPPORTED),
        MaxMigDeviceCount=7,
        ComputeRunningProcesses=[],
    )
    (gpu,) = (await NvmlSource(nvml=MigNvml([parent])).sample()).gpus
    assert gpu.mig_mode == "enabled"
    assert gpu.utilization_gpu is None and gpu.unavailable["utilization_gpu"] == MIG_UNAVAILABLE
    assert [(d.profile, d.uuid, d.gpu_instance_id, d.memory_used_mib) for d in gpu.mig_devices] == [
        ("3g.40gb", "MIG-a", 1, 20000),
        ("1g.10gb", "MIG-b", 9, 0),
    ]
    assert [(p.pid, p.gpu_instance_id) for p in gpu.processes] == [(4343, 1)]


async def test_no_gpu_at_all_is_no_devices():
    with pytest.raises(GpuReadError) as raised:
        await NvmlSource(nvml=StandInNvml([])).sample()
    assert raised.value.kind == "no_devices"


async def test_close_shuts_nvml_down():
    nvml = StandInNvml([a100_device()])
    source = NvmlSource(nvml=nvml)
    await source.sample()
    source.close()
    assert nvml.shut_down
