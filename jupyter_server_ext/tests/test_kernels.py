"""Who holds the GPU: real ipykernel kernels started through jupyter_server, reported as GPU
processes by the fake nvidia-smi (a real capture with only its pids replaced)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
from jupyterlab_gpu_monitor.gpu.model import Gpu, GpuProcess, Snapshot
from jupyterlab_gpu_monitor.kernel.listing import RunningKernel
from jupyterlab_gpu_monitor.kernel.processes import (
    JoinedRows,
    ProcessTree,
    in_initial_pid_namespace,
    join,
)
from jupyterlab_gpu_monitor.machine import process_reads

from .replay import server_config

# The H100 capture's compute processes: memhog 2566 MiB, memhog 1542 MiB, gpu_burn 15690 MiB.
APPS = "csv/h100-80gb-hbm3-590.48.01-compute-apps-load.csv"
GPUS = "csv/h100-80gb-hbm3-590.48.01-query-gpu-load.csv"
XML = "xml/rtx-a5000-x2-driver-590.44-v13-2procs.xml"


async def start_session(jp_fetch, path: str, kind: str = "notebook") -> dict:
    body = {"path": path, "name": Path(path).name, "type": kind, "kernel": {"name": "python3"}}
    response = await jp_fetch("api", "sessions", method="POST", body=json.dumps(body))
    return json.loads(response.body)


async def run_in_kernel(serverapp, kernel_id: str, code: str) -> None:
    client = serverapp.kernel_manager.get_kernel(kernel_id).client()
    client.start_channels()
    try:
        await client.wait_for_ready(timeout=60)
        reply = await client.execute_interactive(code, timeout=60)
        assert reply["content"]["status"] == "ok", reply["content"]
    finally:
        client.stop_channels()


async def child_of(pid: int) -> psutil.Process:
    """The one child a kernel started (it may take a moment to appear)."""
    for _ in range(100):
        children = psutil.Process(pid).children()
        if children:
            (child,) = children
            return child
        await asyncio.sleep(0.1)
    raise AssertionError(f"kernel {pid} started no process")


async def kernel_with_worker(serverapp, kernel_id: str) -> tuple[int, psutil.Process]:
    """The kernel's pid, and a process it started (as `!python train.py` would)."""
    pid = kernel_pid(serverapp, kernel_id)
    code = "import subprocess; worker = subprocess.Popen(['sleep', '300'])"
    await run_in_kernel(serverapp, kernel_id, code)
    return pid, await child_of(pid)


def kernel_pid(serverapp, kernel_id: str) -> int:
    return serverapp.kernel_manager.get_kernel(kernel_id).provisioner.pid


async def kernel_holding_the_capture(fake_smi, jp_fetch, serverapp, path: str) -> str:
    """A notebook's kernel, which the fake nvidia-smi reports as the capture's 2566 MiB process."""
    session = await start_session(jp_fetch, path)
    kernel_id = session["kernel"]["id"]
    fake_smi.replay(XML, GPUS, APPS)
    fake_smi.substitute_pids({11327: kernel_pid(serverapp, kernel_id)})
    return kernel_id


async def get_json(jp_fetch, *path):
    return json.loads((await jp_fetch("gpu-monitor", "api", *path)).body)


async def snapshot_with_kernels(jp_fetch) -> dict:
    # The join runs at each read: wait for a read after the pids were set.
    await asyncio.sleep(1.2)
    return await get_json(jp_fetch, "gpus")


async def test_kernel_and_its_child_process_are_joined_to_the_notebook(
    fake_smi, jp_fetch, jp_serverapp, other_users_process
):
    notebook = await start_session(jp_fetch, "experiments/train.ipynb")
    kernel_id = notebook["kernel"]["id"]
    pid, child = await kernel_with_worker(jp_serverapp, kernel_id)
    fake_smi.replay(XML, GPUS, APPS)
    fake_smi.substitute_pids({11327: pid, 11328: child.pid, 11345: other_users_process})

    await snapshot_with_kernels(jp_fetch)
    # A second read: a process's CPU is what it used between two.
    (gpu,) = (await snapshot_with_kernels(jp_fetch))["gpus"]
    by_pid = {process["pid"]: process for process in gpu["processes"]}

    kernel = by_pid[pid]
    assert (kernel["kernel_id"], kernel["session_path"]) == (kernel_id, "experiments/train.ipynb")
    assert kernel["own"] is True and kernel["visible"] is True
    assert kernel["user"] == psutil.Process(pid).username()
    assert abs(kernel["started"] - psutil.Process(pid).create_time()) < 1
    assert kernel["name"] == "/root/tools/memhog"  # our own process keeps its name

    worker = by_pid[child.pid]  # `!python train.py`-like child of the kernel
    assert worker["kernel_id"] == kernel_id
    assert worker["session_path"] == "experiments/train.ipynb"
    # Our own processes come with their command line and what they use of the machine.
    assert worker["command"] == "sleep 300"
    assert kernel["command"].startswith(sys.executable) and "ipykernel" in kernel["command"]
    assert kernel["host_memory_mib"] > 10  # an ipykernel holds tens of MiB
    assert kernel["cpu_percent"] is not None and worker["cpu_percent"] < 5

    other = by_pid[other_users_process]
    assert other["command"] is None and other["cpu_percent"] is None
    assert other["own"] is False and other["kernel_id"] is None
    assert other["user"] == psutil.Process(other_users_process).username()
    assert other["name"] is None  # another user's command line is not sent
    assert other["used_memory_mib"] == 15690


