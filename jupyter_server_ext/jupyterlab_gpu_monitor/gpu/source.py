"""Choosing where readings come from: ``GpuMonitor.source`` = auto | nvml | nvidia-smi |
prometheus."""

from __future__ import annotations

import math
from typing import Protocol, runtime_checkable

from .errors import GpuReadError, more_telling
from .model import Snapshot
from .nvidia_smi import NvidiaSmiSource
from .nvml import NvmlSource

SOURCE_NAMES = ("auto", "nvml", "nvidia-smi", "prometheus")


class GpuSource(Protocol):
    """Anything that can read all GPUs once."""

    name: str

    async def sample(self) -> Snapshot:
        """One snapshot; raises GpuReadError when the GPUs cannot be read."""
        ...

    def close(self) -> None:
        """Release what the source holds (NVML's handle)."""
        ...


@runtime_checkable
class RemembersHistory(Protocol):
    """A source that keeps its own past (Prometheus), from which the Sampler's history is
    filled when it starts empty."""

    async def history(self, start: float, end: float, step_seconds: float) -> list[Snapshot]:
        """The snapshots between ``start`` and ``end`` (epoch seconds), oldest first."""
        ...


class AutoSource:
    """NVML when it starts, else nvidia-smi; re-chosen after a failure, so that a driver that
    comes back (or NVML installed later) is picked up without restarting the server."""

    name = "auto"

    def __init__(self, nvml: NvmlSource, nvidia_smi: NvidiaSmiSource):
        self._candidates = (nvml, nvidia_smi)
        self._current: GpuSource | None = None

    @property
    def current(self) -> GpuSource | None:
        """The source that gave the last good read, if any."""
        return self._current

    async def sample(self) -> Snapshot:
        """A snapshot from the first source that works; else the most telling failure."""
        failed: GpuSource | None = None
        failure: GpuReadError | None = None
        if self._current is not None:
            try:
                return await self._current.sample()
            except GpuReadError as error:
                # Not asked again in this read: a hung nvidia-smi would cost two timeouts.
                failed, failure, self._current = self._current, error, None
        for candidate in self._candidates:
            if candidate is failed:
                continue
            try:
                snapshot = await candidate.sample()
            except GpuReadError as error:
                failure = error if failure is None else more_telling(failure, error)
                continue
            self._current = candidate
            return snapshot
        assert failure is not None
        raise failure

    def close(self) -> None:
        """Close every candidate."""
        for candidate in self._candidates:
            candidate.close()


def make_source(
    setting: str,
    nvidia_smi_path: str,
    timeout_seconds: float,
    prometheus_url: str = "",
    prometheus_selector: str = "",
    prometheus_bearer_token_file: str = "",
    max_rate_seconds: float = math.inf,
) -> GpuSource:
    """The source a ``GpuMonitor.source`` setting names; NVML's link rates over a longer time
    than ``max_rate_seconds`` are none."""
    if setting == "prometheus":
        # Imported for this setting only: the other sources never need its HTTP client.
        from .prometheus import PrometheusSource

        return PrometheusSource(
            prometheus_url, prometheus_selector, timeout_seconds, prometheus_bearer_token_file
        )
    nvidia_smi = NvidiaSmiSource(nvidia_smi_path, timeout_seconds)
    if setting == "nvidia-smi":
        return nvidia_smi
    nvml = NvmlSource(timeout_seconds, max_rate_seconds=max_rate_seconds)
    if setting == "nvml":
        return nvml
    return AutoSource(nvml, nvidia_smi)
