#!/usr/bin/env python3
"""Records the GPU and kernel payloads of the frontend's tests (src/__tests__/fixtures) from real
captures of testdata/nvidia-smi: the CLI's ``snapshot --json --from`` of a capture, and
a real server: a ``jupyter server`` with the extension reading the tests' fake nvidia-smi, which
replays real captures, and two notebook sessions with real python3 kernels, ``train.ipynb`` and
``idle.ipynb``. The fake's ``FAKE_SMI_PIDS`` makes a capture's compute process the kernel of
``train.ipynb``, as if that kernel had taken the capture's GPU memory.

- ``a100-mig-snapshot.json``, ``tesla-v100s-x8-snapshot.json``, ``h100-mig-list-snapshot.json``:
  ``jupyter-gpu-monitor snapshot --json --from`` the capture ``FROM_CAPTURES`` names.
- ``no-gpu-snapshot.json``: ``jupyter-gpu-monitor snapshot --json`` on this machine, which must
  have no NVIDIA driver (no libnvidia-ml.so, no nvidia-smi on PATH).
- ``rtx-a5000-x2-history-with-gap.json``, ``driver-not-loaded-snapshot.json``: a server of its
  own replaying the two-A5000 capture, ``GET gpus/history`` after 38 reads, a gap (nobody asked
  for longer than ``idle_seconds``, so the sampler stopped) and 4 reads more; then ``GET gpus``
  replaying the error capture of a driver that is not loaded.
- ``rtx-a5000-x2-snapshot.json``: ``GET gpus`` of the server replaying the two-A5000 capture
  before any kernel holds memory (its llama-server is no process of this machine).
- ``rtx-a5000-x2-kernel-snapshot.json``, ``rtx-a5000-x2-kernels.json``: ``GET gpus`` and
  ``GET kernels`` with the two-A5000 capture's llama-server (pid 100477, 22430 MiB on GPU 0,
  17246 MiB on GPU 1) as that kernel.
- ``rtx-a5000-x2-kernel-spans.json``: ``POST kernels/<id>/spans`` for five spans: one shorter
  than two reads; one during which the kernel took its memory; one across a gap (nobody asked
  for twice ``idle_seconds``, so the sampler stopped) after which it took its memory again; one
  before it held any memory; one during which it held its memory and added none.
- ``tesla-t4-kernel-snapshot.json``, ``tesla-t4-kernel-spans.json``: then the T4 capture with
  its process 5762 (1005 MiB) as the kernel, and a span during which the kernel took it while
  a cell kept its CPU busy (as one preparing data does); in the A5000's spans it idled.

- ``lab-3-machines.json``, ``lab-node-3-stopped.json``: ``GET lab`` as user ana, from a real
  Prometheus (Debian's) scraping three servers of three machines: node-1 replays the two-A5000
  capture with the llama-server as the kernel of ana's ``train.ipynb``, node-2 (cleo's) the
  eight V100S under load, node-3 (dan's) the eight idle H100; then again once node-3's server
  has stopped. ``lab_open_url`` is a JupyterHub spawn URL.
- ``lab-exporters.json``: ``GET lab`` as ana from a real Prometheus that scrapes only two
  exporters' real scrapes, machines with no server of ours: a Kubernetes node's DCGM exporter
  (an A100 in MIG mode) and a workstation's nvidia_gpu_exporter (an H100 under load).
- ``lab-ledger-1h.json``: ``GET lab/ledger?since=3600`` as ana, ten seconds after her notebook
  began to idle-hold node-1's GPUs, the Prometheus evaluating ``prometheus/lab.yml``'s rules
  every second.

Every answer is checked against the REST contract before it is written. About a minute and a
half:

    make record-payloads            # or: python scripts/record_payloads.py [FOLDER]
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path

from jupyter_client.asynchronous import AsyncKernelClient

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "scripts"), str(REPO / "jupyter_server_ext")]

from local_server import Api, running_server, write_kernelspec  # noqa: E402
from tests.prometheus_lab import (  # noqa: E402
    LAB_RULES,
    exporters_lab_view,
    free_port,
    rules_every_second,
    running_jupyter_server,
    running_prometheus,
)
from tests.replay import FAKE_VARIABLES, SMI_FIXTURES, install_fake_nvidia_smi  # noqa: E402

FIXTURES = REPO / "src" / "__tests__" / "fixtures"
A5000 = "xml/rtx-a5000-x2-driver-590.44-v13-2procs.xml"
A5000_PID = 100477
T4 = "xml/tesla-t4-linux-driver-515.105-v11-2procs.xml"
T4_PID = 5762
# Fixture -> the capture the CLI reads it from.
FROM_CAPTURES = {
    "a100-mig-snapshot.json": "xml/a100-sxm4-80gb-mig-4instances-driver-535.54-v12.xml",
    "tesla-v100s-x8-snapshot.json": "xml/tesla-v100s-pcie-32gb-x8-driver-460.73.01-v11.xml",
    "gb200-x2-gpu1-lost-snapshot.json": "xml/gb200-x2-gpu1-lost-driver-580.65-v13.xml",
    "h100-mig-list-snapshot.json": "csv/h100-mig-3g-2g-1g-1g-list-gpus-L.txt",
}
# The lab: user -> their server's machine and the capture it replays.
LAB = {
    "ana": ("node-1", A5000),
    "cleo": ("node-2", "xml/tesla-v100s-pcie-32gb-x8-driver-460.73.01-v11.xml"),
    "dan": ("node-3", "xml/h100-80gb-hbm3-x8-driver-580.105.08-v13.xml"),
}
INTERVAL_SECONDS = 1.0
IDLE_SECONDS = 3.0
KERNEL_NAME = "python3"


class Watcher:
    """Asks for ``GET gpus`` once an interval while watching, as an open panel does: the
    server reads only while somebody asks."""

    def __init__(self, api: Api):
        self._api = api
        self.watching = True
        self._task = asyncio.ensure_future(self._poll())

    async def _poll(self) -> None:
        while True:
            if self.watching:
                await self._api.call("GET", "gpu-monitor/api/gpus", payload="GpuSnapshot")
            await asyncio.sleep(INTERVAL_SECONDS)

    async def until(self, condition, what: str, timeout_seconds: float = 30) -> dict:
        """The first snapshot that ``condition`` holds for."""
        deadline = time.monotonic() + timeout_seconds
        while time.monotonic() < deadline:
            snapshot = await self._api.call("GET", "gpu-monitor/api/gpus", payload="GpuSnapshot")
            if condition(snapshot):
                return snapshot
            await asyncio.sleep(INTERVAL_SECONDS / 2)
        raise RuntimeError(f"no snapshot {what} within {timeout_seconds} s")

    def stop(self) -> None:
        self._task.cancel()


def _holds(kernel_id: str, gpu_name: str):
    def condition(snapshot: dict) -> bool:
        return any(
            gpu["name"] == gpu_name and process["kernel_id"] == kernel_id
            for gpu in snapshot["gpus"]
            for process in gpu["processes"]
        )

    return condition


async def _kernel_pids(api: Api, kernel_ids: list[str]) -> dict[str, int]:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        kernels = await api.call("GET", "gpu-monitor/api/kernels", payload="KernelList")
        pids = {k["kernel_id"]: k["pid"] for k in kernels if k["pid"] is not None}
        if all(kernel_id in pids for kernel_id in kernel_ids):
            return pids
        await asyncio.sleep(0.5)
    raise RuntimeError("the kernels' pids were not known within 60 s")


def _has_gpu(gpu_name: str):
    return lambda snapshot: any(gpu["name"] == gpu_name for gpu in snapshot["gpus"])


def _span(start: float, end: float) -> dict[str, float]:
    return {"start": start, "end": end}


async def _tell(control: Path, settings: dict) -> None:
    """What the fake nvidia-smi answers from its next call on (its control file)."""
    await asyncio.to_thread(control.write_text, json.dumps(settings))


async def _waited(seconds: float) -> dict[str, float]:
    """A span of ``seconds`` from now, once it is over."""
    return await _ended(time.time(), seconds)


async def _ended(start: float, seconds: float) -> dict[str, float]:
    """The span of ``seconds`` from ``start``, once it is over: a span of a set length, so
    that the tests' figures do not depend on how long waiting for a read took."""
    await asyncio.sleep(max(0.0, start + seconds - time.time()))
    return _span(start, start + seconds)


