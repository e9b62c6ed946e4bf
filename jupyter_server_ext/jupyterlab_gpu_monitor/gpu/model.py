"""The snapshot: what one read of the GPUs returns, in the units of the REST contract.

Percent 0-100, MiB, degrees Celsius, watts, MHz; ``None`` wherever the device does not report
a value (``[N/A]``, ``[Not Supported]``...), never 0.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from ..machine.model import MachineReading
from ..translation import N_, gettext

# Bytes in a KiB and a MiB: NVML and the exporters count bytes; nvidia-smi's "KB/s" and
# NVLink's counters are KiB.
KIB = 1024
MIB = KIB * KIB
# Why a MIG-enabled GPU's utilisation is null, in every source.
MIG_UNAVAILABLE = N_("not available under MIG")
# The most processes one read keeps per GPU. A GPU runs at most a few dozen contexts (48 MPS
# clients); thousands are a broken or hostile nvidia-smi, and each kept one costs the kernel
# join a /proc read and every client its bytes.
MAX_PROCESSES_PER_GPU = 256


@dataclass
class GpuError:
    """Why a read failed: one of ``errors.ERROR_KINDS``, what happened, and what to do."""

    kind: str
    message: str
    hint: str


@dataclass
class MigDevice:
    """One MIG instance of a MIG-enabled GPU."""

    index: int
    uuid: str | None = None
    profile: str | None = None
    gpu_instance_id: int | None = None
    compute_instance_id: int | None = None
    memory_total_mib: float | None = None
    memory_used_mib: float | None = None
    # Percent of time the instance's graphics engine was busy: only DCGM measures it (the
    # Prometheus source); NVML and nvidia-smi have no utilisation under MIG.
    utilization_gpu: float | None = None


@dataclass
class GpuProcess:
    """A process holding a context on a GPU. ``type`` is nvidia-smi's C, G or C+G.

    The fields after ``gpu_instance_id`` come from this server's view of the process (see
    kernels.py): who runs it, since when, and which of this server's kernels it belongs to.
    """

    pid: int
    used_memory_mib: float | None = None
    name: str | None = None
    type: str | None = None
    gpu_instance_id: int | None = None
    # Percent of the time since the read before that the process ran on the GPU's SMs: NVML
    # only (nvidia-smi's pmon takes a second, the exporters have no series).
    utilization_gpu: float | None = None
    # False when the driver's pid does not exist in this PID namespace (a container).
    visible: bool | None = None
    user: str | None = None
    started: float | None = None  # epoch seconds
    own: bool | None = None  # run by the user this server runs as
    kernel_id: str | None = None
    session_path: str | None = None
    # For this server's user's own processes only: the whole command line, the CPU used since
    # the read before (percent of one core) and the resident host memory.
    command: str | None = None
    cpu_percent: float | None = None
    host_memory_mib: float | None = None


@dataclass
class Gpu:
    """One physical GPU at one moment."""

    index: int
    uuid: str | None = None
    name: str | None = None
    pci_bus_id: str | None = None
    utilization_gpu: float | None = None
    utilization_memory: float | None = None
    memory_total_mib: float | None = None
    memory_used_mib: float | None = None
    memory_free_mib: float | None = None
    temperature_c: float | None = None
    # Where the GPU starts to slow its clocks to cool down: the driver's slowdown threshold.
    temperature_slowdown_c: float | None = None
    power_draw_w: float | None = None
    power_limit_w: float | None = None
    # What the GPU consumed since the driver loaded (Volta and later).
    energy_consumed_j: float | None = None
    fan_speed_pct: float | None = None
    sm_clock_mhz: float | None = None
    memory_clock_mhz: float | None = None
    # "P0" (the most performance) to "P12" (the least), as the driver reports it.
    performance_state: str | None = None
    # Percent of time the video encoder and decoder were busy.
    encoder_utilization: float | None = None
    decoder_utilization: float | None = None
    # What holds the clocks down now, by the driver's names (``sw_power_cap``,
    # ``hw_thermal_slowdown``, ``gpu_idle``...): [] when nothing does.
    clock_throttle_reasons: list[str] | None = None
    # Bytes moved over the PCIe bus and over all NVLinks of the GPU, per second, sent and
    # received by the GPU: a data loader that feeds it, or a multi-GPU all-reduce.
    pcie_sent_bytes_per_second: float | None = None
    pcie_received_bytes_per_second: float | None = None
    nvlink_sent_bytes_per_second: float | None = None
    nvlink_received_bytes_per_second: float | None = None
    # Memory errors since the driver loaded (volatile ECC counts).
    ecc_errors_corrected: int | None = None
    ecc_errors_uncorrected: int | None = None
    # Memory taken out of use for good: pages retired (before Ampere) or rows remapped.
    retired_pages: int | None = None
    remapped_rows: int | None = None
    # A retirement or remap waiting for the GPU's next reset to take effect.
    memory_repair_pending: bool | None = None
    mig_mode: str | None = None
    mig_devices: list[MigDevice] = field(default_factory=list)
    processes: list[GpuProcess] = field(default_factory=list)
    # Processes of this read left out of ``processes`` (those holding the least memory).
    processes_omitted: int = 0
    # Why a field is null when the reason is known (e.g. utilisation under MIG).
    unavailable: dict[str, str] = field(default_factory=dict)
    error: GpuError | None = None

    def explain_mig(self) -> None:
        """Under MIG the whole GPU has no utilisation: say so where a source left it null
        without a reason of its own."""
        if self.mig_mode != "enabled":
            return
        for attribute in ("utilization_gpu", "utilization_memory"):
            if getattr(self, attribute) is None:
                self.unavailable.setdefault(attribute, gettext(MIG_UNAVAILABLE))

    def keep_processes(self, limit: int = MAX_PROCESSES_PER_GPU) -> None:
        """Keep the ``limit`` processes that hold the most memory, and count the others."""
        if len(self.processes) <= limit:
            return
        self.processes.sort(key=lambda process: process.used_memory_mib or 0, reverse=True)
        self.processes_omitted += len(self.processes) - limit
        del self.processes[limit:]


@dataclass
class Snapshot:
    """All GPUs of this machine at one moment, or the error that prevented reading them; and
    the machine beside them, read at the same moment (by the server, whatever the GPUs did)."""

    source: str | None
    timestamp: float
    driver_version: str | None = None
    cuda_version: str | None = None
    error: GpuError | None = None
    gpus: list[Gpu] = field(default_factory=list)
    machine: MachineReading | None = None

    def to_json(self) -> dict[str, Any]:
        """The snapshot as the REST API, the CLI and the metrics endpoint share it."""
        return asdict(self)
