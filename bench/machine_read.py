"""The machine's read: what reading CPU, memory, swap, disks, network, the container's cgroup
and the notebooks' free space costs at each read of the Sampler.

    python bench/machine_read.py

It times ``MachineReader.read()`` on this machine (its cgroup too, where it has one) against a
bare ``psutil.cpu_times()``, the cheapest reading psutil makes, measured in the same run: the
median of 7 rounds of 2,000 calls each.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

import psutil

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "jupyter_server_ext"))

from jupyterlab_gpu_monitor.machine.host import MachineReader  # noqa: E402

CALLS = 2000
ROUNDS = 7


def seconds_per_call(action) -> float:
    rounds = []
    for _ in range(ROUNDS):
        started = time.perf_counter()
        for _ in range(CALLS):
            action()
        rounds.append((time.perf_counter() - started) / CALLS)
    return statistics.median(rounds)


def main() -> None:
    reader = MachineReader(os.getcwd())
    reader.read()  # the first read has no rates to measure
    machine = seconds_per_call(reader.read)
    bare = seconds_per_call(psutil.cpu_times)
    print(
        f"machine read: {machine * 1e6:.0f} µs vs psutil.cpu_times() {bare * 1e6:.1f} µs, "
        f"ratio {machine / bare:.1f}"
    )


if __name__ == "__main__":
    main()
