"""A server extension for tests and benchmarks only: fills a real ``jupyter server``'s history
with an hour of reads, as a server that has run for an hour has it, so that a test started a
minute ago can ask what a panel opening on a long-running server asks.

Enabled beside jupyterlab_gpu_monitor (``ServerApp.jpserver_extensions``, with
``jupyter_server_ext`` on the server's PYTHONPATH). ``SEEDED_HISTORY_XML`` names the real
``nvidia-smi -q -x`` capture each read repeats; ``SEEDED_HISTORY_KERNEL`` a kernel id that held
20 GiB on each GPU and 3.8 cores at each read (known to the spans route without a kernel).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from jupyterlab_gpu_monitor.gpu.model import Snapshot
from jupyterlab_gpu_monitor.gpu.smi_xml import parse_xml
from jupyterlab_gpu_monitor.kernel.join import KernelGpuUsage
from jupyterlab_gpu_monitor.kernel.usage import KernelUse
from jupyterlab_gpu_monitor.routes import KERNELS_SETTING, SAMPLER_SETTING


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    return [{"module": "tests.seeded_history"}]


def _load_jupyter_server_extension(serverapp) -> None:
    settings = serverapp.web_app.settings
    sampler = settings.get(SAMPLER_SETTING)
    kernels = settings.get(KERNELS_SETTING)
    if sampler is None or kernels is None:
        serverapp.log.error("seeded_history: load jupyterlab_gpu_monitor first")
        return
    capture = parse_xml(Path(os.environ["SEEDED_HISTORY_XML"]).read_text(), 0.0)
    kernel_id = os.environ.get("SEEDED_HISTORY_KERNEL", "")
    interval = sampler.interval_seconds
    end = time.time()
    times = [
        end - sampler.history.history_seconds + n * interval
        for n in range(sampler.history.capacity)
    ]
    times = [t for t in times if t < end]
    sampler.history.seed(
        Snapshot(source="nvidia-smi", timestamp=t, gpus=capture.gpus) for t in times
    )
    if kernel_id:
        usage = [
            KernelGpuUsage(kernel_id, "train.ipynb", gpu.index, gpu.uuid, gpu.name, 20480.0, 97.0)
            for gpu in capture.gpus
        ]
        cpu = {kernel_id: KernelUse(380.0, 9830.0, 3)}
        for t in times:
            kernels.history.append(t, usage, cpu)
    serverapp.log.info("seeded_history: %d reads of %d GPUs", len(times), len(capture.gpus))
