"""The check's steps in order, each going on after another failed, and the folder they fill."""

from __future__ import annotations

import asyncio
import json
import os
import platform
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from jupyterlab_gpu_monitor.gpu.nvidia_smi import NvidiaSmiSource
from jupyterlab_gpu_monitor.gpu.nvml import NvmlSource

from . import holder as holder_module
from .captures import Capture, bundle, capture
from .checks import Verdicts
from .compare import NOT_COMPARED, TOLERANCES
from .dry import DryMachine
from .readings import (
    Agreement,
    Reading,
    agreement,
    capture_agreements,
    nvml_memory,
    source_readings,
)
from .timing import loop_blocking, read_costs

REPO = Path(__file__).resolve().parents[2]
PACKAGE_PATH = REPO / "jupyter_server_ext"
KERNEL_ENVS = Path(os.environ.get("GPU_MONITOR_KERNEL_ENVS", REPO / ".kernel-envs"))
# Far above a CUDA context (about 500 MiB) and the held-memory rule (1000 MiB); nothing on a
# 141 GB card.
HOLD_MIB = 2048
# cuInit and a 2 GiB allocation take seconds, torch's cold import (the fallback) tens; a
# holder silent this long is hung, and waiting on would spend the run's time limit.
HOLD_TIMEOUT_SECONDS = 90
NVIDIA_SMI_TIMEOUT_SECONDS = 15.0
# A read that holds the event loop this long is a blocking call, not scheduling noise.
MAX_LOOP_LAG_MS = 50.0


@dataclass(frozen=True)
class Effort:
    """How many reads to time and how long to watch the event loop."""

    timed_reads: int
    lag_seconds: float
    sampler_interval_seconds: float


ON_A_GPU = Effort(timed_reads=30, lag_seconds=4.0, sampler_interval_seconds=0.1)
# Enough to run every line; the fake nvidia-smi's figures mean nothing.
DRY = Effort(timed_reads=3, lag_seconds=1.0, sampler_interval_seconds=0.2)


def _sources() -> dict:
    return {
        "nvml": NvmlSource(NVIDIA_SMI_TIMEOUT_SECONDS),
        "nvidia-smi": NvidiaSmiSource("nvidia-smi", NVIDIA_SMI_TIMEOUT_SECONDS),
    }


