"""Sampler and API benchmark: every figure is a ratio against a baseline of the same run.

    python bench/sampler.py

1. Sampler reads per second with 50 polling clients / with 1 (must be 1.0: reads do not
   depend on the number of browser tabs).
2. p50 / p99 latency of GET /gpu-monitor/api/gpus with 50 concurrent clients on a real
   jupyter server (fake nvidia-smi replaying an H100 capture), against jupyter_server's own
   GET /api/status under the same load.
3. Parse time of the largest `nvidia-smi -q -x` capture against spawning `true`.
4. The cost of one read with the machine's and each kernel's readings against the same read
   without them, with 50 kernels (the process trees of bench/join.py: 400 processes, 200 of
   them on the GPUs): the GPU read through NVML (a stand-in answering as 8 GPUs do, NVML's
   cost is a tenth of a millisecond) or nvidia-smi (the tests' fake replaying the 8x V100S), and
   the join of the GPU processes to the kernels, in turns, median of 30. The readings added are
   the machine's, each kernel's tree, and each of the user's own GPU processes (command line,
   CPU, host memory); NVML's read includes the PCIe/NVLink counters and each process's share.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

from tornado.httpclient import AsyncHTTPClient

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "jupyter_server_ext"))

from join import leaves_of, start_trees  # noqa: E402  (bench/join.py, beside this file)
from jupyterlab_gpu_monitor.gpu.model import MIB  # noqa: E402
from jupyterlab_gpu_monitor.gpu.nvidia_smi import NvidiaSmiSource  # noqa: E402
from jupyterlab_gpu_monitor.gpu.nvml import NvmlSource  # noqa: E402
from jupyterlab_gpu_monitor.gpu.sampler import Sampler  # noqa: E402
from jupyterlab_gpu_monitor.gpu.smi_xml import parse_xml  # noqa: E402
from jupyterlab_gpu_monitor.kernel.join import join_and_measure  # noqa: E402
from jupyterlab_gpu_monitor.kernel.listing import RunningKernel  # noqa: E402
from jupyterlab_gpu_monitor.kernel.processes import join  # noqa: E402
from jupyterlab_gpu_monitor.kernel.usage import KernelUsageReader  # noqa: E402
from jupyterlab_gpu_monitor.machine.host import MachineReader  # noqa: E402
from tests.replay import SMI_FIXTURES, install_fake_nvidia_smi  # noqa: E402
from tests.test_nvml_source import StandInNvml, a100_device  # noqa: E402

INTERVAL = 0.5
POLL_SECONDS = 6.0


def use_fake_nvidia_smi(folder: Path) -> None:
    executable = install_fake_nvidia_smi(folder)
    os.environ["PATH"] = f"{executable.parent}{os.pathsep}{os.environ['PATH']}"
    os.environ["FAKE_SMI_XML"] = str(SMI_FIXTURES / "xml/rtx-a5000-x2-driver-590.44-v13-2procs.xml")
    os.environ["FAKE_SMI_GPU_CSV"] = str(
        SMI_FIXTURES / "csv/h100-80gb-hbm3-590.48.01-query-gpu-load.csv"
    )
    os.environ["FAKE_SMI_APPS_CSV"] = str(
        SMI_FIXTURES / "csv/h100-80gb-hbm3-590.48.01-compute-apps-load.csv"
    )


async def reads_per_second(clients: int) -> float:
    sampler = Sampler(NvidiaSmiSource(), interval_seconds=INTERVAL)
    await sampler.snapshot()
    reads_before = sampler.reads
    started = time.monotonic()

    async def client() -> None:
        while time.monotonic() - started < POLL_SECONDS:
            await sampler.snapshot()
            await sampler.history_json(time.time() - 2)
            await asyncio.sleep(0.1)

    await asyncio.gather(*(client() for _ in range(clients)))
    rate = (sampler.reads - reads_before) / (time.monotonic() - started)
    await sampler.stop()
    return rate


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


async def latencies(url: str, token: str, clients: int, requests_each: int) -> list[float]:
    http = AsyncHTTPClient(max_clients=clients)
    headers = {"Authorization": f"token {token}"}
    measured: list[float] = []

    async def client() -> None:
        for _ in range(requests_each):
            started = time.perf_counter()
            response = await http.fetch(url, headers=headers)
            measured.append(time.perf_counter() - started)
            assert response.code == 200

    await asyncio.gather(*(client() for _ in range(clients)))
    return measured


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


async def api_latency(workdir: Path) -> tuple[list[float], list[float]]:
    port, token = free_port(), secrets.token_hex(16)
    server = await asyncio.create_subprocess_exec(
        *[
            sys.executable,
            "-m",
            "jupyter_server",
            f"--port={port}",
            "--no-browser",
            f"--IdentityProvider.token={token}",
            "--ServerApp.allow_root=True",
            f"--ServerApp.root_dir={workdir}",
            "--GpuMonitor.source=nvidia-smi",
            f"--GpuMonitor.interval={INTERVAL}",
        ],
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        http = AsyncHTTPClient()
        for _ in range(100):
            try:
                await http.fetch(
                    f"{base}/gpu-monitor/api/gpus", headers={"Authorization": f"token {token}"}
                )
                break
            except (ConnectionError, OSError):
                await asyncio.sleep(0.2)
        ours: list[float] = []
        baseline: list[float] = []
        # Alternate rounds so that a noisy moment of the machine hits both sides alike.
        for _ in range(3):
            ours += await latencies(f"{base}/gpu-monitor/api/gpus", token, 50, requests_each=10)
            baseline += await latencies(f"{base}/api/status", token, 50, requests_each=10)
        return ours, baseline
    finally:
        server.terminate()
        await server.wait()


async def read_costs(source, with_machine: bool, kernels, rounds: int = 30) -> list[float]:
    """Seconds per read: the GPUs, the join of their processes to the kernels, and (with
    ``with_machine``) the machine and each kernel's CPU and memory, as the extension's
    annotation makes them."""
    machine = MachineReader(str(REPO))
    usage = KernelUsageReader()
    pids = {kernel.kernel_id: kernel.pid for kernel in kernels}

    costs = []
    for _ in range(rounds):
        started = time.perf_counter()
        snapshot = await source.sample()
        if with_machine:
            await asyncio.to_thread(join_and_measure, snapshot, kernels, pids, usage)
            snapshot.machine = await asyncio.to_thread(machine.read)
        else:
            await asyncio.to_thread(join, snapshot, kernels)
        costs.append(time.perf_counter() - started)
    return costs


def median(values: list[float]) -> float:
    return sorted(values)[len(values) // 2]


async def machine_read_ratio(make_source) -> tuple[float, float]:
    """The median read without and with the machine's readings, in turns; ``make_source``
    makes the GPU source from the pids the GPUs are to report."""
    trees = start_trees()
    try:
        kernels = [
            RunningKernel(f"kernel-{i}", "python3", tree.pid, session_path=f"{i}.ipynb")
            for i, tree in enumerate(trees)
        ]
        source = make_source([pid for tree in trees for pid in leaves_of(tree.pid)])
        without: list[float] = []
        with_machine: list[float] = []
        for _ in range(3):
            without += await read_costs(source, False, kernels, rounds=10)
            with_machine += await read_costs(source, True, kernels, rounds=10)
        return median(without), median(with_machine)
    finally:
        for tree in trees:
            os.killpg(tree.pid, signal.SIGKILL)
            tree.wait()


def nvml_reporting(pids: list[int]) -> NvmlSource:
    """NVML as 8 A100 answer it, the kernels' processes spread over them (a stand-in: NVML's
    own cost is a tenth of a millisecond, and there is no GPU here)."""
    gpus = [
        a100_device(
            UUID=f"GPU-{index}",
            ComputeRunningProcesses=[
                SimpleNamespace(pid=pid, usedGpuMemory=1024 * MIB) for pid in pids[index::8]
            ],
        )
        for index in range(8)
    ]
    return NvmlSource(nvml=StandInNvml(gpus))


def smi_reporting(pids: list[int]) -> NvidiaSmiSource:
    """The fake nvidia-smi replaying the 8x V100S, its training job one of the kernels'."""
    os.environ["FAKE_SMI_XML"] = str(
        SMI_FIXTURES / "xml/tesla-v100s-pcie-32gb-x8-driver-460.73.01-v11.xml"
    )
    os.environ["FAKE_SMI_PIDS"] = f"37305:{pids[0]}"
    for variable in ("FAKE_SMI_GPU_CSV", "FAKE_SMI_APPS_CSV"):
        os.environ.pop(variable, None)
    return NvidiaSmiSource()


