"""A real ``jupyter server`` with the extension on loopback (token auth), a real ipykernel in a
notebook session that holds GPU memory, and what our routes say about that kernel.

The kernel is joined to its notebook in ``GET gpus``; ``GET kernels`` and ``POST
kernels/<id>/spans`` report the memory it holds; the probe, evaluated in the kernel as the
frontend evaluates it, says what the kernel's torch says of itself; ``POST diagnose`` finds
only what this machine deserves. Every answer is checked against the REST contract.
"""

from __future__ import annotations

import ast
import asyncio
import json
import os
import secrets
import socket
import sys
import time
from pathlib import Path

from jupyter_client.asynchronous import AsyncKernelClient
from jupyterlab_gpu_monitor.contract import validator
from tornado.httpclient import AsyncHTTPClient, HTTPClientError

from .checks import Verdicts
from .dry import DryMachine

NOTEBOOK = "gpu-check.ipynb"
KERNEL_NAME = "gpu-check"
INTERVAL_SECONDS = 0.5
# How far two reads of a held buffer's memory may be apart: what the allocator may add between
# reads (a context's workspace), far below any held amount.
MEMORY_TOLERANCE_MIB = 16
# The longest one cell may take: a cold torch import and CUDA's start take tens of seconds; a
# kernel silent longer is hung, and waiting on would spend the run's time limit.
KERNEL_TIMEOUT_SECONDS = 120
HOLDER = Path(__file__).with_name("holder.py")

# Runs in the kernel: the holder's own code, torch first as a notebook would, its facts kept.
HOLD_CODE = """
import runpy as _gpu_check_runpy
_gpu_check_holder = _gpu_check_runpy.run_path({holder!r})
try:
    _gpu_check_holding = _gpu_check_holder["hold"]({mebibytes}, ("torch", "driver"))
    _gpu_check_facts = _gpu_check_holding.facts()
except _gpu_check_holder["NoCuda"] as _gpu_check_error:
    _gpu_check_facts = {{"pid": __import__("os").getpid(), "held_mib": 0, "way": None,
                        "error": str(_gpu_check_error)}}
"""
HOLD_FACTS = "__import__('json').dumps(_gpu_check_facts)"
# What the kernel's torch says of itself, asked directly (None when torch does not import).
TORCH_FACTS = (
    "__import__('json').dumps((lambda torch: {'version': torch.__version__, "
    "'cuda': torch.version.cuda, 'cuda_available': torch.cuda.is_available()})"
    "(__import__('torch')))"
)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Api:
    """Our routes on the server, with its token; every answer checked against the contract."""

    def __init__(self, base: str, token: str, problems: dict[str, list[str]]):
        self._http = AsyncHTTPClient()
        self._base = base
        self._headers = {"Authorization": f"token {token}"}
        self.problems = problems

    async def call(self, method: str, path: str, body=None, payload: str | None = None):
        """The JSON answer of ``path``; an answer of ours checked against ``payload``."""
        response = await self._http.fetch(
            f"{self._base}/{path}",
            method=method,
            headers=self._headers,
            body=json.dumps(body) if body is not None else None,
            raise_error=False,
        )
        if response.code >= 400:
            raise RuntimeError(f"{method} {path}: {response.code} {response.body[:300]!r}")
        answer = json.loads(response.body) if response.body else None
        if payload is not None:
            found = [error.message[:200] for error in validator(payload).iter_errors(answer)]
            self.problems[f"{method} {path.split('?')[0]}"] = found
        return answer


class Kernel:
    """A client on one of the server's kernels, through its connection file."""

    def __init__(self, connection_file: Path):
        self._client = AsyncKernelClient(connection_file=str(connection_file))
        self._client.load_connection_file()

    async def start(self) -> None:
        self._client.start_channels()
        await self._client.wait_for_ready(timeout=120)

    async def run(self, code: str) -> None:
        """Run ``code`` as a cell; RuntimeError with the kernel's traceback when it fails."""
        reply = await self._client.execute(code, reply=True, timeout=KERNEL_TIMEOUT_SECONDS)
        if reply["content"]["status"] != "ok":
            raise RuntimeError("\n".join(reply["content"].get("traceback", []))[-2000:])

    async def evaluate(self, expression: str):
        """``expression``'s value through ``user_expressions``, as the frontend's probe reads
        it: its JSON when it offers one, else its repr read back; None when it raised."""
        reply = await self._client.execute(
            "", silent=True, store_history=False, user_expressions={"x": expression},
            reply=True, timeout=KERNEL_TIMEOUT_SECONDS,
        )  # fmt: skip
        result = reply["content"]["user_expressions"]["x"]
        if result["status"] != "ok":
            return None
        data = result["data"]
        if "application/json" in data:
            return data["application/json"]
        return json.loads(ast.literal_eval(data["text/plain"]))

    def stop(self) -> None:
        self._client.stop_channels()


