"""Why the clocks are held down: NVML's clock event ("throttle") reason bits and their names.

nvidia-smi's CSV query and NVML give the reasons as one bitmask; ``-q -x`` gives each by name.
The names here are the XML's (``<clocks_event_reason_sw_power_cap>`` -> ``sw_power_cap``), so
that every source reports the same words.
"""

from __future__ import annotations

# nvml.h's nvmlClocksEventReason* bits, in the order nvidia-smi lists them.
CLOCK_EVENT_BITS = (
    (0x1, "gpu_idle"),
    (0x2, "applications_clocks_setting"),
    (0x4, "sw_power_cap"),
    (0x8, "hw_slowdown"),
    (0x10, "sync_boost"),
    (0x20, "sw_thermal_slowdown"),
    (0x40, "hw_thermal_slowdown"),
    (0x80, "hw_power_brake_slowdown"),
    (0x100, "display_clocks_setting"),
)


def reasons_of_mask(mask: int) -> list[str]:
    """The names of the bits set in ``mask``; bits newer than this table are left out."""
    return [name for bit, name in CLOCK_EVENT_BITS if mask & bit]
