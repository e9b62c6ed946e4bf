"""Typed read failures: what nvidia-smi or NVML said, turned into a kind, a message and a fix."""

from __future__ import annotations

import re
import signal

from ..translation import N_, gettext
from .model import GpuError

# Translated when an error is made (see GpuReadError).
HINTS = {
    "not_installed": N_(
        "Install the NVIDIA driver (it provides nvidia-smi and libnvidia-ml.so), or point "
        "GpuMonitor.nvidia_smi_path at nvidia-smi. In a container, start it with the NVIDIA "
        "Container Toolkit (docker run --gpus all)."
    ),
    "driver_not_loaded": N_(
        "The NVIDIA kernel module is not loaded: run `sudo modprobe nvidia`, or reboot after a "
        "driver install or upgrade; `dmesg | grep -i nvidia` says why it failed to load."
    ),
    "version_mismatch": N_(
        "The loaded kernel module and the installed driver library differ, usually after a "
        "driver upgrade without a reboot: reboot, or reload the modules (`sudo rmmod nvidia_uvm "
        "nvidia_drm nvidia_modeset nvidia && sudo modprobe nvidia`)."
    ),
    "no_devices": N_(
        "The driver is loaded but sees no GPU: check `lspci | grep -i nvidia` and `dmesg` "
        "(RmInitAdapter failed), and that the container was given GPUs."
    ),
    "gpu_lost": N_(
        "A GPU fell off the bus (Xid 79): check `dmesg`; it usually needs a reboot, or a reset "
        "of the GPUs once no process uses them (`sudo nvidia-smi -r`)."
    ),
    "permission": N_(
        "This user, or the operating system, may not open the GPUs: check the permissions of "
        "/dev/nvidia* and, in a container, the device mapping; under WSL 2, update the Windows "
        "NVIDIA driver and WSL (`wsl --update`)."
    ),
    "timeout": N_(
        "nvidia-smi did not answer in time; the driver may be hung (look for Xid errors in "
        "`dmesg`). Enabling persistence mode (`sudo nvidia-smi -pm 1`) shortens slow first "
        "calls; GpuMonitor.command_timeout sets the limit."
    ),
    "bad_output": N_(
        "nvidia-smi printed something this extension cannot read. Please report it with the "
        "output of `nvidia-smi -q -x` attached."
    ),
    "unknown": N_(
        "Run nvidia-smi in a terminal for details. Inside a container, 'Unknown Error' usually "
        "means it lost its GPU device nodes (e.g. after `systemctl daemon-reload` on the host): "
        "restart the container."
    ),
}

# Every kind a read failure has: the keys of HINTS, each with its fix.
ERROR_KINDS = tuple(HINTS)

# The lines in which nvidia-smi says why it cannot reach the GPUs, with NVML's reason after the
# colon: "Failed to initialize NVML: GPU access blocked by the operating system", "Unable to
# determine the device handle for GPU 0000:3B:00.0: GPU is lost. Reboot the system...".
_REASON_LINE = re.compile(
    r"^(?:Failed to initialize NVML|Failed to properly shut down NVML|"
    r"Unable to determine the device handle for GPU\s*(?:[0-9A-Fa-f]+:)*[0-9A-Fa-f.]+)"
    r"\s*:\s*(?P<reason>.+)$",
    re.I | re.M,
)
# What a reason says, in the words NVML's error strings and the drivers' messages use, first
# match wins: the same failure is worded differently across platforms (WSL, vGPU, containers)
# and driver versions, so a reason is read by what it says, not matched whole.
_REASON_KINDS = (
    (re.compile(r"mismatch", re.I), "version_mismatch"),
    (re.compile(r"blocked|denied|permission|not permitted|privilege", re.I), "permission"),
    (
        re.compile(r"\blost\b|fallen off the bus|requires? (?:a )?(?:reset|restart)", re.I),
        "gpu_lost",
    ),
    (
        re.compile(
            r"not loaded|(?:couldn't|could not|unable to) communicate with the (?:nvidia )?driver",
            re.I,
        ),
        "driver_not_loaded",
    ),
    (
        re.compile(r"no devices|no (?:supported )?gpus?\b|(?:gpu|device) not found", re.I),
        "no_devices",
    ),
    (
        re.compile(r"not found|(?:couldn't|could not|cannot|unable to) (?:find|load|open)", re.I),
        "not_installed",
    ),
    (re.compile(r"timeout|timed out", re.I), "timeout"),
)
# nvidia-smi's own messages that carry no NVML reason. Only GPU states are listed here:
# messages about other things (NVLink queries, usage errors) must not be mistaken for one.
_MESSAGE_KINDS = (
    (
        re.compile(
            r"couldn't find libnvidia-ml\.so|NVML Shared Library Not Found|"
            r"libnvidia-ml\.so[.\d]*: cannot open shared object",
            re.I,
        ),
        "not_installed",
    ),
    (
        re.compile(r"couldn't communicate with the NVIDIA driver|Driver Not Loaded", re.I),
        "driver_not_loaded",
    ),
    (re.compile(r"Driver/library version mismatch", re.I), "version_mismatch"),
    (re.compile(r"^No devices were found", re.I | re.M), "no_devices"),
    (re.compile(r"GPU is lost|fallen off the bus", re.I), "gpu_lost"),
    (re.compile(r"Insufficient Permissions|Permission denied|No Permission", re.I), "permission"),
)
# An error message is a few lines: what comes after this is not read (garbage can be megabytes).
_MESSAGE_SCAN_CHARACTERS = 64 * 1024