async def _taking(watcher: Watcher, control: Path, settings: dict, holds) -> dict[str, float]:
    """A span of 6 s during which the kernel takes the memory of the capture's process: the
    fake reports the kernel's pid in its place from a read in the middle of the span on."""
    start = time.time()
    await asyncio.sleep(1.5 * INTERVAL_SECONDS)
    await _tell(control, settings)
    await watcher.until(holds, "with the kernel's process", timeout_seconds=4)
    return await _ended(start, 6 * INTERVAL_SECONDS)


@contextlib.asynccontextmanager
async def _busy_cell(connection_file: Path, seconds: float) -> AsyncIterator[None]:
    """While inside: the kernel runs a cell that keeps one core busy for ``seconds``; on
    leaving, the cell's end is awaited."""
    client = AsyncKernelClient(connection_file=str(connection_file))
    client.load_connection_file()
    client.start_channels()
    try:
        await client.wait_for_ready(timeout=30)
        busy = f"import time\nuntil = time.time() + {seconds}\nwhile time.time() < until: pass"
        request = client.execute(busy)
        yield
        reply = await client.get_shell_msg(timeout=seconds + 30)
        assert reply["parent_header"]["msg_id"] == request, reply
        assert reply["content"]["status"] == "ok", reply["content"]
    finally:
        client.stop_channels()


