"""Per-cell GPU attribution over a recorded history: a real two-GPU capture read once a second,
its utilisation and the kernel's processes changing from read to read."""

from __future__ import annotations

import copy
import math
import random

import pytest
from jupyterlab_gpu_monitor.gpu.history import History
from jupyterlab_gpu_monitor.gpu.model import GpuProcess
from jupyterlab_gpu_monitor.gpu.smi_xml import parse_xml
from jupyterlab_gpu_monitor.kernel.cells import (
    KernelHistory,
    KernelReads,
    Span,
    SpansTooCostly,
    attribute,
)
from jupyterlab_gpu_monitor.kernel.join import KernelGpuUsage, kernel_usage
from jupyterlab_gpu_monitor.kernel.listing import RunningKernel
from jupyterlab_gpu_monitor.kernel.usage import KernelUse

from .replay import SMI_FIXTURES

KERNEL = "5d46a1d5-3cd9-4a7e-957d-3681abca0ce5"
OTHER = "051529e4-f1ef-4db2-87eb-f5e748e97f56"
T0 = 1_750_000_000.0
CAPTURE = parse_xml(
    (SMI_FIXTURES / "xml/rtx-a5000-x2-driver-590.44-v13-2procs.xml").read_text(), T0
)


def record(readings: list[tuple[float, dict]]) -> tuple[History, KernelHistory]:
    """Each reading: (seconds after T0, {"util": [gpu0, gpu1], "procs": [(gpu, kernel, MiB), ...]})."""
    history = History(history_seconds=3600, interval_seconds=1.0)
    memory = KernelHistory(history_seconds=3600, interval_seconds=1.0)
    kernels = [
        RunningKernel(KERNEL, "python3", 100, session_path="train.ipynb"),
        RunningKernel(OTHER, "python3", 200),
    ]
    for offset, reading in readings:
        snapshot = copy.deepcopy(CAPTURE)
        snapshot.timestamp = T0 + offset
        for gpu, utilization in zip(snapshot.gpus, reading["util"]):
            gpu.utilization_gpu = utilization
            gpu.processes = []
        for number, (gpu, kernel, mib) in enumerate(reading["procs"]):
            # The kernel's own process and its children, as the join attributes them.
            snapshot.gpus[gpu].processes.append(
                GpuProcess(pid=1000 + number, used_memory_mib=mib, kernel_id=kernel)
            )
        cpu = {
            kernel: KernelUse(percent, 900, 1) for kernel, percent in reading.get("cpu", {}).items()
        }
        memory.append(snapshot.timestamp, kernel_usage(snapshot, kernels), cpu)
        history.append(snapshot)
    return history, memory


def spans_of(history, memory, *spans, kernel=KERNEL):
    return attribute(kernel, [Span(T0 + a, T0 + b) for a, b in spans], history, memory)


TRAINING = [
    (second, {"util": [90 if 10 <= second < 40 else 5, 0], "procs": [(0, KERNEL, 2000 + 100 * second)] if second >= 10 else []})
    for second in range(60)
]  # fmt: skip


def test_peak_memory_and_utilisation_of_the_gpu_the_cell_used():
    history, memory = record(TRAINING)
    (run,) = spans_of(history, memory, (10, 39.5))
    assert run["samples"] == 30 and not run["too_short"] and not run["gap"]
    assert run["peak_memory_mib"] == 2000 + 100 * 39
    (gpu,) = run["gpus"]  # GPU 1 was never touched by this kernel
    assert (gpu["index"], gpu["name"]) == (0, "NVIDIA RTX A5000")
    assert gpu["mean_utilization"] == 90 and gpu["peak_utilization"] == 90
    assert run["duration_seconds"] == pytest.approx(29.5)


def test_the_memory_a_cell_added_is_its_peak_less_what_the_kernel_held_as_it_started():
    history, memory = record(TRAINING)
    growing, taking = spans_of(history, memory, (20.5, 30), (5, 12))
    # The read at 20 s, just before the cell, held 4000 MiB; the cell ended at 5000.
    assert [(g["start_memory_mib"], g["peak_memory_mib"]) for g in growing["gpus"]] == [
        (4000, 5000)
    ]
    # The kernel held nothing on the GPU when this cell started: all of its peak was added.
    assert [(g["start_memory_mib"], g["peak_memory_mib"]) for g in taking["gpus"]] == [(0, 3200)]


