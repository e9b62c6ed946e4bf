"""A read's cost against this server's kernels and the GPUs' process rows.

    python bench/kernel_read.py

A real jupyter_server ``MappingKernelManager`` and ``SessionManager`` hold the kernels, each a
notebook's session: idle kernels are one sleeping process each, and a quarter of the kernels,
busy, hold GPUs, each a process tree as a training notebook's (the trees of bench/join.py,
four leaves on the GPUs). The GPUs are NVML's stand-in answering as 8 A100 with the rows asked
for. A read is what the Sampler does at each interval: the GPU read, then the extension's
annotation (the join of the rows to the kernels and their notebooks, each kernel's CPU and
memory, the kernels' history, the machine). A read's cost is the CPU time this process spends
on it, all threads together, the least of 40 reads (its wall time, printed beside, and any
median also count the other tenants of a shared machine), in turns with the read of no kernels
and no rows, the baseline of each ratio. Past a read's budget of processes the trees are
walked in turns: each step also says how many reads a busy kernel's figures went unwalked.

Goal (issue 28): a read with 200 kernels (50 on GPUs) within 2x the read with none.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

import psutil

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "jupyter_server_ext"))

from join import TREE, leaves_of  # noqa: E402  (bench/join.py, beside this file)
from jupyterlab_gpu_monitor.extension import _Annotation  # noqa: E402
from jupyterlab_gpu_monitor.kernel.cells import KernelHistory  # noqa: E402
from jupyterlab_gpu_monitor.kernel.join import KernelJoin  # noqa: E402
from jupyterlab_gpu_monitor.kernel.ledger import NotebookLedger  # noqa: E402
from jupyterlab_gpu_monitor.kernel.service import KernelService  # noqa: E402
from jupyterlab_gpu_monitor.machine.host import MachineReader  # noqa: E402
from sampler import nvml_reporting  # noqa: E402  (bench/sampler.py, beside this file)

ROUNDS = 40
KERNEL_STEPS = (0, 10, 50, 200)
ROW_STEPS = (0, 128, 512)
KERNELSPECS = {
    "idle": ["sleep", "3600"],
    "training": [sys.executable, "-c", TREE],
}


def write_kernelspecs(folder: Path) -> None:
    import json

    for name, argv in KERNELSPECS.items():
        spec = folder / "kernels" / name
        spec.mkdir(parents=True)
        (spec / "kernel.json").write_text(json.dumps({"argv": argv, "display_name": name}))


class Server:
    """The kernel and session managers of a jupyter server, with its kernels."""

    def __init__(self, root: Path):
        from jupyter_client.kernelspec import KernelSpecManager
        from jupyter_server.services.contents.filemanager import AsyncFileContentsManager
        from jupyter_server.services.kernels.kernelmanager import AsyncMappingKernelManager
        from jupyter_server.services.sessions.sessionmanager import SessionManager

        specs = KernelSpecManager(kernel_dirs=[str(root / "kernels")])
        # Connection files in the scratch folder: not the working directory, should one be left.
        self.kernels = AsyncMappingKernelManager(
            root_dir=str(root), kernel_spec_manager=specs, connection_dir=str(root)
        )
        contents = AsyncFileContentsManager(root_dir=str(root))
        self.sessions = SessionManager(kernel_manager=self.kernels, contents_manager=contents)
        # Kernel id -> the pids its tree puts on the GPUs (the kernel itself and its leaves).
        self.on_gpus: dict[str, list[int]] = {}

    async def start(self, count: int) -> None:
        """Start kernels until there are ``count``, one in four a training notebook."""
        while len(self.kernels) < count:
            number = len(self.kernels)
            training = number % 4 == 0
            kernel_id = await self.kernels.start_kernel(
                kernel_name="training" if training else "idle"
            )
            await self.sessions.create_session(
                path=f"lab/user{number % 7}/notebook-{number}.ipynb",
                type="notebook",
                kernel_id=kernel_id,
            )
            manager = self.kernels.get_kernel(kernel_id)
            # What the kernel's status messages would set: these processes send none.
            manager.execution_state = "busy" if training else "idle"
            if training:
                self.on_gpus[kernel_id] = await asyncio.to_thread(
                    leaves_of, manager.provisioner.pid
                )

    def leaves(self) -> list[int]:
        """The pids the training notebooks have on the GPUs."""
        return [pid for leaves in self.on_gpus.values() for pid in leaves]

    async def stop(self) -> None:
        await self.kernels.shutdown_all(now=True)


def rows(pids: list[int], count: int) -> list[int]:
    """``count`` GPU process rows of ``pids``, a pid on several GPUs where there are more rows
    than pids: ``nvml_reporting`` gives GPU i the rows i, i+8, ..., and a pid comes back an odd
    number of rows later, so never twice on one GPU."""
    if not pids:
        return []
    cycle = pids if len(pids) % 2 else [*pids, pids[0]]
    return [cycle[number % len(cycle)] for number in range(count)]


class Read(NamedTuple):
    """The cheapest of a kind of read."""

    cpu: float  # seconds of this process's CPU, every thread's
    wall: float
    unwalked: int  # the most reads a busy kernel's figures went without a walk of its tree


async def cheapest_read(server: Server, on_gpus: list[int]) -> Read:
    """The cheapest read with ``server``'s kernels and ``on_gpus`` as the GPUs' process rows."""
    source = nvml_reporting(on_gpus)
    join = KernelJoin(server.kernels, server.sessions, show_other_users_commands=False)
    kernels = KernelService(join, KernelHistory(3600, 1.0), NotebookLedger())
    annotate = _Annotation(kernels, MachineReader(str(REPO)), logging.getLogger("bench"))
    cpu_costs, wall_costs = [], []
    unwalked = dict.fromkeys(server.on_gpus, 0)  # busy kernel -> reads since its last walk
    most_unwalked = 0
    uses = {}
    for _ in range(ROUNDS):
        started, cpu_started = time.perf_counter(), time.process_time()
        snapshot = await source.sample()
        await annotate(snapshot)
        wall_costs.append(time.perf_counter() - started)
        cpu_costs.append(time.process_time() - cpu_started)
        # A kernel not walked at a read keeps its last walk's figures: the same object.
        for kernel_id in unwalked:
            kept = join.machine_use[kernel_id] is uses.get(kernel_id)
            unwalked[kernel_id] = unwalked[kernel_id] + 1 if kept else 0
        most_unwalked = max(most_unwalked, *unwalked.values(), 0)
        uses = dict(join.machine_use)
    joined = sum(1 for gpu in snapshot.gpus for row in gpu.processes if row.kernel_id)
    assert joined == len(on_gpus), f"{joined} of {len(on_gpus)} rows joined to their kernels"
    return Read(min(cpu_costs), min(wall_costs), most_unwalked)


async def measure() -> None:
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        write_kernelspecs(root)
        os.environ["JUPYTER_PATH"] = str(root)
        server = Server(root)
        empty = Server(root)
        try:
            by_kernels = {}
            for count in KERNEL_STEPS:
                await server.start(count)
                by_kernels[count] = (
                    await cheapest_read(empty, []),
                    await cheapest_read(server, server.leaves()),
                )
            by_rows = {
                count: (
                    await cheapest_read(empty, []),
                    await cheapest_read(server, rows(server.leaves(), count)),
                )
                for count in ROW_STEPS
            }
        finally:
            await server.stop()
    print(f"{len(psutil.pids())} processes on this machine; the least of {ROUNDS} reads")
    print("CPU a read (wall time in brackets):")
    for count, (baseline, read) in by_kernels.items():
        on_gpus = (count + 3) // 4
        print(
            f"{count:4d} kernels ({on_gpus} on GPUs, {on_gpus * 4} rows): {_figures(read)},"
            f" none {_figures(baseline)}, ratio {read.cpu / baseline.cpu:5.2f};"
            f" a busy kernel's tree walked every {read.unwalked + 1} reads at most"
        )
    for count, (baseline, read) in by_rows.items():
        print(
            f"200 kernels, {count:3d} rows: {_figures(read)}, none {_figures(baseline)},"
            f" ratio {read.cpu / baseline.cpu:5.2f}"
        )
    most = KERNEL_STEPS[-1]
    per_kernel = (by_kernels[most][1].cpu - by_kernels[0][1].cpu) / most
    per_row = (by_rows[ROW_STEPS[-1]][1].cpu - by_rows[0][1].cpu) / ROW_STEPS[-1]
    print(f"growth: +{per_kernel * 1e6:.1f} µs a kernel, +{per_row * 1e6:.1f} µs a row")
    baseline, read = by_kernels[most]
    print(f"200 kernels (50 on GPUs) against none: ratio {read.cpu / baseline.cpu:.2f} (goal <= 2)")


def _figures(read: Read) -> str:
    return f"{read.cpu * 1e6:5.0f} µs ({read.wall * 1e6:5.0f})"


if __name__ == "__main__":
    asyncio.run(measure())
