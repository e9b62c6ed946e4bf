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
import time
from pathlib import Path

from jupyter_client.asynchronous import AsyncKernelClient
from local_server import Api, running_server, write_kernelspec

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


class Kernel:
    """A client on one of the server's kernels, through its connection file."""

    def __init__(self, connection_file: Path):
        self._client = AsyncKernelClient(connection_file=str(connection_file))
        self._client.load_connection_file()

    async def start(self) -> None:
        # No heartbeat: a client without the kernel's manager takes a heartbeat missed while
        # the kernel starts (ipykernel 7.4 under traitlets 5.16) for a death, and the server
        # watches its kernel anyway. Ready is the kernel's answer to kernel_info.
        self._client.start_channels(hb=False)
        await self._client.wait_for_ready(timeout=KERNEL_TIMEOUT_SECONDS)

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
    write_kernelspec(folder, KERNEL_NAME, kernel_python, "GPU check")
    record.update(kernel_python=kernel_python, contract_problems={})
    monitor = {"source": "auto", "interval": INTERVAL_SECONDS}
    try:
        async with running_server(
            folder, log, package_path, monitor, record["contract_problems"]
        ) as api:
            kernel_id = await api.open_notebook(NOTEBOOK, KERNEL_NAME)
            kernel = Kernel(folder / "runtime" / f"kernel-{kernel_id}.json")
            try:
                await kernel.start()
                await _kernel_answers(api, kernel, kernel_id, hold_mib, record, verdicts, dry)
            finally:
                kernel.stop()
    finally:
        if dry is not None:
            dry.show_process(None)
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
