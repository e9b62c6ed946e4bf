"""Every reading of a GPU, in one table: what it is, its unit, and where each source finds it,
what the history keeps, what ``/metrics`` exports it as and how far gpu-check lets two sources
differ on it.

A row names; it does not read. Each source keeps its own reading code (nvidia-smi's CSV and XML,
NVML's calls, the Prometheus exporters' series) and takes from here which of its names hold
which reading; ``/metrics``, the history and gpu-check take their names, factors and
tolerances. Adding a reading is a row here, the code of the source that reads it, its field in
``Gpu`` and ``api_schema/gpus.json`` (a test holds the three together), and the view.
"""

from __future__ import annotations

from dataclasses import dataclass

from .model import KIB, MIB


@dataclass(frozen=True)
class Reading:
    """One quantity measured of a GPU."""

    # The ``Gpu`` attribute, and the field of ``api_schema/gpus.json``'s Gpu.
    field: str
    # The unit of the snapshot's value: "%", "MiB", "°C", "W", "J", "MHz", "B/s", "" (a count,
    # a code or a yes/no).
    unit: str
    # What it is, as ``/metrics`` says it.
    help: str
    # How the sources give it:
    # - "gauge": a number, in ``unit`` once multiplied by the source's factor;
    # - "sum": a count that is the sum of the series named (the exporters' halves of it);
    # - "any": yes when any series named says so;
    # - "pstate": a performance state, "P2" or 2;
    # - "reasons": the clock event reasons' bitmask.
    kind: str = "gauge"
    # nvidia-smi ``--query-gpu`` names, the current first, then older or newer names of it.
    smi_csv: tuple[str, ...] = ()
    # Paths in nvidia-smi's ``-q -x`` document, the first found wins; times ``smi_xml_factor``.
    smi_xml: tuple[str, ...] = ()
    smi_xml_factor: float = 1
    # DCGM exporter series, times ``dcgm_factor``; for a "sum", "any" or a renamed series, each.
    dcgm: tuple[str, ...] = ()
    dcgm_factor: float = 1
    # nvidia_gpu_exporter series, times ``exporter_factor`` (its units are Prometheus base
    # units: ratio, bytes, hertz); none where nvidia-smi's CSV has no such field.
    exporter: tuple[str, ...] = ()
    exporter_factor: float = 1
    # The series ``/metrics`` exports it as, times ``metric_factor`` (to Prometheus' base units);
    # a counter where the reading only grows (the exposition adds ``_total`` to its name).
    metric: str | None = None
    metric_factor: float = 1
    counter: bool = False
    # Whether the history keeps it at every point (what the charts and the CSV export show).
    history: bool = False
    # gpu-check: how far two sources read up to a second apart may differ, (absolute, fraction
    # of the larger); None: they must agree (a throughput, "B/s", is not compared at all: the
    # sources sample it over different windows).
    tolerance: tuple[float, float] | None = None


_UTILIZATION = "Fraction of the last sample period in which"

