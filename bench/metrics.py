"""Prometheus benchmark: every figure is a ratio against a baseline of the same run.

    python bench/metrics.py

1. One GET /gpu-monitor/metrics for 8 GPUs and 50 kernels against one GET /gpu-monitor/api/gpus,
   on a real jupyter server (fake nvidia-smi answering with the H100 capture's row for 8 GPUs;
   the 50 kernels' GPU memory handed to the metrics the way kernels.py hands it), p50 and p99
   of sequential requests on one kept-alive connection.
2. PrometheusSource.sample() against a local Prometheus that scrapes the nvidia_gpu_exporter
   scrape of that H100, against NvidiaSmiSource.sample() through the fake nvidia-smi replaying
   the same machine. The fake is a Python script: a real nvidia-smi spawns faster, so this
   ratio is on the generous side for nvidia-smi's cost, not ours.
"""

from __future__ import annotations

import asyncio
import http.client
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "jupyter_server_ext"))

from jupyterlab_gpu_monitor.gpu.nvidia_smi import NvidiaSmiSource  # noqa: E402
from jupyterlab_gpu_monitor.gpu.prometheus import PrometheusSource  # noqa: E402
from sampler import percentile  # noqa: E402  (bench/sampler.py, next to this file)
from tests.prometheus_lab import (  # noqa: E402
    H100_REPLAY,
    PROMETHEUS_FIXTURES,
    JupyterServer,
    running_jupyter_server,
    running_prometheus,
    scrape_targets,
    serving_scrapes,
    wait_for,
)
from tests.replay import install_fake_nvidia_smi  # noqa: E402

GPUS = 8
KERNELS = 50
REQUESTS = 200
READS = 50
H100_SCRAPE = PROMETHEUS_FIXTURES / "nvidia-gpu-exporter-golden-h100-590.48.01-load.prom"

# A server extension loaded next to ours that hands the metrics 50 kernels' GPU memory, as
# kernels.py does after its join: a callable in web_app.settings. Set once the loop runs, after
# every extension (ours included) has set its handlers up.
KERNEL_USAGE_EXTENSION = f"""
from types import SimpleNamespace

import tornado.ioloop

USAGE = [
    SimpleNamespace(
        kernel_id=f"{{kernel:08x}}-0000-4000-8000-000000000000",
        path=f"project/notebook-{{kernel}}.ipynb",
        gpu_index=kernel % {GPUS},
        gpu_uuid=f"GPU-{{kernel % {GPUS}:08x}}-0000-0000-0000-000000000000",
        memory_used_mib=1024 + kernel,
    )
    for kernel in range({KERNELS})
]


def _load_jupyter_server_extension(serverapp):
    settings = serverapp.web_app.settings
    tornado.ioloop.IOLoop.current().add_callback(
        settings.__setitem__, "gpu_monitor_kernel_usage", lambda: USAGE
    )
"""


def eight_gpu_csv(folder: Path) -> Path:
    """The H100 capture's --query-gpu answer with its row repeated for 8 GPUs (index, uuid)."""
    header, row = Path(H100_REPLAY["FAKE_SMI_GPU_CSV"]).read_text().splitlines()[:2]
    names = [name.strip() for name in header.split(",")]
    cells = row.split(", ")
    assert len(cells) == len(names), "a value of the capture holds a comma"
    rows = []
    for gpu in range(GPUS):
        cells[names.index("index")] = str(gpu)
        cells[names.index("uuid")] = f"GPU-{gpu:08x}-0000-0000-0000-000000000000"
        rows.append(", ".join(cells))
    path = folder / "eight-h100.csv"
    path.write_text("\n".join([header, *rows]) + "\n")
    return path


def timed_gets(server: JupyterServer, paths: list[str]) -> dict[str, tuple[list[float], int]]:
    """Per path: the seconds of each GET, alternating paths so noise hits both alike, and the
    body size."""
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    headers = {"Authorization": f"token {server.token}"}
    measured: dict[str, tuple[list[float], int]] = {path: ([], 0) for path in paths}
    for _ in range(REQUESTS):
        for path in paths:
            started = time.perf_counter()
            connection.request("GET", f"/{path}", headers=headers)
            response = connection.getresponse()
            body = response.read()
            elapsed = time.perf_counter() - started
            assert response.status == 200, body[:200]
            measured[path] = (measured[path][0] + [elapsed], len(body))
    connection.close()
    return measured


