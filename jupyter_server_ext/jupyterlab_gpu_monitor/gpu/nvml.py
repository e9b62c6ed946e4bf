"""The NVML source: NVIDIA's own library (``nvidia-ml-py``), about 0.1 ms a read.

Every call is guarded on its own: a reading the device does not support is null, a GPU that
fell off the bus is that GPU's error, and only a failure to start NVML fails the whole read.
"""

from __future__ import annotations

import math
import time
from types import ModuleType
from typing import Any, Callable

from .. import blocking
from ..translation import gettext
from .clock_events import reasons_of_mask
from .errors import GpuReadError, kind_of_reason
from .link_throughput import LinkThroughput
from .model import MIB, Gpu, GpuProcess, MigDevice, Snapshot

# NVML return codes (nvml.h) -> error kinds.
_KIND_OF_CODE = {
    4: "permission",  # NVML_ERROR_NO_PERMISSION
    9: "driver_not_loaded",  # NVML_ERROR_DRIVER_NOT_LOADED
    10: "timeout",  # NVML_ERROR_TIMEOUT
    12: "not_installed",  # NVML_ERROR_LIBRARY_NOT_FOUND
    15: "gpu_lost",  # NVML_ERROR_GPU_IS_LOST
    16: "gpu_lost",  # NVML_ERROR_RESET_REQUIRED
    17: "permission",  # NVML_ERROR_OPERATING_SYSTEM (WSL: "GPU access blocked")
    18: "version_mismatch",  # NVML_ERROR_LIB_RM_VERSION_MISMATCH
    28: "no_devices",  # NVML_ERROR_GPU_NOT_FOUND
}
_GPU_IS_LOST = 15
_NOT_SUPPORTED = 3
# nvmlDeviceGetProcessUtilization's answer when no process ran since the timestamp given.
_NOT_FOUND = 6
# nvmlPstates_t's "unknown"; P0 to P15 are 0 to 15.
_PSTATE_UNKNOWN = 32


def read_error(error: Exception) -> GpuReadError:
    """The typed error for an exception raised by pynvml: by its code, else by what it says
    (a code newer than this table, or a wrapper's exception without one)."""
    code = getattr(error, "value", None)
    kind = _KIND_OF_CODE.get(code) or kind_of_reason(str(error)) or "unknown"
    return GpuReadError(kind, f"NVML: {error}")


def _text(value: Any) -> str | None:
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return value


