"""The lab view's refresh against the lab's size: this server's CPU per refresh and the answer's
size, for 5, 50 and 200 machines of 8 GPUs.

    python bench/lab.py

A real Prometheus (Debian's) scrapes every second one target per machine, each serving what a
server's /gpu-monitor/metrics serves for it: its 8 GPUs (utilisation, memory), the info series,
and a notebook holding memory on half its GPUs. A refresh is what ``GET lab`` does when its
view is older than 5 s: its instant queries, their JSON, and the view built from them;
its CPU is this process's (the event loop and the thread that builds the view), the median of
20 refreshes. The machines' scrapes are served by a child process: serving a scrape a second per
machine is not the refresh's cost. The ratio is against the refresh of the smallest lab,
measured in the same run.

Goal (issue 29): CPU per refresh grows at most linearly with the GPUs, and a 200-machine
refresh costs under 50 ms of CPU here.
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "jupyter_server_ext"))

from jupyterlab_gpu_monitor.config import GpuMonitor  # noqa: E402
from jupyterlab_gpu_monitor.lab.service import LabService  # noqa: E402
from jupyterlab_gpu_monitor.metrics import ServerIdentity  # noqa: E402
from tests.prometheus_lab import running_prometheus, serving_bodies, wait_for  # noqa: E402

MACHINES = (5, 50, 200)
GPUS = 8
REFRESHES = 20
MIB = 1024 * 1024


def exposition(machine: int) -> bytes:
    """What machine ``machine``'s server exports for the lab: its GPUs, its info, a notebook
    holding memory on its even GPUs."""
    host, user = f"node-{machine}", f"user{machine % 17}"
    lines = [f'jupyter_server_info{{host="{host}",user="{user}",version="0.2.0"}} 1']
    for gpu in range(GPUS):
        labels = (
            f'gpu="{gpu}",uuid="GPU-{machine:04d}-{gpu}",name="NVIDIA H100 80GB HBM3",host="{host}"'
        )
        held = 61440 if gpu % 2 == 0 else 0
        lines += [
            f"jupyter_gpu_utilization_ratio{{{labels}}} {0.97 if held else 0}",
            f"jupyter_gpu_memory_used_bytes{{{labels}}} {(held + 512) * MIB}",
            f"jupyter_gpu_memory_total_bytes{{{labels}}} {81559 * MIB}",
        ]
        if held:
            lines.append(
                f'jupyter_gpu_kernel_memory_used_bytes{{kernel_id="k-{machine}",'
                f'notebook="{machine:012x}",host="{host}",user="{user}",gpu="{gpu}",'
                f'uuid="GPU-{machine:04d}-{gpu}"}} {held * MIB}'
            )
    return ("\n".join(lines) + "\n").encode()


async def refresh_cost(url: str) -> tuple[float, int]:
    """The median CPU of a refresh, in seconds, and the answer's size in bytes."""
    settings = GpuMonitor(lab_prometheus_url=url, command_timeout=30)
    lab = LabService(settings, ServerIdentity("bench", "user1"))
    costs, size = [], 0
    for _ in range(REFRESHES):
        started = time.process_time()
        view = await lab._read()
        costs.append(time.process_time() - started)
        size = len(json.dumps(view))
    return sorted(costs)[len(costs) // 2], size


@contextmanager
def serving_elsewhere(bodies: dict[str, bytes]) -> Iterator[str]:
    """``serving_bodies`` in a child process (forked), so that its threads' CPU is not this
    process's; yields its URL."""
    context = multiprocessing.get_context("fork")
    address, stop = context.Queue(), context.Event()

    def serve() -> None:
        with serving_bodies(bodies) as url:
            address.put(url)
            stop.wait()

    child = context.Process(target=serve, daemon=True)
    child.start()
    try:
        yield address.get(timeout=30)
    finally:
        stop.set()
        child.join(timeout=10)
        if child.is_alive():
            child.kill()


def measure(machines: int, folder: Path) -> tuple[float, int]:
    bodies = {f"/node-{machine}": exposition(machine) for machine in range(machines)}
    with serving_elsewhere(bodies) as scrapes:
        host = scrapes.split("://", 1)[1]
        job = {
            "job_name": "lab",
            "static_configs": [
                {"targets": [host], "labels": {"__metrics_path__": path}} for path in bodies
            ],
        }
        with running_prometheus(folder / f"prometheus-{machines}", [job]) as url:
            wait_for(
                url,
                "count(jupyter_server_info)",
                lambda result: bool(result) and float(result[0]["value"][1]) == machines,
                timeout_seconds=120,
            )
            return asyncio.run(refresh_cost(url))


def main() -> None:
    with tempfile.TemporaryDirectory() as scratch:
        results = {machines: measure(machines, Path(scratch)) for machines in MACHINES}
    smallest = MACHINES[0]
    base_cpu, _ = results[smallest]
    for machines, (cpu, size) in results.items():
        print(
            f"{machines:4d} machines ({machines * GPUS:5d} GPUs): {cpu * 1e3:6.1f} ms CPU a "
            f"refresh, ratio {cpu / base_cpu:5.1f} for {machines / smallest:4.0f}x the GPUs; "
            f"answer {size / 1024:7.1f} KiB"
        )
    largest = MACHINES[-1]
    cpu, _ = results[largest]
    per_gpu = (cpu - base_cpu) / ((largest - smallest) * GPUS)
    print(f"growth: +{per_gpu * 1e6:.1f} µs of CPU a GPU; {largest} machines: {cpu * 1e3:.1f} ms")
    print(f"goal: at most linear in the GPUs, and under 50 ms for {largest} machines")


if __name__ == "__main__":
    main()
