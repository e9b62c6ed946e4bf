"""The Sampler: one read per interval however many clients, bounded history, idle when unwatched."""

from __future__ import annotations

import asyncio
import json

import pytest
from jupyterlab_gpu_monitor.blocking import Stopping
from jupyterlab_gpu_monitor.gpu.history import History
from jupyterlab_gpu_monitor.gpu.model import Gpu, Snapshot
from jupyterlab_gpu_monitor.gpu.nvidia_smi import NvidiaSmiSource
from jupyterlab_gpu_monitor.gpu.sampler import Sampler

from .replay import SMI_FIXTURES

INTERVAL = 0.5


async def test_fifty_polling_clients_cause_no_more_reads_than_intervals(fake_smi):
    sampler = Sampler(NvidiaSmiSource(), interval_seconds=INTERVAL)
    intervals = 5

    async def client():
        for _ in range(intervals):
            await sampler.snapshot()
            await sampler.history_json(None)
            await asyncio.sleep(INTERVAL)

    started = asyncio.get_running_loop().time()
    await asyncio.gather(*(client() for _ in range(50)))
    elapsed_intervals = (asyncio.get_running_loop().time() - started) / INTERVAL
    await sampler.stop()
    assert sampler.reads <= elapsed_intervals + 1
    assert len(fake_smi.calls("--query-gpu=")) <= sampler.reads


async def test_sampling_stops_when_nobody_watches_and_resumes_fresh(fake_smi):
    sampler = Sampler(NvidiaSmiSource(), interval_seconds=INTERVAL, idle_seconds=1.0)
    first = await sampler.snapshot()
    await asyncio.sleep(2.5)
    assert not sampler.sampling
    reads_when_idle = sampler.reads
    await asyncio.sleep(1.0)
    assert sampler.reads == reads_when_idle  # idle costs nothing
    again = await sampler.snapshot()
    assert sampler.sampling and again.timestamp > first.timestamp + 2
    await sampler.stop()


async def test_a_seldom_watcher_gets_a_read_when_it_asks_and_no_timer(fake_smi):
    # A status bar with no chart shown asks every 5 s: the GPUs are read for it, once for all
    # who ask together, and not every interval in between.
    sampler = Sampler(NvidiaSmiSource(), interval_seconds=0.1)
    answers = await asyncio.gather(*(sampler.snapshot(every=5.0) for _ in range(20)))
    assert sampler.reads == 1 and not sampler.sampling
    assert len({answer.timestamp for answer in answers}) == 1
    # Asked again within half its period: the same read.
    assert (await sampler.snapshot(every=5.0)).timestamp == answers[0].timestamp
    assert sampler.reads == 1
    # The charts, opened later, draw the seldom reads as a line, not as gaps: each point says
    # how far apart reads were being made.
    await asyncio.sleep(0.3)  # the seldom read is older than two intervals now
    await sampler.snapshot()  # a chart: it waits for the timer's first read
    history = json.loads(await sampler.history_json(None))
    assert history["spacing_seconds"][:2] == [5.0, 0.1]
    await sampler.stop()


async def test_a_seldom_watcher_sees_a_driver_failure_at_its_next_ask(fake_smi):
    sampler = Sampler(NvidiaSmiSource(), interval_seconds=0.1)
    assert (await sampler.snapshot(every=0.4)).error is None
    fake_smi.fail(SMI_FIXTURES / "errors/driver-not-loaded-couldnt-communicate.txt")
    await asyncio.sleep(0.3)  # more than half its period: the next ask reads
    failed = await sampler.snapshot(every=0.4)
    assert failed.error is not None and failed.error.kind == "driver_not_loaded"
    assert sampler.reads == 2
    await sampler.stop()


async def test_a_seldom_watcher_waiting_on_a_hung_read_is_told_the_server_stops(fake_smi):
    sampler = Sampler(NvidiaSmiSource(timeout_seconds=60), interval_seconds=0.1)
    fake_smi.mode("hang")
    waiting = asyncio.ensure_future(sampler.snapshot(every=5.0))
    await asyncio.sleep(0.3)  # the read has started, and hangs
    await sampler.stop()
    with pytest.raises(Stopping):
        await waiting
    with pytest.raises(Stopping):
        await sampler.snapshot(every=5.0)


async def test_a_chart_shown_reads_every_interval_and_seldom_watchers_share_it(fake_smi):
    sampler = Sampler(NvidiaSmiSource(), interval_seconds=0.1, idle_seconds=0.5)
    await sampler.snapshot()  # a chart: the timer runs
    assert sampler.sampling
    reads = sampler.reads
    latest = await sampler.snapshot(every=5.0)
    # The timer's read, not one more for the seldom watcher.
    assert latest.timestamp == sampler.latest.timestamp and sampler.reads - reads <= 1
    # The chart closes; the seldom watcher goes on asking, and does not keep the timer going.
    for _ in range(10):
        await asyncio.sleep(0.1)
        await sampler.snapshot(every=5.0)
    assert not sampler.sampling
    await sampler.stop()


async def test_a_hung_read_gives_a_timeout_snapshot_and_sampling_recovers(fake_smi):
    sampler = Sampler(NvidiaSmiSource(timeout_seconds=0.5), interval_seconds=INTERVAL)
    fake_smi.mode("hang")
    failed = await sampler.snapshot()
    assert failed.error is not None and failed.error.kind == "timeout"
    assert sampler.read_errors["timeout"] >= 1
    fake_smi.mode(None)
    await asyncio.sleep(1.5)
    recovered = await sampler.snapshot()
    assert recovered.error is None and recovered.gpus
    await sampler.stop()