def test_a_cell_run_after_the_model_was_loaded_added_nothing_though_its_peak_is_the_models():
    loaded = [
        (s, {"util": [60, 0], "procs": [(0, KERNEL, 8000)] if s >= 3 else []}) for s in range(30)
    ]
    history, memory = record(loaded)
    runs = spans_of(history, memory, (10, 15), (20, 25))
    assert [(g["start_memory_mib"], g["peak_memory_mib"]) for r in runs for g in r["gpus"]] == [
        (8000, 8000),
        (8000, 8000),
    ]


def test_a_cell_that_started_while_the_server_was_not_reading_starts_from_its_first_read():
    # Nobody watched before second 20: the cell started at 12 s, the first read is at 20 s.
    history, memory = record([reading for reading in TRAINING if reading[0] >= 20])
    (run,) = spans_of(history, memory, (12, 30))
    assert [(g["start_memory_mib"], g["peak_memory_mib"]) for g in run["gpus"]] == [(4000, 5000)]


def test_reads_the_kernels_history_lacks_count_as_nothing_held():
    # The GPU history has reads from before the server recorded this kernel (seeded from
    # Prometheus on start, say): the cell's figures line the two up by time.
    history, _ = record(TRAINING)
    _, memory = record([reading for reading in TRAINING if reading[0] >= 20])
    (run,) = spans_of(history, memory, (15, 25))
    assert run["samples"] == 11 and run["peak_memory_mib"] == 2000 + 100 * 25
    # Nothing recorded at the read before it, nor at its first: it held nothing as it started.
    assert [(g["start_memory_mib"], g["peak_memory_mib"]) for g in run["gpus"]] == [(0, 4500)]
    assert run["gpus"][0]["mean_utilization"] == 90


def test_a_cell_that_idled_the_gpu_has_a_low_mean():
    history, memory = record(TRAINING)
    (run,) = spans_of(history, memory, (40, 59))
    assert run["mean_utilization"] == 5 and run["peak_memory_mib"] == 2000 + 100 * 59


def test_a_cells_cpu_is_the_kernels_mean_over_its_reads_and_not_another_kernels():
    # Seconds 0-9 the kernel prepares data on 2.5 cores; 10-19 it waits; OTHER burns 4 cores.
    readings = [
        (second, {"util": [5, 0], "procs": [(0, KERNEL, 3000)], "cpu": {KERNEL: 250 if second < 10 else 2, OTHER: 400}})
        for second in range(20)
    ]  # fmt: skip
    history, memory = record(readings)
    preparing, waiting = spans_of(history, memory, (1, 9), (11, 19))
    assert (preparing["mean_cpu_percent"], waiting["mean_cpu_percent"]) == (250, 2)


def test_a_cell_the_cpu_was_not_measured_for_has_no_cpu_figure():
    history, memory = record(TRAINING)  # no CPU reading at any read
    (run,) = spans_of(history, memory, (12, 30))
    assert run["mean_cpu_percent"] is None and run["peak_memory_mib"] is not None


def test_span_shorter_than_two_intervals_says_so_instead_of_numbers():
    history, memory = record(TRAINING)
    (run,) = spans_of(history, memory, (20, 21.2))
    assert run["too_short"] is True
    assert run["peak_memory_mib"] is None and run["mean_utilization"] is None and run["gpus"] == []


def test_span_across_a_gap_in_the_history_is_flagged():
    # Nobody watched from second 20 to 50: the server did not read.
    history, memory = record([reading for reading in TRAINING if not 20 <= reading[0] < 50])
    (run,) = spans_of(history, memory, (15, 55))
    assert run["gap"] is True
    assert run["samples"] == 5 + 6  # 15..19 and 50..55: the ends are inside the span


