"""A real ``jupyter server`` with this extension under the loads that once starved its GPU
routes, and a watchdog that times those routes from outside; for test_starvation.py and
bench/starvation.py.

The server reads the 8x V100S capture through the fake nvidia-smi, lists the environments of an
envs folder built here from real records (one of them, when asked, with a FIFO as its
``conda-meta/history``: a read of it never returns, like a file on a hung network filesystem),
and starts with an hour of reads in its history (tests/seeded_history.py).
"""

from __future__ import annotations

import http.client
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from .conda_layouts import conda_capture, env_2025, installed_by_history, make_conda_env
from .prometheus_lab import JupyterServer, running_jupyter_server
from .replay import REPO, SMI_FIXTURES

V100S = "xml/tesla-v100s-pcie-32gb-x8-driver-460.73.01-v11.xml"
# The kernel of the seeded hour: it held 20 GiB on each GPU (see seeded_history.py).
KERNEL = "7f1c2a64-0d7e-4c7e-9a55-3b1f4b8e2d10"
INTERVAL = 0.5
HOUR = 3600.0
# What a browser polls while it watches the GPUs, and a scraper.
GPU_ROUTES = ("gpu-monitor/api/status", "gpu-monitor/api/gpus", "gpu-monitor/metrics")
ENVS = "gpu-monitor/api/envs"
# How long a client of the loads or the watchdog waits for an answer.
CLIENT_TIMEOUT_SECONDS = 30.0
# The most spans one request takes (api_schema/kernels.json, SpansRequest).
MAX_SPANS = 2000


# The real Anaconda 2023.03 installer's history: 424 packages, an environment of a lab's size.
ANACONDA = conda_capture("conda-meta-history-anaconda3-2023.03-constructor-osx-arm64.txt")


def make_envs(folder: Path, count: int, hung: bool) -> Path:
    """An envs folder of ``count`` environments of the 424 packages of the real Anaconda
    2023.03 history, and with ``hung`` one more, ``hung-env`` (the real 2025 records), whose
    ``conda-meta/history`` is a FIFO nobody writes to."""
    dists = installed_by_history(ANACONDA, "defaults", "osx-arm64")
    for n in range(count):
        make_conda_env(folder / f"project-{n:02}", dists, history=ANACONDA)
    if hung:
        history = env_2025(folder / "hung-env") / "conda-meta" / "history"
        history.unlink()
        os.mkfifo(history)
    return folder


@contextmanager
def loaded_server(folder: Path, envs_dir: Path, **fake_smi: str) -> Iterator[JupyterServer]:
    """A server in ``folder`` that reads the 8x V100S twice a second, searches ``envs_dir``
    for environments, and has an hour of history; a home of its own (no conda of this
    machine's user). ``fake_smi``: more FAKE_SMI_* variables (``FAKE_SMI_MODE="hang"``)."""
    config = folder / "config"
    config.mkdir(parents=True, exist_ok=True)
    settings = {
        "ServerApp": {"jpserver_extensions": {"tests.seeded_history": True}},
        "GpuMonitor": {"extra_envs_dirs": [str(envs_dir)], "interval": INTERVAL},
    }
    (config / "jupyter_server_config.json").write_text(json.dumps(settings))
    home = folder / "home"
    home.mkdir(exist_ok=True)
    package_path = str(REPO / "jupyter_server_ext")
    environment = {
        "FAKE_SMI_XML": str(SMI_FIXTURES / V100S),
        "SEEDED_HISTORY_XML": str(SMI_FIXTURES / V100S),
        "SEEDED_HISTORY_KERNEL": KERNEL,
        "HOME": str(home),
        **fake_smi,
        "PYTHONPATH": os.pathsep.join(filter(None, [package_path, os.environ.get("PYTHONPATH")])),
    }
    for name in ("CONDA_EXE", "CONDA_PYTHON_EXE", "CONDA_ROOT", "CONDA_PREFIX", "CONDARC"):
        environment[name] = ""
    with running_jupyter_server(folder, environment) as server:
        yield server


@dataclass
class Answer:
    """What a client got: the status (0: no answer in time), the body, how long it took."""

    code: int
    body: bytes
    seconds: float


def ask(server: JupyterServer, path: str, method: str = "GET", body: bytes | None = None) -> Answer:
    """One request on a connection of its own, as another browser sends it."""
    return ask_at(server.port, server.token, path, method, body)


def ask_at(
    port: int, token: str, path: str, method: str = "GET", body: bytes | None = None
) -> Answer:
    """``ask`` the server on ``port`` with ``token``."""
    started = time.perf_counter()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=CLIENT_TIMEOUT_SECONDS)
    try:
        headers = {"Authorization": f"token {token}"}
        connection.request(method, f"/{path}", body=body, headers=headers)
        response = connection.getresponse()
        return Answer(response.status, response.read(), time.perf_counter() - started)
    except OSError:  # no answer within the client's patience (or none at all)
        return Answer(0, b"", time.perf_counter() - started)
    finally:
        connection.close()


