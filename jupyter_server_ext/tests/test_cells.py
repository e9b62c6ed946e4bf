"""Per-cell GPU attribution over a recorded history: a real two-GPU capture read once a second,
its utilisation and the kernel's processes changing from read to read."""

from __future__ import annotations

import copy

import pytest
from jupyterlab_gpu_monitor.cells import KernelHistory, Span, SpansTooCostly, attribute
from jupyterlab_gpu_monitor.gpu.history import History
from jupyterlab_gpu_monitor.gpu.model import GpuProcess
from jupyterlab_gpu_monitor.gpu.smi_xml import parse_xml
from jupyterlab_gpu_monitor.kernels import RunningKernel, kernel_usage
from jupyterlab_gpu_monitor.machine.kernel_usage import KernelUse

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