class Run:
    """One run of the check: its verdicts and everything it gathered for the folder."""

    def __init__(self, out: Path, work: Path, dry: DryMachine | None, kernel_python: str):
        self.out = out
        self.work = work
        self.dry = dry
        self.effort = DRY if dry is not None else ON_A_GPU
        self.kernel_python = kernel_python
        self.verdicts = Verdicts()
        self.captures: list[Capture] = []
        self.agreements: list[Agreement] = []
        self.nvml_memory: dict[str, dict] = {}
        self.timings: dict = {}
        self.server: dict = {}
        self.holder: dict = {}
        self.gpus: dict = {}
        self.seconds: dict[str, float] = {}

    def expected(self, name: str, condition: bool, detail: str, dry_reason: str) -> None:
        """A verdict only a GPU machine can give: on a dry run, a failure is a skip."""
        if self.dry is not None and not condition:
            self.verdicts.skip(name, f"{dry_reason}: {detail}")
        else:
            self.verdicts.expect(name, condition, detail)

    async def all_steps(self, machine: dict) -> None:
        """Idle, busy (with the timings), the server; each in its own step, the folder written
        after each, so that a run stopped at its time limit brings back the steps before."""
        for name, step in (("idle", self.idle), ("busy", self.busy), ("server", self.serve)):
            print(f"step {name}", flush=True)
            started = time.monotonic()
            with self.verdicts.step(name):
                await step()
            self.seconds[name] = round(time.monotonic() - started, 2)
            self.write(machine)

    async def idle(self) -> None:
        """Nothing of ours on the GPU; what the GPUs are, for the captures' manifest."""
        smi_reading, _ = await self.observe("idle")
        if smi_reading.snapshot is not None:
            found = smi_reading.snapshot
            self.gpus = {
                "driver_version": found.driver_version,
                "cuda_version": found.cuda_version,
                "names": [gpu.name for gpu in found.gpus],
            }

    async def observe(self, phase: str) -> tuple[Reading, list[Reading]]:
        """The phase's readings compared and its captures saved, each difference printed;
        the sources' readings, for the caller's own verdicts."""
        sources = _sources()
        try:
            nvml_readings, smi_reading = await source_readings(
                sources["nvml"], sources["nvidia-smi"]
            )
        finally:
            sources["nvml"].close()
        try:
            self.nvml_memory[phase] = await asyncio.wait_for(
                asyncio.to_thread(nvml_memory), NVIDIA_SMI_TIMEOUT_SECONDS
            )
        except asyncio.TimeoutError:  # a hung NVML: the sources' reads above said so too
            self.nvml_memory[phase] = {"error": "NVML did not answer"}
        captured = await capture(phase, "nvidia-smi", NVIDIA_SMI_TIMEOUT_SECONDS)
        self.captures += captured.values()
        for one in captured.values():
            self.expected(
                f"{phase}: nvidia-smi gave {one.name}",
                one.ok,
                f"exit {one.returncode} in {one.seconds:.2f} s: {' '.join(one.argv)[-60:]}",
                "the fake nvidia-smi replays no capture of it",
            )
        found = [agreement(phase, smi_reading, nvml_readings), *capture_agreements(phase, captured)]
        self.agreements += found
        for one in found:
            self.judge(one)
        return smi_reading, nvml_readings

    def judge(self, found: Agreement) -> None:
        """The verdict of one comparison; each difference printed."""
        name = f"{found.phase}: {found.left} and {found.right} agree"
        if found.comparison is None:
            self.expected(name, False, found.skipped or "", "no NVIDIA driver here")
            return
        lines = [d.describe(found.left, found.right) for d in found.comparison.differences]
        for line in lines:
            print(f"  difference, {found.phase}: {line}")
        fields = f"{len(found.comparison.compared)} fields compared"
        self.verdicts.expect(name, not lines, "; ".join(lines[:4]) or fields)

    async def busy(self) -> None:
        """A process holds GPU memory and keeps the GPU busy: the busy phase and the timings."""
        # The driver's own library first: torch is tried in the kernel, so both ways run.
        holder = await asyncio.create_subprocess_exec(
            sys.executable, holder_module.__file__, str(HOLD_MIB), "driver", "torch",
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        )  # fmt: skip
        try:
            line = await asyncio.wait_for(holder.stdout.readline(), HOLD_TIMEOUT_SECONDS)
            if not line:
                raise RuntimeError(f"the holder exited with {await holder.wait()}, holding nothing")
            self.holder = json.loads(line)
            self.expected(
                f"busy: a process holds {HOLD_MIB} MiB and keeps the GPU busy",
                self.holder.get("held_mib") == HOLD_MIB and not self.holder.get("loop_error"),
                json.dumps(self.holder),
                "no CUDA here",
            )
            if self.dry is not None:
                self.dry.show_process(holder.pid)
            await asyncio.sleep(2.0)  # utilisation is an average over up to the last second
            smi_reading, nvml_readings = await self.observe("busy")
            self.holder_listed(holder.pid, [smi_reading, *nvml_readings[:1]])
            await self.time_reads()
        finally:
            holder.stdin.close()
            try:
                await asyncio.wait_for(holder.wait(), 20)
            except asyncio.TimeoutError:
                holder.kill()
                await holder.wait()
            if self.dry is not None:
                self.dry.show_process(None)

    def holder_listed(self, pid: int, readings: list[Reading]) -> None:
        """Each source lists the holding process with the memory it holds."""
        least = HOLD_MIB if self.dry is None else 1
        for reading in readings:
            name = f"busy: {reading.name} lists the holding process (pid {pid}) with its memory"
            if reading.snapshot is None:
                self.expected(name, False, reading.failure or "", "no NVIDIA driver here")
                continue
            memory = [
                process.used_memory_mib
                for gpu in reading.snapshot.gpus
                for process in gpu.processes
                if process.pid == pid
            ]
            held = bool(memory) and all((mib or 0) >= least for mib in memory)
            self.verdicts.expect(name, held, f"{memory} MiB, at least {least} expected")

    async def time_reads(self) -> None:
        """One NVML sample against one nvidia-smi read cycle, and the event loop's lag."""
        sources = _sources()
        costs = await read_costs(sources, self.effort.timed_reads)
        sources["nvml"].close()
        ratio = None
        if all("median_ms" in cost for cost in costs.values()):
            ratio = costs["nvidia-smi"]["median_ms"] / costs["nvml"]["median_ms"]
        self.timings = {"read_costs": costs, "nvidia_smi_to_nvml_ratio": ratio, "event_loop": {}}
        self.expected(
            "timing: one NVML sample and one nvidia-smi read cycle, timed in turns",
            ratio is not None,
            f"nvidia-smi / NVML = {ratio:.1f}" if ratio else json.dumps(costs)[:300],
            "no NVIDIA driver here",
        )
        for name, source in _sources().items():
            blocking = await loop_blocking(
                source, self.effort.lag_seconds, self.effort.sampler_interval_seconds
            )
            self.timings["event_loop"][name] = blocking
            worst = blocking["reading"]["max_lag_ms"]
            self.expected(
                f"timing: the Sampler's {name} reads hold the event loop under "
                f"{MAX_LOOP_LAG_MS:g} ms",
                worst <= MAX_LOOP_LAG_MS and blocking["read_error"] is None,
                f"max lag {worst:.1f} ms over {blocking['reads']} reads (idle: "
                f"{blocking['idle']['max_lag_ms']:.1f} ms); read error {blocking['read_error']}",
                "this machine's load and a fake decide these figures",
            )

    async def serve(self) -> None:
        """The real server and kernel."""
        # Imported here: it needs the carried wheels (tornado, jupyter_client), which the steps
        # before do not, so that they run even where the wheels did not install.
        from .server_check import check_server

        await check_server(
            self.work / "server",
            self.out / "jupyter-server.log",
            str(PACKAGE_PATH),
            self.kernel_python,
            HOLD_MIB,
            self.verdicts,
            self.dry,
            self.server,
        )

    def write(self, machine: dict) -> None:
        """Every file into the output folder: seven, where the device tool brings back eight."""
        mode = "dry-run" if self.dry is not None else "gpu"
        machine = {**machine, "gpus": self.gpus}
        bundle(self.captures, self.out / "captures.tar.gz", machine)
        comparisons = {
            "mode": mode,
            "tolerances": {name: tolerance.describe() for name, tolerance in TOLERANCES.items()},
            "not_compared": NOT_COMPARED,
            "comparisons": [found.to_json() for found in self.agreements],
            "nvml_memory_bytes": self.nvml_memory,
        }
        documents = {
            "comparisons.json": comparisons,
            "timings.json": {"mode": mode, "holder": self.holder, **self.timings},
            "server.json": {"mode": mode, **self.server},
            "report.json": {
                "mode": mode,
                "machine": machine,
                "step_seconds": self.seconds,
                "failed": len(self.verdicts.failed),
                "verdicts": self.verdicts.to_json(),
            },
        }
        for name, document in documents.items():
            (self.out / name).write_text(json.dumps(document, indent=2, default=str) + "\n")
        (self.out / "report.txt").write_text("\n".join(self.summary()) + "\n")
        if not (self.out / "jupyter-server.log").exists():
            (self.out / "jupyter-server.log").write_text("the server step did not start a server\n")

    def summary(self) -> list[str]:
        """The verdicts, then the figures the issue asks for."""
        compared = sorted(
            {f for a in self.agreements if a.comparison for f in a.comparison.compared}
        )
        differences = sum(len(a.comparison.differences) for a in self.agreements if a.comparison)
        ratio = self.timings.get("nvidia_smi_to_nvml_ratio")
        return [
            *self.verdicts.lines(),
            "",
            f"fields compared: {len(compared)} ({', '.join(compared)})",
            f"differences: {differences}",
            f"nvidia-smi read cycle / NVML sample: {f'{ratio:.1f}' if ratio else 'not timed'}",
            f"steps (s): {self.seconds}",
            f"{len(self.verdicts.failed)} of {len(self.verdicts.items)} verdicts failed",
        ]