def _server_environment(folder: Path, package_path: str) -> dict[str, str]:
    """Jupyter's folders of its own (no user's config or kernels) and the notebooks' root,
    and our package's tree first on the path of the server and of the kernels it starts."""
    config, data, runtime, root = (folder / name for name in ("config", "data", "runtime", "root"))
    for path in (config, data, runtime, root):
        path.mkdir(parents=True, exist_ok=True)
    settings = {
        "ServerApp": {"jpserver_extensions": {"jupyterlab_gpu_monitor": True}},
        "GpuMonitor": {"source": "auto", "interval": INTERVAL_SECONDS},
    }
    (config / "jupyter_server_config.json").write_text(json.dumps(settings))
    path = os.pathsep.join(filter(None, [package_path, os.environ.get("PYTHONPATH")]))
    return {
        **os.environ,
        "JUPYTER_CONFIG_DIR": str(config),
        "JUPYTER_DATA_DIR": str(data),
        "JUPYTER_RUNTIME_DIR": str(runtime),
        "JUPYTER_PLATFORM_DIRS": "1",
        "PYTHONPATH": path,
    }


def _write_kernelspec(folder: Path, kernel_python: str) -> None:
    spec = folder / "data" / "kernels" / KERNEL_NAME
    spec.mkdir(parents=True, exist_ok=True)
    argv = [kernel_python, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    kernel = {"argv": argv, "display_name": "GPU check", "language": "python"}
    (spec / "kernel.json").write_text(json.dumps(kernel))


async def _wait_until_up(api: Api, server: asyncio.subprocess.Process) -> None:
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if server.returncode is not None:
            raise RuntimeError(f"jupyter server exited with {server.returncode}")
        try:
            await api.call("GET", "api/status")
            return
        except (OSError, RuntimeError, HTTPClientError):
            await asyncio.sleep(0.3)  # not listening yet, or not answering yet
    raise RuntimeError("jupyter server did not answer within 90 s")


async def check_server(
    folder: Path,
    log: Path,
    package_path: str,
    kernel_python: str,
    hold_mib: int,
    verdicts: Verdicts,
    dry: DryMachine | None,
    record: dict,
) -> None:
    """Start the server and the kernel, ask our routes about the kernel, stop both; what was
    asked and answered goes into ``record`` (server.json) as it comes, so that a step that
    failed leaves what came before it."""
    environment = _server_environment(folder, package_path)
    _write_kernelspec(folder, kernel_python)
    port, token = _free_port(), secrets.token_hex(16)
    record.update(kernel_python=kernel_python, contract_problems={})
    with log.open("wb") as output:
        server = await asyncio.create_subprocess_exec(
            *[sys.executable, "-m", "jupyter_server", f"--port={port}", "--ip=127.0.0.1",
              "--ServerApp.port_retries=0", "--no-browser", f"--IdentityProvider.token={token}",
              "--ServerApp.allow_root=True", f"--ServerApp.root_dir={folder / 'root'}"],
            stdout=output, stderr=asyncio.subprocess.STDOUT, env=environment,
        )  # fmt: skip
    api = Api(f"http://127.0.0.1:{port}", token, record["contract_problems"])
    kernel: Kernel | None = None
    try:
        await _wait_until_up(api, server)
        session = await api.call(
            "POST",
            "api/sessions",
            {
                "path": NOTEBOOK,
                "name": NOTEBOOK,
                "type": "notebook",
                "kernel": {"name": KERNEL_NAME},
            },
        )
        kernel_id = session["kernel"]["id"]
        kernel = Kernel(folder / "runtime" / f"kernel-{kernel_id}.json")
        await kernel.start()
        await _kernel_answers(api, kernel, kernel_id, hold_mib, record, verdicts, dry)
    finally:
        if kernel is not None:
            kernel.stop()
        if dry is not None:
            dry.show_process(None)
        server.terminate()  # jupyter_server shuts its kernels down on SIGTERM
        try:
            await asyncio.wait_for(server.wait(), 30)
        except asyncio.TimeoutError:
            server.kill()
            await server.wait()
    problems = {route: found for route, found in record["contract_problems"].items() if found}
    verdicts.expect(
        "server: every answer is what the REST contract declares",
        not problems,
        json.dumps(problems)[:600] if problems else f"{len(record['contract_problems'])} routes",
    )


async def _kernel_answers(
    api: Api,
    kernel: Kernel,
    kernel_id: str,
    hold_mib: int,
    record: dict,
    verdicts: Verdicts,
    dry: DryMachine | None,
) -> None:
    await kernel.run(HOLD_CODE.format(holder=str(HOLDER), mebibytes=hold_mib))
    facts = record["kernel"] = await kernel.evaluate(HOLD_FACTS)
    pid = facts["pid"]
    if dry is None:
        verdicts.expect(
            f"kernel: holds {hold_mib} MiB on the GPU", facts["held_mib"] == hold_mib, str(facts)
        )
    else:
        verdicts.skip("kernel: holds GPU memory", f"no CUDA here: {facts.get('error')}")
        dry.show_process(pid)

    joined, snapshot = await _joined_processes(api, kernel_id)
    record["joined_processes"] = joined
    verdicts.expect(
        f"GET gpus: the kernel's process (pid {pid}) is joined to its kernel and notebook",
        any(p["pid"] == pid for p in joined) and all(p["session_path"] == NOTEBOOK for p in joined),
        json.dumps(joined)[:400],
    )
    memory = sum(p["used_memory_mib"] or 0 for p in joined)
    if dry is None:
        verdicts.expect(
            f"GET gpus: the kernel's processes hold at least the {hold_mib} MiB it allocated",
            memory >= hold_mib,
            f"{memory} MiB",
        )
    status = record["status"] = await api.call(
        "GET", "gpu-monitor/api/status", payload="ServerStatus"
    )
    expected_source = "nvidia-smi" if dry is not None else "nvml"
    verdicts.expect(
        f"GET status: the server reads through {expected_source}",
        status["source"] == expected_source,
        f"source {status['source']}, error {status['error']}",
    )

    kernels = await api.call("GET", "gpu-monitor/api/kernels", payload="KernelList")
    (entry,) = [k for k in kernels if k["kernel_id"] == kernel_id]
    record["kernels_entry"] = entry
    verdicts.expect("GET kernels: the kernel's pid is the kernel's own", entry["pid"] == pid)
    verdicts.expect(
        "GET kernels: the kernel holds what its processes hold",
        abs(entry["memory_used_mib"] - memory) <= MEMORY_TOLERANCE_MIB and memory > 0,
        f"kernels {entry['memory_used_mib']} MiB, processes {memory} MiB",
    )

    start = time.time()
    await asyncio.sleep(3 * INTERVAL_SECONDS + 0.2)
    spans = await api.call(
        "POST",
        f"gpu-monitor/api/kernels/{kernel_id}/spans",
        {"spans": [{"start": start, "end": time.time()}]},
        payload="SpansAnswer",
    )
    (span,) = record["spans"] = spans["spans"]
    verdicts.expect(
        "POST kernels/<id>/spans: the span's peak is the kernel's memory",
        span["samples"] >= 2
        and span["peak_memory_mib"] is not None
        and abs(span["peak_memory_mib"] - entry["memory_used_mib"]) <= MEMORY_TOLERANCE_MIB,
        f"peak {span['peak_memory_mib']} MiB over {span['samples']} reads",
    )

    await _probe_and_diagnose(api, kernel, kernel_id, snapshot, record, verdicts, dry)


async def _joined_processes(api: Api, kernel_id: str) -> tuple[list[dict], dict]:
    """The GPU processes joined to the kernel, once a read has seen them (at most 15 s)."""
    deadline = time.monotonic() + 15
    while True:
        snapshot = await api.call("GET", "gpu-monitor/api/gpus", payload="GpuSnapshot")
        joined = [
            process
            for gpu in snapshot["gpus"]
            for process in gpu["processes"]
            if process["kernel_id"] == kernel_id
        ]
        if joined or time.monotonic() > deadline:
            return joined, snapshot
        await asyncio.sleep(INTERVAL_SECONDS)


async def _probe_and_diagnose(
    api: Api,
    kernel: Kernel,
    kernel_id: str,
    snapshot: dict,
    record: dict,
    verdicts: Verdicts,
    dry: DryMachine | None,
) -> None:
    served = await api.call("GET", "gpu-monitor/api/probe?deep=1", payload="ProbeExpression")
    probe = await kernel.evaluate(served["expression"])
    torch = record["kernel_torch"] = await kernel.evaluate(TORCH_FACTS)
    probed = record["probe_torch"] = probe.get("torch") if probe else None
    if torch is None:
        verdicts.skip("probe: torch's CUDA build", "the kernel's python has no torch")
    else:
        verdicts.expect(
            "probe: reports torch's CUDA build and cuda.is_available() as torch does",
            probed is not None
            and (probed.get("cuda"), probed.get("cuda_available"))
            == (torch["cuda"], torch["cuda_available"]),
            f"probe {probed}, torch {torch}",
        )
        if dry is None:
            verdicts.expect(
                "probe: torch sees CUDA", torch["cuda_available"] is True, json.dumps(torch)
            )

    report = record["diagnosis"] = await api.call(
        "POST",
        "gpu-monitor/api/diagnose",
        {"kernel_id": kernel_id, "probe": probe},
        payload="Diagnosis",
    )
    cuda_label = None if torch is None else (torch["cuda"] or "cpu")
    verdicts.expect(
        "POST diagnose: names the kernel's torch CUDA build",
        report["torch_cuda"] == cuda_label,
        f"{report['torch_cuda']!r}, torch says {cuda_label!r}",
    )
    # A CPU build of torch beside GPUs deserves its finding (the dry run's), and the dry run's
    # capture its own; nothing else does: the kernel runs where its kernelspec says, and keeps
    # its GPU busy.
    cpu_torch = torch is not None and torch["cuda"] is None and bool(snapshot["gpus"])
    expected = set(dry.findings) if dry is not None else set()
    if cpu_torch:
        expected.add("cpu-only-torch")
    found = {finding["id"] for finding in report["findings"]}
    record["expected_findings"] = sorted(expected)
    verdicts.expect(
        "POST diagnose: no finding fires that should not, none is missing",
        found == expected,
        f"found {sorted(found)}, expected {sorted(expected)}",
    )