def snapshots_from_captures() -> dict[str, object]:
    """What the CLI prints for each capture of ``FROM_CAPTURES``, and for this machine without
    an NVIDIA driver, by fixture file name."""
    cli = str(Path(sys.executable).with_name("jupyter-gpu-monitor"))
    payloads: dict[str, object] = {
        name: json.loads(
            subprocess.run(
                # Exit status 1 for a capture with a lost GPU: its JSON is printed all the same.
                [cli, "snapshot", "--json", "--from", str(SMI_FIXTURES / capture)],
                capture_output=True,
                text=True,
            ).stdout
        )
        for name, capture in FROM_CAPTURES.items()
    }
    # Exit status 1: the GPUs could not be read, which is the point here.
    here = subprocess.run(
        [cli, "snapshot", "--json"], capture_output=True, text=True, env={"PATH": "/nonexistent"}
    )
    no_gpu = json.loads(here.stdout)
    if (no_gpu["error"] or {}).get("kind") != "not_installed":
        raise RuntimeError(f"this machine has an NVIDIA driver: {here.stdout[:300]}")
    payloads["no-gpu-snapshot.json"] = no_gpu
    return payloads


async def _reads(api: Api, count: int) -> None:
    """Wait until the server has read the GPUs ``count`` times since it started."""
    deadline = time.monotonic() + 2 * count * INTERVAL_SECONDS + 30
    while time.monotonic() < deadline:
        status = await api.call("GET", "gpu-monitor/api/status", payload="ServerStatus")
        if status["reads"] >= count:
            return
        await asyncio.sleep(INTERVAL_SECONDS / 4)
    raise RuntimeError(f"the server did not read the GPUs {count} times")


async def record_history_and_error(api: Api, control: Path) -> dict[str, object]:
    """The history of a server whose sampler stopped once, and its answer when the driver
    is not loaded."""
    payloads: dict[str, object] = {}
    watcher = Watcher(api)
    try:
        await _reads(api, 38)
        watcher.watching = False
        # Nobody asks: the sampler stops once idle_seconds have passed, and there is a gap.
        await asyncio.sleep(IDLE_SECONDS + 7 * INTERVAL_SECONDS)
        watcher.watching = True
        await _reads(api, 42)
        payloads["rtx-a5000-x2-history-with-gap.json"] = await api.call(
            "GET", "gpu-monitor/api/gpus/history", payload="GpuHistory"
        )
        error = str(SMI_FIXTURES / "errors/driver-not-loaded-couldnt-communicate.txt")
        await _tell(control, {"FAKE_SMI_ERROR": error, "FAKE_SMI_EXIT": "9"})
        payloads["driver-not-loaded-snapshot.json"] = await watcher.until(
            lambda snapshot: snapshot["error"] is not None, "of the driver not loaded"
        )
    finally:
        watcher.stop()
    return payloads


