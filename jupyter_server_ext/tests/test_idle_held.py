"""GPUs held by idle notebooks: a real ipykernel reported by the fake nvidia-smi as the process
of a real capture that holds two RTX A5000 at 0 %."""

from __future__ import annotations

import asyncio
import time

from jupyterlab_gpu_monitor.kernel.idle_held import HELD_MEMORY_MIB, holds_idle

from .test_kernels import get_json, kernel_pid, run_in_kernel, snapshot_with_kernels, start_session
from .test_metrics import samples, scrape

# Two RTX A5000 at 0 %; its process 100477 holds 17246 MiB on GPU 0 and 22430 MiB on GPU 1.
IDLE_XML = "xml/rtx-a5000-x2-driver-590.44-v13-2procs.xml"
IDLE_HELD = "jupyter_gpu_kernel_idle_held_seconds"


async def idle_held_since(jp_fetch) -> dict[int, float | None]:
    (kernel,) = await get_json(jp_fetch, "kernels")
    return {gpu["index"]: gpu["idle_held_since"] for gpu in kernel["gpus"]}


async def test_a_kernel_holding_gpus_idle_is_idle_held_since_its_last_use(
    fake_smi, jp_fetch, jp_serverapp
):
    notebook = await start_session(jp_fetch, "forgotten.ipynb")
    kernel_id = notebook["kernel"]["id"]
    await run_in_kernel(jp_serverapp, kernel_id, "weights = 1")
    fake_smi.replay(IDLE_XML)
    fake_smi.substitute_pids({100477: kernel_pid(jp_serverapp, kernel_id)})
    await snapshot_with_kernels(jp_fetch)
    first = await idle_held_since(jp_fetch)
    assert set(first) == {0, 1} and all(since is not None for since in first.values())
    assert all(since <= time.time() for since in first.values())

    # Kept by the server from read to read: a client that asks later gets the same start.
    await snapshot_with_kernels(jp_fetch)
    assert await idle_held_since(jp_fetch) == first
    body = (await scrape(jp_fetch)).body
    held = {dict(labels)["gpu"]: value for (name, labels), value in samples(body).items()
            if name == IDLE_HELD}  # fmt: skip
    assert set(held) == {"0", "1"} and all(seconds > 0 for seconds in held.values())

    # A running cell is use: not idle-held while it runs, counted again from its end after.
    cell = asyncio.create_task(run_in_kernel(jp_serverapp, kernel_id, "import time; time.sleep(3)"))
    await snapshot_with_kernels(jp_fetch)
    assert await idle_held_since(jp_fetch) == {0: None, 1: None}
    await cell
    ended = time.time()
    await snapshot_with_kernels(jp_fetch)
    again = await idle_held_since(jp_fetch)
    assert all(since is not None and since >= ended - 1 for since in again.values())

    # Held by nothing of this server's: nothing idle-held, no series.
    fake_smi.substitute_pids({})
    await snapshot_with_kernels(jp_fetch)
    (kernel,) = await get_json(jp_fetch, "kernels")
    assert kernel["gpus"] == []
    assert not [name for (name, _), _ in samples((await scrape(jp_fetch)).body).items()
                if name == IDLE_HELD]  # fmt: skip


def test_the_rule_holds_from_the_held_memory_and_under_the_low_utilisation():
    # The boundaries of rules.json: 1000 MiB held counts, 30 % does not.
    assert holds_idle(HELD_MEMORY_MIB, 29.9)
    assert not holds_idle(HELD_MEMORY_MIB - 1, 0)
    assert not holds_idle(30000, 30)
    assert not holds_idle(30000, None)  # a GPU whose utilisation is unknown is not idle
