"""Load and soak: a real jupyter server reading 8 GPUs every 0.5 s, its memory over time.

    python bench/soak.py [--history-seconds 3600] [--soak-minutes 10] [--clients 200]

1. Load: ``--clients`` clients at once (a lab of browser tabs), each polling ``GET gpus`` and
   ``GET gpus/history?since=`` as the panel does, for 60 s: errors (target 0), and the p50 /
   p99 latency of ``GET gpus`` against jupyter_server's own ``GET /api/status`` asked by the
   same clients in the same run.
2. Soak: 20 clients keep polling while the history fills (``--history-seconds`` at 0.5 s),
   then ``--soak-minutes`` more: the server's resident memory when the history was full and at
   the end (target: flat within 2 MiB), and errors (target 0).

The fake nvidia-smi replays the 8-GPU H100 capture (``-q -x``; the CSV queries answered from its
numbers). A short ``--history-seconds`` fills the history sooner: what is measured is the
memory once it is full.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

import psutil
from tornado.httpclient import AsyncHTTPClient, HTTPClientError

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "jupyter_server_ext"))

from sampler import percentile  # noqa: E402  (bench/sampler.py, next to this)
from tests.prometheus_lab import JupyterServer, running_jupyter_server  # noqa: E402
from tests.replay import SMI_FIXTURES  # noqa: E402

INTERVAL = 0.5
LOAD_SECONDS = 60.0
SOAK_CLIENTS = 20
EIGHT_H100 = {"FAKE_SMI_XML": str(SMI_FIXTURES / "xml/h100-80gb-hbm3-x8-driver-580.105.08-v13.xml")}


class Clients:
    """Clients that poll like the panel: the snapshot and the history delta, then a pause."""

    def __init__(self, server: JupyterServer, count: int):
        self._server = server
        self._http = AsyncHTTPClient(force_instance=True, max_clients=count)
        self._headers = {"Authorization": f"token {server.token}"}
        self.count = count
        self.errors = 0
        self.requests = 0
        self.latencies: dict[str, list[float]] = {"gpus": [], "status": []}

    async def _get(self, path: str, kind: str | None = None) -> bytes | None:
        started = time.perf_counter()
        try:
            response = await self._http.fetch(
                f"{self._server.url}/{path}", headers=self._headers, request_timeout=30
            )
        except (HTTPClientError, OSError):
            self.errors += 1
            return None
        finally:
            self.requests += 1
        if kind is not None:
            self.latencies[kind].append(time.perf_counter() - started)
        return response.body

    async def _poll(self, until: float) -> None:
        since = time.time()
        while time.monotonic() < until:
            await self._get("gpu-monitor/api/gpus", "gpus")
            await self._get(f"gpu-monitor/api/gpus/history?since={since}")
            since = time.time() - 1
            await self._get("api/status", "status")
            await asyncio.sleep(1.0)

    async def run(self, seconds: float) -> None:
        until = time.monotonic() + seconds
        await asyncio.gather(*(self._poll(until) for _ in range(self.count)))


def rss_mib(server: JupyterServer) -> float:
    return psutil.Process(server.process.pid).memory_info().rss / (1024 * 1024)


async def load(server: JupyterServer, clients: int) -> None:
    polling = Clients(server, clients)
    await polling.run(LOAD_SECONDS)
    gpus, status = polling.latencies["gpus"], polling.latencies["status"]
    print(
        f"load: {clients} clients for {LOAD_SECONDS:g} s, {polling.requests} requests, "
        f"{polling.errors} errors (target 0)"
    )
    for name, fraction in (("p50", 0.5), ("p99", 0.99)):
        ours, theirs = percentile(gpus, fraction), percentile(status, fraction)
        print(
            f"  GET gpus {name} {ours * 1000:.1f} ms vs GET /api/status "
            f"{theirs * 1000:.1f} ms, ratio {ours / theirs:.2f}"
        )


async def soak(server: JupyterServer, history_seconds: float, minutes: float) -> None:
    polling = Clients(server, SOAK_CLIENTS)
    running = asyncio.ensure_future(polling.run(history_seconds + 30 + minutes * 60))
    await asyncio.sleep(history_seconds + 30)  # the history is full
    full = rss_mib(server)
    samples = [full]
    for _ in range(int(minutes * 6)):
        await asyncio.sleep(10)
        samples.append(rss_mib(server))
    await running
    print(
        f"soak: {SOAK_CLIENTS} clients, history of {history_seconds:g} s full, then "
        f"{minutes:g} min: RSS {full:.1f} MiB when full, {samples[-1]:.1f} MiB at the end, "
        f"growth {samples[-1] - full:+.1f} MiB (max {max(samples) - full:+.1f}; target "
        f"within 2), {polling.errors} errors of {polling.requests} (target 0)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--history-seconds", type=float, default=3600.0)
    parser.add_argument("--soak-minutes", type=float, default=10.0)
    parser.add_argument("--clients", type=int, default=200)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        with running_jupyter_server(
            Path(scratch),
            EIGHT_H100,
            f"--GpuMonitor.interval={INTERVAL}",
            f"--GpuMonitor.history_seconds={options.history_seconds}",
        ) as server:
            asyncio.run(load(server, options.clients))
            asyncio.run(soak(server, options.history_seconds, options.soak_minutes))


if __name__ == "__main__":
    main()
