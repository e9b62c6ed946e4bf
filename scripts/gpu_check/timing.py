"""What a read costs: one NVML sample against one nvidia-smi read cycle, timed in turns in one
run, and how long the Sampler's reads keep the event loop from answering anything else."""

from __future__ import annotations

import asyncio
import statistics
import time

from jupyterlab_gpu_monitor.gpu.errors import GpuReadError
from jupyterlab_gpu_monitor.gpu.sampler import Sampler

# How often the event-loop probe asks to be woken; a wake-up later than this is lag.
TICK_SECONDS = 0.002


def _figures(seconds: list[float]) -> dict:
    milliseconds = sorted(value * 1000 for value in seconds)
    return {
        "reads": len(milliseconds),
        "median_ms": statistics.median(milliseconds),
        "min_ms": milliseconds[0],
        "max_ms": milliseconds[-1],
    }


async def read_costs(sources: dict, reads: int) -> dict:
    """Each source's first read (nvidia-smi's includes ``-q -x``), then ``reads`` more taken in
    turns, so that both see the same moments of the machine; by source name."""
    first: dict[str, float] = {}
    later: dict[str, list[float]] = {name: [] for name in sources}
    failures: dict[str, str] = {}
    for turn in range(reads + 1):
        for name, source in sources.items():
            if name in failures:
                continue
            started = time.perf_counter()
            try:
                await source.sample()
            except GpuReadError as error:
                failures[name] = f"{error.kind}: {error.message}"
                continue
            elapsed = time.perf_counter() - started
            if turn == 0:
                first[name] = elapsed * 1000
            else:
                later[name].append(elapsed)
    costs = {}
    for name in sources:
        if name in failures:
            costs[name] = {"skipped": failures[name]}
        else:
            costs[name] = {"first_read_ms": first[name], **_figures(later[name])}
    return costs


async def _lags(seconds: float) -> list[float]:
    """How late each wake-up of a ``TICK_SECONDS`` sleep came, for ``seconds``."""
    lags = []
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        asked = time.perf_counter()
        await asyncio.sleep(TICK_SECONDS)
        lags.append(time.perf_counter() - asked - TICK_SECONDS)
    return lags


def _lag_figures(lags: list[float]) -> dict:
    milliseconds = sorted(max(0.0, lag) * 1000 for lag in lags)
    return {
        "ticks": len(milliseconds),
        "p50_lag_ms": statistics.median(milliseconds),
        "p99_lag_ms": milliseconds[int(0.99 * (len(milliseconds) - 1))],
        "max_lag_ms": milliseconds[-1],
    }


async def loop_blocking(source, seconds: float, interval_seconds: float) -> dict:
    """The event loop's lag while a Sampler reads ``source`` every ``interval_seconds`` (someone
    watching all along), against its lag with nothing to do, measured just before."""
    idle = await _lags(seconds / 2)
    sampler = Sampler(source, interval_seconds=interval_seconds, idle_seconds=seconds * 2)
    await sampler.snapshot()
    reads_before = sampler.reads
    lags = await _lags(seconds)
    reads = sampler.reads - reads_before
    error = sampler.latest.error if sampler.latest is not None else None
    await sampler.stop()
    return {
        "source": source.name,
        "reads": reads,
        "read_error": error.message if error is not None else None,
        "idle": _lag_figures(idle),
        "reading": _lag_figures(lags),
    }