class NvmlSource:
    """Reads the GPUs through NVML on a GPU thread (see blocking.py), never on the event loop."""

    name = "nvml"

    def __init__(
        self,
        timeout_seconds: float = 5.0,
        nvml: ModuleType | None = None,
        max_rate_seconds: float = math.inf,
    ):
        self._timeout_seconds = timeout_seconds
        self._max_rate_seconds = max_rate_seconds
        self._nvml = nvml
        self._started = False
        self._links: LinkThroughput | None = None
        # GPU -> the newest per-process utilisation sample seen (µs): the next read asks only
        # for what came after it.
        self._utilization_seen: dict[str, int] = {}

    def open(self) -> None:
        """Load and start NVML; raises GpuReadError when it is missing or cannot start."""
        if self._started:
            return
        if self._nvml is None:
            try:
                import pynvml
            except ImportError:
                raise GpuReadError(
                    "not_installed",
                    gettext("nvidia-ml-py is not installed"),
                    gettext(
                        "pip install nvidia-ml-py (a dependency of this extension, missing here) "
                        "for NVML readings; nvidia-smi is used meanwhile."
                    ),
                ) from None
            self._nvml = pynvml
        try:
            self._nvml.nvmlInit()
        except self._nvml.NVMLError as error:
            raise read_error(error) from None
        self._links = LinkThroughput(self._nvml, self._max_rate_seconds)
        self._started = True

    def close(self) -> None:
        """Shut NVML down, if this source started it."""
        if self._started and self._nvml is not None:
            try:
                self._nvml.nvmlShutdown()
            except self._nvml.NVMLError:
                pass  # shutting down a library whose driver went away: nothing left to release
            self._started = False

    async def sample(self) -> Snapshot:
        """One snapshot of all GPUs; raises GpuReadError when NVML cannot give one."""
        try:
            # Keyed by this source: a hung NVML call cannot be cancelled, and no other read
            # stacks a thread behind it.
            return await blocking.run(
                blocking.GPU, self._read, timeout_seconds=self._timeout_seconds, key=self
            )
        except blocking.TimedOut as late:
            if late.stuck_seconds is not None:
                message = gettext("an earlier NVML read has not returned yet")
                raise GpuReadError("timeout", message) from None
            message = gettext("NVML did not answer within {seconds} s")
            raise GpuReadError(
                "timeout", message.format(seconds=f"{self._timeout_seconds:g}")
            ) from None

    def _read(self) -> Snapshot:
        self.open()
        nvml = self._nvml
        try:
            count = nvml.nvmlDeviceGetCount()
            driver_version = _text(nvml.nvmlSystemGetDriverVersion())
        except nvml.NVMLError as error:
            raise read_error(error) from None
        if count == 0:
            raise GpuReadError("no_devices", gettext("NVML found no GPU"))
        return Snapshot(
            source=self.name,
            timestamp=time.time(),
            driver_version=driver_version,
            cuda_version=self._cuda_version(),
            gpus=[self._gpu(index) for index in range(count)],
        )

    def _cuda_version(self) -> str | None:
        try:
            version = self._nvml.nvmlSystemGetCudaDriverVersion()
        except self._nvml.NVMLError:
            return None
        return f"{version // 1000}.{version % 1000 // 10}"

    def _gpu(self, index: int) -> Gpu:
        nvml = self._nvml
        gpu = Gpu(index=index)
        try:
            handle = nvml.nvmlDeviceGetHandleByIndex(index)
            self._fill(gpu, handle)
        except nvml.NVMLError as error:
            gpu.error = read_error(error).to_error()
        return gpu

    def _field(self, gpu: Gpu, name: str, call: Callable[..., Any], *args: Any) -> Any:
        """One reading; None when unsupported, the reason kept when it is not that."""
        try:
            return call(*args)
        except self._nvml.NVMLError as error:
            if error.value == _GPU_IS_LOST:
                raise
            if error.value != _NOT_SUPPORTED:
                gpu.unavailable[name] = str(error)
            return None

    def _memory_info(self, handle: Any) -> Any:
        """The memory figures nvidia-smi prints: NVML's v2 call, whose ``used`` leaves out what
        the driver reserves for itself (hundreds of MiB on a data-centre GPU since driver 510,
        which nvidia-smi lists apart as "Reserved"); the v1 call counts that as used. v1 where
        the v2 call fails (no such call in the driver or the binding, a version it does not
        take): v1's figures beat none."""
        nvml = self._nvml
        version = getattr(nvml, "nvmlMemory_v2", None)
        if version is not None:
            try:
                return nvml.nvmlDeviceGetMemoryInfo(handle, version=version)
            except nvml.NVMLError as error:
                if error.value == _GPU_IS_LOST:
                    raise
        return nvml.nvmlDeviceGetMemoryInfo(handle)

    def _fill(self, gpu: Gpu, handle: Any) -> None:
        nvml = self._nvml
        field = self._field
        gpu.name = _text(field(gpu, "name", nvml.nvmlDeviceGetName, handle))
        gpu.uuid = _text(field(gpu, "uuid", nvml.nvmlDeviceGetUUID, handle))
        pci = field(gpu, "pci_bus_id", nvml.nvmlDeviceGetPciInfo, handle)
        gpu.pci_bus_id = _text(pci.busId) if pci is not None else None
        mig = field(gpu, "mig_mode", nvml.nvmlDeviceGetMigMode, handle)
        if mig is not None:
            gpu.mig_mode = "enabled" if mig[0] == nvml.NVML_DEVICE_MIG_ENABLE else "disabled"
        rates = field(gpu, "utilization_gpu", nvml.nvmlDeviceGetUtilizationRates, handle)
        if rates is not None:
            gpu.utilization_gpu, gpu.utilization_memory = rates.gpu, rates.memory
        gpu.explain_mig()
        memory = field(gpu, "memory_total_mib", self._memory_info, handle)
        if memory is not None:
            gpu.memory_total_mib = memory.total // MIB
            gpu.memory_used_mib = memory.used // MIB
            gpu.memory_free_mib = memory.free // MIB
        gpu.temperature_c = field(
            gpu,
            "temperature_c",
            nvml.nvmlDeviceGetTemperature,
            handle,
            nvml.NVML_TEMPERATURE_GPU,
        )
        gpu.temperature_slowdown_c = field(
            gpu,
            "temperature_slowdown_c",
            nvml.nvmlDeviceGetTemperatureThreshold,
            handle,
            nvml.NVML_TEMPERATURE_THRESHOLD_SLOWDOWN,
        )
        power = field(gpu, "power_draw_w", nvml.nvmlDeviceGetPowerUsage, handle)
        gpu.power_draw_w = power / 1000 if power is not None else None
        limit = field(gpu, "power_limit_w", nvml.nvmlDeviceGetEnforcedPowerLimit, handle)
        gpu.power_limit_w = limit / 1000 if limit is not None else None
        energy = field(gpu, "energy_consumed_j", nvml.nvmlDeviceGetTotalEnergyConsumption, handle)
        gpu.energy_consumed_j = energy / 1000 if energy is not None else None  # mJ
        gpu.fan_speed_pct = field(gpu, "fan_speed_pct", nvml.nvmlDeviceGetFanSpeed, handle)
        gpu.sm_clock_mhz = field(
            gpu, "sm_clock_mhz", nvml.nvmlDeviceGetClockInfo, handle, nvml.NVML_CLOCK_SM
        )
        gpu.memory_clock_mhz = field(
            gpu, "memory_clock_mhz", nvml.nvmlDeviceGetClockInfo, handle, nvml.NVML_CLOCK_MEM
        )
        state = field(gpu, "performance_state", nvml.nvmlDeviceGetPerformanceState, handle)
        gpu.performance_state = f"P{state}" if state not in (None, _PSTATE_UNKNOWN) else None
        encoder = field(gpu, "encoder_utilization", nvml.nvmlDeviceGetEncoderUtilization, handle)
        gpu.encoder_utilization = encoder[0] if encoder is not None else None
        decoder = field(gpu, "decoder_utilization", nvml.nvmlDeviceGetDecoderUtilization, handle)
        gpu.decoder_utilization = decoder[0] if decoder is not None else None
        # Renamed from "throttle reasons" in NVML 12.535; older bindings have the old name only.
        event_reasons = getattr(
            nvml,
            "nvmlDeviceGetCurrentClocksEventReasons",
            nvml.nvmlDeviceGetCurrentClocksThrottleReasons,
        )
        mask = field(gpu, "clock_throttle_reasons", event_reasons, handle)
        gpu.clock_throttle_reasons = reasons_of_mask(mask) if mask is not None else None
        self._read_memory_health(gpu, handle)
        self._links.fill(gpu, handle, field)
        gpu.processes = self._processes(gpu, handle, None)
        self._read_process_utilization(gpu, handle)
        if gpu.mig_mode == "enabled":
            gpu.mig_devices = self._mig_devices(gpu, handle)

    def _read_memory_health(self, gpu: Gpu, handle: Any) -> None:
        """ECC errors since the driver loaded, and memory retired (before Ampere) or remapped
        (since) for good: what -q -x prints under ecc_errors, retired_pages, remapped_rows."""
        nvml = self._nvml
        field = self._field
        for attribute, kind in (
            ("ecc_errors_corrected", nvml.NVML_MEMORY_ERROR_TYPE_CORRECTED),
            ("ecc_errors_uncorrected", nvml.NVML_MEMORY_ERROR_TYPE_UNCORRECTED),
        ):
            count = field(
                gpu,
                attribute,
                nvml.nvmlDeviceGetTotalEccErrors,
                handle,
                kind,
                nvml.NVML_VOLATILE_ECC,
            )
            setattr(gpu, attribute, count)
        retired = [
            field(gpu, "retired_pages", nvml.nvmlDeviceGetRetiredPages, handle, cause)
            for cause in (
                nvml.NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS,
                nvml.NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR,
            )
        ]
        pending = []
        if any(pages is not None for pages in retired):
            gpu.retired_pages = sum(len(pages or []) for pages in retired)
            status = field(
                gpu, "memory_repair_pending", nvml.nvmlDeviceGetRetiredPagesPendingStatus, handle
            )
            pending.append(status)
        remapped = field(gpu, "remapped_rows", nvml.nvmlDeviceGetRemappedRows, handle)
        if remapped is not None:
            corrected, uncorrected, remap_pending, _failed = remapped
            gpu.remapped_rows = corrected + uncorrected
            pending.append(remap_pending)
        known = [state for state in pending if state is not None]
        gpu.memory_repair_pending = any(known) if known else None

    def _read_process_utilization(self, gpu: Gpu, handle: Any) -> None:
        """Each process's share of the SMs since the read before: the mean of the driver's
        samples (about six a second), 0 for a process that had none (it did not run)."""
        nvml = self._nvml
        key = gpu.uuid or str(gpu.index)
        try:
            samples = nvml.nvmlDeviceGetProcessUtilization(
                handle, self._utilization_seen.get(key, 0)
            )
        except nvml.NVMLError as error:
            if error.value == _GPU_IS_LOST:
                raise
            if error.value != _NOT_FOUND:
                return  # not supported (MIG, older boards): null
            samples = []
        by_pid: dict[int, list[int]] = {}
        for sample in samples:
            by_pid.setdefault(sample.pid, []).append(sample.smUtil)
            seen = self._utilization_seen.get(key, 0)
            self._utilization_seen[key] = max(seen, sample.timeStamp)
        for process in gpu.processes:
            shares = by_pid.get(process.pid)
            process.utilization_gpu = sum(shares) / len(shares) if shares else 0

    def _processes(self, gpu: Gpu, handle: Any, instance: int | None) -> list[GpuProcess]:
        nvml = self._nvml
        running = self._field(gpu, "processes", nvml.nvmlDeviceGetComputeRunningProcesses, handle)
        processes = []
        for entry in running or []:
            used = getattr(entry, "usedGpuMemory", None)
            name = self._field(gpu, "processes", nvml.nvmlSystemGetProcessName, entry.pid)
            processes.append(
                GpuProcess(
                    pid=entry.pid,
                    used_memory_mib=used // MIB if used is not None else None,
                    name=_text(name),
                    type="C",
                    gpu_instance_id=instance,
                )
            )
        return processes

    def _mig_devices(self, gpu: Gpu, handle: Any) -> list[MigDevice]:
        nvml = self._nvml
        devices = []
        slots = self._field(gpu, "mig_devices", nvml.nvmlDeviceGetMaxMigDeviceCount, handle)
        for slot in range(slots or 0):
            try:
                mig = nvml.nvmlDeviceGetMigDeviceHandleByIndex(handle, slot)
            except nvml.NVMLError:
                continue  # an empty slot: fewer instances than the GPU could hold
            device = MigDevice(index=len(devices))
            device.uuid = _text(self._field(gpu, "mig_devices", nvml.nvmlDeviceGetUUID, mig))
            name = _text(self._field(gpu, "mig_devices", nvml.nvmlDeviceGetName, mig))
            device.profile = name.rsplit("MIG ", 1)[-1] if name and "MIG " in name else None
            device.gpu_instance_id = self._field(
                gpu, "mig_devices", nvml.nvmlDeviceGetGpuInstanceId, mig
            )
            device.compute_instance_id = self._field(
                gpu, "mig_devices", nvml.nvmlDeviceGetComputeInstanceId, mig
            )
            memory = self._field(gpu, "mig_devices", nvml.nvmlDeviceGetMemoryInfo, mig)
            if memory is not None:
                device.memory_total_mib = memory.total // MIB
                device.memory_used_mib = memory.used // MIB
            # Under MIG the parent lists no processes; each instance lists its own.
            gpu.processes.extend(self._processes(gpu, mig, device.gpu_instance_id))
            devices.append(device)
        return devices