async def test_history_serves_only_points_after_since(fake_smi):
    sampler = Sampler(NvidiaSmiSource(), interval_seconds=INTERVAL)
    await sampler.snapshot()
    for _ in range(40):  # three reads: 1.5 s, longer on a busy machine
        await asyncio.sleep(INTERVAL / 2)
        everything = json.loads(await sampler.history_json(None))
        if len(everything["timestamps"]) >= 3:
            break
    assert len(everything["timestamps"]) >= 3
    cut = everything["timestamps"][1]
    delta = json.loads(await sampler.history_json(cut))
    # The points after the cut, and any read made since the first ask.
    later = [t for t in everything["timestamps"] if t > cut]
    assert delta["timestamps"][: len(later)] == later
    assert all(t > cut for t in delta["timestamps"])
    (gpu,) = delta["gpus"]
    assert len(gpu["utilization_gpu"]) == len(delta["timestamps"])
    assert set(gpu["utilization_gpu"]) == {100}  # the capture's reading
    await sampler.stop()


def _snapshot(timestamp: float, gpus: int = 8) -> Snapshot:
    return Snapshot(
        source="nvml",
        timestamp=timestamp,
        gpus=[Gpu(index=i, uuid=f"GPU-{i}", name="H100", utilization_gpu=i) for i in range(gpus)],
    )


def test_history_never_grows_past_its_bound():
    history = History(history_seconds=60, interval_seconds=1)
    for second in range(1000):
        history.append(_snapshot(float(second)))
        assert len(history) <= 60
    served = history.since(None)
    assert served["timestamps"][0] > 1000 - 61
    assert len(served["gpus"]) == 8


def test_history_drops_points_older_than_its_span_even_with_gaps():
    history = History(history_seconds=60, interval_seconds=1)
    history.append(_snapshot(0.0))
    history.append(_snapshot(100.0))  # the sampler slept: the old point is out of the window
    assert history.since(None)["timestamps"] == [100.0]


def test_a_gpu_that_appears_later_has_nulls_before_it():
    history = History(history_seconds=60, interval_seconds=1)
    history.append(_snapshot(1.0, gpus=1))
    history.append(_snapshot(2.0, gpus=2))
    served = history.since(None)
    assert served["gpus"][1]["utilization_gpu"] == [None, 1]


def test_a_gpu_lost_and_back_keeps_its_column_with_nulls_while_it_was_gone():
    # Runs of one layout are transposed at once: the columns must still line up by time.
    history = History(history_seconds=60, interval_seconds=1)
    layouts = [3, 3, 1, 0, 1, 3]  # GPUs 1 and 2 fall off the bus, then every GPU, then back
    for second, gpus in enumerate(layouts):
        history.append(_snapshot(float(second), gpus=gpus))
    served = history.since(None)
    assert [gpu["utilization_gpu"] for gpu in served["gpus"]] == [
        [0, 0, 0, None, 0, 0],
        [1, 1, None, None, None, 1],
        [2, 2, None, None, None, 2],
    ]
    assert served["timestamps"] == [float(n) for n in range(6)]
    assert [gpu["uuid"] for gpu in history.since(2.0)["gpus"]] == ["GPU-0", "GPU-1", "GPU-2"]
    assert history.since(2.0)["gpus"][1]["utilization_gpu"] == [None, None, 1]


def test_a_span_of_reads_a_gpu_was_lost_in_has_its_utilisation_with_nulls_there():
    # What a cell's figures and the inspector's recent utilisation read: lined up by time too.
    history = History(history_seconds=60, interval_seconds=1)
    for second, gpus in enumerate([3, 3, 1, 0, 1, 3]):
        history.append(_snapshot(float(second), gpus=gpus))
    times, gpus = history.utilization_between(1.0, 5.0)
    assert times == [1.0, 2.0, 3.0, 4.0, 5.0]
    assert {index: series for index, (_, series) in gpus.items()} == {
        0: [0, 0, None, 0, 0],
        1: [1, None, None, None, 1],
        2: [2, None, None, None, 2],
    }
    # Only the GPUs some read of the span saw; none of a span without reads.
    assert {
        index: series for index, (_, series) in history.utilization_between(2, 3)[1].items()
    } == {0: [0, None]}
    assert history.utilization_between(6.5, 9.0) == ([], {})


def test_failed_reads_are_not_kept_as_points():
    history = History(history_seconds=60, interval_seconds=1)
    failed = Snapshot(source=None, timestamp=5.0)
    failed.error = object()  # any error
    history.append(failed)
    assert len(history) == 0


def test_seeded_past_goes_before_the_readings_already_kept():
    history = History(history_seconds=60, interval_seconds=1)
    history.append(_snapshot(100.0))
    history.seed([_snapshot(98.0), _snapshot(99.0), _snapshot(100.0), _snapshot(101.0)])
    # Only what is older than the oldest reading kept: nothing overlaps, order holds.
    assert history.since(None)["timestamps"] == [98.0, 99.0, 100.0]


def test_seeding_keeps_the_newest_of_the_past_within_span_and_bound():
    history = History(history_seconds=10, interval_seconds=1)
    history.append(_snapshot(100.0))
    history.seed(_snapshot(float(second)) for second in range(50, 100))
    timestamps = history.since(None)["timestamps"]
    assert timestamps == [float(second) for second in range(90, 101)][-history.capacity :]
    assert len(history) == history.capacity


def test_seeding_an_empty_history_skips_failed_reads():
    history = History(history_seconds=60, interval_seconds=1)
    failed = Snapshot(source="prometheus", timestamp=2.0)
    failed.error = object()  # any error
    history.seed([_snapshot(1.0), failed, _snapshot(3.0)])
    assert history.since(None)["timestamps"] == [1.0, 3.0]