async def record(folder: Path) -> dict[str, object]:
    """The payloads the servers answer, by fixture file name."""
    control = folder / "fake-nvidia-smi.json"
    for name in FAKE_VARIABLES:
        os.environ.pop(name, None)
    os.environ["FAKE_SMI_XML"] = str(SMI_FIXTURES / A5000)
    os.environ["FAKE_SMI_CONTROL"] = str(control)
    monitor = {
        "source": "nvidia-smi",
        "nvidia_smi_path": str(install_fake_nvidia_smi(folder / "bin")),
        "interval": INTERVAL_SECONDS,
        "idle_seconds": IDLE_SECONDS,
    }
    write_kernelspec(folder, KERNEL_NAME, sys.executable, "Python 3")
    problems: dict[str, list[str]] = {}
    log = folder / "jupyter-server.log"
    package = str(REPO / "jupyter_server_ext")
    async with running_server(folder / "history", log, package, monitor, problems) as api:
        payloads = await record_history_and_error(api, control)
    await _tell(control, {})
    async with running_server(folder, log, package, monitor, problems) as api:
        train = await api.open_notebook("train.ipynb", KERNEL_NAME)
        idle = await api.open_notebook("idle.ipynb", KERNEL_NAME)
        pid = (await _kernel_pids(api, [train, idle]))[train]
        watcher = Watcher(api)
        try:
            await asyncio.sleep(2 * INTERVAL_SECONDS)
            payloads["rtx-a5000-x2-snapshot.json"] = await api.call(
                "GET", "gpu-monitor/api/gpus", payload="GpuSnapshot"
            )
            before_any = await _waited(3 * INTERVAL_SECONDS)
            a5000 = {"FAKE_SMI_PIDS": f"{A5000_PID}:{pid}"}
            taking = await _taking(watcher, control, a5000, _holds(train, "NVIDIA RTX A5000"))
            holding = await _waited(3 * INTERVAL_SECONDS)
            too_short = _span(time.time() - 0.8 * INTERVAL_SECONDS, time.time())

            # The kernel lets its memory go; nobody watches, then it takes it again.
            await _tell(control, {})
            await watcher.until(lambda s: not _holds(train, "NVIDIA RTX A5000")(s), "without it")
            gap_start = time.time()
            watcher.watching = False
            await asyncio.sleep(2 * IDLE_SECONDS)
            watcher.watching = True
            await asyncio.sleep(INTERVAL_SECONDS)
            await _tell(control, a5000)
            await watcher.until(
                _holds(train, "NVIDIA RTX A5000"), "with the kernel's process", timeout_seconds=4
            )
            across_gap = await _ended(gap_start, 2 * IDLE_SECONDS + 7 * INTERVAL_SECONDS)
            payloads["rtx-a5000-x2-kernel-snapshot.json"] = await api.call(
                "GET", "gpu-monitor/api/gpus", payload="GpuSnapshot"
            )
            payloads["rtx-a5000-x2-kernels.json"] = await api.call(
                "GET", "gpu-monitor/api/kernels", payload="KernelList"
            )
            payloads["rtx-a5000-x2-kernel-spans.json"] = await api.call(
                "POST",
                f"gpu-monitor/api/kernels/{train}/spans",
                {"spans": [too_short, taking, across_gap, before_any, holding]},
                payload="SpansAnswer",
            )

            t4_xml = str(SMI_FIXTURES / T4)
            await _tell(control, {"FAKE_SMI_XML": t4_xml})
            await watcher.until(_has_gpu("Tesla T4"), "of the T4")
            t4 = {"FAKE_SMI_XML": t4_xml, "FAKE_SMI_PIDS": f"{T4_PID}:{pid}"}
            async with _busy_cell(folder / "runtime" / f"kernel-{train}.json", 8.0):
                on_t4 = await _taking(watcher, control, t4, _holds(train, "Tesla T4"))
            payloads["tesla-t4-kernel-snapshot.json"] = await api.call(
                "GET", "gpu-monitor/api/gpus", payload="GpuSnapshot"
            )
            payloads["tesla-t4-kernel-spans.json"] = await api.call(
                "POST",
                f"gpu-monitor/api/kernels/{train}/spans",
                {"spans": [on_t4]},
                payload="SpansAnswer",
            )
        finally:
            watcher.stop()
    wrong = {route: found for route, found in problems.items() if found}
    if wrong:
        raise RuntimeError(f"answers that are not what the contract declares: {wrong}")
    return payloads