def metrics_against_gpus(folder: Path) -> None:
    (folder / "extension").mkdir(parents=True)
    (folder / "extension" / "bench_kernel_usage.py").write_text(KERNEL_USAGE_EXTENSION)
    (folder / "jupyter" / "config").mkdir(parents=True)
    (folder / "jupyter" / "config" / "jupyter_server_config.py").write_text(
        'c.ServerApp.jpserver_extensions.update({"bench_kernel_usage": True})\n'
    )
    environment = {
        **H100_REPLAY,
        "FAKE_SMI_GPU_CSV": str(eight_gpu_csv(folder)),
        "PYTHONPATH": str(folder / "extension"),
    }
    with running_jupyter_server(folder / "jupyter", environment) as server:
        exposition = server.get("gpu-monitor/metrics").decode()
        kernel_series = exposition.count("jupyter_gpu_kernel_memory_used_bytes{")
        gpu_series = exposition.count("jupyter_gpu_memory_used_bytes{")
        assert (gpu_series, kernel_series) == (GPUS, KERNELS), (gpu_series, kernel_series)
        measured = timed_gets(server, ["gpu-monitor/metrics", "gpu-monitor/api/gpus"])
    (metrics, metrics_bytes), (gpus, gpus_bytes) = measured.values()
    for name, fraction in (("p50", 0.5), ("p99", 0.99)):
        mine, theirs = percentile(metrics, fraction), percentile(gpus, fraction)
        print(
            f"GET metrics ({GPUS} GPUs, {KERNELS} kernels, {metrics_bytes // 1024} KiB) {name} "
            f"{mine * 1000:.2f} ms vs GET gpus ({gpus_bytes // 1024} KiB) {theirs * 1000:.2f} ms, "
            f"ratio {mine / theirs:.2f}"
        )


async def read_latencies(prometheus: str, nvidia_smi: Path) -> tuple[list[float], list[float]]:
    sources = (
        PrometheusSource(prometheus, f'{{node="{H100_SCRAPE.stem}"}}'),
        NvidiaSmiSource(str(nvidia_smi)),
    )
    for source in sources:
        await source.sample()  # the first read of nvidia-smi also reads the XML: not timed
    measured: tuple[list[float], list[float]] = ([], [])
    for _ in range(READS):
        for source, times in zip(sources, measured):
            started = time.perf_counter()
            snapshot = await source.sample()
            times.append(time.perf_counter() - started)
            assert snapshot.gpus[0].memory_used_mib == 19818
    return measured


def prometheus_against_nvidia_smi(folder: Path) -> None:
    os.environ.update(H100_REPLAY)
    nvidia_smi = install_fake_nvidia_smi(folder / "bin")
    with serving_scrapes([H100_SCRAPE]) as scrapes:
        jobs = [{"job_name": "exporter", "static_configs": scrape_targets(scrapes, [H100_SCRAPE])}]
        with running_prometheus(folder / "prometheus", jobs) as prometheus:
            wait_for(prometheus, "up == 1", bool)
            prometheus_reads, smi_reads = asyncio.run(read_latencies(prometheus, nvidia_smi))
    for name, fraction in (("p50", 0.5), ("p99", 0.99)):
        mine, theirs = percentile(prometheus_reads, fraction), percentile(smi_reads, fraction)
        print(
            f"PrometheusSource read {name} {mine * 1000:.2f} ms vs nvidia-smi source (fake "
            f"nvidia-smi) {theirs * 1000:.2f} ms, ratio {mine / theirs:.2f}"
        )


def main() -> None:
    with tempfile.TemporaryDirectory() as scratch:
        metrics_against_gpus(Path(scratch) / "metrics")
        prometheus_against_nvidia_smi(Path(scratch) / "source")


if __name__ == "__main__":
    main()
