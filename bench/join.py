"""Kernel join benchmark: the join's cost against one pass over the process table.

    python bench/join.py

Starts 50 real "kernel" process trees, each a chain three deep ending in four leaves (350
processes), reports the 200 leaves as GPU processes, and times ``kernels.join`` (which reads
each pid it needs at most once) against one ``psutil.process_iter()`` pass reading the same
facts. The join must not cost more than that one pass.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "jupyter_server_ext"))

from jupyterlab_gpu_monitor.gpu.model import Gpu, GpuProcess, Snapshot
from jupyterlab_gpu_monitor.kernel.listing import RunningKernel
from jupyterlab_gpu_monitor.kernel.processes import ProcessTree, join

KERNELS = 50
LEAVES_PER_KERNEL = 4
DEPTH = 3
ROUNDS = 20

# A process that forks a chain DEPTH deep whose last link forks the leaves; all then sleep.
TREE = f"""
import os, signal, time
signal.signal(signal.SIGINT, signal.SIG_DFL)  # stopped by an interrupt, quietly
def link(depth):
    if depth == 0:
        for _ in range({LEAVES_PER_KERNEL}):
            if os.fork() == 0:
                time.sleep(600)
                os._exit(0)
    elif os.fork() == 0:
        link(depth - 1)
        os._exit(0)
    time.sleep(600)
link({DEPTH})
"""


def start_trees() -> list[subprocess.Popen]:
    return [
        subprocess.Popen([sys.executable, "-c", TREE], start_new_session=True)
        for _ in range(KERNELS)
    ]


def leaves_of(root: int) -> list[int]:
    expected = DEPTH + LEAVES_PER_KERNEL
    for _ in range(200):
        descendants = psutil.Process(root).children(recursive=True)
        if len(descendants) == expected:
            return [p.pid for p in descendants if not p.children()]
        time.sleep(0.05)
    raise RuntimeError(f"tree {root} did not grow")


def timed(action) -> float:
    best = float("inf")
    for _ in range(ROUNDS):
        started = time.perf_counter()
        action()
        best = min(best, time.perf_counter() - started)
    return best


def main() -> None:
    trees = start_trees()
    try:
        kernels = [
            RunningKernel(
                kernel_id=f"kernel-{i}", name="python3", pid=tree.pid, session_path=f"{i}.ipynb"
            )
            for i, tree in enumerate(trees)
        ]
        leaves = [pid for tree in trees for pid in leaves_of(tree.pid)]
        gpus = [Gpu(index=i, uuid=f"GPU-{i}") for i in range(8)]
        for number, pid in enumerate(leaves):
            gpus[number % 8].processes.append(GpuProcess(pid=pid, used_memory_mib=1024))
        snapshot = Snapshot(source="bench", timestamp=time.time(), gpus=gpus)

        trees_read: list[ProcessTree] = []

        def one_join() -> None:
            tree = ProcessTree()
            join(snapshot, kernels, tree=tree)
            trees_read.append(tree)

        join_seconds = timed(one_join)
        attributed = sum(1 for gpu in gpus for p in gpu.processes if p.kernel_id is not None)
        assert attributed == len(leaves), "every leaf belongs to its kernel"
        pids_read = trees_read[-1].pids_read
        table_size = len(psutil.pids())
        one_pass = timed(lambda: list(psutil.process_iter(["ppid", "uids", "create_time"])))
        print(
            f"join of {len(leaves)} GPU processes to {KERNELS} kernels:"
            f" {join_seconds * 1000:.2f} ms,"
            f" {pids_read} pids read of {table_size}; one process_iter() pass:"
            f" {one_pass * 1000:.2f} ms; ratio {join_seconds / one_pass:.2f} (must stay <= 1)"
        )
    finally:
        for tree in trees:
            os.killpg(tree.pid, signal.SIGKILL)
            tree.wait()


if __name__ == "__main__":
    main()