def test_kernel_with_child_processes_on_two_gpus_sums_them_at_each_read():
    readings = [
        (second, {"util": [70, 30], "procs": [(0, KERNEL, 4000), (0, KERNEL, 1000 + second), (1, KERNEL, 3000), (1, OTHER, 9000)]})
        for second in range(10)
    ]  # fmt: skip
    history, memory = record(readings)
    (run,) = spans_of(history, memory, (0, 9))
    assert run["peak_memory_mib"] == 4000 + 1009 + 3000  # not the other kernel's 9000
    assert [(g["index"], g["peak_memory_mib"]) for g in run["gpus"]] == [(0, 5009), (1, 3000)]
    assert run["mean_utilization"] == 50


def test_cell_that_did_not_touch_the_gpu_has_no_gpus():
    history, memory = record(TRAINING)
    (run,) = spans_of(history, memory, (0, 9))
    assert run["gpus"] == [] and run["peak_memory_mib"] is None


def test_many_cells_at_once_each_get_their_own_figures():
    history, memory = record(TRAINING)
    runs = spans_of(history, memory, *[(start, start + 5) for start in range(0, 55, 5)])
    # A span includes the read at its end: the cell from 5 to 10 s saw the kernel start at 10 s.
    expected = [None] + [2000 + 100 * (start + 5) for start in range(5, 55, 5)]
    assert [r["peak_memory_mib"] for r in runs] == expected


def test_memory_history_is_bounded():
    memory = KernelHistory(history_seconds=60, interval_seconds=1)
    snapshot = copy.deepcopy(CAPTURE)
    for second in range(500):
        memory.append(T0 + second, kernel_usage(snapshot, []), {})
        assert len(memory) <= 60


def test_a_run_all_of_back_to_back_cells_over_the_whole_history_is_answered():
    history, memory = record(TRAINING)
    # 60 one-second cells, each starting as the one before ended: every read, some twice.
    runs = attribute(KERNEL, [Span(T0 + s, T0 + s + 1) for s in range(60)], history, memory)
    assert len(runs) == 60


def test_spans_covering_the_history_more_than_twice_are_refused_before_any_work():
    small = History(history_seconds=60, interval_seconds=1.0)
    for reading in TRAINING:
        snapshot = copy.deepcopy(CAPTURE)
        snapshot.timestamp = T0 + reading[0]
        small.append(snapshot)
    whole = Span(T0, T0 + 59)
    assert len(attribute(KERNEL, [whole] * 2, small, KernelHistory(60, 1.0))) == 2
    with pytest.raises(SpansTooCostly, match="cover 180 reads together; at most 123"):
        attribute(KERNEL, [whole] * 3, small, KernelHistory(60, 1.0))


class PlainKernelHistory:
    """What KernelHistory answers, said plainly: every read's holdings and CPU, kept whole, as
    many reads as the history has room for, none older than it."""

    def __init__(self, history_seconds: float):
        self.history_seconds = history_seconds
        self.capacity = int(history_seconds)  # one read a second
        self.reads: list[tuple[float, dict, dict]] = []

    def append(self, timestamp, usage, machine_use):
        holdings: dict = {}
        for entry in usage:
            if entry.memory_used_mib:
                holdings.setdefault(entry.kernel_id, {})[entry.gpu_index] = entry.memory_used_mib
        cpu = {k: u.cpu_percent for k, u in machine_use.items() if u.cpu_percent is not None}
        seen = {entry.kernel_id for entry in usage} | cpu.keys()
        self.reads.append((timestamp, holdings, cpu, seen))
        self.reads = [r for r in self.reads if r[0] >= timestamp - self.history_seconds]
        del self.reads[: -self.capacity]

    def held_between(self, kernel, start, end):
        return {t: h.get(kernel, {}) for t, h, _, _ in self.reads if start <= t <= end}

    def cpu_between(self, kernel, start, end):
        return [c[kernel] for t, _, c, _ in self.reads if start <= t <= end and kernel in c]

    def held_before(self, kernel, timestamp, within):
        before = [r for r in self.reads if r[0] <= timestamp]
        if not before or before[-1][0] < timestamp - within:
            return None
        return before[-1][1].get(kernel, {})

    def knows(self, kernel):
        return any(kernel in seen for *_, seen in self.reads)