async def test_a_cells_figures_say_whether_the_kernels_cpu_was_busy_or_idle(
    fake_smi, jp_fetch, jp_serverapp
):
    kernel_id = await kernel_holding_the_capture(fake_smi, jp_fetch, jp_serverapp, "train.ipynb")
    await snapshot_with_kernels(jp_fetch)  # the Sampler reads while someone watches
    # A cell that prepares data on the CPU (2 s of it, however long a loaded machine takes to
    # give them), then one that waits 3 s on nothing.
    started = time.time()
    busy = "import time\nuntil = time.process_time() + 2\nwhile time.process_time() < until: pass"
    await run_in_kernel(jp_serverapp, kernel_id, busy)
    busy_ended = time.time()
    await run_in_kernel(jp_serverapp, kernel_id, "import time; time.sleep(3)")
    idle_ended = time.time()
    await asyncio.sleep(1.2)

    # Each read's CPU covers the interval before it: the spans leave out their first.
    spans = [
        {"start": started + 0.6, "end": busy_ended},
        {"start": busy_ended + 0.6, "end": idle_ended},
    ]
    answer = await jp_fetch(
        "gpu-monitor", "api", "kernels", kernel_id, "spans",
        method="POST", body=json.dumps({"spans": spans}),
    )  # fmt: skip
    during_busy, during_idle = json.loads(answer.body)["spans"]
    (gpu,) = (await get_json(jp_fetch, "gpus"))["gpus"]
    (on_gpu,) = [p for p in gpu["processes"] if p["kernel_id"] == kernel_id]
    assert on_gpu["cpu_percent"] < 20  # the kernel's process, idle again
    # At least half the 2 s of CPU over the span (its first read is left out), whatever the load.
    assert during_busy["mean_cpu_percent"] > 100 * 1.0 / (busy_ended - started)
    assert during_idle["mean_cpu_percent"] < 20
    assert during_busy["peak_memory_mib"] == 2566  # the capture's process, now the kernel


async def test_kernels_endpoint_sums_each_kernels_processes_most_memory_first(
    fake_smi, jp_fetch, jp_serverapp
):
    idle = await start_session(jp_fetch, "idle.ipynb")
    busy = await start_session(jp_fetch, "scratch/console-1", kind="console")
    busy_id = busy["kernel"]["id"]
    busy_pid, child = await kernel_with_worker(jp_serverapp, busy_id)
    fake_smi.replay(XML, GPUS, APPS)
    fake_smi.substitute_pids({11327: busy_pid, 11328: child.pid})
    await snapshot_with_kernels(jp_fetch)

    kernels = await get_json(jp_fetch, "kernels")
    assert [k["kernel_id"] for k in kernels] == [busy_id, idle["kernel"]["id"]]
    first = kernels[0]
    assert first["session_path"] == "scratch/console-1" and first["session_type"] == "console"
    assert first["memory_used_mib"] == 2566 + 1542  # the kernel and its child
    assert first["pid"] == busy_pid and first["remote"] is False
    (gpu,) = first["gpus"]
    assert (gpu["index"], gpu["name"], gpu["utilization_gpu"]) == (0, "NVIDIA H100 80GB HBM3", 100)
    assert kernels[1]["memory_used_mib"] == 0 and kernels[1]["gpus"] == []


async def test_a_renamed_notebook_shows_at_once_though_sessions_are_kept(jp_fetch):
    # The sessions are listed again only when the kernels or the session table change: a
    # rename (JupyterLab's PATCH of the session) changes the table, not the kernels.
    notebook = await start_session(jp_fetch, "draft.ipynb")
    kernel_id = notebook["kernel"]["id"]
    paths = [(k["kernel_id"], k["session_path"]) for k in await get_json(jp_fetch, "kernels")]
    assert paths == [(kernel_id, "draft.ipynb")]

    body = json.dumps({"path": "results/final.ipynb", "name": "final.ipynb"})
    await jp_fetch("api", "sessions", notebook["id"], method="PATCH", body=body)
    (renamed,) = await get_json(jp_fetch, "kernels")
    assert renamed["session_path"] == "results/final.ipynb"


async def test_pid_that_does_not_exist_here_is_not_visible_and_not_guessed(fake_smi, jp_fetch):
    missing = psutil.Process().pid + 4 * 1024 * 1024  # above the kernel's pid_max limit
    fake_smi.replay(XML, GPUS, APPS)
    fake_smi.substitute_pids({11327: missing})
    (gpu,) = (await snapshot_with_kernels(jp_fetch))["gpus"]
    process = next(p for p in gpu["processes"] if p["pid"] == missing)
    assert process["visible"] is False
    assert process["user"] is None and process["kernel_id"] is None and process["name"] is None


