"""A real Prometheus, a real jupyter server and the real exporter scrapes, on loopback, for the
tests and the benchmark. Every process started here is stopped on the way out, whatever happens.

Prometheus (Debian's ``prometheus`` package) takes about 5 s from start to its first scrape
(its scrape manager applies new targets every 5 s), so callers start one for many checks.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import psutil
import pytest

from .contract_check import check_answer
from .local_index import serving
from .replay import FIXTURES, SMI_FIXTURES, install_fake_nvidia_smi

PROMETHEUS_FIXTURES = FIXTURES / "prometheus"
PROMETHEUS = shutil.which("prometheus")
PROMTOOL = shutil.which("promtool")

# What the repository ships for a lab's Prometheus and Grafana.
REPO = Path(__file__).resolve().parents[2]
ALERTS = REPO / "prometheus" / "alerts.yml"
ALERT_TESTS = REPO / "prometheus" / "alerts.test.yml"
LAB_RULES = REPO / "prometheus" / "lab.yml"
LAB_TESTS = REPO / "prometheus" / "lab.test.yml"
DASHBOARD = REPO / "grafana" / "gpu-monitor.json"
LAB_DASHBOARD = REPO / "grafana" / "gpu-monitor-lab.json"

# The H100 under load, as the fake nvidia-smi replays it (see conftest.fake_smi).
H100_REPLAY = {
    "FAKE_SMI_XML": str(SMI_FIXTURES / "xml/rtx-a5000-x2-driver-590.44-v13-2procs.xml"),
    "FAKE_SMI_GPU_CSV": str(SMI_FIXTURES / "csv/h100-80gb-hbm3-590.48.01-query-gpu-load.csv"),
    "FAKE_SMI_APPS_CSV": str(SMI_FIXTURES / "csv/h100-80gb-hbm3-590.48.01-compute-apps-load.csv"),
}


def require(tool: str | None, package: str = "prometheus") -> str:
    """The tool's path; without it the test fails (never skips: the real thing must run)."""
    if tool is None:
        pytest.fail(f"Debian's {package} package is not installed (make system-deps installs it)")
    return tool


def exporter_scrapes() -> list[Path]:
    """Every real exporter scrape in the shared fixtures (new ones are picked up by themselves)."""
    return sorted(PROMETHEUS_FIXTURES.glob("*.prom"))


def scrape_body(path: Path) -> bytes:
    """The scrape as its exporter served it. The README excerpt marks what it left out with
    "..." lines, which are the README's, not the exporter's, and are dropped."""
    lines = path.read_bytes().splitlines(keepends=True)
    return b"".join(line for line in lines if line.strip() != b"...")


def with_timestamp(body: bytes, epoch_seconds: float) -> bytes:
    """The scrape with every sample stamped at ``epoch_seconds``, as an exporter that sets its
    samples' times (or a federated Prometheus) serves them: the text format's timestamp, in
    milliseconds, after the value."""
    stamp = f" {int(epoch_seconds * 1000)}".encode()
    lines = body.splitlines()
    return b"".join(
        line + (stamp if line.strip() and not line.startswith(b"#") else b"") + b"\n"
        for line in lines
    )