def record_lab(folder: Path) -> dict[str, object]:
    """``GET lab`` of ana's server, with the lab's three machines reporting, then with node-3
    stopped; and of a lab of two exporters."""
    ports = {user: free_port() for user in LAB}
    job = {
        "job_name": "jupyter",
        "metrics_path": "/gpu-monitor/metrics",
        "static_configs": [{"targets": [f"127.0.0.1:{port}" for port in ports.values()]}],
    }
    folder.mkdir(parents=True, exist_ok=True)
    control = folder / "ana-fake-smi.json"
    control.write_text("{}")
    with contextlib.ExitStack() as running:
        rules = [rules_every_second(LAB_RULES, folder)]
        prometheus = running.enter_context(
            running_prometheus(folder / "prometheus", [job], rule_files=rules)
        )
        servers = {}
        for user, (host, capture) in LAB.items():
            replay = {"FAKE_SMI_XML": str(SMI_FIXTURES / capture)}
            if user == "ana":
                replay["FAKE_SMI_CONTROL"] = str(control)
            servers[user] = running.enter_context(
                running_jupyter_server(
                    folder / user,
                    replay,
                    f"--GpuMonitor.metrics_host={host}",
                    f"--GpuMonitor.metrics_user={user}",
                    f"--GpuMonitor.lab_prometheus_url={prometheus}",
                    "--GpuMonitor.lab_open_url=https://hub.lab/hub/spawn/{user}/{node}",
                    # Scraped without a token, as a lab's network may allow.
                    "--GpuMonitor.metrics_unauthenticated_networks=127.0.0.0/8",
                    port=ports[user],
                )
            )
        ana = servers["ana"]
        pid = ana.open_notebook("train.ipynb")
        control.write_text(json.dumps({"FAKE_SMI_PIDS": f"{A5000_PID}:{pid}"}))

        def lab_when(done) -> dict:
            deadline = time.monotonic() + 60
            while True:
                view = json.loads(ana.get("gpu-monitor/api/lab"))
                if done(view):
                    return view
                if time.monotonic() > deadline:
                    raise RuntimeError(f"the lab never came: {json.dumps(view)[:2000]}")
                time.sleep(0.5)

        def held(view: dict) -> bool:
            return any(gpu["holders"] for node in view["nodes"] for gpu in node["gpus"])

        payloads = {"lab-3-machines.json": lab_when(lambda v: v["reporting"] == 3 and held(v))}
        # Ten seconds of ana's notebook idle-holding both GPUs, in the ledger of the last hour.
        time.sleep(10)
        payloads["lab-ledger-1h.json"] = json.loads(
            ana.get("gpu-monitor/api/lab/ledger?since=3600")
        )
        servers["dan"].process.terminate()
        payloads["lab-node-3-stopped.json"] = lab_when(lambda v: v["reporting"] == 2)
    payloads["lab-exporters.json"] = exporters_lab_view(folder / "exporters")
    return payloads


def main(arguments: list[str]) -> int:
    """Record into the fixtures folder (or the folder given), one file per payload."""
    target = Path(arguments[0]) if arguments else FIXTURES
    payloads = snapshots_from_captures()
    with tempfile.TemporaryDirectory(prefix="record-payloads-") as folder:
        payloads.update(asyncio.run(record(Path(folder))))
        payloads.update(record_lab(Path(folder) / "lab"))
    target.mkdir(parents=True, exist_ok=True)
    for name, payload in payloads.items():
        (target / name).write_text(json.dumps(payload, indent=2) + "\n")
        print(f"wrote {target / name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