def at_once(
    server: JupyterServer, requests: Sequence[tuple[str, str, bytes | None]]
) -> list[Answer]:
    """Every (method, path, body) sent at the same moment, each from a thread of its own."""
    with ThreadPoolExecutor(max_workers=len(requests)) as clients:
        return list(clients.map(lambda r: ask(server, r[1], r[0], r[2]), requests))


@contextmanager
def at_once_in_background(server: JupyterServer, paths: Sequence[str]) -> Iterator[list[Answer]]:
    """GET every path at the same moment, each from a thread of its own, while the block runs;
    the answers, in the order of ``paths``, once it is left."""
    answers: list[Answer] = []
    clients = ThreadPoolExecutor(max_workers=len(paths))
    pending = [clients.submit(ask, server, path) for path in paths]
    try:
        yield answers
    finally:
        answers += [request.result() for request in pending]
        clients.shutdown()


def histories_since(count: int) -> list[tuple[str, str, bytes | None]]:
    """``count`` history requests, each with a ``since`` of its own within the last hour."""
    now = time.time()
    return [
        ("GET", f"gpu-monitor/api/gpus/history?since={now - HOUR + n * 7.3:.3f}", None)
        for n in range(count)
    ]


def largest_spans(count: int) -> list[tuple[str, str, bytes | None]]:
    """``count`` spans requests of the largest size taken: 2000 spans over the seeded hour,
    each covering 7 or 8 reads, just under the cost a request may have (twice the history)."""
    start = time.time() - HOUR + 60
    spans = [{"start": start + n * 1.7, "end": start + n * 1.7 + 3.6} for n in range(MAX_SPANS)]
    body = json.dumps({"spans": spans}).encode()
    return [("POST", f"gpu-monitor/api/kernels/{KERNEL}/spans", body)] * count


@dataclass
class RouteWatch:
    """The GPU routes asked in turn, over and over, on a connection of its own from a process
    of its own: how long the server keeps them waiting, seen from outside as another browser
    sees it. (From a thread of the process that sends the load, the watchdog waited for that
    process's GIL behind the load's hundred client threads, and timed them, not the server.)
    A route that does not answer within the client's patience counts that patience."""

    server: JupyterServer
    routes: Sequence[str] = GPU_ROUTES
    latencies: dict[str, list[float]] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.latencies = {route: [] for route in self.routes}

    def __enter__(self) -> RouteWatch:
        self._watch = subprocess.Popen(
            [sys.executable, "-m", "tests.loaded_server", str(self.server.port), *self.routes],
            cwd=REPO / "jupyter_server_ext",
            env={**os.environ, "WATCHED_SERVER_TOKEN": self.server.token},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        # Asking starts once the watchdog says so: its start-up is not the load's time.
        assert self._watch.stdout.readline() == "watching\n"
        return self

    def __exit__(self, *exc) -> None:
        # Closing its stdin stops it after the round under way.
        output, _ = self._watch.communicate(timeout=CLIENT_TIMEOUT_SECONDS * len(self.routes))
        for line in output.splitlines():
            route, code, seconds = json.loads(line)
            self.latencies[route].append(seconds)
            if code != 200:
                self.failures.append(f"{route}: {code or 'no answer'}")

    def p99(self, route: str) -> float:
        """The 99th percentile of the route's latencies (the slowest when there are few)."""
        ordered = sorted(self.latencies[route])
        return ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))] if ordered else float("inf")


def watch_routes(port: int, token: str, routes: Sequence[str]) -> None:
    """RouteWatch's process: each route in turn until its stdin closes, a JSON line
    ``[route, status, seconds]`` for each answer."""
    stop = threading.Event()
    threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
    print("watching", flush=True)
    while not stop.is_set():
        for route in routes:
            answer = ask_at(port, token, route)
            print(json.dumps([route, answer.code, answer.seconds]), flush=True)
            time.sleep(0.01)


def quiet_baseline(server: JupyterServer, seconds: float) -> RouteWatch:
    """The GPU routes' latencies with nothing else asked."""
    with RouteWatch(server) as quiet:
        time.sleep(seconds)
    return quiet


def stop_seconds(server: JupyterServer, patience_seconds: float = 10.0) -> float:
    """SIGTERM, and how long the server took to exit; infinity when it had not after
    ``patience_seconds`` (it is killed then)."""
    started = time.monotonic()
    os.kill(server.process.pid, signal.SIGTERM)
    try:
        server.process.wait(timeout=patience_seconds)
    except subprocess.TimeoutExpired:
        server.process.kill()
        server.process.wait()
        return float("inf")
    return time.monotonic() - started


if __name__ == "__main__":
    watch_routes(int(sys.argv[1]), os.environ["WATCHED_SERVER_TOKEN"], sys.argv[2:])