def free_port() -> int:
    """A TCP port nobody listens on at the moment."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def serving_scrapes(scrapes: list[Path]) -> Iterator[str]:
    """A static endpoint that serves each scrape at ``/<file name>``, like its exporter did."""
    with serving_bodies({f"/{path.name}": scrape_body(path) for path in scrapes}) as url:
        yield url


@contextmanager
def serving_bodies(bodies: dict[str, bytes]) -> Iterator[str]:
    """An exporter stand-in that serves ``bodies[path]`` at each path, as the dict holds it at
    the moment of each scrape: a test changes a scrape by changing the dict."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = bodies.get(self.path)
            self.send_response(200 if body is not None else 404)
            self.send_header("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
            self.end_headers()
            self.wfile.write(body or b"")

        def log_message(self, *args: Any) -> None:
            pass  # one line per scrape, every second: noise in the test output

    with serving(Handler) as url:
        yield url


def scrape_targets(base_url: str, scrapes: list[Path]) -> list[dict[str, Any]]:
    """Static targets for ``serving_scrapes``: one per scrape, labelled ``node=<file stem>``."""
    host = urllib.parse.urlsplit(base_url).netloc
    return [
        {"targets": [host], "labels": {"__metrics_path__": f"/{path.name}", "node": path.stem}}
        for path in scrapes
    ]


# Two machines with no server of ours: a Kubernetes node's DCGM exporter (an A100 in MIG mode,
# its node named by the capture's Hostname label) and a workstation's nvidia_gpu_exporter (an
# H100 under load), each with the job and the scrape target (``instance``) a lab gives it.
EXPORTER_MACHINES = (
    ("dcgm", PROMETHEUS_FIXTURES / "dcgm-exporter-a100-mig-k8s-2.4.0.prom", "10.0.0.7:9400"),
    (
        "nvidia_gpu_exporter",
        PROMETHEUS_FIXTURES / "nvidia-gpu-exporter-golden-h100-590.48.01-load.prom",
        "gpu-box-7:9835",
    ),
)


# The uuid an anonymised capture gives its GPU 0 (nvidia_gpu_exporter's H100 and the H100 XML's).
MASKED_UUID = b"00000000-0000-0000-0000-000000000000"


@contextmanager
def serving_exporter_machines(
    machines: tuple[tuple[str, Path, str], ...] = EXPORTER_MACHINES,
    uuids: Mapping[str, str] | None = None,
) -> Iterator[list[dict[str, Any]]]:
    """The ``machines``' scrapes served; yields the scrape jobs of a Prometheus that scrapes
    them as a lab would. ``uuids``: job -> the uuid that replaces ``MASKED_UUID`` in its
    scrape, for a lab that also holds another capture masked alike (else one GPU to the lab)."""
    bodies = {
        f"/{scrape.name}": scrape_body(scrape).replace(
            MASKED_UUID, (uuids or {}).get(job, MASKED_UUID.decode()).encode()
        )
        for job, scrape, _ in machines
    }
    with serving_bodies(bodies) as url:
        address = urllib.parse.urlsplit(url).netloc
        yield [
            {
                "job_name": job,
                "static_configs": [
                    {
                        "targets": [address],
                        "labels": {"__metrics_path__": f"/{scrape.name}", "instance": instance},
                    }
                ],
            }
            for job, scrape, instance in machines
        ]


def exporters_lab_view(folder: Path) -> dict[str, Any]:
    """``GET lab``'s answer, as ana on node-1, from a real Prometheus (its config and data in
    ``folder``) that scrapes only the ``EXPORTER_MACHINES``, once it has both."""
    from jupyterlab_gpu_monitor.config import GpuMonitor
    from jupyterlab_gpu_monitor.lab.service import LabService
    from jupyterlab_gpu_monitor.metrics import ServerIdentity

    with serving_exporter_machines() as jobs:
        with running_prometheus(folder, jobs) as prometheus:
            lab = LabService(
                GpuMonitor(lab_prometheus_url=prometheus), ServerIdentity.of("node-1", "ana")
            )
            deadline = time.monotonic() + 30
            while len((view := asyncio.run(lab.view()))["nodes"]) < len(EXPORTER_MACHINES):
                if time.monotonic() > deadline:
                    raise AssertionError(f"the exporters never came: {view}")
                time.sleep(1)
    return view


def _stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _wait_until_answers(url: str, process: subprocess.Popen, log: Path, what: str) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{what} exited with {process.returncode}:\n{log.read_text()}")
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except (urllib.error.URLError, ConnectionError):
            time.sleep(0.05)
    raise RuntimeError(f"{what} did not answer {url} within 30 s:\n{log.read_text()}")


@contextmanager
def running_process(
    command: list[str], log: Path, ready_url: str, what: str, env: dict[str, str] | None = None
) -> Iterator[subprocess.Popen]:
    """``command`` in its own process, its output in ``log``; yields it once ``ready_url``
    answers, and stops it on the way out."""
    with log.open("wb") as output:
        process = subprocess.Popen(
            command, stdin=subprocess.DEVNULL, stdout=output, stderr=subprocess.STDOUT, env=env
        )
    try:
        _wait_until_answers(ready_url, process, log, what)
        yield process
    finally:
        _stop(process)


@contextmanager
def running_prometheus(
    folder: Path,
    scrape_configs: list[dict[str, Any]],
    port: int | None = None,
    rule_files: list[Path] | None = None,
    flags: tuple[str, ...] = (),
) -> Iterator[str]:
    """A Prometheus on loopback (on ``port``, else a free one) that scrapes every second and
    loads ``rule_files``, with its config and data in ``folder`` and ``flags`` added to its
    command line; yields its URL once it answers, and stops it on the way out."""
    prometheus = require(PROMETHEUS)
    folder.mkdir(parents=True, exist_ok=True)
    config = folder / "prometheus.yml"
    # JSON is YAML: no YAML writer needed.
    config.write_text(
        json.dumps(
            {
                "global": {"scrape_interval": "1s", "scrape_timeout": "1s"},
                "rule_files": [str(path) for path in rule_files or []],
                "scrape_configs": scrape_configs,
            }
        )
    )
    port = port or free_port()
    url = f"http://127.0.0.1:{port}"
    command = [
        prometheus,
        f"--config.file={config}",
        f"--storage.tsdb.path={folder / 'data'}",
        f"--web.listen-address=127.0.0.1:{port}",
        "--log.level=warn",
        *flags,
    ]
    with running_process(command, folder / "prometheus.log", f"{url}/-/ready", "prometheus"):
        yield url


def rules_every_second(rules: Path, folder: Path) -> Path:
    """A copy of a rule file whose groups are evaluated every second instead of every minute:
    the same rules, seen at work within a test."""
    copy = folder / rules.name
    copy.write_text(rules.read_text().replace("interval: 1m", "interval: 1s"))
    return copy


def query(prometheus_url: str, promql: str) -> list[dict[str, Any]]:
    """An instant query's result; AssertionError with Prometheus' message when it fails."""
    url = f"{prometheus_url}/api/v1/query?{urllib.parse.urlencode({'query': promql})}"
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            answer = json.load(response)
    except urllib.error.HTTPError as error:
        answer = json.load(error)
    assert answer["status"] == "success", f"{promql}: {answer.get('error')}"
    return answer["data"]["result"]


def wait_for(
    prometheus_url: str,
    promql: str,
    done: Callable[[list[dict[str, Any]]], bool],
    timeout_seconds: float = 30,
) -> list[dict[str, Any]]:
    """Poll a query until ``done`` says its result is there (scrapes land when they land)."""
    deadline = time.monotonic() + timeout_seconds
    while True:
        result = query(prometheus_url, promql)
        if done(result):
            return result
        if time.monotonic() > deadline:
            with urllib.request.urlopen(f"{prometheus_url}/api/v1/targets", timeout=10) as answer:
                targets = json.load(answer)["data"]["activeTargets"]
            health = [(t["scrapeUrl"], t["health"], t["lastError"]) for t in targets]
            raise AssertionError(f"{promql} not there after {timeout_seconds} s; targets {health}")
        time.sleep(0.1)


@dataclass
class JupyterServer:
    """A jupyter server in its own process, reading the GPUs through the fake nvidia-smi."""

    url: str
    token: str
    port: int
    process: subprocess.Popen
    log: Path

    def open_notebook(self, path: str) -> int:
        """Open a notebook session with a python3 kernel, as JupyterLab does; its kernel's pid
        (the process whose connection file names the kernel)."""
        session = json.loads(
            self.request(
                "api/sessions",
                json.dumps(
                    {"path": path, "type": "notebook", "kernel": {"name": "python3"}}
                ).encode(),
                {"Content-Type": "application/json"},
            )
        )
        kernel_id = session["kernel"]["id"]
        (kernel,) = [
            child
            for child in psutil.Process(self.process.pid).children(recursive=True)
            if any(kernel_id in part for part in child.cmdline())
        ]
        return kernel.pid

    def get(self, path: str, headers: dict[str, str] | None = None) -> bytes:
        """The body of an authenticated GET of ``path`` (relative to the server's root)."""
        return self.request(path, headers=headers)

    def request(
        self, path: str, body: bytes | None = None, headers: dict[str, str] | None = None
    ) -> bytes:
        """The body of an authenticated request (a POST when there is a body); HTTPError for
        a status of 400 or more."""
        request = urllib.request.Request(
            f"{self.url}/{path}",
            data=body,
            headers={"Authorization": f"token {self.token}", **(headers or {})},
        )
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                answer = response.read()
        except urllib.error.HTTPError as error:
            refusal = error.read()
            check_answer(request.get_method(), request.full_url, error.code, refusal)
            # The body, read once, stays readable for the caller.
            raise urllib.error.HTTPError(
                error.url, error.code, error.msg, error.headers, io.BytesIO(refusal)
            ) from None
        check_answer(request.get_method(), request.full_url, 200, answer)
        return answer


@contextmanager
def running_jupyter_server(
    folder: Path,
    environment: dict[str, str],
    *extra_args: str,
    port: int | None = None,
    token: str | None = None,
) -> Iterator[JupyterServer]:
    """``jupyter server`` with this extension, on loopback, with the fake nvidia-smi replaying
    what ``environment`` says (FAKE_SMI_* variables, added to this process's); stopped on the
    way out. ``port`` and ``token`` may be
    chosen in advance, so that a Prometheus can be told them before the server is up."""
    folder.mkdir(parents=True, exist_ok=True)
    fake = install_fake_nvidia_smi(folder / "bin")
    port = port or free_port()
    token = token or secrets.token_hex(16)
    # Its own config and runtime folders: nothing from the user's ~/.jupyter leaks in.
    environment = {
        **os.environ,
        **environment,
        "JUPYTER_CONFIG_DIR": str(folder / "config"),
        "JUPYTER_RUNTIME_DIR": str(folder / "runtime"),
    }
    command = [
        sys.executable,
        "-m",
        "jupyter_server",
        "--ip=127.0.0.1",
        f"--port={port}",
        "--no-browser",
        f"--IdentityProvider.token={token}",
        "--ServerApp.allow_root=True",
        f"--ServerApp.root_dir={folder}",
        "--GpuMonitor.source=nvidia-smi",
        f"--GpuMonitor.nvidia_smi_path={fake}",
        *extra_args,
    ]
    url = f"http://127.0.0.1:{port}"
    log = folder / "jupyter.log"
    ready = f"{url}/api/status?token={token}"
    with running_process(command, log, ready, "jupyter server", environment) as process:
        yield JupyterServer(url, token, port, process, log)