def _version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def machine_facts(dry: bool, kernel_python: str) -> dict:
    """What ran the check: enough to name the captures when they join the fixtures."""
    return {
        "mode": "dry-run" if dry else "gpu",
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "python": sys.version.split()[0],
        "python_executable": sys.executable,
        "kernel_python": kernel_python,
        "platform": platform.platform(),
        "nvidia_smi": shutil.which("nvidia-smi"),
        "versions": {
            name: _version(name)
            for name in ("nvidia-ml-py", "torch", "jupyter_server", "ipykernel", "tornado")
        },
    }


def default_kernel_python(dry: bool) -> str:
    """On a GPU machine, this Python (torch with CUDA is there); on a dry run, the test
    environment with PyTorch's CPU build when it was made, so that the probe reads a torch."""
    torch_cpu = KERNEL_ENVS / "torch-cpu" / "bin" / "python"
    if dry and torch_cpu.exists():
        return str(torch_cpu)
    return sys.executable


async def check(out: Path, dry: bool, kernel_python: str, install_failure: str | None) -> int:
    """The whole check into ``out`` (a folder that exists); 0 when no verdict failed.
    ``install_failure``: why the carried wheels did not install, if they did not."""
    started = time.monotonic()
    machine = machine_facts(dry, kernel_python)
    with tempfile.TemporaryDirectory(prefix="gpu-check-") as scratch:
        work = Path(scratch)
        run = Run(out, work, DryMachine(work) if dry else None, kernel_python)
        if install_failure is not None:
            run.verdicts.expect("the carried wheels install with no index", False, install_failure)
        await run.all_steps(machine)
    run.seconds["total"] = round(time.monotonic() - started, 2)
    run.write(machine)
    print("\n".join(run.summary()))
    return 1 if run.verdicts.failed else 0
