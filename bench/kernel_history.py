"""The kernels' history in memory: what an hour of per-kernel GPU memory and CPU costs.

    python bench/kernel_history.py

For an hour of reads at 1 s it fills ``KernelHistory`` with kernels of a shared server and
measures, with tracemalloc, what the filled history holds, against the Sampler's own history of
the same hour of an 8-GPU server (the H100 capture), measured in the same run:

- idle kernels: CPU 0.0 at every read, as a real idle ipykernel reads here (120 reads of one,
  through the kernel's process tree, all 0.0), no GPU memory;
- kernels on GPUs: their memory changing at every read (the worst case: a caching allocator
  mostly holds steady) and their CPU different at every read, as a training loop's;
- churn: 1,000 kernel starts in the hour, 200 alive at a time, a quarter of them on GPUs.

Goal (issue 28): 200 kernels, 50 of them on GPUs, for an hour under 20 MB; and whatever the
kernels do, memory that does not grow with kernel starts.
"""

from __future__ import annotations

import gc
import sys
import tracemalloc
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "jupyter_server_ext"))

from jupyterlab_gpu_monitor.gpu.history import History  # noqa: E402
from jupyterlab_gpu_monitor.gpu.smi_xml import parse_xml  # noqa: E402
from jupyterlab_gpu_monitor.kernel.cells import KernelHistory  # noqa: E402
from jupyterlab_gpu_monitor.kernel.join import KernelGpuUsage  # noqa: E402
from jupyterlab_gpu_monitor.kernel.usage import KernelUse  # noqa: E402
from tests.replay import SMI_FIXTURES  # noqa: E402

HOUR = 3600
T0 = 1_750_000_000.0
EIGHT_H100 = SMI_FIXTURES / "xml/h100-80gb-hbm3-x8-driver-580.105.08-v13.xml"
MIB = 1024 * 1024


def kernel_id(number: int) -> str:
    return f"{number:08x}-0000-4000-8000-000000000000"


def traced_mib(build) -> float:
    """MiB that what ``build()`` returns still holds once built (its inputs gone)."""
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    kept = build()
    gc.collect()
    size = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    del kept
    return size / MIB


def gpu_history() -> History:
    snapshot = parse_xml(EIGHT_H100.read_text(), T0)
    history = History(history_seconds=HOUR, interval_seconds=1.0)
    for second in range(HOUR):
        snapshot.timestamp = T0 + second
        history.append(snapshot)
    return history


def kernels_history(alive) -> KernelHistory:
    """An hour of reads; ``alive(second)`` gives (kernel number, on a GPU) for each kernel."""
    memory = KernelHistory(history_seconds=HOUR, interval_seconds=1.0)
    for second in range(HOUR):
        usage, use = [], {}
        for number, on_gpu in alive(second):
            kernel = kernel_id(number)
            if on_gpu:
                mib = 1024.0 + (second * 7 + number) % 600
                usage.append(KernelGpuUsage(kernel, None, number % 8, None, None, mib, None))
                use[kernel] = KernelUse(100.0 + (second * 13 + number) % 300, 4096.0, 4)
            else:
                use[kernel] = KernelUse(0.0, 120.0, 1)
        memory.append(T0 + second, usage, use)
    return memory


def steady(total: int, on_gpus: int):
    return lambda second: [(number, number < on_gpus) for number in range(total)]


def churn(second: int) -> list[tuple[int, bool]]:
    # 1,000 starts in the hour: kernel n lives from n * 3.6 s for 12 minutes, 200 at a time.
    first = max(0, int((second - 720) / 3.6) + 1)
    last = min(999, int(second / 3.6))
    return [(number, number % 4 == 0) for number in range(first, last + 1)]


def main() -> None:
    baseline = traced_mib(gpu_history)
    print(f"the Sampler's hour of 8 H100s: {baseline:.2f} MiB (the baseline)")
    cases = [
        ("no kernels", steady(0, 0)),
        ("200 idle kernels", steady(200, 0)),
        ("200 kernels, 50 on GPUs", steady(200, 50)),
        ("200 kernels, all on GPUs", steady(200, 200)),
        ("1,000 kernel starts, 200 alive, 50 on GPUs", churn),
    ]
    for name, alive in cases:
        size = traced_mib(lambda alive=alive: kernels_history(alive))
        print(f"an hour of {name}: {size:.2f} MiB, ratio {size / baseline:.2f}")


if __name__ == "__main__":
    main()