READINGS = (
    Reading(
        "utilization_gpu",
        "%",
        f"{_UTILIZATION} a kernel ran on the GPU",
        smi_csv=("utilization.gpu",),
        smi_xml=("utilization/gpu_util",),
        dcgm=("DCGM_FI_DEV_GPU_UTIL",),
        exporter=("nvidia_smi_utilization_gpu_ratio",),
        exporter_factor=100,
        metric="jupyter_gpu_utilization_ratio",
        metric_factor=0.01,
        history=True,
        # The share of a sampling window (1/6 s to 1 s) the GPU was busy: two windows a
        # second apart may differ by a launch gap.
        tolerance=(20, 0),
    ),
    Reading(
        "utilization_memory",
        "%",
        f"{_UTILIZATION} device memory was read or written",
        smi_csv=("utilization.memory",),
        smi_xml=("utilization/memory_util",),
        dcgm=("DCGM_FI_DEV_MEM_COPY_UTIL",),
        exporter=("nvidia_smi_utilization_memory_ratio",),
        exporter_factor=100,
        metric="jupyter_gpu_memory_copy_utilization_ratio",
        metric_factor=0.01,
        history=True,
        tolerance=(20, 0),
    ),
    Reading(
        "memory_used_mib",
        "MiB",
        "Device memory in use",
        smi_csv=("memory.used",),
        smi_xml=("fb_memory_usage/used",),
        dcgm=("DCGM_FI_DEV_FB_USED",),
        exporter=("nvidia_smi_memory_used_bytes",),
        exporter_factor=1 / MIB,
        metric="jupyter_gpu_memory_used_bytes",
        metric_factor=MIB,
        history=True,
        # Moves only when the allocator does; NVML counts bytes, nvidia-smi whole MiB.
        tolerance=(16, 0),
    ),
    Reading(
        "memory_free_mib",
        "MiB",
        "Device memory free",
        smi_csv=("memory.free",),
        smi_xml=("fb_memory_usage/free",),
        dcgm=("DCGM_FI_DEV_FB_FREE",),
        exporter=("nvidia_smi_memory_free_bytes",),
        exporter_factor=1 / MIB,
        metric="jupyter_gpu_memory_free_bytes",
        metric_factor=MIB,
        tolerance=(16, 0),
    ),
    Reading(
        "memory_total_mib",
        "MiB",
        "Device memory installed",
        smi_csv=("memory.total",),
        smi_xml=("fb_memory_usage/total",),
        dcgm=("DCGM_FI_DEV_FB_TOTAL",),
        exporter=("nvidia_smi_memory_total_bytes",),
        exporter_factor=1 / MIB,
        metric="jupyter_gpu_memory_total_bytes",
        metric_factor=MIB,
        history=True,
        tolerance=(1, 0),
    ),
    Reading(
        "temperature_c",
        "°C",
        "GPU core temperature",
        smi_csv=("temperature.gpu",),
        smi_xml=("temperature/gpu_temp",),
        dcgm=("DCGM_FI_DEV_GPU_TEMP",),
        exporter=("nvidia_smi_temperature_gpu",),
        metric="jupyter_gpu_temperature_celsius",
        history=True,
        tolerance=(2, 0),
    ),
    Reading(
        "temperature_slowdown_c",
        "°C",
        "Temperature from which the GPU slows its clocks to cool down",
        smi_xml=("temperature/gpu_temp_slow_threshold",),
        dcgm=("DCGM_FI_DEV_SLOWDOWN_TEMP",),
        metric="jupyter_gpu_temperature_slowdown_celsius",
        # A board that gives its thresholds as T.Limit margins (H100, H200) gives them in
        # whole degrees from the temperature of the moment: the sum may be a degree off NVML's.
        tolerance=(2, 0),
    ),
    Reading(
        "power_draw_w",
        "W",
        "Power draw of the board",
        smi_csv=("power.draw", "power.draw.instant", "power.draw.average"),
        smi_xml=(
            "gpu_power_readings/instant_power_draw",
            "gpu_power_readings/power_draw",
            "gpu_power_readings/average_power_draw",
            "power_readings/power_draw",
        ),
        dcgm=("DCGM_FI_DEV_POWER_USAGE",),
        exporter=("nvidia_smi_power_draw_watts",),
        metric="jupyter_gpu_power_usage_watts",
        history=True,
        # Follows the load within milliseconds.
        tolerance=(25, 0.15),
    ),
    Reading(
        "power_limit_w",
        "W",
        "Power limit of the board",
        smi_csv=("power.limit", "enforced.power.limit"),
        smi_xml=(
            "gpu_power_readings/current_power_limit",
            "power_readings/enforced_power_limit",
            "power_readings/power_limit",
        ),
        dcgm=("DCGM_FI_DEV_POWER_MGMT_LIMIT",),
        exporter=("nvidia_smi_power_limit_watts",),
        metric="jupyter_gpu_power_limit_watts",
        tolerance=(1, 0),
    ),
    Reading(
        "energy_consumed_j",
        "J",
        "Energy the GPU consumed since the driver loaded",
        dcgm=("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",),
        dcgm_factor=1e-3,  # millijoules
        metric="jupyter_gpu_energy_joules",
        counter=True,
    ),
    Reading(
        "fan_speed_pct",
        "%",
        "Fan speed, fraction of its maximum",
        smi_csv=("fan.speed",),
        smi_xml=("fan_speed",),
        dcgm=("DCGM_FI_DEV_FAN_SPEED",),
        exporter=("nvidia_smi_fan_speed_ratio",),
        exporter_factor=100,
        metric="jupyter_gpu_fan_speed_ratio",
        metric_factor=0.01,
        history=True,
    ),
    Reading(
        "sm_clock_mhz",
        "MHz",
        "Clock of the streaming multiprocessors",
        smi_csv=("clocks.sm", "clocks.current.sm"),
        smi_xml=("clocks/sm_clock",),
        dcgm=("DCGM_FI_DEV_SM_CLOCK",),
        exporter=("nvidia_smi_clocks_current_sm_clock_hz",),
        exporter_factor=1e-6,
        metric="jupyter_gpu_sm_clock_hertz",
        metric_factor=1e6,
        history=True,
        tolerance=(100, 0.1),
    ),
    Reading(
        "memory_clock_mhz",
        "MHz",
        "Clock of the device memory",
        smi_csv=("clocks.mem", "clocks.current.memory"),
        smi_xml=("clocks/mem_clock",),
        dcgm=("DCGM_FI_DEV_MEM_CLOCK",),
        exporter=("nvidia_smi_clocks_current_memory_clock_hz",),
        exporter_factor=1e-6,
        metric="jupyter_gpu_memory_clock_hertz",
        metric_factor=1e6,
        tolerance=(100, 0.1),
    ),
    Reading(
        "encoder_utilization",
        "%",
        f"{_UTILIZATION} the video encoder was busy",
        smi_csv=("utilization.encoder",),
        smi_xml=("utilization/encoder_util",),
        dcgm=("DCGM_FI_DEV_ENC_UTIL",),
        exporter=("nvidia_smi_utilization_encoder_ratio",),
        exporter_factor=100,
        metric="jupyter_gpu_encoder_utilization_ratio",
        metric_factor=0.01,
        tolerance=(20, 0),
    ),
    Reading(
        "decoder_utilization",
        "%",
        f"{_UTILIZATION} the video decoder was busy",
        smi_csv=("utilization.decoder",),
        smi_xml=("utilization/decoder_util",),
        dcgm=("DCGM_FI_DEV_DEC_UTIL",),
        exporter=("nvidia_smi_utilization_decoder_ratio",),
        exporter_factor=100,
        metric="jupyter_gpu_decoder_utilization_ratio",
        metric_factor=0.01,
        tolerance=(20, 0),
    ),
    # Throughput: NVML's counters between two reads, DCGM's profiling rates, or what nvidia-smi
    # sampled for 20 ms as it wrote its XML (in KB/s, KiB); its CSV has none. The sources'
    # windows differ too much for gpu-check to compare them.
    Reading(
        "pcie_sent_bytes_per_second",
        "B/s",
        "Bytes the GPU sent over PCIe per second",
        smi_xml=("pci/tx_util",),
        smi_xml_factor=KIB,
        dcgm=("DCGM_FI_PROF_PCIE_TX_BYTES",),
        metric="jupyter_gpu_pcie_transmit_bytes_per_second",
    ),
    Reading(
        "pcie_received_bytes_per_second",
        "B/s",
        "Bytes the GPU received over PCIe per second",
        smi_xml=("pci/rx_util",),
        smi_xml_factor=KIB,
        dcgm=("DCGM_FI_PROF_PCIE_RX_BYTES",),
        metric="jupyter_gpu_pcie_receive_bytes_per_second",
        history=True,
    ),
    Reading(
        "nvlink_sent_bytes_per_second",
        "B/s",
        "Data the GPU sent over all its NVLinks per second",
        dcgm=("DCGM_FI_PROF_NVLINK_TX_BYTES",),
        metric="jupyter_gpu_nvlink_transmit_bytes_per_second",
    ),
    Reading(
        "nvlink_received_bytes_per_second",
        "B/s",
        "Data the GPU received over all its NVLinks per second",
        dcgm=("DCGM_FI_PROF_NVLINK_RX_BYTES",),
        metric="jupyter_gpu_nvlink_receive_bytes_per_second",
        history=True,
    ),
    Reading(
        "ecc_errors_corrected",
        "",
        "Memory errors ECC corrected since the driver loaded",
        smi_csv=("ecc.errors.corrected.volatile.total",),
        dcgm=("DCGM_FI_DEV_ECC_SBE_VOL_TOTAL",),
        exporter=("nvidia_smi_ecc_errors_corrected_volatile_total",),
        metric="jupyter_gpu_ecc_errors_corrected",
    ),
    Reading(
        "ecc_errors_uncorrected",
        "",
        "Memory errors ECC could not correct since the driver loaded",
        smi_csv=("ecc.errors.uncorrected.volatile.total",),
        dcgm=("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL",),
        exporter=("nvidia_smi_ecc_errors_uncorrected_volatile_total",),
        metric="jupyter_gpu_ecc_errors_uncorrected",
    ),
    Reading(
        "performance_state",
        "",
        "Performance state, 0 (P0, the most performance) to 15",
        kind="pstate",
        dcgm=("DCGM_FI_DEV_PSTATE",),
        exporter=("nvidia_smi_pstate",),
        metric="jupyter_gpu_performance_state",
    ),
    Reading(
        "retired_pages",
        "",
        "Memory pages retired for good after ECC errors, before Ampere",
        kind="sum",
        dcgm=("DCGM_FI_DEV_RETIRED_SBE", "DCGM_FI_DEV_RETIRED_DBE"),
        exporter=(
            "nvidia_smi_retired_pages_single_bit_ecc_count",
            "nvidia_smi_retired_pages_double_bit_count",
        ),
        metric="jupyter_gpu_memory_retired_pages",
    ),
    Reading(
        "remapped_rows",
        "",
        "Memory rows remapped for good after ECC errors, Ampere and later",
        kind="sum",
        dcgm=("DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS"),
        exporter=("nvidia_smi_remapped_rows_correctable", "nvidia_smi_remapped_rows_uncorrectable"),
        metric="jupyter_gpu_memory_remapped_rows",
    ),
    Reading(
        "memory_repair_pending",
        "",
        "1 while a page retirement or row remap waits for the GPU's reset",
        kind="any",
        dcgm=("DCGM_FI_DEV_RETIRED_PENDING", "DCGM_FI_DEV_ROW_REMAP_PENDING"),
        exporter=("nvidia_smi_retired_pages_pending", "nvidia_smi_remapped_rows_pending"),
        metric="jupyter_gpu_memory_repair_pending",
    ),
    # The bitmask under its name since driver 530, then the one before (each source reads
    # it its own way, and /metrics exports a series per reason).
    Reading(
        "clock_throttle_reasons",
        "",
        "What holds the clocks below their maximum",
        kind="reasons",
        smi_csv=("clocks_event_reasons.active", "clocks_throttle_reasons.active"),
        dcgm=("DCGM_FI_DEV_CLOCKS_EVENT_REASONS", "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS"),
        exporter=(
            "nvidia_smi_clocks_event_reasons_active",
            "nvidia_smi_clocks_throttle_reasons_active",
        ),
    ),
)

READING = {reading.field: reading for reading in READINGS}
# The numbers the history keeps at every point, in this order.
HISTORY_FIELDS = tuple(reading.field for reading in READINGS if reading.history)

# DCGM series that are not a reading of a whole GPU by themselves.
# Framebuffer memory the driver reserves: DCGM counts it in neither used nor free.
DCGM_RESERVED = "DCGM_FI_DEV_FB_RESERVED"
# Under MIG there is no DCGM_FI_DEV_GPU_UTIL; the graphics engine's activity (0-1) per GPU
# instance (labels GPU_I_ID, GPU_I_PROFILE) is the utilisation there.
DCGM_ENGINE_ACTIVE = "DCGM_FI_PROF_GR_ENGINE_ACTIVE"