def held(reads: KernelReads) -> dict[float, dict[int, float]]:
    """The kernel's holdings at the reads, as the plain record says them: {time: {GPU: MiB}},
    GPUs it held nothing on left out."""
    return {
        timestamp: {gpu: mib[n] for gpu, mib in reads.memory.items() if mib[n]}
        for n, timestamp in enumerate(reads.times)
    }


def measured(reads: KernelReads) -> list[float]:
    return [cpu for cpu in reads.cpu if not math.isnan(cpu)]


def test_the_kept_changes_answer_as_every_read_kept_whole():
    # Kernels that start, hold memory on one GPU then two, sit idle, lose their CPU figure for
    # a read and shut down while holding memory, over three times the history: the history
    # keeps only changes, and forgets in batches, yet answers as the plain record does.
    rng = random.Random(7)
    kernels = [f"{n:08x}-0000-4000-8000-000000000000" for n in range(6)]
    kept = KernelHistory(history_seconds=60, interval_seconds=1.0)
    plain = PlainKernelHistory(history_seconds=60)
    alive = {kernel: True for kernel in kernels}
    holding = {kernel: {} for kernel in kernels}
    for second in range(200):
        t = T0 + second + rng.random() * 0.2
        usage, use = [], {}
        for kernel in kernels:
            if rng.random() < 0.02:
                alive[kernel] = not alive[kernel]
            if not alive[kernel]:
                continue
            if rng.random() < 0.1:
                holding[kernel] = {
                    gpu: rng.choice([0.0, 512.0, 20480.0]) for gpu in rng.sample([0, 1], 2)[:2]
                }
            for gpu, mib in holding[kernel].items():
                usage.append(KernelGpuUsage(kernel, None, gpu, None, None, mib, None))
            cpu = None if rng.random() < 0.05 else rng.choice([0.0, 0.0, 1.0, 97.5])
            use[kernel] = KernelUse(cpu, 900, 1)
        kept.append(t, usage, use)
        plain.append(t, usage, use)
        if second % 7:
            continue
        low, high = sorted(T0 + rng.uniform(second - 90, second + 2) for _ in range(2))
        for kernel in [*kernels, "never-seen"]:
            reads = kept.reads_between(kernel, low, high)
            assert held(reads) == plain.held_between(kernel, low, high)
            assert measured(reads) == plain.cpu_between(kernel, low, high)
            assert kept.cpu_between(kernel, low, high) == plain.cpu_between(kernel, low, high)
            last = kept.reads_between(kernel, high - 2.0, high)
            assert last.held_before(high, 2.0) == plain.held_before(kernel, high, 2.0)
            assert kept.knows(kernel) == plain.knows(kernel)
            twin = kept.copy(kernel).reads_between(kernel, low, high)
            assert held(twin) == plain.held_between(kernel, low, high)
        assert len(kept) == len(plain.reads)


def test_a_kernel_shut_down_while_holding_memory_holds_nothing_after_and_is_forgotten():
    _, memory = record(
        [(s, {"util": [90, 0], "procs": [(0, KERNEL, 8000)] if s < 5 else []}) for s in range(70)]
    )
    assert memory.reads_between(KERNEL, T0 + 2, T0 + 4).held_before(T0 + 4, 2) == {0: 8000}
    assert memory.reads_between(KERNEL, T0 + 4, T0 + 6).held_before(T0 + 6, 2) == {}
    # An hour's history still knows it; one of a minute has let its reads go.
    assert memory.knows(KERNEL)
    short = KernelHistory(history_seconds=60, interval_seconds=1.0)
    for second in range(200):
        usage = held(memory.reads_between(KERNEL, T0 + second, T0 + second))
        short.append(
            T0 + second,
            [
                KernelGpuUsage(KERNEL, None, gpu, None, None, mib, None)
                for held in usage.values()
                for gpu, mib in held.items()
            ],
            {},
        )
    assert not short.knows(KERNEL)
    assert held(short.reads_between(KERNEL, T0, T0 + 200)) == {T0 + s: {} for s in range(140, 200)}
