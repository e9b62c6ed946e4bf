"""The kernel probe in real ipykernel kernels of real environments: one without torch, one with
PyTorch's CPU build (built by `make kernel-envs`)."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
from pathlib import Path

import pytest
from jupyter_client import AsyncKernelManager
from jupyter_client.kernelspec import KernelSpecManager
from jupyterlab_gpu_monitor.diagnose import Facts, diagnose
from jupyterlab_gpu_monitor.gpu.smi_xml import parse_xml
from jupyterlab_gpu_monitor.kernel.probe import probe_expression, script

from .replay import REPO, SMI_FIXTURES

KERNEL_ENVS = Path(os.environ.get("GPU_MONITOR_KERNEL_ENVS", REPO / ".kernel-envs"))


def environment(name: str) -> Path:
    prefix = KERNEL_ENVS / name
    if not (prefix / ".ready").exists():
        pytest.fail(f"{prefix} is missing: `make kernel-envs` builds the probe test environments")
    return prefix


@contextlib.asynccontextmanager
async def kernel_in(name: str, tmp_path: Path):
    """A kernel whose python is the given environment's; yields its client."""
    prefix = environment(name)
    spec_dir = tmp_path / "kernels" / name
    spec_dir.mkdir(parents=True)
    argv = [str(prefix / "bin" / "python"), "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    spec = {"argv": argv, "display_name": name, "language": "python"}
    (spec_dir / "kernel.json").write_text(json.dumps(spec))
    specs = KernelSpecManager(kernel_dirs=[str(spec_dir.parent)])
    manager = AsyncKernelManager(kernel_name=name, kernel_spec_manager=specs)
    await manager.start_kernel()
    client = manager.client()
    client.start_channels()
    try:
        await client.wait_for_ready(timeout=120)
        yield client
    finally:
        client.stop_channels()
        await manager.shutdown_kernel(now=True)


async def evaluate(client, expressions: dict[str, str]) -> dict:
    reply = await client.execute(
        "", silent=True, store_history=False, user_expressions=expressions, reply=True, timeout=120
    )
    results = reply["content"]["user_expressions"]
    for name, result in results.items():
        assert result["status"] == "ok", (name, result)
    return {name: result["data"] for name, result in results.items()}


async def run(client, code: str) -> int:
    reply = await client.execute(code, reply=True, timeout=60)
    assert reply["content"]["status"] == "ok"
    return reply["content"]["execution_count"]


USER_NAMES = "sorted(name for name in globals() if not name.startswith('_'))"
TORCH_LOADED = "'torch' in __import__('sys').modules"


async def probe(client, deep: bool = False) -> dict:
    data = await evaluate(client, {"probe": probe_expression(deep=deep)})
    answer = data["probe"]
    # IPython offers the answer as JSON; its text is the same JSON, for other frontends.
    assert json.loads(answer["text/plain"]) == answer["application/json"]
    return answer["application/json"]


async def test_probe_leaves_namespace_and_execution_count_as_they_were(tmp_path):
    async with kernel_in("plain", tmp_path) as client:
        before_count = await run(client, "dataset = [1, 2, 3]")
        names_before = (await evaluate(client, {"names": USER_NAMES}))["names"]["text/plain"]
        answer = await probe(client)
        names_after = (await evaluate(client, {"names": USER_NAMES}))["names"]["text/plain"]
        assert names_after == names_before and "'dataset'" in names_after
        assert await run(client, "model = None") == before_count + 1
    assert answer["prefix"] == str(environment("plain"))
    assert answer["packages"]["torch"] is None and answer["torch"] is None


async def test_probe_reads_torch_versions_without_importing_torch(tmp_path):
    async with kernel_in("torch-cpu", tmp_path) as client:
        answer = await probe(client)
        loaded = await evaluate(client, {"torch": TORCH_LOADED})
    assert answer["packages"]["torch"] == "2.13.0+cpu"
    assert answer["torch"] is None  # not imported by the user, not a deep check
    assert loaded["torch"]["text/plain"] == "False"


async def test_deep_check_imports_torch_and_says_so(tmp_path):
    async with kernel_in("torch-cpu", tmp_path) as client:
        torch = (await probe(client, deep=True))["torch"]
        loaded = await evaluate(client, {"torch": TORCH_LOADED})
    assert torch["version"] == "2.13.0+cpu" and torch["cuda"] is None
    assert torch["imported_by_probe"] is True and torch["cuda_available"] is False
    assert loaded["torch"]["text/plain"] == "True"


async def test_probe_reads_torch_the_user_already_imported(tmp_path):
    async with kernel_in("torch-cpu", tmp_path) as client:
        await run(client, "import torch")
        torch = (await probe(client))["torch"]
    assert torch["imported_by_probe"] is False and torch["cuda_initialized"] is False


async def test_cpu_only_torch_next_to_a_gpu_capture_is_an_error_with_the_matching_fix(tmp_path):
    async with kernel_in("torch-cpu", tmp_path) as client:
        answer = await probe(client)
    capture = SMI_FIXTURES / "xml/rtx-a5000-x2-driver-590.44-v13-2procs.xml"
    snapshot = parse_xml(capture.read_text(), 0.0)
    findings = diagnose(Facts(snapshot=snapshot, probe=answer))
    (finding,) = [f for f in findings if f.severity == "error"]
    assert finding.id == "cpu-only-torch"
    assert "torch 2.13.0+cpu" in finding.evidence and "driver 590.44.01" in finding.evidence
    # The driver supports CUDA 13.1: the newest PyTorch build it runs is cu130.
    assert finding.fix.endswith("--index-url https://download.pytorch.org/whl/cu130")


def test_doctor_script_gives_the_same_answer_in_a_plain_python():
    prefix = environment("torch-cpu")
    result = subprocess.run(
        [str(prefix / "bin" / "python"), "-c", script(deep=False)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    answer = json.loads(result.stdout)
    assert answer["executable"] == str(prefix / "bin" / "python")
    assert answer["packages"]["torch"] == "2.13.0+cpu"