# How much an error tells the user about the machine, for choosing between two sources'
# failures: a missing library says little; "version mismatch" says exactly what to do.
_TELLING = {"not_installed": 0, "unknown": 1, "bad_output": 2, "timeout": 3}


class GpuReadError(Exception):
    """A read that failed in a way the API reports as ``error``."""

    def __init__(self, kind: str, message: str, hint: str | None = None):
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.hint = hint if hint is not None else gettext(HINTS[kind])

    def to_error(self) -> GpuError:
        """The JSON-ready form of this failure."""
        return GpuError(kind=self.kind, message=self.message, hint=self.hint)


def gpu_lost(index: int, reason: str | None = None) -> GpuError:
    """The error of a GPU that fell off the bus, for its place in a snapshot; ``reason`` says
    how it was told, when not by the driver itself (an exporter that stopped reporting it)."""
    if reason:
        message = gettext("GPU {index} is lost: {reason}").format(index=index, reason=reason)
    else:
        message = gettext("GPU {index} is lost").format(index=index)
    return GpuReadError("gpu_lost", message).to_error()


def kind_of_reason(reason: str) -> str | None:
    """The kind of failure an NVML reason ("GPU access blocked by the operating system",
    "Driver/library version mismatch"...) names, or None when it names none we know."""
    for pattern, kind in _REASON_KINDS:
        if pattern.search(reason):
            return kind
    return None


def kind_of_message(text: str) -> str | None:
    """The GPU state an nvidia-smi message reports, or None when it reports none. A failure to
    start NVML is one whatever its reason: "unknown" when the reason is not one we know."""
    text = text[:_MESSAGE_SCAN_CHARACTERS]
    line = _REASON_LINE.search(text)
    if line is not None:
        return kind_of_reason(line.group("reason")) or "unknown"
    for pattern, kind in _MESSAGE_KINDS:
        if pattern.search(text):
            return kind
    return None


def error_from_output(text: str, returncode: int) -> GpuReadError:
    """The error for an nvidia-smi run that failed or printed an error instead of data; a
    negative ``returncode`` is the signal it died of."""
    if returncode < 0:
        # What it printed before the crash is a torn answer (half an XML file), not a message.
        message = gettext("nvidia-smi crashed ({signal})").format(signal=_signal_name(-returncode))
        return GpuReadError("unknown", message)
    text = text[:_MESSAGE_SCAN_CHARACTERS]
    message = " ".join(line.strip() for line in text.strip().splitlines() if line.strip())
    kind = kind_of_message(text)
    if kind is None:
        kind = "bad_output" if returncode == 0 else "unknown"
        if not message:
            message = gettext("nvidia-smi exited with status {status} and printed nothing").format(
                status=returncode
            )
    return GpuReadError(kind, message[:500])


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:  # a real-time signal, or one this platform does not name
        return gettext("signal {number}").format(number=number)


def more_telling(first: GpuReadError, second: GpuReadError) -> GpuReadError:
    """Of two sources' failures, the one that tells the user more; both messages when they
    fail the same way (e.g. neither NVML nor nvidia-smi is installed)."""
    if first.kind == second.kind:
        # The kind's general hint: one source's own advice would be wrong for the pair.
        both = gettext("{first}; {second}").format(first=first.message, second=second.message)
        return GpuReadError(first.kind, both)
    rank_first = _TELLING.get(first.kind, len(_TELLING))
    rank_second = _TELLING.get(second.kind, len(_TELLING))
    return second if rank_second > rank_first else first
