"""Per-cell attribution benchmark: what ``POST kernels/<id>/spans`` costs the server.

    python bench/cells.py

Over a full 1-hour history of 8 GPUs (3600 reads at 1 s, the H100 capture's row repeated)
with 50 kernels holding memory, it times the handler's work (``attribute`` and its JSON) for
one 10-minute cell run and for 500 cells at once, against one ``GET gpus`` on a real jupyter
server reading the same 8 GPUs, measured in the same run; and how the cost grows with a cell's
length (an hour-long cell against a quarter-hour one: 4 when linear, 16 when quadratic).
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "jupyter_server_ext"))

from jupyterlab_gpu_monitor.gpu.history import History  # noqa: E402
from jupyterlab_gpu_monitor.gpu.model import Snapshot  # noqa: E402
from jupyterlab_gpu_monitor.gpu.smi_csv import parse_query_gpu  # noqa: E402
from jupyterlab_gpu_monitor.kernel.cells import KernelHistory, Span, attribute  # noqa: E402
from jupyterlab_gpu_monitor.kernel.join import KernelGpuUsage  # noqa: E402
from jupyterlab_gpu_monitor.kernel.usage import KernelUse  # noqa: E402
from metrics import eight_gpu_csv, timed_gets  # noqa: E402  (bench/metrics.py, next to this)
from sampler import percentile  # noqa: E402
from tests.prometheus_lab import H100_REPLAY, running_jupyter_server  # noqa: E402

HOUR = 3600
KERNELS = 50
KERNEL = "00000000-0000-4000-8000-000000000000"
ROUNDS = 20


def full_hour(gpus_csv: Path) -> tuple[History, KernelHistory, float]:
    """An hour of reads of 8 GPUs, and what 50 kernels held at each; the first read's time."""
    gpus = parse_query_gpu(gpus_csv.read_text()).gpus
    history = History(history_seconds=HOUR, interval_seconds=1.0)
    memory = KernelHistory(history_seconds=HOUR, interval_seconds=1.0)
    start = time.time() - HOUR
    kernel_ids = [
        KERNEL if kernel == 0 else f"{kernel:08x}-0000-4000-8000-000000000000"
        for kernel in range(KERNELS)
    ]
    for second in range(HOUR):
        timestamp = start + second
        history.append(Snapshot(source="bench", timestamp=timestamp, gpus=gpus))
        memory.append(
            timestamp,
            [
                KernelGpuUsage(
                    kernel_id=kernel_id,
                    path=f"notebook-{kernel}.ipynb",
                    gpu_index=kernel % len(gpus),
                    gpu_uuid=None,
                    gpu_name=None,
                    memory_used_mib=1024 + second % 600,
                    utilization_gpu=None,
                )
                for kernel, kernel_id in enumerate(kernel_ids)
            ],
            {kernel_id: KernelUse(100.0 + second % 300, 4096.0, 4) for kernel_id in kernel_ids},
        )
    return history, memory, start


def handler_seconds(history: History, memory: KernelHistory, spans: list[Span]) -> float:
    """The best of ROUNDS runs of what the spans handler does for these spans."""
    best = float("inf")
    for _ in range(ROUNDS):
        started = time.perf_counter()
        json.dumps(attribute(KERNEL, spans, history, memory))
        best = min(best, time.perf_counter() - started)
    return best


def main() -> None:
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        gpus_csv = eight_gpu_csv(folder)
        history, memory, start = full_hour(gpus_csv)
        one = handler_seconds(history, memory, [Span(start + 1800, start + 2400)])
        cells = [Span(start + 7 * cell, start + 7 * cell + 5) for cell in range(500)]
        many = handler_seconds(history, memory, cells)
        quarter = handler_seconds(history, memory, [Span(start, start + HOUR / 4)])
        hour = handler_seconds(history, memory, [Span(start, start + HOUR)])
        environment = {**H100_REPLAY, "FAKE_SMI_GPU_CSV": str(gpus_csv)}
        with running_jupyter_server(folder / "jupyter", environment) as server:
            gets, _ = timed_gets(server, ["gpu-monitor/api/gpus"])["gpu-monitor/api/gpus"]
    get = percentile(gets, 0.5)
    print(
        f"attributing a 10-minute cell over 1 h x 8 GPUs: {one * 1000:.2f} ms vs GET gpus p50 "
        f"{get * 1000:.2f} ms, ratio {one / get:.2f}"
    )
    print(
        f"attributing 500 cells at once: {many * 1000:.2f} ms, ratio {many / get:.2f} "
        f"({many / 500 * 1000:.3f} ms a cell)"
    )
    print(
        f"attributing a 60-minute cell: {hour * 1000:.2f} ms, ratio {hour / get:.2f}; against a "
        f"15-minute one {hour / quarter:.1f} (linear 4, quadratic 16)"
    )


if __name__ == "__main__":
    main()