SHOW_COMMANDS_CONFIG = server_config(interval=0.5, show_other_users_commands=True)


@pytest.mark.parametrize("jp_server_config", [SHOW_COMMANDS_CONFIG])
async def test_other_users_commands_are_sent_when_the_server_allows(
    fake_smi, jp_fetch, other_users_process
):
    fake_smi.replay(XML, GPUS, APPS)
    fake_smi.substitute_pids({11345: other_users_process})
    (gpu,) = (await snapshot_with_kernels(jp_fetch))["gpus"]
    other = next(p for p in gpu["processes"] if p["pid"] == other_users_process)
    assert other["own"] is False and other["name"] == "./gpu_burn"


def test_in_a_container_pid_namespace_host_pids_are_not_taken_for_local_ones():
    # A real child PID namespace, as a container has. The driver's (host) pids mean nothing
    # there: pid 1 exists inside (the namespace's own init) but is not the host's pid 1, and
    # our host pid does not exist inside. Neither may be matched.
    script = (
        "import json, sys; sys.path.insert(0, sys.argv[1]);"
        "from jupyterlab_gpu_monitor.kernel.processes import ProcessTree, in_initial_pid_namespace;"
        "tree = ProcessTree(); pids = [int(p) for p in sys.argv[2:]];"
        "print(json.dumps([in_initial_pid_namespace()] + [tree.local_pid(p) for p in pids]))"
    )
    package = str(Path(__file__).resolve().parents[1])
    result = subprocess.run(
        ["unshare", "--pid", "--fork", "--mount-proc", sys.executable, "-c", script, package,
         "1", str(os.getpid())],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == [False, None, None]


def test_on_the_host_the_drivers_pids_are_local_pids():
    assert in_initial_pid_namespace()
    assert ProcessTree().local_pid(os.getpid()) == os.getpid()


def test_past_a_reads_budget_gpu_processes_are_joined_again_in_turns(monkeypatch):
    # Hundreds of GPU processes: a read checks one (its budget spent) and keeps the others as
    # joined. A new process is joined at once; one that ended is gone at its turn.
    monkeypatch.setattr(process_reads, "READ_BUDGET", 0)
    sleepers = [subprocess.Popen(["sleep", "60"]) for _ in range(4)]
    try:
        kernel, other, ending, late = sleepers
        kernels = [RunningKernel("k", "python3", kernel.pid, session_path="train.ipynb")]
        rows = JoinedRows()

        trees = []

        def read(*processes: subprocess.Popen) -> dict[int, GpuProcess]:
            gpu = Gpu(index=0, processes=[GpuProcess(pid=p.pid) for p in processes])
            trees.append(ProcessTree())
            snapshot = Snapshot(source="test", timestamp=time.time(), gpus=[gpu])
            join(snapshot, kernels, trees[-1], rows)
            return {process.pid: process for process in gpu.processes}

        read(kernel, other, ending)
        ending.kill()
        ending.wait()
        joined = [read(kernel, other, ending, late) for _ in range(3)]
        assert joined[0][late.pid].visible and joined[0][late.pid].own
        assert not joined[-1][ending.pid].visible
        # Once all are joined, a read looks at one process: the one whose turn it is.
        assert [tree.pids_read for tree in trees[-2:]] == [1, 1]
        for rows_now in joined:
            assert rows_now[kernel.pid].kernel_id == "k"
            assert rows_now[kernel.pid].session_path == "train.ipynb"
            assert rows_now[other.pid].kernel_id is None and rows_now[other.pid].own
    finally:
        for sleeper in sleepers:
            sleeper.kill()
            sleeper.wait()


async def test_a_kernels_state_and_process_follow_it_through_a_cell_and_a_restart(
    jp_fetch, jp_serverapp
):
    # The listing watches each kernel's execution state rather than reading it at every read:
    # what a status message from the kernel sets must show at the next listing all the same.
    notebook = await start_session(jp_fetch, "loop.ipynb")
    kernel_id = notebook["kernel"]["id"]
    await run_in_kernel(jp_serverapp, kernel_id, "pass")

    async def listed() -> dict:
        (kernel,) = await get_json(jp_fetch, "kernels")
        return kernel

    async def until_listed(state: str) -> dict:
        for _ in range(200):
            kernel = await listed()
            if kernel["execution_state"] == state:
                return kernel
            await asyncio.sleep(0.05)
        raise AssertionError(f"the kernel stayed listed {kernel['execution_state']}")

    assert (await until_listed("idle"))["pid"] == kernel_pid(jp_serverapp, kernel_id)
    cell = asyncio.create_task(run_in_kernel(jp_serverapp, kernel_id, "import time; time.sleep(3)"))
    await until_listed("busy")
    await cell
    await until_listed("idle")

    before = kernel_pid(jp_serverapp, kernel_id)
    await jp_fetch("api", "kernels", kernel_id, "restart", method="POST", body="{}")
    restarted = await until_listed("idle")
    assert restarted["pid"] == kernel_pid(jp_serverapp, kernel_id) != before