def mean_seconds(action, repeat: int) -> float:
    started = time.perf_counter()
    for _ in range(repeat):
        action()
    return (time.perf_counter() - started) / repeat


def main() -> None:
    with tempfile.TemporaryDirectory() as scratch:
        workdir = Path(scratch)
        use_fake_nvidia_smi(workdir / "bin")

        one = asyncio.run(reads_per_second(1))
        fifty = asyncio.run(reads_per_second(50))
        print(
            f"sampler reads/s: 1 client {one:.2f}, 50 clients {fifty:.2f}, "
            f"ratio {fifty / one:.2f} (target 1.0)"
        )

        ours, baseline = asyncio.run(api_latency(workdir))
        for name, fraction in (("p50", 0.5), ("p99", 0.99)):
            mine, theirs = percentile(ours, fraction), percentile(baseline, fraction)
            print(
                f"GET gpus {name} with 50 clients: {mine * 1000:.1f} ms vs GET /api/status "
                f"{theirs * 1000:.1f} ms, ratio {mine / theirs:.2f}"
            )

        for name, make_source in (("NVML", nvml_reporting), ("nvidia-smi", smi_reporting)):
            without, with_machine = asyncio.run(machine_read_ratio(make_source))
            print(
                f"a read through {name} with 50 kernels (400 processes): "
                f"{without * 1000:.2f} ms; with the machine's and each kernel's readings "
                f"{with_machine * 1000:.2f} ms; ratio {with_machine / without:.2f} (goal < 1.5)"
            )

        largest = max(SMI_FIXTURES.glob("xml/*.xml"), key=lambda p: p.stat().st_size)
        text = largest.read_text()
        parse = mean_seconds(lambda: parse_xml(text, 0.0), 50)
        spawn = mean_seconds(lambda: subprocess.run(["true"], check=True), 50)
        print(
            f"parse {largest.name} ({len(text) // 1024} KiB): {parse * 1000:.2f} ms "
            f"vs spawning `true` {spawn * 1000:.2f} ms, ratio {parse / spawn:.2f}"
        )


if __name__ == "__main__":
    main()
