"""blocking.py: each class of blocking work on bounded daemon threads of its own, awaited with a
time bound; a thread stuck in a read neither piles up behind itself nor keeps the interpreter
from exiting. Real threads and real FIFOs (a read of one never returns until someone writes)."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest
from jupyterlab_gpu_monitor import blocking
from jupyterlab_gpu_monitor.blocking import Pool, Stopping, TimedOut, run
from jupyterlab_gpu_monitor.conda.discovery import list_environments

from .conda_layouts import HISTORY_2025, env_2025

PACKAGE = Path(blocking.__file__).parent
# Long enough for any machine to start the work, short enough for a test.
BOUND_SECONDS = 0.3


async def until_returned(pool: Pool, key) -> None:
    """Wait until the work that timed out with ``key`` has returned."""
    for _ in range(1000):
        if pool.stuck_seconds(key) is None:
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"the work of {key!r} never returned")


async def test_work_that_outlives_its_bound_keeps_its_key_busy_until_its_thread_returns():
    pool = Pool("test", 2)
    release = threading.Event()
    calls = []

    def stuck() -> str:
        calls.append(1)
        release.wait(60)
        return "late"

    with pytest.raises(TimedOut) as first:
        await run(pool, stuck, timeout_seconds=BOUND_SECONDS, key="stuck")
    assert first.value.started and first.value.stuck_seconds is None
    # Asked again while the thread is stuck: refused at once, no second thread on it.
    with pytest.raises(TimedOut) as again:
        await run(pool, stuck, timeout_seconds=60, key="stuck")
    assert again.value.stuck_seconds is not None and calls == [1]
    # Other work goes on, on the pool's other thread.
    assert await run(pool, lambda: "other", timeout_seconds=60, key="other") == "other"
    release.set()
    await until_returned(pool, "stuck")
    assert await run(pool, lambda: "again", timeout_seconds=60, key="stuck") == "again"


async def test_work_still_queued_at_its_bound_is_dropped_not_run():
    pool = Pool("test", 1)
    release = threading.Event()
    ran = []
    blocker = pool.submit(release.wait, 60)
    with pytest.raises(TimedOut) as late:
        await run(pool, lambda: ran.append(1), timeout_seconds=BOUND_SECONDS)
    assert late.value.started is False
    release.set()
    assert await asyncio.wrap_future(blocker) is True
    # The queue is first in, first out: the dropped work came before this one.
    await run(pool, lambda: None, timeout_seconds=60)
    assert ran == []


async def test_stop_waiting_answers_every_waiter_and_the_pool_goes_on():
    pool = Pool("test", 1)
    release = threading.Event()
    running = asyncio.ensure_future(run(pool, release.wait, 60, timeout_seconds=None))
    await asyncio.sleep(0)  # submitted first
    queued = asyncio.ensure_future(run(pool, lambda: "never", timeout_seconds=None))
    await asyncio.sleep(0)
    pool.stop_waiting()
    for waiter in (running, queued):
        with pytest.raises(Stopping):
            await waiter
    release.set()
    assert await run(pool, lambda: "after", timeout_seconds=60) == "after"


def test_an_interpreter_with_a_thread_stuck_in_a_fifo_exits(tmp_path: Path):
    # asyncio.to_thread's pool joins its threads at exit: this process never ended.
    fifo = tmp_path / "history"
    os.mkfifo(fifo)
    program = textwrap.dedent(
        f"""
        import asyncio
        from jupyterlab_gpu_monitor import blocking

        async def main():
            try:
                await blocking.run(blocking.FILES, open, {str(fifo)!r}, timeout_seconds=0.2)
            except blocking.TimedOut as late:
                print("timed out; started:", late.started)

        asyncio.run(main())
        """
    )
    finished = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=60
    )
    assert (finished.returncode, finished.stdout) == (0, "timed out; started: True\n")


def test_no_blocking_work_goes_to_asyncios_default_executor():
    # Its threads are joined at exit, and one pool for everything is what let a hung file
    # starve the GPU reads: every blocking call goes through blocking.run.
    found = [
        f"{path.relative_to(PACKAGE)}:{number}"
        for path in PACKAGE.rglob("*.py")
        for number, line in enumerate(path.read_text().splitlines(), start=1)
        if re.search(r"to_thread\(|run_in_executor\(\s*None", line) and path.name != "blocking.py"
    ]
    assert found == []


async def test_a_fifo_as_history_is_listed_unreadable_then_read_once_it_answers(
    conda_home, tmp_path: Path, conda_warnings: list[str]
):
    envs = tmp_path / "envs"
    env_2025(envs / "fine")
    hung = env_2025(envs / "hung")
    history = hung / "conda-meta" / "history"
    history.unlink()
    os.mkfifo(history)

    async def listing():
        return await list_environments(extra_envs_dirs=[str(envs)], timeout_seconds=BOUND_SECONDS)

    first = await listing()
    assert [environment.name for environment in first.environments] == ["fine"]
    (unreadable,) = first.unreadable
    assert (unreadable.prefix, unreadable.origin) == (str(hung), f"the envs folder {envs}")
    assert f"did not answer within {BOUND_SECONDS:g} s" in unreadable.message
    # Not read again while the thread reading it is stuck: said so at once.
    (unreadable,) = (await listing()).unreadable
    assert re.search(r"have not answered for \d+ s", unreadable.message)
    # A writer comes and goes: the stuck read gets to the end of the file and returns.
    os.close(os.open(history, os.O_WRONLY | os.O_NONBLOCK))
    await until_returned(blocking.FILES, ("prefix", str(hung)))
    history.unlink()
    history.write_text(HISTORY_2025)
    last = await listing()
    assert [environment.name for environment in last.environments] == ["fine", "hung"]
    assert last.unreadable == []
    assert len([warning for warning in conda_warnings if f"skipped {hung}" in warning]) == 1
